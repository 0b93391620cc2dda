"""A batched core as a PettingZoo ``ParallelEnv``: every behaviour's agents step at once.

Classes:
    PettingZooCommon: what the Parallel and AEC adapters share (spaces, state, render,
        close, side channels, options); not used on its own.
    PettingZooParallelEnv: the Parallel adapter.
    UnityParallelEnv: ML-Agents' name for it, with ML-Agents' ``seed=`` argument.

Functions:
    seed_action_spaces: seeds a driver's action spaces (the ``seed=`` of ML-Agents' wrappers).

Agents are named ``<behaviour>_<agent_id>`` (``runner_3`` for agent 3 of ``Runner?team=0``);
where behaviours share a name, the team joins it (``soccer_team1_3`` for agent 3 of
``Soccer?team=1`` next to ``Soccer?team=0``), so one behaviour in two teams works by default;
``agent_name="mlagents"`` names them as ML-Agents' wrapper does (``Soccer?team=1?agent_id=3``);
see :mod:`zooport.adapters.agent_names`. Each behaviour has one observation space and one
action space, returned as the identical object for all its agents. Continuous actions are
``Box(-1, 1, float32)``, discrete ones ``Discrete``/``MultiDiscrete`` (sent to the core as
int32), hybrid ones ``Dict(continuous=..., discrete=...)``; all agents of a behaviour go to
the core in one ``set_actions`` call per step.

Episode semantics (those of :class:`~zooport.adapters.multi_agent_driver.MultiAgentDriver`):

- ``possible_agents`` holds the agents present at ``reset()``; an agent the core spawns later
  joins ``agents`` and is appended to ``possible_agents`` in the step it appears (unless the
  episode ends in that step: it then takes no part in the episode and is not reported).
- An agent in the core's TerminalSteps is terminated (truncated when ``interrupted``) with
  its terminal reward and final observation, and leaves ``agents`` in that step. It does not
  come back within the episode: when the core restarts it in the same step (same id), that
  new episode is not merged into the finished one; the core plays it with zero actions until
  the next ``reset()``.
- A step advances the core until a live agent has a decision or a terminal step. Every live
  agent gets an observation, reward, flags and info every step; one without a decision keeps
  its last observation, gets reward 0 (what it earned arrives, summed, with its next
  decision) and ``info["decided"] == False``, and its action is ignored.
- ``termination_mode`` (``"any"``, ``"majority"``, ``"all"`` or a fraction) ends the episode
  once that many of its agents have finished; ``max_cycles`` ends it after that many steps.
  Agents still live then are truncated; the next ``reset()`` resets the core.
- An action for an agent that finished earlier in the episode is ignored, as PettingZoo's own
  environments ignore it (AgileRL's and TorchRL's PettingZoo loops send one for every agent
  they know), and counted in ``ignored_actions``; ``stale_actions="raise"`` refuses it. A name
  that never was an agent of the episode, or a live agent without an action (unless
  ``default_action``), is an :class:`~zooport.ActionError`.
- Observations that disagree with their behaviour's spec (shape, count, rows) are an
  :class:`~zooport.errors.ObservationError`, never broadcast; a zero-size observation (an
  empty vector sensor beside a camera) is left out of the spaces.
- Infos hold ``decided``, ``group_id`` and ``group_reward``. Action masks (int8, 1 = allowed,
  flattened over branches) are ``obs["action_mask"]`` next to ``obs["observation"]``, or
  ``info["action_mask"]`` with ``mask_in_info=True``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from typing_extensions import override

from zooport.adapters.agent_names import AgentKey, AgentNaming
from zooport.adapters.core_access import adopt_core, check_reset_options, render_core
from zooport.adapters.multi_agent_driver import AgentsStep, DriverControls, MultiAgentDriver
from zooport.adapters.termination import TerminationMode
from zooport.envs.arguments import check_seed
from zooport.envs.batched_env import BatchedEnv
from zooport.errors import ArgumentError, ZooportError

__all__ = [
    "PettingZooCommon",
    "PettingZooParallelEnv",
    "UnityParallelEnv",
    "seed_action_spaces",
]


def _can_render(core: Any) -> bool:
    if isinstance(core, BatchedEnv):
        return type(core)._render is not BatchedEnv._render
    return callable(getattr(core, "render", None))


class PettingZooCommon(DriverControls):
    """Spaces, state, rendering, closing and options shared by both PettingZoo adapters.

    Not thread-safe and not re-entrant: a ``step``/``reset`` entered while another runs (from
    a callback, a hook or a second thread) raises :class:`~zooport.errors.ReentrantCallError`;
    after a step interrupted by an exception (a core hook, a side channel), ``step`` raises
    :class:`~zooport.errors.EnvNotResetError` naming that error until ``reset()``.

    Args:
        core: any BaseEnv; one with no behaviours yet (a Unity scene whose agents have not
            requested a decision) is stepped once first, as ML-Agents' wrappers do, and the
            behaviours it has then are served.
        render_mode: None or ``"rgb_array"`` (the core's picture), fixed at construction.
        termination_mode: ``"any"``, ``"majority"``, ``"all"`` (default), a
            :class:`~zooport.adapters.termination.TerminationMode` or a fraction in (0, 1]:
            how many of the episode's agents must have finished to end it.
        max_cycles: steps after which every live agent is truncated; None = no limit.
            Writable.
        action_masks: give the agents of behaviours with discrete branches an action mask;
            None (default) decides per behaviour: yes, unless the core is a ``BatchedEnv``
            that does not implement ``_action_mask``.
        mask_in_info: put the mask in ``info["action_mask"]`` and keep the observation space
            the behaviour's own, instead of ``{"observation", "action_mask"}``.
        default_action: what a live agent without an action does: None (default) raises
            :class:`~zooport.ActionError` naming the agents; ``"zero"`` takes the core's zero
            action; ``{behaviour: action}`` takes that action.
        agent_name: the naming scheme: None or ``"pettingzoo"`` (default,
            ``<prefix>_<agent_id>``, the team joining the prefix where behaviours share a
            name), ``"mlagents"`` (``<behaviour>?agent_id=<id>``, as ML-Agents' wrappers),
            or a callable ``(behaviour, agent_id) -> str`` to name agents yourself; see
            :mod:`zooport.adapters.agent_names`.
        uint8_visual, flatten_branched, allow_multiple_obs: observation and action layout
            options, see :mod:`zooport.adapters.spaces`.
        name: ``metadata["name"]`` (and ``str(env)``); default ``zooport_<core class>``.
        stale_actions: ``"ignore"`` (default) or ``"raise"``: what an action for an agent
            that finished earlier in the episode does (see
            :attr:`~zooport.adapters.multi_agent_driver.DriverControls.stale_actions`).
            Writable.
    """

    core: Any
    render_mode: str | None
    metadata: dict[str, Any]
    _driver: MultiAgentDriver

    _np_random: np.random.Generator | None = None

    @property
    def np_random(self) -> np.random.Generator:
        """A generator for wrappers that draw randomness from the env (SuperSuit's
        ``frame_skip_v0``); reseeded by ``reset(seed=...)``. The core never reads it."""
        if self._np_random is None:
            self._np_random = np.random.default_rng()
        return self._np_random

    def _reseed(self, seed: Any, options: Any) -> int | None:
        """Checks ``reset``'s arguments, reseeds :attr:`np_random`; returns the seed."""
        where = f"{type(self).__name__}.reset"
        seed = check_seed(seed, where)
        check_reset_options(options, where)
        if seed is not None:
            self._np_random = np.random.default_rng(seed)
        return seed

    def _setup(
        self,
        core: Any,
        *,
        render_mode: str | None,
        termination_mode: TerminationMode | str | float,
        max_cycles: int | None,
        action_masks: bool | None,
        mask_in_info: bool,
        default_action: str | Mapping[str, Any] | None,
        agent_name: AgentNaming,
        uint8_visual: bool,
        flatten_branched: bool,
        allow_multiple_obs: bool,
        name: str | None,
        stale_actions: str = "ignore",
    ) -> None:
        core = adopt_core(core)
        modes = ["rgb_array"] if _can_render(core) else []
        if render_mode is not None and (
            not isinstance(render_mode, str) or render_mode not in modes
        ):
            raise ArgumentError(
                f"Expect render_mode to be None or one of {modes} "
                f"({type(core).__name__} renders rgb_array pictures only), actually: "
                f"{render_mode!r}"
            )
        self.core = core
        self.render_mode = render_mode
        core_metadata = getattr(core, "metadata", None) or {}
        self.metadata = {
            "name": name or f"zooport_{type(core).__name__.lower()}",
            "render_modes": modes,
            "render_fps": core_metadata.get("render_fps", 30),
            "is_parallelizable": True,
        }
        self._driver = MultiAgentDriver(
            core,
            agent_name=agent_name,
            termination_mode=termination_mode,
            max_cycles=max_cycles,
            action_masks=action_masks,
            mask_in_info=mask_in_info,
            default_action=default_action,
            uint8_visual=uint8_visual,
            flatten_branched=flatten_branched,
            allow_multiple_obs=allow_multiple_obs,
            adapter=type(self).__name__,
            stale_actions=stale_actions,
        )
        # The driver may have wrapped a core whose older-API specs arrived with its first step.
        self.core = self._driver.core

    # ------------------------------------------------------------------ agents, spaces

    @property
    def possible_agents(self) -> list[str]:
        """The agents present at the last ``reset()``, then those spawned since (appended).

        Asked before the first ``reset()``, the core is reset once to find them.
        """
        driver = self._driver
        if not driver.possible_agents:
            driver.discover()
        return driver.possible_agents

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent``'s behaviour (the same object for all of them)."""
        try:
            return self._driver.agent_groups[agent].observation_space
        except (KeyError, TypeError):
            return self._driver.group_of(agent).observation_space

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of ``agent``'s behaviour (the same object for all of them)."""
        try:
            return self._driver.agent_groups[agent].action_space
        except (KeyError, TypeError):
            return self._driver.group_of(agent).action_space

    @property
    def observation_spaces(self) -> dict[str, spaces.Space]:
        """``observation_space(agent)`` for every possible agent."""
        return {a: self.observation_space(a) for a in self.possible_agents}

    @property
    def action_spaces(self) -> dict[str, spaces.Space]:
        """``action_space(agent)`` for every possible agent."""
        return {a: self.action_space(a) for a in self.possible_agents}

    def behavior_spaces(self) -> dict[str, tuple[spaces.Space, spaces.Space]]:
        """Each behaviour's (observation space, action space), by behaviour name."""
        return {g.name: (g.observation_space, g.action_space) for g in self._driver.groups}

    def agent_key(self, agent: str) -> AgentKey:
        """The (behaviour, agent id) an agent name stands for.

        Example:
            >>> from zooport.envs.builtin.tag import Tag
            >>> PettingZooParallelEnv(Tag(seed=0)).agent_key("tagger_4")
            AgentKey(behavior='Tagger?team=1', agent_id=4)
        """
        return self._driver.key_of(agent)

    # ------------------------------------------------------------------ options

    # ------------------------------------------------------------------ state, render, close

    @property
    def state_space(self) -> spaces.Box:
        """The space of :meth:`state`.

        The core's own ``global_state_space`` (or a float32 Box of ``global_state_shape``)
        where it has ``global_state()``; otherwise every agent's flattened observation
        concatenated (see :meth:`state`), with the observation spaces' bounds.
        """
        return self._driver.state_space

    def state(self) -> np.ndarray:
        """A global view: the core's ``global_state()`` where it has one.

        Otherwise the concatenation, behaviour by behaviour, of the flattened observations
        (without masks) of the agents present at the first reset, in ``possible_agents``
        order; an agent that is not live contributes zeros. Agents spawned later are not
        part of the state (its size is fixed).
        """
        return self._driver.state()

    def render(self) -> np.ndarray | None:
        """The core's rgb_array picture (``render_mode="rgb_array"``), else None with a warning."""
        if self.render_mode is None:
            warnings.warn(
                f"{type(self).__name__}.render() was called with render_mode=None; pass "
                "render_mode='rgb_array' at construction",
                stacklevel=2,
            )
            return None
        self._driver.check_open()
        frame = render_core(self.core)
        if frame is None:
            raise ZooportError(f"{type(self.core).__name__} returned no picture from render()")
        return np.array(frame, dtype=np.uint8, copy=True)

    def close(self) -> None:
        """Closes the core; calling it again does nothing."""
        self._driver.close()


class PettingZooParallelEnv(PettingZooCommon, ParallelEnv[str, Any, Any]):
    """Any BaseEnv as a PettingZoo ``ParallelEnv``; see the module docstring.

    Args:
        core: any BaseEnv; the adapter owns it (``close()`` closes it).
        render_mode, termination_mode, max_cycles, action_masks, mask_in_info,
        default_action, agent_name, uint8_visual, flatten_branched, allow_multiple_obs,
        name, stale_actions: see :class:`PettingZooCommon`.

    Attributes:
        core: the wrapped core.
        agents: the live agents, in ``possible_agents`` order.
        ignored_actions: how many actions for finished agents were ignored.

    Example:
        >>> from zooport.envs.builtin.tag import Tag
        >>> env = PettingZooParallelEnv(Tag(seed=0), termination_mode="any")
        >>> obs, infos = env.reset(seed=1)
        >>> env.agents
        ['runner_0', 'runner_1', 'runner_2', 'tagger_3', 'tagger_4']
        >>> env.observation_space("runner_0") is env.observation_space("runner_2")
        True
        >>> obs, rewards, terminations, truncations, infos = env.step(
        ...     {agent: 0 for agent in env.agents})
        >>> round(rewards["runner_0"], 2), rewards["tagger_3"], infos["tagger_3"]["decided"]
        (0.01, 0.0, False)
    """

    def __init__(
        self,
        core: Any,
        *,
        render_mode: str | None = None,
        termination_mode: TerminationMode | str | float = "all",
        max_cycles: int | None = None,
        action_masks: bool | None = None,
        mask_in_info: bool = False,
        default_action: str | Mapping[str, Any] | None = None,
        agent_name: AgentNaming = None,
        uint8_visual: bool = False,
        flatten_branched: bool = False,
        allow_multiple_obs: bool = False,
        name: str | None = None,
        stale_actions: str = "ignore",
    ) -> None:
        self._setup(
            core,
            render_mode=render_mode,
            termination_mode=termination_mode,
            max_cycles=max_cycles,
            action_masks=action_masks,
            mask_in_info=mask_in_info,
            default_action=default_action,
            agent_name=agent_name,
            uint8_visual=uint8_visual,
            flatten_branched=flatten_branched,
            allow_multiple_obs=allow_multiple_obs,
            name=name,
            stale_actions=stale_actions,
        )

    @property
    def agents(self) -> list[str]:
        """The live agents, in ``possible_agents`` order."""
        return self._driver.agents

    @override
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """Resets the core (reseeded with ``seed``) and returns ``(observations, infos)``.

        ``seed`` is None or an int >= 0. ``options`` is None or a dict with str keys, which
        the core does not use (see :func:`~zooport.adapters.core_access.check_reset_options`).
        """
        return self._driver.reset(self._reseed(seed, options))

    @override
    def step(self, actions: dict[str, Any]) -> AgentsStep:
        """One action per live agent in; ``(obs, rewards, terminations, truncations, infos)``.

        An action for an agent that finished earlier in the episode is ignored (counted in
        ``ignored_actions``) unless ``stale_actions="raise"``.

        Raises:
            ActionError: an action is missing for a live agent (unless ``default_action``),
                given for a name that is not an agent of the episode (or for a finished
                agent, with ``stale_actions="raise"``), or does not fit its action space.
            EnvNotResetError: before ``reset()``, or after the episode ended.
        """
        return self._driver.step(actions)


def seed_action_spaces(driver: MultiAgentDriver, seed: int | None) -> None:
    """Seeds each behaviour's action space: behaviour i, in the core's order, with ``seed + i``.

    What ML-Agents' PettingZoo wrappers do with their ``seed=`` (they give every behaviour the
    same seed; here two behaviours with equal spaces do not sample equal actions).

    Raises:
        ArgumentError: ``seed`` is not None or an int >= 0.
    """
    seed = check_seed(seed, f"{driver.adapter}(seed=...)")
    if seed is None:
        return
    for i, group in enumerate(driver.groups):
        group.action_space.seed(seed + i)


class UnityParallelEnv(PettingZooParallelEnv):
    """ML-Agents' ``UnityParallelEnv``: the Parallel adapter with ML-Agents' constructor.

    ``UnityParallelEnv(env, seed=None)`` as in ``mlagents_envs.envs.unity_parallel_env``;
    everything else is :class:`PettingZooParallelEnv` (5-tuple ``step``, ``reset`` returning
    ``(observations, infos)``, ``<behaviour>_<id>`` names unless ``agent_name=``).

    Args:
        env: any BaseEnv (a Unity build's ``UnityEnvironment``, a zooport core, your own).
        seed: seeds the agents' action spaces, as ML-Agents' wrapper does, so that
            ``action_space(agent).sample()`` repeats from run to run (see
            :func:`seed_action_spaces`). It does not seed the core: ``reset(seed=...)`` does,
            where the core can be seeded (a Unity build takes its seed at launch,
            ``UnityEnvironment(seed=...)``).
        **options: the keyword options of :class:`PettingZooParallelEnv`.

    Example:
        >>> from zooport.envs.builtin.tag import Tag
        >>> a, b = UnityParallelEnv(Tag(seed=0), seed=3), UnityParallelEnv(Tag(seed=0), 3)
        >>> [a.action_space("tagger_3").sample() for _ in range(5)] == [
        ...     b.action_space("tagger_3").sample() for _ in range(5)]
        True
    """

    def __init__(self, env: Any, seed: int | None = None, **options: Any) -> None:
        super().__init__(env, **options)
        seed_action_spaces(self._driver, seed)
