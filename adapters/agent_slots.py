"""One behaviour's agents in slots, and the two step rules both adapter engines apply:
a terminal reward is never lost, and a slot without a decision keeps its observation."""

from __future__ import annotations

from typing import Any

import numpy as np

from zooport.adapters.spaces import layouts_of
from zooport.envs.base_env import BehaviorSpec, DecisionSteps, TerminalSteps

__all__ = ["AgentSlots", "Index"]

#: Slots to write: an index array, or a slice when they are the first slots in order.
Index = slice | np.ndarray
_BOOL = np.dtype(bool)  # an instance: numpy converts a type on every call


class AgentSlots:
    """A behaviour's layouts (``obs_layout``, ``action_layout``) and per-slot ``obs``,
    ``mask`` (``mask_size`` wide, 0: no masks kept) and ``group_id``, which the engine
    allocates."""

    obs: Any
    mask: np.ndarray
    group_id: np.ndarray
    mask_size: int

    def __init__(self, name: str, spec: BehaviorSpec, layout: Any) -> None:
        self.name = name
        self.spec = spec
        self.obs_layout, self.action_layout = layouts_of(spec, layout, name)

    def _end_episodes(
        self,
        index: Index,
        terminal: TerminalSteps,
        rows: np.ndarray | None,
        reward: np.ndarray,
        group_reward: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
        *,
        keep_obs: bool = True,
    ) -> None:
        """The slots ``index`` (rows ``rows`` of ``terminal``) end their episodes: terminal
        rewards and flags, and with ``keep_obs`` their final observation as their last."""
        interrupted = np.asarray(terminal.interrupted, dtype=_BOOL)
        if rows is None:
            reward[index] = terminal.reward
            group_reward[index] = terminal.group_reward
        else:
            reward[index] = terminal.reward[rows]
            group_reward[index] = terminal.group_reward[rows]
            interrupted = interrupted[rows]
        truncated[index] = interrupted
        terminated[index] = ~interrupted
        if keep_obs:
            self.obs_layout.write(self.obs, index, terminal.obs, rows)

    def _take_decisions(
        self, index: Index, decision: DecisionSteps, rows: np.ndarray | None, count: int
    ) -> None:
        """The ``count`` slots ``index`` (rows ``rows`` of ``decision``) take their
        observation, mask (1 = allowed) and group id; the others keep theirs."""
        self.obs_layout.write(self.obs, index, decision.obs, rows)
        if self.mask_size:
            masks = decision.action_mask
            if rows is not None and masks is not None:
                masks = [np.asarray(m)[rows] for m in masks]
            self.mask[index] = self.action_layout.allowed_mask(masks, count)
        # mlagents_envs (0.28) hands group ids out as a list, not an array.
        self.group_id[index] = (
            decision.group_id if rows is None else np.asarray(decision.group_id)[rows]
        )
