"""Which agents a wrapper acts on (:class:`AgentSelector`) and which team each one is in
(:class:`Teams`): by zooport behaviour name, agent-name prefix, a collection or a predicate.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Hashable, Mapping
from typing import Any

from zooport.adapters.agent_names import behavior_prefix
from zooport.errors import ArgumentTypeError, UnknownAgentError, look_up

__all__ = ["AgentSelector", "AgentSpec", "Teams", "behavior_of"]

#: An agent selection: None (every agent), a behaviour/team name, names, or a predicate.
AgentSpec = str | Collection[str] | Callable[[str], bool] | None


def behavior_of(env: Any, agent: str) -> str:
    """The behaviour of ``agent``: its zooport behaviour name, else its name before the last ``_``.

    Example:
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.envs.builtin.tag import Tag
        >>> behavior_of(PettingZooParallelEnv(Tag(seed=0)), "tagger_3")
        'Tagger?team=1'
        >>> behavior_of(None, "adversary_0"), behavior_of(None, "solo")
        ('adversary', 'solo')
    """
    behavior = _known_behavior(env, agent)
    if behavior is not None:
        return behavior
    head, sep, _ = agent.rpartition("_")
    return head if sep and head else agent


def _known_behavior(env: Any, agent: str) -> str | None:
    """``agent``'s behaviour as its zooport adapter knows it; None without one that does."""
    key_of = getattr(getattr(env, "unwrapped", None), "agent_key", None)
    if callable(key_of):
        try:
            return key_of(agent).behavior
        except KeyError:  # UnknownAgentError: a name the adapter does not know
            pass
    return None


class AgentSelector:
    """Decides, once per agent, whether a wrapper acts on it.

    Args:
        env: the env the agents belong to (for zooport behaviour names).
        spec: None (every agent); a str: a behaviour with its query string
            (``"Soccer?team=1"``: that behaviour only), an agent-name prefix
            (``"soccer_1"``), or a behaviour name without query string, compared
            sanitised (``"tagger"``, ``"Soccer"``: every team of it); a collection of agent
            names; or a predicate ``agent -> bool``.
        what: the argument's name, for error messages.

    Example:
        >>> select = AgentSelector(None, "hunter")
        >>> select("hunter_0"), select("prey_1")
        (True, False)
        >>> AgentSelector(None, ["prey_1"])("prey_1")
        True
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.envs.builtin.soccer import Soccer
        >>> env = PettingZooParallelEnv(Soccer(seed=0))
        >>> [a for a in env.possible_agents if AgentSelector(env, "Soccer?team=1")(a)]
        ['soccer_1_2', 'soccer_1_3']
        >>> [a for a in env.possible_agents if AgentSelector(env, "soccer")(a)]
        ['soccer_0_0', 'soccer_0_1', 'soccer_1_2', 'soccer_1_3']
    """

    def __init__(self, env: Any, spec: AgentSpec, what: str = "agents") -> None:
        self.env = env
        self.spec = spec
        self._cache: dict[str, bool] = {}
        if spec is None:
            self._test: Callable[[str], bool] = _always
        elif isinstance(spec, str):
            self._test = functools.partial(_selected_by_name, env, spec)
        elif callable(spec):
            self._test = spec
        elif isinstance(spec, Collection) and all(isinstance(a, str) for a in spec):
            names = frozenset(spec)
            self._test = names.__contains__
        else:
            raise ArgumentTypeError(
                f"Expect {what} to be None, a behaviour name, a collection of agent names or "
                f"a callable agent -> bool, actually: {spec!r}"
            )

    def __call__(self, agent: str) -> bool:
        try:
            return self._cache[agent]
        except KeyError:
            chosen = self._cache[agent] = bool(self._test(agent))
            return chosen


def _always(agent: str) -> bool:
    return True


# The agent tests and team maps below are classes, not closures, so that wrappers holding
# them pickle with the standard library (a local lambda does not).


class _BehaviorOf:
    """``agent -> its behaviour`` (see :func:`behavior_of`): the default teams."""

    def __init__(self, env: Any) -> None:
        self.env = env

    def __call__(self, agent: str) -> Hashable:
        return behavior_of(self.env, agent)


class _TeamTable:
    """``agent -> team`` from a mapping; an agent in no team is an UnknownAgentError (a
    KeyError) naming them."""

    def __init__(self, table: Mapping[str, Hashable]) -> None:
        self.table = dict(table)

    def __call__(self, agent: str) -> Hashable:
        return look_up(self.table, agent, UnknownAgentError, lambda: (
            f"agent {agent!r} is in no team; teams given for {sorted(self.table)}"
        ))  # fmt: skip


def _selected_by_name(env: Any, spec: str, agent: str) -> bool:
    """Whether ``spec`` (see :class:`AgentSelector`) names ``agent``'s behaviour or prefix."""
    known = _known_behavior(env, agent)
    behavior = behavior_of(env, agent) if known is None else known
    if behavior == spec or agent.rpartition("_")[0] == spec:
        return True
    if known is not None and "?" in spec:
        # With its query string a behaviour is one team: "Soccer?team=0" is not "Soccer?team=1".
        return False
    return behavior_prefix(behavior) == behavior_prefix(spec)


class Teams:
    """Maps agents to teams: by behaviour (default), a mapping or a callable.

    Args:
        env: the env the agents belong to.
        teams: None (each behaviour is a team, see :func:`behavior_of`), a mapping
            ``agent -> team`` or a callable ``agent -> team``.

    Example:
        >>> teams = Teams(None)
        >>> teams.group(["hunter_0", "prey_0", "hunter_1"])
        {'hunter': ['hunter_0', 'hunter_1'], 'prey': ['prey_0']}
    """

    def __init__(
        self, env: Any, teams: Mapping[str, Hashable] | Callable[[str], Hashable] | None = None
    ) -> None:
        if teams is None:
            self._team_of: Callable[[str], Hashable] = _BehaviorOf(env)
        elif isinstance(teams, Mapping):
            self._team_of = _TeamTable(teams)
        elif callable(teams):
            self._team_of = teams
        else:
            raise ArgumentTypeError(
                f"Expect teams to be None, a mapping agent -> team or a callable, actually: "
                f"{teams!r}"
            )
        self._cache: dict[str, Hashable] = {}

    def __call__(self, agent: str) -> Hashable:
        try:
            return self._cache[agent]
        except KeyError:
            team = self._cache[agent] = self._team_of(agent)
            return team

    def group(self, agents: Collection[str]) -> dict[Hashable, list[str]]:
        """``{team: [agents, in the given order]}``, teams in order of first appearance."""
        groups: dict[Hashable, list[str]] = {}
        for agent in agents:
            groups.setdefault(self(agent), []).append(agent)
        return groups
