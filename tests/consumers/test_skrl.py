"""skrl 2.x on zooport: PPO on a gym env and on the vector env, IPPO and MAPPO on a Parallel env.

The routes of docs/recipes/skrl.md with short budgets: ``wrap_env`` over ``gym.make`` and over
``gym.make_vec`` (zooport's ``BehaviorVectorEnv``: one core, SAME_STEP autoreset, which is
the autoreset skrl's vectorised loop assumes), and over ``PettingZooParallelEnv`` with
``termination_mode="any"`` (skrl's multi-agent agents act for every possible agent every
step, so no agent may leave before the episode ends). MAPPO's critic reads zooport's
``state()``.
"""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest
import torch
from pettingzoo.utils.wrappers import BaseParallelWrapper
from skrl.agents.torch.ppo import PPO, PPO_CFG
from skrl.envs.wrappers.torch import wrap_env
from skrl.memories.torch import RandomMemory
from skrl.models.torch import CategoricalMixin, DeterministicMixin, Model
from skrl.multi_agents.torch.ippo import IPPO, IPPO_CFG
from skrl.multi_agents.torch.mappo import MAPPO, MAPPO_CFG
from skrl.trainers.torch import SequentialTrainer, SequentialTrainerCfg
from skrl.utils import set_seed

import zooport  # noqa: F401  (registers zooport/<Name>-v0)
from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.envs.builtin import Tag


class Policy(CategoricalMixin, Model):
    def __init__(self, observation_space, action_space, device):
        Model.__init__(
            self, observation_space=observation_space, action_space=action_space, device=device
        )
        CategoricalMixin.__init__(self)
        self.net = torch.nn.Sequential(
            torch.nn.Linear(self.num_observations, 32),
            torch.nn.Tanh(),
            torch.nn.Linear(32, self.num_actions),
        )

    def compute(self, inputs, role):
        return self.net(inputs["observations"]), {}


class Value(DeterministicMixin, Model):
    """A value network over the agent's observations, or over the global state (MAPPO)."""

    def __init__(self, observation_space, action_space, device, state_space=None):
        Model.__init__(
            self, observation_space=observation_space, state_space=state_space,
            action_space=action_space, device=device,
        )  # fmt: skip
        DeterministicMixin.__init__(self)
        self.key = "observations" if state_space is None else "states"
        size = self.num_observations if state_space is None else self.num_states
        self.net = torch.nn.Sequential(
            torch.nn.Linear(size, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1)
        )

    def compute(self, inputs, role):
        return self.net(inputs[self.key]), {}


def _trainer(env, agent, timesteps: int) -> SequentialTrainer:
    cfg = SequentialTrainerCfg(
        timesteps=timesteps, headless=True, disable_progressbar=True,
        close_environment_at_exit=False,
    )  # fmt: skip
    return SequentialTrainer(env=env, agents=agent, cfg=cfg)


def _quiet(cfg, tmp_path):
    """No TensorBoard files or checkpoints unless asked; experiment files in tmp_path."""
    cfg.experiment.directory = str(tmp_path)
    cfg.experiment.write_interval = 0
    cfg.experiment.checkpoint_interval = 0
    return cfg


# ---------------------------------------------------------------------- single agent


def _ppo(env, tmp_path, rollouts: int) -> PPO:
    models = {
        "policy": Policy(env.observation_space, env.action_space, env.device),
        "value": Value(env.observation_space, env.action_space, env.device),
    }
    cfg = PPO_CFG(rollouts=rollouts, learning_epochs=4, mini_batches=2, learning_rate=3e-3)
    return PPO(
        models=models,
        memory=RandomMemory(memory_size=rollouts, num_envs=env.num_envs, device=env.device),
        observation_space=env.observation_space,
        action_space=env.action_space,
        device=env.device,
        cfg=_quiet(cfg, tmp_path),
    )


def _greedy_returns(agent: PPO, env: gym.vector.VectorEnv, steps: int) -> np.ndarray:
    """Every slot's return over its first episode, acting on the policy's most likely action."""
    obs, _ = env.reset(seed=123)
    returns, finished = np.zeros(env.num_envs), np.zeros(env.num_envs, bool)
    for _ in range(steps):
        with torch.no_grad():
            logits = agent.policy.net(torch.as_tensor(obs))
        obs, reward, terminated, truncated, _ = env.step(logits.argmax(-1).numpy())
        returns += np.where(finished, 0.0, reward)
        finished |= terminated | truncated
        if finished.all():
            break
    return returns


def test_ppo_on_the_vector_env_reaches_basics_expected_reward(tmp_path):
    # gym.make_vec's default: zooport's BehaviorVectorEnv, 8 agents of one core as 8 slots.
    set_seed(0)
    vector = gym.make_vec("zooport/Basic-v0", num_envs=8)
    assert vector.metadata["autoreset_mode"].name == "SAME_STEP"
    env = wrap_env(vector, wrapper="gymnasium", verbose=False)
    agent = _ppo(env, tmp_path, rollouts=32)
    _trainer(env, agent, timesteps=32 * 12).train()  # 3,072 agent-steps
    returns = _greedy_returns(agent, gym.make_vec("zooport/Basic-v0", num_envs=8), steps=50)
    # Seven steps right to the large goal: 6 * -0.01 + 0.99 (expected reward 0.9).
    np.testing.assert_allclose(returns, 0.93, rtol=1e-5)


def test_ppo_on_gym_make_saves_and_reloads(tmp_path):
    set_seed(0)
    env = wrap_env(gym.make("zooport/Basic-v0"), wrapper="gymnasium", verbose=False)
    assert env.num_envs == 1
    agent = _ppo(env, tmp_path, rollouts=64)
    _trainer(env, agent, timesteps=256).train()
    observations = agent.memory.get_tensor_by_name("observations").reshape(-1, 20)
    # Basic's one-hot position: one 1 per row, only positions 7..17 are ever observed.
    assert torch.equal(observations.sum(-1), torch.ones(len(observations)))
    assert set(observations.argmax(-1).tolist()) <= set(range(7, 18))
    rewards = agent.memory.get_tensor_by_name("rewards").flatten().numpy()
    assert set(rewards.astype(float).round(4)) <= {-0.01, 0.09, 0.99}  # step, small, large goal
    losses = agent.tracking_data["Loss / Policy loss"] + agent.tracking_data["Loss / Value loss"]
    assert losses and np.isfinite(losses).all()

    agent.save(str(tmp_path / "ppo.pt"))
    again = _ppo(env, tmp_path, rollouts=64)
    again.load(str(tmp_path / "ppo.pt"))
    probe = torch.eye(20)[7:18]
    with torch.no_grad():
        assert torch.equal(agent.policy.net(probe), again.policy.net(probe))
    env.close()


# ---------------------------------------------------------------------- multi agent


class Recorder(BaseParallelWrapper):
    """Keeps the adapter's rewards of every step and every state() it gave out."""

    def __init__(self, env):
        super().__init__(env)
        self.rewards: list[dict] = []
        self.states: list[tuple[bool, np.ndarray]] = []  # (episode over?, state)

    @property
    def state_space(self):
        return self.env.state_space

    def state(self):
        state = self.env.state()
        self.states.append((not self.env.agents, state))
        return state

    def acting_states(self) -> np.ndarray:
        """The states agents acted on: skrl reads one after every reset and step, and drops
        the one read after an episode's last step for the one after the reset."""
        return np.stack([state for over, state in self.states if not over])

    def step(self, actions):
        out = self.env.step(actions)
        self.rewards.append(out[1])
        return out


def _tag(record: bool = False):
    env = PettingZooParallelEnv(Tag(seed=0, max_steps=40), termination_mode="any")
    return Recorder(env) if record else env


def _every_agent(value, agents):
    """skrl's multi-agent configs need every dict field keyed by agent (see the recipe)."""
    return {agent: value for agent in agents}


def _multi_agent(kind, env, tmp_path, rollouts: int):
    agents = env.possible_agents
    central = kind is MAPPO
    models = {
        a: {
            "policy": Policy(env.observation_spaces[a], env.action_spaces[a], env.device),
            "value": Value(
                env.observation_spaces[a], env.action_spaces[a], env.device,
                state_space=env.state_spaces[a] if central else None,
            ),
        }
        for a in agents
    }  # fmt: skip
    config = MAPPO_CFG if central else IPPO_CFG
    dict_fields = {
        f.name: _every_agent({}, agents)
        for f in dataclasses.fields(config)
        if f.name.endswith("_kwargs")
    }
    cfg = config(rollouts=rollouts, learning_epochs=2, mini_batches=2, **dict_fields)
    return kind(
        possible_agents=agents,
        models=models,
        memories={a: RandomMemory(memory_size=rollouts, device=env.device) for a in agents},
        observation_spaces=env.observation_spaces,
        state_spaces=env.state_spaces,
        action_spaces=env.action_spaces,
        device=env.device,
        cfg=_quiet(cfg, tmp_path),
    )


@pytest.mark.parametrize("kind", [IPPO, MAPPO], ids=["ippo", "mappo"])
def test_skrls_default_multi_agent_config_rejects_every_agent_set(kind):
    # The quirk the recipe documents (skrl 2.1.1): dict-valued fields left at their default
    # {} fail the check that a dict names every agent.
    env = wrap_env(_tag(), wrapper="pettingzoo", verbose=False)
    models = {a: {} for a in env.possible_agents}
    config = MAPPO_CFG if kind is MAPPO else IPPO_CFG
    with pytest.raises(ValueError, match="do not match possible agents"):
        kind(possible_agents=env.possible_agents, models=models, cfg=config())


@pytest.mark.parametrize("kind", [IPPO, MAPPO], ids=["ippo", "mappo"])
def test_ippo_and_mappo_train_on_tag_with_zooports_data(kind, tmp_path):
    set_seed(0)
    recorder = _tag(record=True)
    env = wrap_env(recorder, wrapper="pettingzoo", verbose=False)
    assert env.possible_agents == ["runner_0", "runner_1", "runner_2", "tagger_3", "tagger_4"]
    rollouts = 32
    agent = _multi_agent(kind, env, tmp_path, rollouts)
    _trainer(env, agent, timesteps=rollouts * 4).train()

    assert len(recorder.rewards) == rollouts * 4
    assert sum(over for over, _ in recorder.states) >= 2  # episodes ended and were reset
    # The memories hold the last rollout; their rewards are the adapter's, agent by agent.
    for name in env.possible_agents:
        stored = agent.memories[name].get_tensor_by_name("rewards").flatten().numpy()
        given = np.array([r[name] for r in recorder.rewards[-rollouts:]], np.float32)
        np.testing.assert_array_equal(stored, given)
        for loss in ("Policy", "Value"):
            values = agent.tracking_data[f"Loss / {loss} loss ({name})"]
            assert len(values) == 4 and np.isfinite(values).all()
    # What MAPPO's centralised critic learns from (and IPPO stores) is zooport's state():
    # Tag's 25-number global state at each step of the last rollout.
    acted_on = recorder.acting_states()
    assert len(acted_on) == rollouts * 4 + 1  # one per step, and the one after the last
    for name in env.possible_agents:
        stored = agent.memories[name].get_tensor_by_name("states").reshape(rollouts, 25)
        np.testing.assert_array_equal(stored.numpy(), acted_on[-rollouts - 1 : -1])
