"""Which agents a wrapper acts on (:class:`AgentSelector`) and which team each is in
(:class:`Teams`): by zooport behaviour name, agent-name prefix, a collection or a predicate."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Hashable, Mapping
from typing import Any

from zooport.adapters.agent_names import behavior_prefix
from zooport.errors import ArgumentTypeError, UnknownAgentError

__all__ = ["AgentSelector", "AgentSpec", "Teams", "behavior_of"]

#: An agent selection: None (every agent), a behaviour/team name, names, or a predicate.
AgentSpec = str | Collection[str] | Callable[[str], bool] | None
#: Teams: None (behaviours), a mapping agent -> team, or a callable agent -> team.
TeamSpec = Mapping[str, Hashable] | Callable[[str], Hashable] | None


def _known_behavior(env: Any, agent: str) -> str | None:
    """``agent``'s behaviour as its zooport adapter knows it; None without one that does."""
    key_of = getattr(getattr(env, "unwrapped", None), "agent_key", None)
    if callable(key_of):
        try:
            return key_of(agent).behavior
        except KeyError:  # UnknownAgentError: a name the adapter does not know
            pass
    return None


def behavior_of(env: Any, agent: str) -> str:
    """The behaviour of ``agent``: its zooport behaviour name, else its name before the last ``_``.

    Example:
        >>> behavior_of(None, "adversary_0"), behavior_of(None, "solo")
        ('adversary', 'solo')
    """
    behavior = _known_behavior(env, agent)
    if behavior is not None:
        return behavior
    head, sep, _ = agent.rpartition("_")
    return head if sep and head else agent


def _selected_by_name(env: Any, spec: str, agent: str) -> bool:
    known = _known_behavior(env, agent)
    behavior = behavior_of(env, agent) if known is None else known
    if behavior == spec or agent.rpartition("_")[0] == spec:
        return True
    if known is not None and "?" in spec:  # "Soccer?team=0" is one team, not "Soccer?team=1"
        return False
    return behavior_prefix(behavior) == behavior_prefix(spec)


class AgentSelector:
    """Decides, once per agent, whether a wrapper acts on it.

    ``spec``: None (every agent); a str: a behaviour with its query string
    (``"Soccer?team=1"``: that team only), an agent-name prefix (``"soccer_1"``), or a
    behaviour name compared sanitised (``"tagger"``, ``"Soccer"``: every team of it); a
    collection of agent names; or a predicate ``agent -> bool``. ``what`` names the argument
    in errors.

    Example:
        >>> select = AgentSelector(None, "hunter")
        >>> select("hunter_0"), select("prey_1"), AgentSelector(None, ["prey_1"])("prey_1")
        (True, False, True)
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.envs.builtin.soccer import Soccer
        >>> env = PettingZooParallelEnv(Soccer(seed=0))
        >>> [a for a in env.possible_agents if AgentSelector(env, "Soccer?team=1")(a)]
        ['soccer_1_2', 'soccer_1_3']
    """

    def __init__(self, env: Any, spec: AgentSpec, what: str = "agents") -> None:
        self.spec = spec
        self._cache: dict[str, bool] = {}
        self._test: Callable[[str], bool] | None
        if spec is None:
            self._test = None
        elif isinstance(spec, str):  # a partial, not a lambda, so wrappers pickle
            self._test = functools.partial(_selected_by_name, env, spec)
        elif callable(spec):
            self._test = spec
        elif isinstance(spec, Collection) and all(isinstance(a, str) for a in spec):
            self._test = frozenset(spec).__contains__
        else:
            raise ArgumentTypeError(
                f"Expect {what} to be None, a behaviour name, a collection of agent names or "
                f"a callable agent -> bool, actually: {spec!r}"
            )

    def __call__(self, agent: str) -> bool:
        if agent not in self._cache:
            self._cache[agent] = self._test is None or bool(self._test(agent))
        return self._cache[agent]


class Teams:
    """Maps agents to teams: by behaviour (default, see :func:`behavior_of`), a mapping or a
    callable.

    Example:
        >>> Teams(None).group(["hunter_0", "prey_0", "hunter_1"])
        {'hunter': ['hunter_0', 'hunter_1'], 'prey': ['prey_0']}
    """

    def __init__(self, env: Any, teams: TeamSpec = None) -> None:
        if teams is not None and not isinstance(teams, Mapping) and not callable(teams):
            raise ArgumentTypeError(
                f"Expect teams to be None, a mapping agent -> team or a callable, actually: "
                f"{teams!r}"
            )
        self.env = env
        self.teams = dict(teams) if isinstance(teams, Mapping) else teams
        self._cache: dict[str, Hashable] = {}

    def __call__(self, agent: str) -> Hashable:
        if agent not in self._cache:
            team: Hashable
            if self.teams is None:
                team = behavior_of(self.env, agent)
            elif isinstance(self.teams, dict):
                if agent not in self.teams:
                    raise UnknownAgentError(
                        f"agent {agent!r} is in no team; teams given for {sorted(self.teams)}"
                    )
                team = self.teams[agent]
            else:
                team = self.teams(agent)
            self._cache[agent] = team
        return self._cache[agent]

    def group(self, agents: Collection[str]) -> dict[Hashable, list[str]]:
        """``{team: [agents, in the given order]}``, teams in order of first appearance."""
        groups: dict[Hashable, list[str]] = {}
        for agent in agents:
            groups.setdefault(self(agent), []).append(agent)
        return groups
