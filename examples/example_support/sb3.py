"""The parts the Stable-Baselines3 examples share.

Functions:
    parse_arguments: the command line every example takes (``--short``, ``--seed``), plus its
        own options.
    ballbalance_ppo: PPO with the settings the BallBalance examples train with.
    train_until: ``model.learn`` in chunks until the recent episodes reach the target or the
        budget is spent, printing progress.
    evaluate_slots: the mean reward of the first full episode of every slot of a fresh
        ``SB3VecEnv`` core under a policy.
    trained_and_random: the deterministic trained policy (observations normalised as in
        training) and a uniformly random one, to compare.
    report: prints the outcome and returns the exit code (0: passed).
    train_and_evaluate: the BallBalance examples' whole run after their route: train, evaluate
        against random actions, report.

Classes:
    SeededSuperSuitVecEnv: SuperSuit's SB3 ``VecEnv`` with a ``seed()`` and
        ``get_attr("render_mode")`` that work.
"""

from __future__ import annotations

import argparse
import functools
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper, VecNormalize

from zooport.adapters.sb3_vec_env import SB3VecEnv
from zooport.envs.builtin.ball_balance import BallBalance

#: The rollout length of the BallBalance examples' PPO.
N_STEPS = 128

Policy = Callable[[np.ndarray], np.ndarray]


def parse_arguments(
    description: str | None, argv: list[str] | None, add: Callable[[Any], None] | None = None
) -> argparse.Namespace:
    """``--short`` and ``--seed``, then what ``add(parser)`` adds.

    ``args.short`` is also true where the environment sets ``ZOOPORT_EXAMPLE_SHORT=1`` (CI).
    """
    parser = argparse.ArgumentParser(description=(description or "").split("\n\n")[0])
    parser.add_argument("--short", action="store_true", help="a few seconds, for CI")
    if add is not None:
        add(parser)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.short = args.short or os.environ.get("ZOOPORT_EXAMPLE_SHORT") == "1"
    return args


def ballbalance_ppo(env: VecEnv, seed: int) -> PPO:
    """PPO as the BallBalance examples train it: a 64x64 MLP, 128-step rollouts."""
    return PPO(
        "MlpPolicy", env, n_steps=N_STEPS, batch_size=256, n_epochs=10, learning_rate=3e-4,
        gamma=0.99, gae_lambda=0.95, policy_kwargs={"net_arch": [64, 64]}, seed=seed,
    )  # fmt: skip


def train_until(
    model: Any, *, budget: int, chunk: int, window: int, target: float, short: bool
) -> float:
    """Trains in ``chunk``-step calls until the mean reward of the last ``window`` episodes
    reaches ``target`` (never in short mode) or ``budget`` steps are spent; returns seconds."""
    began = time.perf_counter()
    while model.num_timesteps < budget:
        model.learn(chunk, reset_num_timesteps=False)
        episodes = list(model.ep_info_buffer)[-window:]
        recent = float(np.mean([e["r"] for e in episodes])) if episodes else float("nan")
        print(
            f"{model.num_timesteps:>8} steps  {time.perf_counter() - began:6.1f} s  "
            f"mean episode reward {recent:6.2f}  (target {target})",
            flush=True,
        )
        if not short and recent >= target:
            break
    return time.perf_counter() - began


def evaluate_slots(
    make_venv: Callable[[], VecEnv], policy: Policy, n_slots: int, max_steps: int, seed: int
) -> float:
    """The mean reward of the first full episode of every slot of ``make_venv()``."""
    venv = make_venv()
    venv.seed(seed)
    obs = venv.reset()
    returns = np.zeros(n_slots)
    finished = np.zeros(n_slots, dtype=bool)
    for _ in range(max_steps):
        obs, reward, done, _ = venv.step(policy(obs))
        returns[~finished] += reward[~finished]
        finished |= done
        if finished.all():
            break
    venv.close()
    return float(returns.mean())


def trained_and_random(model: Any, env: Any, seed: int, n_actions: int) -> tuple[Policy, Policy]:
    """The trained policy (deterministic; ``env``, a ``VecNormalize``, stops updating its
    statistics and normalises observations as in training) and uniform actions in [-1, 1]."""
    env.training = False
    rng = np.random.default_rng(seed)

    def trained(obs: np.ndarray) -> np.ndarray:
        return model.predict(env.normalize_obs(obs), deterministic=True)[0]

    def random(obs: np.ndarray) -> np.ndarray:
        return rng.uniform(-1.0, 1.0, (len(obs), n_actions)).astype(np.float32)

    return trained, random


def report(
    model: Any, seconds: float, score: float, baseline: float, target: float, short: bool
) -> int:
    """Prints the outcome; 0 when the score reaches ``target`` (in short mode: beats random)."""
    print(
        f"trained {model.num_timesteps} steps in {seconds:.1f} s "
        f"({model.num_timesteps / seconds:,.0f} steps/s including PPO updates); "
        f"evaluation: {score:.2f} mean episode reward (random actions: {baseline:.2f}, "
        f"expected reward: {target})"
    )
    passed = score > baseline if short else score >= target
    print("PASSED" if passed else "FAILED")
    return 0 if passed else 1


def fresh_platforms(n_platforms: int) -> SB3VecEnv:
    """A new BallBalance core's platforms as SB3 environments (to evaluate on)."""
    return SB3VecEnv(BallBalance(n_agents=n_platforms))


def train_and_evaluate(
    env: VecNormalize,
    args: argparse.Namespace,
    *,
    budget: int,
    short_budget: int,
    evaluate: Callable[[Policy], float] | None = None,
) -> int:
    """The BallBalance examples' run once their route built ``env``; returns the exit code.

    PPO trains until the mean reward of the recent episodes reaches
    ``BallBalance.expected_reward`` (never with ``args.short``) or ``budget`` steps (with
    ``args.short``: ``short_budget``) are spent; then
    ``evaluate(policy)`` scores the deterministic trained policy and uniformly random actions.
    The default ``evaluate`` plays one full episode on every platform of a fresh core with as
    many platforms as ``env`` has slots, seeded ``args.seed + 1000``.
    """
    torch.set_num_threads(1)  # a 64x64 MLP: more threads only contend with the simulation
    short = args.short
    budget = short_budget if short else budget
    target = BallBalance.expected_reward
    slots = env.num_envs
    if evaluate is None:
        make = functools.partial(fresh_platforms, slots)
        steps, seed = BallBalance.max_episode_steps, args.seed + 1000
        evaluate = functools.partial(
            evaluate_slots, make, n_slots=slots, max_steps=steps, seed=seed
        )
    model = ballbalance_ppo(env, args.seed)
    seconds = train_until(
        model, budget=budget, chunk=slots * N_STEPS * 4, window=2 * slots, target=target,
        short=short,
    )  # fmt: skip
    trained, random = trained_and_random(model, env, args.seed, n_actions=2)
    score, baseline = evaluate(trained), evaluate(random)
    env.close()  # closes the route's env (and a pool's workers)
    return report(model, seconds, score, baseline, target, short)


class SeededSuperSuitVecEnv(VecEnvWrapper):
    """SuperSuit's SB3 ``VecEnv`` with ``seed()`` and ``get_attr`` that work.

    SuperSuit 3.11's SB3 wrapper forwards ``seed()`` to its Gymnasium ``ConcatVecEnv``, and
    Gymnasium 1.x vector envs have no ``seed()`` any more, so it raises ``AttributeError``;
    likewise every SB3 ``VecEnvWrapper`` (``VecMonitor``, ``VecNormalize``) asks for
    ``get_attr("render_mode")``, which fails the same way. Here ``seed(s)`` is held until the
    next ``reset()``, which resets the Gymnasium vector env with ``seed=s`` (copy ``i`` gets
    ``s + i``), and ``render_mode`` is answered here.
    """

    def __init__(self, venv: VecEnv) -> None:
        super().__init__(venv)
        self._pending_seed: int | None = None

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        self._pending_seed = seed
        return [None if seed is None else seed + i for i in range(self.num_envs)]

    def reset(self) -> Any:
        seed, self._pending_seed = self._pending_seed, None
        if seed is None:
            return self.venv.reset()
        # SuperSuit's SB3 wrapper resets its Gymnasium ConcatVecEnv without a seed; go past it.
        observations, infos = self.venv.venv.reset(seed=seed)
        self.venv.reset_infos = infos
        return observations

    def step_wait(self) -> Any:
        return self.venv.step_wait()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        if attr_name == "render_mode":
            return [getattr(self.venv, "render_mode", None)] * len(self._get_indices(indices))
        return self.venv.get_attr(attr_name, indices)
