"""Stable-Baselines3 PPO on a CorePool: two BallBalance cores stepped in parallel, one policy.

``CorePool`` builds each core in its own worker process (this process steps core 0 itself),
steps them together and presents their agents as one ``BaseEnv``, so ``SB3VecEnv`` serves
the 2 x 8 platforms as 16 SB3 environments exactly as it serves one core. PPO trains until
the mean episode reward of the recent episodes reaches ``BallBalance.expected_reward``; then
the deterministic policy is evaluated for one full episode on every platform of a fresh,
differently seeded core.

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
from zooport.envs import CorePool
from zooport.envs.builtin.ball_balance import BallBalance

#: Environment steps (summed over agents) before giving up.
FULL_BUDGET = 300_000
SHORT_BUDGET = 16_384


def fresh_core(n_agents: int) -> SB3VecEnv:
    """A new core's platforms as SB3 environments (to evaluate on)."""
    return SB3VecEnv(BallBalance(n_agents=n_agents))


def main(argv: list[str] | None = None) -> int:
    def options(parser):
        parser.add_argument("--workers", type=int, default=2, help="cores in the pool")
        parser.add_argument("--agents", type=int, default=8, help="platforms per core")

    args = parse_arguments(__doc__, argv, options)
    short = args.short or os.environ.get("ZOOPORT_EXAMPLE_SHORT") == "1"
    target = BallBalance.expected_reward
    torch.set_num_threads(1)  # a 64x64 MLP: more threads only contend with the cores

    # Core i is reset with seed + i whenever the pool is reset with a seed.
    pool = CorePool([functools.partial(BallBalance, n_agents=args.agents)] * args.workers)
    env = VecNormalize(VecMonitor(SB3VecEnv(pool)), norm_reward=False)
    slots = env.num_envs
    print(f"{pool}: {slots} SB3 environments, workers {pool.worker_pids}")
    model = ballbalance_ppo(env, args.seed)
    seconds = train_until(
        model, budget=SHORT_BUDGET if short else FULL_BUDGET, chunk=slots * N_STEPS * 4,
        window=2 * slots, target=target, short=short,
    )  # fmt: skip
    trained, random = trained_and_random(model, env, args.seed, n_actions=2)
    make = functools.partial(fresh_core, slots)
    steps, seed = BallBalance.max_episode_steps, args.seed + 1000
    score = evaluate_slots(make, trained, slots, steps, seed)
    baseline = evaluate_slots(make, random, slots, steps, seed)
    env.close()  # closes the pool: its worker stops
    return report(model, seconds, score, baseline, target, short)


if __name__ == "__main__":
    sys.exit(main())
