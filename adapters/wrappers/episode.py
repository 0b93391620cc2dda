"""When a multi-agent episode ends, for any PettingZoo Parallel env: zooport's
:class:`~zooport.adapters.termination.TerminationRule` (an agent counts as finished once it was
terminated or truncated in the episode), for the whole episode (:class:`TerminationPolicy`) or
per team (:class:`IndividualDone`); the agents still live then end as ``end_live_as`` says.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from typing_extensions import override

from zooport.adapters.termination import TerminationMode, TerminationRule
from zooport.adapters.wrappers.agents import Teams
from zooport.adapters.wrappers.base import ActionType, ObsType, ParallelWrapper, check_once
from zooport.errors import ArgumentError, ArgumentTypeError, EnvNotResetError, a_type

__all__ = ["RuleWrapper", "TerminationPolicy", "IndividualDone", "filler_action"]

_END_AS = ("truncated", "terminated")


class RuleWrapper(ParallelWrapper[str, ObsType, ActionType]):
    """What both rule wrappers share: the rule, ``end_live_as``, and the agents left live.

    Args:
        env: any PettingZoo Parallel env.
        mode: the termination rule (a :class:`TerminationMode` or a fraction in (0, 1]).
        end_live_as: the flag agents still live when the rule fires get: ``"truncated"``
            (their own episode did not reach a terminal state) or ``"terminated"``.

    Raises:
        ArgumentError: an unknown mode or ``end_live_as``.
    """

    def __init__(
        self, env: ParallelEnv, mode: TerminationMode | str | float, end_live_as: str
    ) -> None:
        super().__init__(env)
        check_once(self, env)
        self.rule = TerminationRule(mode)
        if end_live_as not in _END_AS:
            raise ArgumentError(
                f"Expect end_live_as to be one of {list(_END_AS)}, actually: {end_live_as!r}"
            )
        self.end_live_as = end_live_as
        self._agents: list[str] = []
        self._finished: set[str] = set()

    @property
    def agents(self) -> list[str]:
        """The agents still live by the rule."""
        return self._agents

    @override
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        observations, infos = self.env.reset(seed=seed, options=options)
        self._begin()
        return observations, infos

    def _begin(self) -> None:
        """At reset: every agent of the wrapped env is live, none has finished (a subclass
        extends it with its own state)."""
        self._agents = list(self.env.agents)
        self._finished = set()

    def _note_finished(self, terminations: dict[str, bool], truncations: dict[str, bool]) -> None:
        finished = self._finished
        finished.update(a for a, t in terminations.items() if t)
        finished.update(a for a, t in truncations.items() if t)

    def _end_live(
        self, cut: list[str], terminations: dict[str, bool], truncations: dict[str, bool]
    ) -> tuple[dict[str, bool], dict[str, bool]]:
        """The step's flags with ``cut`` (live agents the rule ends) flagged ``end_live_as``.

        The wrapped env's dicts are copied, not changed; ``cut`` counts as finished.
        """
        if not cut:
            return terminations, truncations
        self._finished.update(cut)
        if self.end_live_as == "truncated":
            return terminations, {**truncations, **dict.fromkeys(cut, True)}
        return {**terminations, **dict.fromkeys(cut, True)}, truncations


class TerminationPolicy(RuleWrapper):
    """Ends the episode by a termination rule, keeping terminated and truncated apart.

    Args:
        env: any PettingZoo Parallel env.
        mode: ``"any"``, ``"majority"``, ``"all"`` (a
            :class:`~zooport.adapters.termination.TerminationMode`) or a fraction in (0, 1].
        end_live_as: the flag agents still live when the rule fires get: ``"truncated"``
            (default: their own episode did not reach a terminal state) or ``"terminated"``
            (the team's failure is theirs too).

    After the rule fires ``agents`` is empty and ``step`` raises
    :class:`~zooport.EnvNotResetError` until ``reset``. Applied once.

    Raises:
        ArgumentError: an unknown mode or ``end_live_as``.

    Example:
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.envs.builtin.tag import Tag
        >>> env = TerminationPolicy(PettingZooParallelEnv(Tag(seed=0, tag_radius=0.85)), "any")
        >>> _ = env.reset(seed=0)
        >>> while env.agents:
        ...     _, _, terminations, truncations, _ = env.step(dict.fromkeys(env.agents, 0))
        >>> sorted(a for a, t in terminations.items() if t)
        ['runner_0']
        >>> sorted(a for a, t in truncations.items() if t)
        ['runner_1', 'runner_2', 'tagger_3', 'tagger_4']
    """

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
        super()._begin()
        self._took_part = set(self._agents)
        self._over = False

    @override
    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if self._over:
            raise EnvNotResetError(
                f"{type(self).__name__}: the episode is over (rule {self.rule!r}); call reset()"
            )
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        inner_agents = self.env.agents
        self._took_part.update(inner_agents)
        self._took_part.update(terminations)
        self._note_finished(terminations, truncations)
        finished = self._finished
        if self.rule.episode_over(len(finished), len(self._took_part)):
            cut = [a for a in terminations if a not in finished]
            terminations, truncations = self._end_live(cut, terminations, truncations)
            self._over = True
            self._agents = []
        else:
            self._agents = [a for a in inner_agents if a not in finished]
        return observations, rewards, terminations, truncations, infos


class IndividualDone(RuleWrapper):
    """A team's done as per-agent flags: once its rule fires, all its live members finish.

    A team is done when its termination rule fires over its members (every member that took
    part counts; see :mod:`zooport.adapters.termination`). In that step its members still
    live are truncated (or terminated, by option) and leave ``agents``; agents that finished
    themselves keep their flags. The wrapped env may still hold them live: the wrapper keeps
    playing them with a filler action (0 for ``Discrete``, the point nearest zero in a
    ``Box``, per part for ``MultiDiscrete``/``Dict``/``Tuple``) and drops what they report.

    Args:
        env: any PettingZoo Parallel env.
        mode: the team rule: ``"any"`` (default), ``"majority"``, ``"all"`` or a fraction.
        teams: agent -> team; default: behaviours.
        end_live_as: ``"truncated"`` (default) or ``"terminated"``.

    Example:
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.envs.builtin.tag import Tag
        >>> env = IndividualDone(PettingZooParallelEnv(Tag(seed=0, tag_radius=0.85)), "any")
        >>> _ = env.reset(seed=0)
        >>> while len(env.agents) == 5:
        ...     _, _, terms, truncs, _ = env.step(dict.fromkeys(env.agents, 0))
        >>> env.agents, sorted(a for a in truncs if truncs[a])
        (['tagger_3', 'tagger_4'], ['runner_1', 'runner_2'])
    """

    def __init__(
        self,
        env: ParallelEnv,
        mode: TerminationMode | str | float = "any",
        *,
        teams: Mapping[str, Hashable] | Callable[[str], Hashable] | None = None,
        end_live_as: str = "truncated",
    ) -> None:
        super().__init__(env, mode, end_live_as)
        self.teams = Teams(env, teams)
        self._fillers: dict[int, Any] = {}
        self._members: dict[Hashable, set[str]] = {}
        self._done_teams: set[Hashable] = set()
        self._benched: set[str] = set()

    @override
    def _begin(self) -> None:
        super()._begin()
        self._members = {}
        for agent in self._agents:
            self._members.setdefault(self.teams(agent), set()).add(agent)
        self._done_teams = set()
        self._benched = set()

    @override
    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        benched = self._benched
        if benched:
            live = set(self.env.agents)
            actions = {**actions, **{a: self._filler(a) for a in benched if a in live}}
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        if benched:
            observations, rewards, terminations, truncations, infos = (
                {a: v for a, v in d.items() if a not in benched}
                for d in (observations, rewards, terminations, truncations, infos)
            )
        for agent in self.env.agents:
            self._members.setdefault(self.teams(agent), set()).add(agent)
        self._note_finished(terminations, truncations)
        finished = self._finished
        for team, members in self._members.items():
            if team in self._done_teams:
                continue
            n_finished = len(members & finished)
            if n_finished and self.rule.episode_over(n_finished, len(members)):
                self._done_teams.add(team)
                cut = [a for a in members if a in terminations and a not in finished]
                terminations, truncations = self._end_live(cut, terminations, truncations)
                benched.update(cut)
        self._agents = [a for a in self.env.agents if a not in finished]
        return observations, rewards, terminations, truncations, infos

    def _filler(self, agent: str) -> Any:
        space = self.env.action_space(agent)
        key = id(space)
        try:
            return self._fillers[key][1]
        except KeyError:
            filler = filler_action(space)
            self._fillers[key] = (space, filler)
            return filler


def filler_action(space: spaces.Space) -> Any:
    """A fixed valid action: 0 / the Box point nearest zero, recursively for composites.

    Example:
        >>> filler_action(spaces.Box(1.0, 2.0, (2,))).tolist(), filler_action(spaces.Discrete(3))
        ([1.0, 1.0], 0)
    """
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
