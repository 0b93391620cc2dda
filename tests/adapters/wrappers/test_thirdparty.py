"""Wrappers zooport does not rewrite: SuperSuit's and Gymnasium's, on zooport's adapters.

Each is checked for what it is for against the unwrapped adapter, and the PettingZoo ones
with ``parallel_api_test``. Where one does not work on zooport, the test says why (an
``xfail`` with the reason when the fix belongs upstream or in the adapter).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import supersuit
from gymnasium.utils.env_checker import data_equivalence

from zooport.adapters.gym_env import GymEnv
from zooport.adapters.vector_env import BehaviorVectorEnv
from zooport.adapters.wrappers import MessageBus, TeamReward, has_wrapper
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.errors import EnvNotResetError

from tests.support.checkers import check_gym, run_parallel_api_test
from tests.support.wrappers import ball_balance, mini, tag

# ---------------------------------------------------------------------- SuperSuit (PettingZoo)


@pytest.mark.parametrize("factory", [tag, mini])
def test_supersuit_frame_stack(factory):
    env, raw = supersuit.frame_stack_v2(factory(), 3), factory()
    size = raw.observation_space(raw.possible_agents[0]).shape[0]
    assert env.observation_space(env.possible_agents[0]).shape == (3 * size,)
    obs, _ = env.reset(seed=0)
    raw_obs, _ = raw.reset(seed=0)
    for _ in range(3):
        for agent, stacked in obs.items():
            np.testing.assert_array_equal(stacked[-size:], raw_obs[agent])  # newest frame last
        actions = {a: raw.action_space(a).sample() * 0 for a in env.agents}
        obs, *_ = env.step(actions)
        raw_obs, *_ = raw.step(actions)
    run_parallel_api_test(
        supersuit.frame_stack_v2(factory(max_cycles=30) if factory is tag else factory(), 3)
    )


def test_supersuit_pad_observations():
    env = supersuit.pad_observations_v0(mini(n_prey=3))  # hunters see 3 prey, prey 2 hunters
    assert env.observation_space("prey_0").shape == env.observation_space("hunter_0").shape == (14,)
    obs, _ = env.reset(seed=0)
    assert not obs["prey_0"][11:].any() and obs["hunter_0"].shape == (14,)
    same = supersuit.pad_observations_v0(tag())  # Tag's behaviours share a size: unchanged
    assert same.observation_space("runner_0").shape == (10,)
    run_parallel_api_test(supersuit.pad_observations_v0(tag(max_cycles=30)))


def test_supersuit_black_death_keeps_finished_agents_with_zero_observations():
    env = supersuit.black_death_v3(tag(tag_radius=0.85))  # runner_0 is tagged in step 1
    env.reset(seed=0)
    _, _, terms, _, _ = env.step(dict.fromkeys(env.agents, 0))
    assert "runner_0" in env.agents  # SuperSuit reports the black-death agent as not done
    obs, rewards, *_ = env.step(dict.fromkeys(env.agents, 0))
    assert not obs["runner_0"].any() and rewards["runner_0"] == 0.0
    assert obs["runner_1"].any()


@pytest.mark.xfail(
    strict=True,
    raises=EnvNotResetError,
    reason="SuperSuit's black_death_par ends the episode only when every agent is terminated "
    "AND truncated ((terminations & truncations).all()), so once every agent has finished it "
    "steps the adapter again, and zooport refuses to step an episode without live agents",
)
def test_supersuit_black_death_ends_when_every_agent_finished():
    env = supersuit.black_death_v3(ball_balance(max_cycles=3))
    env.reset(seed=0)
    for _ in range(5):
        env.step(dict.fromkeys(env.agents, np.zeros(2, np.float32)))


def test_supersuit_frame_skip_on_a_non_zooport_env():
    env, raw = supersuit.frame_skip_v0(mini(), 2), mini()
    env.reset(seed=0)
    raw.reset(seed=0)
    actions = {a: np.array([0.5, 0.5], np.float32) if "hunter" in a else 1 for a in env.agents}
    _, rewards, *_ = env.step(actions)
    first, second = raw.step(actions)[1], raw.step(actions)[1]
    assert rewards == {a: first[a] + second[a] for a in first}


def test_supersuit_frame_skip_on_zooport():
    # frame_skip_v0 draws its skip counts from env.unwrapped.np_random, seeded by reset.
    def run():
        env = supersuit.frame_skip_v0(tag(), (1, 3))
        env.reset(seed=0)
        return [env.step(dict.fromkeys(env.agents, 0))[1] for _ in range(5)]

    first, second = run(), run()
    assert first == second
    assert any(r for r in first)


def test_supersuit_normalize_obs_needs_bounds_zooport_does_not_declare():
    # ML-Agents' observation specs carry no bounds, so zooport's Boxes are (-inf, inf): use
    # Gymnasium's running NormalizeObservation (below) or SB3's VecNormalize instead.
    with pytest.raises(AssertionError, match="infinite bounds"):
        supersuit.normalize_obs_v0(tag())


@pytest.mark.parametrize(
    "wrap",
    [
        lambda e: supersuit.clip_reward_v0(e, lower_bound=-0.005, upper_bound=0.005),
        lambda e: supersuit.dtype_v0(e, np.float64),
        supersuit.flatten_v0,
        lambda e: supersuit.sticky_actions_v0(e, 0.25),
        lambda e: supersuit.delay_observations_v0(e, 2),
        supersuit.agent_indicator_v0,
    ],
    ids=[
        "clip_reward",
        "dtype",
        "flatten",
        "sticky_actions",
        "delay_observations",
        "agent_indicator",
    ],
)
def test_other_supersuit_wrappers_pass_the_api_test_on_zooport(wrap):
    run_parallel_api_test(wrap(tag(max_cycles=30)))


def test_supersuit_values_are_what_they_promise_on_zooport():
    env = supersuit.clip_reward_v0(tag(), lower_bound=-0.005, upper_bound=0.005)
    env.reset(seed=0)
    _, rewards, *_ = env.step(dict.fromkeys(env.agents, 0))
    assert rewards["runner_0"] == 0.005  # 0.01 for staying alive, clipped
    env = supersuit.agent_indicator_v0(tag())
    obs, _ = env.reset(seed=0)
    assert obs["runner_0"][-5:].tolist() == [1, 0, 0, 0, 0]  # one-hot over the five agents
    assert obs["tagger_3"][-5:].tolist() == [0, 0, 0, 1, 0]


def test_zooport_and_supersuit_wrappers_compose_both_ways():
    env = TeamReward(supersuit.clip_reward_v0(MessageBus(tag()), lower_bound=-1, upper_bound=1))
    assert has_wrapper(env, MessageBus)
    run_parallel_api_test(TeamReward(supersuit.frame_stack_v2(tag(max_cycles=30), 2)))


# ---------------------------------------------------------------------- Gymnasium


def test_gymnasium_frame_stack_on_gym_env():
    env = gym.wrappers.FrameStackObservation(GymEnv(BallBalance(n_agents=1, seed=0)), 4)
    raw = GymEnv(BallBalance(n_agents=1, seed=0))
    assert env.observation_space.shape == (4, 8)
    obs, _ = env.reset(seed=1)
    raw_obs, _ = raw.reset(seed=1)
    assert all(data_equivalence(frame, raw_obs) for frame in obs)  # padded with the reset obs
    for _ in range(3):
        obs, *_ = env.step(np.array([0.3, -0.3], np.float32))
        raw_obs, *_ = raw.step(np.array([0.3, -0.3], np.float32))
        np.testing.assert_array_equal(obs[-1], raw_obs)
    check_gym(gym.wrappers.FrameStackObservation(GymEnv(BallBalance(n_agents=1, seed=0)), 4))


def test_gymnasium_normalize_observation_on_gym_env():
    env = gym.wrappers.NormalizeObservation(GymEnv(BallBalance(n_agents=1, seed=0)))
    raw = GymEnv(BallBalance(n_agents=1, seed=0))
    env.reset(seed=0)
    raw.reset(seed=0)
    for _ in range(20):
        obs, *_ = env.step(np.zeros(2, np.float32))
        raw_obs, *_ = raw.step(np.zeros(2, np.float32))
    stats = env.obs_rms
    np.testing.assert_allclose(obs, (raw_obs - stats.mean) / np.sqrt(stats.var + 1e-8), rtol=1e-5)
    # No check_env here: running statistics make a second seeded episode differ by design.


def test_gymnasium_vector_wrappers_on_behavior_vector_env():
    envs = gym.wrappers.vector.RecordEpisodeStatistics(
        gym.wrappers.vector.NormalizeReward(
            BehaviorVectorEnv(BallBalance(n_agents=2, seed=0, max_steps=5))
        )
    )
    envs.reset(seed=0)
    for _ in range(5):
        _, _, _, truncated, info = envs.step(np.zeros((2, 2), np.float32))
    assert truncated.all() and info["_episode"].all() and info["episode"]["l"].tolist() == [5, 5]
    # Gymnasium's vector observation wrappers refuse same-step autoreset envs by design (the
    # final observation in the info would stay untransformed): zooport's vector env is one.
    with pytest.raises(ValueError, match="Expected autoreset_mode to be NEXT_STEP or DISABLED"):
        gym.wrappers.vector.NormalizeObservation(BehaviorVectorEnv(BallBalance(n_agents=2)))


def test_sb3_vec_normalize_on_sb3_vec_env():
    vec_env = pytest.importorskip("stable_baselines3.common.vec_env")
    from zooport.adapters.sb3_vec_env import SB3VecEnv

    envs = vec_env.VecNormalize(SB3VecEnv(BallBalance(n_agents=3, seed=0)), norm_reward=False)
    envs.reset()
    for _ in range(10):
        obs, *_ = envs.step(np.zeros((3, 2), np.float32))
    raw = envs.get_original_obs()
    expected = np.clip(
        (raw - envs.obs_rms.mean) / np.sqrt(envs.obs_rms.var + envs.epsilon),
        -envs.clip_obs,
        envs.clip_obs,
    )
    np.testing.assert_allclose(obs, expected, rtol=1e-5)
