"""Agent naming schemes: the injective default over any set of behaviour names, ML-Agents' names.

The property tests draw behaviour names from pieces real Unity scenes and ML-Agents code
contain (one behaviour in several teams, names that sanitise alike, empty names, digits,
odd query strings) mixed with arbitrary text.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st

from zooport.adapters.agent_names import (
    AgentKey,
    AgentNames,
    behavior_prefix,
    default_prefixes,
    query_tag,
)
from zooport.errors import UnknownAgentError

BASES = ["SoccerTwos", "soccertwos", "Soccer-Twos", "Soccer_Twos", "", "Agent", "7", "123", "a_b"]
QUERIES = ["", "?team=0", "?team=1", "?team=10", "?team=1&x=y", "?", "?1", "?agent_id=3", "?_"]

behavior_names = st.one_of(
    st.builds(lambda b, q: b + q, st.sampled_from(BASES), st.sampled_from(QUERIES)),
    st.builds(lambda b, q: b + q, st.text(max_size=6), st.sampled_from(QUERIES)),
    st.text(max_size=12),
)
behavior_sets = st.lists(behavior_names, min_size=1, max_size=8, unique=True)
agent_ids = st.lists(st.integers(-(2**31), 2**31 - 1), min_size=1, max_size=4, unique=True)


def _all_names(names: AgentNames, behaviors, ids) -> dict[str, AgentKey]:
    issued: dict[str, AgentKey] = {}
    for behavior in behaviors:
        for agent_id, name in zip(ids, names.names(behavior, ids), strict=True):
            key = AgentKey(behavior, agent_id)
            assert issued.setdefault(name, key) == key, f"{name!r} names two agents"
    return issued


@settings(max_examples=300, deadline=None)
@given(behaviors=behavior_sets, ids=agent_ids, seed=st.integers(0, 1000))
def test_default_names_are_injective_round_trip_and_order_independent(behaviors, ids, seed):
    names = AgentNames(behaviors)
    issued = _all_names(names, behaviors, ids)
    assert len(issued) == len(behaviors) * len(ids)
    for name, key in issued.items():
        assert names.lookup(name) == key
        # PettingZoo style: "<prefix>_<agent_id>", one prefix per behaviour.
        prefix, sep, number = name.rpartition("_")
        assert sep and number == str(key.agent_id) and prefix == names.prefixes[key.behavior]
    assert len(set(names.prefixes.values())) == len(behaviors)
    shuffled = list(behaviors)
    random.Random(seed).shuffle(shuffled)
    assert default_prefixes(shuffled) == names.prefixes


@settings(max_examples=200, deadline=None)
@given(behaviors=behavior_sets)
def test_a_behaviour_whose_prefix_is_its_own_keeps_todays_name(behaviors):
    prefixes = default_prefixes(behaviors)
    for behavior in behaviors:
        alone = [b for b in behaviors if behavior_prefix(b) == behavior_prefix(behavior)]
        if alone == [behavior]:
            assert prefixes[behavior] == behavior_prefix(behavior)


@settings(max_examples=300, deadline=None)
@given(behaviors=behavior_sets, ids=agent_ids)
def test_mlagents_names_are_injective_and_round_trip(behaviors, ids):
    names = AgentNames(behaviors, "mlagents")
    issued = _all_names(names, behaviors, ids)
    assert len(issued) == len(behaviors) * len(ids)
    for name, key in issued.items():
        assert name == f"{key.behavior}?agent_id={key.agent_id}"
        assert names.lookup(name) == key


@pytest.mark.parametrize(
    ("behaviors", "expected"),
    [
        # SoccerTwos, Tennis, StrikersVsGoalie: one behaviour in two teams.
        (["SoccerTwos?team=0", "SoccerTwos?team=1"], ["soccertwos_team0", "soccertwos_team1"]),
        # Two behaviours, two teams (StrikersVsGoalie): no collision, today's names.
        (["Striker?team=0", "Goalie?team=1"], ["striker", "goalie"]),
        # Names that sanitise to the same prefix in the same team get their sorted rank.
        (["FooBar?team=0", "Foo-Bar?team=0"], ["foobar_team0_1", "foobar_team0_0"]),
        # ... without any query string: the empty tag between the two underscores.
        (["FooBar", "Foo-Bar", "foobar?x"], ["foobar__1", "foobar__0", "foobar_x"]),
        # A name without a query string next to its teams keeps the bare prefix.
        (["Walker", "Walker?team=1"], ["walker", "walker_team1"]),
        # Empty and digit-only names.
        (["", "?team=0", "Agent"], ["agent__0", "agent_team0", "agent__1"]),
        (["7", "7?team=2"], ["7", "7_team2"]),
        # A digit-only query tag cannot be mistaken for a rank: ranks sit behind a second "_".
        (["Foo", "foo", "Foo?1"], ["foo__0", "foo__1", "foo_1"]),
    ],
)
def test_default_prefixes_by_hand(behaviors, expected):
    assert list(default_prefixes(behaviors).values()) == expected
    assert list(default_prefixes(reversed(behaviors)).values()) == expected[::-1]


def test_query_tag():
    assert [query_tag(b) for b in ["A?team=1", "A", "A?", "A?Team=1&b=C-d"]] == [
        "team1", "", "", "team1bcd",
    ]  # fmt: skip


def test_soccer_twos_agents_by_name_and_back():
    names = AgentNames(["SoccerTwos?team=1", "SoccerTwos?team=0"])
    assert names.names("SoccerTwos?team=0", [0, 1]) == ["soccertwos_team0_0", "soccertwos_team0_1"]
    assert names.names("SoccerTwos?team=1", [2, 3]) == ["soccertwos_team1_2", "soccertwos_team1_3"]
    assert names.lookup("soccertwos_team1_3") == ("SoccerTwos?team=1", 3)
    assert names.lookup("soccertwos_team0_-1") == ("SoccerTwos?team=0", -1)
    for bad in ["soccertwos_3", "soccertwos_team2_3", "soccertwos_team1_03", "soccertwos_team1"]:
        with pytest.raises(UnknownAgentError, match="not an agent name"):
            names.lookup(bad)


@pytest.mark.parametrize(
    "bad",
    ["Tag?agent_id=1", "Runner?team=0?agent_id=", "Runner?team=0?agent_id=01",
     "Runner?team=0?agent_id=x", "runner_1", "Runner?team=0_1", 3],
)  # fmt: skip
def test_mlagents_lookup_rejects_names_it_cannot_produce(bad):
    with pytest.raises(UnknownAgentError, match="not an agent name"):
        AgentNames(["Runner?team=0", "Tagger?team=1"], "mlagents").lookup(bad)


def test_mlagents_names_an_unknown_behaviour_is_an_error():
    with pytest.raises(UnknownAgentError, match="no behavior 'Nope'"):
        AgentNames(["Runner?team=0"], "mlagents").names("Nope", [0])
    assert AgentNames(["A"], "pettingzoo").prefixes == AgentNames(["A"]).prefixes == {"A": "a"}
