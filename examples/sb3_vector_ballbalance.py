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

import argparse
import os
import sys
import time
from collections.abc import Callable

import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

from zooport.adapters.sb3_vec_env import SB3VecEnv
from zooport.envs.builtin.ball_balance import BallBalance

#: Environment steps (summed over agents) before giving up, and per learn() call.
FULL_BUDGET = 300_000
SHORT_BUDGET = 16_384
N_STEPS = 128


def evaluate(policy: Callable[[np.ndarray], np.ndarray], n_agents: int, seed: int) -> float:
    """Mean reward of the first full episode of every platform of a fresh core."""
    venv = SB3VecEnv(BallBalance(n_agents=n_agents))
    venv.seed(seed)
    obs = venv.reset()
    returns = np.zeros(n_agents)
    finished = np.zeros(n_agents, dtype=bool)
    for _ in range(BallBalance.max_episode_steps):
        obs, reward, done, _ = venv.step(policy(obs))
        returns[~finished] += reward[~finished]
        finished |= done
        if finished.all():
            break
    venv.close()
    return float(returns.mean())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--short", action="store_true", help="a few seconds, for CI")
    parser.add_argument("--agents", type=int, default=16, help="platforms in the core (>= 12)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    short = args.short or os.environ.get("ZOOPORT_EXAMPLE_SHORT") == "1"
    target = BallBalance.expected_reward
    # A 64x64 MLP: one thread is fastest (more only contend with the simulation).
    torch.set_num_threads(1)

    core = BallBalance(n_agents=args.agents, seed=args.seed)
    env = VecNormalize(VecMonitor(SB3VecEnv(core)), norm_reward=False)
    model = PPO(
        "MlpPolicy", env, n_steps=N_STEPS, batch_size=256, n_epochs=10, learning_rate=3e-4,
        gamma=0.99, gae_lambda=0.95, policy_kwargs={"net_arch": [64, 64]}, seed=args.seed,
    )  # fmt: skip
    budget = SHORT_BUDGET if short else FULL_BUDGET
    chunk = args.agents * N_STEPS * 4
    began = time.perf_counter()
    recent = float("nan")
    while model.num_timesteps < budget:
        model.learn(chunk, reset_num_timesteps=False)
        episodes = list(model.ep_info_buffer)[-2 * args.agents :]
        recent = float(np.mean([e["r"] for e in episodes])) if episodes else float("nan")
        print(
            f"{model.num_timesteps:>8} steps  {time.perf_counter() - began:6.1f} s  "
            f"mean episode reward {recent:6.2f}  (target {target})",
            flush=True,
        )
        if not short and recent >= target:
            break
    seconds = time.perf_counter() - began

    env.training = False  # freeze the observation statistics for evaluation

    def trained(obs: np.ndarray) -> np.ndarray:
        return model.predict(env.normalize_obs(obs), deterministic=True)[0]

    rng = np.random.default_rng(args.seed)

    def random(obs: np.ndarray) -> np.ndarray:
        return rng.uniform(-1.0, 1.0, (len(obs), 2)).astype(np.float32)

    score = evaluate(trained, args.agents, seed=args.seed + 1000)
    baseline = evaluate(random, args.agents, seed=args.seed + 1000)
    print(
        f"trained {model.num_timesteps} steps in {seconds:.1f} s "
        f"({model.num_timesteps / seconds:,.0f} steps/s including PPO updates); "
        f"evaluation: {score:.2f} mean episode reward (random actions: {baseline:.2f}, "
        f"expected reward: {target})"
    )
    env.close()
    passed = score > baseline if short else score >= target
    print("PASSED" if passed else "FAILED")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
