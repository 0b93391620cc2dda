"""Stable-Baselines3 PPO on a CorePool: two BallBalance cores stepped in parallel, one policy.

``CorePool`` builds each core in its own worker process (this process steps core 0 itself),
steps them together and presents their agents as one ``BaseEnv``, so ``SB3VecEnv`` serves
the 2 x 8 platforms as 16 SB3 environments exactly as it serves one core. Then
``train_and_evaluate`` (``examples/example_support/sb3.py``) trains PPO until the mean episode
reward of the recent episodes reaches ``BallBalance.expected_reward`` and evaluates the
deterministic policy for one full episode on every platform of a fresh, differently seeded
core.

BallBalance's step is cheap, so here the pool shows the recipe more than a speed-up; with a
core whose step costs as much as a Unity scene's (``CorePool.unity``, or a heavy simulation)
two workers step about twice as many agents per second as one process (``make bench-pool``).

The factories are ``functools.partial`` of a class, so the workers (fresh interpreters) can
load them, and the pool is made under ``if __name__ == "__main__":``, as every program that
starts processes with spawn must be.

Usage:
    python examples/sb3_core_pool.py [--short] [--workers 2] [--agents 8] [--seed 0]

Exits 0 when the evaluated mean episode reward reaches the expected reward, 1 otherwise.
With ``--short`` (or ``ZOOPORT_EXAMPLE_SHORT=1``, for CI) it trains for a few seconds and
only checks that the policy beats random actions.
"""

from __future__ import annotations

import functools
import sys

from example_support.sb3 import parse_arguments, train_and_evaluate
from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

from zooport.adapters.sb3_vec_env import SB3VecEnv
from zooport.envs import CorePool
from zooport.envs.builtin.ball_balance import BallBalance


def main(argv: list[str] | None = None) -> int:
    def options(parser):
        parser.add_argument("--workers", type=int, default=2, help="cores in the pool")
        parser.add_argument("--agents", type=int, default=8, help="platforms per core")

    args = parse_arguments(__doc__, argv, options)
    # Core i is reset with seed + i whenever the pool is reset with a seed.
    pool = CorePool([functools.partial(BallBalance, n_agents=args.agents)] * args.workers)
    env = VecNormalize(VecMonitor(SB3VecEnv(pool)), norm_reward=False)
    print(f"{pool}: {env.num_envs} SB3 environments, workers {pool.worker_pids}")
    # Closing env at the end closes the pool: its workers stop.
    return train_and_evaluate(env, args, budget=300_000, short_budget=16_384)


if __name__ == "__main__":
    sys.exit(main())
