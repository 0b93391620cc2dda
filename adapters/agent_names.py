"""Agent names and back: ``<word>_<agent_id>`` by default (behaviours that share a word add their
rank in natural order: ``soccer_0_3``), ML-Agents' ``<behaviour>?agent_id=<id>``, or a callable."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Literal, NamedTuple

from zooport.errors import ArgumentError, ArgumentTypeError, SpecError, UnknownAgentError, look_up

__all__ = [
    "AgentKey", "AgentNames", "AgentNameFn", "AgentNaming", "NAMING_SCHEMES", "behavior_prefix",
    "default_prefixes",
]  # fmt: skip

_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
# An int as str() writes it: "07", "+7" and "-0" are no agent ids in a name.
_AGENT_ID = re.compile(r"0|-?[1-9][0-9]*")

#: A user's naming function: ``(behaviour name, agent id) -> agent name``.
AgentNameFn = Callable[[str, int], str]
#: What ``agent_name=`` takes: a scheme name, a callable, or None (the default scheme).
AgentNaming = Literal["pettingzoo", "mlagents"] | AgentNameFn | None
# Each scheme's ``<head><separator><agent_id>`` (head: the prefix or behaviour), described.
_SCHEMES = {
    "pettingzoo": ("_", "'<prefix>_<agent_id>' with a prefix in {}"),
    "mlagents": ("?agent_id=", "'<behavior>?agent_id=<agent_id>' with a behavior in {}"),
}
#: The scheme names ``agent_name=`` accepts.
NAMING_SCHEMES = tuple(_SCHEMES)


def behavior_prefix(behavior: str) -> str:
    """A behaviour's name without query string, lower case, letters and digits only."""
    return _NOT_ALNUM.sub("", behavior.split("?", 1)[0].lower()) or "agent"


def _natural(text: str) -> list[tuple[int, int | str]]:
    # "team=2" before "team=10": numbers compare as numbers.
    return [(1, int(p)) if p.isdecimal() else (0, p) for p in re.split(r"(\d+)", text)]


def default_prefixes(behaviors: Iterable[str]) -> dict[str, str]:
    """The default agent-name prefix of each behaviour (module docstring)."""
    behaviors = list(dict.fromkeys(behaviors))
    by_word: dict[str, list[str]] = {}
    for behavior in behaviors:
        # Letters only: PettingZoo's api_test wants names that start "<letters>_<digits>".
        word = "".join(c for c in behavior_prefix(behavior) if not c.isdigit()) or "agent"
        by_word.setdefault(word, []).append(behavior)
    prefixes: dict[str, str] = {}
    for word, members in by_word.items():
        for rank, behavior in enumerate(sorted(members, key=_natural)):
            prefixes[behavior] = word if len(members) == 1 else f"{word}_{rank}"
    return {behavior: prefixes[behavior] for behavior in behaviors}


class AgentKey(NamedTuple):
    """The agent an agent name stands for: its behaviour in the core and its agent id."""

    behavior: str
    agent_id: int


class AgentNames:
    """Names a core's agents by the scheme ``agent_name`` and maps names back (injective)."""

    def __init__(self, behaviors: Sequence[str], agent_name: AgentNaming = None) -> None:
        if agent_name is None:
            agent_name = "pettingzoo"
        named = isinstance(agent_name, str)
        if not (agent_name in NAMING_SCHEMES if named else callable(agent_name)):
            error = ArgumentError if named else ArgumentTypeError
            raise error(
                f"Expect agent_name to be one of {list(NAMING_SCHEMES)} or a callable "
                f"(behavior, agent_id) -> str, actually: {agent_name!r}"
            )
        self.behaviors = list(behaviors)
        self.scheme = agent_name if isinstance(agent_name, str) else "callable"
        self.agent_name: AgentNameFn | None = None if isinstance(agent_name, str) else agent_name
        self.prefixes = default_prefixes(self.behaviors) if self.scheme == "pettingzoo" else {}
        self._sep, pattern = _SCHEMES.get(self.scheme, ("", "{}"))
        heads = self.prefixes or {b: b for b in self.behaviors}
        self._heads = {b: head + self._sep for b, head in heads.items()}
        self._behavior_of_head = {head: b for b, head in self._heads.items()}
        self._pattern = pattern.format(sorted(heads.values()) if self.prefixes else self.behaviors)
        # Names issued by a user callable, for the reverse map and the collision check.
        self._issued: dict[str, AgentKey] = {}

    def name(self, behavior: str, agent_id: int) -> str:
        """The name of one agent."""
        return self.names(behavior, [agent_id])[0]

    def names(self, behavior: str, agent_ids: Iterable[int]) -> list[str]:
        """The names of ``agent_ids`` of ``behavior``, in order."""
        if self.agent_name is None:
            head = self._heads.get(behavior)
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
        """The (behaviour, agent id) of an agent name (for a callable: since :meth:`forget`)."""
        if self.agent_name is not None:
            return look_up(self._issued, name, UnknownAgentError, lambda: (
                f"no agent is named {name!r} (names issued: {sorted(self._issued)[:20]})"
            ))  # fmt: skip
        if not isinstance(name, str):
            raise UnknownAgentError(f"{name!r} is not an agent name: agent names are str")
        head, sep, number = name.rpartition(self._sep)
        behavior = self._behavior_of_head.get(head + sep)
        if behavior is None or not _AGENT_ID.fullmatch(number):
            raise UnknownAgentError(f"{name!r} is not an agent name {self._pattern}")
        return AgentKey(behavior, int(number))

    def forget(self) -> None:
        """Drops the names a callable issued (adapters call it at reset: names are per episode)."""
        self._issued.clear()
