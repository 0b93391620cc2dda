"""Reward shaping and team rewards (MATE's ``AuxiliaryCameraRewards``/``RepeatedReward``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np
from pettingzoo import ParallelEnv
from typing_extensions import override

from zooport.adapters.wrappers.base import (
    AgentSelector,
    AgentSpec,
    ParallelWrapper,
    ResetReturn,
    StepReturn,
    Teams,
    TeamSpec,
    check_once,
    expect,
)
from zooport.errors import ArgumentError, ArgumentTypeError

REDUCTIONS: dict[str, Callable[[np.ndarray], Any]] = {
    "sum": np.sum,
    "mean": np.mean,
    "max": np.max,
    "min": np.min,
}
_ENV_REWARD = "env_reward"


def _reduction(value: str, allowed: tuple[str, ...]) -> str:
    expect(value in allowed, "reduction", f"one of {list(allowed)}", value)
    return value


class StepData(NamedTuple):
    """One step as a reward component sees it (``agents``: the shaped agents that reported, in
    the order of a returned array; ``episode_step`` from 1; ``total_steps`` since built)."""

    observations: dict[str, Any]
    rewards: dict[str, float]
    terminations: dict[str, bool]
    truncations: dict[str, bool]
    infos: dict[str, dict[str, Any]]
    actions: dict[str, Any]
    agents: list[str]
    episode_step: int
    total_steps: int
    env: Any


class RewardShaping(ParallelWrapper[str, Any, Any]):
    """Rewards as a weighted sum of named components (always ``"env_reward"``), optionally
    reduced over the shaped agents, all recorded in ``info["reward_shaping"]``."""

    def __init__(
        self,
        env: ParallelEnv,
        components: Mapping[str, Callable[[StepData], Any]],
        coefficients: Mapping[str, float | Callable[[int], float]] | None = None,
        reduction: str = "none",
        *,
        agents: AgentSpec = None,
    ) -> None:
        super().__init__(env)
        ok = isinstance(components, Mapping)
        expect(ok, "components", "a mapping name -> callable", components, ArgumentTypeError)
        for name, component in components.items():
            ok = isinstance(name, str) and bool(name) and name != _ENV_REWARD
            reserved = f"{_ENV_REWARD!r} (the env's reward is always a component)"
            expect(ok, "component names", f"non-empty str other than {reserved}", name)
            wanted = "a callable StepData -> value"
            expect(callable(component), f"component {name!r}", wanted, component, ArgumentTypeError)
        self.components: dict[str, Callable[[StepData], Any]] = dict(components)
        names = [_ENV_REWARD, *self.components]
        coefficients = dict(coefficients or {})
        unknown = [k for k in coefficients if k not in names]
        if unknown:
            raise ArgumentError(
                f"coefficients for unknown components {unknown}; components: {names}"
            )
        self.coefficients: dict[str, float | Callable[[int], float]] = {}
        for name in names:
            value = coefficients.get(name, 1.0)
            ok = callable(value) or isinstance(value, (int, float, np.integer, np.floating))
            ok = ok and not isinstance(value, bool)
            wanted = "a float or a schedule total_steps -> float"
            expect(ok, f"coefficient {name!r}", wanted, value, ArgumentTypeError)
            self.coefficients[name] = value if callable(value) else float(value)
        self.reduction = _reduction(reduction, ("none", *REDUCTIONS))
        self.select = AgentSelector(env, agents)
        self._episode_step = 0
        self.total_steps = 0

    @override
    def reset(self, seed: int | None = None, options: dict | None = None) -> ResetReturn:
        self._episode_step = 0
        return self.env.reset(seed=seed, options=options)

    @override
    def step(self, actions: dict[str, Any]) -> StepReturn:
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        self._episode_step += 1
        self.total_steps += 1
        shaped = [a for a in rewards if self.select(a)]
        if not shaped:
            return observations, rewards, terminations, truncations, infos
        data = StepData(
            observations, rewards, terminations, truncations, infos, actions, shaped,
            self._episode_step, self.total_steps, self.env,
        )  # fmt: skip
        names = list(self.coefficients)
        values = np.empty((len(names), len(shaped)), dtype=np.float64)
        values[0] = [rewards[a] for a in shaped]
        for row, name in enumerate(names[1:], start=1):
            values[row] = _per_agent(name, self.components[name](data), shaped)
        coefficients = np.array([self._coefficient(name) for name in names])
        weighted = coefficients @ values
        shared = {}
        if self.reduction != "none":
            shared["shared_reward"] = float(REDUCTIONS[self.reduction](weighted))
        own = weighted.tolist()
        rewards, infos = dict(rewards), dict(infos)
        weights = dict(zip(names, coefficients.tolist(), strict=True))
        for column, agent in enumerate(shaped):
            components = dict(zip(names, values[:, column].tolist(), strict=True))
            record = {"components": components, "coefficients": weights, "reward": own[column]}
            rewards[agent] = shared.get("shared_reward", own[column])
            infos[agent] = {**infos.get(agent, {}), "reward_shaping": {**record, **shared}}
        return observations, rewards, terminations, truncations, infos

    def _coefficient(self, name: str) -> float:
        value = self.coefficients[name]
        result = value(self.total_steps) if callable(value) else value
        if isinstance(result, bool) or not isinstance(result, (int, float, np.number)):
            raise ArgumentTypeError(
                f"coefficient schedule {name!r} returned {result!r} at total_steps="
                f"{self.total_steps}; expected a float"
            )
        return float(result)


def _per_agent(name: str, value: Any, agents: list[str]) -> Any:
    if isinstance(value, Mapping):
        missing = [a for a in agents if a not in value]
        if missing:
            raise ArgumentError(
                f"reward component {name!r} returned no value for agents {missing}; it must "
                f"cover every shaped agent that reported ({agents})"
            )
        return [value[a] for a in agents]
    array = np.asarray(value, dtype=np.float64)
    if array.ndim == 0 or array.shape == (len(agents),):
        return array
    raise ArgumentError(
        f"reward component {name!r} returned shape {array.shape}; expected a scalar, a "
        f"mapping agent -> float, or shape ({len(agents)},) (one value per data.agents)"
    )


class TeamReward(ParallelWrapper[str, Any, Any]):
    """Every agent gets its team's ``reduction`` of its reporting members' rewards (or of
    ``info[source]``), also in ``info["team_reward"]``; its own is ``info["individual_reward"]``."""

    def __init__(
        self,
        env: ParallelEnv,
        reduction: str = "sum",
        *,
        teams: TeamSpec = None,
        source: str = "reward",
    ) -> None:
        super().__init__(env)
        check_once(self, env)
        self.reduction = _reduction(reduction, tuple(REDUCTIONS))
        self._reduce = REDUCTIONS[self.reduction]
        self.teams = Teams(env, teams)
        ok = isinstance(source, str) and bool(source)
        expect(ok, "source", "'reward' or an info key", source, ArgumentTypeError)
        self.source = source

    @override
    def step(self, actions: dict[str, Any]) -> StepReturn:
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        new_rewards: dict[str, float] = {}
        infos = dict(infos)
        for members in self.teams.group(rewards).values():
            if self.source == "reward":
                values = [rewards[a] for a in members]
            else:
                try:
                    values = [infos[a][self.source] for a in members]
                except KeyError:
                    raise ArgumentError(
                        f"TeamReward(source={self.source!r}): expected every agent's info to "
                        f"have that key; the info of an agent of {members} has no "
                        f"{self.source!r} key"
                    ) from None
            team = float(self._reduce(np.asarray(values, dtype=np.float64)))
            for agent in members:
                new_rewards[agent] = team
                infos[agent] = {
                    **infos.get(agent, {}),
                    "team_reward": team,
                    "individual_reward": rewards[agent],
                }
        return observations, new_rewards, terminations, truncations, infos
