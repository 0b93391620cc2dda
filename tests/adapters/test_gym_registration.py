"""gym.make registration: upstream checkers, kwargs routing, SB3 vector envs over the ids."""

from __future__ import annotations

import functools
import re
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

from zooport.adapters.gym_env import GymEnv
from zooport.adapters.registration import (
    GYM_ENTRY_POINT,
    VECTOR_ENTRY_POINT,
    build_core,
    build_pool,
    builtin_envs,
    make_vector_env,
    register_builtin_envs,
    register_gymnasium,
)
from zooport.envs.builtin.basic import Basic
from zooport.envs.registry import default_registry
from zooport.errors import SpecError

from tests.support.checkers import run_allowing

IDS = register_builtin_envs()
SB3_VECTOR_IDS = [i for i in IDS if "Collector" not in i]  # SB3 has no hybrid-action policy

#: Gymnasium check_env warnings allowed for every id, with the reason.
GYM_ALLOWED = (
    # ML-Agents' ObservationSpec carries no bounds, so vector observations are
    # Box(-inf, inf), as ML-Agents' own gym wrapper declares them.
    "A Box observation space minimum value is -infinity",
    "A Box observation space maximum value is infinity",
)
#: SB3 check_env warnings allowed per id, with the reason.
SB3_ALLOWED = {
    # The 5x5 camera stays float32 on purpose: as uint8 SB3 would build a CNN that cannot
    # convolve 5x5 pixels; as a float Box its policies flatten it.
    "zooport/GridWorld-v0": (
        "is an image but its `dtype`",
        "upper and lower bounds are not in [0, 255]",
        "minimal resolution for an image is 36x36",
    ),
    # Issue 3: hybrid actions are a Dict (SB3 has no hybrid policy) and the rank-2
    # variable-size "items" observation is kept, not dropped.
    "zooport/Collector-v0": (
        "action space is not based off a numpy array",
        "has an unconventional shape",
    ),
}


# ---------------------------------------------------------------------- registration


def test_register_builtin_envs_is_idempotent_and_silent():
    # pytest turns warnings into errors: a second registration must not warn.
    assert register_builtin_envs() == IDS
    names = ("Basic", "BallBalance", "GridWorld", "Tag", "Collector", "Soccer")
    assert IDS == [f"zooport/{n}-v0" for n in names]
    assert all(i in gym.registry for i in IDS)


@pytest.mark.parametrize("name", list(builtin_envs()))
def test_specs_come_from_the_registry(name):
    spec = gym.spec(f"zooport/{name}-v0")
    entry = default_registry[name]
    assert spec.entry_point == GYM_ENTRY_POINT
    assert spec.vector_entry_point == VECTOR_ENTRY_POINT
    assert spec.max_episode_steps == entry.load().max_episode_steps
    expected = entry.expected_reward if entry.load().declaration.gym_threshold else None
    assert spec.reward_threshold == expected
    assert spec.kwargs["env_id"] == name
    assert not spec.nondeterministic


@pytest.mark.parametrize("render_mode", [None, "rgb_array"])
@pytest.mark.parametrize("env_id", IDS)
def test_gymnasium_check_env(env_id, render_mode):
    env = gym.make(env_id, render_mode=render_mode)
    allowed = [re.escape(a) for a in GYM_ALLOWED]
    assert run_allowing(allowed, check_env, env.unwrapped) == set(allowed)  # not stale
    if render_mode:
        frame = env.unwrapped.render()
        assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_sb3_check_env(env_id):
    env = gym.make(env_id)
    allowed = [re.escape(a) for a in SB3_ALLOWED.get(env_id, ())]
    assert run_allowing(allowed, sb3_check_env, env) == set(allowed)
    env.close()


# ---------------------------------------------------------------------- kwargs


def test_make_kwargs_reach_the_core_and_the_adapter():
    env = gym.make("zooport/Collector-v0", n_items=3, min_items=1)
    assert env.observation_space["items"].shape == (3, 3)
    env = gym.make("zooport/GridWorld-v0", uint8_visual=True)
    assert env.observation_space["camera"].dtype == np.uint8
    tag = gym.make("zooport/Tag-v0").unwrapped
    assert tag.behavior_name == "Runner?team=0" and tag.core.n_taggers == 1

    short = gym.make("zooport/Basic-v0", max_steps=4)  # the core's own time limit
    short.reset(seed=0)
    flags = [short.step(0)[2:4] for _ in range(4)]
    assert flags == [(False, False)] * 3 + [(False, True)]


def test_rgb_array_list_is_served_by_gymnasium_render_collection():
    env = gym.make("zooport/Basic-v0", render_mode="rgb_array_list")
    env.reset(seed=0)
    env.step(2)
    frames = env.render()
    assert len(frames) == 2 and frames[0].dtype == np.uint8
    assert not np.array_equal(frames[0], frames[1])  # the agent moved


def test_unknown_kwargs_read_as_pythons_type_error_then_name_the_valid_ones():
    # TorchRL's GymEnv retries without frameskip= only on Python's own wording.
    with pytest.raises(TypeError) as error:
        gym.make("zooport/Basic-v0", n_agent=1, frameskip=4)
    message = str(error.value)
    assert message.startswith("Basic() got an unexpected keyword argument 'n_agent' (")
    assert "unknown keyword arguments ['n_agent', 'frameskip']" in message
    assert "'n_agents'" in message and "'flatten_branched'" in message
    with pytest.raises(TypeError, match=r"^Basic\(\) got an unexpected keyword argument 'size'"):
        default_registry["Basic"].make(size=3)


def test_torchrl_gym_env_builds_a_zooport_id_and_steps_as_the_env():
    pytest.importorskip("torchrl")
    import torch
    from torchrl.envs import GymEnv as TorchRLGymEnv
    from torchrl.envs.utils import check_env_specs

    env = TorchRLGymEnv("zooport/Basic-v0")  # passes frameskip=, retries without it
    check_env_specs(env)
    env.set_seed(0)
    expected = gym.make("zooport/Basic-v0")
    obs, _ = expected.reset(seed=0)
    td = env.reset()
    np.testing.assert_array_equal(td["observation"].numpy(), obs)
    for action in [2, 2, 1, 0, 2]:
        td["action"] = torch.nn.functional.one_hot(torch.tensor(action), 3)
        td = env.step(td)["next"]
        obs, reward, *_ = expected.step(action)
        np.testing.assert_array_equal(td["observation"].numpy(), obs)
        assert td["reward"].item() == pytest.approx(reward)
    env.close()


def test_several_agents_through_make_point_to_the_vector_adapters():
    with pytest.raises(SpecError, match="BehaviorVectorEnv"):
        gym.make("zooport/Basic-v0", n_agents=2)


def test_make_vec_sync_mode_uses_the_single_entry_point():
    envs = gym.make_vec("zooport/BallBalance-v0", num_envs=2, vectorization_mode="sync")
    obs, _ = envs.reset(seed=0)
    assert obs.shape == (2, 8)
    assert all(isinstance(e.unwrapped, GymEnv) for e in envs.envs)
    envs.close()


def test_build_core_and_build_pool_split_the_adapter_options_off():
    core, adapter = build_core(
        env_id="Basic",
        options={"n_agents": 2, "render_mode": "rgb_array"},
        adapter_options=("render_mode",),
    )
    assert (core.n_agents, adapter) == (2, {"render_mode": "rgb_array"})
    core.close()
    pool, adapter = build_pool(
        env_id="Basic", options={"n_agents": 2, "seed": 0}, adapter_options=(), workers=2
    )
    assert (pool.num_cores, adapter) == (2, {})
    pool.close()
    core, _ = build_pool(env_id="Basic", options={"n_agents": 2}, adapter_options=(), workers=None)
    assert isinstance(core, Basic) and core.n_agents == 2  # no workers: one core, no pool
    core.close()


def test_make_vector_env_sets_the_agent_count():
    envs = make_vector_env(num_envs=3, env_id="BallBalance", seed=0)
    assert (envs.num_envs, envs.core.n_agents) == (3, 3)
    envs.close()


def test_make_vec_calls_the_vector_entry_point_with_the_registered_kwargs():
    pytest.importorskip("zooport.adapters.vector_env")
    envs = gym.make_vec("zooport/Tag-v0", num_envs=3)
    assert envs.num_envs == 3
    assert envs.unwrapped.core.n_taggers == 1  # the registered defaults arrived
    envs.close()


def test_make_with_the_module_prefix_in_a_fresh_interpreter():
    code = (
        "import gymnasium as gym\n"
        "env = gym.make('zooport:zooport/Basic-v0')\n"
        "obs, _ = env.reset(seed=0)\n"
        "print(type(env.unwrapped).__name__, int(obs.argmax()))\n"
    )
    out = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["GymEnv", "10"]


# ---------------------------------------------------------------------- register_gymnasium


@pytest.fixture
def user_ids():
    ids: list[str] = []
    yield ids
    for env_id in ids:
        gym.registry.pop(env_id, None)


def test_register_gymnasium_with_a_callable(user_ids):
    user_ids.append("tests/Walk-v0")
    register_gymnasium("tests/Walk-v0", Basic, max_episode_steps=50, max_steps=2)
    env = gym.make("tests/Walk-v0")
    assert gym.spec("tests/Walk-v0").max_episode_steps == 50
    env.reset(seed=0)
    env.step(0)
    assert env.step(0)[3] is True  # max_steps=2 reached the core
    assert gym.make("tests/Walk-v0", max_steps=3).unwrapped.core._max_steps == 3


def test_register_gymnasium_with_a_module_attr_string(user_ids):
    user_ids.append("tests/Chase-v0")
    register_gymnasium(
        "tests/Chase-v0",
        "zooport.envs.builtin.tag:Tag",
        behavior_name="Tagger?team=1",
        reward_threshold=1.0,
        n_runners=2,
        n_taggers=1,
    )
    spec = gym.spec("tests/Chase-v0")
    assert spec.entry_point == GYM_ENTRY_POINT and spec.reward_threshold == 1.0
    env = gym.make("tests/Chase-v0").unwrapped
    assert env.behavior_name == "Tagger?team=1" and env.core.n_taggers == 1


def test_register_gymnasium_rejects_unknown_kwargs_at_once(user_ids):
    with pytest.raises(TypeError, match=r"unknown keyword arguments \['speed'\]"):
        register_gymnasium("tests/Bad-v0", Basic, speed=3)
    assert "tests/Bad-v0" not in gym.registry


# ---------------------------------------------------------------------- SB3 vector envs


@pytest.mark.parametrize("env_id", SB3_VECTOR_IDS)
def test_sb3_dummy_vec_env_over_make_equals_the_env(env_id):
    venv = DummyVecEnv([functools.partial(gym.make, env_id, max_steps=20)])
    venv.seed(7)
    vobs = venv.reset()
    env = gym.make(env_id, max_steps=20)
    obs, _ = env.reset(seed=7)
    env.action_space.seed(0)
    dones = 0
    for _ in range(60):
        for key in obs if isinstance(obs, dict) else [None]:
            got = vobs[key][0] if key else vobs[0]
            np.testing.assert_array_equal(got, obs[key] if key else obs)
        action = env.action_space.sample()
        vobs, vreward, vdone, _ = venv.step(np.array([action]))
        obs, reward, terminated, truncated, _ = env.step(action)
        assert vreward[0] == np.float32(reward) and vdone[0] == (terminated or truncated)
        if terminated or truncated:
            dones += 1
            obs, _ = env.reset()  # DummyVecEnv resets its env the same way
    assert dones >= 2
    venv.close()
    env.close()


def _sb3_rollout(venv, steps=5):
    venv.seed(3)
    out = [venv.reset()]
    for t in range(steps):
        obs, reward, done, _ = venv.step(np.array([t % 3, 2]))
        out += [obs, reward, done.astype(np.float32)]
    venv.close()
    return np.concatenate([np.ravel(a) for a in out])


def test_sb3_subproc_vec_env_fork_equals_dummy():
    make = functools.partial(gym.make, "zooport/Basic-v0")
    expected = _sb3_rollout(DummyVecEnv([make, make]))
    np.testing.assert_array_equal(
        _sb3_rollout(SubprocVecEnv([make, make], start_method="fork")), expected
    )


def test_a_spawned_process_makes_the_id_through_the_module_prefix():
    # Gymnasium's AsyncVectorEnv, not SB3's SubprocVecEnv: a spawned SB3 worker imports
    # torch (seconds); the point is that "zooport:" registers in a fresh process.
    make = functools.partial(gym.make, "zooport:zooport/Basic-v0")
    envs = gym.vector.AsyncVectorEnv([make, make], context="spawn")
    try:
        obs, _ = envs.reset(seed=[0, 1])
        obs, reward, *_ = envs.step(np.array([2, 1]))
    finally:
        envs.close()
    assert obs.argmax(axis=1).tolist() == [11, 9]
    np.testing.assert_allclose(reward, [-0.01, -0.01])
