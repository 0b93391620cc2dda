"""ai-traineree's ``PettingZooTask`` over any PettingZoo AEC or Parallel env."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv

from zooport.adapters import task_api
from zooport.adapters.multi_agent_task import Transition
from zooport.envs.capabilities import takes_positional
from zooport.errors import ArgumentError, ArgumentTypeError, UnknownAgentError, ZooportError

__all__ = ["PettingZooTask"]


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
