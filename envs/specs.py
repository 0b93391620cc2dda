"""What a behaviour observes and how its agents act."""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from typing import NamedTuple

from zooport.envs.actions import ActionSpec
from zooport.envs.arguments import check_int

__all__ = [
    "AgentId", "GroupId", "BehaviorName", "DimensionProperty", "ObservationType",
    "ObservationSpec", "BehaviorSpec", "BehaviorMapping",
]  # fmt: skip

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

    @classmethod
    def vector(
        cls, size: int, name: str, *, observation_type: ObservationType = ObservationType.DEFAULT
    ) -> ObservationSpec:
        """A vector observation of ``size`` floats (a ``VectorSensor``'s spec)."""
        shape = _sizes(f"ObservationSpec.vector({name!r})", size=(size, 0))
        return cls(shape, (DimensionProperty.NONE,), observation_type, name)

    @classmethod
    def visual(
        cls,
        height: int,
        width: int,
        channels: int,
        name: str,
        *,
        observation_type: ObservationType = ObservationType.DEFAULT,
    ) -> ObservationSpec:
        """An (height, width, channels) image, equivariant along its two spatial dimensions."""
        where = f"ObservationSpec.visual({name!r})"
        shape = _sizes(where, height=(height, 1), width=(width, 1), channels=(channels, 1))
        equivariant = DimensionProperty.TRANSLATIONAL_EQUIVARIANCE
        return cls(
            shape, (equivariant, equivariant, DimensionProperty.NONE), observation_type, name
        )

    @classmethod
    def entities(
        cls,
        count: int,
        features: int,
        name: str,
        *,
        observation_type: ObservationType = ObservationType.DEFAULT,
    ) -> ObservationSpec:
        """Up to ``count`` entities of ``features`` floats each (a ``BufferSensor``'s spec)."""
        shape = _sizes(
            f"ObservationSpec.entities({name!r})", count=(count, 1), features=(features, 1)
        )
        variable = DimensionProperty.VARIABLE_SIZE
        return cls(shape, (variable, DimensionProperty.NONE), observation_type, name)


def _sizes(where: str, **sizes: tuple[int, int]) -> tuple[int, ...]:
    return tuple(check_int(size, label, low, where=where) for label, (size, low) in sizes.items())


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
