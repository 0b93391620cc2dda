"""A core whose step costs a set amount of CPU per agent, standing in for a real simulation."""

from __future__ import annotations

import time
from typing import Any, ClassVar

import numpy as np

from zooport.cli.bench.trivial_core import TrivialCore
from zooport.envs.base_env import ActionTuple, BehaviorName
from zooport.envs.batched_env import StepResult

__all__ = ["CostlyCore"]


class CostlyCore(TrivialCore):
    """A TrivialCore of an 8-vector whose step burns ``us_per_agent * N`` microseconds of the
    thread's CPU time, however loaded the machine (7 us: ~450 us at N=64, a real simulation's).

    Example:
        >>> core = CostlyCore(n_agents=4, us_per_agent=10.0, seed=0)
        >>> core.reset()
        >>> began = time.thread_time()
        >>> core.step()
        >>> time.thread_time() - began >= 40e-6
        True
    """

    behavior_name: ClassVar[BehaviorName] = "Costly"
    state_size: ClassVar[int] = 8
    end_probability: ClassVar[float] = 0.005
    action_gain: ClassVar[float] = 0.01

    def __init__(self, *, n_agents: int = 64, us_per_agent: float = 7.0, **options: Any) -> None:
        super().__init__(n_agents=n_agents, **options)
        self.cost = us_per_agent * n_agents * 1e-6

    def _reset_agents(self, behavior: BehaviorName, slots: np.ndarray) -> None:
        self._state[slots] = self.np_random.uniform(-1, 1, (slots.size, self.state_size)).astype(
            np.float32
        )

    def _step(self, actions: dict[BehaviorName, ActionTuple]) -> dict[BehaviorName, StepResult]:
        until = time.thread_time() + self.cost
        while time.thread_time() < until:
            pass
        self._state[:, 2:] *= 0.99
        return super()._step(actions)
