"""When an episode ends, by how many of its ``n`` agents finished (ended at least once): ``any`` 1,
``majority`` ``n // 2 + 1``, ``all`` ``n``, a fraction ``f`` in (0, 1] ``ceil(f * n)`` (>= 1)."""

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
    """How many of ``n_agents`` must have finished for ``mode`` to end the episode."""
    needed = None
    if isinstance(mode, str):
        named = {"any": 1, "majority": n_agents // 2 + 1, "all": n_agents}
        needed = named.get(mode.strip().lower())
    elif isinstance(mode, (float, np.floating)) and math.isfinite(mode) and 0.0 < mode <= 1.0:
        # A tiny tolerance so that 0.3 * 10 asks for 3 agents, not 4.
        needed = max(1, math.ceil(float(mode) * n_agents - 1e-9))
    if needed is None:
        error = ArgumentError if isinstance(mode, (str, float, np.floating)) else ArgumentTypeError
        raise error(
            "Expect termination_mode to be one of 'any', 'majority', 'all' (or a "
            f"TerminationMode), or a fraction in (0, 1], actually: {mode!r}"
        )
    return needed if n_agents > 0 else 0
