"""BehaviorVectorEnv: Gymnasium's vector conventions, checked against the raw core."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector.utils import batch_space

from zooport.adapters.gym_env import GymEnv
from zooport.adapters.registration import make_vector_env, register_builtin_envs
from zooport.adapters.vector_env import SAME_STEP, BehaviorVectorEnv
from zooport.cli.bench.trivial_core import TrivialCore
from zooport.envs import BatchedEnv, StepResult
from zooport.envs.base_env import (
    ActionSpec,
    ActionTuple,
    BehaviorSpec,
)
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.builtin.grid_world import GridWorld
from zooport.envs.side_channel.float_properties_channel import FloatPropertiesChannel
from zooport.errors import ArgumentTypeError, EnvClosedError, ObservationError, SpecError

from tests.support.counters import Counters, by_agent
from tests.support.specs import obs_spec

#: gymnasium 1.0 has no AutoresetMode: SyncVectorEnv cannot autoreset in the same step and
#: RecordEpisodeStatistics assumes next-step autoreset.
needs_autoreset_mode = pytest.mark.skipif(
    not hasattr(gym.vector, "AutoresetMode"), reason="gymnasium < 1.1 has no AutoresetMode"
)


# ---------------------------------------------------------------------- spaces


@pytest.mark.parametrize(
    "make, single_obs, single_act",
    [
        (
            lambda: BallBalance(n_agents=3, seed=0),
            spaces.Box(-np.inf, np.inf, (8,), np.float32),
            spaces.Box(-1.0, 1.0, (2,), np.float32),
        ),
        (
            lambda: Counters(seed=0),
            spaces.Box(-np.inf, np.inf, (2,), np.float32),
            spaces.Discrete(3),
        ),
        (
            lambda: GridWorld(n_agents=3, seed=0),
            spaces.Dict(
                camera=spaces.Box(0.0, 1.0, (5, 5, 3), np.float32),
                goal=spaces.Box(-np.inf, np.inf, (2,), np.float32),
            ),
            spaces.Discrete(5),
        ),
    ],
)
def test_spaces_are_gymnasiums_batched_spaces(make, single_obs, single_act):
    envs = BehaviorVectorEnv(make())
    assert envs.num_envs == 3
    assert envs.single_observation_space == single_obs
    assert envs.single_action_space == single_act
    assert envs.observation_space == batch_space(single_obs, 3)
    assert envs.action_space == batch_space(single_act, 3)
    obs, _ = envs.reset(seed=0)
    assert envs.observation_space.contains(obs)
    envs.action_space.seed(0)
    obs, *_ = envs.step(envs.action_space.sample())
    assert envs.observation_space.contains(obs)
    envs.close()


def test_space_options_reach_the_layouts():
    envs = BehaviorVectorEnv(GridWorld(n_agents=2, seed=0), uint8_visual=True)
    assert envs.single_observation_space["camera"] == spaces.Box(0, 255, (5, 5, 3), np.uint8)
    obs, _ = envs.reset(seed=1)
    assert obs["camera"].dtype == np.uint8 and obs["camera"].shape == (2, 5, 5, 3)
    spec = BehaviorSpec([obs_spec((2,), "a")], ActionSpec.create_discrete((2, 3)))

    class Branched(Counters):
        def __init__(self):
            BatchedEnv.__init__(self, seed=0)
            self._add_behavior("C", spec, 2)
            self.count = np.zeros(2, np.float32)
            self.lengths = np.full(2, 100.0, np.float32)
            self.closes = 0

        def _step(self, actions):
            self.applied = actions["C"].discrete.copy()
            return {"C": StepResult(np.zeros(2, np.float32), np.zeros(2, bool))}

        def _action_mask(self, behavior, slots):
            return None

    flat = BehaviorVectorEnv(Branched(), flatten_branched=True)
    assert flat.single_action_space == spaces.Discrete(6)
    flat.reset()
    flat.step(np.array([5, 1]))
    assert flat.core.applied.tolist() == [[1, 2], [0, 1]]
    flat.close()
    envs.close()


def test_metadata_is_per_instance_and_declares_same_step():
    a, b = BehaviorVectorEnv(Counters(seed=0)), BehaviorVectorEnv(Counters(seed=0))
    assert a.metadata["autoreset_mode"] == SAME_STEP
    mode = getattr(gym.vector, "AutoresetMode", None)
    assert SAME_STEP == (mode.SAME_STEP if mode is not None else "SameStep")
    a.metadata["extra"] = 1
    assert "extra" not in b.metadata and "extra" not in gym.vector.VectorEnv.metadata


def test_autoreset_mode_is_an_attribute_as_on_gymnasiums_vector_envs():
    """TorchRL's GymWrapper reads ``env.autoreset_mode``, as Sync/AsyncVectorEnv have it."""
    envs = gym.make_vec(
        "zooport/BallBalance-v0", num_envs=2, vectorization_mode="vector_entry_point"
    )
    assert envs.autoreset_mode is envs.metadata["autoreset_mode"] is SAME_STEP
    if hasattr(gym.vector, "AutoresetMode"):  # gymnasium >= 1.1
        sync = gym.vector.SyncVectorEnv(
            [lambda: gym.make("CartPole-v1")], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
        )
        assert envs.autoreset_mode == sync.autoreset_mode
        sync.close()
    envs.close()


# ---------------------------------------------------------------------- info and autoreset


def test_info_keys_have_all_true_masks_and_masks_are_allowed_polarity():
    envs = BehaviorVectorEnv(Counters(lengths=(4, 4, 4), seed=0))
    _, info = envs.reset(seed=0)
    for key in ("decided", "group_id", "group_reward", "action_mask"):
        assert info[f"_{key}"].dtype == bool and info[f"_{key}"].all(), key
        assert len(info[key]) == 3
    assert info["action_mask"].dtype == np.int8
    assert info["action_mask"].tolist() == [[1, 1, 1]] * 3  # count 0: all allowed
    assert info["group_id"].tolist() == [7, 7, 7]
    _, reward, _, _, info = envs.step(np.zeros(3, int))
    assert info["action_mask"].tolist() == [[1, 1, 0]] * 3  # count 1: action 2 masked
    assert info["group_reward"].tolist() == [0.5] * 3
    assert reward.dtype == np.float32 and reward.tolist() == [4.0] * 3
    np.testing.assert_array_equal(envs.action_masks(), info["action_mask"])
    assert "final_obs" not in info and "final_info" not in info


def test_same_step_final_obs_and_final_info_follow_gymnasium():
    envs = BehaviorVectorEnv(Counters(lengths=(1, 2, 3), seed=0))
    envs.reset(seed=0)
    _, reward, terminated, truncated, info = envs.step(np.zeros(3, int))
    assert terminated.tolist() == [True, False, False] and not truncated.any()
    assert reward.tolist() == [1.0, 2.0, 3.0]  # the terminal reward is kept
    assert info["_final_obs"].tolist() == [True, False, False]
    assert info["final_obs"].dtype == object
    assert info["final_obs"][0].tolist() == [1.0, 1.0]
    assert info["final_obs"][1] is None and info["final_obs"][2] is None
    assert info["_final_info"].tolist() == [True, False, False]
    final = info["final_info"]
    assert final["_group_reward"].tolist() == [True, False, False]
    assert final["group_reward"].tolist() == [0.5, 0.0, 0.0]
    assert final["group_id"].tolist() == [7, 0, 0]
    obs, _, terminated, _, info = envs.step(np.zeros(3, int))
    # Slot 0 restarted in the same step, then ended again; its obs is the next episode's.
    assert obs.tolist() == [[0.0, 1.0], [0.0, 2.0], [2.0, 3.0]]
    assert terminated.tolist() == [True, True, False]
    assert [o.tolist() if o is not None else None for o in info["final_obs"]] == [
        [1.0, 1.0], [2.0, 2.0], None,
    ]  # fmt: skip


@pytest.mark.parametrize("reorder", [False, True])
def test_slot_data_equal_the_raw_cores_for_the_same_seed_and_actions(reorder):
    """BallBalance, short episodes: terminal falls, time-limit truncation, same-step restarts."""
    n, name = 6, "BallBalance"
    raw = BallBalance(n_agents=n, seed=5, max_steps=15)
    envs = BehaviorVectorEnv(BallBalance(n_agents=n, seed=5, max_steps=15, reorder_agents=reorder))
    obs, _ = envs.reset(seed=11)
    raw.reset(seed=11)
    decision, _ = raw.get_steps(name)
    ids = envs.agent_ids.tolist()
    np.testing.assert_array_equal(obs, np.stack([by_agent(decision)[i] for i in ids]))
    rng = np.random.default_rng(0)
    ended = {"terminated": 0, "truncated": 0}
    for _ in range(60):
        # Mostly one way: balls fall (terminated) as well as time out (truncated).
        actions = rng.uniform(0.3, 1, (n, 2)).astype(np.float32)
        obs, reward, terminated, truncated, info = envs.step(actions)
        decision, _ = raw.get_steps(name)
        rows = [decision.agent_id_to_index[i] for i in ids]
        raw.set_actions(name, ActionTuple(continuous=_in_rows(actions, rows)))
        raw.step()
        decision, terminal = raw.get_steps(name)
        dec_obs, term_obs = by_agent(decision), by_agent(terminal)
        term_reward = by_agent(terminal, terminal.reward)
        dec_reward = by_agent(decision, decision.reward)
        interrupted = by_agent(terminal, terminal.interrupted)
        for slot, agent in enumerate(ids):
            np.testing.assert_array_equal(obs[slot], dec_obs[agent])
            if agent in term_obs:
                assert info["_final_obs"][slot]
                np.testing.assert_array_equal(info["final_obs"][slot], term_obs[agent])
                assert reward[slot] == term_reward[agent]
                assert truncated[slot] == interrupted[agent]
                assert terminated[slot] == (not interrupted[agent])
                ended["truncated" if interrupted[agent] else "terminated"] += 1
            else:
                assert not info.get("_final_obs", np.zeros(n, bool))[slot]
                assert reward[slot] == dec_reward[agent]
                assert not terminated[slot] and not truncated[slot]
    assert ended["terminated"] and ended["truncated"]  # both kinds of ending were compared


def _in_rows(actions, rows):
    """Slot-ordered actions re-ordered into the core's decision rows."""
    out = np.empty_like(actions)
    out[rows] = actions
    return out


@needs_autoreset_mode
def test_equivalent_to_sync_vector_env_over_one_agent_gym_envs():
    """One core with N agents == Gymnasium's SyncVectorEnv (SAME_STEP) over N GymEnvs."""
    lengths = (2, 3, 5)
    ours = BehaviorVectorEnv(Counters(lengths=lengths, seed=0))
    peer = gym.vector.SyncVectorEnv(
        [lambda length=length: GymEnv(Counters(lengths=(length,), seed=0)) for length in lengths],
        autoreset_mode=SAME_STEP,
    )
    obs_a, info_a = ours.reset(seed=0)
    obs_b, info_b = peer.reset(seed=0)
    np.testing.assert_array_equal(obs_a, obs_b)
    np.testing.assert_array_equal(info_a["action_mask"], info_b["action_mask"])
    for t in range(9):
        actions = np.array([t % 2, 0, 1])
        obs_a, r_a, term_a, trunc_a, info_a = ours.step(actions)
        obs_b, r_b, term_b, trunc_b, info_b = peer.step(actions)
        np.testing.assert_array_equal(obs_a, obs_b)
        np.testing.assert_array_equal(r_a, r_b)
        np.testing.assert_array_equal(term_a, term_b)
        np.testing.assert_array_equal(trunc_a, trunc_b)
        np.testing.assert_array_equal(info_a["action_mask"], info_b["action_mask"])
        assert ("final_obs" in info_a) == ("final_obs" in info_b)
        if "final_obs" in info_b:
            np.testing.assert_array_equal(info_a["_final_obs"], info_b["_final_obs"])
            np.testing.assert_array_equal(info_a["_final_info"], info_b["_final_info"])
            for a, b in zip(info_a["final_obs"], info_b["final_obs"], strict=True):
                assert (a is None) == (b is None)
                if a is not None:
                    np.testing.assert_array_equal(a, b)
            final_b = info_b["final_info"]
            for key in ("group_id", "group_reward"):
                mask = final_b[f"_{key}"]
                np.testing.assert_array_equal(info_a["final_info"][f"_{key}"], mask)
                np.testing.assert_array_equal(info_a["final_info"][key][mask], final_b[key][mask])
    peer.close()


@needs_autoreset_mode
def test_gymnasium_vector_wrappers_run_on_it():
    from gymnasium.wrappers.vector import (
        ClipReward,
        DictInfoToList,
        NormalizeReward,
        RecordEpisodeStatistics,
    )

    envs = RecordEpisodeStatistics(BehaviorVectorEnv(Counters(lengths=(2, 3), seed=0)))
    envs = DictInfoToList(ClipReward(envs, min_reward=0.0, max_reward=2.5))
    envs.reset(seed=0)
    episodes = []
    for _ in range(6):
        _, reward, _, _, infos = envs.step(np.zeros(2, int))
        assert reward.tolist() == [2.0, 2.5]  # clipped from [2, 3]
        episodes += [(i, info["episode"]["r"], info["episode"]["l"])
                     for i, info in enumerate(infos) if "episode" in info]  # fmt: skip
    # SAME_STEP: every step counts; returns are the unclipped rewards (stats are inside).
    assert [(i, float(r), int(n)) for i, r, n in episodes] == [
        (0, 4.0, 2), (1, 9.0, 3), (0, 4.0, 2), (0, 4.0, 2), (1, 9.0, 3),
    ]  # fmt: skip
    normalized = NormalizeReward(BehaviorVectorEnv(Counters(seed=0)))
    normalized.reset(seed=0)
    _, reward, *_ = normalized.step(np.zeros(3, int))
    assert reward.shape == (3,) and np.all(np.isfinite(reward))


# ---------------------------------------------------------------------- decisions and agents


def test_decision_period_three_keeps_obs_zero_reward_then_the_summed_reward():
    # Slot 0 ends at count 4 and restarts out of phase with slot 1 (period 3).
    envs = BehaviorVectorEnv(Counters(lengths=(4, 100), period=3, seed=0))
    core = envs.core
    envs.reset(seed=0)
    obs, reward, _, _, info = envs.step(np.array([1, 1]))  # 3 core steps until both decide
    assert reward.tolist() == [12.0, 300.0] and info["decided"].tolist() == [True, True]
    obs, reward, terminated, _, info = envs.step(np.array([2, 2]))  # slot 0 ends at count 4
    assert terminated.tolist() == [True, False] and reward.tolist() == [4.0, 0.0]
    assert info["decided"].tolist() == [True, False]
    assert obs[1].tolist() == [3.0, 100.0]  # slot 1 kept its last decision's observation
    obs, reward, _, _, info = envs.step(np.array([0, 0]))  # slot 1's action is ignored
    assert info["decided"].tolist() == [False, True] and core.applied[1] == 2
    assert reward.tolist() == [0.0, 300.0]  # slot 1's two undecided steps arrive summed
    assert obs[0].tolist() == [0.0, 4.0]  # slot 0 kept its next episode's first observation


def test_infos_from_reset_and_from_a_core_reset_are_not_the_adapters_buffers():
    envs = BehaviorVectorEnv(Counters(lengths=(4, 100), period=3, seed=0))
    _, reset_info = envs.reset(seed=0)
    envs.step(np.array([1, 1]))
    envs.step(np.array([2, 2]))  # slot 1 has no decision: the adapter's decided changes
    assert reset_info["decided"].tolist() == [True, True]
    # A core without restarts is reset inside the step that ends the last episode.
    envs = BehaviorVectorEnv(Counters(lengths=(1, 1), restart=False, seed=0))
    envs.reset(seed=0)
    _, _, terminated, _, info = envs.step(np.zeros(2, int))
    assert terminated.tolist() == [True, True] and info["decided"].tolist() == [True, True]
    envs.unwrapped._slots.decided[:] = False  # what a later step with no decisions writes
    assert info["decided"].tolist() == [True, True]


def test_an_agent_count_change_is_a_clear_error():
    envs = BehaviorVectorEnv(Counters(lengths=(100, 100), spawn_at=2, seed=0))
    envs.reset(seed=0)
    envs.step(np.zeros(2, int))
    with pytest.raises(SpecError, match="not there at reset"):
        envs.step(np.zeros(2, int))


def test_agents_that_are_not_restarted_idle_until_every_episode_is_over():
    envs = BehaviorVectorEnv(Counters(lengths=(1, 3), restart=False, seed=0))
    envs.reset(seed=0)
    obs, reward, terminated, _, info = envs.step(np.zeros(2, int))
    assert terminated.tolist() == [True, False]
    assert obs[0].tolist() == [1.0, 1.0] and info["decided"].tolist() == [False, True]
    obs, reward, terminated, _, info = envs.step(np.zeros(2, int))
    assert reward.tolist() == [0.0, 3.0] and not terminated.any()
    assert info["decided"].tolist() == [False, True]
    obs, reward, terminated, _, info = envs.step(np.zeros(2, int))
    # The last agent ends: the core is reset in the same step (SAME_STEP for every slot).
    assert terminated.tolist() == [False, True] and reward.tolist() == [0.0, 3.0]
    assert info["final_obs"][1].tolist() == [3.0, 3.0]
    assert obs.tolist() == [[0.0, 1.0], [0.0, 3.0]]
    assert info["decided"].tolist() == [True, True]


# ---------------------------------------------------------------------- lifecycle


def test_reset_seeds_the_core():
    envs = BehaviorVectorEnv(BallBalance(n_agents=4))
    first, _ = envs.reset(seed=3)
    envs.step(np.ones((4, 2)))
    again, _ = envs.reset(seed=3)
    other, _ = envs.reset(seed=4)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    # Options follow every adapter's rule: a dict with str keys, which the core does not use.
    np.testing.assert_array_equal(envs.reset(seed=3, options={"x": 1})[0], first)
    with pytest.raises(ArgumentTypeError, match="expected options to be None or a dict"):
        envs.reset(options=5)


def test_returned_arrays_are_fresh():
    envs = BehaviorVectorEnv(Counters(seed=0))
    obs, info = envs.reset(seed=0)
    obs[:] = -1
    info["action_mask"][:] = 0
    obs2, *_, info2 = envs.step(np.zeros(3, int))
    assert (obs2 >= 0).all() and info2["action_mask"][:, 0].all()


def test_info_masks_are_read_only_so_one_array_serves_every_key():
    envs = BehaviorVectorEnv(TrivialCore(4, seed=0), "Trivial")
    _, info = envs.reset(seed=0)
    while True:
        *_, terminated, truncated, info = envs.step(np.zeros((4, 2), np.float32))
        for key in ("_decided", "_group_id", "_group_reward"):
            assert info[key].all() and not info[key].flags.writeable
        if (terminated | truncated).any():
            break
    final = [info["_final_obs"], info["_final_info"], *info["final_info"].values()]
    np.testing.assert_array_equal(info["_final_obs"], terminated | truncated)
    with pytest.raises(ValueError, match="read-only"):
        info["_decided"][0] = False  # a write raises: it can never reach a later step's info
    assert not any(mask.flags.writeable for mask in final[:2] + final[3::2])


def test_a_batched_env_whose_observe_hook_breaks_the_spec_is_still_an_observation_error():
    class Narrow(TrivialCore):
        def _observe(self, behavior, slots):
            return [self._state[slots][:, :3]]

    with pytest.raises(ObservationError, match=r"has shape \(4, 3\), expected \(4, 4\)"):
        BehaviorVectorEnv(Narrow(4, seed=0), "Trivial")


def test_close_is_idempotent_and_closes_the_core_once():
    envs = BehaviorVectorEnv(Counters(seed=0))
    envs.close()
    envs.close()
    assert envs.closed and envs.core.closes == 1
    with pytest.raises(EnvClosedError):
        envs.step(np.zeros(3, int))
    with pytest.raises(EnvClosedError):
        envs.reset()


def test_render_side_channels_and_core():
    channel = FloatPropertiesChannel()
    core = Counters(seed=0, side_channels=[channel])
    envs = BehaviorVectorEnv(core, render_mode="rgb_array")
    envs.reset(seed=0)
    envs.step(np.zeros(3, int))
    frame = envs.render()
    assert frame.shape == (4, 6, 3) and frame.dtype == np.uint8 and frame[0, 0, 0] == 1
    assert envs.core is core and envs.side_channels == [channel]
    assert BehaviorVectorEnv(Counters(seed=0)).render() is None
    with pytest.raises(ValueError, match="render_mode"):
        BehaviorVectorEnv(Counters(seed=0), render_mode="human")


def test_step_path_has_no_per_agent_python_loop():
    """The number of Python calls per step does not grow with the number of slots."""
    import cProfile
    import pstats

    def calls(n):
        # Episodes of 3 steps: the terminal and restart path runs too.
        envs = BehaviorVectorEnv(Counters(lengths=(3,) * n, seed=0))
        envs.reset(seed=0)
        actions = np.zeros(n, int)
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(5):
            envs.step(actions)
        profile.disable()
        return pstats.Stats(profile).total_calls

    calls(2)  # warms the caches (lru_cache'd dtype limits) that a first call fills
    assert calls(200) == calls(2)


# ---------------------------------------------------------------------- gym.make_vec


def test_make_vec_builds_one_core_with_num_envs_agents():
    register_builtin_envs()
    envs = gym.make_vec(
        "zooport/BallBalance-v0", num_envs=5, vectorization_mode="vector_entry_point", seed=0
    )
    assert isinstance(envs, BehaviorVectorEnv) and envs.num_envs == 5
    assert envs.core.n_agents == 5
    envs.close()
    tag = gym.make_vec("zooport/Tag-v0", num_envs=4, vectorization_mode="vector_entry_point")
    assert tag.behavior_name == "Runner?team=0" and tag.num_envs == 4
    tag.close()
    short = gym.make_vec(
        "zooport/BallBalance-v0", num_envs=2, vectorization_mode="vector_entry_point",
        max_episode_steps=3,
    )  # fmt: skip
    short.reset(seed=0)
    truncated = [short.step(np.zeros((2, 2)))[3].tolist() for _ in range(3)]
    assert truncated == [[False, False], [False, False], [True, True]]


def test_make_vector_env_errors_say_what_was_expected():
    with pytest.raises(ValueError, match="positive int"):
        make_vector_env(num_envs=0, env_id="BallBalance")
    with pytest.raises(TypeError, match="unknown keyword"):
        make_vector_env(num_envs=2, env_id="BallBalance", n_balls=3)
    with pytest.raises(SpecError, match="expected 3 agents"):
        make_vector_env(num_envs=3, env_id="Basic", agent_count_kwarg="seed")


# ---------------------------------------------------------------------- BehaviorSlots fast paths


class Scripted:
    """A BaseEnv that replays scripted steps of behaviour "S" (agents 0, 1, 2), rows in any order.

    Each step is ``(decisions, terminals)``: ``decisions`` maps agent id -> reward,
    ``terminals`` maps agent id -> (reward, interrupted). Observation: ``[agent id, t]``.
    Unlike a BatchedEnv, a restarted agent's decision may carry a reward (as Unity's can).
    """

    spec = BehaviorSpec([obs_spec((2,), "o")], ActionSpec.create_continuous(1))

    def __init__(self, script, reverse_rows):
        self.script, self.reverse, self.t = script, reverse_rows, 0
        self.behavior_specs = {"S": self.spec}
        self._steps = self._make({0: 0.0, 1: 0.0, 2: 0.0}, {})

    def _order(self, ids):
        return sorted(ids, reverse=self.reverse)

    def _make(self, decisions, terminals):
        from zooport.envs.base_env import DecisionSteps, TerminalSteps

        d_ids, t_ids = self._order(decisions), self._order(terminals)
        f32, i32 = np.float32, np.int32
        decision = DecisionSteps(
            [np.array([[i, self.t] for i in d_ids], f32).reshape(-1, 2)],
            np.array([decisions[i] for i in d_ids], f32), np.array(d_ids, i32), None,
            np.zeros(len(d_ids), i32), np.full(len(d_ids), 0.5, f32),
        )  # fmt: skip
        terminal = TerminalSteps(
            [np.array([[i, -self.t] for i in t_ids], f32).reshape(-1, 2)],
            np.array([terminals[i][0] for i in t_ids], f32),
            np.array([terminals[i][1] for i in t_ids], bool), np.array(t_ids, i32),
            np.zeros(len(t_ids), i32), np.full(len(t_ids), 2.0, f32),
        )  # fmt: skip
        return decision, terminal

    def reset(self):
        self.t = 0
        self._steps = self._make({0: 0.0, 1: 0.0, 2: 0.0}, {})

    def step(self):
        self.t += 1
        self._steps = self._make(*self.script[self.t - 1])

    def get_steps(self, name):
        return self._steps

    def set_actions(self, name, action):
        self.last_action = action

    def close(self):
        pass


@pytest.mark.parametrize("reverse_rows", [False, True])
def test_behavior_slots_carry_restarts_and_partial_decisions_by_hand(reverse_rows):
    """Exercises BehaviorSlots' all-decided fast paths (rows in slot order) and its general
    path (reversed rows) against hand-computed values, including a carried restart reward."""
    from zooport.adapters.behavior_slots import BehaviorSlots

    every = {0: 1.0, 1: 1.0, 2: 1.0}
    script = [
        ({0: 1.0, 1: 2.0, 2: 3.0}, {}),
        ({0: 1.0, 1: 0.5, 2: 1.0}, {1: (5.0, False)}),  # 1 restarts; its 0.5 is carried
        # 1 ends again with its carry; 0 and 2 restart with rewards carried in turn.
        ({0: 0.25, 1: 2.0, 2: 0.75}, {0: (7.0, False), 1: (6.0, False), 2: (8.0, True)}),
        ({1: 3.0}, {}),  # only agent 1 decides
        (every, {1: (9.0, False)}),  # 0 and 2 bring their carries; 1 restarts with 1.0
        (every, {}),  # 1 brings its carry
        (every, {}),
        ({0: 1.0, 2: 1.0}, {1: (4.0, False)}),  # 1 ends and is not restarted
    ]
    slots = BehaviorSlots(Scripted(script, reverse_rows))
    slots.reset()
    F, T = False, True
    expected = [  # reward, terminated, truncated, group reward, final slots, decided, obs
        ([1, 2, 3], [F, F, F], [F, F, F], [0.5] * 3, [], [T, T, T], [1, 1, 1]),
        ([1, 5, 1], [F, T, F], [F, F, F], [0.5, 2, 0.5], [1], [T, T, T], [2, 2, 2]),
        ([7, 6.5, 8], [T, T, F], [F, F, T], [2, 2, 2], [0, 1, 2], [T, T, T], [3, 3, 3]),
        ([0, 5, 0], [F, F, F], [F, F, F], [0, 0.5, 0], [], [F, T, F], [3, 4, 3]),
        ([1.25, 9, 1.75], [F, T, F], [F, F, F], [0.5, 2, 0.5], [1], [T, T, T], [5, 5, 5]),
        ([1, 2, 1], [F, F, F], [F, F, F], [0.5] * 3, [], [T, T, T], [6, 6, 6]),
        ([1, 1, 1], [F, F, F], [F, F, F], [0.5] * 3, [], [T, T, T], [7, 7, 7]),
        ([1, 4, 1], [F, T, F], [F, F, F], [0.5, 2, 0.5], [1], [T, F, T], [8, -8, 8]),
    ]
    for t, (reward, terminated, truncated, group, final, decided, obs) in enumerate(
        expected, start=1
    ):
        out = slots.step(np.zeros((3, 1), np.float32))
        assert out.reward.tolist() == reward, t
        assert out.terminated.tolist() == terminated and out.truncated.tolist() == truncated
        assert out.group_reward.tolist() == group, t
        assert out.final_slots.tolist() == final, t
        if final:
            assert out.final_obs.tolist() == [[slot, -t] for slot in final]
        assert out.decided.tolist() == decided, t
        # Undecided slots keep their last observation; an ended one its final observation.
        assert slots.obs.tolist() == [[i, obs[i]] for i in range(3)], t
