"""Writing one side-channel message, in ML-Agents' little-endian wire format."""

from __future__ import annotations

import struct
import warnings
from collections.abc import Iterable

from ._common import (
    SideChannelTypeError,
    check_bool,
    check_bytes,
    check_float32,
    check_int32,
    encode_ascii,
)

__all__ = ["OutgoingMessage"]


class OutgoingMessage:
    r"""Builds the payload of one side-channel message, in ML-Agents' layout.

    Each value is checked before anything is written, so a failed write changes nothing: ints
    must fit an int32, floats a float32 (NaN and infinities pass, as in ML-Agents), strings
    must be ASCII. A wrong type raises ``SideChannelTypeError``, a wrong value
    :class:`~zooport.errors.SideChannelError`.

    Example:
        >>> msg = OutgoingMessage()
        >>> msg.write_string("speed")
        >>> msg.write_float32(2.5)
        >>> msg.buffer
        b'\x05\x00\x00\x00speed\x00\x00 @'
        >>> msg.write_int32(2**31)
        Traceback (most recent call last):
        ...
        zooport.errors.SideChannelError: write_int32: expected an int32 in [...], got 2147483648
    """

    def __init__(self) -> None:
        self._buffer = bytearray()

    def __repr__(self) -> str:
        return f"OutgoingMessage(<{len(self._buffer)} bytes>)"

    @property
    def buffer(self) -> bytes:
        """The bytes written so far (a snapshot)."""
        return bytes(self._buffer)

    def write_bool(self, b: bool) -> None:
        self._buffer += struct.pack("<?", check_bool(b, "write_bool"))

    def write_int32(self, i: int) -> None:
        self._buffer += struct.pack("<i", check_int32(i, "write_int32"))

    def write_float32(self, f: float) -> None:
        self._buffer += struct.pack("<f", check_float32(f, "write_float32"))

    def write_float32_list(self, float_list: Iterable[float]) -> None:
        """Append an int32 count, then each value (of a list, tuple or 1-D array) as float32."""
        if isinstance(float_list, (str, bytes, bytearray)) or not isinstance(float_list, Iterable):
            raise SideChannelTypeError(
                f"write_float32_list: expected an iterable of real numbers, "
                f"got {type(float_list).__name__}"
            )
        values = [
            check_float32(v, f"write_float32_list item {i}") for i, v in enumerate(float_list)
        ]
        count = check_int32(len(values), "write_float32_list length")
        self._buffer += struct.pack(f"<i{count}f", count, *values)

    def write_string(self, s: str) -> None:
        """Append an int32 byte count, then the string's ASCII bytes."""
        encoded = encode_ascii(s, "write_string")
        self._buffer += struct.pack("<i", check_int32(len(encoded), "write_string length"))
        self._buffer += encoded

    def set_raw_bytes(self, buffer: bytes | bytearray | memoryview) -> None:
        """Replace the whole message with a copy of ``buffer``; warns, as ML-Agents does, if
        values had been written."""
        data = check_bytes(buffer, "set_raw_bytes")
        if self._buffer:
            warnings.warn(
                f"OutgoingMessage.set_raw_bytes discards the {len(self._buffer)} bytes "
                f"already written to this message",
                stacklevel=2,
            )
        self._buffer = bytearray(data)
