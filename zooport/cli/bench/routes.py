"""Every route the benchmarks compare, in one table of steppers that step their env with
pre-sampled actions (``benchmarks/README.md`` says what each steps and why)."""

from __future__ import annotations

import importlib
import multiprocessing
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import repeat
from operator import itemgetter
from typing import Any

import gymnasium as gym
import numpy as np

from zooport.adapters.gym_env import GymEnv
from zooport.adapters.spaces import ActionLayout
from zooport.adapters.vector_env import SAME_STEP
from zooport.cli.bench.harness import Route, RouteUnavailable
from zooport.cli.bench.trivial_core import CostlyCore, TrivialCore
from zooport.envs.base_env import ActionTuple
from zooport.envs.core_pool import CorePool

__all__ = [
    "ACTION_BATCHES", "MULTI_AGENT_ROUTES", "ROUTES", "ROUTE_NAMES", "VECTOR_ROUTES", "EnvCase",
    "costly", "endless", "route_builders", "trivial",
]  # fmt: skip

#: Pre-sampled action batches per route (cycled through).
ACTION_BATCHES = 32
#: The routes of the vector table: a behaviour's agents as vector slots, and the peers.
VECTOR_ROUTES = ("raw", "BehaviorVectorEnv", "SB3VecEnv", "SyncVectorEnv", "DummyVecEnv")
#: The routes of the multi-agent table: PettingZoo's two APIs, SuperSuit, MultiAgentTask.
MULTI_AGENT_ROUTES = ("raw", "PettingZoo", "SuperSuit", "AEC", "parallel_to_aec",
                      "MultiAgentTask", "PettingZoo floor")  # fmt: skip
#: Every route of ``zooport bench``, in report order.
ROUTE_NAMES = tuple(dict.fromkeys(VECTOR_ROUTES + MULTI_AGENT_ROUTES))


@dataclass(frozen=True)
class EnvCase:
    """An environment to benchmark: ``make(n_agents, seed)`` (picklable) returns a fresh core."""

    name: str
    behavior: str
    make: Callable[[int, int], Any]
    routes: tuple[str, ...] = ROUTE_NAMES
    every_agent_acts: bool = False  # no episode ends
    workers: int = 1  # the pool routes' cores
    peers: int | None = None  # the process peers' one-agent envs, at most


#: ``EnvCase.make`` s that pickle: ``(n_agents, seed, **options)``; ``endless``: no episode ends.
trivial, costly, endless = TrivialCore, CostlyCore, partial(TrivialCore, terminate=False)


def _actions(case: EnvCase, n: int, seed: int, *, raw: bool = False) -> list[Any]:
    core = case.make(1, seed)
    spec = core.behavior_specs[case.behavior].action_spec
    core.close()
    rng = np.random.default_rng(seed)
    sample = partial(spec.random_action, n) if raw else partial(ActionLayout(spec).sample, n=n)
    return [sample(rng) for _ in range(ACTION_BATCHES)]


# Builders. An ImportError is the route's package missing: the harness skips the route.


def _core(case: EnvCase, n: int, seed: int) -> tuple[Any, int]:
    return case.make(n, seed), n


def _pool(case: EnvCase, n: int, seed: int, slow_last: bool = False, **options: Any) -> Any:
    costs: list[dict[str, float]] = [{}] * case.workers
    if slow_last:  # the last core costs 4x per agent: in sync mode every step waits for it
        costs = [{"us_per_agent": 7.0}] * (case.workers - 1) + [{"us_per_agent": 28.0}]
    factories = [partial(case.make, n, seed + i, **c) for i, c in enumerate(costs)]
    return CorePool(factories, **options), case.workers * n


def _adapter(cls: str, case: EnvCase, n: int, seed: int, pool: bool = False, **options: Any) -> Any:
    adapter = getattr(importlib.import_module("zooport.adapters"), cls)
    core, agents = (_pool if pool else _core)(case, n, seed)
    behavior = [case.behavior] if cls in ("BehaviorVectorEnv", "SB3VecEnv") else []
    return adapter(core, *behavior, **options), agents


def _one_agent_gym(case: EnvCase, seed: int) -> Any:
    return GymEnv(case.make(1, seed), case.behavior)


def _peer(kind: str, case: EnvCase, n: int, seed: int) -> tuple[Any, int]:
    m = case.workers * n if case.peers is None else min(case.workers * n, case.peers)
    factories = [partial(_one_agent_gym, case, seed + i) for i in range(m)]
    if kind in ("DummyVecEnv", "SubprocVecEnv"):
        vec_env = importlib.import_module("stable_baselines3.common.vec_env")
        return getattr(vec_env, kind)(factories), m
    if kind == "AsyncVectorEnv":
        return gym.vector.AsyncVectorEnv(factories, shared_memory=True), m
    kwargs = {} if isinstance(SAME_STEP, str) else {"autoreset_mode": SAME_STEP}
    return gym.vector.SyncVectorEnv(factories, **kwargs), m


def _supersuit(case: EnvCase, n: int, seed: int) -> tuple[Any, int]:
    import supersuit as ss

    # SuperSuit needs a fixed agent set: every agent's episode ends with the first one's
    # ("any"). (black_death_v3 ends it only when every agent is terminated AND truncated.)
    env, _ = _adapter("PettingZooParallelEnv", case, n, seed, termination_mode="any")
    venv = ss.pettingzoo_env_to_vec_env_v1(env)
    return ss.concat_vec_envs_v1(venv, 1, num_cpus=0, base_class="gymnasium"), n


def _parallel_to_aec(case: EnvCase, n: int, seed: int) -> tuple[Any, int]:
    from pettingzoo.utils.conversions import parallel_to_aec

    return parallel_to_aec(_adapter("PettingZooParallelEnv", case, n, seed)[0]), n


def _pipe_worker(connection: Any, make: Callable[[int, int], Any], n: int, seed: int) -> None:
    core = make(n, seed)
    core.reset(seed=seed)
    name = next(iter(core.behavior_specs))
    for _, actions in iter(connection.recv, ("close", None)):
        core.set_actions(name, actions)
        core.step()
        connection.send(core.get_steps(name))
    core.close()
    connection.close()


def _puffer(case: EnvCase, n: int, seed: int) -> tuple[Any, int]:
    try:
        from pufferlib import vector  # type: ignore[import-not-found, import-untyped, unused-ignore]

        from zooport.cli.bench.pool_puffer import CorePufferEnv
    except ImportError as exc:
        raise RouteUnavailable(
            f"pufferlib is not installed ({exc}); make bench-pool installs pufferlib-core "
            "3.0.23 with --no-deps, then psutil, rich and rich-argparse"
        ) from None
    k = case.workers
    vecenv = vector.make(
        CorePufferEnv,
        env_kwargs={"make": case.make, "n": n},
        backend=vector.Multiprocessing,
        num_envs=k,
        num_workers=k,
        batch_size=k,
        overwork=True,  # a machine with fewer cores than workers still runs (slowly)
    )
    return vecenv, k * n


# Steppers: ([build,] case, n, seed) -> Route; step(i) steps with the i-th action batch.
Build = Callable[[EnvCase, int, int], tuple[Any, int]]


def _raw(build: Build, case: EnvCase, n: int, seed: int, counts: bool = False) -> Route:
    env, n = build(case, n, seed)
    env.reset(seed=seed)
    behavior = case.behavior
    actions = _actions(case, n, seed, raw=True)

    def step(i: int) -> int:
        decision, _ = env.get_steps(behavior)
        k = len(decision)
        action = actions[i % ACTION_BATCHES]
        if k != n:  # decision periods: only the deciding agents get a row
            action = ActionTuple(action.continuous[:k], action.discrete[:k])
        env.set_actions(behavior, action)
        env.step()
        return k

    return Route(n, step, env.close, counts_agents=counts)


def _each(case: EnvCase, n: int, seed: int) -> Route:
    cores = [case.make(n, seed + i) for i in range(case.workers)]
    for i, core in enumerate(cores):
        core.reset(seed=seed + i)
    behavior = case.behavior
    actions = _actions(case, n, seed, raw=True)

    def step(i: int) -> None:
        for core in cores:
            core.get_steps(behavior)
            core.set_actions(behavior, actions[i % ACTION_BATCHES])
            core.step()

    return Route(case.workers * n, step, lambda: [core.close() for core in cores])


def _piped(case: EnvCase, n: int, seed: int) -> Route:
    context = multiprocessing.get_context("spawn")
    workers = []
    for i in range(case.workers):
        parent, child = context.Pipe()
        args = (child, case.make, n, seed + i)
        process = context.Process(target=_pipe_worker, args=args, daemon=True)
        process.start()
        child.close()
        workers.append((parent, process))
    actions = _actions(case, n, seed, raw=True)

    def step(i: int) -> None:
        for pipe, _ in workers:
            pipe.send(("step", actions[i % ACTION_BATCHES]))
        for pipe, _ in workers:
            pipe.recv()

    def close() -> None:
        for pipe, process in workers:
            pipe.send(("close", None))
            process.join(10)
            pipe.close()

    step(0)  # the workers have started
    return Route(case.workers * n, step, close)


def _batched(build: Build, case: EnvCase, n: int, seed: int) -> Route:
    envs, n = build(case, n, seed)
    if hasattr(envs, "seed"):  # SB3's VecEnv API
        envs.seed(seed)
        envs.reset()
    else:
        envs.reset(seed=seed)
    actions = _actions(case, n, seed)
    return Route(n, lambda i: envs.step(actions[i % ACTION_BATCHES]), envs.close)


def _dicts(method: str | None, build: Build, case: EnvCase, n: int, seed: int) -> Route:
    # ``env.<method>(actions)``, or (AEC, no method) one cycle of turns; counts who acted.
    env = build(case, n, seed)[0]
    env.reset(seed=seed)
    agents = list(env.possible_agents)
    actions = [dict(zip(agents, a, strict=True)) for a in _actions(case, len(agents), seed)]
    step_all = getattr(env, method) if method else None

    def step(i: int) -> int:
        if not env.agents:
            env.reset()
        live, chosen = env.agents, actions[i % ACTION_BATCHES]
        if step_all is not None:
            step_all(chosen if len(live) == len(agents) else {a: chosen[a] for a in live})
            return len(live)
        turns = len(live)
        for _ in range(turns):
            _, _, terminated, truncated, _ = env.last()
            env.step(None if terminated or truncated else chosen[env.agent_selection])
        return turns

    return Route(len(agents), step, env.close, counts_agents=True)


def _floor(case: EnvCase, n: int, seed: int) -> Route:
    # No adapter: the Python work PettingZoo's Parallel API asks of any adapter per step.
    core = case.make(n, seed)
    core.reset(seed=seed)
    decision, _ = core.get_steps(case.behavior)
    observation = np.asarray(decision.obs[0], np.float32)
    reward = np.asarray(decision.reward, np.float32)
    core.close()
    agents = [f"agent_{i}" for i in decision.agent_id.tolist()]
    actions = [dict(zip(agents, a, strict=True)) for a in _actions(case, len(agents), seed)]
    lookup = itemgetter(*agents)
    all_false = dict.fromkeys(agents, False)
    info = {"decided": True, "group_id": 0, "group_reward": 0.0}

    def step(i: int) -> tuple[Any, ...]:
        chosen = actions[i % ACTION_BATCHES]
        # The cheapest complete key check: the right count, and every lookup succeeds.
        if len(chosen) != len(agents):
            raise AssertionError("unreachable: every agent has an action")
        return (
            np.asarray(lookup(chosen)),
            dict(zip(agents, observation.copy(), strict=True)),
            dict(zip(agents, reward.tolist(), strict=True)),
            all_false.copy(),
            all_false.copy(),
            dict(zip(agents, map(dict.copy, repeat(info, len(agents))), strict=True)),
        )

    return Route(len(agents), step)


_COUNTED = partial(_raw, counts=True)  # the agents that decided (a pool not in sync mode)

ROUTES: dict[str, Callable[[EnvCase, int, int], Route]] = {
    "raw": partial(_raw, _core),  # the core's own get_steps/set_actions/step: the ceiling
    "BehaviorVectorEnv": partial(_batched, partial(_adapter, "BehaviorVectorEnv")),
    "SB3VecEnv": partial(_batched, partial(_adapter, "SB3VecEnv")),
    "SyncVectorEnv": partial(_batched, partial(_peer, "SyncVectorEnv")),
    "DummyVecEnv": partial(_batched, partial(_peer, "DummyVecEnv")),
    "PettingZoo": partial(_dicts, "step", partial(_adapter, "PettingZooParallelEnv")),
    "SuperSuit": partial(_batched, _supersuit),
    "AEC": partial(_dicts, None, partial(_adapter, "PettingZooAECEnv")),
    "parallel_to_aec": partial(_dicts, None, _parallel_to_aec),
    # "all", as the PettingZoo routes: the episode lasts until every agent has finished.
    "MultiAgentTask": partial(
        _dicts, "step_all", partial(_adapter, "MultiAgentTask", termination_mode="all")
    ),
    "PettingZoo floor": _floor,
    # The CorePool benchmark's (``zooport bench --workers K``): K cores each.
    "1proc": _each,
    "CorePool": partial(_raw, _pool),
    "CorePool (workers only)": partial(_raw, partial(_pool, local_core=False)),
    "vec(CorePool)": partial(_batched, partial(_adapter, "BehaviorVectorEnv", pool=True)),
    "AsyncVectorEnv": partial(_batched, partial(_peer, "AsyncVectorEnv")),
    "SubprocVecEnv": partial(_batched, partial(_peer, "SubprocVecEnv")),
    "ML-Agents-style": _piped,
    "PufferLib": partial(_batched, _puffer),
    "sync, one core 4x slower": partial(_COUNTED, partial(_pool, slow_last=True, mode="sync")),
    "async, one core 4x slower": partial(
        _COUNTED, partial(_pool, slow_last=True, mode="async", min_ready=1)
    ),
    "Trivial": partial(_raw, _core),
    "pool K=1 (in this process)": partial(_raw, partial(_pool, local_core=True)),
    "pool K=1 (in a worker)": partial(_raw, partial(_pool, local_core=False)),
}


def route_builders(
    case: EnvCase, n: int, seed: int = 0, names: tuple[str, ...] | None = None
) -> list[tuple[str, Callable[[], Route]]]:
    """``(name, builder)`` for each route in ``names`` (default: all) that runs on ``case``."""
    names = names or case.routes
    return [(name, partial(ROUTES[name], case, n, seed)) for name in names if name in case.routes]
