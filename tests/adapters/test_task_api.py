"""ai-traineree's task API on zooport's tasks: names, sizes, seeding, positional transforms.

ai-traineree's ``GymTask`` has ``name``, ``obs_size``, ``action_size``, ``is_discrete`` and
``seed()``, takes ``state_transform`` by position and calls it as ``state_transform(state)``,
and takes a discrete action given as a one-element array. Its multi-agent tasks have
``obs_size``/``action_size``, and its runners call ``task.render(mode)``. The expected
values for CartPole and Pendulum are those of ai-traineree's own ``tests/test_tasks.py``.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from zooport.adapters.gym_env import GymEnv
from zooport.adapters.multi_agent_task import MultiAgentTask, PettingZooTask
from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.adapters.task_api import DataSpace, GymTask, agent_action_space, observation_size
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.builtin.basic import Basic
from zooport.envs.builtin.tag import Tag
from zooport.errors import ActionError, SpecError

from tests.support.probes import MaskedProbe, Probe
from tests.support.ticker import Ticker

# ---------------------------------------------------------------------- GymTask


@pytest.mark.parametrize(
    ("env_id", "discrete", "obs_size", "action_size"),
    [("CartPole-v1", True, 4, 2), ("Pendulum-v1", False, 3, 1)],
)
def test_gym_task_sizes_as_ai_traineree_reports_them(env_id, discrete, obs_size, action_size):
    task = GymTask(env_id)
    assert task.name == env_id
    assert task.is_discrete is discrete
    assert task.obs_size == obs_size and task.action_size == action_size


def test_gym_task_sizes_follow_the_transform_and_the_stack():
    assert GymTask("CartPole-v1", stack_frames=3).obs_size == 12
    assert GymTask("CartPole-v1", state_transform=lambda state: state[:2]).obs_size == 2
    assert GymTask(Ticker(action_space=spaces.MultiDiscrete([3, 4]))).action_size == 2
    assert GymTask(Ticker(action_space=spaces.MultiDiscrete([3, 4]))).is_discrete is True
    box = GymTask(Ticker(action_space=spaces.Box(-1, 1, (2, 3))))
    assert (box.action_size, box.is_discrete) == (6, False)
    hybrid = GymTask(
        Ticker(action_space=spaces.Dict(a=spaces.Discrete(2), b=spaces.Box(-1, 1, (1,))))
    )
    with pytest.raises(SpecError, match=r"action_size .*Dict.*read action_space"):
        _ = hybrid.action_size
    assert hybrid.is_discrete is False
    with pytest.raises(SpecError, match=r"obs_size .*Dict.*read observation_space"):
        _ = GymTask(Ticker(), state_transform=lambda state: {"x": state}).obs_size


def test_gym_task_obs_space_is_ai_traineree_dataspace():
    # DataSpace.from_gym_space of ai-traineree (aitraineree/types/dataspace.py): the dtype's
    # name, the shape ((1,) for Discrete), inclusive bounds, one number where all agree.
    cart = GymTask("CartPole-v1")
    box = cart.env.observation_space
    assert cart.obs_space == DataSpace("float32", (4,), box.low.tolist(), box.high.tolist())
    assert DataSpace.from_gym_space(cart.action_space) == DataSpace("int64", (1,), 0, 1)
    assert DataSpace.from_gym_space(cart.action_space).to_feature() == (2,)
    pendulum = GymTask("Pendulum-v1")
    assert DataSpace.from_gym_space(pendulum.action_space) == DataSpace("float32", (1,), -2, 2)
    assert pendulum.obs_space.to_feature() == (3,)
    stacked = GymTask(Ticker(), state_transform=lambda state: state[:1], stack_frames=3)
    assert stacked.obs_space == DataSpace("float32", (3, 1), -np.inf, np.inf)
    assert DataSpace.from_int(4) == DataSpace("int", (4,), 0, 3)
    multi = DataSpace.from_gym_space(spaces.MultiDiscrete([3, 4]))
    assert multi == DataSpace("int64", (2,), 0, [2, 3])
    with pytest.raises(SpecError, match="DataSpace describes a flat space"):
        _ = GymTask(Ticker(), state_transform=lambda state: {"x": state, "y": state}).obs_space


def test_dataspace_action_space_and_observation_size_of_plain_spaces():
    box = DataSpace.from_gym_space(spaces.Box(-1, 1, (3,)))
    assert box == DataSpace("float32", (3,), -1.0, 1.0)
    assert DataSpace.from_gym_space(spaces.Discrete(4)).to_feature() == (4,)
    actions = agent_action_space(spaces.Discrete(3))
    assert actions == spaces.Discrete(3) and actions.to_feature() == (3,)
    assert (actions.low, actions.high) == (0, 2)
    masked = {"observation": spaces.Box(0, 1, (5, 2)), "action_mask": spaces.MultiBinary(2)}
    assert observation_size(spaces.Dict(masked)) == 10


def test_gym_task_actual_obs_shape_and_size_are_what_reset_returns():
    task = GymTask("CartPole-v1", state_transform=lambda state: state[:2], stack_frames=3)
    obs, _ = task.reset(seed=0)
    assert task.actual_obs_shape == obs.shape == (3, 2) and task.actual_obs_size == obs.size
    assert GymTask(Ticker()).actual_obs_shape == (2,)
    with pytest.raises(SpecError, match="actual_obs_shape"):
        _ = GymTask("zooport/GridWorld-v0").actual_obs_size


def test_gym_task_name_of_an_instance():
    assert GymTask(gym.make("CartPole-v1")).name == "CartPole-v1"
    assert GymTask(Ticker()).name == "custom"


def test_gym_task_seed_seeds_the_next_reset_once():
    a, b = GymTask("CartPole-v1", skip_start_frames=5), GymTask("CartPole-v1", skip_start_frames=5)
    assert a.seed(11) is None
    first, _ = a.reset()
    expected, _ = b.reset(seed=11)  # the env and the no-op start both reseeded
    np.testing.assert_array_equal(first, expected)
    second, _ = a.reset()
    assert not np.array_equal(second, first)
    with pytest.raises(TypeError, match="seed to be None or an int"):
        a.seed(1.5)


def test_gym_task_takes_ai_traineree_positional_arguments():
    def reward_transform(*, reward, done):
        return reward - 10 * done

    env = Ticker(length=2)
    # (env, state_transform, reward_transform, can_render, stack_frames, skip_start_frames)
    task = GymTask(env, lambda s: s * 2, reward_transform, False, 2, 0)
    obs, _ = task.reset()
    assert obs.tolist() == [[0.0, 2.0], [0.0, 2.0]]
    obs, reward, terminated, *_ = task.step(1)
    assert obs.tolist() == [[0.0, 2.0], [2.0, 2.0]] and reward == 1.0
    assert task.step(1)[1] == -9.0 and task.can_render is False


def test_gym_task_state_transform_called_with_the_state_by_position():
    seen = []

    def first_and_reward(x, reward):
        seen.append(reward)
        return x + reward

    task = GymTask(Ticker(), state_transform=first_and_reward)
    task.reset()
    obs, *_ = task.step(2)
    assert obs.tolist() == [3.0, 3.0] and seen[-2:] == [0.0, 2.0]
    assert GymTask(Ticker(), state_transform=np.negative).reset()[0].tolist() == [-0.0, -1.0]
    assert GymTask(Ticker(), state_transform=max).reset()[0] == 1.0  # no readable signature


def test_gym_task_casts_a_discrete_action_with_int_as_ai_traineree_does():
    # ai-traineree's GymTask.step: ``if self.is_discrete: action = int(action)``.
    env = Ticker()
    task = GymTask(env)
    task.reset()
    task.step(np.array([2]))
    task.step(np.array([[1]], dtype=np.uint8))
    task.step(np.array([1.7]))
    task.step(2.0)
    task.step(np.float32(0.5))
    assert env.actions == [2, 1, int(1.7), int(2.0), int(0.5)] == [2, 1, 1, 2, 0]
    assert all(type(a) is int for a in env.actions)
    zooport = GymTask(GymEnv(Basic(seed=0)))
    zooport.reset(seed=0)
    for bad in (float("nan"), np.array([np.inf])):  # int() cannot: the env judges them
        with pytest.raises(ActionError, match="expected"):
            zooport.step(bad)
    task.step(np.int64(1))  # scalars go through as they are
    assert type(env.actions[-1]) is np.int64
    torch = pytest.importorskip("torch")
    task.step(torch.tensor([2]))
    assert env.actions[-1] == 2 and type(env.actions[-1]) is int


def test_a_box_action_is_not_touched():
    env = Ticker(action_space=spaces.Box(-1, 1, (1,)))
    task = GymTask(env)
    task.reset()
    action = np.array([0.5], np.float32)
    task.step(action)
    assert env.actions[-1] is action


# ---------------------------------------------------------------------- multi-agent tasks


def test_multi_agent_task_sizes():
    balls = MultiAgentTask(BallBalance(n_agents=2))
    assert (balls.obs_size, balls.action_size) == (8, 2)
    tag = MultiAgentTask(Tag(seed=0))
    assert (tag.obs_size, tag.action_size) == (10, 5)  # runners and taggers alike
    masked = MultiAgentTask(MaskedProbe((0, 0), (), seed=0))
    assert isinstance(masked.observation_space(0), spaces.Dict)
    assert (masked.obs_size, masked.action_size) == (3, 3)  # the mask is not counted
    mixed = MultiAgentTask(Probe((0,), (0,), seed=0))
    assert mixed.obs_size == 3
    with pytest.raises(SpecError, match=r"action_size.*3 for \['Runner\?team=0'\], 2 for"):
        _ = mixed.action_size


def test_pettingzoo_task_sizes_are_sizes_not_shapes():
    task = PettingZooTask(PettingZooParallelEnv(MaskedProbe((0, 0), (), seed=0)))
    assert (task.obs_size, task.action_size) == (3, 3)
    mixed = PettingZooTask(PettingZooParallelEnv(Probe((0, 0), (0,), seed=0)))
    with pytest.raises(SpecError, match=r"3 for \['runner_0', 'runner_1'\], 2 for \['walker_2'\]"):
        _ = mixed.action_size


class OldRender(PettingZooParallelEnv):
    """A Parallel env whose ``render`` takes a mode, as PettingZoo's before 1.22."""

    def render(self, mode="human"):
        self.modes = [*getattr(self, "modes", []), mode]
        return mode


def test_pettingzoo_task_render_passes_the_mode_to_an_env_that_takes_one():
    task = PettingZooTask(OldRender(Tag(seed=0)))
    assert task.render("rgb_array") == "rgb_array"
    assert task.render(mode="human") == "human"
    assert task.render() == "human" and task.env.modes == ["rgb_array", "human", "human"]
    modern = PettingZooTask(PettingZooParallelEnv(Tag(seed=0), render_mode="rgb_array"))
    modern.reset(seed=0)
    assert modern.render("rgb_array").shape[-1] == 3
    with pytest.raises(ValueError, match="takes no mode"):
        modern.render("human")
