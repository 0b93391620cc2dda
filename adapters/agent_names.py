"""PettingZoo agent names for a core's agents, ``<prefix>_<agent_id>``, and back.

Classes:
    AgentKey: the (behaviour, agent id) an agent name stands for.
    AgentNames: names agents by a scheme (or by the user's callable), checks that no two
        agents share a name, and maps a name back to its :class:`AgentKey`.

Functions:
    behavior_prefix: a behaviour name sanitised into an agent-name prefix.
    query_tag: a behaviour's Unity query string (``?team=1``) sanitised the same way.
    default_prefixes: the injective default prefix of each of a set of behaviours.

Naming schemes (the ``agent_name=`` option of every multi-agent adapter):

- ``"pettingzoo"`` (the default, also ``None``): ``<prefix>_<agent_id>``, as PettingZoo
  names agents (``leadadversary_0``), so trainers that group agents by
  ``name.rpartition("_")[0]`` see one group per behaviour. The prefix is the behaviour's
  name without its Unity query string, lower-cased, with everything but letters and digits
  removed (``"Runner?team=0"`` -> ``"runner"``; an empty result is ``"agent"``). Where
  several behaviours share that prefix (one behaviour in two teams, ``SoccerTwos?team=0``
  and ``SoccerTwos?team=1``), each of them gets its query string, sanitised, joined with
  ``_``: ``soccertwos_team0_7``, ``soccertwos_team1_9``. Where even that is shared (names
  that differ only in characters sanitising drops, such as ``Foo-Bar`` and ``FooBar``),
  each also gets its rank in the sorted behaviour names: ``foobar__0_4``, ``foobar__1_5``
  (the empty query string between the two ``_``). The names depend only on the set of
  behaviour names, not their order, and are injective for every such set: the three forms
  have 0, 1 and 2 ``_`` in the prefix, and within a form the parts differ.
- ``"mlagents"``: ML-Agents' own PettingZoo wrapper's names, ``<behaviour>?agent_id=<id>``
  (``"SoccerTwos?team=1?agent_id=9"``), for code that parses them.
- a callable ``(behaviour, agent_id) -> str``: names it returns are checked as they are
  issued (two agents given one name is an error) and looked up in what was issued.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Literal, NamedTuple

from zooport.errors import ArgumentError, ArgumentTypeError, SpecError, UnknownAgentError, look_up

__all__ = [
    "AgentKey",
    "AgentNames",
    "AgentNameFn",
    "AgentNaming",
    "NAMING_SCHEMES",
    "behavior_prefix",
    "default_prefixes",
    "query_tag",
]

_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
_MLAGENTS_ID = "?agent_id="

#: A user's naming function: ``(behaviour name, agent id) -> agent name``.
AgentNameFn = Callable[[str, int], str]
#: What ``agent_name=`` takes: a scheme name, a callable, or None (the default scheme).
AgentNaming = Literal["pettingzoo", "mlagents"] | AgentNameFn | None
#: The scheme names ``agent_name=`` accepts.
NAMING_SCHEMES = ("pettingzoo", "mlagents")


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


def query_tag(behavior: str) -> str:
    """A behaviour's query string sanitised like its prefix; ``""`` when it has none.

    Example:
        >>> query_tag("SoccerTwos?team=1"), query_tag("Walker"), query_tag("A?team=0&x=Y")
        ('team1', '', 'team0xy')
    """
    _, _, query = behavior.partition("?")
    return _NOT_ALNUM.sub("", query.lower())


def default_prefixes(behaviors: Iterable[str]) -> dict[str, str]:
    """The default agent-name prefix of each behaviour; injective (module docstring).

    Example:
        >>> list(default_prefixes(["Ball", "SoccerTwos?team=1", "SoccerTwos?team=0"]).values())
        ['ball', 'soccertwos_team1', 'soccertwos_team0']
        >>> list(default_prefixes(["FooBar?team=0", "Foo-Bar?team=0", "FooBar?team=1"]).values())
        ['foobar_team0_1', 'foobar_team0_0', 'foobar_team1']
    """
    behaviors = list(dict.fromkeys(behaviors))
    by_base: dict[str, list[str]] = {}
    for behavior in behaviors:
        by_base.setdefault(behavior_prefix(behavior), []).append(behavior)
    prefixes: dict[str, str] = {}
    for base, members in by_base.items():
        if len(members) == 1:
            prefixes[members[0]] = base
            continue
        by_tag: dict[str, list[str]] = {}
        for behavior in members:
            by_tag.setdefault(query_tag(behavior), []).append(behavior)
        for tag, same in by_tag.items():
            if len(same) == 1:
                prefixes[same[0]] = f"{base}_{tag}" if tag else base
            else:
                # Sorted, so the rank does not depend on the order the core lists them in.
                for rank, behavior in enumerate(sorted(same)):
                    prefixes[behavior] = f"{base}_{tag}_{rank}"
    return {behavior: prefixes[behavior] for behavior in behaviors}


class AgentKey(NamedTuple):
    """The agent an agent name stands for.

    Attributes:
        behavior: the behaviour name in the core.
        agent_id: the core's agent id.
    """

    behavior: str
    agent_id: int


def _canonical_int(text: str) -> int | None:
    """``int(text)`` when ``text`` is exactly how ``str`` writes that int, else None."""
    digits = text[1:] if text.startswith("-") else text
    if not (digits.isascii() and digits.isdigit()) or str(int(text)) != text:
        return None
    return int(text)


class AgentNames:
    """Names a core's agents and maps names back; injective by construction or by check.

    Args:
        behaviors: the core's behaviour names.
        agent_name: the naming scheme (module docstring): None or ``"pettingzoo"``
            (``<prefix>_<agent_id>``), ``"mlagents"`` (``<behaviour>?agent_id=<id>``), or a
            callable ``(behaviour, agent_id) -> str``.

    Raises:
        TypeError: ``agent_name`` is neither a scheme name nor a callable.
        ValueError: ``agent_name`` is a str that names no scheme.

    Example:
        >>> names = AgentNames(["Runner?team=0", "Tagger?team=1"])
        >>> names.names("Tagger?team=1", [3, 4])
        ['tagger_3', 'tagger_4']
        >>> names.lookup("tagger_4")
        AgentKey(behavior='Tagger?team=1', agent_id=4)
        >>> teams = AgentNames(["Soccer?team=0", "Soccer?team=1"])
        >>> teams.name("Soccer?team=0", 0), teams.name("Soccer?team=1", 2)
        ('soccer_team0_0', 'soccer_team1_2')
        >>> mlagents = AgentNames(["Soccer?team=0", "Soccer?team=1"], "mlagents")
        >>> mlagents.name("Soccer?team=1", 2)
        'Soccer?team=1?agent_id=2'
        >>> mlagents.lookup("Soccer?team=1?agent_id=2")
        AgentKey(behavior='Soccer?team=1', agent_id=2)
    """

    def __init__(self, behaviors: Sequence[str], agent_name: AgentNaming = None) -> None:
        if agent_name is None:
            agent_name = "pettingzoo"
        if isinstance(agent_name, str):
            if agent_name not in NAMING_SCHEMES:
                raise ArgumentError(
                    f"Expect agent_name to be one of {list(NAMING_SCHEMES)} or a callable "
                    f"(behavior, agent_id) -> str, actually: {agent_name!r}"
                )
        elif not callable(agent_name):
            raise ArgumentTypeError(
                f"Expect agent_name to be one of {list(NAMING_SCHEMES)} or a callable "
                f"(behavior, agent_id) -> str, actually: {agent_name!r}"
            )
        self.behaviors = list(behaviors)
        #: The scheme: ``"pettingzoo"``, ``"mlagents"`` or ``"callable"``.
        self.scheme = agent_name if isinstance(agent_name, str) else "callable"
        #: The user's callable, or None for a named scheme.
        self.agent_name: AgentNameFn | None = None if isinstance(agent_name, str) else agent_name
        #: The prefix of each behaviour (the ``"pettingzoo"`` scheme; empty otherwise).
        self.prefixes: dict[str, str] = (
            default_prefixes(self.behaviors) if self.scheme == "pettingzoo" else {}
        )
        self._behavior_of_prefix = {prefix: b for b, prefix in self.prefixes.items()}
        self._known = frozenset(self.behaviors)
        # Names issued by a user callable, for the reverse map and the collision check.
        self._issued: dict[str, AgentKey] = {}

    def name(self, behavior: str, agent_id: int) -> str:
        """The name of one agent."""
        return self.names(behavior, [agent_id])[0]

    def names(self, behavior: str, agent_ids: Iterable[int]) -> list[str]:
        """The names of ``agent_ids`` of ``behavior``, in order."""
        if self.agent_name is None:
            if self.scheme == "pettingzoo":
                head = self.prefixes.get(behavior)
                head = None if head is None else head + "_"
            else:
                head = behavior + _MLAGENTS_ID if behavior in self._known else None
            if head is None:
                raise UnknownAgentError(f"no behavior {behavior!r}; behaviors: {self.behaviors}")
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
            return look_up(self._issued, name, UnknownAgentError, lambda: (
                f"no agent is named {name!r} (names issued: {sorted(self._issued)[:20]})"
            ))  # fmt: skip
        if not isinstance(name, str):
            raise UnknownAgentError(f"{name!r} is not an agent name: agent names are str")
        if self.scheme == "pettingzoo":
            prefix, _, number = name.rpartition("_")
            behavior = self._behavior_of_prefix.get(prefix)
            agent_id = _canonical_int(number)
            if behavior is None or agent_id is None:
                raise UnknownAgentError(
                    f"{name!r} is not an agent name '<prefix>_<agent_id>' with a prefix in "
                    f"{sorted(self._behavior_of_prefix)}"
                )
            return AgentKey(behavior, agent_id)
        behavior, _, number = name.rpartition(_MLAGENTS_ID)
        agent_id = _canonical_int(number)
        if behavior not in self._known or agent_id is None:
            raise UnknownAgentError(
                f"{name!r} is not an agent name '<behavior>?agent_id=<agent_id>' with a "
                f"behavior in {self.behaviors}"
            )
        return AgentKey(behavior, agent_id)

    def forget(self) -> None:
        """Drops the names a callable issued (adapters call it at reset: names are per episode)."""
        self._issued.clear()
