"""A batched core as a PettingZoo ``AECEnv`` (native, not ``parallel_to_aec``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pettingzoo import AECEnv
from typing_extensions import override

from zooport.adapters.options import listing_options
from zooport.adapters.pettingzoo_parallel import PettingZooCommon, UnitySeed
from zooport.errors import ActionError, EnvNotResetError, UnknownAgentError

__all__ = ["PettingZooAECEnv", "UnityAECEnv"]


@listing_options
class PettingZooAECEnv(PettingZooCommon, AECEnv[str, Any, Any]):
    """Agents act in turn; the core steps once a cycle, when the last live agent has acted.

    Example:
        >>> from zooport.envs.builtin.tag import Tag
        >>> env = PettingZooAECEnv(Tag(seed=0), max_cycles=2)
        >>> env.reset(seed=1)
        >>> turns = []
        >>> for agent in env.agent_iter():
        ...     obs, reward, terminated, truncated, info = env.last()
        ...     turns.append((agent, truncated))
        ...     env.step(None if terminated or truncated else 0)
        >>> len(turns), turns[0], turns[-1]
        (15, ('runner_0', False), ('tagger_4', True))
    """

    agents: list[str] = []  # its own, not the driver's: a finished agent leaves at its None turn

    def _clear(
        self, agents: Sequence[str] = (), observations: Any = None, infos: Any = None
    ) -> None:
        # The start of an episode with ``agents``; none: before reset() and after close().
        self.agents = list(agents)
        self.rewards = dict.fromkeys(agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(agents, 0.0)
        self.terminations = dict.fromkeys(agents, False)
        self.truncations = dict.fromkeys(agents, False)
        self.infos: dict[str, dict[str, Any]] = infos or {}
        self.agent_selection: str | None = agents[0] if agents else None
        self._observations: dict[str, Any] = observations or {}
        self._final: dict[str, Any] = {}  # the last observations of agents that finished
        self._pending: dict[str, Any] = {}
        self._cycle, self._turn = list(agents), 0
        self._dead: list[str] = []  # finished agents still to be removed, selected first
        self._rewards_stale = False

    @override
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Resets the core (reseeded with ``seed``) and selects the first agent."""
        observations, infos = self._driver.reset(self._reseed(seed, options))
        self._clear(self._driver.agents, observations, infos)
        self._show()

    @override
    def observe(self, agent: str) -> Any:
        """The observation of any agent of the episode (a finished one's last: TorchRL asks)."""
        try:
            seen = self._observations if agent in self._observations else self._final
            return _fresh(seen[agent])
        except (KeyError, TypeError):
            self._driver.check_open()  # close() empties the observations
            raise UnknownAgentError(
                f"{type(self).__name__}: no observation for {agent!r}, which is not an agent "
                f"of the episode; agents: {self.agents}"
            ) from None

    @override
    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """``(observation, cumulative reward, terminated, truncated, info)`` of the selection."""
        agent = self.agent_selection
        if agent is None:
            self._driver.check_open()  # close() deselects
            raise EnvNotResetError(f"{type(self).__name__}: call reset() before last()")
        return (
            _fresh(self._observations[agent]) if observe else None,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    @override
    def step(self, action: Any) -> None:
        """Acts for ``agent_selection`` (None for a finished agent)."""
        guard = self._driver.guard
        if guard.running:  # a turn from a callback while the core steps: refused
            guard.enter("step")
        if self._rewards_stale:  # the first step() after the core's clears its rewards
            self.rewards = dict.fromkeys(self.rewards, 0.0)
            self._rewards_stale = False
        if self._dead:  # the selected agent finished: it leaves
            agent = self._dead[0]
            if action is not None:  # refused before anything changes: the agent stays selected
                self._driver.ignore_stale([agent], f"; {agent!r} has finished, got {action!r}")
            del self._dead[0]
            for table in (self.rewards, self.terminations, self.truncations, self.infos):
                del table[agent]
            del self._cumulative_rewards[agent]
            self.agents.remove(agent)
            self._select_first()
            return
        cycle, turn = self._cycle, self._turn
        if turn >= len(cycle):
            self._driver.check_open()  # close() empties the cycle
            raise EnvNotResetError(
                f"{type(self).__name__}: no agent to act; call reset() (every agent has left)"
            )
        agent = cycle[turn]
        if action is not None:
            self._pending[agent] = action
        elif self.options.default_action is None:
            raise ActionError(
                f"{type(self).__name__}: agent {agent!r} is live and needs an action; "
                "None is only for terminated or truncated agents (or pass default_action=)"
            )
        self._cumulative_rewards[agent] = 0.0
        self._turn = turn = turn + 1
        if turn < len(cycle):
            self.agent_selection = cycle[turn]
            return
        driver = self._driver
        try:
            step = driver.step(self._pending)
        except Exception:
            # The core did not step: the cycle starts over with the same agents.
            self._turn = 0
            self.agent_selection = self._cycle[0]
            raise
        finally:
            self._pending = {}
        self._observations, self.rewards, self.terminations, self.truncations, self.infos = step
        for agent in driver.finished:
            self._final[agent] = step.observations[agent]
        self.agents.extend(driver.new_agents)
        # Every agent of the cycle acted in it, new ones start at 0: the step's are cumulative.
        self._cumulative_rewards = dict(step.rewards)
        self._rewards_stale = True
        self._cycle, self._turn = driver.agents, 0
        self._dead = list(driver.finished)
        self._select_first()
        self._show()

    @override
    def close(self) -> None:
        """Closes the core; later ``step``, ``last`` and ``observe`` raise ``EnvClosedError``."""
        self._clear()  # the per-turn paths check for closing only where they fail
        super().close()

    def _select_first(self) -> None:
        if self._dead:
            self.agent_selection = self._dead[0]
        elif self._cycle:
            self.agent_selection = self._cycle[0]


class UnityAECEnv(UnitySeed, PettingZooAECEnv):
    """ML-Agents' ``UnityAECEnv(env, seed=None)``, seeded as ``UnityParallelEnv`` is."""


def _fresh(observation: Any) -> Any:
    if isinstance(observation, dict):
        return {key: _fresh(value) for key, value in observation.items()}
    return np.array(observation, copy=True)
