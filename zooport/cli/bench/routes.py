"""The routes a benchmark compares, each built for one (env, N) case (see ``_BUILDERS``).

Every route cycles through :data:`ACTION_BATCHES` pre-sampled action batches, so sampling is
never timed (dict routes get ready-made dicts: building them is the policy's cost). The peers
use plain ``GymEnv`` objects, the cheapest form of the peer route, so ratios are conservative.
A multi-agent episode that ends is reset inside the timed step, as vector routes autoreset.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import Any

import numpy as np

from zooport.adapters.spaces import ActionLayout
from zooport.cli.bench.harness import Route, RouteUnavailable
from zooport.envs.base_env import ActionTuple

__all__ = [
    "ACTION_BATCHES",
    "MULTI_AGENT_ROUTES",
    "ROUTE_NAMES",
    "VECTOR_ROUTES",
    "EnvCase",
    "route_builders",
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

#: Every route, in report order.
ROUTE_NAMES = tuple(dict.fromkeys(VECTOR_ROUTES + MULTI_AGENT_ROUTES))


@dataclass(frozen=True)
class EnvCase:
    """An environment to benchmark: ``make(n_agents, seed)`` returns a fresh core whose
    ``behavior`` is stepped. ``every_agent_acts``: no episode ever ends, so the multi-agent
    routes count all N agents, as raw does (their per-agent-step costs are computed there)."""

    name: str
    behavior: str
    make: Callable[[int, int], Any]
    routes: tuple[str, ...] = ROUTE_NAMES
    every_agent_acts: bool = False


def _one_agent_gym(case: EnvCase, seed: int) -> Any:
    """``GymEnv`` over a one-agent core of ``case`` (a peer vector env's factory)."""
    from zooport.adapters.gym_env import GymEnv

    return GymEnv(case.make(1, seed), case.behavior)


def _for_live(actions: dict[str, Any], live: list[str], agents: list[str]) -> dict[str, Any]:
    """``actions`` (one per agent at reset) for the agents still in the episode."""
    return actions if len(live) == len(agents) else {agent: actions[agent] for agent in live}


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


def _vector_route(name: str, envs: Any, case: EnvCase, n: int, seed: int) -> Route:
    """A vector env of ``n`` slots, already reset, stepped with pre-sampled batches."""
    actions = _consumer_actions(case, n, seed)
    return Route(name, n, lambda i: envs.step(actions[i % ACTION_BATCHES]), envs.close)


def _behavior_vector_env(case: EnvCase, n: int, seed: int) -> Route:
    from zooport.adapters.vector_env import BehaviorVectorEnv

    envs = BehaviorVectorEnv(case.make(n, seed), case.behavior)
    envs.reset(seed=seed)
    return _vector_route("BehaviorVectorEnv", envs, case, n, seed)


def _sb3_vec_env(case: EnvCase, n: int, seed: int) -> Route:
    try:
        from zooport.adapters.sb3_vec_env import SB3VecEnv
    except ImportError as exc:
        raise RouteUnavailable(f"stable-baselines3 is not installed ({exc})") from None

    venv = SB3VecEnv(case.make(n, seed), case.behavior)
    venv.seed(seed)
    venv.reset()
    return _vector_route("SB3VecEnv", venv, case, n, seed)


def _sync_vector_env(case: EnvCase, n: int, seed: int) -> Route:
    import gymnasium as gym

    from zooport.adapters.vector_env import SAME_STEP

    factories = [functools.partial(_one_agent_gym, case, seed + i) for i in range(n)]
    kwargs = {} if isinstance(SAME_STEP, str) else {"autoreset_mode": SAME_STEP}
    envs = gym.vector.SyncVectorEnv(factories, **kwargs)
    envs.reset(seed=seed)
    return _vector_route("SyncVectorEnv", envs, case, n, seed)


def _dummy_vec_env(case: EnvCase, n: int, seed: int) -> Route:
    try:
        from stable_baselines3.common.vec_env import DummyVecEnv
    except ImportError as exc:
        raise RouteUnavailable(f"stable-baselines3 is not installed ({exc})") from None
    venv = DummyVecEnv([functools.partial(_one_agent_gym, case, seed + i) for i in range(n)])
    venv.seed(seed)
    venv.reset()
    return _vector_route("DummyVecEnv", venv, case, n, seed)


def _pettingzoo(case: EnvCase, n: int, seed: int) -> Route:
    from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv

    parallel_env = PettingZooParallelEnv(case.make(n, seed))
    agents, actions = _reset_with_actions(parallel_env, case, seed)

    def step(i: int) -> int:
        if not parallel_env.agents:
            parallel_env.reset()
        live = parallel_env.agents
        parallel_env.step(_for_live(actions[i % ACTION_BATCHES], live, agents))
        return len(live)

    # Finished agents leave until every agent is done: count the agents that really acted.
    return Route("PettingZoo", n, step, parallel_env.close, counts_agents=True)


def _supersuit(case: EnvCase, n: int, seed: int) -> Route:
    from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv

    try:
        import supersuit as ss
    except ImportError as exc:
        raise RouteUnavailable(f"supersuit is not installed ({exc})") from None
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
    batches = _consumer_actions(case, len(agents), seed)
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


def _aec(case: EnvCase, n: int, seed: int) -> Route:
    from zooport.adapters.pettingzoo_aec import PettingZooAECEnv

    return _aec_route("AEC", PettingZooAECEnv(case.make(n, seed)), case, seed)


def _parallel_to_aec(case: EnvCase, n: int, seed: int) -> Route:
    from pettingzoo.utils.conversions import parallel_to_aec

    from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv

    parallel_env = PettingZooParallelEnv(case.make(n, seed))
    return _aec_route("parallel_to_aec", parallel_to_aec(parallel_env), case, seed)


def _multi_agent_task(case: EnvCase, n: int, seed: int) -> Route:
    from zooport.adapters.multi_agent_task import MultiAgentTask

    # "all", as the PettingZoo routes: the episode lasts until every agent has finished.
    task = MultiAgentTask(case.make(n, seed), termination_mode="all")
    task.reset(seed=seed)
    agents = list(task.possible_agents)
    batches = _consumer_actions(case, len(agents), seed)
    actions = [dict(zip(agents, batch, strict=True)) for batch in batches]

    def step(i: int) -> int:
        if task.game_over:
            task.reset()
        live = task.agents
        task.step_all(_for_live(actions[i % ACTION_BATCHES], live, agents))
        return len(live)

    return Route("MultiAgentTask", len(agents), step, task.close, counts_agents=True)


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
    batches = _consumer_actions(case, len(agents), seed)
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


_BUILDERS: dict[str, Callable[[EnvCase, int, int], Route]] = {
    "raw": _raw,  # the core's own get_steps/set_actions/step: the ceiling
    "BehaviorVectorEnv": _behavior_vector_env,  # zooport's vector adapters over ONE core
    "SB3VecEnv": _sb3_vec_env,
    "SyncVectorEnv": _sync_vector_env,  # Gymnasium's, over N one-agent GymEnvs (N cores)
    "DummyVecEnv": _dummy_vec_env,  # SB3's, over the same N GymEnvs
    "PettingZoo": _pettingzoo,  # PettingZooParallelEnv, a dict of actions per step
    "SuperSuit": _supersuit,  # SuperSuit's vector env over PettingZooParallelEnv
    "AEC": _aec,  # PettingZooAECEnv: one timed step is one cycle of turns
    "parallel_to_aec": _parallel_to_aec,  # PettingZoo's conversion of the Parallel adapter
    "MultiAgentTask": _multi_agent_task,  # step_all with a dict of actions per cycle
    "PettingZoo floor": _pettingzoo_floor,  # no core: only the dicts the Parallel API asks for
}


def route_builders(
    case: EnvCase, n: int, seed: int = 0, names: tuple[str, ...] = ROUTE_NAMES
) -> list[tuple[str, Callable[[], Route]]]:
    """``(name, builder)`` for each route in ``names`` that runs on ``case``."""
    return [
        (name, functools.partial(_BUILDERS[name], case, n, seed))
        for name in names
        if name in case.routes
    ]
