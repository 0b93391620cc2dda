"""The upstream checkers on pooled built-ins: two cores in a CorePool behind each adapter.

PettingZoo's ``api_test``, ``parallel_api_test``, ``seed_test``, ``parallel_seed_test``,
``max_cycles_test``, ``render_test`` and ``state_test`` on the AEC and Parallel adapters,
Gymnasium's and SB3's ``check_env`` on ``GymEnv`` over a one-core pool (the core in a
worker), with warnings treated as failures unless the env's spaces explain them (the same
allow-list as ``test_pettingzoo_upstream.py``; a pool of Tags forwards their global state).
"""

from __future__ import annotations

import functools
import sys
import types
import warnings

import gymnasium as gym
import pytest
from gymnasium import spaces
from pettingzoo import test as upstream

from zooport.adapters import GymEnv, PettingZooAECEnv, PettingZooParallelEnv
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.builtin.basic import Basic
from zooport.envs.builtin.grid_world import GridWorld
from zooport.envs.builtin.tag import Tag
from zooport.envs.core_pool import CorePool

from tests.support.checkers import run_allowing
from tests.support.fake_pygame import FakePygame
from tests.support.pettingzoo_versions import DICT_OBS_API_TEST, parallel_seed_test
from tests.support.pool_cores import fast

CONFIGS = {
    "ball_balance": (BallBalance, {"n_agents": 3}, {}),
    "grid_world-masks": (GridWorld, {"n_agents": 2, "n_walls": 2}, {}),
    "tag-spawn": (Tag, {"spawn_every": 5}, {"termination_mode": "majority"}),
}

ALLOWED = [
    (r"Agent's (minimum|maximum) observation space value is -?infinity", "no bounds in specs"),
    (r"Environment's (minimum|maximum) state space value is -?infinity", "no bounds in specs"),
    (r"Observation is not a NumPy array", "a mask makes a Dict observation"),
    (r"Observation space for each agent probably should be", "a mask makes a Dict observation"),
]


def _factories(config: str, pools: list[CorePool]):
    """The config's AEC and Parallel env functions over a fresh two-core pool each."""
    cls, core_kwargs, adapter_defaults = CONFIGS[config]

    def make(adapter, **kwargs):
        core_options = {k: v for k, v in kwargs.items() if k in ("spawn_every",)}
        adapter_options = {k: v for k, v in kwargs.items() if k not in core_options}
        # Seeded cores (3 and 4, like the upstream tests' seed 3): a checker that resets
        # without a seed then plays the same episodes on every run.
        options = {**core_kwargs, **core_options}
        pool = CorePool([functools.partial(cls, seed=3 + i, **options) for i in range(2)],
                        **fast())  # fmt: skip
        pools.append(pool)
        env = adapter(pool, **{**adapter_defaults, **adapter_options})
        spaces_of = env.behavior_spaces().values()
        for observation_space, action_space in spaces_of:
            observation_space.seed(0)
            action_space.seed(0)
        return env

    return functools.partial(make, PettingZooAECEnv), functools.partial(make, PettingZooParallelEnv)


def _run(check, *args, **kwargs):
    run_allowing([f"^(?:{pattern})" for pattern, _ in ALLOWED], check, *args, **kwargs)


@pytest.mark.parametrize("config", CONFIGS)
def test_api_tests(config, pools):
    env, parallel = _factories(config, pools)
    aec = env()
    if DICT_OBS_API_TEST and isinstance(aec.observation_space(aec.possible_agents[0]), spaces.Dict):
        pytest.skip(DICT_OBS_API_TEST)
    _run(upstream.api_test, aec, num_cycles=40)
    _run(upstream.parallel_api_test, parallel(), num_cycles=40)


@pytest.mark.parametrize("config", CONFIGS)
def test_seed_tests(config, pools):
    env, parallel = _factories(config, pools)
    _run(upstream.seed_test, env, num_cycles=20)
    _run(parallel_seed_test, parallel, num_cycles=20)


@pytest.mark.parametrize("config", CONFIGS)
def test_max_cycles_state_and_render_tests(config, pools, monkeypatch):
    env, parallel = _factories(config, pools)
    if config.startswith("tag"):
        # max_cycles_test indexes its counts by the agents at reset (see the upstream tests)
        env = functools.partial(env, spawn_every=0)
        parallel = functools.partial(parallel, spawn_every=0)
    _run(upstream.max_cycles_test, types.SimpleNamespace(env=env, parallel_env=parallel))
    _run(upstream.state_test, env(), parallel())
    monkeypatch.setitem(sys.modules, "pygame", FakePygame())  # render_test's "human" mode
    _run(upstream.render_test, env)


@pytest.mark.parametrize(
    ("core", "options"),
    [
        (BallBalance, {}),
        # SB3 checks images: uint8 and at least 36x36 pixels
        (functools.partial(GridWorld, pixels_per_cell=8), {"uint8_visual": True}),
        (Basic, {}),
    ],
    ids=["BallBalance", "GridWorld", "Basic"],
)
def test_gymnasium_and_sb3_check_env_on_a_pooled_core(core, options, pools):
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    pool = CorePool([functools.partial(core, n_agents=1)], local_core=False, **fast())
    pools.append(pool)
    env = GymEnv(pool, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", ".*infinity.*|.*unbounded.*|.*-inf.*")
        gym.utils.env_checker.check_env(env, skip_render_check=True)
        sb3_check_env(env, warn=True)
    assert isinstance(env.observation_space, spaces.Space)
