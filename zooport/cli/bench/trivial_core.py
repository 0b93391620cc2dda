"""The benchmarks' cores: one whose simulation costs almost nothing, so a benchmark measures the
plumbing, and one whose step burns a set amount of CPU per agent, standing in for a real one."""

from __future__ import annotations

import time
from typing import Any, ClassVar

import numpy as np

from zooport.envs.base_env import (
    ActionSpec,
    ActionTuple,
    BehaviorName,
    BehaviorSpec,
    ObservationSpec,
)
from zooport.envs.batched_env import BatchedEnv, StepResult

__all__ = ["CostlyCore", "TrivialCore"]


class TrivialCore(BatchedEnv):
    """N agents drift a 4-vector with 2 continuous actions; ~1% of episodes end per step (none
    with ``terminate=False``): what is measured is ``BatchedEnv`` and the adapter on top."""

    behavior_name: ClassVar[BehaviorName] = "Trivial"
    state_size: ClassVar[int] = 4
    end_probability: ClassVar[float] = 0.01
    action_gain: ClassVar[float] = 0.1

    def __init__(
        self, n_agents: int = 1, seed: int | None = None, *, terminate: bool = True, **options: Any
    ) -> None:
        super().__init__(seed=seed, **options)
        self.terminate = terminate
        observation = ObservationSpec.vector(self.state_size, "state")
        spec = BehaviorSpec([observation], ActionSpec.create_continuous(2))
        self._add_behavior(self.behavior_name, spec, n_agents)
        self.n_agents = n_agents
        self._state = np.zeros((n_agents, self.state_size), dtype=np.float32)

    def _reset_agents(self, behavior: BehaviorName, slots: np.ndarray) -> None:
        self._state[slots] = 0.0

    def _step(self, actions: dict[BehaviorName, ActionTuple]) -> dict[BehaviorName, StepResult]:
        self._state[:, :2] += self.action_gain * actions[self.behavior_name].continuous
        if self.terminate:
            terminated = self.np_random.random(self.n_agents) < self.end_probability
        else:
            terminated = np.zeros(self.n_agents, dtype=bool)
        return {self.behavior_name: StepResult(-np.abs(self._state[:, 0]), terminated)}

    def _observe(self, behavior: BehaviorName, slots: np.ndarray) -> list[np.ndarray]:
        return [self._state[slots]]


class CostlyCore(TrivialCore):
    """A TrivialCore of an 8-vector whose step burns ``us_per_agent * N`` microseconds of the
    thread's CPU time, however loaded the machine (7 us: ~450 us at N=64, a real simulation's)."""

    behavior_name: ClassVar[BehaviorName] = "Costly"
    state_size: ClassVar[int] = 8
    end_probability: ClassVar[float] = 0.005
    action_gain: ClassVar[float] = 0.01

    def __init__(
        self, n_agents: int = 64, seed: int | None = None, *, us_per_agent: float = 7.0, **kw: Any
    ) -> None:
        super().__init__(n_agents, seed, **kw)
        self.cost = us_per_agent * n_agents * 1e-6

    def _reset_agents(self, behavior: BehaviorName, slots: np.ndarray) -> None:
        uniform = self.np_random.uniform(-1, 1, (slots.size, self.state_size))
        self._state[slots] = uniform.astype(np.float32)

    def _step(self, actions: dict[BehaviorName, ActionTuple]) -> dict[BehaviorName, StepResult]:
        until = time.thread_time() + self.cost
        while time.thread_time() < until:
            pass
        self._state[:, 2:] *= 0.99
        return super()._step(actions)
