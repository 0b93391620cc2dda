"""One behaviour's slot arrays in a :class:`~zooport.envs.batched_env.BatchedEnv`, and what each
phase of a step does to them, as whole-array numpy."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from zooport.envs.specs import BehaviorName, BehaviorSpec
from zooport.envs.steps import DecisionSteps, TerminalSteps
from zooport.errors import SpecError

__all__ = ["StepResult", "BehaviorState"]

#: The interrupted flags of no done slot (read-only: shared by every such step).
_NO_FLAGS = np.zeros(0, bool)
_NO_FLAGS.flags.writeable = False


class StepResult(NamedTuple):
    """One behaviour's outcome of a step, (capacity,) arrays over its slots: ``terminated`` ends
    an episode, ``interrupted`` truncates it (as ``max_steps`` does); ``terminated`` wins."""

    reward: np.ndarray
    terminated: np.ndarray
    group_reward: np.ndarray | None = None
    interrupted: np.ndarray | None = None


class BehaviorState:
    """One behaviour's bookkeeping; every array is indexed by slot (0 .. capacity - 1)."""

    __slots__ = (
        "name", "spec", "capacity", "initial", "period", "max_steps", "restart",
        "ids", "active", "group_id", "continuous", "discrete", "pending_reward",
        "pending_group", "episode_steps", "since_decision", "spawned", "any_spawned",
        "decision_slots", "all_decide", "actions_set", "steps", "empty_terminal",
    )  # fmt: skip

    def __init__(
        self,
        name: BehaviorName,
        spec: BehaviorSpec,
        n_agents: int,
        capacity: int,
        *,
        period: int,
        max_steps: int,
        restart: bool,
        group_id: int | np.ndarray | None = None,
    ) -> None:
        self.name = name
        self.spec = spec
        self.capacity = capacity
        self.initial = n_agents
        self.period = period
        self.max_steps = max_steps
        self.restart = restart
        self.ids = np.full(capacity, -1, dtype=np.int32)
        self.active = np.zeros(capacity, dtype=bool)
        self.group_id = np.zeros(capacity, dtype=np.int32)
        if group_id is not None:
            self.group_id[:] = group_id
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
        self.steps: tuple[DecisionSteps, TerminalSteps] = (
            DecisionSteps.empty(spec),
            self.empty_terminal,
        )

    def start_episode(self, first_id: int) -> int:
        """Makes the first ``n_agents`` slots live with ids from ``first_id``; returns the next."""
        self.active[:] = False
        self.active[: self.initial] = True
        self.ids[:] = -1
        self.ids[: self.initial] = np.arange(first_id, first_id + self.initial)
        self._clear(slice(None))
        self.spawned[:] = False
        self.any_spawned = False
        return first_id + self.initial

    def spawn(self, count: int, first_id: int) -> np.ndarray:
        """Makes up to ``count`` free slots live with ids from ``first_id``; returns them."""
        free = np.flatnonzero(~self.active)[:count]
        self.active[free] = True
        self.spawned[free] = True
        self.any_spawned |= free.size > 0
        self.ids[free] = np.arange(first_id, first_id + free.size, dtype=np.int32)
        self._clear(free)
        return free

    def _clear(self, slots: slice | np.ndarray) -> None:
        for array in (self.pending_reward, self.pending_group, self.episode_steps,
                      self.since_decision, self.continuous, self.discrete):  # fmt: skip
            array[slots] = 0

    def default_actions(self) -> None:
        """ML-Agents' rule: an agent that decided and got no action takes a zero action."""
        if not self.actions_set and self.decision_slots.size:
            self.continuous[self.decision_slots] = 0
            self.discrete[self.decision_slots] = 0

    def account(
        self, result: StepResult, where: str
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Accumulates a step's rewards; returns the done slots, their interrupted flags and
        the spawned mask (or None)."""
        capacity = self.capacity
        active = self.active
        reward = np.asarray(result.reward, dtype=np.float32)
        terminated = np.asarray(result.terminated, dtype=bool)
        if reward.shape != (capacity,) or terminated.shape != (capacity,):
            raise SpecError(
                f"{where} for behavior {self.name!r}: expected reward and terminated of "
                f"shape ({capacity},), got {reward.shape} and {terminated.shape}"
            )
        # A slot spawned during this _step starts its episode after it: its reward and flags
        # from this step are ignored.
        spawned = self.spawned & active if self.any_spawned else None
        # Every slot stepped (no empty or spawned slot) is the common case: whole-array
        # updates then, masked in-place ones otherwise (boolean fancy indexing is slower).
        everyone = spawned is None and np.count_nonzero(active) == capacity
        stepped = active if spawned is None else active & ~spawned
        rows = True if everyone else stepped
        np.add(self.pending_reward, reward, out=self.pending_reward, where=rows)
        if result.group_reward is not None:  # any dtype or shape: broadcast, then rounded
            self.pending_group += np.where(stepped, result.group_reward, 0.0).astype(np.float32)
        counted = 1 if everyone else stepped
        self.since_decision += counted
        limited = self.max_steps > 0
        if limited:  # episode_steps serves only the max_steps limit
            self.episode_steps += counted
        if not everyone:
            terminated = terminated & stepped
        limit = self.episode_steps >= self.max_steps if limited else None
        if result.interrupted is not None:
            flag = np.asarray(result.interrupted, dtype=bool)
            limit = flag if limit is None else limit | flag
        if limit is None:
            # No time limit and no interruption from the author: nothing is truncated.
            cut = None
            done_slots = terminated.nonzero()[0]
        else:
            cut = ~terminated & limit
            if not everyone:
                cut &= stepped
            done_slots = (terminated | cut).nonzero()[0]
        if not done_slots.size:
            return done_slots, _NO_FLAGS, spawned
        self.episode_steps[done_slots] = 0
        interrupted = np.zeros(done_slots.size, bool) if cut is None else cut[done_slots]
        return done_slots, interrupted, spawned

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

    def publish(
        self,
        slots: np.ndarray,
        in_order: bool,
        obs: list[np.ndarray],
        action_mask: list[np.ndarray] | None,
        terminal: TerminalSteps | None,
    ) -> None:
        """Makes ``slots`` this step's decisions (``in_order``: every slot, in order)."""
        if in_order:
            # Every slot decides, in order: copies and fills are several times cheaper than
            # gathers and scatters at large N.
            reward, agent_id = self.pending_reward.copy(), self.ids.copy()
            group_id, group_reward = self.group_id.copy(), self.pending_group.copy()
            self.pending_reward.fill(0)
            self.pending_group.fill(0)
            self.since_decision.fill(0)
        else:
            reward, agent_id = self.pending_reward[slots], self.ids[slots]
            group_id, group_reward = self.group_id[slots], self.pending_group[slots]
            self.pending_reward[slots] = 0
            self.pending_group[slots] = 0
            self.since_decision[slots] = 0
        decision = DecisionSteps(obs, reward, agent_id, action_mask, group_id, group_reward)
        self.decision_slots = slots
        self.all_decide = in_order
        if terminal is None:
            # A fresh object every step (its arrays, all of size 0, are shared): a consumer
            # that changes one step's TerminalSteps never changes another step's.
            e = self.empty_terminal
            terminal = TerminalSteps(
                list(e.obs), e.reward, e.interrupted, e.agent_id, e.group_id, e.group_reward
            )
        self.steps = (decision, terminal)
