"""PettingZooParallelEnv: semantics checked against hand-computed values and the raw core."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import data_equivalence
from pettingzoo import ParallelEnv

from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv, UnityParallelEnv
from zooport.envs import BatchedEnv
from zooport.envs.builtin.grid_world import GridWorld
from zooport.envs.builtin.tag import Tag
from zooport.envs.side_channel.engine_configuration_channel import EngineConfigurationChannel
from zooport.errors import (
    ActionError,
    EnvClosedError,
    EnvNotResetError,
    UnknownAgentError,
)

from tests.support.old_api import OldWalkers
from tests.support.probes import (
    RUNNER,
    WALKER,
    MaskedProbe,
    Probe,
)


def zeros(env):
    return {a: _zero(env.action_space(a)) for a in env.agents}


def _zero(space):
    if isinstance(space, spaces.Dict):
        return {k: _zero(s) for k, s in space.spaces.items()}
    if isinstance(space, spaces.Discrete):
        return 0
    return np.zeros(space.shape, space.dtype)


# ---------------------------------------------------------------------- reset, names, spaces


def test_reset_names_spaces_and_first_observations():
    env = PettingZooParallelEnv(Probe(runner_lengths=(0, 0), walker_lengths=(0,), seed=0))
    assert issubclass(UnityParallelEnv, PettingZooParallelEnv) and isinstance(env, ParallelEnv)
    obs, infos = env.reset(seed=3)
    assert env.agents == env.possible_agents == ["runner_0", "runner_1", "walker_2"]
    assert obs["runner_1"].tolist() == [0.0, 1.0, 1.0] and obs["walker_2"].tolist() == [0, 0, 2]
    assert obs["runner_1"].dtype == np.float32
    assert infos["runner_0"] == {"decided": True, "group_id": 1, "group_reward": 0.0}
    assert infos["walker_2"] == {"decided": True, "group_id": 0, "group_reward": 0.0}
    assert env.action_space("runner_0") == spaces.Discrete(3)
    assert env.action_space("walker_2") == spaces.Box(-1, 1, (2,), np.float32)
    assert env.observation_space("runner_0") is env.observation_space("runner_1")
    assert env.action_space("runner_0") is env.action_space("runner_1")
    assert env.observation_spaces["walker_2"] is env.observation_space("walker_2")
    assert env.agent_key("walker_2") == (WALKER, 2)
    assert env.num_agents == env.max_num_agents == 3
    assert str(env) == "zooport_probe" and env.unwrapped is env


def test_possible_agents_and_spaces_are_known_before_reset():
    core = Probe(runner_lengths=(0, 0, 0), walker_lengths=(), seed=0)
    env = PettingZooParallelEnv(core)
    assert core.resets == 0
    assert env.observation_space("runner_2").shape == (3,)  # after one discovery reset
    assert env.possible_agents == ["runner_0", "runner_1", "runner_2"]
    assert core.resets == 1 and env.agents == []
    # A name that parses but is no agent of the episode has no space.
    with pytest.raises(UnknownAgentError, match="'runner_7'"):
        env.observation_space("runner_7")
    with pytest.raises(EnvNotResetError, match="reset"):
        env.step({})


def test_hybrid_and_multi_branch_spaces():
    env = PettingZooParallelEnv(Probe((0,), (0,), branches=(3, 2), hybrid=True, seed=0))
    assert env.action_space("runner_0") == spaces.MultiDiscrete([3, 2])
    assert env.action_space("walker_1") == spaces.Dict(
        continuous=spaces.Box(-1, 1, (2,), np.float32), discrete=spaces.Discrete(2)
    )


def test_unknown_agent_and_name_collisions():
    env = PettingZooParallelEnv(Probe(seed=0))
    env.reset()
    with pytest.raises(UnknownAgentError, match="'nobody_1'"):
        env.action_space("nobody_1")

    class TwoTeams(Probe):
        def __init__(self):
            super().__init__()
            self._add_behavior("Runner?team=1", self.behavior_specs[RUNNER], 1)

    # One behaviour in two teams: the team joins the default prefix (it was a SpecError).
    env = PettingZooParallelEnv(TwoTeams())
    assert env.agent_key("runner_1_3") == ("Runner?team=1", 3)
    assert env.agent_key("runner_0_0") == (RUNNER, 0)
    with pytest.raises(UnknownAgentError, match="'runner_3'"):
        env.agent_key("runner_3")


def test_custom_agent_names():
    env = PettingZooParallelEnv(
        Probe((0, 0), (0,), seed=0), agent_name=lambda b, i: f"{b[0].lower()}{i}_{i}"
    )
    env.reset()
    assert env.agents == ["r0_0", "r1_1", "w2_2"]
    assert env.agent_key("w2_2") == (WALKER, 2)
    env.step(zeros(env))
    assert env.action_space("r1_1") == spaces.Discrete(3)


# ---------------------------------------------------------------------- actions


class CountingProbe(Probe):
    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.set_calls: list[str] = []

    def set_actions(self, behavior_name, action):
        self.set_calls.append(behavior_name)
        super().set_actions(behavior_name, action)


def test_actions_reach_the_core_in_one_call_per_behaviour_with_their_dtypes():
    core = CountingProbe((0, 0, 0), (0, 0), seed=0)
    env = PettingZooParallelEnv(core)
    env.reset()
    actions = {
        "runner_0": 2, "runner_1": np.int64(0), "runner_2": np.int32(1),
        "walker_3": np.array([0.7, -0.25], np.float32), "walker_4": [0.3, 0.1],
    }  # fmt: skip
    env.step(actions)
    assert core.set_calls == [RUNNER, WALKER]
    assert core.applied[RUNNER][-1].tolist() == [[2], [0], [1]]
    walkers = core.applied[WALKER][-1]
    # ML-Agents' wrapper sent continuous actions as int32 (0.7 -> 0); they stay float32 here.
    assert walkers.dtype == np.float32
    np.testing.assert_array_equal(walkers, np.array([[0.7, -0.25], [0.3, 0.1]], np.float32))
    assert env.action_space("walker_3").dtype == np.float32


def test_hybrid_and_multi_branch_actions_reach_the_core():
    core = Probe((0,), (0,), branches=(3, 2), hybrid=True, seed=0)
    env = PettingZooParallelEnv(core)
    env.reset()
    env.step({"runner_0": np.array([2, 1]), "walker_1": {"continuous": [0.5, 0.25], "discrete": 1}})
    assert core.applied[RUNNER][-1].tolist() == [[2, 1]]
    assert core.applied[WALKER][-1].tolist() == [[0.5, 0.25]]


def test_missing_and_extra_actions_are_errors_naming_the_agents():
    env = PettingZooParallelEnv(Probe((1, 0), (0,), seed=0))
    env.reset()
    with pytest.raises(
        ActionError, match=r"no action for live agents \['walker_2'\].*default_action"
    ):
        env.step({"runner_0": 0, "runner_1": 0})
    with pytest.raises(ActionError, match=r"not in the episode \['ghost_9'\]"):
        env.step({**zeros(env), "ghost_9": 0})
    env.step(zeros(env))  # runner_0 finishes
    env.stale_actions = "raise"
    with pytest.raises(ActionError, match=r"finished earlier in the episode \['runner_0'\]"):
        env.step({**zeros(env), "runner_0": 0})
    with pytest.raises(ActionError, match="dict of actions"):
        env.step([0, 0])
    assert env.ignored_actions == 0


def test_a_dict_of_the_right_size_with_a_wrong_name_is_an_error_naming_both():
    # Every live agent decides, so the adapter checks the keys by looking them up: a dict
    # with as many entries as live agents but one wrong name must still be refused.
    env = PettingZooParallelEnv(Probe((0, 0), (0,), seed=0))
    env.reset()
    actions = zeros(env)
    actions["ghost_9"] = actions.pop("walker_2")
    with pytest.raises(ActionError, match=r"not in the episode \['ghost_9'\]"):
        env.step(actions)
    env.step(zeros(env))  # the refused step changed nothing


@pytest.mark.parametrize(
    ("agent", "value", "message"),
    [
        ("runner_1", 3, "'runner_1'.*Discrete\\(3\\).*got 3"),
        ("runner_1", 1.5, "'runner_1'.*got 1.5"),
        ("walker_2", np.array([0.1, 0.2, 0.3]), "'walker_2'.*Box"),
        ("walker_2", np.array([np.nan, 0.0]), "'walker_2'.*nan"),
        ("walker_2", "left", "'walker_2'"),
        ("walker_2", np.array(["0.5", "0.1"]), "'walker_2'.*numeric"),
    ],
)
def test_bad_actions_are_errors_naming_the_agent(agent, value, message):
    env = PettingZooParallelEnv(Probe((0, 0), (0,), seed=0))
    env.reset()
    with pytest.raises(ActionError, match=message):
        env.step({**zeros(env), agent: value})
    env.step(zeros(env))  # the env is still usable


def test_default_actions():
    core = Probe((0, 0), (0,), seed=0)
    env = PettingZooParallelEnv(core, default_action="zero")
    env.reset()
    env.step({"runner_1": 2})
    assert core.applied[RUNNER][-1].tolist() == [[0], [2]]
    assert core.applied[WALKER][-1].tolist() == [[0.0, 0.0]]
    env = PettingZooParallelEnv(core, default_action={WALKER: np.array([0.5, 0.5])})
    env.reset()
    env.step({"runner_0": 1, "runner_1": 1})
    assert core.applied[WALKER][-1].tolist() == [[0.5, 0.5]]
    with pytest.raises(ActionError, match="no action for live agents \\['runner_0'\\]"):
        env.step({"runner_1": 1})
    with pytest.raises(ValueError, match="default_action"):
        PettingZooParallelEnv(core, default_action="random")
    with pytest.raises(ValueError, match="behaviors \\['Nope'\\]"):
        PettingZooParallelEnv(core, default_action={"Nope": 0})
    with pytest.raises(ActionError):
        PettingZooParallelEnv(core, default_action={RUNNER: 7})


# ---------------------------------------------------------------------- episodes


def test_mlagents_defect_terminal_reward_of_a_restarted_agent_is_kept():
    """ML-Agents' wrapper overwrote the terminal step with the restart's decision step."""
    core = Probe((1, 0), (), seed=0)
    env = PettingZooParallelEnv(core)
    env.reset()
    obs, rewards, terminated, truncated, infos = env.step({"runner_0": 1, "runner_1": 2})
    assert rewards == {"runner_0": 1.0, "runner_1": 2.0}
    assert terminated == {"runner_0": True, "runner_1": False}
    assert truncated == {"runner_0": False, "runner_1": False}
    assert obs["runner_0"].tolist() == [1.0, 0.0, 0.0]  # the final observation, not the restart
    assert infos["runner_0"]["decided"] is False and infos["runner_0"]["group_reward"] == 0.5
    assert env.agents == ["runner_1"]
    for _t in range(3):
        obs, rewards, terminated, _, _ = env.step({"runner_1": 2})
        assert list(obs) == ["runner_1"] and rewards == {"runner_1": 2.0}
        # The core restarted runner_0 (same id) and keeps playing it with zero actions.
        assert core.applied[RUNNER][-1].tolist() == [[0], [2]]
    assert env.possible_agents == ["runner_0", "runner_1"]


def test_interrupted_agents_are_truncated():
    env = PettingZooParallelEnv(Probe((0, 0), (), max_steps=2, seed=0))
    env.reset()
    env.step(zeros(env))
    _, rewards, terminated, truncated, _ = env.step(zeros(env))
    assert truncated == {"runner_0": True, "runner_1": True}
    assert terminated == {"runner_0": False, "runner_1": False}
    assert rewards == {"runner_0": 1.0, "runner_1": 2.0} and env.agents == []
    with pytest.raises(EnvNotResetError, match="episode is over"):
        env.step({})


def test_decision_periods_keep_observations_and_sum_rewards():
    core = Probe((0,), (0, 0), walker_period=3, seed=0)
    env = PettingZooParallelEnv(core)
    obs0, _ = env.reset()
    walker_actions = []
    for t in range(1, 4):
        action = {"runner_0": 1, "walker_1": np.full(2, t / 10), "walker_2": np.zeros(2)}
        walker_actions.append(core.applied[WALKER][-1].copy() if core.applied[WALKER] else None)
        obs, rewards, terminated, truncated, infos = env.step(action)
        assert set(obs) == set(rewards) == set(infos) == set(terminated) == {
            "runner_0", "walker_1", "walker_2"
        }  # fmt: skip
        assert rewards["runner_0"] == 1.0 and infos["runner_0"]["decided"] is True
        if t < 3:
            assert rewards["walker_1"] == 0.0 and rewards["walker_2"] == 0.0
            assert infos["walker_1"]["decided"] is False
            np.testing.assert_array_equal(obs["walker_1"], obs0["walker_1"])
        else:
            assert rewards == {"runner_0": 1.0, "walker_1": 30.0, "walker_2": 33.0}
            assert infos["walker_2"]["decided"] is True
            assert obs["walker_1"].tolist() == [3.0, 0.0, 1.0]
    # The walkers decided only at reset, so the core repeated that first action all along.
    first = np.array([[0.1, 0.1], [0, 0]], np.float32)
    assert len(core.applied[WALKER]) == 3
    for applied in core.applied[WALKER]:
        np.testing.assert_array_equal(applied, first)


def test_a_step_advances_the_core_until_a_live_agent_reports():
    core = Probe((1,), (0,), runner_period=1, walker_period=4, seed=0)
    env = PettingZooParallelEnv(core, termination_mode="all")
    env.reset()
    env.step({"runner_0": 0, "walker_1": np.zeros(2)})  # runner_0 finishes at core step 1
    assert core.t == 1
    _, rewards, _, _, infos = env.step({"walker_1": np.zeros(2)})
    # The restarted runner decides at steps 2 and 3, but only the walker is live: 3 core steps.
    assert core.t == 4 and rewards == {"walker_1": 40.0} and infos["walker_1"]["decided"]


def test_spawned_agents_join_agents_and_possible_agents():
    core = Probe((0, 0), (0,), spawn_at=2, seed=0)
    env = PettingZooParallelEnv(core)
    env.reset()
    env.step(zeros(env))
    obs, rewards, terminated, truncated, infos = env.step(zeros(env))
    assert env.agents == ["runner_0", "runner_1", "walker_2", "runner_3"]
    assert env.possible_agents == env.agents
    assert obs["runner_3"].tolist() == [0.0, 2.0, 3.0] and rewards["runner_3"] == 0.0
    assert terminated["runner_3"] is False and infos["runner_3"]["decided"] is True
    assert env.observation_space("runner_3") is env.observation_space("runner_0")
    env.step({**zeros(env), "runner_3": 2})
    assert core.applied[RUNNER][-1].tolist() == [[0], [0], [2]]


@pytest.mark.parametrize(
    ("mode", "ends_at"),
    [("any", 1), (0.5, 2), ("majority", 3), ("all", 4), (1.0, 4), (0.75, 3)],
)
def test_every_termination_mode_fires_when_its_share_of_agents_finished(mode, ends_at):
    """Runner i ends its episode at step i + 1 and is restarted; the rule counts it anyway."""
    core = Probe((1, 2, 3, 4), (), seed=0)
    env = PettingZooParallelEnv(core, termination_mode=mode)
    env.reset()
    for t in range(1, ends_at + 1):
        assert env.agents, f"the episode ended before step {t}"
        _, _, terminated, truncated, _ = env.step(zeros(env))
    assert env.agents == []
    assert [a for a, done in terminated.items() if done] == [f"runner_{ends_at - 1}"]
    assert [a for a, cut in truncated.items() if cut] == [f"runner_{i}" for i in range(ends_at, 4)]
    env.reset()
    assert core.resets == 2 and len(env.agents) == 4


def test_spawned_agents_count_towards_the_termination_rule():
    env = PettingZooParallelEnv(Probe((1, 0), (), spawn_at=1, seed=0), termination_mode="majority")
    env.reset()
    env.step(zeros(env))  # runner_0 finished, runner_2 spawned: 1 of 3 is not a majority
    assert env.agents == ["runner_1", "runner_2"]


def test_a_termination_mode_set_mid_episode_applies_from_the_next_step():
    env = PettingZooParallelEnv(Probe((1, 0), (0,), seed=0), termination_mode="all")
    env.reset()
    env.step(zeros(env))  # runner_0 finished: 1 of 3 does not end an "all" episode
    assert env.agents == ["runner_1", "walker_2"]
    env.termination_mode = "any"
    # No agent finishes in this step, yet 1 of 3 has finished, which ends an "any" episode.
    _, _, terminated, truncated, _ = env.step(zeros(env))
    assert env.agents == []
    assert truncated == {"runner_1": True, "walker_2": True}
    assert terminated == {"runner_1": False, "walker_2": False}


def test_max_cycles_truncates_every_live_agent_and_is_writable():
    env = PettingZooParallelEnv(Probe((0, 0), (0,), seed=0), max_cycles=3)
    assert env.max_cycles == 3
    env.max_cycles = 2
    env.reset()
    env.step(zeros(env))
    assert env.cycles == 1
    _, _, terminated, truncated, _ = env.step(zeros(env))
    assert all(truncated.values()) and not any(terminated.values()) and env.agents == []
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="max_cycles"):
            env.max_cycles = bad
    env.max_cycles = None
    env.reset()
    for _ in range(5):
        env.step(zeros(env))
    env.termination_mode = "any"
    assert env.termination_mode == "any"


# ---------------------------------------------------------------------- masks, infos, state


def test_mlagents_defect_mask_polarity_one_means_allowed():
    """ML-Agents' wrapper passed the core's mask (True = NOT allowed) through unchanged."""
    env = PettingZooParallelEnv(MaskedProbe((0, 0), (0,), seed=0))
    obs, _ = env.reset()
    space = env.observation_space("runner_1")
    assert isinstance(space, spaces.Dict) and set(space.spaces) == {"observation", "action_mask"}
    assert space["action_mask"] == spaces.Box(0, 1, (3,), np.int8)
    mask = obs["runner_1"]["action_mask"]
    assert mask.dtype == np.int8 and mask.tolist() == [1, 1, 0]
    assert obs["runner_0"]["action_mask"].tolist() == [1, 1, 1]
    assert space.contains(obs["runner_1"])
    assert not isinstance(env.observation_space("walker_2"), spaces.Dict)  # continuous
    action = env.action_space("runner_1").sample(mask=mask)
    assert action in (0, 1)


def test_masks_are_flattened_over_branches_and_can_go_to_the_info():
    env = PettingZooParallelEnv(MaskedProbe((0, 0), (), branches=(3, 2), seed=0), mask_in_info=True)
    obs, infos = env.reset()
    assert env.observation_space("runner_1") == spaces.Box(-np.inf, np.inf, (3,), np.float32)
    assert infos["runner_1"]["action_mask"].tolist() == [1, 1, 0, 1, 1]
    _, _, _, _, infos = env.step({"runner_0": np.array([0, 0]), "runner_1": np.array([1, 1])})
    assert infos["runner_1"]["action_mask"].dtype == np.int8
    assert set(infos["runner_0"]) == {"decided", "group_id", "group_reward", "action_mask"}


def test_mask_detection_follows_the_core():
    assert not isinstance(PettingZooParallelEnv(Tag()).observation_space("runner_0"), spaces.Dict)
    grid = PettingZooParallelEnv(GridWorld(n_agents=1))
    assert grid.observation_space("gridworld_0")["action_mask"].shape == (5,)
    forced = PettingZooParallelEnv(Tag(), action_masks=True)
    assert forced.observation_space("tagger_4")["action_mask"].shape == (5,)
    off = PettingZooParallelEnv(GridWorld(n_agents=1), action_masks=False)
    assert "action_mask" not in off.observation_space("gridworld_0").spaces


def test_group_rewards_reach_the_info():
    env = PettingZooParallelEnv(Probe((0, 0), (0,), seed=0))
    env.reset()
    _, _, _, _, infos = env.step(zeros(env))
    assert infos["runner_1"] == {"decided": True, "group_id": 1, "group_reward": 0.5}
    assert infos["walker_2"] == {"decided": True, "group_id": 0, "group_reward": 0.0}
    assert infos["runner_0"] is not infos["runner_1"]  # every agent has its own dict


def test_state_is_the_cores_global_state_where_it_has_one():
    core = Tag(seed=0)
    env = PettingZooParallelEnv(core)
    assert env.state_space == spaces.Box(-np.inf, np.inf, core.global_state_shape, np.float32)
    env.reset(seed=0)
    env.step(zeros(env))
    state = env.state()
    np.testing.assert_array_equal(state, core.global_state())
    assert env.state_space.contains(state)


def test_state_concatenates_observations_with_finished_agents_zeroed():
    env = PettingZooParallelEnv(Probe((1, 0), (0,), spawn_at=1, seed=0))
    assert env.state_space.shape == (9,)  # 3 agents at reset x 3 values
    obs, _ = env.reset()
    np.testing.assert_array_equal(
        env.state(), np.concatenate([obs["runner_0"], obs["runner_1"], obs["walker_2"]])
    )
    obs, *_ = env.step(zeros(env))  # runner_0 finished, runner_3 spawned (not in the state)
    expected = np.concatenate([np.zeros(3), obs["runner_1"], obs["walker_2"]])
    np.testing.assert_array_equal(env.state(), expected)
    assert env.state().dtype == np.float32 and env.state_space.contains(env.state())


def test_state_space_bounds_follow_the_observation_spaces():
    env = PettingZooParallelEnv(GridWorld(n_agents=2, seed=0), uint8_visual=True)
    space = env.state_space
    assert space.shape == (2 * (5 * 5 * 3 + 2),)
    assert space.high[0] == 255 and space.low[0] == 0 and space.high[75] == np.inf
    env.reset(seed=0)
    assert space.contains(env.state())


# ---------------------------------------------------------------------- render, close, channels


def test_render_close_and_side_channels():
    channel = EngineConfigurationChannel()
    core = Probe(seed=0, side_channels=[channel])
    env = PettingZooParallelEnv(core, render_mode="rgb_array")
    assert env.metadata["render_modes"] == ["rgb_array", "human"] and env.render_mode == "rgb_array"
    assert env.side_channels == [channel] and env.side_channels[0] is channel
    assert env.core is core
    env.reset()
    env.step(zeros(env))
    frame = env.render()
    assert frame.shape == (4, 6, 3) and frame.dtype == np.uint8 and frame[0, 0, 0] == 1
    env.close()
    env.close()
    assert core.closed_calls == 1
    with pytest.raises(EnvClosedError):
        env.reset()
    with pytest.raises(EnvClosedError):
        env.render()


def test_render_modes_are_checked_at_construction():
    with pytest.raises(ValueError, match="render_mode in \\[None, 'rgb_array', 'human'\\].*'ansi'"):
        PettingZooParallelEnv(Probe(), render_mode="ansi")

    class Blind(Probe):
        _render = BatchedEnv._render  # not implemented

    assert PettingZooParallelEnv(Blind()).metadata["render_modes"] == []
    with pytest.raises(ValueError, match="render_mode"):
        PettingZooParallelEnv(Blind(), render_mode="rgb_array")
    env = PettingZooParallelEnv(Probe())
    env.reset()
    with pytest.warns(UserWarning, match="render_mode=None"):
        assert env.render() is None


def test_step_before_reset_and_after_close():
    env = PettingZooParallelEnv(Probe())
    with pytest.raises(EnvNotResetError):
        env.step({})
    env.close()
    with pytest.raises(EnvClosedError):
        env.step({})


def test_mlagents_defect_pettingzoo_1_24_api():
    """ML-Agents' wrapper broke on PettingZoo >= 1.24: reset had no seed/options, no infos."""
    env = PettingZooParallelEnv(Probe((0,), (0,), seed=0))
    result = env.reset(seed=1, options={"anything": 1})
    assert isinstance(result, tuple) and len(result) == 2
    result = env.step(zeros(env))
    assert len(result) == 5 and all(isinstance(part, dict) for part in result)
    assert type(env).observation_space is not ParallelEnv.observation_space
    assert type(env).action_space is not ParallelEnv.action_space


# ---------------------------------------------------------------------- equivalence, determinism


def test_multi_step_determinism_under_a_seed():
    """PettingZoo's parallel_seed_test stops after one step; this runs whole episodes."""

    def rollout():
        env = PettingZooParallelEnv(
            Tag(spawn_every=5, tag_radius=0.3, max_steps=50), termination_mode="majority"
        )
        data = []
        for episode in range(2):
            obs, infos = env.reset(seed=7 + episode)
            for agent in env.agents:
                env.action_space(agent).seed(1)
            data.append((obs, infos))
            while env.agents:
                actions = {a: env.action_space(a).sample() for a in env.agents}
                data.append((actions, *env.step(actions)))
        return data

    first, second = rollout(), rollout()
    assert len(first) > 20
    assert data_equivalence(first, second)


def test_an_older_generation_core_is_adopted():
    """A core written against mlagents_envs 0.16 works through the compat layer."""
    old = OldWalkers("discrete", n_agents=2)
    env = PettingZooParallelEnv(old)
    obs, _ = env.reset()
    assert env.agents == ["walker_10", "walker_11"]
    assert env.action_space("walker_10") == spaces.MultiDiscrete([3, 2])
    assert obs["walker_11"]["observation"].tolist() == [0.0, 0.0, 11.0, 0.0, 1.0]
    assert obs["walker_11"]["action_mask"].tolist() == [1, 1, 1, 1, 1]
    env.step({"walker_10": np.array([2, 1]), "walker_11": np.array([0, 0])})
    # The old env presents rows in descending id order and takes a plain int32 ndarray.
    assert old.received[-1].tolist() == [[0, 0], [2, 1]]
    env.close()
    assert old.closed_calls == 1


# ---------------------------------------------------------------------- spawn at the episode end


def test_an_agent_spawned_in_the_last_step_is_not_part_of_the_episode():
    """runner_3 spawns in step 2, which max_cycles makes the last: it never joins the episode.

    PettingZoo's contract (``parallel_api_test``): every agent in a step's outputs was live
    before it or is in ``agents`` after it, and once ``agents`` is empty every possible agent
    has finished. An agent that joined and was truncated in one step breaks both.
    """
    env = PettingZooParallelEnv(Probe((0, 0), (0,), spawn_at=2, seed=0), max_cycles=2)
    env.reset()
    env.step(zeros(env))
    obs, rewards, terminated, truncated, infos = env.step(zeros(env))
    assert env.core.get_steps(RUNNER)[0].agent_id.tolist() == [0, 1, 3]  # the core spawned it
    everyone = ["runner_0", "runner_1", "walker_2"]
    for out in (obs, rewards, terminated, truncated, infos):
        assert sorted(out) == everyone
    assert truncated == dict.fromkeys(everyone, True) and not any(terminated.values())
    assert rewards == {"runner_0": 1.0, "runner_1": 2.0, "walker_2": 10.0}
    assert env.agents == [] and env.possible_agents == everyone
    env.reset()
    assert env.possible_agents == everyone


def test_an_agent_spawned_when_the_termination_rule_fires_is_not_part_of_the_episode():
    env = PettingZooParallelEnv(Probe((1, 0), (), spawn_at=1, seed=0), termination_mode="any")
    env.reset()
    obs, rewards, terminated, truncated, _ = env.step(zeros(env))
    # runner_0 finished ("any" ends the episode) in the step runner_2 spawned.
    assert env.core.get_steps(RUNNER)[0].agent_id.tolist() == [0, 1, 2]
    assert terminated == {"runner_0": True, "runner_1": False}
    assert truncated == {"runner_0": False, "runner_1": True}
    assert rewards == {"runner_0": 1.0, "runner_1": 2.0} and sorted(obs) == sorted(rewards)
    assert env.agents == [] and env.possible_agents == ["runner_0", "runner_1"]


def test_tag_spawning_into_a_freed_slot_in_the_last_step_keeps_pettingzoos_contract():
    """The seeded trajectory that made ``parallel_api_test[tag-spawn-no_restart]`` flaky.

    Runner 2 is tagged and leaves (restart_tagged=False); its slot is free, so at the last
    step (max_cycles, an even core step: spawn_every=2) the core spawns runner 6 into it.
    """
    core = Tag(seed=0, spawn_every=2, restart_tagged=False, tag_radius=0.3, max_spawned=1)
    env = PettingZooParallelEnv(core, max_cycles=20)
    obs, _ = env.reset(seed=4)
    for _, action_space in env.behavior_spaces().values():
        action_space.seed(4)
    live, finished = set(env.agents), set()
    while env.agents:
        actions = {a: env.action_space(a).sample() for a in env.agents}
        step = env.step(actions)
        live |= set(env.agents)
        for out in step:
            assert set(out) == live, f"step {env.cycles}: {sorted(set(out) ^ live)}"
        finished |= {a for a in live if step[2][a] or step[3][a]}
        live -= finished
        assert set(env.agents) == live
    runners = core.get_steps(RUNNER)[0].agent_id.tolist()
    assert env.cycles == 20 and 6 in runners and "runner_6" not in env.possible_agents
    assert finished == set(env.possible_agents)


def test_the_class_example_step():
    """The example the class docstring carried: one step, a runner's reward, a tagger waits."""
    env = PettingZooParallelEnv(Tag(seed=0), termination_mode="any")
    env.reset(seed=1)
    _, rewards, _, _, infos = env.step(dict.fromkeys(env.agents, 0))
    assert round(rewards["runner_0"], 2) == 0.01
    assert rewards["tagger_3"] == 0.0 and infos["tagger_3"]["decided"] is False
