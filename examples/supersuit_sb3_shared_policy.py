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
  which fails the same way and becomes a warning. :class:`SeededSuperSuitVecEnv` answers
  ``render_mode`` itself, holds the seed until the next ``reset()`` and passes it to
  ``ConcatVecEnv.reset(seed=...)``, which gives copy ``i`` the seed ``seed + i``. Without a
  seed the copies are identical clones (``concat_vec_envs_v1`` pickles the env), which start
  in the same state.

PPO trains until the mean episode reward of recent episodes reaches
``BallBalance.expected_reward``; the deterministic policy is then evaluated for one full episode
on every platform of a fresh, differently seeded core.

Usage:
    python examples/supersuit_sb3_shared_policy.py [--short] [--agents 12] [--copies 1] [--seed 0]

Exits 0 when the evaluated mean episode reward reaches the expected reward, 1 otherwise.
With ``--short`` (or ``ZOOPORT_EXAMPLE_SHORT=1``, for CI) it trains for a few seconds and
only checks that the policy beats random actions.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np
import supersuit as ss
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper, VecMonitor, VecNormalize

from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.envs.builtin.ball_balance import BallBalance

#: Environment steps (summed over agents) before giving up.
FULL_BUDGET = 300_000
SHORT_BUDGET = 12_288
N_STEPS = 128


class SeededSuperSuitVecEnv(VecEnvWrapper):
    """SuperSuit's SB3 ``VecEnv`` with ``seed()`` and ``get_attr`` that work (module docstring).

    ``seed(s)`` is applied at the next ``reset()``: SuperSuit's Gymnasium vector env is reset
    with ``seed=s``, which seeds its copy ``i`` with ``s + i``.
    """

    def __init__(self, venv: VecEnv) -> None:
        super().__init__(venv)
        self._pending_seed: int | None = None

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        self._pending_seed = seed
        return [None if seed is None else seed + i for i in range(self.num_envs)]

    def reset(self) -> np.ndarray:
        seed, self._pending_seed = self._pending_seed, None
        if seed is None:
            return self.venv.reset()
        # SuperSuit's SB3 wrapper resets its Gymnasium ConcatVecEnv without a seed; go past it.
        observations, infos = self.venv.venv.reset(seed=seed)
        self.venv.reset_infos = infos
        return observations

    def step_wait(self):
        return self.venv.step_wait()

    def get_attr(self, attr_name: str, indices=None) -> list:
        # SuperSuit forwards get_attr to its Gymnasium vector env, which has none; SB3 asks
        # every VecEnv for its render_mode when a wrapper (VecMonitor, VecNormalize) is built.
        if attr_name == "render_mode":
            return [self.venv.render_mode] * len(self._get_indices(indices))
        return self.venv.get_attr(attr_name, indices)


def make_vec_env(n_agents: int, copies: int, seed: int | None = None) -> VecEnv:
    """The route: BallBalance -> PettingZoo Parallel -> SuperSuit vector env -> SB3 VecEnv."""
    parallel = PettingZooParallelEnv(
        BallBalance(n_agents=n_agents, seed=seed), termination_mode="any"
    )
    markov = ss.pettingzoo_env_to_vec_env_v1(parallel)
    venv = ss.concat_vec_envs_v1(markov, copies, num_cpus=0, base_class="stable_baselines3")
    return SeededSuperSuitVecEnv(venv)


def evaluate(policy: Callable[[np.ndarray], np.ndarray], n_agents: int, seed: int) -> float:
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
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--short", action="store_true", help="a few seconds, for CI")
    parser.add_argument("--agents", type=int, default=12, help="platforms per core")
    parser.add_argument("--copies", type=int, default=1, help="cores side by side (SuperSuit)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    short = args.short or os.environ.get("ZOOPORT_EXAMPLE_SHORT") == "1"
    target = BallBalance.expected_reward
    # A 64x64 MLP: one thread is fastest (more only contend with the simulation).
    torch.set_num_threads(1)

    n_envs = args.agents * args.copies
    env = VecNormalize(VecMonitor(make_vec_env(args.agents, args.copies)), norm_reward=False)
    model = PPO(
        "MlpPolicy", env, n_steps=N_STEPS, batch_size=256, n_epochs=10, learning_rate=3e-4,
        gamma=0.99, gae_lambda=0.95, policy_kwargs={"net_arch": [64, 64]}, seed=args.seed,
    )  # fmt: skip
    budget = SHORT_BUDGET if short else FULL_BUDGET
    chunk = n_envs * N_STEPS * 4
    began = time.perf_counter()
    recent = float("nan")
    while model.num_timesteps < budget:
        model.learn(chunk, reset_num_timesteps=False)
        episodes = list(model.ep_info_buffer)[-2 * n_envs :]
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
