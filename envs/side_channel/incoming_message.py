"""Reading one side-channel message, in ML-Agents' little-endian wire format."""

from __future__ import annotations

import operator
import struct
from collections.abc import Sequence
from typing import Any

from zooport.errors import SideChannelError

from ._common import SideChannelTypeError, check_bytes

__all__ = ["IncomingMessage"]


class _NoDefault:
    def __repr__(self) -> str:
        return "<no default>"


_NO_DEFAULT: Any = _NoDefault()  # a read without default_value: an exhausted message is an error


class IncomingMessage:
    """The bytes of one side-channel message and a read offset into them.

    As in ML-Agents, a read returns its ``default_value``, without moving the offset, once the
    message is exhausted (``read_float32_list`` turns ``None`` into ``[]``). Unlike ML-Agents,
    a read with no default at the end of the message, or one that finds only part of its
    value, raises :class:`~zooport.errors.SideChannelError` naming what, where and how many
    bytes remained; the offset then stays where it was.

    Example:
        >>> msg = IncomingMessage(struct.pack("<i", 3) + b"abc" + struct.pack("<f", 0.5))
        >>> msg.read_string(), msg.read_float32(), msg.read_int32(default_value=7)
        ('abc', 0.5, 7)
        >>> msg.read_int32()
        Traceback (most recent call last):
        ...
        zooport.errors.SideChannelError: cannot read int32 at offset 11: needs 4 bytes, 0 remain...
    """

    def __init__(self, buffer: bytes | bytearray | memoryview, offset: int = 0) -> None:
        self.buffer: bytes = check_bytes(buffer, "IncomingMessage buffer")
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
        self.offset: int = start  # the position of the next read

    def __repr__(self) -> str:
        return f"IncomingMessage(<{len(self.buffer)} bytes>, offset={self.offset})"

    def read_bool(self, default_value: bool = _NO_DEFAULT) -> bool:
        return self._read("<?", "bool", default_value)

    def read_int32(self, default_value: int = _NO_DEFAULT) -> int:
        return self._read("<i", "int32", default_value)

    def read_float32(self, default_value: float = _NO_DEFAULT) -> float:
        return self._read("<f", "float32", default_value)

    def read_float32_list(self, default_value: Sequence[float] | None = _NO_DEFAULT) -> list[float]:
        """Read an int32 count and that many float32 values (or a copy of ``default_value``)."""
        if self._exhausted(default_value):
            if default_value is None:
                return []
            try:
                return list(default_value)
            except TypeError:
                raise SideChannelTypeError(
                    "read_float32_list default_value: expected a sequence of floats or None, "
                    f"got {type(default_value).__name__}"
                ) from None
        count = self._count("float32 list", 4, "values")
        values = list(struct.unpack_from(f"<{count}f", self.buffer, self.offset))
        self.offset += count * 4
        return values

    def read_string(self, default_value: str = _NO_DEFAULT) -> str:
        """Read an int32 byte count and that many ASCII bytes (or ``default_value``)."""
        if self._exhausted(default_value):
            return default_value
        start = self.offset
        length = self._count("string", 1, "bytes")
        raw = self.buffer[self.offset : self.offset + length]
        try:
            value = raw.decode("ascii")
        except UnicodeDecodeError as exc:
            self.offset = start
            raise SideChannelError(
                f"cannot read string at offset {start}: expected ASCII bytes, "
                f"got byte 0x{raw[exc.start]:02x} at offset {start + 4 + exc.start}"
            ) from None
        self.offset += length
        return value

    def get_raw_bytes(self) -> bytearray:
        """A copy of the whole message, whatever the read offset."""
        return bytearray(self.buffer)

    def _exhausted(self, default_value: object) -> bool:
        # Only an exhausted message falls back to the default; a partial value is corruption.
        return default_value is not _NO_DEFAULT and self.offset >= len(self.buffer)

    def _read(self, fmt: str, what: str, default_value: Any) -> Any:
        if self._exhausted(default_value):
            return default_value
        size = struct.calcsize(fmt)
        self._require(size, what)
        (value,) = struct.unpack_from(fmt, self.buffer, self.offset)
        self.offset += size
        return value

    def _count(self, what: str, item_size: int, unit: str) -> int:
        """An int32 count whose items all remain; on an error the offset stays at the count."""
        start = self.offset
        count = self._read("<i", f"{what} length", _NO_DEFAULT)
        try:
            if count < 0:
                raise SideChannelError(
                    f"cannot read {what} at offset {start}: expected a length >= 0, got {count}"
                )
            self._require(count * item_size, f"{what} of {count} {unit}")
        except SideChannelError:
            self.offset = start
            raise
        return count

    def _require(self, size: int, what: str) -> None:
        remaining = len(self.buffer) - self.offset
        if size > remaining:
            raise SideChannelError(
                f"cannot read {what} at offset {self.offset}: needs {size} bytes, "
                f"{remaining} remain (message is {len(self.buffer)} bytes)"
            )
