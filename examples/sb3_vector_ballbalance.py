"""Stable-Baselines3 PPO balances balls: 16 platforms of ONE core as 16 SB3 environments.

``SB3VecEnv`` turns the 16 agents of one ``BallBalance`` core into an SB3 ``VecEnv`` (one
``set_actions`` and one core step per vector step, no per-agent Python loop), wrapped in
SB3's own ``VecMonitor`` and ``VecNormalize``. PPO trains until the mean episode reward of
the recent episodes reaches ``BallBalance.expected_reward``; then the deterministic policy
is evaluated for one full episode on every platform of a fresh, differently seeded core.

Usage:
    python examples/sb3_vector_ballbalance.py [--short] [--agents 16] [--seed 0]

Exits 0 when the evaluated mean episode reward reaches the expected reward, 1 otherwise.
With ``--short`` (or ``ZOOPORT_EXAMPLE_SHORT=1``, for CI) it trains for a few seconds and
only checks that the policy beats random actions.
"""

from __future__ import annotations

import functools
import os
import sys

import torch
from example_support.sb3 import (
    N_STEPS,
    ballbalance_ppo,
    evaluate_slots,
    parse_arguments,
    report,
    train_until,
    trained_and_random,
)
from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

from zooport.adapters.sb3_vec_env import SB3VecEnv
from zooport.envs.builtin.ball_balance import BallBalance

#: Environment steps (summed over agents) before giving up.
FULL_BUDGET = 300_000
SHORT_BUDGET = 16_384


def fresh_core(n_agents: int) -> SB3VecEnv:
    """A new core's platforms as SB3 environments (to evaluate on)."""
    return SB3VecEnv(BallBalance(n_agents=n_agents))


def main(argv: list[str] | None = None) -> int:
    def options(parser):
        parser.add_argument("--agents", type=int, default=16, help="platforms in the core (>= 12)")

    args = parse_arguments(__doc__, argv, options)
    short = args.short or os.environ.get("ZOOPORT_EXAMPLE_SHORT") == "1"
    target = BallBalance.expected_reward
    # A 64x64 MLP: one thread is fastest (more only contend with the simulation).
    torch.set_num_threads(1)

    core = BallBalance(n_agents=args.agents, seed=args.seed)
    env = VecNormalize(VecMonitor(SB3VecEnv(core)), norm_reward=False)
    model = ballbalance_ppo(env, args.seed)
    seconds = train_until(
        model, budget=SHORT_BUDGET if short else FULL_BUDGET, chunk=args.agents * N_STEPS * 4,
        window=2 * args.agents, target=target, short=short,
    )  # fmt: skip
    trained, random = trained_and_random(model, env, args.seed, n_actions=2)
    make = functools.partial(fresh_core, args.agents)
    steps, seed = BallBalance.max_episode_steps, args.seed + 1000
    score = evaluate_slots(make, trained, args.agents, steps, seed)
    baseline = evaluate_slots(make, random, args.agents, steps, seed)
    env.close()
    return report(model, seconds, score, baseline, target, short)


if __name__ == "__main__":
    sys.exit(main())
