"""``make demo``: drive every registered environment and print what it does.

Functions:
    rollout: drive one core with random (mask-respecting) actions; episode statistics.
    main: the table for every entry of ``default_registry``.

Run as ``python -m zooport.demo [--steps N] [--seed S]``.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np

from zooport.envs.base_env import ActionTuple, BaseEnv

__all__ = ["RolloutStats", "rollout", "random_actions", "main"]


@dataclass
class RolloutStats:
    """What one random rollout of a core measured."""

    agents: int
    steps: int
    agent_steps: int
    seconds: float
    episodes: int
    mean_episode_reward: float

    @property
    def agent_steps_per_second(self) -> float:
        return self.agent_steps / self.seconds if self.seconds > 0 else float("inf")


def random_actions(spec, action_mask, n: int, rng: np.random.Generator) -> ActionTuple:
    """Uniform random actions for ``n`` agents that never pick a masked discrete action.

    Example:
        >>> from zooport.envs.base_env import ActionSpec
        >>> spec = ActionSpec.create_discrete((3,))
        >>> mask = [np.array([[True, True, False]])]  # only action 2 is available
        >>> random_actions(spec, mask, 1, np.random.default_rng(0)).discrete.tolist()
        [[2]]
    """
    action = spec.random_action(n, rng)
    if action_mask is None or not spec.discrete_size or n == 0:
        return action
    columns = []
    for branch, mask in zip(spec.discrete_branches, action_mask, strict=True):
        allowed = ~np.asarray(mask, dtype=bool)
        # Random scores, masked ones pushed below every allowed one, then the best: a
        # uniform pick among the allowed actions of each row.
        scores = rng.random((n, branch)) + allowed
        columns.append(np.argmax(scores, axis=1))
    return ActionTuple(continuous=action.continuous, discrete=np.stack(columns, 1).astype(np.int32))


def rollout(core: BaseEnv, steps: int, seed: int = 0) -> RolloutStats:
    """Drives ``core`` for ``steps`` steps with random actions; per-agent episode rewards."""
    rng = np.random.default_rng(seed)
    if getattr(core, "seedable", False):
        core.reset(seed=seed)
    else:
        core.reset()
    names = list(core.behavior_specs)
    running: dict[tuple[str, int], float] = {}
    finished: list[float] = []
    agent_steps = 0
    agents = sum(len(core.get_steps(name)[0]) for name in names)
    start = time.perf_counter()
    for _ in range(steps):
        for name in names:
            decision, terminal = core.get_steps(name)
            ended = zip(terminal.agent_id.tolist(), terminal.reward.tolist(), strict=True)
            for agent, reward in ended:
                finished.append(running.pop((name, agent), 0.0) + reward)
            deciding = zip(decision.agent_id.tolist(), decision.reward.tolist(), strict=True)
            for agent, reward in deciding:
                running[(name, agent)] = running.get((name, agent), 0.0) + reward
            agent_steps += len(decision)
            spec = core.behavior_specs[name].action_spec
            core.set_actions(name, random_actions(spec, decision.action_mask, len(decision), rng))
        core.step()
    seconds = time.perf_counter() - start
    mean = float(np.mean(finished)) if finished else float("nan")
    return RolloutStats(agents, steps, agent_steps, seconds, len(finished), mean)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="core steps per environment")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error(f"--steps must be positive, got {args.steps}")

    from zooport.envs.registry import default_registry

    header = (
        "| environment | behaviours | agents | steps | agent-steps/s | episodes "
        "| mean episode reward (random) | expected reward (trained) |"
    )
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for identifier in default_registry:
        entry = default_registry[identifier]
        core = entry.make(seed=args.seed)
        try:
            stats = rollout(core, args.steps, args.seed)
            behaviours = ", ".join(core.behavior_specs)
        finally:
            core.close()
        print(
            f"| {identifier} | {behaviours} | {stats.agents} | {stats.steps} "
            f"| {stats.agent_steps_per_second:,.0f} | {stats.episodes} "
            f"| {stats.mean_episode_reward:.3f} | {entry.expected_reward} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
