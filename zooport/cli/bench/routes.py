"""Every route the benchmarks compare, in one table (:data:`ROUTES`): a builder
``(case, n, seed) -> Route`` steps ``case.workers`` x ``n`` agents with pre-sampled actions,
so sampling is never timed (dict routes get ready-made dicts: building them is the policy's
cost). A multi-agent episode that ends is reset inside the timed step, as vector routes
autoreset. The peers use plain ``GymEnv`` objects, their cheapest form, so ratios are
conservative. Worker processes (spawn) import what they run from here."""

from __future__ import annotations

import functools
import importlib
import multiprocessing
from collections.abc import Callable
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import Any

import numpy as np

from zooport.adapters.spaces import ActionLayout
from zooport.cli.bench.harness import Route, RouteUnavailable
from zooport.cli.bench.trivial_core import CostlyCore, TrivialCore
from zooport.envs.base_env import ActionTuple

__all__ = [
    "ACTION_BATCHES",
    "MULTI_AGENT_ROUTES",
    "ROUTES",
    "ROUTE_NAMES",
    "VECTOR_ROUTES",
    "EnvCase",
    "costly",
    "route_builders",
    "trivial",
]

#: Pre-sampled action batches per route (cycled through).
ACTION_BATCHES = 32

#: The routes of the vector table: a behaviour's agents as vector slots, and the peers.
VECTOR_ROUTES = ("raw", "BehaviorVectorEnv", "SB3VecEnv", "SyncVectorEnv", "DummyVecEnv")

#: The routes of the multi-agent table: PettingZoo's two APIs, SuperSuit, MultiAgentTask.
MULTI_AGENT_ROUTES = (
    "raw",
    "PettingZoo",
    "SuperSuit",
    "AEC",
    "parallel_to_aec",
    "MultiAgentTask",
    "PettingZoo floor",
)

#: Every route of ``zooport bench``, in report order.
ROUTE_NAMES = tuple(dict.fromkeys(VECTOR_ROUTES + MULTI_AGENT_ROUTES))


@dataclass(frozen=True)
class EnvCase:
    """An environment to benchmark: ``make(n_agents, seed)`` returns a fresh core whose
    ``behavior`` is stepped (picklable for the routes that use processes). ``every_agent_acts``:
    no episode ever ends, so the multi-agent routes count all N agents, as raw does. The pool
    routes run ``workers`` cores; the process peers at most ``peers`` one-agent envs."""

    name: str
    behavior: str
    make: Callable[[int, int], Any]
    routes: tuple[str, ...] = ROUTE_NAMES
    every_agent_acts: bool = False
    workers: int = 1
    peers: int | None = None


def trivial(n: int, seed: int, **options: Any) -> TrivialCore:
    """A TrivialCore of ``n`` agents: an ``EnvCase.make`` that pickles."""
    return TrivialCore(n_agents=n, seed=seed, **options)


def costly(n: int, seed: int, **options: Any) -> CostlyCore:
    """A CostlyCore of ``n`` agents: an ``EnvCase.make`` that pickles."""
    return CostlyCore(n_agents=n, seed=seed, **options)


def _need(module: str, package: str, hint: str = "") -> Any:
    """``module``, or :class:`RouteUnavailable` saying ``package`` is not installed."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise RouteUnavailable(f"{package} is not installed ({exc}){hint}") from None


def _factories(case: EnvCase, n: int, seed: int, **options: Any) -> list[Any]:
    """The case's K cores' factories, core ``i`` seeded ``seed + i``."""
    return [functools.partial(case.make, n, seed + i, **options) for i in range(case.workers)]


def _one_agent_gym(case: EnvCase, seed: int) -> Any:
    from zooport.adapters.gym_env import GymEnv

    return GymEnv(case.make(1, seed), case.behavior)


def _actions(case: EnvCase, n: int, seed: int, *, raw: bool = False) -> list[Any]:
    """Pre-sampled batches of ``n`` actions: ``ActionTuple`` s (``raw``) or consumers' arrays."""
    core = case.make(1, seed)
    spec = core.behavior_specs[case.behavior].action_spec
    core.close()
    rng = np.random.default_rng(seed)
    if raw:
        return [spec.random_action(n, rng) for _ in range(ACTION_BATCHES)]
    layout = ActionLayout(spec)
    return [layout.sample(rng, n) for _ in range(ACTION_BATCHES)]


def _raw_api(name: str, env: Any, case: EnvCase, n: int, seed: int, counts: bool = False) -> Route:
    """A BaseEnv (a core or a pool) of ``n`` agents stepped through its raw API."""
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

    return Route(name, n, step, env.close, counts_agents=counts)


def _raw(case: EnvCase, n: int, seed: int) -> Route:
    return _raw_api("raw", case.make(n, seed), case, n, seed)


def _vector_route(name: str, envs: Any, case: EnvCase, n: int, seed: int) -> Route:
    """A vector env of ``n`` slots, already reset, stepped with pre-sampled batches."""
    actions = _actions(case, n, seed)
    return Route(name, n, lambda i: envs.step(actions[i % ACTION_BATCHES]), envs.close)


def _behavior_vector_env(case: EnvCase, n: int, seed: int, pool: bool = False) -> Route:
    """BehaviorVectorEnv over one core, or (``pool``) over a CorePool of the case's K cores."""
    from zooport.adapters.vector_env import BehaviorVectorEnv
    from zooport.envs.core_pool import CorePool

    core = CorePool(_factories(case, n, seed)) if pool else case.make(n, seed)
    envs = BehaviorVectorEnv(core, case.behavior)
    envs.reset(seed=seed)
    name = "vec(CorePool)" if pool else "BehaviorVectorEnv"
    return _vector_route(name, envs, case, case.workers * n if pool else n, seed)


def _sb3_vec_env(case: EnvCase, n: int, seed: int) -> Route:
    vec_env = _need("zooport.adapters.sb3_vec_env", "stable-baselines3")
    venv = vec_env.SB3VecEnv(case.make(n, seed), case.behavior)
    venv.seed(seed)
    venv.reset()
    return _vector_route("SB3VecEnv", venv, case, n, seed)


def _peer(kind: str, case: EnvCase, n: int, seed: int) -> Route:
    """A peer's vector env over one-agent ``GymEnv`` s: as many as the agents, or the case's
    ``peers`` for the process vectorisers (with fewer CPUs, more processes cannot help)."""
    m = case.workers * n if case.peers is None else min(case.workers * n, case.peers)
    factories = [functools.partial(_one_agent_gym, case, seed + i) for i in range(m)]
    if kind in ("DummyVecEnv", "SubprocVecEnv"):
        vec_env = _need("stable_baselines3.common.vec_env", "stable-baselines3")
        envs: Any = getattr(vec_env, kind)(factories)
        envs.seed(seed)
        envs.reset()
    else:
        import gymnasium as gym

        from zooport.adapters.vector_env import SAME_STEP

        if kind == "SyncVectorEnv":
            kwargs = {} if isinstance(SAME_STEP, str) else {"autoreset_mode": SAME_STEP}
            envs = gym.vector.SyncVectorEnv(factories, **kwargs)
        else:
            envs = gym.vector.AsyncVectorEnv(factories, shared_memory=True)
        envs.reset(seed=seed)
    return _vector_route(kind, envs, case, m, seed)


def _dict_route(name: str, env: Any, case: EnvCase, seed: int, step_all: Any) -> Route:
    """``step_all`` takes a dict of the live agents' actions; an episode ends when ``env``
    has no agent left. Finished agents leave until every agent is done: counts those that
    acted."""
    agents, actions = _reset_with_actions(env, case, seed)

    def step(i: int) -> int:
        if not env.agents:
            env.reset()
        live, chosen = env.agents, actions[i % ACTION_BATCHES]
        step_all(chosen if len(live) == len(agents) else {agent: chosen[agent] for agent in live})
        return len(live)

    return Route(name, len(agents), step, env.close, counts_agents=True)


def _pettingzoo(case: EnvCase, n: int, seed: int) -> Route:
    from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv

    parallel_env = PettingZooParallelEnv(case.make(n, seed))
    return _dict_route("PettingZoo", parallel_env, case, seed, parallel_env.step)


def _multi_agent_task(case: EnvCase, n: int, seed: int) -> Route:
    from zooport.adapters.multi_agent_task import MultiAgentTask

    # "all", as the PettingZoo routes: the episode lasts until every agent has finished.
    task = MultiAgentTask(case.make(n, seed), termination_mode="all")
    return _dict_route("MultiAgentTask", task, case, seed, task.step_all)


def _supersuit(case: EnvCase, n: int, seed: int) -> Route:
    from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv

    ss = _need("supersuit", "supersuit")
    # SuperSuit needs a fixed agent set: the episode of every agent ends when one agent's
    # does (termination_mode "any"), then SuperSuit resets the core. (black_death_v3 does not
    # help: it ends its episode only when every agent is terminated AND truncated.)
    parallel_env = PettingZooParallelEnv(case.make(n, seed), termination_mode="any")
    venv = ss.pettingzoo_env_to_vec_env_v1(parallel_env)
    venv = ss.concat_vec_envs_v1(venv, 1, num_cpus=0, base_class="gymnasium")
    venv.reset(seed=seed)
    return _vector_route("SuperSuit", venv, case, n, seed)


def _reset_with_actions(
    env: Any, case: EnvCase, seed: int
) -> tuple[list[str], list[dict[str, Any]]]:
    """Resets a PettingZoo ``env``; returns its agents and pre-sampled action dicts."""
    env.reset(seed=seed)
    agents = list(env.possible_agents)
    batches = _actions(case, len(agents), seed)
    return agents, [dict(zip(agents, batch, strict=True)) for batch in batches]


def _aec_route(name: str, env: Any, case: EnvCase, seed: int) -> Route:
    """One timed step = one cycle of ``len(env.agents)`` turns, each ``last()`` then
    ``step()`` (PettingZoo's ``agent_iter`` loop without the iterator); counts turns."""
    agents, actions = _reset_with_actions(env, case, seed)

    def step(i: int) -> int:
        if not env.agents:
            env.reset()
        chosen = actions[i % ACTION_BATCHES]
        turns = len(env.agents)
        for _ in range(turns):
            _, _, terminated, truncated, _ = env.last()
            env.step(None if terminated or truncated else chosen[env.agent_selection])
        return turns

    return Route(name, len(agents), step, env.close, counts_agents=True)


def _aec(case: EnvCase, n: int, seed: int, converted: bool = False) -> Route:
    """PettingZooAECEnv, or (``converted``) PettingZoo's parallel_to_aec of the Parallel one."""
    from pettingzoo.utils.conversions import parallel_to_aec

    from zooport.adapters.pettingzoo_aec import PettingZooAECEnv
    from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv

    if converted:
        env = parallel_to_aec(PettingZooParallelEnv(case.make(n, seed)))
        return _aec_route("parallel_to_aec", env, case, seed)
    return _aec_route("AEC", PettingZooAECEnv(case.make(n, seed)), case, seed)


def _pettingzoo_floor(case: EnvCase, n: int, seed: int) -> Route:
    """The Python work PettingZoo's Parallel API asks of ANY adapter per step: N actions
    looked up and stacked, five dicts of N entries, fresh observation rows and info dicts."""
    core = case.make(n, seed)
    core.reset(seed=seed)
    decision, _ = core.get_steps(case.behavior)
    observation = np.asarray(decision.obs[0], np.float32)
    reward = np.asarray(decision.reward, np.float32)
    core.close()
    agents = [f"agent_{i}" for i in decision.agent_id.tolist()]
    batches = _actions(case, len(agents), seed)
    actions = [dict(zip(agents, batch, strict=True)) for batch in batches]
    lookup = itemgetter(*agents)
    all_false = dict.fromkeys(agents, False)
    info = {"decided": True, "group_id": 0, "group_reward": 0.0}

    def step(i: int) -> tuple[Any, ...]:
        chosen = actions[i % ACTION_BATCHES]
        # The cheapest complete key check: the right count, and every lookup succeeds.
        if len(chosen) != len(agents):
            raise AssertionError("unreachable: every agent has an action")
        batch = np.asarray(lookup(chosen))
        return (
            batch,
            dict(zip(agents, observation.copy(), strict=True)),
            dict(zip(agents, reward.tolist(), strict=True)),
            all_false.copy(),
            all_false.copy(),
            dict(zip(agents, map(dict.copy, repeat(info, len(agents))), strict=True)),
        )

    return Route("PettingZoo floor", len(agents), step)


def _in_process(case: EnvCase, n: int, seed: int) -> Route:
    """The case's K cores stepped one after another in this process."""
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

    def close() -> None:
        for core in cores:
            core.close()

    return Route("1proc", case.workers * n, step, close)


def _pool(case: EnvCase, n: int, seed: int, slow_last: bool = False, **options: Any) -> Route:
    """A CorePool of the case's K cores stepped through its raw API; with a ``mode``, counting
    the agents that decided."""
    from zooport.envs.core_pool import CorePool

    costs: list[dict[str, float]] = [{}] * case.workers
    if slow_last:  # the last core costs 4x per agent: in sync mode every step waits for it
        costs = [{"us_per_agent": 7.0}] * (case.workers - 1) + [{"us_per_agent": 28.0}]
    factories = [functools.partial(case.make, n, seed + i, **c) for i, c in enumerate(costs)]
    pool = CorePool(factories, **options)
    return _raw_api("CorePool", pool, case, case.workers * n, seed, counts="mode" in options)


def _pipe_worker(connection: Any, make: Callable[[int, int], Any], n: int, seed: int) -> None:
    """ML-Agents-style: one core per process, everything pickled over a pipe."""
    core = make(n, seed)
    core.reset(seed=seed)
    name = next(iter(core.behavior_specs))
    while True:
        command, data = connection.recv()
        if command == "close":
            core.close()
            connection.close()
            return
        if data is not None:
            core.set_actions(name, data)
        core.step()
        connection.send(core.get_steps(name))


def _mlagents_style(case: EnvCase, n: int, seed: int) -> Route:
    context = multiprocessing.get_context("spawn")
    pipes, processes = [], []
    for i in range(case.workers):
        parent, child = context.Pipe()
        process = context.Process(
            target=_pipe_worker, args=(child, case.make, n, seed + i), daemon=True
        )
        process.start()
        child.close()
        pipes.append(parent)
        processes.append(process)
    actions = _actions(case, n, seed, raw=True)

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
    return Route("ML-Agents-style", case.workers * n, step, close)


def _puffer(case: EnvCase, n: int, seed: int) -> Route:
    """PufferLib's Multiprocessing over K native PufferEnvs of the case's (endless) core."""
    hint = "; make bench-pool installs pufferlib-core 3.0.23 with --no-deps, then psutil, rich "
    puffer = _need("zooport.cli.bench.pool_puffer", "pufferlib", hint + "and rich-argparse")
    vecenv = puffer.puffer_vector(case.workers, n, case.make)
    vecenv.async_reset(seed)
    vecenv.recv()
    actions = _actions(case, case.workers * n, seed)

    def step(i: int) -> None:
        vecenv.send(actions[i % ACTION_BATCHES])
        vecenv.recv()

    return Route("PufferLib", case.workers * n, step, vecenv.close)


#: Every route by name: what it steps is said in ``benchmarks/README.md``.
ROUTES: dict[str, Callable[[EnvCase, int, int], Route]] = {
    "raw": _raw,  # the core's own get_steps/set_actions/step: the ceiling
    "BehaviorVectorEnv": _behavior_vector_env,  # zooport's vector adapters over ONE core
    "SB3VecEnv": _sb3_vec_env,
    # Gymnasium's, then SB3's, over N one-agent GymEnvs
    "SyncVectorEnv": functools.partial(_peer, "SyncVectorEnv"),
    "DummyVecEnv": functools.partial(_peer, "DummyVecEnv"),
    "PettingZoo": _pettingzoo,  # PettingZooParallelEnv, a dict of actions per step
    "SuperSuit": _supersuit,  # SuperSuit's vector env over PettingZooParallelEnv
    "AEC": _aec,  # PettingZooAECEnv: one timed step is one cycle of turns
    "parallel_to_aec": functools.partial(_aec, converted=True),  # PettingZoo's conversion
    "MultiAgentTask": _multi_agent_task,  # step_all with a dict of actions per cycle
    "PettingZoo floor": _pettingzoo_floor,  # no core: only the dicts the Parallel API asks for
    # The CorePool benchmark's (``zooport bench --workers K``): K cores each.
    "1proc": _in_process,
    "CorePool": _pool,
    "CorePool (workers only)": functools.partial(_pool, local_core=False),
    "vec(CorePool)": functools.partial(_behavior_vector_env, pool=True),
    "AsyncVectorEnv": functools.partial(_peer, "AsyncVectorEnv"),
    "SubprocVecEnv": functools.partial(_peer, "SubprocVecEnv"),
    "ML-Agents-style": _mlagents_style,
    "PufferLib": _puffer,
    "sync, one core 4x slower": functools.partial(_pool, slow_last=True, mode="sync"),
    "async, one core 4x slower": functools.partial(
        _pool, slow_last=True, mode="async", min_ready=1
    ),
    "Trivial": _raw,
    "pool K=1 (in this process)": functools.partial(_pool, local_core=True),
    "pool K=1 (in a worker)": functools.partial(_pool, local_core=False),
}


def route_builders(
    case: EnvCase, n: int, seed: int = 0, names: tuple[str, ...] | None = None
) -> list[tuple[str, Callable[[], Route]]]:
    """``(name, builder)`` for each route in ``names`` (default: all) that runs on ``case``."""
    return [
        (name, functools.partial(ROUTES[name], case, n, seed))
        for name in names or case.routes
        if name in case.routes
    ]
