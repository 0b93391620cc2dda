"""The PufferLib route's env: the benchmark's endless core as a native ``PufferEnv``; imported
only where pufferlib is (its workers import it by name)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pufferlib  # type: ignore[import-not-found, import-untyped, unused-ignore]  # optional, bench-pool only
from gymnasium import spaces

from zooport.envs.base_env import ActionTuple


class CorePufferEnv(pufferlib.PufferEnv):
    """``make(n, seed)``'s endless one-behaviour, one-observation core as a native PufferEnv."""

    def __init__(
        self, make: Callable[[int, int], Any], n: int = 64, seed: int = 0, buf: Any = None
    ) -> None:
        self.core = make(n, seed)
        self.name, spec = next(iter(self.core.behavior_specs.items()))
        shape, size = spec.observation_specs[0].shape, spec.action_spec.continuous_size
        self.single_observation_space = spaces.Box(-np.inf, np.inf, shape, np.float32)
        self.single_action_space = spaces.Box(-1, 1, (size,), np.float32)
        self.num_agents = n
        super().__init__(buf)

    def _write(self) -> tuple[Any, ...]:
        decision, _ = self.core.get_steps(self.name)
        self.observations[:] = decision.obs[0]
        self.rewards[:] = decision.reward
        return self.observations, self.rewards, self.terminals, self.truncations, []

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, list[Any]]:
        self.core.reset(seed=seed)
        return self._write()[0], []

    def step(self, actions: np.ndarray) -> tuple[Any, ...]:
        self.core.set_actions(self.name, ActionTuple(np.asarray(actions, np.float32)))
        self.core.step()
        return self._write()

    def close(self) -> None:
        self.core.close()
