"""TerminationPolicy: checked on a scripted env by hand, against zooport's own termination
modes on Tag, and by the shared contract on a zooport env and a non-zooport env."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

from zooport.adapters.wrappers import TerminationPolicy
from zooport.errors import EnvNotResetError

from tests.support.wrappers import Scripted, check_contract, mini, random_actions, tag

ENDS = {"a_0": (2, "term"), "a_1": (3, "trunc"), "a_2": (5, "term"), "a_3": None}


def run(env, steps):
    env.reset(seed=0)
    out = []
    for _ in range(steps):
        if not env.agents:
            break
        result = env.step(dict.fromkeys(env.agents, 0))
        out.append((list(env.agents), *result[2:4]))
    return out


def flags(d):
    return sorted(a for a, v in d.items() if v)


@pytest.mark.parametrize(
    ("mode", "ends_at", "terminated", "truncated"),
    [
        ("any", 2, ["a_0"], ["a_1", "a_2", "a_3"]),
        (0.5, 3, [], ["a_1", "a_2", "a_3"]),  # 2 of 4 finished: a_0 earlier, a_1 now
        ("majority", 5, ["a_2"], ["a_3"]),  # 3 of 4
        (0.75, 5, ["a_2"], ["a_3"]),
    ],
)
def test_modes_end_the_episode_at_the_hand_computed_step(mode, ends_at, terminated, truncated):
    steps = run(TerminationPolicy(Scripted(ENDS), mode), 10)
    assert len(steps) == ends_at
    agents, terms, truncs = steps[-1]
    assert agents == [] and flags(terms) == terminated and flags(truncs) == truncated
    for agents_before, *_ in steps[:-1]:
        assert agents_before  # not over before


def test_all_mode_changes_nothing_and_agents_leave_one_by_one():
    steps = run(TerminationPolicy(Scripted(ENDS), "all"), 10)
    inner = run(Scripted(ENDS), 10)
    assert data_equivalence(steps, inner)
    assert [s[0] for s in steps[:3]] == [
        ["a_0", "a_1", "a_2", "a_3"],
        ["a_1", "a_2", "a_3"],
        ["a_2", "a_3"],
    ]


def test_terminated_and_truncated_stay_apart():
    env = TerminationPolicy(Scripted(ENDS), 0.75, end_live_as="terminated")
    steps = run(env, 10)
    _, terms, truncs = steps[-1]
    assert flags(terms) == ["a_2", "a_3"] and flags(truncs) == []
    _, terms, truncs = steps[2]  # a_1's own truncation, two steps earlier, is unchanged
    assert flags(truncs) == ["a_1"] and flags(terms) == []


def test_spawned_agents_count_from_when_they_appear():
    ends = {"a_0": (1, "term"), "a_1": None, "b_0": None}
    env = TerminationPolicy(Scripted(ends, joins={"b_0": 1}), 0.5)
    env.reset()
    _, _, terms, truncs, _ = env.step({"a_0": 0, "a_1": 0})
    # 3 agents took part once b_0 joined: 1 finished < ceil(1.5) = 2, so the episode goes on
    assert env.agents == ["a_1", "b_0"] and flags(terms) == ["a_0"] and not any(truncs.values())


def test_step_after_the_end_needs_a_reset():
    env = TerminationPolicy(Scripted(ENDS), "any")
    run(env, 10)
    with pytest.raises(EnvNotResetError, match="episode is over"):
        env.step({})
    env.reset()
    assert env.agents == ["a_0", "a_1", "a_2", "a_3"]
    with pytest.raises(EnvNotResetError):
        TerminationPolicy(Scripted(ENDS)).step({})


@pytest.mark.parametrize("mode", ["any", "majority", 0.4])
def test_matches_zooport_termination_modes_on_tag(mode):
    """The wrapper over mode "all" gives what the adapter's own termination_mode gives."""
    kwargs = {"tag_radius": 0.6, "max_cycles": 100}
    wrapped = TerminationPolicy(tag(**kwargs), mode)
    native = tag(termination_mode=mode, **kwargs)
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    (obs_a, info_a), (obs_b, info_b) = wrapped.reset(seed=2), native.reset(seed=2)
    assert data_equivalence(obs_a, obs_b)
    while native.agents:
        a = wrapped.step(random_actions(wrapped, obs_a, info_a, rng_a))
        b = native.step(random_actions(native, obs_b, info_b, rng_b))
        assert data_equivalence(a[:4], b[:4]) and wrapped.agents == native.agents
        obs_a, info_a, obs_b, info_b = a[0], a[4], b[0], b[4]
    assert not wrapped.agents and native.cycles < 100  # the rule ended it, not max_cycles


@pytest.mark.parametrize("mode", ["any", "majority", "all", 0.5])
@pytest.mark.parametrize("factory", [tag, mini])
def test_contract(mode, factory):
    record = check_contract(
        lambda: TerminationPolicy(factory(max_cycles=40) if factory is tag else factory(), mode)
    )
    assert record


def test_bad_arguments():
    with pytest.raises(ValueError, match="Expect termination_mode to be one of 'any'"):
        TerminationPolicy(mini(), "some")
    with pytest.raises(ValueError, match="fraction in \\(0, 1\\], actually: 1.5"):
        TerminationPolicy(mini(), 1.5)
    with pytest.raises(ValueError, match="end_live_as to be one of"):
        TerminationPolicy(mini(), end_live_as="dead")
