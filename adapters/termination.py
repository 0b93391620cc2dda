"""When a multi-agent episode ends, given how many of its ``n`` agents have finished (ended at
least once, restarted or not): ``any`` 1, ``majority`` ``n // 2 + 1``, ``all`` ``n``, a
fraction ``f`` in (0, 1] ``ceil(f * n)`` (at least 1); an episode without agents is over."""

from __future__ import annotations

import enum
import math

import numpy as np

from zooport.errors import ArgumentError, ArgumentTypeError

__all__ = ["TerminationMode", "finished_needed"]


class TerminationMode(str, enum.Enum):
    """The named values of ``termination_mode=`` (the strings themselves work as well)."""

    ANY = "any"
    MAJORITY = "majority"
    ALL = "all"


def finished_needed(mode: TerminationMode | str | float, n_agents: int) -> int:
    """How many of an episode's ``n_agents`` must have finished for ``mode`` to end it.

    ``mode`` is ``"any"``, ``"majority"`` or ``"all"`` (any case, or a
    :class:`TerminationMode`), or a fraction in (0, 1].

    Raises:
        ArgumentError: any other value (an ``ArgumentTypeError``, also a ``TypeError``, for
            one of another type); the message lists the valid ones.

    Example:
        >>> finished_needed("Majority", 4), finished_needed(0.25, 12), finished_needed("all", 0)
        (3, 3, 0)
    """
    if isinstance(mode, str):
        needed = {"any": 1, "majority": n_agents // 2 + 1, "all": n_agents}.get(
            mode.strip().lower()
        )
        if needed is None:
            raise ArgumentError(_invalid(mode))
    elif isinstance(mode, (float, np.floating)):
        if not (math.isfinite(mode) and 0.0 < mode <= 1.0):
            raise ArgumentError(_invalid(mode))
        # A tiny tolerance so that 0.3 * 10 asks for 3 agents, not 4.
        needed = max(1, math.ceil(float(mode) * n_agents - 1e-9))
    else:
        raise ArgumentTypeError(_invalid(mode))
    return needed if n_agents > 0 else 0


def _invalid(value: object) -> str:
    return (
        "Expect termination_mode to be one of 'any', 'majority', 'all' (or a TerminationMode), "
        f"or a fraction in (0, 1], actually: {value!r}"
    )
