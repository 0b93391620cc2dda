"""One behaviour's slot arrays in a :class:`~zooport.envs.batched_env.BatchedEnv`; the env's
step updates them as whole-array numpy."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from zooport.envs.base_env import BehaviorName, BehaviorSpec
from zooport.envs.steps import DecisionSteps, TerminalSteps

__all__ = ["StepResult", "BehaviorState"]


class StepResult(NamedTuple):
    """One behaviour's outcome of a step, (capacity,) arrays over its slots: ``terminated`` ends
    an episode, ``interrupted`` truncates it (as ``max_steps`` does); ``terminated`` wins."""

    reward: np.ndarray
    terminated: np.ndarray
    group_reward: np.ndarray | None = None
    interrupted: np.ndarray | None = None


@dataclasses.dataclass(eq=False)
class BehaviorState:
    """One behaviour's bookkeeping; every array is indexed by slot (0 .. capacity - 1)."""

    name: BehaviorName
    spec: BehaviorSpec
    initial: int  # the agents live after a reset
    capacity: int
    period: int  # the decision period
    max_steps: int
    restart: bool
    group: dataclasses.InitVar[int | np.ndarray | None]

    def __post_init__(self, group: int | np.ndarray | None) -> None:
        capacity, spec = self.capacity, self.spec
        self.ids = np.full(capacity, -1, dtype=np.int32)
        self.active = np.zeros(capacity, dtype=bool)
        self.group_id = np.full(capacity, 0 if group is None else group, dtype=np.int32)
        self.continuous = np.zeros((capacity, spec.action_spec.continuous_size), np.float32)
        self.discrete = np.zeros((capacity, spec.action_spec.discrete_size), np.int32)
        self.pending_reward = np.zeros(capacity, dtype=np.float32)
        self.pending_group = np.zeros(capacity, dtype=np.float32)
        self.episode_steps = np.zeros(capacity, dtype=np.int64)
        self.since_decision = np.zeros(capacity, dtype=np.int64)
        self.spawned = np.zeros(capacity, dtype=bool)
        # False while no slot is marked spawned: the step then skips the spawn masks.
        self.any_spawned = False
        self.decision_slots = np.zeros(0, dtype=np.intp)
        # True while decision_slots is every slot in order: actions are copied, not scattered.
        self.all_decide = False
        self.actions_set = False
        self.empty_terminal = TerminalSteps.empty(spec)
        # Empty until the first reset publishes (BatchedEnv refuses get_steps before it).
        self.steps = (DecisionSteps.empty(spec), self.empty_terminal)

    def start_episode(self, first_id: int) -> int:
        """Makes the first ``n_agents`` slots live with ids from ``first_id``; returns the next."""
        self.active[:] = np.arange(self.capacity) < self.initial
        self.ids[:] = np.where(self.active, first_id + np.arange(self.capacity), -1)
        self.clear(slice(None))
        self.spawned[:] = False
        self.any_spawned = False
        return first_id + self.initial

    def clear(self, slots: slice | np.ndarray) -> None:
        for array in (self.pending_reward, self.pending_group, self.episode_steps,
                      self.since_decision, self.continuous, self.discrete):  # fmt: skip
            array[slots] = 0

    def default_actions(self) -> None:
        """ML-Agents' rule: an agent that decided and got no action takes a zero action."""
        if not self.actions_set and self.decision_slots.size:
            self.continuous[self.decision_slots] = 0
            self.discrete[self.decision_slots] = 0

    def due_slots(
        self, done_slots: np.ndarray, spawned: np.ndarray | None, late_spawn: bool
    ) -> np.ndarray:
        """The slots that decide after this step (``late_spawn``: spawned outside ``_step``)."""
        if self.period == 1 and spawned is None and not late_spawn:
            # Every live agent was stepped, so its since_decision is >= 1: all are due
            # (a finished agent is live again if restarted, gone if retired).
            return self.active.nonzero()[0]
        due = self.since_decision >= self.period
        if spawned is not None:
            due |= spawned
        due &= self.active
        if done_slots.size and self.restart:
            due[done_slots] = True
        return due.nonzero()[0]
