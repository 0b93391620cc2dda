"""The base of zooport's Parallel wrappers, finding a layer, and choosing agents and teams."""

from __future__ import annotations

import contextlib
import functools
import zlib
from collections.abc import Callable, Collection, Hashable, Iterator, Mapping
from typing import Any, ClassVar, TypeVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv

from zooport.adapters.agent_names import behavior_prefix
from zooport.envs.arguments import check_seed
from zooport.envs.step_guard import StepGuard
from zooport.errors import (
    ArgumentError,
    ArgumentTypeError,
    SpecError,
    UnknownAgentError,
    ZooportError,
)

AgentID = TypeVar("AgentID")
ObsType = TypeVar("ObsType")
ActionType = TypeVar("ActionType")
PerAgent = dict[str, Any]
Infos = dict[str, dict[str, Any]]
ResetReturn = tuple[PerAgent, Infos]
StepReturn = tuple[dict, dict, dict, dict, dict]


class WrapperOrderError(ZooportError, ValueError):
    """A wrapper where it cannot stand (a channel without a bus beneath, a second copy, ...)."""


def _chain(env: Any) -> Iterator[Any]:
    for _ in range(1000):  # a cycle of .env references ends here
        if env is None:
            return
        yield env
        inner = getattr(env, "env", None)
        env = getattr(env, "aec_env", None) if inner is None else inner


def get_wrapper(env: Any, cls: type) -> Any | None:
    """The outermost layer of ``env`` that is a ``cls`` (or its gym/vector form), or None."""
    for layer in _chain(env):
        if isinstance(layer, (cls, *getattr(cls, "forms", {}).values())):
            return layer
    return None


def has_wrapper(env: Any, cls: type) -> bool:
    """True when ``cls`` (or its gym/vector form) is a layer of ``env``'s chain."""
    return get_wrapper(env, cls) is not None


def expect(
    ok: Any, name: str, wanted: str, value: Any, error: type[ZooportError] = ArgumentError
) -> None:
    """Raises ``error`` saying ``name`` should be ``wanted`` and is ``value``, unless ``ok``."""
    if not ok:
        raise error(f"Expect {name} to be {wanted}, actually: {value!r}")


def check_once(wrapper: Any, env: Any) -> None:
    """Refuses a second ``type(wrapper)`` in ``env``'s chain, for wrappers applied once."""
    if any(type(layer) is type(wrapper) for layer in _chain(env)):
        raise WrapperOrderError(
            f"{type(wrapper).__name__} appears twice: {env} has one already; apply it once"
        )


#: An agent selection: None (every agent), a behaviour/team name, names, or a predicate.
AgentSpec = str | Collection[str] | Callable[[str], bool] | None
#: Teams: None (behaviours), a mapping agent -> team, or a callable agent -> team.
TeamSpec = Mapping[str, Hashable] | Callable[[str], Hashable] | None


def _known_behavior(env: Any, agent: str) -> str | None:
    key_of = getattr(getattr(env, "unwrapped", None), "agent_key", None)
    try:
        return key_of(agent).behavior if callable(key_of) else None
    except KeyError:  # UnknownAgentError: a name the adapter does not know
        return None


def behavior_of(env: Any, agent: str) -> str:
    """``agent``'s zooport behaviour name, else its name before the last ``_``."""
    head, sep, _ = agent.rpartition("_")
    return _known_behavior(env, agent) or (head if sep and head else agent)


def _selected_by_name(env: Any, spec: str, agent: str) -> bool:
    behavior = behavior_of(env, agent)
    if behavior == spec or agent.rpartition("_")[0] == spec:
        return True
    if "?" in spec and _known_behavior(env, agent):  # "Soccer?team=0": not "Soccer?team=1"
        return False
    return behavior_prefix(behavior) == behavior_prefix(spec)


class AgentSelector:
    """Decides, once per agent, whether a wrapper acts on it (``spec``: see the wrappers guide)."""

    def __init__(self, env: Any, spec: AgentSpec, what: str = "agents") -> None:
        self.spec = spec
        self._cache: dict[str, bool] = {}
        self._test: Callable[[str], bool] | None = None
        if isinstance(spec, str):  # a partial, not a lambda, so wrappers pickle
            self._test = functools.partial(_selected_by_name, env, spec)
        elif callable(spec):
            self._test = spec
        elif isinstance(spec, Collection) and all(isinstance(a, str) for a in spec):
            self._test = frozenset(spec).__contains__
        else:
            wanted = "None, a behaviour name, a collection of agent names or a callable"
            expect(spec is None, what, f"{wanted} agent -> bool", spec, ArgumentTypeError)

    def __call__(self, agent: str) -> bool:
        if agent not in self._cache:
            self._cache[agent] = self._test is None or bool(self._test(agent))
        return self._cache[agent]


class Teams:
    """Maps agents to teams: by behaviour (default: :func:`behavior_of`), a mapping or callable."""

    def __init__(self, env: Any, teams: TeamSpec = None) -> None:
        ok = teams is None or isinstance(teams, Mapping) or callable(teams)
        wanted = "None, a mapping agent -> team or a callable"
        expect(ok, "teams", wanted, teams, ArgumentTypeError)
        self.env = env
        self.teams = dict(teams) if isinstance(teams, Mapping) else teams
        self._cache: dict[str, Hashable] = dict(teams) if isinstance(teams, Mapping) else {}

    def __call__(self, agent: str) -> Hashable:
        if agent not in self._cache:
            if isinstance(self.teams, dict):
                raise UnknownAgentError(
                    f"agent {agent!r} is in no team; teams given for {sorted(self.teams)}"
                )
            team = behavior_of(self.env, agent) if self.teams is None else self.teams(agent)
            self._cache[agent] = team
        return self._cache[agent]

    def group(self, agents: Collection[str]) -> dict[Hashable, list[str]]:
        """``{team: [agents, in the given order]}``, teams in order of first appearance."""
        groups: dict[Hashable, list[str]] = {}
        for agent in agents:
            groups.setdefault(self(agent), []).append(agent)
        return groups


def _guarded(method: Callable[..., Any]) -> Callable[..., Any]:
    # The layer the user calls enters the guard; its calls inward, or to super(), pass through.
    call = method.__name__

    @functools.wraps(method)
    def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
        guard, running, beneath = self.step_guard, self.step_guard.layer, self._beneath
        nested = running is not None and (
            running.env is self or (running is self and getattr(type(self), call) is not guarded)
        )
        before = -1 if beneath is None else beneath.completed
        if not nested:
            guard.owner = type(self).__name__
        with contextlib.nullcontext() if nested else guard.call(call):
            guard.layer = self
            try:
                return method(self, *args, **kwargs)
            finally:
                guard.layer = running  # None for the layer that entered the guard
                if not nested:
                    guard.committed = beneath is None or beneath.completed != before

    return guarded


class ParallelWrapper(ParallelEnv[AgentID, ObsType, ActionType]):
    """A PettingZoo Parallel env wrapping another, every member passed through explicitly."""

    metadata = property(lambda self: self.env.metadata)
    render_mode = property(lambda self: getattr(self.env, "render_mode", None))
    agents = property(lambda self: self.env.agents)
    possible_agents = property(lambda self: self.env.possible_agents)
    state_space = property(lambda self: self.env.state_space)
    unwrapped = property(lambda self: self.env.unwrapped)
    observation_spaces = property(lambda s: {a: s.observation_space(a) for a in s.possible_agents})
    action_spaces = property(lambda s: {a: s.action_space(a) for a in s.possible_agents})
    #: Its forms that ``apply_wrappers`` puts over a ``gymnasium.Env`` and a ``VectorEnv``.
    forms: ClassVar[dict[str, type]] = {}

    def __init__(self, env: ParallelEnv) -> None:
        if not isinstance(env, ParallelEnv):
            hint = " (convert it with pettingzoo.utils.aec_to_parallel first)"
            raise ArgumentTypeError(
                f"{type(self).__name__} wraps a PettingZoo ParallelEnv, actually: "
                f"{type(env).__name__}{hint if isinstance(env, AECEnv) else ''}"
            )
        self.env = env
        self._np_random: np.random.Generator | None = None
        # Stacked wrappers of one class draw different streams from one seed.
        self._seed_key = (zlib.crc32(type(self).__qualname__.encode()), sum(1 for _ in _chain(env)))
        self.step_guard: StepGuard = StepGuard(type(self).__name__)
        self._beneath: StepGuard | None = getattr(env, "step_guard", None)
        if isinstance(env, ParallelWrapper):  # one guard for the chain, and the one beneath it
            self.step_guard, self._beneath = env.step_guard, env._beneath

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for call in ("step", "reset"):
            if call in cls.__dict__:
                setattr(cls, call, _guarded(cls.__dict__[call]))

    def observation_space(self, agent: AgentID) -> spaces.Space:
        return self.env.observation_space(agent)

    def action_space(self, agent: AgentID) -> spaces.Space:
        return self.env.action_space(agent)

    def map_step(self, observations: PerAgent, infos: Infos, actions: dict) -> ResetReturn:
        """The observations and infos after ``actions`` (``{}`` at reset), changed by a subclass."""
        return observations, infos

    @_guarded
    def reset(self, seed: int | None = None, options: dict | None = None) -> ResetReturn:
        self._reseed(seed)
        observations, infos = self.env.reset(seed=seed, options=options)
        return self.map_step(observations, infos, {})

    @_guarded
    def step(self, actions: dict[AgentID, ActionType]) -> StepReturn:
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        observations, infos = self.map_step(observations, infos, actions)
        return observations, rewards, terminations, truncations, infos

    def state(self) -> np.ndarray:
        return self.env.state()

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def __str__(self) -> str:
        return f"{type(self).__name__}<{self.env}>"

    __repr__ = __str__

    @property
    def np_random(self) -> np.random.Generator:
        """This wrapper's generator, seeded by ``reset(seed=s)`` from ``s``, its class and depth."""
        return self._np_random or self._reseed(None)

    def _reseed(self, seed: int | None) -> np.random.Generator:
        seed = check_seed(seed, f"{type(self).__name__}.reset")
        if seed is not None or self._np_random is None:
            sequence = np.random.SeedSequence(seed, spawn_key=self._seed_key)
            self._np_random = np.random.default_rng(sequence)
        return self._np_random


class PartsDelivery(ParallelWrapper[str, Any, Any]):
    """Adds named parts (messages, a state) to each agent's observation or info (``delivery``)."""

    def part_spaces(self, agent: str) -> Mapping[str, spaces.Space]:
        raise NotImplementedError  # the spaces of the parts ``agent`` receives, by key

    def __init__(self, env: ParallelEnv, delivery: str) -> None:
        super().__init__(env)
        check_once(self, env)
        wanted = "one of ['observation', 'info']"
        expect(delivery in ("observation", "info"), "delivery", wanted, delivery)
        self.delivery = delivery

    def observation_space(self, agent: str) -> spaces.Space:
        cache: dict[str, spaces.Space] = self.__dict__.setdefault("_delivered_spaces", {})
        if agent not in cache:
            space = self.env.observation_space(agent)
            if self.delivery == "observation":
                own = space.spaces if isinstance(space, spaces.Dict) else {"observation": space}
                parts = self.part_spaces(agent)
                clash = [k for k in parts if k in own]
                if clash:
                    raise SpecError(
                        f"{type(self).__name__}: agent {agent!r}'s observation already has "
                        f"keys {clash}; use delivery='info'"
                    )
                space = spaces.Dict({**own, **parts})
            cache[agent] = space
        return cache[agent]

    def _with_parts(self, observations: PerAgent, infos: Infos, parts: dict) -> ResetReturn:
        if self.delivery == "info":
            delivered = {a: {**infos.get(a, {}), **p} for a, p in parts.items()}
            return observations, {**infos, **delivered}
        return {
            a: {**o, **parts[a]} if isinstance(o, dict) else {"observation": o, **parts[a]}
            for a, o in observations.items()
        }, infos
