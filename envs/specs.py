"""Specs: what a behaviour observes and how its agents act, and the names of both.

Classes:
    DimensionProperty, ObservationType, ObservationSpec: what one observation is.
    BehaviorSpec: the observation specs and action spec of a behaviour.
    BehaviorMapping: a read-only mapping from behaviour name to ``BehaviorSpec``.

Part of the ``BaseEnv`` API: import these from :mod:`zooport.envs.base_env`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from typing import NamedTuple

from zooport.envs.actions import ActionSpec

__all__ = [
    "AgentId",
    "GroupId",
    "BehaviorName",
    "DimensionProperty",
    "ObservationType",
    "ObservationSpec",
    "BehaviorSpec",
    "BehaviorMapping",
]

AgentId = int
GroupId = int
BehaviorName = str


class DimensionProperty(enum.IntFlag):
    """Properties of one observation dimension."""

    UNSPECIFIED = 0
    NONE = 1
    TRANSLATIONAL_EQUIVARIANCE = 2
    VARIABLE_SIZE = 4


class ObservationType(enum.Enum):
    """What an observation is used for."""

    DEFAULT = 0
    GOAL_SIGNAL = 1


class ObservationSpec(NamedTuple):
    """One observation of a behaviour: its shape, per-dimension properties, type and name."""

    shape: tuple[int, ...]
    dimension_property: tuple[DimensionProperty, ...]
    observation_type: ObservationType
    name: str


class BehaviorSpec(NamedTuple):
    """The observation specs and the action spec shared by a behaviour's agents."""

    observation_specs: list[ObservationSpec]
    action_spec: ActionSpec


class BehaviorMapping(Mapping):
    """A read-only mapping from behaviour name to :class:`BehaviorSpec`."""

    def __init__(self, specs: dict[BehaviorName, BehaviorSpec]) -> None:
        self._dict = specs

    def __len__(self) -> int:
        return len(self._dict)

    def __getitem__(self, behavior: BehaviorName) -> BehaviorSpec:
        return self._dict[behavior]

    def __iter__(self) -> Iterator[BehaviorName]:
        yield from self._dict

    def __repr__(self) -> str:
        return f"BehaviorMapping({self._dict!r})"
