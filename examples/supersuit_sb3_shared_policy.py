"""Stable-Baselines3 PPO trains ONE policy shared by every BallBalance platform, via SuperSuit.

The PettingZoo route: ``PettingZooParallelEnv(BallBalance(...), termination_mode="any")``,
then SuperSuit's ``pettingzoo_env_to_vec_env_v1`` (each agent becomes one slot of a vector
env, so one policy acts for all of them) and ``concat_vec_envs_v1(...,
base_class="stable_baselines3")`` (copies of that env side by side, as an SB3 ``VecEnv``).

Two things SuperSuit needs, and why:

- A fixed agent set. ``pettingzoo_env_to_vec_env_v1`` requires ``env.agents ==
  env.possible_agents`` after every step that does not end the episode, so an agent may not
  leave alone. ``termination_mode="any"`` ends the PettingZoo episode when the first ball
  falls (or the time limit hits every platform at once): every other agent is truncated in
  that step and SuperSuit resets the env, so all agents are always live. With ``"all"`` or
  ``"majority"`` agents leave one by one: SuperSuit raises ``AssertionError`` ("does not
  support environments with varying numbers of active agents"), and its ``black_death_v3``
  wrapper does not help: it ends its episode only when every agent is terminated *and*
  truncated, so it steps the env after the episode is over.
- A working ``seed`` and ``get_attr``. ``PPO(seed=...)`` calls ``VecEnv.seed``, which
  SuperSuit 3.11's SB3 wrapper forwards to its Gymnasium ``ConcatVecEnv``; Gymnasium 1.x
  vector envs have no ``seed()`` any more, so it raises ``AttributeError``. Likewise every SB3
  ``VecEnvWrapper`` (``VecMonitor``, ``VecNormalize``) asks for ``get_attr("render_mode")``,
  which fails the same way and becomes a warning. ``SeededSuperSuitVecEnv``
  (``examples/example_support/sb3.py``) answers
  ``render_mode`` itself, holds the seed until the next ``reset()`` and passes it to
  ``ConcatVecEnv.reset(seed=...)``, which gives copy ``i`` the seed ``seed + i``. Without a
  seed the copies are identical clones (``concat_vec_envs_v1`` pickles the env), which start
  in the same state.

PPO (``train_and_evaluate`` in ``example_support/sb3.py``) trains until the mean episode
reward of recent episodes reaches ``BallBalance.expected_reward``; the deterministic policy is
then evaluated for one full episode on every platform of a fresh, differently seeded core.

Usage:
    python examples/supersuit_sb3_shared_policy.py [--short] [--agents 12] [--copies 1] [--seed 0]

Exits 0 when the evaluated mean episode reward reaches the expected reward, 1 otherwise.
With ``--short`` (or ``ZOOPORT_EXAMPLE_SHORT=1``, for CI) it trains for a few seconds and
only checks that the policy beats random actions.
"""

from __future__ import annotations

import functools
import sys

import numpy as np
import supersuit as ss
from example_support.sb3 import (
    Policy,
    SeededSuperSuitVecEnv,
    parse_arguments,
    train_and_evaluate,
)
from stable_baselines3.common.vec_env import VecEnv, VecMonitor, VecNormalize

from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.envs.builtin.ball_balance import BallBalance


def make_vec_env(n_agents: int, copies: int, seed: int | None = None) -> VecEnv:
    """The route: BallBalance -> PettingZoo Parallel -> SuperSuit vector env -> SB3 VecEnv."""
    parallel = PettingZooParallelEnv(
        BallBalance(n_agents=n_agents, seed=seed), termination_mode="any"
    )
    markov = ss.pettingzoo_env_to_vec_env_v1(parallel)
    venv = ss.concat_vec_envs_v1(markov, copies, num_cpus=0, base_class="stable_baselines3")
    return SeededSuperSuitVecEnv(venv)


def evaluate(policy: Policy, n_agents: int, seed: int) -> float:
    """Mean reward of the first full episode of every platform of a fresh core.

    Termination mode ``"all"``: each platform plays its own episode to its end.
    """
    env = PettingZooParallelEnv(BallBalance(n_agents=n_agents), termination_mode="all")
    observations, _ = env.reset(seed=seed)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    while env.agents:
        agents = env.agents
        actions = policy(np.stack([observations[a] for a in agents]))
        observations, rewards, _, _, _ = env.step(dict(zip(agents, actions, strict=True)))
        for agent, reward in rewards.items():
            returns[agent] += reward
    env.close()
    return float(np.mean(list(returns.values())))


def main(argv: list[str] | None = None) -> int:
    def options(parser):
        parser.add_argument("--agents", type=int, default=12, help="platforms per core")
        parser.add_argument("--copies", type=int, default=1, help="cores side by side (SuperSuit)")

    args = parse_arguments(__doc__, argv, options)
    env = VecNormalize(VecMonitor(make_vec_env(args.agents, args.copies)), norm_reward=False)
    score = functools.partial(evaluate, n_agents=args.agents, seed=args.seed + 1000)
    return train_and_evaluate(env, args, budget=300_000, short_budget=12_288, evaluate=score)


if __name__ == "__main__":
    sys.exit(main())
