"""A batched core as a PettingZoo ``ParallelEnv`` over the
:class:`~zooport.adapters.multi_agent_driver.MultiAgentDriver`: every behaviour's agents step
at once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pettingzoo import ParallelEnv
from typing_extensions import override

from zooport.adapters.multi_agent_driver import AgentsStep
from zooport.adapters.options import PettingZooOptions, listing_options
from zooport.adapters.pettingzoo_common import MLAgentsConstructor, PettingZooCommon
from zooport.envs.base_env import BaseEnvLike

if TYPE_CHECKING:
    from zooport.adapters.agent_names import AgentNaming
    from zooport.adapters.termination import TerminationMode

__all__ = ["PettingZooParallelEnv", "UnityParallelEnv"]


@listing_options
class PettingZooParallelEnv(PettingZooCommon, ParallelEnv[str, Any, Any]):
    """Any BaseEnv as a PettingZoo ``ParallelEnv``; see the module docstring.

    Args:
        core: any BaseEnv; the adapter owns it (``close()`` closes it). One with no
            behaviours yet (a Unity scene whose agents have not requested a decision) is
            stepped once first, as ML-Agents' wrappers do, and the behaviours it has then are
            served.
        uint8_visual: visual observations as uint8 0..255 instead of float32 0..1.
        flatten_branched: several discrete branches as one ``Discrete``, not ``MultiDiscrete``.
        allow_multiple_obs: observations always as a ``Dict`` keyed by observation name.
        termination_mode: ``"any"``, ``"majority"``, ``"all"`` or a fraction in (0, 1] of
            the episode's agents whose finishing ends it (:mod:`zooport.adapters.termination`).
        max_cycles: core steps after which live agents are truncated; None: no limit.
        action_masks: masks for discrete actions; None: unless the core is a ``BatchedEnv``
            without masks.
        mask_in_info: the mask in ``info["action_mask"]``, not in the observation.
        default_action: a live agent's action when it is given none: None raises,
            ``"zero"`` (the core's zero action) or ``{behaviour: action}``.
        agent_name: None or ``"pettingzoo"``, ``"mlagents"``, or a callable
            ``(behaviour, agent_id) -> str`` (:mod:`zooport.adapters.agent_names`).
        stale_actions: ``"ignore"`` (counted in ``ignored_actions``) or ``"raise"``: an
            action for an agent that finished earlier in the episode.
        render_mode: None, ``"rgb_array"`` or ``"human"`` (a pygame window).
        name: ``metadata["name"]`` and ``str(env)``; None: ``zooport_<core class>``.

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
        core: BaseEnvLike,
        *,
        uint8_visual: bool = False,
        flatten_branched: bool = False,
        allow_multiple_obs: bool = False,
        termination_mode: TerminationMode | str | float = "all",
        max_cycles: int | None = None,
        action_masks: bool | None = None,
        mask_in_info: bool = False,
        default_action: str | Mapping[str, Any] | None = None,
        agent_name: AgentNaming = None,
        stale_actions: str = "ignore",
        render_mode: str | None = None,
        name: str | None = None,
    ) -> None:
        options = PettingZooOptions(
            uint8_visual=uint8_visual,
            flatten_branched=flatten_branched,
            allow_multiple_obs=allow_multiple_obs,
            termination_mode=termination_mode,
            max_cycles=max_cycles,
            action_masks=action_masks,
            mask_in_info=mask_in_info,
            default_action=default_action,
            agent_name=agent_name,
            stale_actions=stale_actions,
            render_mode=render_mode,
            name=name,
        )
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
