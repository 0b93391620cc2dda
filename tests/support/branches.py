"""Small cores for the silent-corruption tests (action values, copies, failed steps, re-entry).

Classes:
    Branches: agents with two discrete branches (3 and 4 choices); the reward is a
        hand-checkable function of the actions, so a wrapped action shows in the data.
    Hooked: Branches with hooks that the tests set to raise or to call back into the env
        from inside ``step``, and a ledger of every reward it paid.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from zooport.envs.base_env import (
    ActionSpec,
    BehaviorSpec,
)
from zooport.envs.batched_env import BatchedEnv, StepResult

from tests.support.specs import obs_spec

BEHAVIOR = "Branches"


class Branches(BatchedEnv):
    """``n_agents`` agents with discrete branches (3, 4).

    Each step an agent earns ``a0 + 10 * a1`` (its two branch values) and its counter grows
    by 1; its episode ends (terminated) when the counter reaches ``episode_length``.
    Observations are the counter and the last actions, so every action shows up.
    """

    def __init__(self, n_agents: int = 2, episode_length: int = 3, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        obs = obs_spec((3,))
        self._add_behavior(
            BEHAVIOR, BehaviorSpec([obs], ActionSpec.create_discrete((3, 4))), n_agents
        )
        self.n_agents = n_agents
        self.episode_length = episode_length
        self.count = np.zeros(n_agents, np.float32)
        self.last = np.zeros((n_agents, 2), np.float32)

    def _reset_agents(self, behavior: str, slots: np.ndarray) -> None:
        self.count[slots] = 0
        self.last[slots] = 0

    def _step(self, actions):
        discrete = actions[BEHAVIOR].discrete
        self.last[:] = discrete
        self.count += 1
        reward = (discrete[:, 0] + 10 * discrete[:, 1]).astype(np.float32)
        return {BEHAVIOR: StepResult(reward, self.count >= self.episode_length)}

    def _observe(self, behavior: str, slots: np.ndarray) -> list[np.ndarray]:
        return [np.concatenate([self.count[slots, None], self.last[slots]], axis=1)]


class Hooked(Branches):
    """:class:`Branches` whose ``_step`` first calls ``before_step`` (a test sets it) and
    records what it pays: ``paid`` sums each slot's rewards over the core's whole life."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.before_step: Callable[[], None] | None = None
        self.after_restart: Callable[[], None] | None = None
        self.paid = np.zeros(self.n_agents, np.float64)
        self.episodes_ended = 0

    def _step(self, actions):
        if self.before_step is not None:
            self.before_step()
        results = super()._step(actions)
        self.paid += results[BEHAVIOR].reward
        self.episodes_ended += int(np.count_nonzero(results[BEHAVIOR].terminated))
        return results

    def _reset_agents(self, behavior: str, slots: np.ndarray) -> None:
        super()._reset_agents(behavior, slots)
        if self.after_restart is not None:  # tests clear it before they reset
            self.after_restart()
