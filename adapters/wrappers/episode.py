"""When a multi-agent episode ends: a :func:`~zooport.adapters.termination.finished_needed` rule
over the agents that finished, for the episode (:class:`TerminationPolicy`) or per team
(:class:`IndividualDone`); the agents still live then end as ``end_live_as`` says."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from typing_extensions import override

from zooport.adapters.termination import TerminationMode, finished_needed
from zooport.adapters.wrappers.base import (
    ParallelWrapper,
    ResetReturn,
    StepReturn,
    Teams,
    TeamSpec,
    check_once,
)
from zooport.errors import ArgumentError, ArgumentTypeError, EnvNotResetError, a_type

__all__ = ["TerminationPolicy", "IndividualDone", "filler_action"]


class _RuleWrapper(ParallelWrapper[str, Any, Any]):
    def __init__(
        self, env: ParallelEnv, mode: TerminationMode | str | float, end_live_as: str
    ) -> None:
        super().__init__(env)
        check_once(self, env)
        finished_needed(mode, 1)  # a bad mode raises here
        self.rule = mode
        if end_live_as not in ("truncated", "terminated"):
            raise ArgumentError(
                f"Expect end_live_as to be one of ['truncated', 'terminated'], actually: "
                f"{end_live_as!r}"
            )
        self.end_live_as = end_live_as
        self._agents: list[str] = []
        self._finished: set[str] = set()

    @property
    def agents(self) -> list[str]:
        return self._agents

    @override
    def reset(self, seed: int | None = None, options: dict | None = None) -> ResetReturn:
        observations, infos = self.env.reset(seed=seed, options=options)
        self._agents, self._finished = list(self.env.agents), set()
        self._begin()
        return observations, infos

    def _begin(self) -> None:
        """A subclass's own state at reset."""

    def _note_finished(
        self, terminations: dict[str, bool], truncations: dict[str, bool]
    ) -> set[str]:
        self._finished.update(a for a in terminations if terminations[a])
        self._finished.update(a for a in truncations if truncations[a])
        return self._finished

    def _end_live(
        self, cut: list[str], terminations: dict[str, bool], truncations: dict[str, bool]
    ) -> tuple[dict[str, bool], dict[str, bool]]:
        """New flags with ``cut`` (the live agents the rule ends) flagged ``end_live_as``."""
        self._finished.update(cut)
        flags = dict.fromkeys(cut, True)
        if self.end_live_as == "truncated":
            return terminations, {**truncations, **flags}
        return {**terminations, **flags}, truncations


class TerminationPolicy(_RuleWrapper):
    """Ends the episode when ``mode`` (``"any"``, ``"majority"``, ``"all"`` or a fraction) of
    the agents that took part finished; the live ones are flagged ``end_live_as``."""

    def __init__(
        self,
        env: ParallelEnv,
        mode: TerminationMode | str | float = "all",
        *,
        end_live_as: str = "truncated",
    ) -> None:
        super().__init__(env, mode, end_live_as)
        self._took_part: set[str] = set()
        self._over = True

    @override
    def _begin(self) -> None:
        self._took_part, self._over = set(self._agents), False

    @override
    def step(self, actions: dict[str, Any]) -> StepReturn:
        if self._over:
            raise EnvNotResetError(
                f"{type(self).__name__}: the episode is over (rule {self.rule!r}); call reset()"
            )
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        self._took_part.update(self.env.agents, terminations)
        finished = self._note_finished(terminations, truncations)
        if len(finished) >= finished_needed(self.rule, len(self._took_part)):
            cut = [a for a in terminations if a not in finished]
            terminations, truncations = self._end_live(cut, terminations, truncations)
            self._over, self._agents = True, []
        else:
            self._agents = [a for a in self.env.agents if a not in finished]
        return observations, rewards, terminations, truncations, infos


class IndividualDone(_RuleWrapper):
    """A team's done as per-agent flags: once ``mode`` fires over a team's members, its live
    ones finish (played on with :func:`filler_action` where the env holds them live)."""

    def __init__(
        self,
        env: ParallelEnv,
        mode: TerminationMode | str | float = "any",
        *,
        teams: TeamSpec = None,
        end_live_as: str = "truncated",
    ) -> None:
        super().__init__(env, mode, end_live_as)
        self.teams = Teams(env, teams)
        self._members: dict[Any, set[str]] = {}
        self._done_teams: set[Any] = set()
        self._benched: set[str] = set()

    @override
    def _begin(self) -> None:
        self._members, self._done_teams, self._benched = {}, set(), set()
        for agent in self._agents:
            self._members.setdefault(self.teams(agent), set()).add(agent)

    @override
    def step(self, actions: dict[str, Any]) -> StepReturn:
        benched = self._benched
        if benched:
            live = set(self.env.agents)
            fill = {a: filler_action(self.env.action_space(a)) for a in benched if a in live}
            actions = {**actions, **fill}
        result = self.env.step(actions)
        if benched:
            result = tuple({a: v for a, v in d.items() if a not in benched} for d in result)
        observations, rewards, terminations, truncations, infos = result
        for agent in self.env.agents:
            self._members.setdefault(self.teams(agent), set()).add(agent)
        finished = self._note_finished(terminations, truncations)
        for team, members in self._members.items():
            n_finished = len(members & finished)
            if team in self._done_teams or not n_finished:
                continue
            if n_finished >= finished_needed(self.rule, len(members)):
                self._done_teams.add(team)
                cut = [a for a in members if a in terminations and a not in finished]
                terminations, truncations = self._end_live(cut, terminations, truncations)
                benched.update(cut)
        self._agents = [a for a in self.env.agents if a not in finished]
        return observations, rewards, terminations, truncations, infos


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
