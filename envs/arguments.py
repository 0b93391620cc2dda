"""The argument checks every core, adapter and wrapper shares."""

from __future__ import annotations

import math
import operator
from typing import Any, overload

import numpy as np

from zooport.errors import ArgumentError, ArgumentTypeError

__all__ = ["check_seed", "check_int", "check_bool", "check_float", "MAX_COUNT"]

#: The largest count an argument may ask for: agent ids are int32.
MAX_COUNT = 2**31 - 1


@overload
def check_seed(seed: int, where: str = ...) -> int: ...
@overload
def check_seed(seed: Any, where: str = ...) -> int | None: ...
def check_seed(seed: Any, where: str = "reset") -> int | None:
    """``seed`` as a Python int >= 0 (as Gymnasium requires) or None; raises naming ``where``."""
    if seed is None:
        return None
    try:
        value = None if isinstance(seed, bool) else operator.index(seed)
    except TypeError:  # a float, a str, an array of several values
        value = None
    if value is None:
        raise ArgumentTypeError(
            f"{where}: expected seed to be None or an int >= 0, got {type(seed).__name__} {seed!r}"
        )
    if value < 0:
        raise ArgumentError(f"{where}: expected seed to be None or an int >= 0, got {value}")
    return value


def check_int(
    value: Any,
    name: str,
    minimum: int = 0,
    *,
    maximum: int = MAX_COUNT,
    where: str | None = None,
) -> int:
    """``value`` as a Python int in ``[minimum, maximum]``; a bool or a float is no int."""
    prefix = f"{where}: " if where else ""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ArgumentTypeError(
            f"{prefix}Expect {name} to be an int, actually: {type(value).__name__} {value!r}"
        )
    if value < minimum:
        raise ArgumentError(f"{prefix}Expect {name} >= {minimum}, actually: {value}")
    if value > maximum:
        raise ArgumentError(f"{prefix}Expect {name} <= {maximum}, actually: {value}")
    return int(value)


def check_bool(value: Any, name: str, where: str | None = None) -> bool:
    """``value`` as a bool; an int, a str or an array is not taken for one."""
    if not isinstance(value, (bool, np.bool_)):
        prefix = f"{where}: " if where else ""
        raise ArgumentTypeError(
            f"{prefix}Expect {name} to be a bool, actually: {type(value).__name__} {value!r}"
        )
    return bool(value)


def check_float(
    value: Any,
    name: str,
    *,
    above: float | None = None,
    below: float | None = None,
    at_least: bool = False,
    kind: str = "a number",
    where: str | None = None,
) -> float:
    """``value`` as a finite Python float above ``above`` (or at it, ``at_least``) and below
    ``below``; ``kind`` is what the message says it should be."""
    prefix = f"{where}: " if where else ""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise ArgumentTypeError(f"{prefix}Expect {name} to be {kind}, actually: {value!r}")
    number = float(value)
    low_ok = above is None or number > above or (at_least and number == above)
    if math.isfinite(number) and low_ok and (below is None or number < below):
        return number
    if above is not None and below is not None:
        expected = f"{above} {'<=' if at_least else '<'} {name} < {below}"
    else:
        expected = f"{name} to be finite"
        expected += "" if above is None else f" and {'>=' if at_least else '>'} {above}"
        expected += "" if below is None else f" and < {below}"
    raise ArgumentError(f"{prefix}Expect {expected}, actually: {value!r}")
