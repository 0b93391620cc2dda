"""Checks and helpers shared by the side-channel modules.

Classes:
    SideChannelTypeError: a side-channel value of the wrong type.

Functions ``check_int32``, ``check_float32``, ``check_bool`` and ``encode_ascii`` validate one
value before it is packed, so a bad value fails with a message that names what was being
written, what was expected and what was given, instead of a bare ``struct.error``.
"""

from __future__ import annotations

import math
import numbers
import operator
from typing import Any

import numpy as np
from typing_extensions import override  # a dependency (>= 4.5, which has it)

from zooport.errors import (
    SideChannelError,
    UnityCommunicationException,
    UnityEnvironmentException,
)

__all__ = [
    "INT32_MIN",
    "INT32_MAX",
    "FLOAT32_MAX",
    "SideChannelTypeError",
    "SideChannelCommunicationError",
    "SideChannelEnvironmentError",
    "check_bool",
    "check_int32",
    "check_float32",
    "encode_ascii",
    "override",
]

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
FLOAT32_MAX = float(np.finfo(np.float32).max)


class SideChannelTypeError(SideChannelError, TypeError):
    """A value of the wrong type was given to a side channel.

    Derives from :class:`~zooport.errors.SideChannelError` (so from ``ValueError``) and from
    ``TypeError``, so either ``except`` clause a Python user would write catches it.
    """


class SideChannelCommunicationError(SideChannelError, UnityCommunicationException):
    """A message on a channel that only sends, or an engine configuration message the
    simulation cannot read: a ``UnityCommunicationException``, as ML-Agents raises there."""


class SideChannelEnvironmentError(SideChannelError, UnityEnvironmentException):
    """Side-channel data whose frames are truncated or shorter than declared, or two channels
    with one id: a ``UnityEnvironmentException``, as ML-Agents' manager raises there."""


def check_bool(value: object, what: str) -> bool:
    """Return ``value`` as a ``bool`` if it is a Python or NumPy boolean."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise SideChannelTypeError(f"{what}: expected a bool, got {type(value).__name__} {value!r}")


def check_int32(value: Any, what: str) -> int:
    """Return ``value`` as an ``int`` if it is an integer that fits a signed 32-bit int."""
    if isinstance(value, (bool, np.bool_)):
        # bool is an int subclass; writing one as an int32 is almost always a mistake.
        raise SideChannelTypeError(f"{what}: expected an int, got bool {value!r}")
    try:
        number = operator.index(value)  # int, IntEnum and NumPy integers; not floats
    except TypeError:
        raise SideChannelTypeError(
            f"{what}: expected an int, got {type(value).__name__} {value!r}"
        ) from None
    if not INT32_MIN <= number <= INT32_MAX:
        raise SideChannelError(
            f"{what}: expected an int32 in [{INT32_MIN}, {INT32_MAX}], got {number}"
        )
    return number


def check_float32(value: object, what: str) -> float:
    """Return ``value`` as a ``float`` if it is a real number representable as a float32.

    NaN and infinities are allowed (ML-Agents sends them unchanged); finite values beyond the
    float32 range are rejected rather than silently turned into infinities.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise SideChannelTypeError(
            f"{what}: expected a real number, got {type(value).__name__} {value!r}"
        )
    number = float(value)
    if math.isfinite(number) and abs(number) > FLOAT32_MAX:
        raise SideChannelError(
            f"{what}: expected a value representable as float32 (|x| <= {FLOAT32_MAX:.7g}, "
            f"or inf/nan), got {number!r}"
        )
    return number


def encode_ascii(value: object, what: str) -> bytes:
    """Return ``value`` encoded as ASCII, the only encoding the Unity side decodes."""
    if not isinstance(value, str):
        raise SideChannelTypeError(f"{what}: expected a str, got {type(value).__name__} {value!r}")
    try:
        return value.encode("ascii")
    except UnicodeEncodeError as exc:
        raise SideChannelError(
            f"{what}: expected an ASCII string, got {value!r} with non-ASCII character "
            f"{value[exc.start]!r} at index {exc.start}"
        ) from None
