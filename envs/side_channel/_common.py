"""The side channels' error classes and the checks that name a bad value before it is packed."""

from __future__ import annotations

import math
import numbers
import operator
from typing import Any

import numpy as np
from typing_extensions import override  # a dependency (>= 4.5, which has it)

from zooport.errors import SideChannelError, UnityCommunicationException, UnityEnvironmentException

__all__ = [
    "SideChannelTypeError",
    "SideChannelCommunicationError",
    "SideChannelEnvironmentError",
    "check_bool",
    "check_int32",
    "check_float32",
    "encode_ascii",
    "check_bytes",
    "override",
]

_INT32 = (-(2**31), 2**31 - 1)
_FLOAT32_MAX = float(np.finfo(np.float32).max)


class SideChannelTypeError(SideChannelError, TypeError):
    """A side-channel value of the wrong type (also a ``TypeError``)."""


class SideChannelCommunicationError(SideChannelError, UnityCommunicationException):
    """A message on a channel that only sends, or an engine configuration message the
    simulation cannot read (ML-Agents raises ``UnityCommunicationException`` there)."""


class SideChannelEnvironmentError(SideChannelError, UnityEnvironmentException):
    """Truncated side-channel data, or two channels with one id (ML-Agents' manager raises
    ``UnityEnvironmentException`` there)."""


def _wrong_type(what: str, expected: str, value: object) -> SideChannelTypeError:
    return SideChannelTypeError(
        f"{what}: expected {expected}, got {type(value).__name__} {value!r}"
    )


def check_bool(value: object, what: str) -> bool:
    """``value`` as a ``bool`` if it is a Python or NumPy boolean."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise _wrong_type(what, "a bool", value)


def check_int32(value: Any, what: str) -> int:
    """``value`` as an ``int`` if it is an integer (not a bool) that fits an int32."""
    if isinstance(value, (bool, np.bool_)):  # an int subclass, and almost always a mistake
        raise _wrong_type(what, "an int", value)
    try:
        number = operator.index(value)  # int, IntEnum and NumPy integers; not floats
    except TypeError:
        raise _wrong_type(what, "an int", value) from None
    if not _INT32[0] <= number <= _INT32[1]:
        raise SideChannelError(
            f"{what}: expected an int32 in [{_INT32[0]}, {_INT32[1]}], got {number}"
        )
    return number


def check_float32(value: object, what: str) -> float:
    """``value`` as a ``float`` if a float32 holds it; NaN and infinities pass (ML-Agents
    sends them), finite values beyond the float32 range do not."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise _wrong_type(what, "a real number", value)
    number = float(value)
    if math.isfinite(number) and abs(number) > _FLOAT32_MAX:
        raise SideChannelError(
            f"{what}: expected a value representable as float32 (|x| <= {_FLOAT32_MAX:.7g}, "
            f"or inf/nan), got {number!r}"
        )
    return number


def encode_ascii(value: object, what: str) -> bytes:
    """``value`` encoded as ASCII, the only encoding the Unity side decodes."""
    if not isinstance(value, str):
        raise _wrong_type(what, "a str", value)
    try:
        return value.encode("ascii")
    except UnicodeEncodeError as exc:
        raise SideChannelError(
            f"{what}: expected an ASCII string, got {value!r} with non-ASCII character "
            f"{value[exc.start]!r} at index {exc.start}"
        ) from None


def check_bytes(value: object, what: str) -> bytes:
    """A copy of ``value`` if it is bytes, a bytearray or a memoryview."""
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise SideChannelTypeError(
            f"{what}: expected bytes, bytearray or memoryview, got {type(value).__name__}"
        )
    return bytes(value)
