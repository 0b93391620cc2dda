"""ai-traineree's ``MultiAgentUnityTask`` over any BaseEnv, stepping it once per cycle of agents."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from gymnasium import spaces

from zooport.adapters import task_api
from zooport.adapters.agent_names import AgentKey, AgentNaming
from zooport.adapters.core_access import render_core
from zooport.adapters.options import (
    DriverOptions,
    TerminationMode,
    finished_needed,
    listing_options,
)
from zooport.adapters.pettingzoo_common import DriverControls
from zooport.envs.base_env import BaseEnvLike
from zooport.errors import (
    ActionError,
    ArgumentError,
    EnvNotResetError,
    SpecError,
    UnknownAgentError,
)

__all__ = ["Transition", "MultiAgentTask", "MultiAgentUnityTask"]


class Transition(NamedTuple):
    """One agent's ``(obs, reward, done, info)``; ``info`` holds ``terminated``/``truncated``."""

    obs: Any
    reward: float
    done: bool
    info: dict[str, Any]


@listing_options
class MultiAgentTask(DriverControls, task_api.TaskBase):
    """Every agent of every behaviour of a core (``env``, owned), for multi-agent runners.

    ``step(action, agent_id)`` returns None until the cycle's last live agent acts; then the
    core steps once and that agent's :class:`Transition` is returned, the others' in
    :meth:`last`. ``step_all(actions)`` is the whole cycle in one call; an int ``agent_id`` is a
    position in ``possible_agents``. The options are the PettingZoo adapters'.
    """

    def __init__(
        self,
        env: BaseEnvLike,
        uint8_visual: bool = False,
        flatten_branched: bool = False,
        allow_multiple_obs: bool = False,
        termination_mode: TerminationMode | str | float = "any",
        *,
        max_cycles: int | None = None,
        action_masks: bool | None = None,
        mask_in_info: bool = False,
        default_action: str | Mapping[str, Any] | None = None,
        agent_name: AgentNaming = None,
        stale_actions: str = "ignore",
    ) -> None:
        given = locals()  # the parameters, which are the options' fields
        self.options = DriverOptions(**{key: given[key] for key in DriverOptions.names()})
        self._start_driver(env, self.options)
        self.env = self.core  # the seed's name for it
        self.name = type(self.core).__name__
        self._pending: dict[str, Any] = {}
        self._last: dict[str, Transition] = {}

    @property
    def num_agents(self) -> int:
        return len(self.possible_agents)

    @property
    def agents(self) -> list[str]:
        """The live agents, in ``possible_agents`` order."""
        return self._driver.agents

    @property
    def waiting_for(self) -> list[str]:
        """The live agents that have not acted in the current cycle."""
        return [a for a in self._driver.agents if a not in self._pending]

    def agent(self, agent_id: int | str) -> str:
        """The name of ``agent_id`` (a position in ``possible_agents``, or a name)."""
        if isinstance(agent_id, str):
            # possible_agents, the names agent_groups holds, is discovered where not yet known.
            if agent_id in self._driver.agent_groups or agent_id in self.possible_agents:
                return agent_id
        elif isinstance(agent_id, (int, np.integer)) and not isinstance(agent_id, bool):
            if 0 <= agent_id < len(self.possible_agents):
                return self.possible_agents[agent_id]
        agents = self.possible_agents
        raise UnknownAgentError(
            f"{type(self).__name__}: no agent {agent_id!r} in the episode: expected an agent "
            f"name (str) or a position in [0, {len(agents) - 1}], got {agent_id!r}; "
            f"agents: {agents}"
        )

    def agent_key(self, agent_id: int | str) -> AgentKey:
        """The (behaviour, core agent id) an agent stands for."""
        return self._driver.names.lookup(self.agent(agent_id))

    def observation_space(self, agent_id: int | str) -> spaces.Space:
        """The observation space of the agent's behaviour (one object per behaviour)."""
        return self._driver.group_of(self.agent(agent_id)).observation_space

    @property
    def action_space(self) -> spaces.Space:
        """The action space every behaviour shares (a ``SpecError`` where they differ)."""
        groups = self._driver.groups
        if all(group.action_space == groups[0].action_space for group in groups):
            return groups[0].action_space
        listed = ", ".join(f"{group.action_space} for {group.name!r}" for group in groups)
        raise SpecError(
            f"{type(self).__name__}.action_space: its behaviours do not share one action "
            f"space: {listed}; read action_spaces[agent] instead"
        )

    def _agent_spaces(self) -> tuple[dict[str, spaces.Space], dict[str, spaces.Space]]:
        observations = {g.name: g.observation_space for g in self._driver.groups}
        return observations, {g.name: g.action_space for g in self._driver.groups}

    def reset(self, seed: int | None = None) -> list[Any]:
        """Resets the core; returns the agents' first observations, in ``possible_agents`` order."""
        observations, infos = self._driver.reset(self._take_seed(seed))
        self._pending = {}
        self._last = {
            agent: _transition(obs, 0.0, False, False, infos[agent])
            for agent, obs in observations.items()
        }
        return list(observations.values())

    def step(self, action: Any, agent_id: int | str) -> Transition | None:
        """Records an agent's action; the cycle's last steps the core and returns its transition."""
        self._driver.check_running()
        agent = self.agent(agent_id)
        pending = self._pending
        if agent in pending:
            raise ActionError(
                f"{type(self).__name__}: agent {agent!r} has already acted in this cycle; "
                f"waiting for {self.waiting_for}"
            )
        if not self._driver.is_live(agent):
            self._driver.ignore_stale([agent])  # it finished earlier in the episode
            return None
        if action is None:
            if self._driver.default_action is None:
                raise ActionError(
                    f"{type(self).__name__}: no action (None) for agent {agent!r}; pass "
                    "default_action= to the task to allow it"
                )
            action = self._driver.agent_groups[agent].default_action
        pending[agent] = action
        return None if len(pending) < len(self._driver.agents) else self._run_cycle()[agent]

    def step_all(self, actions: Mapping[Any, Any]) -> dict[str, Transition]:
        """Completes the cycle with ``{agent_id: action}``: each reporting agent's transition."""
        self._driver.check_running()
        if not isinstance(actions, Mapping):
            raise ActionError(
                f"{type(self).__name__}: expected a dict of actions keyed by agent, got "
                f"{type(actions).__name__}"
            )
        pending = self._pending
        if pending or type(actions) is not dict or not set(actions).issubset(self._driver.agents):
            given: dict[str, Any] = {}
            for agent_id, action in actions.items():
                agent = agent_id if self._driver.is_live(agent_id) else self.agent(agent_id)
                if agent in pending:
                    raise ActionError(
                        f"{type(self).__name__}: agent {agent!r} has already acted in this "
                        "cycle (with step()); leave it out of step_all()"
                    )
                given[agent] = action
            actions = pending | given
        # The common call is handed to the driver as it is (it never changes it).
        if self._driver.default_action is not None and any(a is None for a in actions.values()):
            actions = {a: action for a, action in actions.items() if action is not None}
        self._pending = actions
        return self._run_cycle()

    def _run_cycle(self) -> dict[str, Transition]:
        actions, self._pending = self._pending, {}
        step = self._driver.step(actions)
        # The five dicts of a step have the same keys in the same order.
        values = [d.values() for d in step]
        transitions = dict(zip(step.observations, map(_transition, *values), strict=True))
        self._last.update(transitions)
        return transitions

    def last(self, agent_id: int | str) -> Transition:
        """The agent's latest :class:`Transition`."""
        self._driver.check_open()
        agent = self.agent(agent_id)
        if agent not in self._last:
            raise EnvNotResetError(
                f"{type(self).__name__}: no transition for {agent!r} yet; call reset()"
            )
        return self._last[agent]

    @property
    def dones(self) -> dict[str, bool]:
        """Every agent of the episode: True once it has finished."""
        live = set(self._driver.agents)  # _last: the episode's agents, {} before a reset
        return {agent: agent not in live for agent in self._last}

    @property
    def game_over(self) -> bool:
        """True once the episode has ended (before the first ``reset()`` too)."""
        return self._driver.episode_over

    def detect_game_over(self, terminations: Mapping[Any, Any] | Sequence[bool] | Any) -> bool:
        """Whether the termination rule ends the episode, given each agent's finished flag."""
        if isinstance(terminations, Mapping):
            terminations = [bool(v) for v in terminations.values()]
        flags = np.asarray(terminations, dtype=bool).reshape(-1)
        n_agents = max(flags.size, len(self.possible_agents))
        return int(flags.sum()) >= finished_needed(self._driver.termination_mode, n_agents)

    def render(self, mode: str = "rgb_array") -> np.ndarray | None:
        """The latest first 3-D observation, else the core's picture, else None with a warning."""
        if mode != "rgb_array":
            raise ArgumentError(f"Expect mode to be 'rgb_array', actually: {mode!r}")
        self._driver.check_open()
        visual = _first_visual([transition.obs for transition in self._last.values()])
        if visual is not None:
            return np.array(visual, copy=True)
        frame = render_core(self.core)
        if frame is None:
            warnings.warn(f"{type(self.core).__name__} cannot render", stacklevel=2)
            return None
        return np.array(frame, dtype=np.uint8, copy=True)

    def close(self) -> None:
        self._driver.close()


def _first_visual(obs: Any) -> np.ndarray | None:
    if isinstance(obs, Mapping):
        obs = list(obs.values())
    if isinstance(obs, (list, tuple)):
        return next((v for v in map(_first_visual, obs) if v is not None), None)
    return obs if isinstance(obs, np.ndarray) and obs.ndim == 3 else None


def _transition(
    obs: Any, reward: float, terminated: bool, truncated: bool, info: dict[str, Any]
) -> Transition:
    # The driver's info is the agent's own: flagged in place.
    info["terminated"] = terminated
    info["truncated"] = truncated
    return Transition(obs, reward, terminated or truncated, info)


#: ai-traineree's name for the task.
MultiAgentUnityTask = MultiAgentTask
