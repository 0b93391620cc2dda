"""Observation wrappers: rescaling, centralised-critic inputs and shared visibility."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space
from pettingzoo import ParallelEnv

from zooport.errors import ArgumentError, ArgumentTypeError, SpecError

from .base import (
    Infos,
    ParallelWrapper,
    PartsDelivery,
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


class Rescaler:
    """Maps observations so bounded float features span ``[-1, 1]``; ``space``: the new space."""

    def __init__(self, space: spaces.Space) -> None:
        self.space, self.changes = space, False
        self._parts: Any = None
        if isinstance(space, (spaces.Dict, spaces.Tuple)):
            items = space.spaces.items() if isinstance(space, spaces.Dict) else enumerate(space)
            parts: dict[Any, Rescaler] = {k: Rescaler(s) for k, s in items}
            if any(p.changes for p in parts.values()):
                self.changes, self._parts = True, parts
                new = {k: p.space for k, p in parts.items()}
                is_dict = isinstance(space, spaces.Dict)
                self.space = spaces.Dict(new) if is_dict else spaces.Tuple(list(new.values()))
        if not isinstance(space, spaces.Box) or not np.issubdtype(space.dtype, np.floating):
            return
        low, high = space.low.astype(np.float64), space.high.astype(np.float64)
        has_low, has_high = np.isfinite(low), np.isfinite(high)
        if not (has_low | has_high).any():
            return
        both = has_low & has_high
        span = np.where(both, high - low, 0.0)
        flat = both & (span <= 0)
        scale = np.where(both, np.divide(2.0, span, out=np.zeros_like(span), where=span > 0), 1.0)
        offset = np.select(
            [both & ~flat, has_low & ~has_high, has_high & ~has_low],
            [-1.0 - low * scale, -1.0 - low, 1.0 - high],
            0.0,
        )
        new_low = np.select([flat, has_low], [0.0, -1.0], -np.inf)
        new_high = np.select([flat, has_high], [0.0, 1.0], np.inf)
        dtype = space.dtype
        self.space = spaces.Box(new_low.astype(dtype), new_high.astype(dtype), dtype=dtype)
        self._scale, self._offset = scale.astype(dtype), offset.astype(dtype)
        self.changes = True

    def __call__(self, observation: Any) -> Any:
        if not self.changes:
            return observation
        if self._parts is None:
            dtype = self._scale.dtype
            return (np.asarray(observation, dtype) * self._scale + self._offset).astype(dtype)
        if isinstance(self.space, spaces.Dict):
            return {k: p(observation[k]) for k, p in self._parts.items()}
        return tuple(p(o) for p, o in zip(self._parts.values(), observation, strict=True))


class RescaleObservations(ParallelWrapper[str, Any, Any]):
    """Observations rescaled by :class:`Rescaler` (not clipped), per agent; applied once."""

    def __init__(self, env: ParallelEnv) -> None:
        super().__init__(env)
        check_once(self, env)
        self._by_space: dict[int, Rescaler] = {}  # a rescaler holds its space: ids stay unique
        self._of: dict[str, Rescaler] = {}

    def _rescaler(self, agent: str) -> Rescaler:
        if agent not in self._of:
            space = self.env.observation_space(agent)
            self._of[agent] = self._by_space.setdefault(id(space), Rescaler(space))
        return self._of[agent]

    def observation_space(self, agent: str) -> spaces.Space:
        return self._rescaler(agent).space

    def map_step(self, observations: PerAgent, infos: Infos, actions: PerAgent) -> ResetReturn:
        return {a: self._rescaler(a)(o) for a, o in observations.items()}, infos


class GymRescaleObservations(gym.wrappers.TransformObservation):
    """:class:`RescaleObservations` for a single-agent ``gymnasium.Env``."""

    def __init__(self, env: gym.Env) -> None:
        self.rescaler = Rescaler(env.observation_space)
        super().__init__(env, self.rescaler, self.rescaler.space)


class VectorRescaleObservations(gym.vector.VectorWrapper):
    """:class:`RescaleObservations` for a ``VectorEnv``, its ``info["final_obs"]`` included."""

    def __init__(self, env: gym.vector.VectorEnv) -> None:
        super().__init__(env)
        self.rescaler = Rescaler(env.single_observation_space)
        self.single_observation_space = self.rescaler.space
        self.observation_space = batch_space(self.rescaler.space, env.num_envs)

    def reset(self, *, seed: Any = None, options: dict | None = None) -> tuple[Any, dict]:
        observations, info = self.env.reset(seed=seed, options=options)  # seed: an int or a list
        return self.rescaler(observations), info

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        observations, rewards, terminations, truncations, info = self.env.step(actions)
        final = info.get("final_obs")
        if final is not None:
            rescaled = np.empty(len(final), dtype=object)
            for i, obs in enumerate(final):
                rescaled[i] = None if obs is None else self.rescaler(obs)
            info = {**info, "final_obs": rescaled}
        return self.rescaler(observations), rewards, terminations, truncations, info


RescaleObservations.forms = {"gym": GymRescaleObservations, "vector": VectorRescaleObservations}


_PARTS = ("state", "observations", "actions")


class CentralisedObservation(PartsDelivery):
    """Adds the state and the others' observations and actions, for centralised critics."""

    def __init__(
        self, env: ParallelEnv, include: Sequence[str] = _PARTS, *, delivery: str = "observation"
    ) -> None:
        super().__init__(env, delivery)
        ok = not isinstance(include, str) and set(include) <= set(_PARTS) and include
        expect(ok, "include", f"a non-empty subset of {list(_PARTS)}", include)
        self.include = tuple(p for p in _PARTS if p in include)
        members = self.members = list(env.possible_agents)
        state_space = getattr(env, "state_space", None)
        if "state" in self.include and not isinstance(state_space, spaces.Box):
            raise ArgumentError(
                f"CentralisedObservation(include=['state', ...]) needs an env with state() "
                f"and a Box state_space; {env} has state_space={state_space!r}"
            )
        sources: dict[str, dict[Any, Any]] = {
            "state": {None: state_space},  # the same for every agent
            "others_observations": {a: _without_mask(env.observation_space(a)) for a in members},
            "others_actions": {a: env.action_space(a) for a in members},
        }
        self._layouts = {
            key: _Layout(parts) for key, parts in sources.items() if key.endswith(self.include)
        }
        for agent in self.members:
            self.observation_space(agent)

    def part_spaces(self, agent: str) -> dict[str, spaces.Box]:
        return {key: layout.others_space(agent) for key, layout in self._layouts.items()}

    def map_step(self, observations: PerAgent, infos: Infos, actions: PerAgent) -> ResetReturn:
        values: dict[str, Any] = {"others_observations": observations, "others_actions": actions}
        if "state" in self._layouts:
            values["state"] = {None: self.env.state()}
        central = {key: layout.joint(values[key]) for key, layout in self._layouts.items()}
        parts = {
            agent: {key: self._layouts[key].others(joint, agent) for key, joint in central.items()}
            for agent in observations
        }
        return self._with_parts(observations, infos, parts)


def _without_mask(space: spaces.Space) -> spaces.Space:
    if isinstance(space, spaces.Dict) and "action_mask" in space.spaces:
        return spaces.Dict({k: s for k, s in space.spaces.items() if k != "action_mask"})
    return space


class _Layout:  # where each member's flattened value sits in the joint vector
    def __init__(self, parts: dict[Any, spaces.Space]) -> None:
        self.parts = parts
        self.index = {member: i for i, member in enumerate(parts)}
        for space in parts.values():
            if not isinstance(spaces.flatten_space(space), spaces.Box):  # a Sequence, a Graph
                raise SpecError(
                    f"CentralisedObservation: expected spaces that flatten to a Box, got {space}"
                )
        self.stops = np.cumsum([0, *map(spaces.flatdim, parts.values())])
        joint: Any = spaces.flatten_space(spaces.Tuple(parts.values()))  # a Box, as each is
        self.low, self.high = joint.low, joint.high

    def others_space(self, agent: str) -> spaces.Box:
        low, high = (self.others(b, agent).astype(np.float32) for b in (self.low, self.high))
        return spaces.Box(low, high, dtype=np.float32)

    def joint(self, values: dict[Any, Any]) -> np.ndarray:
        joint = np.zeros(int(self.stops[-1]), dtype=np.float32)
        for i, (member, space) in enumerate(self.parts.items()):
            value = values.get(member)
            if value is None:
                continue
            # flatten reads the space's keys only: an observation's action_mask is left out
            joint[self.stops[i] : self.stops[i + 1]] = np.asarray(spaces.flatten(space, value))
        return joint

    def others(self, joint: np.ndarray, agent: str) -> np.ndarray:
        index = self.index.get(agent)  # an agent that is no member sees all of it
        if index is None:
            return joint.copy()
        return np.concatenate([joint[: self.stops[index]], joint[self.stops[index + 1] :]])


@dataclass(frozen=True)
class EntitySlots:
    """``count`` rows of ``features`` from ``offset``; ``mask_feature`` is 1 where seen."""

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


Slots = EntitySlots | Mapping[str, EntitySlots] | Callable[[str], EntitySlots | None] | None


class SharedVisibility(ParallelWrapper[str, Any, Any]):
    """Teammates share the entity rows any of them sees (MATE's ``SharedFieldOfView``)."""

    def __init__(self, env: ParallelEnv, slots: Slots = None, *, teams: TeamSpec = None) -> None:
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
        core: Any = getattr(unwrapped, "core", None)
        if isinstance(spec, EntitySlots):
            slots = spec
        elif isinstance(spec, Mapping):
            slots = spec.get(agent, spec.get(self.teams(agent)))  # type: ignore[call-overload]  # agent or team keys
        elif callable(spec):
            slots = spec(agent)
        elif callable(getattr(unwrapped, "entity_slots", None)):
            slots = unwrapped.entity_slots(agent)
        elif callable(getattr(core, "entity_slots", None)):
            slots = core.entity_slots(behavior_of(self.env, agent))
        if slots is not None:
            space = self.env.observation_space(agent)
            ok = isinstance(slots, EntitySlots)
            expect(ok, f"entity slots of {agent!r}", "EntitySlots", slots, ArgumentTypeError)
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
