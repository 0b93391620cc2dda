"""The adapters' options as frozen dataclasses, which the front ends hand to their engines, and
the rule of ``termination_mode=``."""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import math
import numbers
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from zooport.errors import ArgumentError, ArgumentTypeError

if TYPE_CHECKING:
    from zooport.adapters.agent_names import AgentNaming

__all__ = [
    "LayoutOptions", "SlotOptions", "GymOptions", "DriverOptions", "PettingZooOptions",
    "TerminationMode", "finished_needed", "listing_options",
]  # fmt: skip

_Class = TypeVar("_Class", bound=type)


class TerminationMode(str, enum.Enum):
    """The named values of ``termination_mode=`` (the strings themselves work as well)."""

    ANY = "any"
    MAJORITY = "majority"
    ALL = "all"


def finished_needed(mode: TerminationMode | str | float, n_agents: int) -> int:
    """How many of ``n_agents`` must have finished (ended at least once) to end the episode:
    ``any`` 1, ``majority`` ``n // 2 + 1``, ``all`` ``n``, a fraction ``f`` ``ceil(f * n)``."""
    needed = None
    # A float or numpy float (numbers.Real but not Integral): not an int, not a bool.
    fraction = isinstance(mode, numbers.Real) and not isinstance(mode, numbers.Integral)
    if isinstance(mode, str):
        named = {"any": 1, "majority": n_agents // 2 + 1, "all": n_agents}
        needed = named.get(mode.strip().lower())
    elif fraction and math.isfinite(mode) and 0.0 < mode <= 1.0:
        # A tiny tolerance so that 0.3 * 10 asks for 3 agents, not 4.
        needed = max(1, math.ceil(float(mode) * n_agents - 1e-9))
    if needed is None:
        error = ArgumentError if isinstance(mode, str) or fraction else ArgumentTypeError
        raise error(
            "Expect termination_mode to be one of 'any', 'majority', 'all' (or a "
            f"TerminationMode), or a fraction in (0, 1], actually: {mode!r}"
        )
    return needed if n_agents > 0 else 0


@dataclasses.dataclass(frozen=True)
class LayoutOptions:
    """How a behaviour's specs become Gymnasium spaces (see :mod:`zooport.adapters.spaces`)."""

    uint8_visual: bool = False
    flatten_branched: bool = False
    allow_multiple_obs: bool = False

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return {f.name: f.default for f in dataclasses.fields(cls)}


@dataclasses.dataclass(frozen=True)
class SlotOptions(LayoutOptions):
    """The options of ``BehaviorVectorEnv`` and ``SB3VecEnv``."""

    behavior_name: str | None = None
    render_mode: str | None = None


@dataclasses.dataclass(frozen=True)
class GymOptions(SlotOptions):
    """The options of ``GymEnv``."""

    action_space_seed: int | None = None


@dataclasses.dataclass(frozen=True)
class DriverOptions(LayoutOptions):
    """The options of ``MultiAgentDriver`` and ``MultiAgentTask``."""

    termination_mode: TerminationMode | str | float = "all"
    max_cycles: int | None = None
    action_masks: bool | None = None
    mask_in_info: bool = False
    default_action: str | Mapping[str, Any] | None = None
    agent_name: AgentNaming = None
    stale_actions: str = "ignore"


@dataclasses.dataclass(frozen=True)
class PettingZooOptions(DriverOptions):
    """The options of the PettingZoo adapters."""

    render_mode: str | None = None
    name: str | None = None


def listing_options(cls: _Class) -> _Class:
    """``cls`` whose constructor raises an ``ArgumentTypeError`` listing its options."""
    init = cls.__init__  # type: ignore[misc]  # the class's own constructor
    signature = inspect.signature(init)
    lead, *options = list(signature.parameters)[1:]

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            signature.bind(self, *args, **kwargs)
        except TypeError as error:
            raise ArgumentTypeError(
                f"{cls.__name__}(): {error}; it takes {[lead]} and the options {options}"
            ) from None
        init(self, *args, **kwargs)

    cls.__init__ = __init__  # type: ignore[misc]  # the same constructor, checked first
    return cls
