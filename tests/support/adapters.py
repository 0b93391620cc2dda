"""Every zooport adapter as a function of a core, for the tests that run each one of them.

Classes:
    Route: how the tests build one adapter over a core.

Constants:
    ADAPTERS: adapter name -> :class:`Route`, for the eight adapters and tasks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from zooport import adapters

__all__ = ["ADAPTERS", "Route"]


class Route(NamedTuple):
    """How the tests build one adapter over a core.

    Attributes:
        agents: the agents the tests give the core's one behaviour (1 for the single-agent
            adapters, 3 for the others).
        wrap: ``wrap(core)`` is the adapter over the core.
        holder: the adapter that holds the core (a task wraps one), whose name starts the
            errors and notes about the core.
    """

    agents: int
    wrap: Callable[[Any], Any]
    holder: str


ADAPTERS: dict[str, Route] = {
    "GymEnv": Route(1, adapters.GymEnv, "GymEnv"),
    "GymTask": Route(1, lambda core: adapters.GymTask(adapters.GymEnv(core)), "GymEnv"),
    "BehaviorVectorEnv": Route(3, adapters.BehaviorVectorEnv, "BehaviorVectorEnv"),
    "SB3VecEnv": Route(3, adapters.SB3VecEnv, "SB3VecEnv"),
    "PettingZooParallelEnv": Route(3, adapters.PettingZooParallelEnv, "PettingZooParallelEnv"),
    "PettingZooAECEnv": Route(3, adapters.PettingZooAECEnv, "PettingZooAECEnv"),
    "MultiAgentTask": Route(3, adapters.MultiAgentTask, "MultiAgentTask"),
    "PettingZooTask": Route(
        3,
        lambda core: adapters.PettingZooTask(adapters.PettingZooParallelEnv(core)),
        "PettingZooParallelEnv",
    ),
}
