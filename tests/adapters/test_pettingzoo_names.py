"""Agent naming (agent_names.py) and termination rules (termination.py), alone."""

from __future__ import annotations

import numpy as np
import pytest

from zooport.adapters.agent_names import AgentKey, AgentNames, behavior_prefix
from zooport.adapters.options import TerminationMode, finished_needed
from zooport.errors import SpecError, UnknownAgentError


@pytest.mark.parametrize(
    ("behavior", "prefix"),
    [
        ("Runner?team=0", "runner"),
        ("BallBalance", "ballbalance"),
        ("3DBall", "3dball"),
        ("My Agent-2?team=1&x=y", "myagent2"),
        ("?team=0", "agent"),
        ("__", "agent"),
    ],
)
def test_behavior_prefix(behavior, prefix):
    assert behavior_prefix(behavior) == prefix


def test_default_names_round_trip():
    names = AgentNames(["Runner?team=0", "Tagger?team=1"])
    assert names.names("Runner?team=0", np.array([0, 12])) == ["runner_0", "runner_12"]
    assert names.name("Tagger?team=1", 3) == "tagger_3"
    assert names.lookup("runner_12") == AgentKey("Runner?team=0", 12)
    assert names.lookup("tagger_3") == ("Tagger?team=1", 3)
    assert names.lookup("runner_-1") == ("Runner?team=0", -1)


@pytest.mark.parametrize("bad", ["runner", "runner_", "runner_x", "walker_1", "runner_01", 7])
def test_lookup_rejects_names_it_cannot_produce(bad):
    with pytest.raises(UnknownAgentError, match="not an agent name"):
        AgentNames(["Runner?team=0"]).lookup(bad)


def test_behaviors_sharing_a_prefix_are_named_apart_by_their_team():
    names = AgentNames(["Runner?team=0", "Runner?team=1"])
    assert names.names("Runner?team=1", [4, 5]) == ["runner_1_4", "runner_1_5"]
    assert names.lookup("runner_0_3") == ("Runner?team=0", 3)


def test_a_callable_names_agents_and_collisions_are_caught():
    names = AgentNames(
        ["Runner?team=0", "Runner?team=1"],
        agent_name=lambda b, i: f"{'red' if b.endswith('0') else 'blue'}_{i % 2}",
    )
    assert names.names("Runner?team=0", [0, 1]) == ["red_0", "red_1"]
    assert names.lookup("red_1") == ("Runner?team=0", 1)
    # The same agent may be named again; another agent with the same name may not.
    assert names.name("Runner?team=0", 1) == "red_1"
    with pytest.raises(SpecError, match="two agents the name 'red_0'"):
        names.name("Runner?team=0", 2)
    with pytest.raises(UnknownAgentError, match="'blue_0'"):
        names.lookup("blue_0")
    names.forget()
    assert names.name("Runner?team=0", 2) == "red_0"


@pytest.mark.parametrize("bad", [lambda b, i: 3, lambda b, i: ""])
def test_a_callable_must_return_a_non_empty_string(bad):
    with pytest.raises(SpecError, match="non-empty str"):
        AgentNames(["A"], agent_name=bad).name("A", 0)


def test_agent_name_must_be_a_scheme_or_callable():
    with pytest.raises(ValueError, match=r"one of \['pettingzoo', 'mlagents'\] or a call.*'a_{}'"):
        AgentNames(["A"], agent_name="a_{}")
    with pytest.raises(TypeError, match="or a callable.*actually: 3"):
        AgentNames(["A"], agent_name=3)


# ---------------------------------------------------------------------- termination


@pytest.mark.parametrize(
    ("value", "n", "required"),
    [
        ("any", 12, 1),
        ("majority", 12, 7),
        ("majority", 4, 3),
        ("majority", 1, 1),
        ("all", 12, 12),
        (TerminationMode.ALL, 5, 5),
        ("ALL", 5, 5),
        (" Any ", 5, 1),
        (0.5, 12, 6),
        (0.3, 10, 3),
        (0.01, 10, 1),
        (1.0, 7, 7),
        (np.float32(0.25), 8, 2),
        ("all", 0, 0),
    ],
)
def test_required_counts(value, n, required):
    assert finished_needed(value, n) == required


@pytest.mark.parametrize("bad", ["some", "", 0.0, 1.5, -0.1, float("nan"), 1, True, None, [0.5]])
def test_invalid_rules_list_the_valid_values(bad):
    with pytest.raises(ValueError, match="one of 'any', 'majority', 'all'.*fraction in \\(0, 1\\]"):
        finished_needed(bad, 0)
