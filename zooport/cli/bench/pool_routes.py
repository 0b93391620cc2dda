"""The routes of the CorePool benchmark (:mod:`~zooport.cli.bench.pool`), in a module of
its own so that worker processes (spawn) can import what they run."""

from __future__ import annotations

import functools
import multiprocessing
from typing import Any

import numpy as np

from zooport.cli.bench.costly_core import CostlyCore
from zooport.cli.bench.harness import Route, RouteUnavailable
from zooport.cli.bench.trivial_core import TrivialCore
from zooport.envs.base_env import ActionTuple
from zooport.envs.core_pool import CorePool

ACTION_BATCHES = 16
NAME = CostlyCore.behavior_name


def _costly(n: int, seed: int, us_per_agent: float = 7.0) -> CostlyCore:
    return CostlyCore(n_agents=n, us_per_agent=us_per_agent, seed=seed)


def _batches(n: int, seed: int = 0) -> list[ActionTuple]:
    rng = np.random.default_rng(seed)
    return [
        ActionTuple(rng.uniform(-1, 1, (n, 2)).astype(np.float32)) for _ in range(ACTION_BATCHES)
    ]


def _raw_route(name: str, env: Any, n: int, *, count_decisions: bool = False) -> Route:
    """Steps a BaseEnv (a core or a pool) through its raw API; ``n`` agents."""
    env.reset(seed=0)
    actions = _batches(n)
    behavior = next(iter(env.behavior_specs))

    def step(i: int) -> int:
        decision, _ = env.get_steps(behavior)
        k = len(decision)
        action = actions[i % ACTION_BATCHES]
        env.set_actions(behavior, action if k == n else ActionTuple(action.continuous[:k]))
        env.step()
        return k

    return Route(name, n, step, env.close, counts_agents=count_decisions)


def in_process(k: int, n: int, **options: Any) -> Route:
    cores = [CostlyCore(n_agents=n, seed=i, **options) for i in range(k)]
    for i, core in enumerate(cores):
        core.reset(seed=i)
    action = _batches(n)

    def step(i: int) -> None:
        for core in cores:
            core.get_steps(NAME)
            core.set_actions(NAME, action[i % ACTION_BATCHES])
            core.step()

    def close() -> None:
        for core in cores:
            core.close()

    return Route("1proc", k * n, step, close)


def pool(k: int, n: int, core: dict[str, Any] | None = None, **options: Any) -> Route:
    factories = [
        functools.partial(CostlyCore, n_agents=n, seed=i, **(core or {})) for i in range(k)
    ]
    name = "CorePool" if options.get("local_core", True) else "CorePool (workers only)"
    return _raw_route(name, CorePool(factories, **options), k * n)


def vector_pool(k: int, n: int, **core: Any) -> Route:
    from zooport.adapters import BehaviorVectorEnv

    envs = BehaviorVectorEnv(CorePool([functools.partial(CostlyCore, n_agents=n, **core)] * k))
    envs.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = [rng.uniform(-1, 1, (k * n, 2)).astype(np.float32) for _ in range(ACTION_BATCHES)]
    return Route(
        "vec(CorePool)", k * n, lambda i: envs.step(actions[i % ACTION_BATCHES]), envs.close
    )


def puffer(k: int, n: int, us_per_agent: float) -> Route:
    """PufferLib's Multiprocessing over K native PufferEnvs of the same (endless) core."""
    try:
        from zooport.cli.bench.pool_puffer import puffer_vector
    except ImportError as exc:
        raise RouteUnavailable(
            f"pufferlib is not installed ({exc}); make bench-pool installs pufferlib-core "
            "3.0.23 with --no-deps, then psutil, rich and rich-argparse"
        ) from None
    vecenv = puffer_vector(k, n, us_per_agent)
    vecenv.async_reset(0)
    vecenv.recv()
    rng = np.random.default_rng(0)
    actions = [rng.uniform(-1, 1, (k * n, 2)).astype(np.float32) for _ in range(ACTION_BATCHES)]

    def step(i: int) -> None:
        vecenv.send(actions[i % ACTION_BATCHES])
        vecenv.recv()

    return Route("PufferLib", k * n, step, vecenv.close)


def _one_agent_env(seed: int) -> Any:
    from zooport.adapters import GymEnv

    return GymEnv(_costly(1, seed))


def async_vector_env(k: int, n: int, peers: int) -> Route:
    import gymnasium as gym

    m = min(k * n, peers)
    envs = gym.vector.AsyncVectorEnv(
        [functools.partial(_one_agent_env, i) for i in range(m)], shared_memory=True
    )
    envs.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = [rng.uniform(-1, 1, (m, 2)).astype(np.float32) for _ in range(ACTION_BATCHES)]
    return Route("AsyncVectorEnv", m, lambda i: envs.step(actions[i % ACTION_BATCHES]), envs.close)


def subproc_vec_env(k: int, n: int, peers: int) -> Route:
    try:
        from stable_baselines3.common.vec_env import SubprocVecEnv
    except ImportError as exc:
        raise RouteUnavailable(f"stable-baselines3 is not installed ({exc})") from None
    m = min(k * n, peers)
    venv = SubprocVecEnv([functools.partial(_one_agent_env, i) for i in range(m)])
    venv.reset()
    rng = np.random.default_rng(0)
    actions = [rng.uniform(-1, 1, (m, 2)).astype(np.float32) for _ in range(ACTION_BATCHES)]
    return Route("SubprocVecEnv", m, lambda i: venv.step(actions[i % ACTION_BATCHES]), venv.close)


def _pipe_worker(connection: Any, n: int, seed: int) -> None:
    """ML-Agents-style: one core per process, everything pickled over a pipe."""
    core = _costly(n, seed)
    core.reset(seed=seed)
    while True:
        command, data = connection.recv()
        if command == "close":
            core.close()
            connection.close()
            return
        if data is not None:
            core.set_actions(NAME, data)
        core.step()
        connection.send(core.get_steps(NAME))


def mlagents_style(k: int, n: int) -> Route:
    context = multiprocessing.get_context("spawn")
    pipes, processes = [], []
    for i in range(k):
        parent, child = context.Pipe()
        process = context.Process(target=_pipe_worker, args=(child, n, i), daemon=True)
        process.start()
        child.close()
        pipes.append(parent)
        processes.append(process)
    actions = _batches(n)

    def step(i: int) -> None:
        for pipe in pipes:
            pipe.send(("step", actions[i % ACTION_BATCHES]))
        for pipe in pipes:
            pipe.recv()

    def close() -> None:
        for pipe, process in zip(pipes, processes, strict=True):
            pipe.send(("close", None))
            process.join(10)
            pipe.close()

    step(0)  # the workers have started
    return Route("ML-Agents-style", k * n, step, close)


def slow_core_pool(k: int, n: int, mode: str) -> Route:
    # The last core costs 4x per agent: in sync mode every step waits for it.
    costs = [7.0] * (k - 1) + [28.0]
    factories = [
        functools.partial(CostlyCore, n_agents=n, seed=i, us_per_agent=cost)
        for i, cost in enumerate(costs)
    ]
    options: dict[str, Any] = {"mode": mode, "min_ready": 1} if mode == "async" else {}
    return _raw_route(f"{mode}, one core 4x slower", CorePool(factories, **options), k * n,
                      count_decisions=True)  # fmt: skip


def trivial_overhead(local_core: bool | None) -> Route:
    n = 64
    if local_core is None:
        core = TrivialCore(n_agents=n, seed=0, terminate=False)
        return _raw_route("Trivial", core, n)
    factories = [functools.partial(TrivialCore, n_agents=n, seed=0, terminate=False)]
    name = "pool K=1 (in this process)" if local_core else "pool K=1 (in a worker)"
    return _raw_route(name, CorePool(factories, local_core=local_core), n)
