"""When a multi-agent episode ends, given how many of its ``n`` agents have finished (ended at
least once, restarted or not): ``any`` 1, ``majority`` ``n // 2 + 1``, ``all`` ``n``, a
fraction ``f`` in (0, 1] ``ceil(f * n)`` (at least 1); an episode without agents is over."""

from __future__ import annotations

import enum
import math
from typing import Any

import numpy as np

from zooport.errors import ArgumentError, ArgumentTypeError

__all__ = ["TerminationMode", "TerminationRule"]


class TerminationMode(str, enum.Enum):
    """Which share of the agents must have finished for the episode to end.

    Example:
        >>> TerminationMode("Majority")
        <TerminationMode.MAJORITY: 'majority'>
    """

    ANY = "any"
    MAJORITY = "majority"
    ALL = "all"

    @classmethod
    def _missing_(cls, value: object) -> TerminationMode | None:
        if isinstance(value, str):
            lowered = value.strip().lower()
            for member in cls:
                if member.value == lowered:
                    return member
        return None


class TerminationRule:
    """A termination mode or a fraction of agents; see the module docstring.

    Args:
        value: a :class:`TerminationMode`, one of the strings ``"any"``, ``"majority"``,
            ``"all"`` (any case), a fraction in (0, 1], or another rule.

    Raises:
        ArgumentError: any other value (an ``ArgumentTypeError``, also a ``TypeError``, for
            one of another type); the message lists the valid ones.

    Example:
        >>> rule = TerminationRule("majority")
        >>> rule.required(4), rule.episode_over(2, 4), rule.episode_over(3, 4)
        (3, False, True)
        >>> TerminationRule(0.25).required(12)
        3
    """

    __slots__ = ("mode", "fraction")

    def __init__(self, value: TerminationMode | str | float | TerminationRule = "all") -> None:
        self.mode: TerminationMode | None = None
        self.fraction: float | None = None
        if isinstance(value, TerminationRule):
            self.mode, self.fraction = value.mode, value.fraction
        elif isinstance(value, (TerminationMode, str)):
            try:
                self.mode = TerminationMode(value)
            except ValueError:
                raise ArgumentError(_invalid(value)) from None
        elif isinstance(value, (float, np.floating)) and not isinstance(value, bool):
            if not (math.isfinite(value) and 0.0 < value <= 1.0):
                raise ArgumentError(_invalid(value))
            self.fraction = float(value)
        else:
            raise ArgumentTypeError(_invalid(value))

    def required(self, n_agents: int) -> int:
        """How many of ``n_agents`` must have finished for the episode to end."""
        if n_agents <= 0:
            return 0
        if self.mode is TerminationMode.ANY:
            return 1
        if self.mode is TerminationMode.MAJORITY:
            return n_agents // 2 + 1
        if self.mode is TerminationMode.ALL:
            return n_agents
        # Not one of the modes: a fraction (the constructor sets one or the other).
        assert self.fraction is not None
        # A tiny tolerance so that 0.3 * 10 asks for 3 agents, not 4.
        return max(1, math.ceil(self.fraction * n_agents - 1e-9))

    def episode_over(self, n_finished: int, n_agents: int) -> bool:
        """True when ``n_finished`` of ``n_agents`` agents having finished ends the episode."""
        return n_finished >= self.required(n_agents)

    def over(self, finished: Any) -> bool:
        """The rule applied to one finished flag per agent (a bool sequence or array).

        Example:
            >>> flags = [True, False]
            >>> TerminationRule("all").over(flags), TerminationRule("any").over(flags)
            (False, True)
        """
        flags = np.asarray(finished, dtype=bool).reshape(-1)
        return self.episode_over(int(np.count_nonzero(flags)), flags.size)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TerminationRule)
            and self.mode == other.mode
            and self.fraction == other.fraction
        )

    def __hash__(self) -> int:
        return hash((self.mode, self.fraction))

    def __repr__(self) -> str:
        value = self.mode.value if self.mode is not None else self.fraction
        return f"TerminationRule({value!r})"


def _invalid(value: object) -> str:
    return (
        "Expect termination_mode to be one of 'any', 'majority', 'all' (or a TerminationMode), "
        f"or a fraction in (0, 1], actually: {value!r}"
    )
