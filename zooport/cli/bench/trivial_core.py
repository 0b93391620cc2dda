"""A core whose simulation costs almost nothing, so a benchmark measures the plumbing.

Classes:
    TrivialCore: a ``BatchedEnv`` whose ``_step`` is a couple of array operations.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from zooport.envs.base_env import ActionSpec, ActionTuple, BehaviorName, BehaviorSpec
from zooport.envs.batched_env import BatchedEnv, StepResult
from zooport.envs.side_channel.side_channel import SideChannel
from zooport.envs.specs import ObservationSpec

__all__ = ["TrivialCore"]


class TrivialCore(BatchedEnv):
    """N agents drift a 4-vector with 2 continuous actions; ~1% of episodes end per step.

    The step is two array expressions and one random draw, so throughput measured on this
    core is the cost of ``BatchedEnv`` and of the adapter on top, not of a simulation.
    Episodes end (terminated) at random with probability 0.01 per step, so the restart and
    final-observation paths run at a steady rate rather than in bursts.

    With ``terminate=False`` no episode ever ends (and no random draw is made): every agent
    acts in every step, so a multi-agent adapter that counts only live agents counts all N,
    which is what the per-agent-step costs of the multi-agent routes are measured on.

    A subclass changes the class attributes (the observation's size, the chance an episode
    ends, how far an action moves the state) and adds to ``_step``
    (:class:`~zooport.cli.bench.costly_core.CostlyCore` burns CPU time there).

    Args:
        n_agents: agents of the one behaviour (``behavior_name``, ``"Trivial"``).
        seed: seeds the core's generator.
        max_steps: steps after which every episode is truncated (0 = never).
        terminate: end episodes at random (probability ``end_probability`` per agent and
            step).
        side_channels: the user's side channels.

    Example:
        >>> core = TrivialCore(n_agents=3, seed=0)
        >>> core.reset()
        >>> core.get_steps("Trivial")[0].obs[0].shape
        (3, 4)
        >>> endless = TrivialCore(n_agents=2, terminate=False)
        >>> endless.reset()
        >>> ended = 0
        >>> for _ in range(500):
        ...     endless.set_actions("Trivial", ActionTuple(np.ones((2, 2), np.float32)))
        ...     endless.step()
        ...     ended += len(endless.get_steps("Trivial")[1])
        >>> ended  # 500 steps of 2 agents, no terminal step
        0
    """

    behavior_name: ClassVar[BehaviorName] = "Trivial"
    #: The size of the observation ``"state"`` (its first 2 values move with the actions).
    state_size: ClassVar[int] = 4
    #: The chance an agent's episode ends in a step (with ``terminate``).
    end_probability: ClassVar[float] = 0.01
    #: How far an action of 1 moves the state in a step.
    action_gain: ClassVar[float] = 0.1

    def __init__(
        self,
        *,
        n_agents: int = 1,
        seed: int | None = None,
        max_steps: int = 0,
        terminate: bool = True,
        side_channels: Sequence[SideChannel] | None = None,
    ) -> None:
        super().__init__(seed=seed, max_steps=max_steps, side_channels=side_channels)
        self.terminate = terminate
        spec = BehaviorSpec(
            [ObservationSpec.vector(self.state_size, "state")], ActionSpec.create_continuous(2)
        )
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
