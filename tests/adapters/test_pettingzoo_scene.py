"""What a hostile scene sends through the PettingZoo adapters: nothing is lost in silence.

Repeated or float agent ids are an ObservationError naming the behaviour and the ids; group
ids beyond int32 keep their value; a behaviour that appears after construction is a
SpecError naming it; AEC's ``last()``/``observe()`` hand out arrays no one else holds.
"""

from __future__ import annotations

import numpy as np
import pytest

import zooport.adapters.agent_group as agent_group
from zooport.adapters.pettingzoo_aec import PettingZooAECEnv
from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.envs.builtin import BallBalance, GridWorld
from zooport.errors import EnvNotResetError, ObservationError, SpecError

from tests.support.scene import Scene, rows

ADAPTERS = [PettingZooParallelEnv, PettingZooAECEnv]
ZERO = np.zeros(1, np.float32)


def _step(env):
    """One step of zero actions (a full AEC cycle)."""
    if isinstance(env, PettingZooParallelEnv):
        return env.step(dict.fromkeys(env.agents, ZERO))
    for _ in range(len(env.agents)):
        env.step(ZERO)
    return None


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize(
    ("ids", "match"),
    [
        ([0, 1, 1], r"'B'.*DecisionSteps: \[1\]"),  # repeated ids, named
        ([0.5, 1.5, 2.5], r"'B'.*integer.*float64"),  # float ids: an error, not truncated
    ],
)
def test_bad_decision_ids_at_reset_are_an_error(adapter, ids, match):
    env = adapter(Scene([{"B": rows(ids)}]))
    with pytest.raises(ObservationError, match=match):
        env.reset()


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_repeated_terminal_ids_are_an_error_not_merged_rewards(adapter):
    # Agent 0 listed twice, rewards 5 and 7: neither 5, 7 nor 12 may be reported.
    ended = (rows([1], 1.0), (np.array([0, 0]), np.array([5, 7], np.float32), np.zeros(2)))
    env = adapter(Scene([{"B": rows([0, 1])}, {"B": ended}]))
    env.reset()
    with pytest.raises(ObservationError, match=r"'B'.*TerminalSteps: \[0\]"):
        _step(env)
    with pytest.raises(EnvNotResetError):
        _step(env)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_repeated_ids_later_in_the_episode_are_caught(adapter):
    env = adapter(Scene([{"B": rows([0, 1])}, {"B": rows([0, 1, 1])}]))
    env.reset()
    with pytest.raises(ObservationError, match=r"'B'.*\[1\]"):
        _step(env)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_group_ids_beyond_int32_keep_their_value(adapter):
    big = 2**40 + 1
    env = adapter(Scene([{"B": rows([0, 1], group_id=big)}]))
    env.reset()
    _step(env)
    infos = (
        env.infos
        if isinstance(env, PettingZooAECEnv)
        else env.step(dict.fromkeys(env.agents, ZERO))[4]
    )
    assert [info["group_id"] for info in infos.values()] == [big, big]


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_behaviour_that_appears_mid_episode_is_an_error_naming_it(adapter):
    env = adapter(Scene([{"B": rows([0, 1])}, {"B": rows([0, 1]), "Late": rows([7])}]))
    env.reset()
    with pytest.raises(SpecError, match=r"\['B'\].*\['Late'\]"):
        _step(env)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_behaviour_that_appears_at_reset_is_an_error_naming_it(adapter):
    core = Scene([{"B": rows([0, 1])}, {"B": rows([0, 1]), "Late": rows([7])}])
    env = adapter(core)
    core.step()  # the scene registers "Late" before the adapter's first reset
    core.reset = lambda: None
    with pytest.raises(SpecError, match="'Late'"):
        env.reset()


def test_ids_are_checked_only_when_they_change(monkeypatch):
    calls = []
    check = agent_group.check_agent_ids
    monkeypatch.setattr(
        agent_group, "check_agent_ids", lambda *args: calls.append(args) or check(*args)
    )
    env = PettingZooParallelEnv(BallBalance(n_agents=4, seed=0))
    env.reset(seed=0)
    assert len(calls) == 1
    for _ in range(5):
        env.step({agent: np.zeros(2, np.float32) for agent in env.agents})
    assert len(calls) == 1  # the same agents in the same rows: no check on the hot path


@pytest.mark.parametrize("mask_in_info", [False, True])
def test_aec_last_and_observe_hand_out_fresh_arrays(mask_in_info):
    env = PettingZooAECEnv(GridWorld(seed=0), mask_in_info=mask_in_info)
    env.reset(seed=0)
    agent = env.agent_selection

    def arrays(obs):
        return [a for v in obs.values() for a in arrays(v)] if isinstance(obs, dict) else [obs]

    before = [a.copy() for a in arrays(env.observe(agent))]
    for read in (lambda: env.last()[0], lambda: env.observe(agent)):
        for array in arrays(read()):
            array[...] = 7
    for a, b in zip(arrays(env.observe(agent)), before, strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(arrays(env.last()[0]), before, strict=True):
        np.testing.assert_array_equal(a, b)
