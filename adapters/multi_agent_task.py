"""ai-traineree's multi-agent tasks: ``MultiAgentUnityTask`` over any BaseEnv (stepping it once per
cycle of agents) and ``PettingZooTask`` over any PettingZoo env."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv

from zooport.adapters import task_api
from zooport.adapters.agent_names import AgentNaming
from zooport.adapters.core_access import render_core
from zooport.adapters.multi_agent_driver import DriverControls
from zooport.adapters.options import (
    DriverOptions,
    TerminationMode,
    finished_needed,
    listing_options,
)
from zooport.envs.base_env import BaseEnvLike
from zooport.envs.capabilities import takes_positional
from zooport.errors import (
    ActionError,
    ArgumentError,
    ArgumentTypeError,
    EnvNotResetError,
    SpecError,
    UnknownAgentError,
    ZooportError,
    look_up,
)

__all__ = ["Transition", "MultiAgentTask", "MultiAgentUnityTask", "PettingZooTask"]


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

    def _agent(self, agent: Any) -> str:  # observation_space() and agent_key() take a position
        return self.agent(agent)

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
        self._last = _transitions(observations, {}, {}, {}, infos)
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
            if self.options.default_action is None:
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
        if self.options.default_action is not None and any(a is None for a in actions.values()):
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
        message = f"{type(self).__name__}: no transition for {agent!r} yet; call reset()"
        return look_up(self._last, agent, EnvNotResetError, lambda: message)

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


def _transitions(
    observations: Mapping[str, Any], rewards: Any, terminations: Any, truncations: Any, infos: Any
) -> dict[str, Transition]:
    # Each observed agent's transition from PettingZoo's per-agent dicts (a missing entry: 0).
    out = {}
    for agent, obs in observations.items():
        ended, cut = bool(terminations.get(agent, False)), bool(truncations.get(agent, False))
        info = {**(infos.get(agent) or {}), "terminated": ended, "truncated": cut}
        out[agent] = Transition(obs, float(rewards.get(agent, 0.0)), ended or cut, info)
    return out


class PettingZooTask(task_api.TaskBase):
    """A PettingZoo AEC or Parallel env for multi-agent runners.

    On an AEC env ``step`` returns the acting agent's transition with the reward of its own turn
    (later rewards reach it through :meth:`last`), None for a finished agent; on a Parallel env
    it takes ``{agent: action}`` and returns a dict of transitions.
    """

    def __init__(self, env: Any) -> None:
        self.env = env
        if isinstance(env, (ParallelEnv, AECEnv)):
            self.is_parallel = isinstance(env, ParallelEnv)
        # Duck typing for envs that subclass neither: only an AEC env selects an agent.
        elif hasattr(env, "agent_selection") and callable(getattr(env, "last", None)):
            self.is_parallel = False
        elif callable(getattr(env, "step", None)) and hasattr(env, "agents"):
            self.is_parallel = True
        else:
            raise ArgumentTypeError(
                f"Expected a PettingZoo AECEnv or ParallelEnv, actually: {type(env).__name__}"
            )
        self.name = "CUSTOM"  # ai-traineree's name for every PettingZoo task
        self._last: dict[str, Transition] = {}
        self._latest: dict[str, Transition] = {}  # of the last Parallel reset or step

    @property
    def agents(self) -> list[str]:
        """The env's current agents (a fresh list each call)."""
        return list(self.env.agents)

    @property
    def num_agents(self) -> int:
        return len(self.env.agents)

    @property
    def possible_agents(self) -> list[str]:
        """The env's ``possible_agents`` (its current ``agents`` if it declares none)."""
        env = self.env
        return list(env.possible_agents if hasattr(env, "possible_agents") else env.agents)

    @property
    def observation_spaces(self) -> dict[str, spaces.Space]:
        """Each agent's observation space (of a masked one, its ``"observation"``)."""
        space = self.env.observation_space
        return {agent: task_api.policy_part(space(agent)) for agent in self.possible_agents}

    @property
    def action_spaces(self) -> dict[str, spaces.Space]:
        """Each agent's action space."""
        return {agent: self.env.action_space(agent) for agent in self.possible_agents}

    def _agent_spaces(self) -> tuple[dict[str, spaces.Space], dict[str, spaces.Space]]:
        return self.observation_spaces, self.action_spaces

    def action_mask_spaces(self) -> dict[str, spaces.Space] | None:
        """Each agent's ``obs["action_mask"]`` space, or None unless every agent has one."""
        observed = {agent: self.env.observation_space(agent) for agent in self.possible_agents}
        if all(isinstance(s, spaces.Dict) and "action_mask" in s.spaces for s in observed.values()):
            return {agent: space["action_mask"] for agent, space in observed.items()}
        return None

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Resets the env; returns every agent's first observation, keyed by agent."""
        env = self.env
        seed = self._take_seed(seed)
        if self.is_parallel:
            observations, infos = env.reset(seed=seed, options=options)
            self._last = self._latest = _transitions(observations, {}, {}, {}, infos)
            return dict(observations)
        env.reset(seed=seed, options=options)
        return {agent: env.observe(agent) for agent in env.agents}

    def step(self, action: Any) -> Any:
        """One AEC turn (the acting agent's :class:`Transition`), or a Parallel step (a dict)."""
        env = self.env
        if self.is_parallel:
            self._latest = transitions = _transitions(*env.step(action))
            self._last.update(transitions)
            return transitions
        agent = env.agent_selection
        was_done = env.terminations[agent] or env.truncations[agent]
        env.step(action)
        return None if was_done else self._aec_last(agent, env.rewards)

    def last(self, agent: str | None = None) -> Transition:
        """An agent's latest :class:`Transition` (AEC: ``None`` is ``env.agent_selection``)."""
        env = self.env
        if agent is None:
            if self.is_parallel:
                raise ArgumentError("A Parallel env selects no agent: pass last(agent=...)")
            agent = env.agent_selection  # env.last()'s agent and values
        if agent not in (self._last if self.is_parallel else env.terminations):
            raise UnknownAgentError(
                f"PettingZooTask: no data for agent {agent!r}; agents: {self.agents}"
            )
        if self.is_parallel:
            return self._last[agent]
        return self._aec_last(agent, getattr(env, "_cumulative_rewards", None) or env.rewards)

    def _aec_last(self, agent: str, rewards: Mapping[str, Any]) -> Transition:
        env = self.env
        observed = {agent: env.observe(agent)}
        return _transitions(observed, rewards, env.terminations, env.truncations, env.infos)[agent]

    def agent_iter(self, max_iter: int = 2**63) -> Iterator[str]:
        """The AEC env's ``agent_iter``; a Parallel env has none (use ``step(dict)``)."""
        if self.is_parallel:
            raise ZooportError(
                "PettingZooTask: a Parallel env steps every agent at once; call "
                "step({agent: action for agent in task.agents}) instead of agent_iter()"
            )
        return self.env.agent_iter(max_iter)

    @property
    def dones(self) -> dict[str, bool]:
        """Each agent's ``terminated or truncated`` (Parallel: of the last step's agents)."""
        if self.is_parallel:
            return {agent: t.done for agent, t in self._latest.items()}
        env = self.env
        return {agent: env.terminations[agent] or env.truncations[agent] for agent in env.agents}

    @property
    def is_all_done(self) -> bool:
        """True when every agent in :attr:`dones` is done, or none is left."""
        return all(self.dones.values())

    def render(self, mode: str | None = None) -> Any:
        """The env's ``render``, passed ``mode`` where it takes one (PettingZoo < 1.22)."""
        render = self.env.render
        if mode is not None and takes_positional(render):
            return render(mode)
        render_mode = getattr(self.env, "render_mode", None)
        if mode not in (None, render_mode):
            raise ArgumentError(
                f"Expect mode to be None or the env's render_mode {render_mode!r} (its "
                f"render() takes no mode: PettingZoo >= 1.22 fixes it at construction), "
                f"actually: {mode!r}"
            )
        return render()

    def close(self) -> None:
        self.env.close()
