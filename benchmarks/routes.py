"""The routes a benchmark compares, each built for one (env, N) case.

Functions:
    route_builders: the ``(name, builder)`` pairs of every route for a case.

Routes (column names of the report):
    raw: the core itself: ``get_steps``, ``set_actions``, ``step``; the ceiling.
    BehaviorVectorEnv, SB3VecEnv: zooport's vector adapters over ONE core with N agents.
    SyncVectorEnv: Gymnasium's ``SyncVectorEnv`` over N single-agent ``GymEnv``s (N cores).
    DummyVecEnv: SB3's ``DummyVecEnv`` over the same N ``GymEnv``s.
    PettingZoo, SuperSuit: the PettingZoo Parallel adapter over one core (a dict of actions
        per step), and SuperSuit's ``pettingzoo_env_to_vec_env_v1`` +
        ``concat_vec_envs_v1`` over it (termination mode ``any``: SuperSuit needs a fixed
        agent set, so every agent's episode ends when one's does). Hook: they are measured once
        ``zooport.adapters.PettingZooParallelEnv`` exists and are skipped (with the reason)
        until then; a new route is one more builder in :func:`route_builders`.

Every route pre-samples :data:`ACTION_BATCHES` batches of random actions before timing and
cycles through them, so sampling is never timed. The peers use plain ``GymEnv`` objects
(no ``gym.make`` wrappers): the cheapest form of the peer route, so ratios are conservative.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from harness import Route, RouteUnavailable

from zooport.adapters.spaces import ActionLayout
from zooport.envs.base_env import ActionTuple

__all__ = ["EnvCase", "route_builders", "ACTION_BATCHES", "ROUTE_NAMES"]

#: Pre-sampled action batches per route (cycled through).
ACTION_BATCHES = 32

ROUTE_NAMES = (
    "raw",
    "BehaviorVectorEnv",
    "SB3VecEnv",
    "SyncVectorEnv",
    "DummyVecEnv",
    "PettingZoo",
    "SuperSuit",
)


@dataclass(frozen=True)
class EnvCase:
    """An environment to benchmark: ``make(n_agents, seed)`` returns a core."""

    name: str
    behavior: str
    make: Callable[[int, int], Any]


def _consumer_actions(case: EnvCase, n: int, seed: int) -> list[Any]:
    core = case.make(1, seed)
    layout = ActionLayout(core.behavior_specs[case.behavior].action_spec)
    core.close()
    rng = np.random.default_rng(seed)
    return [layout.sample(rng, n) for _ in range(ACTION_BATCHES)]


def _raw(case: EnvCase, n: int, seed: int) -> Route:
    core = case.make(n, seed)
    core.reset(seed=seed)
    spec = core.behavior_specs[case.behavior].action_spec
    rng = np.random.default_rng(seed)
    actions = [spec.random_action(n, rng) for _ in range(ACTION_BATCHES)]
    name = case.behavior

    def step(i: int) -> None:
        decision, _ = core.get_steps(name)
        action = actions[i % ACTION_BATCHES]
        if len(decision) != n:  # decision periods: only the deciding agents get a row
            k = len(decision)
            action = ActionTuple(action.continuous[:k], action.discrete[:k])
        core.set_actions(name, action)
        core.step()

    return Route("raw", n, step, core.close)


def _behavior_vector_env(case: EnvCase, n: int, seed: int) -> Route:
    from zooport.adapters.vector_env import BehaviorVectorEnv

    envs = BehaviorVectorEnv(case.make(n, seed), case.behavior)
    envs.reset(seed=seed)
    actions = _consumer_actions(case, n, seed)
    return Route(
        "BehaviorVectorEnv", n, lambda i: envs.step(actions[i % ACTION_BATCHES]), envs.close
    )


def _sb3_vec_env(case: EnvCase, n: int, seed: int) -> Route:
    try:
        from zooport.adapters.sb3_vec_env import SB3VecEnv
    except ImportError as exc:
        raise RouteUnavailable(f"stable-baselines3 is not installed ({exc})") from None
    venv = SB3VecEnv(case.make(n, seed), case.behavior)
    venv.seed(seed)
    venv.reset()
    actions = _consumer_actions(case, n, seed)
    return Route("SB3VecEnv", n, lambda i: venv.step(actions[i % ACTION_BATCHES]), venv.close)


def _gym_env_factories(case: EnvCase, n: int, seed: int) -> list[Callable[[], Any]]:
    try:
        from zooport.adapters.gym_env import GymEnv
    except ImportError as exc:
        raise RouteUnavailable(f"zooport.adapters.gym_env is not available ({exc})") from None
    return [
        lambda i=i: GymEnv(case.make(1, seed + i), case.behavior) for i in range(n)
    ]


def _sync_vector_env(case: EnvCase, n: int, seed: int) -> Route:
    import gymnasium as gym

    from zooport.adapters.vector_env import SAME_STEP

    factories = _gym_env_factories(case, n, seed)
    kwargs = {} if isinstance(SAME_STEP, str) else {"autoreset_mode": SAME_STEP}
    envs = gym.vector.SyncVectorEnv(factories, **kwargs)
    envs.reset(seed=seed)
    actions = _consumer_actions(case, n, seed)
    return Route("SyncVectorEnv", n, lambda i: envs.step(actions[i % ACTION_BATCHES]), envs.close)


def _dummy_vec_env(case: EnvCase, n: int, seed: int) -> Route:
    try:
        from stable_baselines3.common.vec_env import DummyVecEnv
    except ImportError as exc:
        raise RouteUnavailable(f"stable-baselines3 is not installed ({exc})") from None
    venv = DummyVecEnv(_gym_env_factories(case, n, seed))
    venv.seed(seed)
    venv.reset()
    actions = _consumer_actions(case, n, seed)
    return Route("DummyVecEnv", n, lambda i: venv.step(actions[i % ACTION_BATCHES]), venv.close)


def _pettingzoo_parallel_class() -> Any:
    """The PettingZoo Parallel adapter, once it exists."""
    for module, attr in (
        ("zooport.adapters", "PettingZooParallelEnv"),
        ("zooport.adapters.pettingzoo_parallel", "PettingZooParallelEnv"),
    ):
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):
            continue
    raise RouteUnavailable("zooport.adapters.PettingZooParallelEnv does not exist yet")


def _pettingzoo(case: EnvCase, n: int, seed: int) -> Route:
    parallel_env = _pettingzoo_parallel_class()(case.make(n, seed))
    parallel_env.reset(seed=seed)
    agents = list(parallel_env.possible_agents)
    batches = _consumer_actions(case, len(agents), seed)
    actions = [dict(zip(agents, batch, strict=True)) for batch in batches]

    def step(i: int) -> int:
        if not parallel_env.agents:
            parallel_env.reset()
        live = parallel_env.agents
        chosen = actions[i % ACTION_BATCHES]
        parallel_env.step({agent: chosen[agent] for agent in live})
        return len(live)

    # Finished agents leave until every agent is done: count the agents that really acted.
    return Route("PettingZoo", n, step, parallel_env.close, counts_agents=True)


def _supersuit(case: EnvCase, n: int, seed: int) -> Route:
    parallel_class = _pettingzoo_parallel_class()
    try:
        import supersuit as ss
    except ImportError as exc:
        raise RouteUnavailable(f"supersuit is not installed ({exc})") from None
    # SuperSuit needs a fixed agent set: the episode of every agent ends when one agent's
    # does (termination_mode "any"), then SuperSuit resets the core. (black_death_v3 does not
    # help: it ends its episode only when every agent is terminated AND truncated.)
    parallel_env = parallel_class(case.make(n, seed), termination_mode="any")
    venv = ss.pettingzoo_env_to_vec_env_v1(parallel_env)
    venv = ss.concat_vec_envs_v1(venv, 1, num_cpus=0, base_class="gymnasium")
    venv.reset(seed=seed)
    actions = _consumer_actions(case, n, seed)
    return Route("SuperSuit", n, lambda i: venv.step(actions[i % ACTION_BATCHES]), venv.close)


_BUILDERS: dict[str, Callable[[EnvCase, int, int], Route]] = {
    "raw": _raw,
    "BehaviorVectorEnv": _behavior_vector_env,
    "SB3VecEnv": _sb3_vec_env,
    "SyncVectorEnv": _sync_vector_env,
    "DummyVecEnv": _dummy_vec_env,
    "PettingZoo": _pettingzoo,
    "SuperSuit": _supersuit,
}


def route_builders(
    case: EnvCase, n: int, seed: int = 0, names: tuple[str, ...] = ROUTE_NAMES
) -> list[tuple[str, Callable[[], Route]]]:
    """``(name, builder)`` for each route in ``names``; a builder makes the route on call."""
    return [(name, lambda b=_BUILDERS[name]: b(case, n, seed)) for name in names]
