"""A batched core as a PettingZoo ``ParallelEnv``: every behaviour's agents step at once.

Classes:
    PettingZooParallelEnv: the Parallel adapter.
    UnityParallelEnv: ML-Agents' name for it, with ML-Agents' ``seed=`` argument.

What it shares with the AEC adapter is in :mod:`zooport.adapters.pettingzoo_common`, the
episode in :class:`~zooport.adapters.multi_agent_driver.MultiAgentDriver`: this module only
translates a dict of actions into the driver's step.

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

from typing import TYPE_CHECKING, Any

from pettingzoo import ParallelEnv
from typing_extensions import override

from zooport.adapters.multi_agent_driver import AgentsStep
from zooport.adapters.options import PettingZooOptions, takes_options
from zooport.adapters.pettingzoo_common import MLAgentsConstructor, PettingZooCommon
from zooport.envs.base_env import BaseEnvLike

__all__ = ["PettingZooParallelEnv", "UnityParallelEnv"]


@takes_options(PettingZooOptions, leading=["core"])
class PettingZooParallelEnv(PettingZooCommon, ParallelEnv[str, Any, Any]):
    """Any BaseEnv as a PettingZoo ``ParallelEnv``; see the module docstring.

    Args:
        core: any BaseEnv; the adapter owns it (``close()`` closes it). One with no
            behaviours yet (a Unity scene whose agents have not requested a decision) is
            stepped once first, as ML-Agents' wrappers do, and the behaviours it has then are
            served.
        {options}

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

    if TYPE_CHECKING:  # what callers see: takes_options wraps the __init__ below

        def __init__(self, core: BaseEnvLike, *args: Any, **options: Any) -> None: ...

    def __init__(  # type: ignore[no-redef]  # wrapped by takes_options
        self, core: BaseEnvLike, options: PettingZooOptions
    ) -> None:
        self._setup(core, options)

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
        result = self._driver.reset(self._reseed(seed, options))
        self._show()
        return result

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
        result = self._driver.step(actions)
        self._show()
        return result


class UnityParallelEnv(MLAgentsConstructor, PettingZooParallelEnv):
    """ML-Agents' ``UnityParallelEnv(env, seed=None)``: the Parallel adapter with ML-Agents'
    constructor (see :class:`~zooport.adapters.pettingzoo_common.MLAgentsConstructor`).

    Everything else is :class:`PettingZooParallelEnv` (5-tuple ``step``, ``reset`` returning
    ``(observations, infos)``, ``<behaviour>_<id>`` names unless ``agent_name=``).

    Example:
        >>> from zooport.envs.builtin.tag import Tag
        >>> a, b = UnityParallelEnv(Tag(seed=0), seed=3), UnityParallelEnv(Tag(seed=0), 3)
        >>> [a.action_space("tagger_3").sample() for _ in range(5)] == [
        ...     b.action_space("tagger_3").sample() for _ in range(5)]
        True
    """
