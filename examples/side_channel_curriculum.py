"""A curriculum through ML-Agents side channels: BallBalance gets harder as PPO gets better.

The short version::

    params, stats = EnvironmentParametersChannel(), StatsSideChannel()
    core = BallBalance(n_agents=12, side_channels=[params, stats])
    model = PPO("MlpPolicy", VecMonitor(SB3VecEnv(core)))
    for lesson in LESSONS:
        params.set_float_parameter("gravity", lesson.gravity)    # Python -> simulation
        ...  model.learn(...)
        stats.get_and_reset_stats()["BallBalance/EpisodeReward"]  # simulation -> Python

The channels are byte-compatible with ML-Agents', so this loop drives a Unity build with
the same code. ``BallBalance`` reads ``gravity``, ``mass`` and ``scale`` whenever an agent's
episode starts, so a new lesson takes effect as episodes end, without a reset. When an
episode ends it reports ``BallBalance/EpisodeReward``, ``/EpisodeLength`` and ``/Fell``
through the stats channel, which is how this script knows when to move on.

The lessons raise gravity (the ball rolls faster) while the ball shrinks (``scale``: a
smaller ball meets less rolling resistance), ending at the default physics (gravity 9.81,
scale 1), so the last lesson is the registry's task: a lesson is passed when the mean
episode reward the simulation reported since the last check reaches its threshold (the
first check after a change is skipped: its episodes started in the previous lesson); the
last threshold is ``BallBalance.expected_reward``.

Usage:
    python examples/side_channel_curriculum.py [--short] [--seed 0]

Exits 0 when the last lesson is passed within the budget, 1 otherwise. With ``--short`` (or
``ZOOPORT_EXAMPLE_SHORT=1``, for CI) it trains a few seconds and moves to the next lesson
after every chunk, only to show the channels at work; it checks that the simulation read
every value sent and reported a statistic for every finished episode.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import NamedTuple

import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import VecMonitor

from zooport.adapters.sb3_vec_env import SB3VecEnv
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.side_channel.environment_parameters_channel import (
    EnvironmentParametersChannel,
)
from zooport.envs.side_channel.stats_side_channel import StatsSideChannel


class Lesson(NamedTuple):
    gravity: float
    scale: float
    threshold: float  # mean episode reward that passes the lesson


LESSONS = (
    Lesson(gravity=3.0, scale=1.5, threshold=15.0),
    Lesson(gravity=6.0, scale=1.25, threshold=15.0),
    Lesson(gravity=9.81, scale=1.0, threshold=BallBalance.expected_reward),
)
N_AGENTS = 12
#: Agent-steps per learn() call between two looks at the statistics, and in total.
CHUNK, BUDGET = 12 * 256 * 2, 300_000
SHORT_CHUNK, SHORT_BUDGET = 12 * 64, 12 * 64 * 3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--short", action="store_true", help="a few seconds, for CI")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    short = args.short or os.environ.get("ZOOPORT_EXAMPLE_SHORT") == "1"
    chunk, budget = (SHORT_CHUNK, SHORT_BUDGET) if short else (CHUNK, BUDGET)
    torch.set_num_threads(1)  # a small MLP: more threads only contend with the simulation

    params, stats = EnvironmentParametersChannel(), StatsSideChannel()
    core = BallBalance(n_agents=N_AGENTS, seed=args.seed, side_channels=[params, stats])
    venv = VecMonitor(SB3VecEnv(core))
    ppo = {"n_steps": 64, "batch_size": 256, "n_epochs": 1} if short else {
        "n_steps": 256, "batch_size": 512, "n_epochs": 10,
    }  # fmt: skip
    model = PPO("MlpPolicy", venv, seed=args.seed, device="cpu", **ppo)

    problems: list[str] = []
    lesson_index, passed = 0, False
    # An episode's statistics describe the lesson it started in: the first chunk after a
    # change still reports episodes of the previous lesson, so it does not count. (A chunk
    # is longer than an episode: 512 steps per agent against at most 200.)
    settling = True
    params.set_float_parameter("gravity", LESSONS[0].gravity)
    params.set_float_parameter("scale", LESSONS[0].scale)
    print(f"lesson 1/{len(LESSONS)}: {LESSONS[0]}")
    while model.num_timesteps < budget:
        model.learn(chunk, reset_num_timesteps=False)
        reported = stats.get_and_reset_stats()
        rewards = [value for value, _ in reported.get("BallBalance/EpisodeReward", [])]
        fell = [value for value, _ in reported.get("BallBalance/Fell", [])]
        if len(rewards) != len(fell):
            problems.append(f"{len(rewards)} episode rewards but {len(fell)} 'Fell' statistics")
        lesson = LESSONS[lesson_index]
        mean = float(np.mean(rewards)) if rewards else float("nan")
        # What the simulation reads now: the value sent, or the default if nothing arrived.
        read = core.environment_parameter("gravity", -1.0), core.environment_parameter("scale", -1)
        if read != (np.float32(lesson.gravity), np.float32(lesson.scale)):
            problems.append(f"the simulation reads (gravity, scale) {read}, sent {lesson[:2]}")
        print(
            f"  {model.num_timesteps:>7} agent-steps: {len(rewards):>3} episodes reported, mean "
            f"reward {mean:6.2f}, fell {np.mean(fell) if fell else float('nan'):.0%}; "
            f"simulation reads gravity {read[0]:.2f}, scale {read[1]:.2f}"
        )
        if settling and not short:
            settling = False
            continue
        if not (short or mean >= lesson.threshold):
            continue
        if lesson_index == len(LESSONS) - 1:
            passed = mean >= lesson.threshold
            break
        lesson_index += 1
        lesson = LESSONS[lesson_index]
        params.set_float_parameter("gravity", lesson.gravity)
        params.set_float_parameter("scale", lesson.scale)
        settling = True
        print(f"lesson {lesson_index + 1}/{len(LESSONS)}: {lesson}")
    venv.close()

    for problem in problems:
        print(f"PROBLEM: {problem}", file=sys.stderr)
    if short:
        print("--short: the lessons advance every chunk; rewards are not checked")
        return 1 if problems or lesson_index != len(LESSONS) - 1 else 0
    print(f"the last lesson is {'passed' if passed else 'NOT passed'}")
    return 0 if passed and not problems else 1


if __name__ == "__main__":
    sys.exit(main())
