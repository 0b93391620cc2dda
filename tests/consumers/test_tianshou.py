"""tianshou 2.x on zooport: DQN agents over the AEC adapter with masks, DQN in Subproc workers.

The routes of docs/recipes/tianshou.md with short budgets. ``PettingZooEnv`` wraps zooport's
AEC env and reads each agent's mask from ``obs["action_mask"]`` (zooport's int8, 1 = allowed);
tianshou's collector resets the env as soon as the acting agent is done, so the adapter runs
with ``termination_mode="any"``: the episode zooport reports is the one tianshou plays. A
single-agent env runs in tianshou's ``SubprocVectorEnv``, one zooport core per worker.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from tianshou.algorithm import DQN, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Batch, Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, SubprocVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import zooport  # noqa: F401  (registers zooport/<Name>-v0)
from zooport.adapters.pettingzoo_aec import PettingZooAECEnv
from zooport.envs.builtin import GridWorld

pytestmark = [
    # tianshou 2.0.1 logs through sensai, which warns that it sets up logging itself.
    pytest.mark.filterwarnings("ignore::DeprecationWarning:sensai"),
]


class GridQNet(torch.nn.Module):
    """Q-values from GridWorld's observation, a Batch of camera (5, 5, 3) and goal (2,)."""

    def __init__(self, n_actions: int) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(5 * 5 * 3 + 2, 64), torch.nn.ReLU(), torch.nn.Linear(64, n_actions)
        )

    def forward(self, obs, state=None, info=None):
        camera = torch.as_tensor(obs.camera, dtype=torch.float32).flatten(1)
        goal = torch.as_tensor(obs.goal, dtype=torch.float32)
        return self.net(torch.cat([camera, goal], dim=1)), state


def _grid_env() -> PettingZooEnv:
    core = GridWorld(n_agents=2, seed=0)
    return PettingZooEnv(PettingZooAECEnv(core, termination_mode="any"))


def _dqn(model, action_space) -> DQN:
    policy = DiscreteQLearningPolicy(
        model=model, action_space=action_space, eps_training=0.3, eps_inference=0.0
    )
    return DQN(
        policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.9,
        n_step_return_horizon=1, target_update_freq=50,
    )  # fmt: skip


def _grid_algorithm(env: PettingZooEnv) -> MultiAgentOffPolicyAlgorithm:
    dqns = [_dqn(GridQNet(env.action_space.n), env.action_space) for _ in env.agents]
    return MultiAgentOffPolicyAlgorithm(algorithms=dqns, env=env)


def test_dqn_agents_on_the_aec_env_act_within_zooports_masks(tmp_path):
    torch.manual_seed(0)
    env = _grid_env()
    assert env.agents == ["gridworld_0", "gridworld_1"]
    observation, _ = env.reset(seed=0)
    assert set(observation) == {"agent_id", "obs", "mask"}
    assert set(observation["obs"]) == {"camera", "goal"}

    algorithm = _grid_algorithm(env)
    train_envs = DummyVectorEnv([_grid_env for _ in range(2)])
    train_envs.seed(0)
    buffer = VectorReplayBuffer(2_000, len(train_envs))
    collector = Collector[CollectStats](algorithm, train_envs, buffer, exploration_noise=True)
    collector.reset()
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=collector, max_epochs=2, epoch_num_steps=300,
            collection_step_num_env_steps=20, batch_size=32, test_in_training=False,
            update_step_num_gradient_steps_per_sample=0.5, show_progress=False,
            multi_agent_return_reduction=lambda returns: returns.mean(axis=-1),
        )
    )  # fmt: skip
    assert result.timing.total_time > 0

    data = buffer.sample(0)[0]  # everything collected
    masks = np.asarray(data.obs.mask, dtype=bool)
    actions = np.asarray(data.act)
    assert len(actions) >= 600
    # zooport's masks reached the agents: walls block moves in many steps, and no action
    # any agent took (greedy or exploring) was one its mask forbade.
    assert (~masks).any(axis=1).sum() >= 50
    assert masks[np.arange(len(actions)), actions].all()
    assert set(np.unique(data.obs.agent_id)) == {"gridworld_0", "gridworld_1"}
    assert np.isfinite(np.asarray(data.rew, dtype=float)).all()

    # The trained policies (one per agent) saved and loaded into new agents act the same.
    torch.save(algorithm.policy.state_dict(), tmp_path / "policies.pt")
    again = _grid_algorithm(_grid_env())
    again.policy.load_state_dict(torch.load(tmp_path / "policies.pt"))
    seen = data.obs.obs
    probe = Batch(camera=np.asarray(seen.camera[:16]), goal=np.asarray(seen.goal[:16]))
    for agent in env.agents:
        before = algorithm.get_algorithm(agent).policy.model(probe)[0]
        after = again.get_algorithm(agent).policy.model(probe)[0]
        assert torch.equal(before, after)


def _basic() -> gym.Env:
    # A new process may not have imported zooport: the "module:" prefix makes gym.make do it.
    return gym.make("zooport:zooport/Basic-v0")


def test_dqn_in_subproc_workers_reaches_basics_expected_reward():
    torch.manual_seed(0)
    np.random.seed(0)
    train_envs = SubprocVectorEnv([_basic for _ in range(2)])
    test_envs = SubprocVectorEnv([_basic for _ in range(2)])
    train_envs.seed(0)
    test_envs.seed(1)
    probe = _basic()
    net = Net(state_shape=probe.observation_space.shape, action_shape=3, hidden_sizes=[32])
    algorithm = _dqn(net, probe.action_space)
    threshold = probe.spec.reward_threshold  # 0.9, Basic's expected reward
    buffer = VectorReplayBuffer(5_000, len(train_envs))
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=Collector[CollectStats](
                algorithm, train_envs, buffer, exploration_noise=True
            ),
            test_collector=Collector[CollectStats](algorithm, test_envs),
            max_epochs=10, epoch_num_steps=1_000, collection_step_num_env_steps=10,
            test_step_num_episodes=4, batch_size=64, show_progress=False,
            update_step_num_gradient_steps_per_sample=0.5,
            stop_fn=lambda mean_return: mean_return >= threshold,
        )
    )  # fmt: skip
    # The greedy policy walks right to the large goal: 6 * -0.01 + 0.99 = 0.93.
    assert result.best_reward == pytest.approx(0.93, abs=1e-5)
    for envs in (train_envs, test_envs):
        envs.close()
