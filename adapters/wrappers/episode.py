"""When a multi-agent episode ends, for the whole episode (:class:`TerminationPolicy`) or per
team (:class:`IndividualDone`): a ``finished_needed`` rule over the agents that finished."""

from __future__ import annotations

from collections.abc import Iterable
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
    expect,
)
from zooport.errors import ArgumentTypeError, EnvNotResetError, a_type


class _RuleWrapper(ParallelWrapper[str, Any, Any]):
    """The rule over each team's members (one team for the episode: ``teams`` None); a team
    whose rule fires has its live members flagged ``end_live_as``."""

    _whole_episode = False

    def __init__(
        self,
        env: ParallelEnv,
        mode: TerminationMode | str | float,
        end_live_as: str,
        teams: Teams | None = None,
    ) -> None:
        super().__init__(env)
        check_once(self, env)
        finished_needed(mode, 1)  # a bad mode raises here
        self.rule = mode
        wanted = "one of ['truncated', 'terminated']"
        expect(end_live_as in ("truncated", "terminated"), "end_live_as", wanted, end_live_as)
        self.end_live_as = end_live_as
        self.teams = teams
        self._finished: set[str] = set()
        self._members: dict[Any, set[str]] = {}  # team (None for the episode) -> its agents
        self._done_teams: set[Any] = set()
        self._benched: set[str] = set()  # finished here, live in the env
        self._over = self._whole_episode

    @property
    def agents(self) -> list[str]:
        return [] if self._over else [a for a in self.env.agents if a not in self._finished]

    def _join(self, agents: Iterable[str]) -> None:
        for agent in agents:
            team = None if self.teams is None else self.teams(agent)
            self._members.setdefault(team, set()).add(agent)

    @override
    def reset(self, seed: int | None = None, options: dict | None = None) -> ResetReturn:
        observations, infos = self.env.reset(seed=seed, options=options)
        self._finished, self._over = set(), False
        self._members, self._done_teams, self._benched = {}, set(), set()
        self._join(self.env.agents)
        return observations, infos

    @override
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
        if self._whole_episode:  # an agent that joined and finished in this step took part
            self._join(terminations)
        finished = self._finished
        finished.update(a for a in terminations if terminations[a])
        finished.update(a for a in truncations if truncations[a])
        for team, members in self._members.items():
            n_finished = len(members & finished)
            if team in self._done_teams or not n_finished:
                continue
            if n_finished >= finished_needed(self.rule, len(members)):
                self._done_teams.add(team)
                cut = [a for a in members if a in terminations and a not in finished]
                finished.update(cut)
                flags = dict.fromkeys(cut, True)
                if self.end_live_as == "truncated":
                    truncations = {**truncations, **flags}
                else:
                    terminations = {**terminations, **flags}
                benched.update(cut)
                self._over = self._whole_episode
        return observations, rewards, terminations, truncations, infos


class TerminationPolicy(_RuleWrapper):
    """Ends the episode when ``mode`` (``"any"``, ``"majority"``, ``"all"`` or a fraction) of
    the agents that took part finished; the live ones are flagged ``end_live_as``."""

    _whole_episode = True

    def __init__(
        self,
        env: ParallelEnv,
        mode: TerminationMode | str | float = "all",
        *,
        end_live_as: str = "truncated",
    ) -> None:
        super().__init__(env, mode, end_live_as)


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
        super().__init__(env, mode, end_live_as, Teams(env, teams))


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
