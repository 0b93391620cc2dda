"""The built-ins' short examples (their class docstrings' examples until the size cut), as tests."""

from __future__ import annotations

import numpy as np

from zooport.envs.base_env import ActionTuple
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.builtin.basic import Basic
from zooport.envs.builtin.collector import Collector
from zooport.envs.builtin.grid_world import GridWorld
from zooport.envs.builtin.soccer import Soccer
from zooport.envs.builtin.tag import Tag


def test_ball_balance_example():
    env = BallBalance(n_agents=3, seed=0)
    env.reset()
    decision, _ = env.get_steps("BallBalance")
    assert decision.obs[0].shape == (3, 8) and decision.agent_id.tolist() == [0, 1, 2]
    env.step()  # no actions set: every agent takes the zero action
    assert env.get_steps("BallBalance")[0].reward.tolist() == [0.10000000149011612] * 3


def test_basic_example():
    env = Basic()
    env.reset()
    for _ in range(7):
        env.set_actions("Basic", ActionTuple(discrete=np.array([[2]])))
        env.step()
    decision, terminal = env.get_steps("Basic")
    assert round(float(terminal.reward[0]), 2) == 0.99
    assert int(decision.obs[0][0].argmax()) == 10


def test_collector_example():
    env = Collector(seed=0, n_agents=2)
    env.reset()
    env.set_actions("Collector", ActionTuple(np.zeros((2, 2)), np.ones((2, 1), np.int32)))
    env.step()  # both grab, but no item is within reach
    decision, _ = env.get_steps("Collector")
    assert [o.shape for o in decision.obs] == [(2, 4), (2, 6, 3)]
    assert [round(r, 4) for r in decision.reward.tolist()] == [-0.005, -0.005]


def test_grid_world_example():
    env = GridWorld(n_agents=2, seed=0)
    env.reset()
    decision, _ = env.get_steps("GridWorld")
    assert [o.shape for o in decision.obs] == [(2, 5, 5, 3), (2, 2)]
    assert decision.action_mask[0].shape == (2, 5)
    assert not decision.action_mask[0][:, 0].any()  # "stay" is always available


def test_soccer_example():
    env = Soccer(seed=0)
    env.reset()
    env.ball_pos[:] = [0.97, 0.0]  # the ball rolls into team 1's goal
    env.ball_vel[:] = [0.05, 0.0]
    env.step()
    decision, terminal = env.get_steps("Soccer?team=1")
    assert terminal.agent_id.tolist() == [2, 3]
    assert terminal.group_reward.tolist() == [-1.0, -1.0]
    assert terminal.reward.tolist() == [-1.0, -1.0]
    # Restarted at a new kickoff, with the same ids.
    assert decision.agent_id.tolist() == [2, 3] and env.ball_pos.tolist() == [0.0, 0.0]


def test_tag_example():
    env = Tag(seed=0)
    env.reset()
    runners, _ = env.get_steps("Runner?team=0")
    assert runners.obs[0].shape == (3, 10) and runners.group_id.tolist() == [1, 1, 1]
    env.step()
    taggers, _ = env.get_steps("Tagger?team=1")
    assert len(taggers) == 0  # taggers decide every second step
