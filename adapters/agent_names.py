"""PettingZoo agent names for a core's agents, ``<behaviour>_<agent_id>``, and back.

Classes:
    AgentKey: the (behaviour, agent id) an agent name stands for.
    AgentNames: names agents ``<prefix>_<agent_id>`` (or by the user's callable), checks that
        no two agents share a name, and maps a name back to its :class:`AgentKey`.

Functions:
    behavior_prefix: a behaviour name sanitised into an agent-name prefix.

The default prefix is the behaviour's name without its Unity query string (``?team=0``),
lower-cased, with everything but letters and digits removed, as PettingZoo names agents
(``leadadversary_0``): ``"Runner?team=0"`` -> ``"runner"``, ``"BallBalance"`` ->
``"ballbalance"``. Two behaviours whose prefixes coincide are an error at construction
(their names could collide); pass ``agent_name=`` to name agents yourself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from zooport.errors import ArgumentTypeError, SpecError, UnknownAgentError

__all__ = ["AgentKey", "AgentNames", "behavior_prefix"]

_NOT_ALNUM = re.compile(r"[^0-9a-z]+")

#: A user's naming function: ``(behaviour name, agent id) -> agent name``.
AgentNameFn = Callable[[str, int], str]


def behavior_prefix(behavior: str) -> str:
    """The agent-name prefix of a behaviour: no query string, lower case, letters and digits.

    Example:
        >>> behavior_prefix("Runner?team=0"), behavior_prefix("BallBalance")
        ('runner', 'ballbalance')
        >>> behavior_prefix("?team=1")
        'agent'
    """
    base = behavior.split("?", 1)[0]
    return _NOT_ALNUM.sub("", base.lower()) or "agent"


class AgentKey(NamedTuple):
    """The agent an agent name stands for.

    Attributes:
        behavior: the behaviour name in the core.
        agent_id: the core's agent id.
    """

    behavior: str
    agent_id: int


class AgentNames:
    """Names a core's agents and maps names back; injective by construction or by check.

    Args:
        behaviors: the core's behaviour names.
        agent_name: optional ``(behaviour, agent_id) -> str``. Names it returns are checked as
            they are issued: two agents given one name is an error. Without it, agents are
            named ``f"{behavior_prefix(behaviour)}_{agent_id}"``.

    Raises:
        SpecError: two behaviours share a prefix (without ``agent_name``).

    Example:
        >>> names = AgentNames(["Runner?team=0", "Tagger?team=1"])
        >>> names.names("Tagger?team=1", [3, 4])
        ['tagger_3', 'tagger_4']
        >>> names.lookup("tagger_4")
        AgentKey(behavior='Tagger?team=1', agent_id=4)
        >>> AgentNames(["Runner?team=0", "Runner?team=1"])
        Traceback (most recent call last):
        ...
        zooport.errors.SpecError: behaviors 'Runner?team=0' and 'Runner?team=1' would both ...
    """

    def __init__(self, behaviors: Sequence[str], agent_name: AgentNameFn | None = None) -> None:
        if agent_name is not None and not callable(agent_name):
            raise ArgumentTypeError(
                f"Expect agent_name to be a callable (behavior, agent_id) -> str, "
                f"actually: {agent_name!r}"
            )
        self.behaviors = list(behaviors)
        self.agent_name = agent_name
        #: The default prefix of each behaviour (used when ``agent_name`` is None).
        self.prefixes: dict[str, str] = {}
        self._behavior_of_prefix: dict[str, str] = {}
        # Names issued by a user callable, for the reverse map and the collision check.
        self._issued: dict[str, AgentKey] = {}
        if agent_name is None:
            for behavior in self.behaviors:
                prefix = behavior_prefix(behavior)
                other = self._behavior_of_prefix.get(prefix)
                if other is not None:
                    raise SpecError(
                        f"behaviors {other!r} and {behavior!r} would both name their agents "
                        f"'{prefix}_<agent_id>'; pass agent_name=lambda behavior, agent_id: ... "
                        "to name them apart"
                    )
                self.prefixes[behavior] = prefix
                self._behavior_of_prefix[prefix] = behavior

    def name(self, behavior: str, agent_id: int) -> str:
        """The name of one agent."""
        return self.names(behavior, [agent_id])[0]

    def names(self, behavior: str, agent_ids: Iterable[int]) -> list[str]:
        """The names of ``agent_ids`` of ``behavior``, in order."""
        if self.agent_name is None:
            try:
                head = self.prefixes[behavior] + "_"
            except KeyError:
                raise UnknownAgentError(
                    f"no behavior {behavior!r}; behaviors: {self.behaviors}"
                ) from None
            return [f"{head}{int(i)}" for i in agent_ids]
        names = []
        for agent_id in agent_ids:
            key = AgentKey(behavior, int(agent_id))
            name = self.agent_name(behavior, key.agent_id)
            if not isinstance(name, str) or not name:
                raise SpecError(
                    f"agent_name({behavior!r}, {key.agent_id}) must return a non-empty str, "
                    f"returned {name!r}"
                )
            other = self._issued.setdefault(name, key)
            if other != key:
                raise SpecError(
                    f"agent_name gave two agents the name {name!r}: agent {other.agent_id} of "
                    f"{other.behavior!r} and agent {key.agent_id} of {behavior!r}"
                )
            names.append(name)
        return names

    def lookup(self, name: str) -> AgentKey:
        """The (behaviour, agent id) of an agent name.

        Raises:
            UnknownAgentError: the name is not one these names produce (for a callable: not
                one issued since the last :meth:`forget`).
        """
        if self.agent_name is not None:
            try:
                return self._issued[name]
            except (KeyError, TypeError):
                raise UnknownAgentError(
                    f"no agent is named {name!r} (names issued: {sorted(self._issued)[:20]})"
                ) from None
        prefix, _, number = name.rpartition("_") if isinstance(name, str) else ("", "", "")
        behavior = self._behavior_of_prefix.get(prefix)
        digits = number[1:] if number.startswith("-") else number
        if behavior is None or not digits.isdigit() or str(int(number)) != number:
            raise UnknownAgentError(
                f"{name!r} is not an agent name '<prefix>_<agent_id>' with a prefix in "
                f"{sorted(self._behavior_of_prefix)}"
            )
        return AgentKey(behavior, int(number))

    def forget(self) -> None:
        """Drops the names a callable issued (adapters call it at reset: names are per episode)."""
        self._issued.clear()
