"""A core whose step costs a set amount of CPU per agent, standing in for a real simulation.

Classes:
    CostlyCore: a ``BatchedEnv`` whose step burns ``us_per_agent`` microseconds of CPU time
        per agent (measured on the thread's own CPU clock), then moves a small state.
"""

from __future__ import annotations

import time
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

__all__ = ["CostlyCore"]


class CostlyCore(BatchedEnv):
    """N agents drift an 8-vector with 2 continuous actions; each step costs
    ``us_per_agent * N`` microseconds of this thread's CPU time.

    The cost is spent on the thread's CPU clock (``time.thread_time``), not the wall clock:
    on a loaded machine a step still does the same work, however long it waits for a CPU.
    At the default 7 us per agent a step costs about 450 us at N=64, the regime of a real
    simulation (and of the measurements in issue 15), and 7 ms at N=1024. Episodes end at
    random with probability 0.005 per agent and step, and never end with
    ``terminate=False``.

    Args:
        n_agents: agents of the one behaviour ``"Costly"``.
        us_per_agent: CPU microseconds a step costs per agent.
        seed: seeds the core's generator.
        side_channels: the user's side channels.
        terminate: end episodes at random.

    Example:
        >>> core = CostlyCore(n_agents=4, us_per_agent=10.0, seed=0)
        >>> core.reset()
        >>> began = time.thread_time()
        >>> core.step()
        >>> time.thread_time() - began >= 40e-6
        True
    """

    behavior_name: ClassVar[BehaviorName] = "Costly"

    def __init__(
        self,
        *,
        n_agents: int = 64,
        us_per_agent: float = 7.0,
        seed: int | None = None,
        side_channels=None,
        terminate: bool = True,
    ) -> None:
        super().__init__(seed=seed, side_channels=side_channels)
        obs = ObservationSpec((8,), (DimensionProperty.NONE,), ObservationType.DEFAULT, "state")
        self._add_behavior(
            self.behavior_name, BehaviorSpec([obs], ActionSpec.create_continuous(2)), n_agents
        )
        self.n_agents = n_agents
        self.cost = us_per_agent * n_agents * 1e-6
        self.terminate = terminate
        self._state = np.zeros((n_agents, 8), dtype=np.float32)

    def _reset_agents(self, behavior: BehaviorName, slots: np.ndarray) -> None:
        self._state[slots] = self.np_random.uniform(-1, 1, (slots.size, 8)).astype(np.float32)

    def _step(self, actions: dict[BehaviorName, ActionTuple]) -> dict[BehaviorName, StepResult]:
        until = time.thread_time() + self.cost
        while time.thread_time() < until:
            pass
        self._state[:, :2] += 0.01 * actions[self.behavior_name].continuous
        self._state[:, 2:] *= 0.99
        if self.terminate:
            ended = self.np_random.random(self.n_agents) < 0.005
        else:
            ended = np.zeros(self.n_agents, dtype=bool)
        return {self.behavior_name: StepResult(-np.abs(self._state[:, 0]), ended)}

    def _observe(self, behavior: BehaviorName, slots: np.ndarray) -> list[np.ndarray]:
        return [self._state[slots]]
