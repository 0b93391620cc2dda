"""Shared visibility (MATE's ``SharedFieldOfView``) over per-entity observation rows."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from typing_extensions import override

from zooport.adapters.wrappers.base import (
    Infos,
    ObservationMapper,
    PerAgent,
    ResetReturn,
    Teams,
    TeamSpec,
    WrapperOrderError,
    behavior_of,
    check_once,
    expect,
    get_wrapper,
)
from zooport.adapters.wrappers.observation import CentralisedObservation, RescaleObservations
from zooport.errors import ArgumentError, ArgumentTypeError, SpecError


@dataclass(frozen=True)
class EntitySlots:
    """``count`` rows of ``features`` from ``offset`` in a flat observation (row ``j``: entity
    ``j`` for every teammate); feature ``mask_feature`` is 1 where the agent sees it."""

    offset: int
    count: int
    features: int
    mask_feature: int

    def __post_init__(self) -> None:
        for name in ("offset", "count", "features", "mask_feature"):
            value = getattr(self, name)
            ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
            expect(ok and value >= 0, f"EntitySlots.{name}", "an int >= 0", value)
        if self.count < 1 or not 0 <= self.mask_feature < self.features:
            raise ArgumentError(
                f"Expect count >= 1 and 0 <= mask_feature < features, actually: {self}"
            )

    @property
    def stop(self) -> int:
        return self.offset + self.count * self.features


SlotsSpec = EntitySlots | Mapping[str, EntitySlots] | Callable[[str], EntitySlots | None] | None


class SharedVisibility(ObservationMapper):
    """Each entity row some teammate sees becomes, for every teammate, that of the first who
    sees it; ``slots`` or the env's ``entity_slots`` say where the rows are (see the guide)."""

    def __init__(
        self, env: ParallelEnv, slots: SlotsSpec = None, *, teams: TeamSpec = None
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
        unwrapped = self.env.unwrapped
        declared = getattr(unwrapped, "entity_slots", None)
        core_declared = getattr(getattr(unwrapped, "core", None), "entity_slots", None)
        if isinstance(spec, EntitySlots):
            slots = spec
        elif isinstance(spec, Mapping):
            slots = spec.get(agent, spec.get(self.teams(agent)))  # type: ignore[call-overload]  # agent or team keys
        elif callable(spec):
            slots = spec(agent)
        elif callable(declared):
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
    def map_step(self, observations: PerAgent, infos: Infos, actions: PerAgent) -> ResetReturn:
        out = dict(observations)
        for team, agents in self.teams.group(list(observations)).items():
            layouts = {a: slots for a in agents if (slots := self._slots_of(a)) is not None}
            if len(layouts) < 2:
                continue
            if len(set(layouts.values())) > 1:
                raise SpecError(
                    f"SharedVisibility: team {team!r} mixes entity slot layouts "
                    f"{sorted({str(slots) for slots in layouts.values()})}"
                )
            members, layout = list(layouts), next(iter(layouts.values()))
            window = slice(layout.offset, layout.stop)
            shape = (len(members), layout.count, layout.features)
            rows = np.stack([observations[a][window] for a in members]).reshape(shape)
            seen = rows[:, :, layout.mask_feature] > 0.5  # each entity's row from its first viewer
            first = rows[seen.argmax(axis=0), np.arange(layout.count)]
            shared = np.where(np.asarray(seen.any(axis=0))[None, :, None], first[None], rows)
            for agent, row in zip(members, shared.reshape(len(members), -1), strict=True):
                obs = np.array(observations[agent], copy=True)
                obs[window] = row
                out[agent] = obs
        return out, infos
