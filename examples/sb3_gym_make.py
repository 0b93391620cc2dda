"""Train Stable-Baselines3 PPO on ``zooport/Basic-v0`` through ``gym.make`` and evaluate it.

The short version::

    import gymnasium as gym, zooport
    from stable_baselines3 import PPO
    model = PPO("MlpPolicy", gym.make("zooport/Basic-v0")).learn(10_000)

Run ``python examples/sb3_gym_make.py`` to train until the registry's expected reward
(``gym.spec("zooport/Basic-v0").reward_threshold``) is reached; ``--short`` (or the
environment variable ``ZOOPORT_EXAMPLE_SHORT=1``) runs a few hundred steps only, for CI.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import gymnasium as gym
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.monitor import Monitor

import zooport  # noqa: F401  (importing zooport registers the zooport/<Name>-v0 ids)

ENV_ID = "zooport/Basic-v0"
FULL_TIMESTEPS = 4096
SHORT_TIMESTEPS = 256


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", action="store_true", help="a few hundred steps (CI)")
    parser.add_argument("--timesteps", type=int, default=None, help="training timesteps")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    short = args.short or os.environ.get("ZOOPORT_EXAMPLE_SHORT") == "1"
    timesteps = args.timesteps or (SHORT_TIMESTEPS if short else FULL_TIMESTEPS)

    env = gym.make(ENV_ID)
    threshold = env.spec.reward_threshold
    torch.set_num_threads(1)  # a small MLP: threads only add overhead
    model = PPO("MlpPolicy", env, n_steps=128 if short else 512, batch_size=64, seed=args.seed)
    start = time.perf_counter()
    model.learn(total_timesteps=timesteps)
    seconds = time.perf_counter() - start

    eval_env = Monitor(gym.make(ENV_ID))
    mean, std = evaluate_policy(model, eval_env, n_eval_episodes=5 if short else 20)
    print(
        f"{ENV_ID}: {timesteps} timesteps in {seconds:.1f} s; mean episode reward "
        f"{mean:.3f} +- {std:.3f} (expected reward {threshold})"
    )
    env.close()
    eval_env.close()
    if short:
        return 0
    if mean < threshold:
        print(f"FAILED: the mean reward {mean:.3f} is below {threshold}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
