"""Agent naming schemes: the injective default over any set of behaviour names, ML-Agents' names.

The property tests draw behaviour names from pieces real Unity scenes and ML-Agents code
contain (one behaviour in several teams, names that sanitise alike, empty names, digits,
odd query strings) mixed with arbitrary text.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings, strategies as st

from zooport.adapters.agent_names import (
    AgentKey,
    AgentNames,
    behavior_prefix,
    default_prefixes,
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
def test_a_behaviour_alone_in_its_word_keeps_the_bare_word(behaviors):
    def word(behavior):
        return re.sub("[^a-z]", "", behavior_prefix(behavior)) or "agent"

    prefixes = default_prefixes(behaviors)
    for behavior in behaviors:
        alone = [b for b in behaviors if word(b) == word(behavior)]
        if alone == [behavior]:
            assert prefixes[behavior] == word(behavior)


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
        # SoccerTwos, Tennis: one behaviour in two teams; the rank is the team's number.
        (["SoccerTwos?team=0", "SoccerTwos?team=1"], ["soccertwos_0", "soccertwos_1"]),
        # Two behaviours, two teams (StrikersVsGoalie): no collision, the bare words.
        (["Striker?team=0", "Goalie?team=1"], ["striker", "goalie"]),
        # Names that sanitise to the same word get their rank in natural order.
        (["FooBar?team=0", "Foo-Bar?team=0"], ["foobar_1", "foobar_0"]),
        (["FooBar", "Foo-Bar", "foobar?x"], ["foobar_1", "foobar_0", "foobar_2"]),
        (["Walker", "Walker?team=1"], ["walker_0", "walker_1"]),
        (["Team?team=10", "Team?team=2", "Team?team=0"], ["team_2", "team_1", "team_0"]),
        # Empty, digit-only and digit-holding names: letters only.
        (["", "?team=0", "Agent"], ["agent_0", "agent_1", "agent_2"]),
        (["7", "7?team=2"], ["agent_0", "agent_1"]),
        (["3DBall"], ["dball"]),
    ],
)
def test_default_prefixes_by_hand(behaviors, expected):
    assert list(default_prefixes(behaviors).values()) == expected
    assert list(default_prefixes(reversed(behaviors)).values()) == expected[::-1]


@settings(max_examples=300, deadline=None)
@given(behaviors=behavior_sets, ids=st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=4))
def test_default_names_pass_pettingzoos_naming_check(behaviors, ids):
    # pettingzoo.test.api_test warns unless re.match("[a-z]+_[0-9]+", agent).
    names = AgentNames(behaviors)
    for behavior in behaviors:
        for name in names.names(behavior, ids):
            assert re.match("[a-z]+_[0-9]+", name), name


def test_soccer_twos_agents_by_name_and_back():
    names = AgentNames(["SoccerTwos?team=1", "SoccerTwos?team=0"])
    assert names.names("SoccerTwos?team=0", [0, 1]) == ["soccertwos_0_0", "soccertwos_0_1"]
    assert names.names("SoccerTwos?team=1", [2, 3]) == ["soccertwos_1_2", "soccertwos_1_3"]
    assert names.lookup("soccertwos_1_3") == ("SoccerTwos?team=1", 3)
    assert names.lookup("soccertwos_0_-1") == ("SoccerTwos?team=0", -1)
    for bad in ["soccertwos_3", "soccertwos_2_3", "soccertwos_1_03", "soccertwos_1"]:
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
