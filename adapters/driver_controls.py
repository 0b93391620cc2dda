"""The driver family's option checks and the members every front end over a
:class:`~zooport.adapters.multi_agent_driver.MultiAgentDriver` exposes alike."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from zooport.adapters.core_access import EngineMembers
from zooport.adapters.termination import TerminationMode, finished_needed
from zooport.envs.base_env import BaseEnvLike
from zooport.errors import ActionError, ArgumentError, ArgumentTypeError

if TYPE_CHECKING:
    from gymnasium import spaces

    from zooport.adapters.agent_group import AgentGroup
    from zooport.adapters.multi_agent_driver import MultiAgentDriver

__all__ = [
    "DriverControls",
    "STALE_ACTIONS",
    "checked_max_cycles",
    "checked_stale_actions",
    "default_actions",
]

#: What ``stale_actions=`` accepts: ignore (and count) or refuse actions for finished agents.
STALE_ACTIONS = ("ignore", "raise")


def checked_max_cycles(value: Any) -> int | None:
    """``max_cycles`` as None or a Python int >= 1.

    Example:
        >>> checked_max_cycles(np.int64(3)), checked_max_cycles(None)
        (3, None)
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ArgumentTypeError(
            f"Expect max_cycles to be None or an int >= 1, actually: "
            f"{type(value).__name__} {value!r}"
        )
    if value < 1:
        raise ArgumentError(f"Expect max_cycles to be None or an int >= 1, actually: {value!r}")
    return int(value)


def checked_stale_actions(value: Any) -> str:
    """``stale_actions`` as one of :data:`STALE_ACTIONS`."""
    if not isinstance(value, str) or value not in STALE_ACTIONS:
        raise ArgumentError(
            f"Expect stale_actions to be one of {list(STALE_ACTIONS)}, actually: {value!r}"
        )
    return value


def default_actions(groups: Sequence[AgentGroup], default: Any) -> dict[str, Any]:
    """Each behaviour's default action (consumer layout) for ``default_action=``: None gives
    none; ``"zero"`` the core's zero action; ``{behaviour: action}`` those actions, checked."""
    if default is None:
        return {}
    if isinstance(default, str) and default == "zero":
        return {
            g.name: _row(g.action_layout.from_core(g.spec.action_spec.empty_action(1)))
            for g in groups
        }
    if not isinstance(default, Mapping):
        error = ArgumentError if isinstance(default, str) else ArgumentTypeError
        raise error(
            f"Expect default_action to be None, 'zero' or a mapping behavior -> action, "
            f"actually: {default!r}"
        )
    by_name = {g.name: g for g in groups}
    unknown = set(default) - set(by_name)
    if unknown:
        raise ArgumentError(
            f"default_action names behaviors {sorted(unknown)} the core does not have; "
            f"behaviors: {list(by_name)}"
        )
    for behavior, value in default.items():
        g = by_name[behavior]
        problem = g.problem(value)
        if problem is not None:
            raise ActionError(
                f"default_action for behavior {behavior!r}: expected an action of "
                f"{g.action_space}, got {value!r} ({problem})"
            )
    return dict(default)


def _row(batch: Any) -> Any:
    if isinstance(batch, dict):
        return {k: v[0] for k, v in batch.items()}
    return batch[0]


class DriverControls(EngineMembers):
    """The members every front end keeping a ``MultiAgentDriver`` in ``self._driver``
    exposes alike."""

    _driver: MultiAgentDriver
    core: BaseEnvLike

    @property
    def _engine(self) -> MultiAgentDriver:
        return self._driver

    @property
    def possible_agents(self) -> list[str]:
        """The agents present at the last ``reset()``, then those spawned since (appended);
        asked before the first ``reset()``, the core is reset once to find them."""
        driver = self._driver
        if not driver.possible_agents:
            driver.discover()
        return driver.possible_agents

    @property
    def observation_spaces(self) -> dict[str, spaces.Space]:
        """``observation_space(agent)`` for every possible agent."""
        group_of = self._driver.group_of
        return {a: group_of(a).observation_space for a in self.possible_agents}

    @property
    def action_spaces(self) -> dict[str, spaces.Space]:
        """Each possible agent's action space (one object per behaviour)."""
        group_of = self._driver.group_of
        return {a: group_of(a).action_space for a in self.possible_agents}

    @property
    def termination_mode(self) -> TerminationMode | str | float:
        """The mode that ends an episode once enough of its agents have finished; writable."""
        return self._driver.termination_mode

    @termination_mode.setter
    def termination_mode(self, value: TerminationMode | str | float) -> None:
        finished_needed(value, 1)  # a bad mode raises here, not in a step
        self._driver.termination_mode = value

    @property
    def max_cycles(self) -> int | None:
        """Cycles after which every live agent is truncated (None = no limit); writable."""
        return self._driver.max_cycles

    @max_cycles.setter
    def max_cycles(self, value: int | None) -> None:
        self._driver.max_cycles = checked_max_cycles(value)

    @property
    def cycles(self) -> int:
        """Completed cycles (core steps asked for) in the current episode."""
        return self._driver.cycles

    @property
    def stale_actions(self) -> str:
        """What an action for an agent that finished earlier in the episode does; writable:
        ``"ignore"`` (counted in :attr:`ignored_actions`, as PettingZoo's own environments drop
        it) or ``"raise"`` (an :class:`~zooport.ActionError`)."""
        return self._driver.stale_actions

    @stale_actions.setter
    def stale_actions(self, value: str) -> None:
        self._driver.stale_actions = checked_stale_actions(value)

    @property
    def ignored_actions(self) -> int:
        """How many actions for finished agents were ignored since construction."""
        return self._driver.ignored_actions
