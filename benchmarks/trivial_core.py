"""A core whose simulation costs almost nothing, so a benchmark measures the plumbing.

Classes:
    TrivialCore: a ``BatchedEnv`` whose ``_step`` is a couple of array operations.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from zooport.envs.base_env import (
    ActionSpec,
    ActionTuple,
    BehaviorName,
    BehaviorSpec,
    DimensionProperty,
    ObservationSpec,
    ObservationType,
)
from zooport.envs.batched_env import BatchedEnv, StepResult

__all__ = ["TrivialCore"]


class TrivialCore(BatchedEnv):
    """N agents drift a 4-vector with 2 continuous actions; ~1% of episodes end per step.

    The step is two array expressions and one random draw, so throughput measured on this
    core is the cost of ``BatchedEnv`` and of the adapter on top, not of a simulation.
    Episodes end (terminated) at random with probability 0.01 per step, so the restart and
    final-observation paths run at a steady rate rather than in bursts.

    Example:
        >>> core = TrivialCore(n_agents=3, seed=0)
        >>> core.reset()
        >>> core.get_steps("Trivial")[0].obs[0].shape
        (3, 4)
    """

    behavior_name: ClassVar[BehaviorName] = "Trivial"

    def __init__(self, *, n_agents: int = 1, seed: int | None = None, max_steps: int = 0) -> None:
        super().__init__(seed=seed, max_steps=max_steps)
        obs = ObservationSpec((4,), (DimensionProperty.NONE,), ObservationType.DEFAULT, "state")
        spec = BehaviorSpec([obs], ActionSpec.create_continuous(2))
        self._add_behavior(self.behavior_name, spec, n_agents)
        self.n_agents = n_agents
        self._state = np.zeros((n_agents, 4), dtype=np.float32)

    def _reset_agents(self, behavior: BehaviorName, slots: np.ndarray) -> None:
        self._state[slots] = 0.0

    def _step(self, actions: dict[BehaviorName, ActionTuple]) -> dict[BehaviorName, StepResult]:
        self._state[:, :2] += 0.1 * actions[self.behavior_name].continuous
        terminated = self.np_random.random(self.n_agents) < 0.01
        return {self.behavior_name: StepResult(-np.abs(self._state[:, 0]), terminated)}

    def _observe(self, behavior: BehaviorName, slots: np.ndarray) -> list[np.ndarray]:
        return [self._state[slots]]
