"""A one-behaviour core whose every output is a function of its slot, for the slot family.

Classes:
    Counters: the agent in slot i counts its steps and terminates at ``lengths[i]``; one
        discrete branch with a mask, decision periods, spawning, rendering.

Functions:
    by_agent: ``{agent id: row}`` of a DecisionSteps/TerminalSteps field.
"""

from __future__ import annotations

import numpy as np

from zooport.envs import BatchedEnv, StepResult
from zooport.envs.base_env import ActionSpec, BehaviorSpec

from tests.support.specs import obs_spec

__all__ = ["Counters", "by_agent"]


class Counters(BatchedEnv):
    """The agent in slot i counts its steps and terminates at ``lengths[i]``.

    Reward per step: ``lengths[i]``; group reward 0.5; group id 7. Observation:
    ``[count, length]`` (identical for the same length whatever the slot, so N one-agent
    cores and one N-agent core give the same data). One discrete branch of 3; action 2 is
    masked (NOT available) while the count is odd. ``applied`` is the last action per slot.
    """

    def __init__(self, lengths=(2, 3, 5), period=1, restart=True, spawn_at=0, **kw):
        super().__init__(**kw)
        n = len(lengths)
        spec = BehaviorSpec([obs_spec((2,), "obs")], ActionSpec.create_discrete((3,)))
        self._add_behavior(
            "C", spec, n, capacity=n + 1, decision_period=period,
            restart_finished=restart, group_id=7,
        )  # fmt: skip
        self.lengths = np.array([*lengths, 100], dtype=np.float32)
        self.count = np.zeros(n + 1, np.float32)
        self.applied = np.zeros(n + 1, np.int32)
        self.spawn_at, self.t, self.closes = spawn_at, 0, 0

    def _on_reset(self):
        self.t = 0

    def _reset_agents(self, behavior, slots):
        self.count[slots] = 0

    def _step(self, actions):
        self.t += 1
        self.applied[:] = actions["C"].discrete[:, 0]
        self.count += 1
        if self.spawn_at and self.t == self.spawn_at:
            self._spawn("C", 1)
        group = np.full(self.count.size, 0.5, np.float32)
        return {"C": StepResult(self.lengths.copy(), self.count >= self.lengths, group)}

    def _observe(self, behavior, slots):
        return [np.stack([self.count[slots], self.lengths[slots]], axis=1)]

    def _action_mask(self, behavior, slots):
        mask = np.zeros((slots.size, 3), dtype=bool)
        mask[:, 2] = self.count[slots] % 2 == 1
        return [mask]

    def _render(self):
        return np.full((4, 6, 3), int(self.t), dtype=np.uint8)

    def close(self):
        self.closes += 1
        super().close()


def by_agent(steps, column=None):
    """{agent id: row} of a DecisionSteps/TerminalSteps field (obs[0] by default)."""
    values = steps.obs[0] if column is None else column
    return dict(zip(steps.agent_id.tolist(), values, strict=True))
