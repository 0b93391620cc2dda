"""zooport's adapters on the gymnasium that ray[rllib] pins (1.2.2), checked upstream.

The main venv runs a newer gymnasium; this venv proves the adapters on RLlib's pin with
Gymnasium's ``check_env``, PettingZoo's ``parallel_api_test``/``api_test`` and a vector run
whose episode statistics are computed by hand.
"""

from __future__ import annotations

from importlib.metadata import version

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode
from pettingzoo.test import api_test, parallel_api_test

from zooport.adapters.gym_env import GymEnv
from zooport.adapters.pettingzoo_aec import PettingZooAECEnv
from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.adapters.vector_env import BehaviorVectorEnv
from zooport.envs.builtin import BallBalance, Basic, GridWorld, Tag

from tests.support.checkers import run_allowing

#: ML-Agents' ObservationSpec carries no bounds: vector observations are Box(-inf, inf).
INFINITE_BOUNDS = (
    r"A Box observation space (minimum|maximum) value is -?infinity",
    r"Agent's (minimum|maximum) observation space value is -?infinity",
)
#: GridWorld: a camera plus a goal signal plus an action mask make a Dict by design.
DICT_OBS = (
    r"Observation is not a NumPy array",
    r"Observation space for each agent probably should be",
)


def test_this_venv_has_rllibs_gymnasium_pin():
    # What the tests in this directory claim to prove; see requirements.txt.
    assert (gym.__version__, version("ray")) == ("1.2.2", "2.60.0")


@pytest.mark.parametrize(
    "make",
    [lambda: Basic(), lambda: BallBalance(n_agents=1, seed=0), lambda: GridWorld(n_agents=1)],
    ids=["basic", "ballbalance", "gridworld"],
)
def test_gymnasium_check_env(make):
    # Rendering is the main suite's business (through gym.make, which gives the env a spec).
    env = GymEnv(make())
    run_allowing(INFINITE_BOUNDS, check_env, env, skip_render_check=True)


def test_gym_env_steps_as_hand_computed_basic():
    env = GymEnv(Basic())
    obs, _ = env.reset(seed=0)
    positions, rewards = [int(obs.argmax())], []
    for _ in range(7):  # right, seven times: from position 10 to the large goal at 17
        obs, reward, terminated, truncated, _ = env.step(2)
        positions.append(int(obs.argmax()))
        rewards.append(round(reward, 6))
    assert positions == list(range(10, 18))
    assert rewards == [-0.01] * 6 + [0.99]
    assert (terminated, truncated) == (True, False)


@pytest.mark.parametrize(
    "make",
    [lambda: Tag(seed=0), lambda: Tag(seed=0, restart_tagged=False, tag_radius=0.3)],
    ids=["tag", "tag-no_restart"],
)
def test_pettingzoo_parallel_api_test_on_tag(make):
    run_allowing(INFINITE_BOUNDS, parallel_api_test, PettingZooParallelEnv(make()), 60)


def test_pettingzoo_api_tests_with_action_masks():
    allowed = INFINITE_BOUNDS + DICT_OBS
    run_allowing(allowed, parallel_api_test, PettingZooParallelEnv(GridWorld(seed=0)), 60)
    run_allowing(allowed, api_test, PettingZooAECEnv(GridWorld(seed=0)), 60)


def test_vector_env_episode_statistics_on_gymnasium_1_2():
    # Zero tilt-rate actions for 5 steps keep every ball on its platform (it starts at rest
    # within +-1.5 of the centre, the edge is at 3): +0.1 per step, truncated at max_steps.
    n, steps = 4, 5
    envs = gym.wrappers.vector.RecordEpisodeStatistics(
        BehaviorVectorEnv(BallBalance(n_agents=n, seed=0, max_steps=steps))
    )
    assert envs.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    envs.reset(seed=0)
    for _ in range(steps):
        _, reward, terminated, truncated, info = envs.step(np.zeros((n, 2), np.float32))
    assert not terminated.any() and truncated.all()
    np.testing.assert_allclose(reward, 0.1, rtol=1e-6)
    np.testing.assert_allclose(info["episode"]["r"], 0.1 * steps, rtol=1e-5)
    assert info["episode"]["l"].tolist() == [steps] * n
    assert info["_episode"].all()
    # The next episode: every slot restarted in the step above (SAME_STEP). gymnasium 1.2.2's
    # wrapper ignores the declared mode and treats that step as a NEXT_STEP reset step, so
    # it leaves the first step of every later episode out (fixed in gymnasium 1.4; 1.3.0
    # still has it). Training data is unaffected, only these statistics.
    for _ in range(steps):
        _, reward, terminated, truncated, info = envs.step(np.zeros((n, 2), np.float32))
    assert truncated.all()
    assert info["episode"]["l"].tolist() == [steps - 1] * n
    np.testing.assert_allclose(info["episode"]["r"], 0.1 * (steps - 1), rtol=1e-5)
    envs.close()
