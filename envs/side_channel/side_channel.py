"""The side-channel base class and its messages, in ML-Agents' wire format, checked first."""

from __future__ import annotations

import math
import numbers
import operator
import struct
import uuid
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from enum import Enum
from typing import Any, TypeVar

import numpy as np

from zooport.errors import SideChannelError, UnityCommunicationException, UnityEnvironmentException

__all__ = [
    "SideChannel", "SendOnlySideChannel", "IncomingMessage", "OutgoingMessage",
    "SideChannelTypeError", "SideChannelCommunicationError", "SideChannelEnvironmentError",
]  # fmt: skip

_INT32 = (-(2**31), 2**31 - 1)
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_E = TypeVar("_E", bound=Enum)
_NO_DEFAULT: Any = object()  # a read without default_value: an exhausted message is an error


class SideChannelTypeError(SideChannelError, TypeError):
    """A side-channel value of the wrong type (also a ``TypeError``)."""


class SideChannelCommunicationError(SideChannelError, UnityCommunicationException):
    """A message to a send-only channel, or an unreadable engine configuration (as ML-Agents)."""


class SideChannelEnvironmentError(SideChannelError, UnityEnvironmentException):
    """Truncated side-channel data, or two channels with one id (as ML-Agents' manager)."""


def wrong_type(
    what: str, expected: str, value: object, *, show: bool = True
) -> SideChannelTypeError:
    shown = f" {value!r}" if show else ""
    return SideChannelTypeError(f"{what}: expected {expected}, got {type(value).__name__}{shown}")


def known_code(
    what: str, codes: type[_E], code: int, error: type[Exception] = SideChannelError
) -> _E:
    try:
        return codes(code)
    except ValueError:
        valid = ", ".join(f"{c.value} ({c.name})" for c in codes)
        raise error(f"{what} {code}, expected one of {valid}") from None


def check_int32(value: Any, what: str) -> int:
    if isinstance(value, (bool, np.bool_)):  # an int subclass, and almost always a mistake
        raise wrong_type(what, "an int", value)
    try:
        number = operator.index(value)  # int, IntEnum and NumPy integers; not floats
    except TypeError:
        raise wrong_type(what, "an int", value) from None
    if not _INT32[0] <= number <= _INT32[1]:
        raise SideChannelError(
            f"{what}: expected an int32 in [{_INT32[0]}, {_INT32[1]}], got {number}"
        )
    return number


def check_float32(value: object, what: str, *, finite: bool = False) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise wrong_type(what, "a real number", value)
    number = float(value)
    if finite and not math.isfinite(number):
        raise SideChannelError(f"{what}: expected a finite number, got {number!r}")
    if math.isfinite(number) and abs(number) > _FLOAT32_MAX:
        raise SideChannelError(
            f"{what}: expected a value representable as float32 (|x| <= {_FLOAT32_MAX:.7g}, "
            f"or inf/nan), got {number!r}"
        )
    return number


def encode_ascii(value: object, what: str) -> bytes:
    """``value`` encoded as ASCII, the only encoding the Unity side decodes."""
    if not isinstance(value, str):
        raise wrong_type(what, "a str", value)
    try:
        return value.encode("ascii")
    except UnicodeEncodeError as exc:
        raise SideChannelError(
            f"{what}: expected an ASCII string, got {value!r} with non-ASCII character "
            f"{value[exc.start]!r} at index {exc.start}"
        ) from None


def check_bytes(value: object, what: str) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise wrong_type(what, "bytes, bytearray or memoryview", value, show=False)
    return bytes(value)


def key_message(where: str, key: str, layout: str, *values: Any) -> OutgoingMessage:
    """An ASCII ``key``, then ``values`` laid out as float32 (f), int32 (i) or float32 list (l)."""
    encode_ascii(key, f"{where} key")
    msg = OutgoingMessage()
    msg.write_string(key)
    for kind, value in zip(layout, values, strict=True):
        _WRITERS[kind](msg, check_float32(value, f"{where} value") if kind == "f" else value)
    return msg


class IncomingMessage:
    """A received message and a read offset; a read at the end returns its ``default_value``."""

    def __init__(self, buffer: bytes | bytearray | memoryview, offset: int = 0) -> None:
        self.buffer: bytes = check_bytes(buffer, "IncomingMessage buffer")
        start = check_int32(offset, "IncomingMessage offset")
        if not 0 <= start <= len(self.buffer):
            raise SideChannelError(
                f"IncomingMessage offset: expected 0 <= offset <= {len(self.buffer)}, got {start}"
            )
        self.offset: int = start  # the position of the next read

    def read_bool(self, default_value: bool = _NO_DEFAULT) -> bool:
        return self._read("<?", "bool", default_value)

    def read_int32(self, default_value: int = _NO_DEFAULT) -> int:
        return self._read("<i", "int32", default_value)

    def read_float32(self, default_value: float = _NO_DEFAULT) -> float:
        return self._read("<f", "float32", default_value)

    def read_float32_list(self, default_value: Sequence[float] | None = _NO_DEFAULT) -> list[float]:
        """Read an int32 count and that many float32 values (or a copy of ``default_value``)."""
        if self._exhausted(default_value):
            if not isinstance(default_value, Iterable | None):
                what, expected = "read_float32_list default_value", "a sequence of floats or None"
                raise wrong_type(what, expected, default_value, show=False)
            return [] if default_value is None else list(default_value)
        raw = self._read_counted("float32 list", 4, "values")
        return list(struct.unpack(f"<{len(raw) // 4}f", raw))

    def read_string(self, default_value: str = _NO_DEFAULT) -> str:
        """Read an int32 byte count and that many ASCII bytes (or ``default_value``)."""
        if self._exhausted(default_value):
            return default_value
        start = self.offset
        raw = self._read_counted("string", 1, "bytes")
        try:
            return raw.decode("ascii")
        except UnicodeDecodeError as exc:
            self.offset = start
            raise SideChannelError(
                f"cannot read string at offset {start}: expected ASCII bytes, "
                f"got byte 0x{raw[exc.start]:02x} at offset {start + 4 + exc.start}"
            ) from None

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
        (value,) = struct.unpack(fmt, self._take(size, what, self.offset))
        self.offset += size
        return value

    def _read_counted(self, what: str, item_size: int, unit: str) -> bytes:
        """An int32 count, then that many items' bytes; the offset moves only if both are read."""
        (count,) = struct.unpack("<i", self._take(4, f"{what} length", self.offset))
        if count < 0:
            raise SideChannelError(
                f"cannot read {what} at offset {self.offset}: expected a length >= 0, got {count}"
            )
        raw = self._take(count * item_size, f"{what} of {count} {unit}", self.offset + 4)
        self.offset += 4 + len(raw)
        return raw

    def _take(self, size: int, what: str, at: int) -> bytes:
        remaining = len(self.buffer) - at
        if size > remaining:
            raise SideChannelError(
                f"cannot read {what} at offset {at}: needs {size} bytes, "
                f"{remaining} remain (message is {len(self.buffer)} bytes)"
            )
        return self.buffer[at : at + size]


class OutgoingMessage:
    """One message: int32 ints, float32 floats, ASCII strings; others raise, writing nothing."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    @property
    def buffer(self) -> bytes:
        """The bytes written so far (a snapshot)."""
        return bytes(self._buffer)

    def write_bool(self, b: bool) -> None:
        if not isinstance(b, (bool, np.bool_)):
            raise wrong_type("write_bool", "a bool", b)
        self._buffer += struct.pack("<?", b)

    def write_int32(self, i: int) -> None:
        self._buffer += struct.pack("<i", check_int32(i, "write_int32"))

    def write_float32(self, f: float) -> None:
        self._buffer += struct.pack("<f", check_float32(f, "write_float32"))

    def write_float32_list(self, float_list: Iterable[float]) -> None:
        """Append an int32 count, then each value (of a list, tuple or 1-D array) as float32."""
        if isinstance(float_list, (str, bytes, bytearray)) or not isinstance(float_list, Iterable):
            expected = "an iterable of real numbers"
            raise wrong_type("write_float32_list", expected, float_list, show=False)
        values = [
            check_float32(v, f"write_float32_list item {i}") for i, v in enumerate(float_list)
        ]
        self._buffer += struct.pack(f"<i{len(values)}f", len(values), *values)

    def write_string(self, s: str) -> None:
        """Append an int32 byte count, then the string's ASCII bytes."""
        encoded = encode_ascii(s, "write_string")
        self._buffer += struct.pack("<i", len(encoded)) + encoded

    def set_raw_bytes(self, buffer: bytes | bytearray | memoryview) -> None:
        """Replace the message with a copy of ``buffer`` (warning, as ML-Agents, if not empty)."""
        data = check_bytes(buffer, "set_raw_bytes")
        if self._buffer:
            warnings.warn(
                f"OutgoingMessage.set_raw_bytes discards the {len(self._buffer)} bytes "
                f"already written to this message",
                stacklevel=2,
            )
        self._buffer = bytearray(data)


#: key_message's writer per layout letter (one table, not one per call).
_WRITERS: dict[str, Callable[[OutgoingMessage, Any], None]] = {
    "f": OutgoingMessage.write_float32,
    "i": OutgoingMessage.write_int32,
    "l": OutgoingMessage.write_float32_list,
}


class SideChannel(ABC):
    """A message stream to and from the simulation, addressed by a UUID."""

    def __init__(self, channel_id: uuid.UUID) -> None:
        if not isinstance(channel_id, uuid.UUID):
            raise wrong_type(f"{type(self).__name__} channel_id", "a uuid.UUID", channel_id)
        self._channel_id = channel_id
        self.message_queue: list[bytes] = []  # payloads waiting to be sent, oldest first

    @property
    def channel_id(self) -> uuid.UUID:
        return self._channel_id

    def queue_message_to_send(self, msg: OutgoingMessage) -> None:
        """Queue a copy of ``msg``'s bytes to be sent at the next reset or step."""
        if not isinstance(msg, OutgoingMessage):
            what = f"{type(self).__name__}.queue_message_to_send"
            raise wrong_type(what, "an OutgoingMessage", msg, show=False)
        self.message_queue.append(msg.buffer)

    @abstractmethod
    def on_message_received(self, msg: IncomingMessage) -> None:
        """Handle one message from the simulation; may be called several times per step."""


class SendOnlySideChannel(SideChannel):
    """A channel whose messages only go to the simulation: one received is an error."""

    def on_message_received(self, msg: IncomingMessage) -> None:
        raise SideChannelCommunicationError(
            f"{type(self).__name__} received a {len(msg.buffer)}-byte message from the "
            f"simulation; this channel only sends"
        )
