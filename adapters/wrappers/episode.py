"""When a multi-agent episode ends, for any PettingZoo Parallel env.

Classes:
    TerminationPolicy: ends the episode once ``any``, a ``majority``, ``all`` or a fraction of
        its agents have finished; agents still live then are truncated (or terminated, by
        option), and those that finished keep their own flags.

The rule is zooport's :class:`~zooport.adapters.termination.TerminationRule`: an agent
counts as finished once it was terminated or truncated in the episode; the agents counted are
every agent that took part (spawned ones from when they appear). zooport's adapters take the
same rule as ``termination_mode``; this wrapper brings it to any Parallel env.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pettingzoo import ParallelEnv
from typing_extensions import override

from zooport.adapters.termination import TerminationMode, TerminationRule
from zooport.adapters.wrappers.base import ParallelWrapper
from zooport.errors import ArgumentError, EnvNotResetError

__all__ = ["TerminationPolicy"]

_END_AS = ("truncated", "terminated")


class TerminationPolicy(ParallelWrapper):
    """Ends the episode by a termination rule, keeping terminated and truncated apart.

    Args:
        env: any PettingZoo Parallel env.
        mode: ``"any"``, ``"majority"``, ``"all"`` (a
            :class:`~zooport.adapters.termination.TerminationMode`) or a fraction in (0, 1].
        end_live_as: the flag agents still live when the rule fires get: ``"truncated"``
            (default: their own episode did not reach a terminal state) or ``"terminated"``
            (the team's failure is theirs too).

    After the rule fires ``agents`` is empty and ``step`` raises
    :class:`~zooport.EnvNotResetError` until ``reset``. Rules: unique.

    Raises:
        ArgumentError: an unknown mode or ``end_live_as``.

    Example:
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.envs.builtin.tag import Tag
        >>> env = TerminationPolicy(PettingZooParallelEnv(Tag(seed=0, tag_radius=0.85)), "any")
        >>> _ = env.reset(seed=0)
        >>> while env.agents:
        ...     _, _, terminations, truncations, _ = env.step(dict.fromkeys(env.agents, 0))
        >>> sorted(a for a, t in terminations.items() if t)
        ['runner_0']
        >>> sorted(a for a, t in truncations.items() if t)
        ['runner_1', 'runner_2', 'tagger_3', 'tagger_4']
    """

    unique: ClassVar[bool] = True

    def __init__(
        self,
        env: ParallelEnv,
        mode: TerminationMode | str | float = "all",
        *,
        end_live_as: str = "truncated",
    ) -> None:
        super().__init__(env)
        self.rule = TerminationRule(mode)
        if end_live_as not in _END_AS:
            raise ArgumentError(
                f"Expect end_live_as to be one of {list(_END_AS)}, actually: {end_live_as!r}"
            )
        self.end_live_as = end_live_as
        self._agents: list[str] = []
        self._took_part: set[str] = set()
        self._finished: set[str] = set()
        self._over = True

    @property
    def agents(self) -> list[str]:  # type: ignore[override]
        """The live agents; empty once the rule has ended the episode."""
        return self._agents

    @override
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        observations, infos = self.env.reset(seed=seed, options=options)
        self._agents = list(self.env.agents)
        self._took_part = set(self._agents)
        self._finished = set()
        self._over = False
        return observations, infos

    @override
    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if self._over:
            raise EnvNotResetError(
                f"{type(self).__name__}: the episode is over (rule {self.rule!r}); call reset()"
            )
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        inner_agents = self.env.agents
        self._took_part.update(inner_agents)
        self._took_part.update(terminations)
        finished = self._finished
        finished.update(a for a, t in terminations.items() if t)
        finished.update(a for a, t in truncations.items() if t)
        if self.rule.episode_over(len(finished), len(self._took_part)):
            cut = [a for a in terminations if a not in finished]
            flags = dict(truncations if self.end_live_as == "truncated" else terminations)
            flags.update(dict.fromkeys(cut, True))
            if self.end_live_as == "truncated":
                truncations = flags
            else:
                terminations = flags
            self._over = True
            self._agents = []
        else:
            self._agents = [a for a in inner_agents if a not in finished]
        return observations, rewards, terminations, truncations, infos
