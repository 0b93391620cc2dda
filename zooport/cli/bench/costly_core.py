"""A core whose step costs a set amount of CPU per agent, standing in for a real simulation.

Classes:
    CostlyCore: a ``TrivialCore`` whose step burns ``us_per_agent`` microseconds of CPU time
        per agent (measured on the thread's own CPU clock), then moves a small state.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import numpy as np

from zooport.cli.bench.trivial_core import TrivialCore
from zooport.envs.base_env import ActionTuple, BehaviorName
from zooport.envs.batched_env import StepResult

__all__ = ["CostlyCore"]


class CostlyCore(TrivialCore):
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
        **options: :class:`~zooport.cli.bench.trivial_core.TrivialCore`'s (``seed``,
            ``max_steps``, ``terminate``, ``side_channels``).

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
