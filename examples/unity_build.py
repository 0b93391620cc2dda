"""Use a real Unity build: ``mlagents_envs``' UnityEnvironment through zooport's adapters.

The short version::

    from mlagents_envs.environment import UnityEnvironment
    from zooport.adapters.sb3_vec_env import SB3VecEnv
    from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv

    unity = UnityEnvironment(file_name="builds/3DBall.x86_64", seed=0, no_graphics=True)
    venv = SB3VecEnv(unity)                  # every agent of the build is one SB3 slot
    PPO("MlpPolicy", VecMonitor(venv)).learn(50_000)
    # or: GymEnv(unity) for a single-agent build, BehaviorVectorEnv(unity) for Gymnasium's
    # vector API, PettingZooParallelEnv(unity) for every agent of every behaviour.

Every zooport adapter accepts a ``UnityEnvironment`` (and older ML-Agents ``BaseEnv``
generations) by duck typing: zooport itself never imports ``mlagents_envs``. Side channels
are byte-compatible, so ``EngineConfigurationChannel`` (here: ``time_scale=20``, no
rendering) and ``EnvironmentParametersChannel`` work as with ML-Agents' own trainers.

Usage:
    python examples/unity_build.py --build PATH [--api vector|parallel] [--steps N]
        [--behavior NAME] [--seed S]

``--api vector`` (default) trains SB3 PPO on one behaviour's agents through ``SB3VecEnv``
for ``--steps`` agent-steps (continuous or discrete actions; sb3-contrib's MaskablePPO is
not used here); ``--api parallel`` plays random mask-respecting actions through
``PettingZooParallelEnv`` for ``--steps`` cycles and prints per-agent returns.

This script needs ``mlagents_envs`` (``pip install mlagents-envs==0.28.0 protobuf==3.20.3``;
it pins protobuf, so give it its own venv, as ``make test-mlagents`` does) and a build for
your platform (for example one of the ML-Agents example environments, built from the Unity
editor). It never downloads anything. Without either, it prints what it would do and exits
0 with ``--short`` (or ``ZOOPORT_EXAMPLE_SHORT=1``, for CI) and 2 otherwise: it does not
pretend to run Unity. With a build, ``--short`` trains or plays for a few hundred steps.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

import numpy as np

from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.cli.common import sample_action


def explain(missing: str, args: argparse.Namespace) -> None:
    """What the script would do, and why it cannot here."""
    print(f"unity_build: {missing}, so nothing is run. With a build, this script would:")
    print("  1. open it: UnityEnvironment(file_name=BUILD, seed=SEED, no_graphics=True,")
    print("     side_channels=[EngineConfigurationChannel() with time_scale=20])")
    print("  2. reset it and print every behaviour's spec (observations, actions, agents)")
    if args.api == "vector":
        print(f"  3. train SB3 PPO through VecMonitor(SB3VecEnv(unity, BEHAVIOUR)) for "
              f"{args.steps} agent-steps and print the mean episode reward")  # fmt: skip
    else:
        print(f"  3. play random mask-respecting actions through PettingZooParallelEnv(unity) "
              f"for {args.steps} cycles and print every agent's return")  # fmt: skip
    print("  4. close the build (UnityEnvironment.close)")


def open_build(path: Path, seed: int):
    """The build as a UnityEnvironment, simulating fast and without rendering."""
    from mlagents_envs.environment import UnityEnvironment
    from mlagents_envs.side_channel.engine_configuration_channel import (
        EngineConfigurationChannel,
    )

    engine = EngineConfigurationChannel()
    engine.set_configuration_parameters(time_scale=20.0, quality_level=0)
    return UnityEnvironment(
        file_name=str(path), seed=seed, no_graphics=True, side_channels=[engine]
    )


def describe(unity) -> None:
    unity.reset()
    for name, spec in unity.behavior_specs.items():
        decision, _ = unity.get_steps(name)
        shapes = [tuple(o.shape) for o in spec.observation_specs]
        actions = spec.action_spec
        print(f"behaviour {name!r}: {len(decision)} agents, observations {shapes}")
        print(
            f"  actions: continuous {actions.continuous_size}, discrete {actions.discrete_branches}"
        )


def train_vector(venv, steps: int, seed: int) -> None:
    """SB3 PPO on the SB3 VecEnv of one behaviour's agents."""
    from stable_baselines3 import PPO

    policy = "MultiInputPolicy" if hasattr(venv.observation_space, "spaces") else "MlpPolicy"
    n_steps = max(8, min(256, steps // venv.num_envs))
    batch_size = max(8, n_steps * venv.num_envs // 8)  # divides the rollout
    model = PPO(policy, venv, n_steps=n_steps, batch_size=batch_size, seed=seed, device="cpu")
    model.learn(steps)
    returns = [info["r"] for info in model.ep_info_buffer]
    mean = np.mean(returns) if returns else float("nan")
    print(f"{venv.num_envs} agents, {model.num_timesteps} agent-steps, {len(returns)} recent "
          f"episodes, mean return {mean:.3f}")  # fmt: skip


def play_parallel(env, cycles: int, seed: int) -> None:
    """Random mask-respecting actions for every live agent of a PettingZoo Parallel env."""
    rng = np.random.default_rng(seed)
    observations, _ = env.reset(seed=seed)
    returns: dict[str, float] = {}
    for _ in range(cycles):
        if not env.agents:
            observations, _ = env.reset()
        actions = {}
        for agent in env.agents:
            obs = observations[agent]
            mask = obs.get("action_mask") if isinstance(obs, dict) else None
            actions[agent] = sample_action(env.action_space(agent), mask, rng)
        observations, rewards, _, _, _ = env.step(actions)
        for agent, reward in rewards.items():
            returns[agent] = returns.get(agent, 0.0) + reward
    for agent, total in sorted(returns.items()):
        print(f"{agent}: return {total:.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", type=Path, help="the Unity build's executable")
    parser.add_argument("--api", choices=("vector", "parallel"), default="vector")
    parser.add_argument("--steps", type=int, default=50_000, help="agent-steps or cycles")
    parser.add_argument("--behavior", help="the behaviour to train (--api vector)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--short", action="store_true", help="CI: without a build, exit 0")
    args = parser.parse_args(argv)
    short = args.short or os.environ.get("ZOOPORT_EXAMPLE_SHORT") == "1"
    if short:
        args.steps = min(args.steps, 512)

    if importlib.util.find_spec("mlagents_envs") is None:
        missing = "mlagents_envs is not installed"
    elif args.build is None:
        missing = "no --build was given"
    elif not args.build.exists():
        missing = f"the build {args.build} does not exist"
    else:
        missing = None
    if missing is not None:
        explain(missing, args)
        if short:
            return 0
        print("usage: python examples/unity_build.py --build PATH [--api vector|parallel]",
              file=sys.stderr)  # fmt: skip
        return 2

    unity = open_build(args.build, args.seed)
    owner = unity  # what closes the build: the adapter once there is one (it owns the core)
    try:
        describe(unity)
        if args.api == "vector":
            from stable_baselines3.common.vec_env import VecMonitor

            from zooport.adapters.sb3_vec_env import SB3VecEnv

            owner = VecMonitor(SB3VecEnv(unity, args.behavior))
            train_vector(owner, args.steps, args.seed)
        else:
            owner = PettingZooParallelEnv(unity, termination_mode="all")
            play_parallel(owner, args.steps, args.seed)
    finally:
        owner.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
