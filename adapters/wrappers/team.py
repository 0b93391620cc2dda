"""Folding agents into the env: some play a policy, the others are exposed."""

from __future__ import annotations

import copy
import functools
import operator
import warnings
from collections.abc import Callable, Collection
from typing import Any, ClassVar, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from zooport.envs.arguments import check_seed
from zooport.errors import (
    ActionError,
    ArgumentError,
    ArgumentTypeError,
    EnvNotResetError,
    UnknownAgentError,
    ZooportError,
)

from .base import AgentSelector, ParallelWrapper, ResetReturn, StepReturn

#: A policy: a callable observation -> action, or ``"random"`` (a :class:`RandomPolicy`).
Policy = Callable[[Any], Any] | str


class RandomPolicy:
    """Samples its own copy of the action space, respecting ``observation["action_mask"]``."""

    def __init__(self, action_space: spaces.Space | None = None) -> None:
        self.action_space = copy.deepcopy(action_space)

    def bind(self, agent: str, action_space: spaces.Space) -> None:
        self.action_space = copy.deepcopy(action_space)

    def reset(self, seed: int | None = None) -> None:
        if self.action_space is not None:
            self.action_space.seed(seed)

    def __call__(self, observation: Any) -> Any:
        space = self.action_space
        if space is None:
            raise ZooportError("RandomPolicy has no action space: pass one or bind() it")
        mask = observation.get("action_mask") if isinstance(observation, dict) else None
        if mask is not None and isinstance(space, spaces.Discrete):
            return int(space.sample(mask=np.asarray(mask, dtype=np.int8)))
        if mask is not None and isinstance(space, spaces.MultiDiscrete):
            splits = np.cumsum(space.nvec.reshape(-1))[:-1]
            return space.sample(mask=tuple(np.split(np.asarray(mask, dtype=np.int8), splits)))
        return space.sample()


class FoldAgents(ParallelWrapper[str, Any, Any]):
    """Plays the chosen agents with ``policy`` and exposes only the others."""

    _require_folded: ClassVar[bool] = True

    def __init__(
        self,
        env: ParallelEnv,
        policy: Policy,
        agents: Collection[str] | Callable[[str], bool] | None = None,
        *,
        behavior: str | None = None,
        behaviour: str | None = None,
    ) -> None:
        super().__init__(env)
        if behaviour is not None:
            warnings.warn(
                "FoldAgents(behaviour=...) is deprecated; pass behavior= (zooport's one "
                "spelling, as in behavior_name=)",
                DeprecationWarning,
                stacklevel=2,
            )
            if behavior is not None:
                raise ArgumentError(
                    f"FoldAgents: pass behavior= only, actually both behavior={behavior!r} and "
                    f"behaviour={behaviour!r}"
                )
            behavior = behaviour
        if (agents is None) == (behavior is None):
            raise ArgumentError(
                "FoldAgents needs exactly one of agents= (names or a predicate) and "
                f"behavior= (a behaviour or agent-name prefix), actually: agents={agents!r}, "
                f"behavior={behavior!r}"
            )
        if isinstance(agents, str):
            raise ArgumentTypeError(
                f"Expect agents to be a collection of agent names or a predicate, actually the "
                f"str {agents!r}; for a behaviour or name prefix pass behavior={agents!r}"
            )
        policy = RandomPolicy() if isinstance(policy, str) and policy == "random" else policy
        if not callable(policy):
            wanted = "a callable observation -> action or 'random'"
            raise ArgumentTypeError(f"Expect policy to be {wanted}, actually: {policy!r}")
        self.policy = policy
        self.folded = AgentSelector(env, agents if behavior is None else behavior, "agents")
        self._clones: dict[str, Callable[[Any], Any]] = {}
        self._folded_obs: dict[str, Any] = {}
        self.folded_rewards: dict[str, float] = {}
        possible = env.possible_agents
        if not any(self.folded(a) for a in possible) and self._require_folded:
            raise ArgumentError(
                f"FoldAgents: the selection folds none of {possible} (agents={agents!r}, "
                f"behavior={behavior!r})"
            )
        if all(self.folded(a) for a in possible):
            raise ArgumentError(f"FoldAgents: the selection folds every agent of {possible}")

    @property
    def possible_agents(self) -> list[str]:
        return [a for a in self.env.possible_agents if not self.folded(a)]

    @property
    def agents(self) -> list[str]:
        return [a for a in self.env.agents if not self.folded(a)]

    def _clone(self, agent: str, seed: bool = False) -> Callable[[Any], Any]:
        if agent not in self._clones:
            clone = self._clones[agent] = copy.deepcopy(self.policy)
            if callable(getattr(clone, "bind", None)):
                clone.bind(agent, self.env.action_space(agent))  # type: ignore[attr-defined]
        clone = self._clones[agent]
        if seed and callable(getattr(clone, "reset", None)):
            clone.reset(int(self.np_random.integers(2**63 - 1)))  # type: ignore[attr-defined]
        return clone

    def _hide(self, values: dict[str, Any]) -> dict[str, Any]:
        return {a: v for a, v in values.items() if not self.folded(a)}

    def reset(self, seed: int | None = None, options: dict | None = None) -> ResetReturn:
        observations, infos = self.env.reset(seed=seed, options=options)
        self._reseed(seed)
        self._folded_obs = {a: o for a, o in observations.items() if self.folded(a)}
        for agent in sorted(set(self._clones) | set(self._folded_obs)):
            self._clone(agent, seed=True)
        self.folded_rewards = {}
        return self._hide(observations), self._hide(infos)

    def step(self, actions: dict[str, Any]) -> StepReturn:
        folded_given = [a for a in actions if self.folded(a)]
        if folded_given:
            raise ActionError(
                f"FoldAgents: {folded_given} are played by the folded policy; pass actions "
                f"for the exposed agents only ({self.agents})"
            )
        live = set(self.env.agents)
        played = {a: self._clone(a)(o) for a, o in self._folded_obs.items() if a in live}
        result = self.env.step({**actions, **played})
        observations, rewards, terminations, truncations, _ = result
        self._folded_obs = {}
        for agent, obs in observations.items():
            if self.folded(agent) and agent not in self._clones:  # spawned since: seed a clone
                self._clone(agent, seed=True)
            if self.folded(agent) and not (terminations.get(agent) or truncations.get(agent)):
                self._folded_obs[agent] = obs
        self.folded_rewards = {a: r for a, r in rewards.items() if self.folded(a)}
        return tuple(self._hide(d) for d in result)  # type: ignore[return-value]


class _FoldOthers(FoldAgents):
    _require_folded: ClassVar[bool] = False  # a single-agent env behind SingleAgentView


class SingleAgentView(gym.Env[Any, Any]):
    """One ``agent`` of a Parallel env as a ``gymnasium.Env``, the others folded."""

    def __init__(
        self, env: ParallelEnv, agent: str | None = None, policy: Policy = "random"
    ) -> None:
        if not isinstance(env, ParallelEnv):
            raise ArgumentTypeError(
                f"SingleAgentView wraps a PettingZoo ParallelEnv, actually: {type(env).__name__}"
            )
        possible = list(env.possible_agents)
        agent = possible[0] if agent is None else agent
        if agent not in possible:
            raise UnknownAgentError(
                f"SingleAgentView: {agent!r} is not a possible agent; possible: {possible}"
            )
        self.agent = agent
        # operator.ne(agent, a) is ``a != agent``; a partial pickles, a lambda does not.
        self.env = _FoldOthers(env, policy, functools.partial(operator.ne, agent))
        self.observation_space = env.observation_space(agent)
        self.action_space = env.action_space(agent)
        metadata = getattr(env, "metadata", {}) or {}
        self.metadata = {
            "render_modes": list(metadata.get("render_modes", [])),
            "render_fps": metadata.get("render_fps", 30),
        }
        self.render_mode = getattr(env, "render_mode", None)
        self._over = True

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        seed = check_seed(seed, "SingleAgentView.reset")
        super().reset(seed=seed)
        observations, infos = self.env.reset(seed=seed, options=options)
        if self.agent not in observations:
            raise ZooportError(
                f"SingleAgentView: {self.agent!r} is not among the agents at reset "
                f"({list(observations)})"
            )
        self._over = False
        return observations[self.agent], infos.get(self.agent, {})

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        agent = self.agent
        if self._over:
            raise EnvNotResetError(f"SingleAgentView({agent!r}): the episode is over; call reset()")
        observations, rewards, terminations, truncations, infos = self.env.step({agent: action})
        if agent not in observations:
            raise ZooportError(f"SingleAgentView: the env gave no observation for {agent!r}")
        terminated, truncated = bool(terminations.get(agent)), bool(truncations.get(agent))
        if not self.env.agents and not (terminated or truncated):
            truncated = True  # the env ended its episode around the agent
        self._over = terminated or truncated
        return observations[agent], float(rewards[agent]), terminated, truncated, infos[agent]

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def __str__(self) -> str:
        return f"SingleAgentView({self.agent!r})<{self.env.env}>"
