"""Three fixes found by other engineers: AEC observe() of a finished agent, and
render_mode="human" on the vector path (UnityToGymWrapper's signature: test_slot_family)."""

from __future__ import annotations

import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import DependencyNotInstalled

import zooport  # noqa: F401 - registers zooport/<Name>-v0
from zooport.adapters import BehaviorVectorEnv, PettingZooAECEnv
from zooport.adapters.registration import make_vector_env
from zooport.adapters.rendering import VectorHumanRendering, visual_frame
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.builtin.tag import Tag
from zooport.errors import ArgumentError, EnvClosedError, UnknownAgentError

from tests.support.fake_pygame import FakePygame


def test_aec_observe_answers_for_an_agent_that_finished_earlier():
    """TorchRL's AEC loop calls observe() for every agent; it used to raise
    UnknownAgentError for one that had left ``agents``."""
    env = PettingZooAECEnv(Tag(seed=0, tag_radius=0.85, restart_tagged=False))
    env.reset(seed=0)
    final = None
    for agent in env.agent_iter(400):
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            final = (agent, obs.copy())
            env.step(None)  # the finished agent leaves agents
            break
        env.step(0)
    assert final is not None
    agent, obs = final
    assert agent not in env.agents
    seen = env.observe(agent)
    np.testing.assert_array_equal(seen, obs)
    seen[:] = 99.0  # a fresh copy: the next call is untouched
    np.testing.assert_array_equal(env.observe(agent), obs)
    assert env.observe(agent) is not env.observe(agent)
    # Later cycles do not forget it.
    while env.agents:
        done = env.terminations[env.agent_selection] or env.truncations[env.agent_selection]
        env.step(None if done else 0)
        np.testing.assert_array_equal(env.observe(agent), obs)
    with pytest.raises(UnknownAgentError, match="not an agent of the episode"):
        env.observe("runner_99")
    env.reset(seed=1)  # a new episode: the agent is live again, with its new observation
    assert agent in env.agents and not np.array_equal(env.observe(agent), obs)
    env.close()
    with pytest.raises(EnvClosedError):
        env.observe(agent)


def test_make_vec_serves_render_mode_human_as_gym_make_does(monkeypatch):
    """gym.make(..., render_mode="human") shows a GymEnv's rgb_array frames in a window
    (Gymnasium's HumanRendering); gym.make_vec used to raise for the same request."""
    pygame = FakePygame()
    monkeypatch.setitem(sys.modules, "pygame", pygame)
    envs = gym.make_vec("zooport/BallBalance-v0", num_envs=3, render_mode="human")
    assert isinstance(envs, VectorHumanRendering) and envs.render_mode == "human"
    assert "human" in envs.metadata["render_modes"]
    inner = envs.unwrapped
    assert isinstance(inner, BehaviorVectorEnv) and inner.render_mode == "rgb_array"
    envs.reset(seed=0)
    np.testing.assert_array_equal(pygame.shown[-1], inner.render().transpose(1, 0, 2))
    envs.step(np.zeros((3, 2), np.float32))
    assert len(pygame.shown) == 2 and envs.render() is None
    np.testing.assert_array_equal(pygame.shown[-1], inner.render().transpose(1, 0, 2))
    envs.close()
    assert pygame.shown[-1] == "closed" and inner.closed


def test_human_without_pygame_fails_at_the_first_frame_like_gym_make(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygame", None)  # import pygame raises ImportError
    with pytest.warns(UserWarning, match="HumanRendering wrapper is being applied"):
        single = gym.make("zooport/BallBalance-v0", render_mode="human")
    with pytest.raises(DependencyNotInstalled):
        single.reset(seed=0)
    envs = make_vector_env(num_envs=2, env_id="BallBalance", render_mode="human")
    with pytest.raises(DependencyNotInstalled, match="pygame"):
        envs.reset(seed=0)


def test_the_constructors_still_refuse_human_and_say_where_it_is():
    # As GymEnv(render_mode="human") does: the window is the entry point's wrapper.
    with pytest.raises(ArgumentError, match="ask gym.make or gym.make_vec"):
        BehaviorVectorEnv(BallBalance(), render_mode="human")
    with pytest.raises(ArgumentError, match="render_mode='rgb_array'"):
        VectorHumanRendering(BehaviorVectorEnv(BallBalance()))


def test_visual_frame_scales_a_float_picture_and_repeats_one_channel():
    frame = visual_frame(np.full((2, 2, 1), 0.5, np.float32))
    assert frame.dtype == np.uint8 and frame.shape == (2, 2, 3)
    assert frame[0, 0].tolist() == [128, 128, 128]
    picture = np.zeros((2, 2, 3), np.uint8)  # already a frame: still a copy, not a view
    frame = visual_frame(picture)
    picture[:] = 7
    assert frame.sum() == 0
