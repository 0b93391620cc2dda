"""A batched core as a PettingZoo ``ParallelEnv``: every behaviour's agents step at once."""

from __future__ import annotations

from typing import Any

from pettingzoo import ParallelEnv
from typing_extensions import override

from zooport.adapters.multi_agent_driver import AgentsStep
from zooport.adapters.options import listing_options
from zooport.adapters.pettingzoo_common import PettingZooCommon, seed_action_spaces
from zooport.envs.base_env import BaseEnvLike

__all__ = ["PettingZooParallelEnv", "UnityParallelEnv"]


@listing_options
class PettingZooParallelEnv(PettingZooCommon, ParallelEnv[str, Any, Any]):
    """Any BaseEnv as a PettingZoo ``ParallelEnv`` (options: ``PettingZooCommon``'s).

    Example:
        >>> from zooport.envs.builtin.tag import Tag
        >>> env = PettingZooParallelEnv(Tag(seed=0), termination_mode="any")
        >>> obs, infos = env.reset(seed=1)
        >>> obs, rewards, terminations, truncations, infos = env.step(dict.fromkeys(env.agents, 0))
        >>> round(rewards["runner_0"], 2), rewards["tagger_3"], infos["tagger_3"]["decided"]
        (0.01, 0.0, False)
    """

    @property
    def agents(self) -> list[str]:
        """The live agents, in ``possible_agents`` order."""
        return self._driver.agents

    @override
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """Resets the core (reseeded with ``seed``) and returns ``(observations, infos)``."""
        result = self._driver.reset(self._reseed(seed, options))
        self._show()
        return result

    @override
    def step(self, actions: dict[str, Any]) -> AgentsStep:
        """One action per live agent in, the step's five dicts out."""
        result = self._driver.step(actions)
        self._show()
        return result


class UnityParallelEnv(PettingZooParallelEnv):
    """ML-Agents' ``UnityParallelEnv(env, seed=None)``: ``seed`` seeds the action spaces only."""

    def __init__(self, env: BaseEnvLike, seed: int | None = None, **options: Any) -> None:
        super().__init__(env, **options)
        seed_action_spaces(self._driver, seed)
