"""Which behaviours of a factory's environment ``GymEnv`` can serve, one agent each.

Classes:
    SingleAgentPlan: the factory keywords that make behaviours single-agent, and which.

Functions:
    agent_counts: the agents with a decision after a reset, per behaviour.
    single_agent_plan: how a factory's environment can be served by ``GymEnv``.

The single-agent checkers (Gymnasium's and SB3's ``check_env``) run on this plan, and the
command line's ``info`` and ``play --api gym`` read it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from zooport.checks.isolation import close_quietly
from zooport.checks.report import one_line
from zooport.envs.capabilities import accepts_keyword, keyword_parameters, reset_core

__all__ = ["SingleAgentPlan", "agent_counts", "single_agent_plan"]


@dataclass(frozen=True)
class SingleAgentPlan:
    """How ``GymEnv`` can serve a factory's environment.

    Attributes:
        kwargs: extra factory keywords that make the served behaviours single-agent.
        behaviors: the behaviours ``GymEnv`` can serve (one agent each), in spec order.
        reason: why none can (empty when ``behaviors`` is not).
    """

    kwargs: Mapping[str, Any]
    behaviors: tuple[str, ...]
    reason: str = ""


def agent_counts(factory: Callable[..., Any], seed: int = 0, **kwargs: Any) -> dict[str, int]:
    """The number of agents with a decision after a reset, per behaviour."""
    core = factory(**kwargs)
    try:
        reset_core(core, seed)
        return {name: len(core.get_steps(name)[0]) for name in core.behavior_specs}
    finally:
        close_quietly(core)


def single_agent_plan(
    factory: Callable[..., Any],
    *,
    seed: int = 0,
    preset: Mapping[str, Any] | None = None,
) -> SingleAgentPlan:
    """Which behaviours ``GymEnv`` can serve, and with which factory keywords.

    A behaviour with one agent after a reset qualifies as it is; otherwise, when the factory
    takes ``n_agents``, the behaviours with one agent under ``n_agents=1``.

    Args:
        factory: makes the environment; called (and the result closed) to count agents.
        seed: the reset seed for counting.
        preset: known single-agent keywords (e.g. a built-in's Gymnasium registration);
            a ``behavior_name`` in it names the one behaviour to serve.
    """
    if preset is not None:
        kwargs = {k: v for k, v in preset.items() if k != "behavior_name"}
        counts = agent_counts(factory, seed, **kwargs)
        named = preset.get("behavior_name")
        ones = [b for b, n in counts.items() if n == 1 and (named is None or b == named)]
        if ones:
            return SingleAgentPlan(kwargs, tuple(ones))
    counts = agent_counts(factory, seed)
    ones = [b for b, n in counts.items() if n == 1]
    if ones:
        return SingleAgentPlan({}, tuple(ones))
    listing = ", ".join(f"{b}: {n}" for b, n in counts.items())
    takes = "the factory takes no n_agents"
    if accepts_keyword(factory, "n_agents"):
        try:
            single = agent_counts(factory, seed, n_agents=1)
        except TypeError as error:
            if keyword_parameters(factory) is not None:
                raise  # n_agents is a named parameter: its failure is real
            # A **kwargs factory (a BatchedEnv subclass passing them on) may refuse it.
            takes = (
                f"the factory does not take n_agents=1 ({one_line(error)}); to serve one "
                f"behaviour with GymEnv, give the factory keywords that leave it one agent "
                f"(--kwargs JSON on the command line)"
            )
        else:
            ones = [b for b, n in single.items() if n == 1]
            if ones:
                return SingleAgentPlan({"n_agents": 1}, tuple(ones))
    return SingleAgentPlan({}, (), f"no behaviour has exactly one agent ({listing}) and {takes}")
