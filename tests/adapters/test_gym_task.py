"""GymTask: every option, on a generic Gymnasium env and on zooport ids."""

from __future__ import annotations

import inspect

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from zooport.adapters.gym_env import GymEnv
from zooport.adapters.registration import register_builtin_envs
from zooport.adapters.task_api import GymTask
from zooport.envs.batched_env import BatchedEnv
from zooport.envs.builtin.basic import Basic

from tests.support.ticker import Ticker

register_builtin_envs()


class Unpictured(Basic):
    """Basic without pictures (BatchedEnv's default ``_render``)."""

    _render = BatchedEnv._render


# ---------------------------------------------------------------------- construction


def test_an_id_is_made_with_the_make_kwargs_and_an_instance_is_wrapped():
    task = GymTask("zooport/Basic-v0", max_steps=2)
    task.reset(seed=0)
    task.step(0)
    assert task.step(0)[3] is True  # max_steps=2 reached the core
    env = Ticker()
    assert GymTask(env).env is env
    with pytest.raises(TypeError, match=r"gym.make keywords \['length'\] need an env id"):
        GymTask(Ticker(), length=3)
    with pytest.raises(TypeError, match="Gymnasium id or gymnasium.Env"):
        GymTask(42)


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_bad_counts_are_rejected(bad):
    with pytest.raises(ValueError, match="stack_frames"):
        GymTask(Ticker(), stack_frames=bad)
    if bad != 0:
        with pytest.raises(ValueError, match="skip_start_frames"):
            GymTask(Ticker(), skip_start_frames=bad)


# ---------------------------------------------------------------------- transforms


def test_the_documented_reward_transform_signature():
    calls = []

    def shaped(*, reward, state, done):
        calls.append((reward, state.tolist(), done))
        return 2 * reward - done

    task = GymTask(Ticker(length=2), reward_transform=shaped)
    task.reset()
    assert task.step(1)[1] == 2.0
    assert task.step(2)[1] == 3.0
    # The transform sees the wrapped env's own values, by name.
    assert calls == [(1.0, [1.0, 1.0], False), (2.0, [2.0, 1.0], True)]


def test_transforms_get_exactly_what_they_declare():
    seen = []

    def everything(**values):
        seen.append(sorted(values))
        return values["reward"]

    def state_and_action(state, action=None):
        return np.append(state, -1 if action is None else action).astype(np.float32)

    task = GymTask(Ticker(), state_transform=state_and_action, reward_transform=everything)
    assert task.observation_space == spaces.Box(-np.inf, np.inf, (3,), np.float32)
    obs, _ = task.reset()
    assert obs.tolist() == [0.0, 1.0, -1.0]  # action is None at reset
    obs, *_ = task.step(2)
    assert obs.tolist() == [1.0, 1.0, 2.0]
    names = ["state", "action", "reward", "terminated", "truncated", "done", "info"]
    assert seen == [sorted(names)]


def test_a_transform_with_an_unknown_required_parameter_is_rejected():
    # A state_transform's first positional parameter takes the state (ai-traineree's call),
    # whatever its name; a second required one must be a known name.
    with pytest.raises(TypeError, match=r"among \['state', .*actually: 'scale'"):
        GymTask(Ticker(), state_transform=lambda s, scale: s * scale)
    with pytest.raises(TypeError, match=r"actually: 's'"):
        GymTask(Ticker(), state_transform=lambda *, s: s)
    with pytest.raises(TypeError, match="actually: 'r'"):
        GymTask(Ticker(), reward_transform=lambda *, r: r)
    GymTask(Ticker(), reward_transform=lambda *, reward, scale=2.0: reward * scale)  # defaults ok


def test_an_explicit_observation_space_for_the_state_transform():
    space = spaces.Box(0, 1000, (1,), np.float32)
    task = GymTask(Ticker(), state_transform=lambda state: state[:1], observation_space=space)
    assert task.observation_space is space
    with pytest.raises(ValueError, match="describes state_transform"):
        GymTask(Ticker(), observation_space=space)


# ---------------------------------------------------------------------- stacked frames


def test_stacked_frames_space_fill_shift_and_no_leak_across_episodes():
    task = GymTask(Ticker(length=3), stack_frames=3)
    space = task.observation_space
    assert space.shape == (3, 2) and space.dtype == np.float32
    np.testing.assert_array_equal(space.low, np.zeros((3, 2)))
    np.testing.assert_array_equal(space.high, np.full((3, 2), 1000))

    obs, _ = task.reset()
    assert obs.tolist() == [[0, 1]] * 3  # filled with the first observation
    shapes = {(obs.shape, obs.dtype)}
    frames = [obs]
    for _ in range(3):
        obs, _, terminated, _, _ = task.step(0)
        shapes.add((obs.shape, obs.dtype))
        frames.append(obs)
    assert terminated
    assert frames[1].tolist() == [[0, 1], [0, 1], [1, 1]]
    assert frames[3].tolist() == [[1, 1], [2, 1], [3, 1]]
    obs, _ = task.reset()
    assert obs.tolist() == [[0, 2]] * 3  # nothing of the last episode leaks
    shapes.add((obs.shape, obs.dtype))
    assert shapes == {((3, 2), np.dtype(np.float32))}
    assert not np.shares_memory(frames[2], frames[3])


def test_stacked_frames_equal_the_unstacked_observations_of_the_same_run():
    plain = gym.make("zooport/BallBalance-v0")
    task = GymTask("zooport/BallBalance-v0", stack_frames=4)
    history = [plain.reset(seed=3)[0]] * 4
    stacked, _ = task.reset(seed=3)
    np.testing.assert_array_equal(stacked, np.stack(history[-4:]))
    plain.action_space.seed(1)
    for _ in range(10):
        action = plain.action_space.sample()
        obs, reward, *_ = plain.step(action)
        stacked, stacked_reward, *_ = task.step(action)
        history.append(obs)
        np.testing.assert_array_equal(stacked, np.stack(history[-4:]))
        assert stacked_reward == reward
        assert task.observation_space.contains(stacked)


def test_stacked_dict_observations():
    task = GymTask("zooport/GridWorld-v0", stack_frames=2)
    assert task.observation_space["camera"].shape == (2, 5, 5, 3)
    assert task.observation_space["goal"].shape == (2, 2)
    obs, _ = task.reset(seed=0)
    assert task.observation_space.contains(obs)
    obs, *_ = task.step(0)  # "stay": the camera does not change
    np.testing.assert_array_equal(obs["camera"][0], obs["camera"][1])


def test_stacked_spaces_keep_the_dtype_and_bounds():
    task = GymTask("zooport/GridWorld-v0", stack_frames=2, uint8_visual=True)
    camera = task.env.observation_space["camera"]
    stacked = task.observation_space["camera"]
    assert stacked.dtype == camera.dtype == np.uint8
    np.testing.assert_array_equal(stacked.high, np.stack([camera.high] * 2))


def test_stacking_an_unsupported_space_is_an_error():
    with pytest.raises(TypeError, match="Box and Dict-of-Box"):
        GymTask(
            Ticker(),
            stack_frames=2,
            state_transform=lambda state: int(state[0]),
            observation_space=spaces.Discrete(10),
        )


# ---------------------------------------------------------------------- random starts


def skipped_steps(task, seed=None):
    obs, _ = task.reset(seed=seed)
    return int(obs[0])


def test_skip_start_frames_are_drawn_from_the_seeded_wrapper_rng():
    env = Ticker(length=1000)
    task = GymTask(env, skip_start_frames=3, noop_action=2)
    counts = [skipped_steps(task, seed) for seed in range(40)]
    assert set(counts) == {0, 1, 2, 3}  # uniform in [0, n]
    assert counts == [skipped_steps(task, seed) for seed in range(40)]  # reproducible
    assert counts[:5] == [int(np.random.default_rng(s).integers(0, 4)) for s in range(5)]
    assert set(env.actions) == {2}  # the configured no-op
    # After a seeded reset, unseeded resets continue the same sequence.
    a = [skipped_steps(task, 9)] + [skipped_steps(task) for _ in range(5)]
    b = [skipped_steps(task, 9)] + [skipped_steps(task) for _ in range(5)]
    assert a == b


def test_an_episode_that_ends_while_skipping_is_reset():
    env = Ticker(length=1)
    task = GymTask(env, skip_start_frames=5)
    for seed in range(10):
        obs, _ = task.reset(seed=seed)
        assert obs[0] == 0  # a fresh episode, never a finished one
    assert set(env.actions) <= {0}


def test_default_and_invalid_no_op_actions():
    assert GymTask(Ticker(), skip_start_frames=1).noop_action == 0
    box = spaces.Box(-1, 1, (2,), np.float32)
    assert GymTask(Ticker(action_space=box), skip_start_frames=1).noop_action.tolist() == [0, 0]
    with pytest.raises(ValueError, match="noop_action"):
        GymTask(Ticker(), skip_start_frames=1, noop_action=7)
    positive = spaces.Box(1, 2, (1,), np.float32)
    with pytest.raises(ValueError, match="no default no-op"):
        GymTask(Ticker(action_space=positive), skip_start_frames=1)


# ---------------------------------------------------------------------- rendering


def test_can_render():
    task = GymTask("zooport/Basic-v0", can_render=True)
    assert task.can_render and task.render_mode == "rgb_array"
    task.reset(seed=0)
    frame = task.render()
    np.testing.assert_array_equal(frame, task.unwrapped.core.render())
    quiet = GymTask(Ticker(render_mode="rgb_array"), can_render=False)
    assert not quiet.can_render and quiet.render() is None


def test_can_render_defaults_to_true_as_in_ai_traineree():
    assert inspect.signature(GymTask).parameters["can_render"].default is True
    task = GymTask("zooport/Basic-v0")
    assert task.can_render and task.render_mode == "rgb_array"
    task.reset(seed=0)
    np.testing.assert_array_equal(task.render(), task.unwrapped.core.render())
    # An env made without a render mode renders nothing; an id whose env refuses the mode
    # (a zooport core without pictures, an env that takes no render_mode) is made without it,
    # as ai-traineree does.
    assert GymTask(Ticker()).can_render is False and GymTask(Ticker()).render() is None
    assert GymTask("CartPole-v1", render_mode=None).render_mode is None
    gym.register("test_tasks/Unpictured-v0", lambda **kw: GymEnv(Unpictured(), **kw))
    gym.register("test_tasks/NoRenderMode-v0", lambda length=5: Ticker(length))
    try:
        for env_id in ("test_tasks/Unpictured-v0", "test_tasks/NoRenderMode-v0"):
            task = GymTask(env_id)
            assert task.render_mode is None and not task.can_render and task.render() is None
    finally:
        del gym.registry["test_tasks/Unpictured-v0"], gym.registry["test_tasks/NoRenderMode-v0"]


def test_video_options_wrap_the_env_in_record_video_as_ai_traineree_does(tmp_path, monkeypatch):
    made = []

    class Recorder(gym.Wrapper):  # RecordVideo's call, without moviepy
        def __init__(self, env, video_folder, episode_trigger, name_prefix):
            super().__init__(env)
            made.append((video_folder, [episode_trigger(e) for e in range(7)], name_prefix))

    monkeypatch.setattr("zooport.adapters.task_api.RecordVideo", Recorder)
    task = GymTask("CartPole-v1", video_episode_trigger=3, video_folder=str(tmp_path))
    assert isinstance(task.env, Recorder) and task.env.render_mode == "rgb_array"
    expected = [e % 3 == 0 for e in range(7)]
    assert made == [(str(tmp_path), expected, "CartPole-v1")]
    GymTask(Ticker(render_mode="rgb_array"), video_episode_trigger=1)  # an instance too
    assert made[-1] == ("videos", [True] * 7, "custom")
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="video_episode_trigger"):
            GymTask("CartPole-v1", video_episode_trigger=bad)


def test_the_class_example_stack_and_reward_transform():
    """The example the class docstring carried: three stacked frames, a reward by name."""
    task = GymTask(
        "CartPole-v1", stack_frames=3, reward_transform=lambda *, reward, done: reward - done
    )
    task.reset(seed=0)
    obs, reward, terminated, truncated, _ = task.step(0)
    assert (obs.shape, reward, task.obs_size, task.action_size) == ((3, 4), 1.0, 12, 2)
