"""Shared visibility: teammates see the entities any of them sees (MATE's ``SharedFieldOfView``),
for envs whose flat observations hold per-entity rows (:class:`EntitySlots`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from typing_extensions import override

from zooport.adapters.wrappers.base import (
    ObservationMapper,
    Teams,
    TeamSpec,
    WrapperOrderError,
    behavior_of,
    check_once,
    get_wrapper,
)
from zooport.adapters.wrappers.observation import CentralisedObservation, RescaleObservations
from zooport.errors import ArgumentError, ArgumentTypeError, SpecError

__all__ = ["EntitySlots", "SharedVisibility"]


@dataclass(frozen=True)
class EntitySlots:
    """Per-entity rows in a flat observation: ``count`` rows of ``features`` from ``offset``.

    Row ``j`` describes entity ``j`` (the same entity for every teammate, in a frame they
    share) and its feature ``mask_feature`` is 1 when the agent sees the entity, 0 when not."""

    offset: int
    count: int
    features: int
    mask_feature: int

    def __post_init__(self) -> None:
        for name in ("offset", "count", "features", "mask_feature"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ArgumentError(
                    f"Expect EntitySlots.{name} to be an int >= 0, actually: {value!r}"
                )
        if self.count < 1 or not 0 <= self.mask_feature < self.features:
            raise ArgumentError(
                f"Expect count >= 1 and 0 <= mask_feature < features, actually: {self}"
            )

    @property
    def stop(self) -> int:
        """The index after the last row."""
        return self.offset + self.count * self.features


SlotsSpec = EntitySlots | Mapping[str, EntitySlots] | Callable[[str], EntitySlots | None] | None


class SharedVisibility(ObservationMapper):
    """Teammates see what any of them sees: entity rows are shared within each team.

    For each entity row that some reporting teammate sees (its mask feature > 0.5), every
    teammate's row becomes that of the first teammate (in report order) who sees it, mask
    included; rows nobody sees stay as they were. Spaces do not change.

    Where the rows are (per agent, an :class:`EntitySlots`): ``slots`` (one for every agent,
    a mapping by agent name or by team, or a callable ``agent -> slots``); otherwise the env
    declares them: ``env.unwrapped.entity_slots(agent)``, or for a zooport adapter
    ``env.unwrapped.core.entity_slots(behaviour)``. An agent without slots is left alone.
    Observations must be rank-1 Boxes. ``teams`` maps agent -> team (default: behaviours).
    Applied once, beneath :class:`RescaleObservations` and :class:`CentralisedObservation`
    (rows and masks must be the env's own).

    Raises:
        WrapperOrderError: ``env`` has a SharedVisibility, a RescaleObservations or a
            CentralisedObservation.

    Example:
        >>> import numpy as np
        >>> rows = np.array([[[5.0, 1.0], [0.0, 0.0]], [[0.0, 0.0], [7.0, 1.0]]])
        >>> _share(rows, mask_feature=1).tolist()
        [[[5.0, 1.0], [7.0, 1.0]], [[5.0, 1.0], [7.0, 1.0]]]
    """

    def __init__(
        self,
        env: ParallelEnv,
        slots: SlotsSpec = None,
        *,
        teams: TeamSpec = None,
    ) -> None:
        super().__init__(env)
        check_once(self, env)
        for changed in (RescaleObservations, CentralisedObservation):
            if get_wrapper(env, changed) is not None:
                raise WrapperOrderError(
                    f"SharedVisibility must not wrap {changed.__name__} ({env}): it needs the "
                    f"env's own entity rows; put SharedVisibility before {changed.__name__}"
                )
        self.teams = Teams(env, teams)
        self._spec = slots
        self._slots: dict[str, EntitySlots | None] = {}
        if not any(self._slots_of(a) is not None for a in env.possible_agents):
            raise ArgumentError(
                f"SharedVisibility: no agent of {env} has entity slots; pass slots= or "
                "declare entity_slots(agent) on the env"
            )

    def _slots_of(self, agent: str) -> EntitySlots | None:
        if agent in self._slots:
            return self._slots[agent]
        spec, slots = self._spec, None
        if isinstance(spec, EntitySlots):
            slots = spec
        elif isinstance(spec, Mapping):
            slots = spec.get(agent, spec.get(self.teams(agent)))  # type: ignore[call-overload]  # agent or team keys
        elif callable(spec):
            slots = spec(agent)
        else:
            unwrapped = self.env.unwrapped
            declared = getattr(unwrapped, "entity_slots", None)
            core_declared = getattr(getattr(unwrapped, "core", None), "entity_slots", None)
            if callable(declared):
                slots = declared(agent)
            elif callable(core_declared):
                slots = core_declared(behavior_of(self.env, agent))
        if slots is not None:
            space = self.env.observation_space(agent)
            if not isinstance(slots, EntitySlots):
                raise ArgumentTypeError(
                    f"entity slots of {agent!r} must be EntitySlots, got {slots!r}"
                )
            if not isinstance(space, spaces.Box) or len(space.shape) != 1:
                raise SpecError(
                    f"SharedVisibility: agent {agent!r} has entity slots but its observation "
                    f"space is {space}, not a rank-1 Box"
                )
            if slots.stop > space.shape[0]:
                raise SpecError(
                    f"SharedVisibility: agent {agent!r}'s slots {slots} end at {slots.stop}, "
                    f"beyond its observation of size {space.shape[0]}"
                )
        self._slots[agent] = slots
        return slots

    @override
    def map_observations(self, observations: dict[str, Any]) -> dict[str, Any]:
        out = dict(observations)
        for team, members in self.teams.group(list(observations)).items():
            members = [a for a in members if self._slots_of(a) is not None]
            if len(members) < 2:
                continue
            layout = self._slots_of(members[0])
            if layout is None:  # kept above: every member has slots
                continue
            if any(self._slots_of(a) != layout for a in members[1:]):
                raise SpecError(
                    f"SharedVisibility: team {team!r} mixes entity slot layouts "
                    f"{sorted({str(self._slots_of(a)) for a in members})}"
                )
            window = slice(layout.offset, layout.stop)
            shape = (len(members), layout.count, layout.features)
            rows = np.stack([observations[a][window] for a in members]).reshape(shape)
            shared = _share(rows, layout.mask_feature).reshape(len(members), -1)
            for agent, row in zip(members, shared, strict=True):
                obs = np.array(observations[agent], copy=True)
                obs[window] = row
                out[agent] = obs
        return out


def _share(rows: np.ndarray, mask_feature: int) -> np.ndarray:
    """(members, count, features) rows -> each entity's row from its first viewer."""
    seen = rows[:, :, mask_feature] > 0.5
    first = seen.argmax(axis=0)
    shared = rows[first, np.arange(rows.shape[1])]
    return np.where(np.asarray(seen.any(axis=0))[None, :, None], shared[None], rows)
