"""Rewards and episode ends over agents and teams: shaping, team rewards, end rules."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from numbers import Real
from typing import Any, NamedTuple

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from zooport.adapters.options import TerminationMode, finished_needed
from zooport.errors import ArgumentError, ArgumentTypeError, EnvNotResetError, a_type

from .base import (
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

REDUCTIONS = {name: getattr(np, name) for name in ("sum", "mean", "max", "min")}
_ENV_REWARD = "env_reward"
#: A termination rule: ``"any"``, ``"majority"``, ``"all"`` (or a TerminationMode) or a fraction.
Mode = TerminationMode | str | float


class StepData(NamedTuple):
    """One step as a reward component sees it (``agents``: the shaped agents that reported)."""

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
    """Rewards as a weighted sum of named components, recorded in ``info["reward_shaping"]``."""

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
            ok = callable(value) or (isinstance(value, Real) and not isinstance(value, bool))
            wanted = "a float or a schedule total_steps -> float"
            expect(ok, f"coefficient {name!r}", wanted, value, ArgumentTypeError)
            self.coefficients[name] = value if callable(value) else float(value)
        allowed = ["none", *REDUCTIONS]
        expect(reduction in allowed, "reduction", f"one of {allowed}", reduction)
        self.reduction = reduction
        self.select = AgentSelector(env, agents)
        self._episode_step = self.total_steps = 0

    def reset(self, seed: int | None = None, options: dict | None = None) -> ResetReturn:
        self._episode_step = 0
        return self.env.reset(seed=seed, options=options)

    def step(self, actions: dict[str, Any]) -> StepReturn:
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        self._episode_step += 1
        self.total_steps += 1
        shaped = [a for a in rewards if self.select(a)]
        if not shaped:
            return observations, rewards, terminations, truncations, infos
        data = StepData(
            observations, rewards, terminations, truncations, infos, actions, shaped,
            self._episode_step, self.total_steps, self.env
        )  # fmt: skip
        names = list(self.coefficients)
        values = np.empty((len(names), len(shaped)), dtype=np.float64)
        coefficients = np.empty(len(names), dtype=np.float64)
        for row, name in enumerate(names):
            value = self.components[name](data) if row else [rewards[a] for a in shaped]
            if isinstance(value, Mapping):
                missing = [a for a in shaped if a not in value]
                if missing:
                    raise ArgumentError(
                        f"reward component {name!r} returned no value for agents {missing}; it "
                        f"must cover every shaped agent that reported ({shaped})"
                    )
                value = [value[a] for a in shaped]
            array = np.asarray(value, dtype=np.float64)
            if array.ndim != 0 and array.shape != (len(shaped),):
                raise ArgumentError(
                    f"reward component {name!r} returned shape {array.shape}; expected a scalar, "
                    f"a mapping agent -> float, or shape ({len(shaped)},) (one value per "
                    "data.agents)"
                )
            values[row] = array
            weight = self.coefficients[name]
            weight = weight(self.total_steps) if callable(weight) else weight
            if isinstance(weight, bool) or not isinstance(weight, (int, float, np.number)):
                raise ArgumentTypeError(
                    f"coefficient schedule {name!r} returned {weight!r} at total_steps="
                    f"{self.total_steps}; expected a float"
                )
            coefficients[row] = weight
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


class TeamReward(ParallelWrapper[str, Any, Any]):
    """Every agent gets its team's ``reduction`` of its reporting members' rewards."""

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
        expect(reduction in REDUCTIONS, "reduction", f"one of {list(REDUCTIONS)}", reduction)
        self.reduction, self._reduce = reduction, REDUCTIONS[reduction]
        self.teams = Teams(env, teams)
        ok = isinstance(source, str) and bool(source)
        expect(ok, "source", "'reward' or an info key", source, ArgumentTypeError)
        self.source = source

    def step(self, actions: dict[str, Any]) -> StepReturn:
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        new_rewards: dict[str, float] = {}
        infos = dict(infos)
        source = self.source
        for members in self.teams.group(rewards).values():
            try:
                values = [rewards[a] if source == "reward" else infos[a][source] for a in members]
            except KeyError:
                raise ArgumentError(
                    f"TeamReward(source={source!r}): expected every agent's info to have that "
                    f"key; the info of an agent of {members} has no {source!r} key"
                ) from None
            team = float(self._reduce(np.asarray(values, dtype=np.float64)))
            for agent in members:
                new_rewards[agent] = team
                own = {"team_reward": team, "individual_reward": rewards[agent]}
                infos[agent] = {**infos.get(agent, {}), **own}
        return observations, new_rewards, terminations, truncations, infos


class TerminationPolicy(ParallelWrapper[str, Any, Any]):
    """Ends the episode when ``mode`` of the agents that took part finished."""

    teams: Teams | None = None  # IndividualDone's: the rule over each team, not the episode

    def __init__(
        self, env: ParallelEnv, mode: Mode = "all", *, end_live_as: str = "truncated"
    ) -> None:
        super().__init__(env)
        check_once(self, env)
        finished_needed(mode, 1)  # a bad mode raises here
        wanted = "one of ['truncated', 'terminated']"
        expect(end_live_as in ("truncated", "terminated"), "end_live_as", wanted, end_live_as)
        self.rule, self.end_live_as = mode, end_live_as
        self._finished: set[str] = set()
        self._members: dict[Any, set[str]] = {}  # team (None for the episode) -> its agents
        self._done_teams: set[Any] = set()
        self._benched: set[str] = set()  # finished here, live in the env
        self._over = True  # no episode before a reset

    @property
    def agents(self) -> list[str]:
        return [] if self._over else [a for a in self.env.agents if a not in self._finished]

    def _join(self, agents: Iterable[str]) -> None:
        for agent in agents:
            team = None if self.teams is None else self.teams(agent)
            self._members.setdefault(team, set()).add(agent)

    def reset(self, seed: int | None = None, options: dict | None = None) -> ResetReturn:
        observations, infos = self.env.reset(seed=seed, options=options)
        self._finished, self._over = set(), False
        self._members, self._done_teams, self._benched = {}, set(), set()
        self._join(self.env.agents)
        return observations, infos

    def step(self, actions: dict[str, Any]) -> StepReturn:
        if self._over:
            raise EnvNotResetError(
                f"{type(self).__name__}: the episode is over (rule {self.rule!r}); call reset()"
            )
        benched = self._benched
        if benched:  # played on with a filler action where the env holds them live
            live = set(self.env.agents)
            fill = {a: filler_action(self.env.action_space(a)) for a in benched if a in live}
            actions = {**actions, **fill}
        result = self.env.step(actions)
        if benched:
            result = tuple({a: v for a, v in d.items() if a not in benched} for d in result)
        observations, rewards, terminations, truncations, infos = result
        self._join(self.env.agents)
        if self.teams is None:  # an agent that joined and finished in this step took part
            self._join(terminations)
        finished = self._finished
        finished.update(a for ended in (terminations, truncations) for a in ended if ended[a])
        for team, members in self._members.items():
            n_finished = len(members & finished)
            if team in self._done_teams or not n_finished:
                continue
            if n_finished >= finished_needed(self.rule, len(members)):
                self._done_teams.add(team)
                cut = [a for a in members if a in terminations and a not in finished]
                finished.update(cut)
                if self.end_live_as == "truncated":
                    truncations = {**truncations, **dict.fromkeys(cut, True)}
                else:
                    terminations = {**terminations, **dict.fromkeys(cut, True)}
                benched.update(cut)
                self._over = self.teams is None
        return observations, rewards, terminations, truncations, infos


class IndividualDone(TerminationPolicy):
    """A team's done as per-agent flags: once ``mode`` fires over a team, its live ones finish."""

    def __init__(
        self,
        env: ParallelEnv,
        mode: Mode = "any",
        *,
        teams: TeamSpec = None,
        end_live_as: str = "truncated",
    ) -> None:
        super().__init__(env, mode, end_live_as=end_live_as)
        self.teams, self._over = Teams(env, teams), False


def filler_action(space: spaces.Space) -> Any:
    """A fixed valid action: 0 / the Box point nearest zero, recursively for composites."""
    if isinstance(space, spaces.Discrete):
        return int(space.start)
    if isinstance(space, spaces.MultiDiscrete):
        return np.asarray(space.start, dtype=space.dtype).copy()
    if isinstance(space, spaces.MultiBinary):
        return np.zeros(space.shape, dtype=space.dtype)
    if isinstance(space, spaces.Box):
        return np.clip(np.zeros(space.shape), space.low, space.high).astype(space.dtype)
    if isinstance(space, spaces.Dict):
        return {k: filler_action(s) for k, s in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(filler_action(s) for s in space.spaces)
    raise ArgumentTypeError(f"no filler action for {a_type(space)} action space")
