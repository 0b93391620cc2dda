"""A zero-size observation (an empty vector sensor beside a camera) is dropped from the spaces.

Visual Unity scenes often keep a vector sensor of size 0 next to their camera. ML-Agents'
gym wrapper then serves the camera alone; so does every zooport adapter: the empty
observation has no part in any space (no ``Box((0,))`` and no Dict key for it), the others
keep their keys, and the upstream checkers pass. ``EmptySensor`` (in ``raw_cores``) has a
camera, the empty sensor and, with ``goal=True``, a goal vector; agent k's camera shows
``(k + 1) / 10`` at reset.
"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from zooport.adapters import (
    BehaviorVectorEnv,
    GymEnv,
    MultiAgentTask,
    PettingZooAECEnv,
    PettingZooParallelEnv,
    SB3VecEnv,
)
from zooport.adapters.spaces import ObservationLayout
from zooport.envs.base_env import ObservationSpec, ObservationType
from zooport.errors import SpecError

from tests.support.checkers import run_allowing
from tests.support.pettingzoo_versions import DICT_OBS_API_TEST
from tests.support.raw_cores import EmptySensor, drive

CAMERA = spaces.Box(0.0, 1.0, (6, 6, 3), np.float32)
GOAL = spaces.Box(-np.inf, np.inf, (2,), np.float32)


def _spec(shape, name):
    return ObservationSpec(shape, (), ObservationType.DEFAULT, name)


@pytest.mark.parametrize(
    ("specs", "allow_multiple_obs", "space"),
    [
        ([(8, 8, 3), (0,)], False, spaces.Box(0.0, 1.0, (8, 8, 3), np.float32)),
        ([(0,), (8, 8, 3)], False, spaces.Box(0.0, 1.0, (8, 8, 3), np.float32)),
        ([(3,), (0,)], False, spaces.Box(-np.inf, np.inf, (3,), np.float32)),
        ([(3,), (0,)], True, spaces.Dict({"obs_0": spaces.Box(-np.inf, np.inf, (3,))})),
        (
            [(8, 8, 3), (0,), (2,)],
            False,
            spaces.Dict({"obs_0": spaces.Box(0.0, 1.0, (8, 8, 3)), "obs_2": GOAL}),
        ),
        ([(4, 0), (2,)], False, GOAL),  # an empty rank-2 observation too
    ],
)
def test_layout_drops_zero_size_observations(specs, allow_multiple_obs, space):
    layout = ObservationLayout([_spec(s, "") for s in specs], allow_multiple_obs=allow_multiple_obs)
    assert layout.space == space
    assert [tuple(s.shape) for s in layout.specs] == [s for s in specs if np.prod(s)]
    batch = [np.full((2, *s), float(i + 1) / 10, np.float32) for i, s in enumerate(specs)]
    converted = layout.convert(batch)
    buffer = layout.allocate(2)
    layout.write(buffer, np.arange(2), batch)
    for out in (converted, buffer):
        parts = out.values() if isinstance(out, dict) else [out]
        assert all(np.shape(p)[1:] != (0,) for p in parts)
    assert space.contains(ObservationLayout.take(buffer, 1))


def test_only_empty_observations_is_a_spec_error():
    with pytest.raises(SpecError, match=r"behavior 'B': every observation is empty"):
        ObservationLayout([_spec((0,), "v"), _spec((0, 4), "w")], name="B")


def _camera(value):
    return np.full((6, 6, 3), value, np.float32)


@pytest.mark.parametrize("goal", [False, True], ids=["camera", "camera+goal"])
def test_single_and_vector_adapters_serve_the_camera_alone(goal):
    expected = spaces.Dict({"camera": CAMERA, "goal": GOAL}) if goal else CAMERA
    env = GymEnv(EmptySensor(1, goal=goal, seed=0))
    assert env.observation_space == expected
    obs, _ = env.reset(seed=0)
    camera = obs["camera"] if goal else obs
    np.testing.assert_array_equal(camera, _camera(0.1))
    keyed = GymEnv(EmptySensor(1, goal=goal), allow_multiple_obs=True).observation_space
    assert keyed == spaces.Dict({"camera": CAMERA, "goal": GOAL} if goal else {"camera": CAMERA})
    for make in (BehaviorVectorEnv, SB3VecEnv):
        vector = make(EmptySensor(3, goal=goal))
        space = getattr(vector, "single_observation_space", vector.observation_space)
        assert space == expected
        batch = drive(vector, 2)[0]
        batch = batch[0] if isinstance(batch, tuple) else batch
        cameras = batch["camera"] if goal else batch
        np.testing.assert_allclose(cameras, [_camera(0.1), _camera(0.2), _camera(0.3)])


@pytest.mark.parametrize("goal", [False, True], ids=["camera", "camera+goal"])
def test_multi_agent_adapters_serve_the_camera_alone(goal):
    expected = spaces.Dict({"camera": CAMERA, "goal": GOAL}) if goal else CAMERA
    for make in (PettingZooParallelEnv, PettingZooAECEnv, MultiAgentTask):
        env = make(EmptySensor(3, goal=goal, seed=0), action_masks=False)
        assert all(env.observation_space(a) == expected for a in env.possible_agents)
    par = PettingZooParallelEnv(EmptySensor(3, goal=goal), action_masks=False)
    observations, _ = par.reset(seed=0)
    for k, agent in enumerate(par.agents):
        camera = observations[agent]["camera"] if goal else observations[agent]
        np.testing.assert_array_equal(camera, _camera((k + 1) / 10))
    masked = PettingZooParallelEnv(EmptySensor(3, goal=goal), action_masks=True)
    space = masked.observation_space(masked.possible_agents[0])
    assert space["observation"] == expected


# The goal vector is Box(-inf, inf) (ML-Agents' specs carry no bounds); a Dict observation
# (camera + goal, or an action mask) is not what PettingZoo's checker expects by default.
ALLOWED = (
    r"observation space (minimum|maximum) value is -?infinity",
    r"Box observation space (minimum|maximum) value is -?infinity",
    r"Observation is not a NumPy array",
    r"Observation space for each agent probably should be",
)


@pytest.mark.parametrize("goal", [False, True], ids=["camera", "camera+goal"])
def test_upstream_checkers_pass(goal):
    run_allowing(ALLOWED, check_env, GymEnv(EmptySensor(1, goal=goal)), skip_render_check=True)
    # SB3 wants images as uint8 (uint8_visual), 36 x 36 at least.
    sb3_env = GymEnv(EmptySensor(1, goal=goal, size=36), uint8_visual=True)
    run_allowing(ALLOWED, sb3_check_env, sb3_env)
    parallel = PettingZooParallelEnv(EmptySensor(3, goal=goal), max_cycles=12)
    run_allowing(ALLOWED, parallel_api_test, parallel, num_cycles=30)
    if goal and DICT_OBS_API_TEST:  # camera+goal is a Dict observation
        pytest.skip(DICT_OBS_API_TEST)
    aec = PettingZooAECEnv(EmptySensor(3, goal=goal), max_cycles=12)
    run_allowing(ALLOWED, api_test, aec, num_cycles=30)
