"""A PettingZoo Parallel loop on Tag with random, mask-respecting actions.

The short version::

    from zooport.adapters.pettingzoo_envs import tag_v0
    env = tag_v0.parallel_env(seed=0, spawn_every=25)
    observations, infos = env.reset(seed=0)
    while env.agents:
        actions = {agent: env.action_space(agent).sample() for agent in env.agents}
        observations, rewards, terminations, truncations, infos = env.step(actions)

Run ``python examples/pettingzoo_parallel_loop.py`` for a few episodes with per-episode
statistics (steps, agents seen, how their episodes ended, mean reward per team); ``--short``
(or the environment variable ``ZOOPORT_EXAMPLE_SHORT=1``) plays one short episode, for CI.
Actions respect the action mask whenever the observation carries one (``--masks`` turns
masks on for Tag, whose moves are all always allowed).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict

from zooport.adapters.pettingzoo_envs import tag_v0


def sample(env, agent: str, observation) -> object:
    """A random action for ``agent``, drawn among the allowed ones where there is a mask."""
    space = env.action_space(agent)
    if isinstance(observation, dict) and "action_mask" in observation:
        return space.sample(mask=observation["action_mask"])
    return space.sample()


def play_episode(env, seed: int) -> dict[str, object]:
    """One episode; returns its statistics."""
    observations, infos = env.reset(seed=seed)
    for agent in env.agents:
        env.action_space(agent).seed(seed)
    returns: dict[str, float] = defaultdict(float)
    ended = {"terminated": 0, "truncated": 0}
    undecided = 0
    steps = 0
    while env.agents:
        actions = {agent: sample(env, agent, observations[agent]) for agent in env.agents}
        observations, rewards, terminations, truncations, infos = env.step(actions)
        steps += 1
        for agent, reward in rewards.items():
            returns[agent] += reward
        ended["terminated"] += sum(terminations.values())
        ended["truncated"] += sum(truncations.values())
        undecided += sum(not info["decided"] for info in infos.values())
    teams: dict[str, list[float]] = defaultdict(list)
    for agent, total in returns.items():
        teams[env.agent_key(agent).behavior].append(total)
    return {
        "steps": steps,
        "agents": len(env.possible_agents),
        "ended": ended,
        "undecided": undecided,
        "team_means": {team: sum(v) / len(v) for team, v in teams.items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", action="store_true", help="one short episode (CI)")
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mode", default="all", help="termination mode: any, majority, all, 0.5")
    parser.add_argument("--masks", action="store_true", help="give Tag's agents action masks")
    args = parser.parse_args(argv)
    short = args.short or os.environ.get("ZOOPORT_EXAMPLE_SHORT") == "1"
    mode = float(args.mode) if args.mode[:1].isdigit() else args.mode

    env = tag_v0.parallel_env(
        seed=args.seed,
        spawn_every=25,
        termination_mode=mode,
        max_cycles=40 if short else None,
        action_masks=True if args.masks else None,
    )
    print(f"{env}: behaviours {list(env.behavior_spaces())}, agents at reset {env.possible_agents}")
    start = time.perf_counter()
    total_steps = 0
    for episode in range(1 if short else args.episodes):
        stats = play_episode(env, args.seed + episode)
        total_steps += stats["steps"]
        means = ", ".join(f"{team} {mean:+.2f}" for team, mean in stats["team_means"].items())
        print(
            f"episode {episode}: {stats['steps']} steps, {stats['agents']} agents "
            f"({stats['ended']['terminated']} terminated, {stats['ended']['truncated']} "
            f"truncated), {stats['undecided']} agent-steps without a decision; "
            f"mean return {means}"
        )
    seconds = time.perf_counter() - start
    print(f"{total_steps} steps in {seconds:.2f} s ({total_steps / seconds:.0f} steps/s)")
    env.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
