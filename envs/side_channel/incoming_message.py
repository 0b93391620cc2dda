"""Reading one side-channel message, in ML-Agents' little-endian wire format.

Classes:
    IncomingMessage: a cursor over the bytes of one message, read in the order they were written.
"""

from __future__ import annotations

import enum
import operator
import struct
from collections.abc import Sequence
from typing import Any, TypeAlias, TypeVar

from zooport.errors import SideChannelError

from ._common import SideChannelTypeError

__all__ = ["IncomingMessage"]

_BOOL = struct.Struct("<?")
_INT32 = struct.Struct("<i")
_FLOAT32 = struct.Struct("<f")

_T = TypeVar("_T")


class _NoDefault(enum.Enum):
    """Marks a read with no ``default_value``: an exhausted message is then an error."""

    NO_DEFAULT = enum.auto()

    def __repr__(self) -> str:
        return "<no default>"


_NO_DEFAULT = _NoDefault.NO_DEFAULT
# A value of the reader's type, or the marker of "no default given".
_Default: TypeAlias = _T | _NoDefault


class IncomingMessage:
    """The bytes of one side-channel message and a read offset into them.

    Values are little-endian and must be read in the order they were written: ``bool`` is one
    byte, ``int32`` and ``float32`` four, a float list is an int32 count then the floats, and a
    string is an int32 byte count then that many ASCII bytes.

    As in ML-Agents, every ``read_*`` method takes an optional ``default_value`` that is
    returned, without moving the offset, when the message is exhausted (the offset is at its
    end), which lets a newer reader accept a message from an older writer. Any value is
    returned as given, ``None`` included, except that ``read_float32_list`` turns
    ``default_value=None`` into ``[]`` (ML-Agents' own default) and returns a new list.
    Unlike ML-Agents, a read with no ``default_value`` at the end of the message (where
    ML-Agents returns ``False``, ``0``, ``0.0``, ``[]`` or ``""``), or any read that finds
    only part of its value, raises :class:`~zooport.errors.SideChannelError` saying what was
    being read, at which offset, and how many bytes remained: pass ``default_value`` to read
    optional trailing values. Nothing is ever read past the buffer.

    Args:
        buffer: the message payload (``bytes``, ``bytearray`` or ``memoryview``); copied.
        offset: where reading starts, between 0 and ``len(buffer)``.

    Attributes:
        buffer: the payload, as ``bytes``.
        offset: the position of the next read.

    Example:
        >>> import struct
        >>> msg = IncomingMessage(struct.pack("<i", 3) + b"abc" + struct.pack("<f", 0.5))
        >>> msg.read_string()
        'abc'
        >>> msg.read_float32()
        0.5
        >>> msg.read_int32(default_value=7)  # exhausted: the default comes back
        7
        >>> msg.read_float32_list(default_value=None)  # ML-Agents' default for a list
        []
        >>> try:
        ...     msg.read_int32()
        ... except SideChannelError as err:
        ...     print(err)
        cannot read int32 at offset 11: needs 4 bytes, 0 remain (message is 11 bytes)
    """

    def __init__(self, buffer: bytes | bytearray | memoryview, offset: int = 0) -> None:
        if not isinstance(buffer, (bytes, bytearray, memoryview)):
            raise SideChannelTypeError(
                f"IncomingMessage buffer: expected bytes, bytearray or memoryview, "
                f"got {type(buffer).__name__}"
            )
        self.buffer: bytes = bytes(buffer)
        try:
            start = operator.index(offset)
        except TypeError:
            raise SideChannelTypeError(
                f"IncomingMessage offset: expected an int, got {type(offset).__name__}"
            ) from None
        if not 0 <= start <= len(self.buffer):
            raise SideChannelError(
                f"IncomingMessage offset: expected 0 <= offset <= {len(self.buffer)}, got {start}"
            )
        self.offset: int = start

    def __repr__(self) -> str:
        return f"IncomingMessage(<{len(self.buffer)} bytes>, offset={self.offset})"

    def read_bool(self, default_value: _Default[bool] = _NO_DEFAULT) -> bool:
        """Read a one-byte boolean (or ``default_value``, see the class docstring)."""
        return self._read(_BOOL, "bool", default_value)

    def read_int32(self, default_value: _Default[int] = _NO_DEFAULT) -> int:
        """Read a little-endian signed 32-bit integer (or ``default_value``)."""
        return self._read(_INT32, "int32", default_value)

    def read_float32(self, default_value: _Default[float] = _NO_DEFAULT) -> float:
        """Read a little-endian 32-bit float as a Python ``float`` (or ``default_value``)."""
        return self._read(_FLOAT32, "float32", default_value)

    def read_float32_list(
        self, default_value: _Default[Sequence[float] | None] = _NO_DEFAULT
    ) -> list[float]:
        """Read an int32 count followed by that many float32 values.

        Args:
            default_value: returned (as a new list) if the message is exhausted; ``None``
                gives ``[]``, as in ML-Agents.

        Returns:
            The values read, or a copy of ``default_value``.
        """
        if self._exhausted(default_value):
            if default_value is None:
                return []
            try:
                return list(default_value)  # type: ignore[arg-type]  # tried: a non-sequence is the error below
            except TypeError:
                raise SideChannelTypeError(
                    "read_float32_list default_value: expected a sequence of floats or None, "
                    f"got {type(default_value).__name__}"
                ) from None
        _, count = self._length_prefixed("float32 list", _FLOAT32.size, "values")
        values = list(struct.unpack_from(f"<{count}f", self.buffer, self.offset))
        self.offset += count * _FLOAT32.size
        return values

    def read_string(self, default_value: _Default[str] = _NO_DEFAULT) -> str:
        """Read an int32 byte count followed by that many ASCII bytes.

        Args:
            default_value: returned if the message is exhausted.

        Returns:
            The string read, or ``default_value``.
        """
        if self._exhausted(default_value):
            return default_value  # type: ignore[return-value]  # given: _exhausted raised otherwise
        start, length = self._length_prefixed("string", 1, "bytes")
        raw = self.buffer[self.offset : self.offset + length]
        try:
            value = raw.decode("ascii")
        except UnicodeDecodeError as exc:
            bad_at = self.offset + exc.start
            self.offset = start
            raise SideChannelError(
                f"cannot read string at offset {start}: expected ASCII bytes, "
                f"got byte 0x{raw[exc.start]:02x} at offset {bad_at}"
            ) from None
        self.offset += length
        return value

    def get_raw_bytes(self) -> bytearray:
        """Return a copy of the whole message, regardless of the read offset."""
        return bytearray(self.buffer)

    def _exhausted(self, default_value: object) -> bool:
        # Only an exhausted message falls back to the default; a partial value is corruption.
        return default_value is not _NO_DEFAULT and self.offset >= len(self.buffer)

    def _read(self, packer: struct.Struct, what: str, default_value: Any) -> Any:
        if self._exhausted(default_value):
            return default_value
        return self._unpack(packer, what)

    def _length_prefixed(self, what: str, item_size: int, unit: str) -> tuple[int, int]:
        """``(start offset, count)`` of an int32 count whose items all remain; the offset is
        then past the count. On an error the offset is back at the start."""
        start = self.offset
        try:
            count = self._unpack(_INT32, f"{what} length")
            if count < 0:
                raise SideChannelError(
                    f"cannot read {what} at offset {start}: expected a length >= 0, got {count}"
                )
            self._require(count * item_size, f"{what} of {count} {unit}")
        except SideChannelError:
            self.offset = start
            raise
        return start, count

    def _unpack(self, packer: struct.Struct, what: str) -> Any:
        """One value of ``packer``'s format at the offset, which then moves past it."""
        self._require(packer.size, what)
        (value,) = packer.unpack_from(self.buffer, self.offset)
        self.offset += packer.size
        return value

    def _require(self, size: int, what: str) -> None:
        remaining = len(self.buffer) - self.offset
        if size > remaining:
            raise SideChannelError(
                f"cannot read {what} at offset {self.offset}: needs {size} bytes, "
                f"{remaining} remain (message is {len(self.buffer)} bytes)"
            )
