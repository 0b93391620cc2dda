"""ai-traineree's ``PettingZooTask`` over any PettingZoo AEC or Parallel env, fixed: ``step``
returns the acting agent's transition (not the next agent's), ``is_all_done`` reads the flags'
values, agents and spaces follow the env, and ``reset()`` returns the observations."""

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


def _is_parallel(env: Any) -> bool:
    if isinstance(env, ParallelEnv):
        return True
    if isinstance(env, AECEnv):
        return False
    # Duck typing for envs that subclass neither: only an AEC env selects an agent.
    if hasattr(env, "agent_selection") and callable(getattr(env, "last", None)):
        return False
    if callable(getattr(env, "step", None)) and hasattr(env, "agents"):
        return True
    raise ArgumentTypeError(
        f"Expected a PettingZoo AECEnv or ParallelEnv, actually: {type(env).__name__}"
    )


def _flagged(info: Mapping[str, Any] | None, terminated: bool, truncated: bool) -> dict[str, Any]:
    """A copy of ``info`` with the flags added (the env's own dict is left alone)."""
    return {**(info or {}), "terminated": terminated, "truncated": truncated}


class PettingZooTask:
    """A PettingZoo AEC or Parallel env for multi-agent runners.

    On an AEC env ``step`` returns the :class:`~zooport.adapters.multi_agent_task.Transition`
    of the agent that acted, with the reward of its own turn: rewards later turns earn it (a
    batched core pays every agent when the cycle's last agent acts) reach it, as in
    PettingZoo, through :meth:`last` at its next turn. A finished agent's turn returns None.
    On a Parallel env ``step`` takes ``{agent: action}`` and returns a dict of transitions.

    Args:
        env: an instance of a PettingZoo AEC or Parallel environment (wrapped or not). The
            task does not copy it: ``task.env`` is that object. (A zooport adapter has
            already stepped a core whose behaviours arrive late, a Unity scene, once.)

    Attributes:
        env: the wrapped environment, for direct access.
        name: ``"CUSTOM"``, as in ai-traineree.
        is_parallel: True for a Parallel env.

    Example:
        >>> from zooport.adapters.pettingzoo_envs import ball_balance_v0
        >>> env = ball_balance_v0.env(seed=0, n_agents=2)
        >>> task = PettingZooTask(env)
        >>> task.env is env, task.name
        (True, 'CUSTOM')
        >>> states = task.reset(seed=0)
        >>> sorted(states), task.action_spaces["ballbalance_1"]
        (['ballbalance_0', 'ballbalance_1'], Box(-1.0, 1.0, (2,), float32))
        >>> import numpy as np
        >>> task.step(np.zeros(2, np.float32)).reward  # agent 0 acted; the core waits for 1
        0.0
        >>> obs, reward, done, info = task.step(np.zeros(2, np.float32))  # agent 1's own
        >>> round(reward, 3), done, task.is_all_done
        (0.1, False, False)
    """

    def __init__(self, env: Any) -> None:
        self.env = env
        self.is_parallel = _is_parallel(env)
        self.name = "CUSTOM"  # ai-traineree's name for every PettingZoo task
        self._last: dict[str, Transition] = {}
        self._dones: dict[str, bool] = {}
        self._next_seed: int | None = None

    # ------------------------------------------------------------------ agents, spaces

    @property
    def agents(self) -> list[str]:
        """The env's current agents (a fresh list each call: agents leave and join)."""
        return list(self.env.agents)

    @property
    def num_agents(self) -> int:
        """``len(agents)``."""
        return len(self.env.agents)

    @property
    def possible_agents(self) -> list[str]:
        """The env's ``possible_agents`` (its current ``agents`` if it declares none)."""
        try:
            return list(self.env.possible_agents)
        except AttributeError:
            return list(self.env.agents)

    def _spaces(self) -> dict[str, spaces.Space]:
        env = self.env
        return {agent: env.observation_space(agent) for agent in self.possible_agents}

    @property
    def observation_spaces(self) -> dict[str, spaces.Space]:
        """Each agent's observation space; for ``{"observation", "action_mask"}`` Dict spaces
        (PettingZoo's mask convention) the ``"observation"`` part, which a policy takes."""
        return {agent: _observation_part(space) for agent, space in self._spaces().items()}

    @property
    def action_spaces(self) -> dict[str, spaces.Space]:
        """Each agent's action space."""
        env = self.env
        return {agent: env.action_space(agent) for agent in self.possible_agents}

    @property
    def obs_size(self) -> int:
        """The number of values of one agent's observation (without an action mask in it),
        the same for every possible agent: a size, as ``GymTask.obs_size`` (ai-traineree's
        was the first agent's shape: ``obs_size[0]`` becomes ``obs_size``).

        Raises:
            SpecError: agents of different sizes, or an observation with no flat size.
        """
        return task_api.one_size(
            {a: task_api.observation_size(space) for a, space in self.observation_spaces.items()},
            "obs_size",
            type(self).__name__,
        )

    @property
    def action_size(self) -> int:
        """``n`` of a ``Discrete`` action space, else the number of action values, the same for
        every possible agent (ai-traineree's was the first agent's space: ``action_size.n``
        becomes ``action_size``).

        Raises:
            SpecError: agents of different sizes, or an action space with no flat size.
        """
        return task_api.one_size(
            {a: task_api.action_size(space) for a, space in self.action_spaces.items()},
            "action_size",
            type(self).__name__,
        )

    def action_mask_spaces(self) -> dict[str, spaces.Space] | None:
        """Each agent's ``obs["action_mask"]`` space, or None unless every agent has one."""
        masks = {}
        for agent, space in self._spaces().items():
            if not (isinstance(space, spaces.Dict) and "action_mask" in space.spaces):
                return None
            masks[agent] = space["action_mask"]
        return masks

    # ------------------------------------------------------------------ episodes

    def seed(self, seed: int | None = None) -> None:
        """Seeds the next ``reset()`` (PettingZoo envs are seeded through ``reset``)."""
        self._next_seed = seed

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Resets the env; returns every agent's first observation, keyed by agent."""
        if seed is None:
            seed, self._next_seed = self._next_seed, None
        env = self.env
        if self.is_parallel:
            observations, infos = env.reset(seed=seed, options=options)
            self._last = {
                agent: Transition(obs, 0.0, False, _flagged(infos.get(agent), False, False))
                for agent, obs in observations.items()
            }
            self._dones = dict.fromkeys(observations, False)
            return dict(observations)
        env.reset(seed=seed, options=options)
        return {agent: env.observe(agent) for agent in env.agents}

    def step(self, action: Any) -> Any:
        """One AEC turn, or one Parallel step.

        Args:
            action: AEC: the action of ``env.agent_selection`` (None for an agent that is
                terminated or truncated; an action given instead goes to the env, which
                zooport's AEC adapter ignores by default). Parallel: ``{agent: action}`` for
                the live agents (actions for finished agents go to the env too; zooport's
                Parallel adapter ignores them by default).

        Returns:
            AEC: the :class:`Transition` of the agent that acted (not the next agent's), or
            None when the turn was a done agent's ``None`` step (the agent leaves; there is
            no transition). Parallel: ``{agent: Transition}`` for every reporting agent.
        """
        env = self.env
        if self.is_parallel:
            observations, rewards, terminations, truncations, infos = env.step(action)
            transitions = {}
            for agent, obs in observations.items():
                terminated = bool(terminations.get(agent, False))
                truncated = bool(truncations.get(agent, False))
                transitions[agent] = Transition(
                    obs,
                    float(rewards.get(agent, 0.0)),
                    terminated or truncated,
                    _flagged(infos.get(agent), terminated, truncated),
                )
            self._last.update(transitions)
            self._dones = {agent: t.done for agent, t in transitions.items()}
            return transitions
        agent = env.agent_selection
        was_done = env.terminations[agent] or env.truncations[agent]
        env.step(action)
        if was_done:
            return None
        terminated = bool(env.terminations.get(agent, False))
        truncated = bool(env.truncations.get(agent, False))
        return Transition(
            env.observe(agent),
            float(env.rewards.get(agent, 0.0)),
            terminated or truncated,
            _flagged(env.infos.get(agent), terminated, truncated),
        )

    def last(self, agent: str | None = None) -> Transition:
        """An agent's latest data as a :class:`Transition`.

        AEC: ``agent=None`` is ``env.agent_selection`` (``env.last()``); the reward is the
        agent's cumulative reward since it last acted. Parallel: the agent's transition of
        the last step it reported in (its first observation after ``reset()``).
        """
        env = self.env
        if self.is_parallel:
            if agent is None:
                raise ArgumentError("A Parallel env selects no agent: pass last(agent=...)")
            try:
                return self._last[agent]
            except KeyError:
                raise UnknownAgentError(
                    f"PettingZooTask: no data for agent {agent!r}; agents: {self.agents}"
                ) from None
        if agent is None:
            obs, reward, terminated, truncated, info = env.last()
            return Transition(
                obs, float(reward), terminated or truncated, _flagged(info, terminated, truncated)
            )
        if agent not in env.terminations:
            raise UnknownAgentError(
                f"PettingZooTask: no agent {agent!r} in the env; agents: {self.agents}"
            )
        rewards = getattr(env, "_cumulative_rewards", None) or env.rewards
        terminated, truncated = env.terminations[agent], env.truncations[agent]
        return Transition(
            env.observe(agent),
            float(rewards.get(agent, 0.0)),
            terminated or truncated,
            _flagged(env.infos.get(agent), terminated, truncated),
        )

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
        """Each agent's ``terminated or truncated``.

        AEC: for the agents in ``env.agents`` (finished agents stay until their ``None``
        step). Parallel: for the agents of the last step (or of ``reset()``).
        """
        if self.is_parallel:
            return dict(self._dones)
        env = self.env
        return {agent: env.terminations[agent] or env.truncations[agent] for agent in env.agents}

    @property
    def is_all_done(self) -> bool:
        """True when every agent in :attr:`dones` is done (over its values), or none is left."""
        return all(self.dones.values())

    # ------------------------------------------------------------------ render, close

    def render(self, mode: str | None = None) -> Any:
        """The env's ``render``, with ``mode`` passed on where the env's ``render`` takes one
        (PettingZoo before 1.22, custom envs); since 1.22 the mode is fixed at construction,
        so ``mode`` must be None or the env's ``render_mode``.

        Raises:
            ArgumentError: ``mode`` is not the ``render_mode`` of an env whose ``render()``
                takes no mode.
        """
        render = self.env.render
        if mode is None:
            return render()
        if takes_positional(render):
            return render(mode)
        render_mode = getattr(self.env, "render_mode", None)
        if mode != render_mode:
            raise ArgumentError(
                f"Expect mode to be None or the env's render_mode {render_mode!r} (its "
                f"render() takes no mode: PettingZoo >= 1.22 fixes it at construction), "
                f"actually: {mode!r}"
            )
        return render()

    def close(self) -> None:
        """Closes the env."""
        self.env.close()


def _observation_part(space: spaces.Space) -> spaces.Space:
    if isinstance(space, spaces.Dict) and "observation" in space.spaces:
        return space["observation"]
    return space
