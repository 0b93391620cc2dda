"""The pool's batches over a behaviour's segment: the rows of the cores that answered,
gathered into one DecisionSteps and one TerminalSteps (one copy per field, never a view of
shared memory), and the actions scattered back into each core's range."""

from __future__ import annotations

import numpy as np

from zooport.envs.actions import ActionTuple
from zooport.envs.pool_shared_memory import ACTIONS_SET, MASKED, N_DECISION, N_TERMINAL, Rows
from zooport.envs.specs import AgentId, BehaviorSpec
from zooport.envs.steps import DecisionSteps, TerminalSteps

__all__ = ["gather", "scatter", "scatter_one"]


def gather(
    rows: Rows, spec: BehaviorSpec, taken: np.ndarray, ready: np.ndarray
) -> tuple[DecisionSteps, TerminalSteps]:
    """The DecisionSteps of the decision rows ``taken`` (see :meth:`Rows.taken`) and the
    TerminalSteps of the cores ``ready`` (a bool per core), rows in core order."""
    if len(taken):
        mask = None
        if (rows.counts[:, MASKED] * ready).any():  # a core without one: every action open
            branches = np.cumsum(spec.action_spec.discrete_branches)[:-1]
            mask = np.split(rows.d_mask[taken], branches, axis=1)
        decision = DecisionSteps(
            [o[taken] for o in rows.d_obs], rows.d_reward[taken], rows.d_id[taken], mask,
            rows.d_group[taken], rows.d_group_reward[taken],
        )  # fmt: skip
    else:
        decision = DecisionSteps.empty(spec)
    ended = np.where(ready, rows.counts[:, N_TERMINAL], 0)
    if not ended.any():
        return decision, TerminalSteps.empty(spec)
    t = rows.taken(ended)
    terminal = TerminalSteps(
        [o[t] for o in rows.t_obs], rows.t_reward[t], rows.t_interrupted[t], rows.t_id[t],
        rows.t_group[t], rows.t_group_reward[t],
    )  # fmt: skip
    return decision, terminal


def scatter(rows: Rows, taken: np.ndarray, action: ActionTuple, ready: np.ndarray) -> None:
    """Writes the validated actions of the decision rows ``taken``, one write per part."""
    if rows.layout.continuous:
        rows.continuous[taken] = action.continuous
    if rows.layout.discrete:
        rows.discrete[taken] = action.discrete
    rows.counts[ready & (rows.counts[:, N_DECISION] > 0), ACTIONS_SET] = 1


def scatter_one(rows: Rows, index: int, agent_id: AgentId, action: ActionTuple) -> None:
    """Writes one agent's validated action; the others of its core that decided take zeros
    (ML-Agents' rule) unless their actions were set already."""
    start = int(rows.start[index])
    end = start + int(rows.counts[index, N_DECISION])
    if not rows.counts[index, ACTIONS_SET]:
        rows.continuous[start:end] = 0
        rows.discrete[start:end] = 0
        rows.counts[index, ACTIONS_SET] = 1
    row = start + int(np.flatnonzero(rows.d_id[start:end] == agent_id)[0])
    rows.continuous[row] = action.continuous[0]
    rows.discrete[row] = action.discrete[0]
