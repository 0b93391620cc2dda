"""The PufferLib route of the pool benchmark: native ``PufferEnv``s over the same CostlyCore,
one per ``pufferlib.vector.Multiprocessing`` worker; imported only where pufferlib is."""

from __future__ import annotations

from typing import Any

import numpy as np
import pufferlib  # type: ignore[import-not-found, unused-ignore]  # optional, bench-pool only
import pufferlib.vector  # type: ignore[import-not-found, unused-ignore]
from gymnasium import spaces

from zooport.cli.bench.costly_core import CostlyCore
from zooport.envs.base_env import ActionTuple

NAME = CostlyCore.behavior_name


class CostlyPufferEnv(pufferlib.PufferEnv):
    """One CostlyCore (``terminate=False``) as a native PufferEnv of ``n`` agents."""

    def __init__(self, n: int = 64, us_per_agent: float = 7.0, seed: int = 0, buf: Any = None):
        self.core = CostlyCore(n_agents=n, us_per_agent=us_per_agent, seed=seed, terminate=False)
        self.single_observation_space = spaces.Box(
            -np.inf, np.inf, (CostlyCore.state_size,), np.float32
        )
        self.single_action_space = spaces.Box(-1, 1, (2,), np.float32)
        self.num_agents = n
        super().__init__(buf)

    def _write(self) -> None:
        decision, _ = self.core.get_steps(NAME)
        self.observations[:] = decision.obs[0]
        self.rewards[:] = decision.reward

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, list[Any]]:
        self.core.reset(seed=seed)
        self._write()
        return self.observations, []

    def step(self, actions: np.ndarray) -> tuple[Any, ...]:
        self.core.set_actions(NAME, ActionTuple(np.asarray(actions, np.float32)))
        self.core.step()
        self._write()
        return self.observations, self.rewards, self.terminals, self.truncations, []

    def close(self) -> None:
        self.core.close()


def puffer_vector(k: int, n: int, us_per_agent: float) -> Any:
    """``pufferlib.vector.Multiprocessing`` over K CostlyPufferEnvs, one per worker."""
    return pufferlib.vector.make(
        CostlyPufferEnv,
        env_kwargs={"n": n, "us_per_agent": us_per_agent},
        backend=pufferlib.vector.Multiprocessing,
        num_envs=k,
        num_workers=k,
        batch_size=k,
        overwork=True,  # a machine with fewer cores than workers still runs (slowly)
    )
