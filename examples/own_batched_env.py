"""Write your own batched environment once; get Gymnasium, vector, SB3 and PettingZoo for free.

The short version::

    class LineWalk(BatchedEnv):                       # five array functions, no per-agent loop
        ...
    check_base_env(LineWalk())                        # the BaseEnv contract holds
    gym.make("examples/LineWalk-v0")                  # one agent, a gymnasium.Env
    BehaviorVectorEnv(LineWalk(n_agents=8))           # 8 agents, one gymnasium VectorEnv
    SB3VecEnv(LineWalk(n_agents=8))                   # 8 agents, one SB3 VecEnv
    PettingZooParallelEnv(LineWalk(n_agents=3))       # 3 agents, a PettingZoo ParallelEnv

``LineWalk`` is a complete environment in about fifty lines: every agent walks along its own
line of ``length`` cells to a target cell at least 5 cells away. Observation: (position,
target), cells counted from 1 and scaled to (0, 1]. Actions: one discrete branch, 0 left,
1 stay, 2 right; stepping off the line is masked (``_action_mask``, True = NOT available, as
in ML-Agents). Reward: -0.01 per step, +1 on arrival, which ends the agent's episode;
``BatchedEnv`` restarts it in the same step and interrupts an episode after ``max_steps``.
``_render`` draws every line for ``rgb_array``.

The script then uses that one class through every API, and each upstream checker passes:
zooport's ``check_base_env``, Gymnasium's ``check_env``, SB3's ``check_env``, PettingZoo's
``parallel_api_test`` and ``api_test`` (``zooport.checks.run_checkers`` runs them all at once,
as the ``zooport check`` command does: ``PYTHONPATH=examples zooport check
own_batched_env:LineWalk``).

Usage:
    python examples/own_batched_env.py [--short]

``--short`` (or ``ZOOPORT_EXAMPLE_SHORT=1``, for CI) takes fewer steps in each loop. Exits 1
if a checker fails or a loop sees something impossible.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Iterator

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env

from zooport.adapters.gym_env import GymEnv
from zooport.adapters.pettingzoo_aec import PettingZooAECEnv
from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.adapters.registration import register_gymnasium
from zooport.adapters.vector_env import BehaviorVectorEnv
from zooport.checks import EXPLAINED_WARNINGS
from zooport.envs.base_env import ActionSpec, BehaviorSpec, ObservationSpec
from zooport.envs.batched_env import BatchedEnv, StepResult
from zooport.envs.checker import check_base_env

LEFT, STAY, RIGHT = 0, 1, 2
#: No episode is shorter than this; PettingZoo's max_cycles_test assumes that most agents are
#: still alive after 4 random steps.
MIN_DISTANCE = 5


class LineWalk(BatchedEnv):
    """Every agent walks along its own line of cells to a target cell (see the module doc)."""

    behavior_name = "LineWalk"
    expected_reward = 0.9  # the shortest walk earns 1 - 0.01 * (distance - 1), 0.93 to 0.96

    def __init__(self, *, n_agents=4, length=12, max_steps=40, seed=None, side_channels=None):
        if length < 2 * MIN_DISTANCE:
            raise ValueError(f"Expect length >= {2 * MIN_DISTANCE}, actually: {length}")
        super().__init__(seed=seed, side_channels=side_channels, max_steps=max_steps)
        self.n_agents, self.length = n_agents, length
        obs = ObservationSpec.vector(2, "position_and_target")
        spec = BehaviorSpec([obs], ActionSpec.create_discrete((3,)))
        self._add_behavior(self.behavior_name, spec, n_agents)
        self.position = np.zeros(n_agents, dtype=np.int64)
        self.target = np.zeros(n_agents, dtype=np.int64)

    def _reset_agents(self, behavior, slots):
        # A new episode for these slots only: a random start, and a target at least
        # MIN_DISTANCE cells away towards the far end of the line.
        start = self.np_random.integers(0, self.length, slots.size)
        right = start < self.length // 2
        room = np.where(right, self.length - 1 - start, start)
        distance = self.np_random.integers(MIN_DISTANCE, room + 1)
        self.position[slots] = start
        self.target[slots] = np.where(right, start + distance, start - distance)

    def _step(self, actions):
        move = actions[self.behavior_name].discrete[:, 0] - 1  # -1, 0 or +1 per agent
        self.position = np.clip(self.position + move, 0, self.length - 1)
        arrived = self.position == self.target
        reward = np.where(arrived, 1.0, -0.01).astype(np.float32)
        return {self.behavior_name: StepResult(reward, arrived)}

    def _observe(self, behavior, slots):
        cells = np.stack([self.position[slots], self.target[slots]], axis=1) + 1
        return [(cells / self.length).astype(np.float32)]

    def _action_mask(self, behavior, slots):
        mask = np.zeros((slots.size, 3), dtype=bool)  # True = NOT available
        mask[:, LEFT] = self.position[slots] == 0
        mask[:, RIGHT] = self.position[slots] == self.length - 1
        return [mask]

    def _render(self):
        cell = 16
        image = np.full((self.n_agents * cell, self.length * cell, 3), 40, dtype=np.uint8)
        rows = np.arange(self.n_agents)
        for cells, colour in ((self.target, (60, 200, 60)), (self.position, (70, 110, 250))):
            for dr in range(2, cell - 2):
                for dc in range(2, cell - 2):
                    image[rows * cell + dr, cells * cell + dc] = colour
        return image


@contextlib.contextmanager
def explained_warnings_ignored() -> Iterator[None]:
    """Silences the upstream checkers' warnings that ML-Agents' specs cause by design.

    For example, an ``ObservationSpec`` has no bounds, so observations are ``Box(-inf, inf)``
    and Gymnasium's checker warns that -inf is "probably too low". ``zooport.checks`` lists
    each such warning with its reason; every other warning still shows.
    """
    with warnings.catch_warnings():
        for pattern, _reason in EXPLAINED_WARNINGS:
            warnings.filterwarnings("ignore", rf"(\x1b\[[0-9;]*m)?{pattern}")
        yield


def walk_towards(obs: np.ndarray) -> np.ndarray:
    """A scripted policy for any batch of observations: step towards the target."""
    position, target = obs[..., 0], obs[..., 1]
    return np.where(target > position, RIGHT, np.where(target < position, LEFT, STAY))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--short", action="store_true", help="fewer steps (CI)")
    args = parser.parse_args(argv)
    short = args.short or os.environ.get("ZOOPORT_EXAMPLE_SHORT") == "1"
    steps = 50 if short else 500
    problems: list[str] = []

    # 1. The core itself, ML-Agents style, and zooport's conformance checker.
    report = check_base_env(LineWalk(seed=0), steps=steps, strict=False)
    print(
        f"check_base_env: {'passed' if report.passed else 'FAILED'} ({len(report.results)} checks)"
    )
    if not report.passed:
        problems.append(str(report))
    core = LineWalk(n_agents=3, seed=0)
    core.reset()
    decision, _ = core.get_steps("LineWalk")
    mask = decision.action_mask[0][0].tolist()
    print(f"raw BaseEnv: agents {decision.agent_id.tolist()}, obs {decision.obs[0].shape}")
    print(f"  mask of agent 0 (True = NOT available, ML-Agents' polarity) {mask}")
    core.close()

    # 2. Gymnasium: one agent, registered under an id of your own.
    register_gymnasium("examples/LineWalk-v0", LineWalk, n_agents=1, max_episode_steps=100)
    env = gym.make("examples/LineWalk-v0")
    with explained_warnings_ignored():
        check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=0)
    episode_return, episodes = 0.0, []
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(int(walk_towards(obs)))
        episode_return += reward
        if terminated or truncated:
            episodes.append(episode_return)
            episode_return = 0.0
            obs, info = env.reset()
    env.close()
    mean = np.mean(episodes) if episodes else float("nan")
    print(f"gym.make: {len(episodes)} episodes with the scripted policy, mean return {mean:.3f}")
    print(f"  info['action_mask'] (1 = allowed, Gymnasium's polarity) {info['action_mask']}")
    if not episodes or min(episodes) <= 0:
        problems.append(f"the scripted policy should arrive every episode: {episodes}")

    # 3. Vector envs: the 8 agents of ONE core are the 8 slots (no per-agent Python loop).
    envs = BehaviorVectorEnv(LineWalk(n_agents=8, seed=0))
    obs, info = envs.reset(seed=0)
    finished = 0
    for _ in range(steps):
        obs, reward, terminated, truncated, info = envs.step(walk_towards(obs))
        finished += int(terminated.sum())
    envs.close()
    print(f"BehaviorVectorEnv: {envs.num_envs} slots, {finished} episodes finished "
          f"(autoreset {envs.metadata['autoreset_mode']})")  # fmt: skip
    try:
        from stable_baselines3.common.env_checker import check_env as sb3_check_env

        from zooport.adapters.sb3_vec_env import SB3VecEnv
    except ImportError:
        print("SB3VecEnv: stable-baselines3 is not installed (pip install zooport[sb3])")
    else:
        with explained_warnings_ignored():
            sb3_check_env(GymEnv(LineWalk(n_agents=1, seed=0)))
        venv = SB3VecEnv(LineWalk(n_agents=8, seed=0))
        print(f"SB3VecEnv: {venv.num_envs} envs; masks for MaskablePPO {venv.action_masks().shape}")
        venv.close()

    # 4. PettingZoo: every agent is named, masks go in obs["action_mask"].
    from pettingzoo.test import api_test, parallel_api_test

    with explained_warnings_ignored():
        parallel_api_test(PettingZooParallelEnv(LineWalk(n_agents=3, seed=0)), num_cycles=steps)
        api_test(PettingZooAECEnv(LineWalk(n_agents=3, seed=0)), num_cycles=steps)
    parallel = PettingZooParallelEnv(LineWalk(n_agents=3, seed=0), render_mode="rgb_array")
    observations, infos = parallel.reset(seed=0)
    keys = sorted(observations[parallel.agents[0]])
    print(f"PettingZooParallelEnv: agents {parallel.agents}, observation keys {keys}")
    print(f"  render() gives one picture of every agent: {parallel.render().shape}")
    while parallel.agents:
        actions = {a: int(walk_towards(observations[a]["observation"])) for a in parallel.agents}
        observations, rewards, terminations, truncations, infos = parallel.step(actions)
    parallel.close()

    # 5. Everything at once, as `zooport check` does, one line per checker.
    from zooport.checks import run_checkers

    suite = run_checkers(LineWalk, name="LineWalk", steps=steps, cycles=min(steps, 100))
    print(suite.format(show_warnings=False))
    if not suite.passed:
        problems.append("a checker failed in run_checkers")

    for problem in problems:
        print(f"PROBLEM: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
