"""PettingZooAECEnv: PettingZoo's AEC contract, checked by hand and against the raw core."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo import AECEnv
from pettingzoo.utils.conversions import parallel_to_aec_wrapper

from zooport.adapters.pettingzoo_aec import PettingZooAECEnv, UnityAECEnv
from zooport.envs.builtin.tag import Tag
from zooport.errors import ActionError, EnvClosedError, EnvNotResetError

from tests.support.probes import (
    RUNNER,
    WALKER,
    MaskedProbe,
    Probe,
)


class StepCounting(Probe):
    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.core_steps = 0

    def step(self):
        self.core_steps += 1
        super().step()


def test_agents_act_in_turn_and_the_core_steps_once_per_cycle():
    core = StepCounting((0, 0), (0,), seed=0)
    env = PettingZooAECEnv(core)
    assert issubclass(UnityAECEnv, PettingZooAECEnv) and isinstance(env, AECEnv)
    assert env.reset(seed=0) is None
    order = []
    for _ in range(6):
        order.append(env.agent_selection)
        agent = env.agent_selection
        env.step(np.zeros(2, np.float32) if agent.startswith("walker") else 1)
        assert core.core_steps == len(order) // 3
    assert order == ["runner_0", "runner_1", "walker_2"] * 2
    assert core.applied[RUNNER][-1].tolist() == [[1], [1]]


def test_rewards_are_cleared_and_cumulative_rewards_sum_since_the_agent_acted():
    env = PettingZooAECEnv(Probe((0,), (0,), walker_period=2, seed=0))
    env.reset()
    env.step(0)
    assert env.rewards == {"runner_0": 0.0, "walker_1": 0.0}
    env.step(np.zeros(2))  # the cycle's last agent: the core steps
    assert env.rewards == {"runner_0": 1.0, "walker_1": 0.0}
    assert env.last()[1] == 1.0 and env.agent_selection == "runner_0"
    env.step(0)
    assert env.rewards == {"runner_0": 0.0, "walker_1": 0.0}  # cleared by the next step
    assert env._cumulative_rewards == {"runner_0": 0.0, "walker_1": 0.0}
    env.step(np.zeros(2))
    assert env.rewards == {"runner_0": 1.0, "walker_1": 20.0}  # the walker's two steps
    obs, reward, terminated, truncated, info = env.last()
    assert (reward, terminated, truncated, info["decided"]) == (1.0, False, False, True)
    assert env.infos["walker_1"]["decided"] is True
    assert obs.tolist() == [2.0, 0.0, 0.0]
    assert env.last(observe=False)[0] is None


def test_finished_agents_are_selected_first_and_leave_with_a_none_step():
    # stale_actions="raise": PettingZoo's own rule, the only valid action of a dead agent is None.
    env = PettingZooAECEnv(Probe((1, 0, 0), (), seed=0), stale_actions="raise")
    env.reset()
    for _ in range(3):
        env.step(0)
    assert env.agent_selection == "runner_0"
    obs, reward, terminated, truncated, _ = env.last()
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert obs.tolist() == [1.0, 0.0, 0.0]
    with pytest.raises(ActionError, match="only valid action is None"):
        env.step(1)
    env.step(None)
    assert env.agents == ["runner_1", "runner_2"] and "runner_0" not in env.rewards
    assert env.rewards == {"runner_1": 0.0, "runner_2": 0.0}
    assert env.agent_selection == "runner_1"
    # PettingZoo's own envs answer observe() for any agent of the episode: its final one.
    assert env.observe("runner_0").tolist() == [1.0, 0.0, 0.0]
    with pytest.raises(ActionError, match="'runner_1' is live"):
        env.step(None)


def test_episode_end_by_termination_mode_sends_everyone_through_the_none_step():
    env = PettingZooAECEnv(Probe((2, 0, 0), (), seed=0), termination_mode="any")
    env.reset()
    seen = []
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        seen.append((agent, terminated, truncated))
        env.step(None if terminated or truncated else 0)
    assert seen[6:] == [
        ("runner_0", True, False), ("runner_1", False, True), ("runner_2", False, True)
    ]  # fmt: skip
    assert env.agents == []
    with pytest.raises(EnvNotResetError):
        env.step(0)


def test_spawned_agents_act_from_the_next_cycle():
    env = PettingZooAECEnv(Probe((0,), (0,), spawn_at=1, seed=0))
    env.reset()
    env.step(0)
    env.step(np.zeros(2))
    assert env.agents == ["runner_0", "walker_1", "runner_2"]
    assert env._cumulative_rewards["runner_2"] == 0.0 and env.observe("runner_2") is not None
    order = []
    for _ in range(3):
        order.append(env.agent_selection)
        env.step(np.zeros(2) if env.agent_selection == "walker_1" else 2)
    assert order == ["runner_0", "walker_1", "runner_2"]
    assert env.core.applied[RUNNER][-1].tolist() == [[2], [2]]


def test_default_action_lets_live_agents_pass_none():
    core = Probe((0, 0), (), seed=0)
    env = PettingZooAECEnv(core, default_action={RUNNER: 2})
    env.reset()
    env.step(None)
    env.step(1)
    assert core.applied[RUNNER][-1].tolist() == [[2], [1]]


def test_a_bad_action_restarts_the_cycle_without_stepping_the_core():
    core = StepCounting((0, 0), (), seed=0)
    env = PettingZooAECEnv(core)
    env.reset()
    env.step(0)
    with pytest.raises(ActionError, match="'runner_1'"):
        env.step(9)
    assert core.core_steps == 0 and env.agent_selection == "runner_0"
    env.step(1)
    env.step(2)
    assert core.core_steps == 1 and core.applied[RUNNER][-1].tolist() == [[1], [2]]


def test_masks_state_render_close_and_no_attribute_forwarding():
    core = MaskedProbe((0, 0), (), seed=0)
    env = PettingZooAECEnv(core, render_mode="rgb_array", max_cycles=1)
    env.reset()
    assert env.observe("runner_1")["action_mask"].tolist() == [1, 1, 0]
    np.testing.assert_array_equal(
        env.state(), np.concatenate([env.observe(a)["observation"] for a in env.agents])
    )
    assert env.render().shape == (4, 6, 3)
    assert env.max_cycles == 1
    env.step(0)
    env.step(0)
    assert env.truncations == {"runner_0": True, "runner_1": True}
    assert "__getattr__" not in vars(PettingZooAECEnv) and not hasattr(AECEnv, "__getattr__")
    assert not isinstance(env, parallel_to_aec_wrapper)
    env.close()
    env.close()
    assert core.closed_calls == 1
    # close() ends the episode: no agents, nothing selected, every turn refused.
    assert env.agents == [] and env.agent_selection is None and env.rewards == {}
    for call in (env.reset, env.last, lambda: env.step(None), lambda: env.observe("runner_0")):
        with pytest.raises(EnvClosedError):
            call()


def test_mlagents_defect_pettingzoo_1_24_aec_api():
    """ML-Agents' AEC wrapper returned 4-tuples from last() and took no seed in reset()."""
    env = PettingZooAECEnv(Probe((0,), (0,), seed=0))
    env.reset(seed=0, options={"x": 1})
    assert len(env.last()) == 5
    assert type(env).observation_space is not AECEnv.observation_space


def test_multi_step_determinism_under_a_seed():
    """PettingZoo's seed_test stops at the first finished agent; this plays two episodes."""
    from gymnasium.utils.env_checker import data_equivalence

    def rollout():
        env = PettingZooAECEnv(Tag(spawn_every=5, tag_radius=0.3, max_steps=40))
        data = []
        for episode in range(2):
            env.reset(seed=3 + episode)
            for agent in env.agents:
                env.action_space(agent).seed(2)
            for agent in env.agent_iter():
                observation, reward, terminated, truncated, info = env.last()
                action = None if terminated or truncated else env.action_space(agent).sample()
                data.append((agent, observation, reward, terminated, truncated, info, action))
                env.step(action)
        return data

    first, second = rollout(), rollout()
    assert len(first) > 100 and any(d[3] for d in first)
    assert data_equivalence(first, second)


def test_mlagents_defect_continuous_actions_are_not_sent_as_ints():
    """ML-Agents' wrapper declared Box(-1, 1, int32) and cast actions to it: 0.7 became 0."""
    core = Probe((), (0, 0), seed=0)
    env = PettingZooAECEnv(core)
    env.reset()
    space = env.action_space("walker_0")
    assert space.dtype == np.float32 and space.contains(np.array([0.7, -0.3], np.float32))
    env.step(np.array([0.7, -0.3], np.float32))
    env.step([0.25, 1.0])
    np.testing.assert_array_equal(
        core.applied[WALKER][-1], np.array([[0.7, -0.3], [0.25, 1.0]], np.float32)
    )


def test_the_class_example_turns():
    """The example the class docstring carried: agents in turn, truncated at max_cycles."""
    env = PettingZooAECEnv(Tag(seed=0), max_cycles=2)
    env.reset(seed=1)
    turns = []
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        turns.append((agent, truncated))
        env.step(None if terminated or truncated else 0)
    assert (len(turns), turns[0], turns[-1]) == (15, ("runner_0", False), ("tagger_4", True))
