"""Stable-Baselines3 PPO balances balls: 16 platforms of ONE core as 16 SB3 environments.

``SB3VecEnv`` turns the 16 agents of one ``BallBalance`` core into an SB3 ``VecEnv`` (one
``set_actions`` and one core step per vector step, no per-agent Python loop), wrapped in
SB3's own ``VecMonitor`` and ``VecNormalize``. Then ``train_and_evaluate``
(``examples/example_support/sb3.py``, shared by the BallBalance examples) trains PPO until the
mean episode reward of the recent episodes reaches ``BallBalance.expected_reward`` and
evaluates the deterministic policy for one full episode on every platform of a fresh,
differently seeded core.

Usage:
    python examples/sb3_vector_ballbalance.py [--short] [--agents 16] [--seed 0]

Exits 0 when the evaluated mean episode reward reaches the expected reward, 1 otherwise.
With ``--short`` (or ``ZOOPORT_EXAMPLE_SHORT=1``, for CI) it trains for a few seconds and
only checks that the policy beats random actions.
"""

from __future__ import annotations

import sys

from example_support.sb3 import parse_arguments, train_and_evaluate
from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

from zooport.adapters.sb3_vec_env import SB3VecEnv
from zooport.envs.builtin.ball_balance import BallBalance


def main(argv: list[str] | None = None) -> int:
    def options(parser):
        parser.add_argument("--agents", type=int, default=16, help="platforms in the core (>= 12)")

    args = parse_arguments(__doc__, argv, options)
    core = BallBalance(n_agents=args.agents, seed=args.seed)
    # One slot per platform; VecMonitor records episodes, VecNormalize scales observations.
    env = VecNormalize(VecMonitor(SB3VecEnv(core)), norm_reward=False)
    return train_and_evaluate(env, args, budget=300_000, short_budget=16_384)


if __name__ == "__main__":
    sys.exit(main())
