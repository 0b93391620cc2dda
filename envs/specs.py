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
        size = check_int(size, "size", 0, where=f"ObservationSpec.vector({name!r})")
        return cls((size,), (DimensionProperty.NONE,), observation_type, name)

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
        shape = tuple(
            check_int(value, label, 1, where=where)
            for value, label in ((height, "height"), (width, "width"), (channels, "channels"))
        )
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
        where = f"ObservationSpec.entities({name!r})"
        shape = (
            check_int(count, "count", 1, where=where),
            check_int(features, "features", 1, where=where),
        )
        return cls(
            shape, (DimensionProperty.VARIABLE_SIZE, DimensionProperty.NONE), observation_type, name
        )


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
