"""AgileRL's multi-agent training loops on zooport's Parallel env: IPPO and MADDPG, vectorised.

The route of docs/recipes/agilerl.md with a few hundred steps: ``AsyncPettingZooVecEnv`` runs
zooport's ``PettingZooParallelEnv`` in worker processes, and AgileRL's own
``train_multi_agent_on_policy`` / ``train_multi_agent_off_policy`` drive it.

AgileRL sends an action for every agent in every step, also for an agent that finished
earlier in the episode; zooport ignores those (DESIGN.md, "Consumer conventions"). AgileRL
2.58 itself cannot train once an agent leaves mid-episode: it samples actions from the NaN
placeholder observations it gives agents that left, and torch raises. That happens on any
PettingZoo env whose agents can leave early (``test_agilerl_fails_on_any_env_whose_agents_leave``
shows it on a ten-line ParallelEnv without zooport), so the loop at zooport's default settings
(``termination_mode="all"``: agents leave as they finish) is an expected failure, and the same
loop is proven with ``termination_mode="any"`` (no agent finishes before the episode ends).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from gymnasium import spaces
from pettingzoo import ParallelEnv

from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.envs.builtin import Tag

with warnings.catch_warnings():
    # AgileRL 2.58 warns at import that its own MakeEvolvable will be deprecated.
    warnings.filterwarnings("ignore", "MakeEvolvable will be deprecated", DeprecationWarning)
    from agilerl.algorithms import IPPO, MADDPG
    from agilerl.components.replay_buffer import ReplayBuffer
    from agilerl.training.train_multi_agent_off_policy import train_multi_agent_off_policy
    from agilerl.training.train_multi_agent_on_policy import train_multi_agent_on_policy
    from agilerl.vector.pz_async_vec_env import AsyncPettingZooVecEnv

pytestmark = [
    # AgileRL's gumbel-softmax (MADDPG's discrete actions) calls
    # torch.compiler.cudagraph_mark_step_begin, whose first call imports a torch module
    # that uses torch's own deprecated torch.jit.script_method.
    pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning"),
]

NUM_ENVS = 2
STEPS = 256
NET = {"encoder_config": {"hidden_size": [32]}, "head_config": {"hidden_size": [32]}}


def _tag_any() -> PettingZooParallelEnv:
    return PettingZooParallelEnv(Tag(seed=0, max_steps=50), termination_mode="any")


def _tag_default() -> PettingZooParallelEnv:
    return PettingZooParallelEnv(Tag(seed=0, max_steps=50))


def _spaces(env: AsyncPettingZooVecEnv) -> dict:
    return {
        "observation_spaces": [env.single_observation_space(a) for a in env.agents],
        "action_spaces": [env.single_action_space(a) for a in env.agents],
        "agent_ids": list(env.agents),
    }


def _parameters(agent) -> torch.Tensor:
    return torch.cat([p.detach().flatten().clone() for p in agent.actors.parameters()])


def _train_ippo(make_env) -> tuple[IPPO, list[float]]:
    env = AsyncPettingZooVecEnv([make_env for _ in range(NUM_ENVS)])
    try:
        env.reset(seed=0)
        agent = IPPO(**_spaces(env), learn_step=64, batch_size=32, net_config=NET)
        before = _parameters(agent)
        population, fitnesses = train_multi_agent_on_policy(
            env, "zooport-tag", "IPPO", [agent], max_steps=STEPS, evo_steps=128,
            eval_steps=50, verbose=False,
        )  # fmt: skip
    finally:
        env.close()
    trained = population[0]
    assert not torch.equal(before, _parameters(trained)), "IPPO never learned"
    return trained, fitnesses


def _check_ippo(trained: IPPO, fitnesses, tmp_path) -> None:
    # IPPO groups agents by name prefix: one network for the runners, one for the taggers.
    assert sorted(trained.actors.keys()) == ["runner", "tagger"]
    assert trained.steps >= STEPS
    assert len(fitnesses) == 1 and np.isfinite(fitnesses[0])

    trained.save_checkpoint(str(tmp_path / "ippo.pt"))
    loaded = IPPO.load(str(tmp_path / "ippo.pt"))
    assert torch.equal(_parameters(trained), _parameters(loaded))
    env = _tag_any()
    obs, info = env.reset(seed=1)
    batch = {a: o[None] for a, o in obs.items()}
    for agent in (trained, loaded):
        agent.set_training_mode(False)
    first = trained.get_action(batch, infos=info)[0]
    second = loaded.get_action(batch, infos=info)[0]
    assert first.keys() == second.keys() == set(env.agents)
    for name, action in first.items():
        assert env.action_space(name).contains(int(np.asarray(action).item()))
    env.close()


def test_ippo_vectorised_loop_with_termination_mode_any(tmp_path):
    torch.manual_seed(0)
    trained, fitnesses = _train_ippo(_tag_any)
    _check_ippo(trained, fitnesses, tmp_path)


# AgileRL reports a worker's exception (and its traceback) as UserWarnings, then raises it.
@pytest.mark.filterwarnings("ignore::UserWarning:agilerl.vector.pz_async_vec_env")
@pytest.mark.xfail(
    strict=True,
    raises=RuntimeError,
    reason="AgileRL 2.58 acts on NaN placeholders of agents that left (any PettingZoo env)",
)
def test_ippo_vectorised_loop_at_default_settings(tmp_path):
    torch.manual_seed(0)
    trained, fitnesses = _train_ippo(_tag_default)
    _check_ippo(trained, fitnesses, tmp_path)


def test_maddpg_vectorised_loop_with_termination_mode_any():
    torch.manual_seed(0)
    env = AsyncPettingZooVecEnv([_tag_any for _ in range(NUM_ENVS)])
    try:
        env.reset(seed=0)
        # vect_noise_dim: one exploration-noise row per env (its default 1 breaks at 2 envs).
        agent = MADDPG(
            **_spaces(env), vect_noise_dim=NUM_ENVS, batch_size=32, learn_step=8, net_config=NET
        )
        before = _parameters(agent)
        memory = ReplayBuffer(1_000)
        population, fitnesses = train_multi_agent_off_policy(
            env, "zooport-tag", "MADDPG", [agent], memory, max_steps=STEPS, evo_steps=128,
            eval_steps=50, learning_delay=32, verbose=False,
        )  # fmt: skip
    finally:
        env.close()
    trained = population[0]
    assert not torch.equal(before, _parameters(trained)), "MADDPG never learned"
    assert trained.steps >= STEPS and np.isfinite(fitnesses[0])
    # The replay buffer holds what the envs returned: Tag's observations and rewards.
    stored = memory.storage
    assert len(memory) == STEPS
    for name in ("runner_0", "tagger_3"):
        assert stored["obs", name].shape == (1_000, 10)
        rewards = stored["reward", name][: len(memory)].flatten().numpy()
        assert np.isfinite(rewards).all()
        assert set(rewards.astype(float).round(4)) <= {0.0, 0.01, -1.0, -0.01, -0.02, 0.98, 0.99}


class _Leaving(ParallelEnv):
    """Two agents, no zooport: ``a_1`` terminates after 3 steps, ``a_0`` after 10."""

    metadata = {"name": "leaving_v0"}
    possible_agents = ["a_0", "a_1"]

    def observation_space(self, agent):
        return _BOX

    def action_space(self, agent):
        return _TWO

    def reset(self, seed=None, options=None):
        self.agents, self.t = list(self.possible_agents), 0
        return {a: np.zeros(3, np.float32) for a in self.agents}, {a: {} for a in self.agents}

    def step(self, actions):
        self.t += 1
        obs = {a: np.full(3, self.t / 10, np.float32) for a in self.agents}
        ended = {a: (a == "a_1" and self.t == 3) or self.t == 10 for a in self.agents}
        rewards = dict.fromkeys(self.agents, 1.0)
        result = obs, rewards, ended, dict.fromkeys(self.agents, False), {a: {} for a in obs}
        self.agents = [a for a in self.agents if not ended[a]]
        return result


_BOX = spaces.Box(-1, 1, (3,), np.float32)
_TWO = spaces.Discrete(2)


@pytest.mark.filterwarnings("ignore::UserWarning:agilerl.vector.pz_async_vec_env")
def test_agilerl_fails_on_any_env_whose_agents_leave():
    """AgileRL's limitation, not zooport's: the same failure on a plain PettingZoo env."""
    torch.manual_seed(0)
    env = AsyncPettingZooVecEnv([_Leaving for _ in range(NUM_ENVS)])
    try:
        env.reset(seed=0)
        agent = IPPO(**_spaces(env), learn_step=64, batch_size=32, net_config=NET)
        with pytest.raises(RuntimeError, match="probability tensor"):
            train_multi_agent_on_policy(
                env, "leaving", "IPPO", [agent], max_steps=STEPS, evo_steps=128,
                eval_steps=50, verbose=False,
            )  # fmt: skip
    finally:
        env.close()
