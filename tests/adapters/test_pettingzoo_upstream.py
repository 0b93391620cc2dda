"""PettingZoo's own checkers on every built-in multi-agent env and option set.

Each checker runs with warnings recorded; a warning fails the test unless it is allowed
below, and a warning is allowed only for an env whose spaces cause it (see ``_allowed``).
"""

from __future__ import annotations

import functools
import importlib.util
import sys
import types

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.error import DependencyNotInstalled
from pettingzoo.test import (
    api_test,
    max_cycles_test,
    parallel_api_test,
    render_test,
    seed_test,
    state_test,
)

from zooport.adapters.pettingzoo_envs import (
    ENV_MODULES,
    ball_balance_v0,
    collector_v0,
    grid_world_v0,
    register_pettingzoo_envs,
    soccer_v0,
    tag_v0,
)

from tests.support.checkers import run_allowing
from tests.support.fake_pygame import FakePygame
from tests.support.paths import EXAMPLES
from tests.support.pettingzoo_versions import DICT_OBS_API_TEST, HAS_REGISTRY, parallel_seed_test

CONFIGS = {
    "ball_balance": (ball_balance_v0, {"n_agents": 6}),
    "ball_balance-any": (ball_balance_v0, {"termination_mode": "any"}),
    "grid_world-masks": (grid_world_v0, {}),
    "grid_world-mask_in_info": (grid_world_v0, {"mask_in_info": True, "n_walls": 4}),
    "grid_world-uint8-majority": (
        grid_world_v0, {"uint8_visual": True, "termination_mode": "majority"}
    ),
    "tag": (tag_v0, {}),
    "tag-spawn-no_restart": (tag_v0, {"spawn_every": 2, "restart_tagged": False}),
    "tag-fraction-periods": (
        tag_v0, {"termination_mode": 0.5, "runner_decision_period": 3, "tag_radius": 0.3}
    ),
    "tag-any": (tag_v0, {"termination_mode": "any", "tag_radius": 0.3}),
    "collector": (collector_v0, {}),
    "collector-any": (collector_v0, {"termination_mode": "any", "n_agents": 2}),
    # One behaviour name in two teams (SoccerTwos): default names, then ML-Agents' names.
    "soccer": (soccer_v0, {}),
    "soccer-3v3-mlagents_names": (soccer_v0, {"team_size": 3, "agent_name": "mlagents"}),
    "soccer-1v1-group_rewards_only-flat": (
        soccer_v0,
        {"team_size": 1, "individual_rewards": False, "max_steps": 40, "flatten_branched": True},
    ),
}  # fmt: skip

INFINITE_BOUNDS = "vector observations have no bounds in ML-Agents' spec: Box(-inf, inf)"
DICT_OBS = "several observations, or an action mask, make a Dict observation by design"
DICT_ACTIONS = "hybrid actions are a Dict(continuous, discrete) by design"
BRANCHES = "ML-Agents' discrete branches are a MultiDiscrete by design (flatten_branched=False)"
NAMES = "ML-Agents' own scheme '<behaviour>?agent_id=<id>', asked for by agent_name='mlagents'"
ZERO_STATE = (
    "state_test calls state() after every step, also once the episode has ended; agents that "
    "are not live are zero-filled, so with no agent left the state is all zeros"
)


def _allowed(env) -> list[tuple[str, str]]:
    """(message regex, reason) pairs for the warnings this env's spaces explain."""
    allowed = []
    obs_spaces = [env.observation_space(a) for a in env.possible_agents]
    boxes = [s for s in obs_spaces if isinstance(s, spaces.Box)]
    if any((s.low == -float("inf")).any() for s in boxes):
        allowed.append(
            (r"Agent's (minimum|maximum) observation space value is -?infinity", INFINITE_BOUNDS)
        )
    state = env.state_space
    if (state.low == -float("inf")).any():
        allowed.append(
            (r"Environment's (minimum|maximum) state space value is -?infinity", INFINITE_BOUNDS)
        )
    if not callable(getattr(env.core, "global_state", None)):
        allowed.append((r"State numpy array is all zeros", ZERO_STATE))
    if any(isinstance(s, spaces.Dict) for s in obs_spaces):
        allowed.append((r"Observation is not a NumPy array", DICT_OBS))
        allowed.append((r"Observation space for each agent probably should be", DICT_OBS))
    if any(isinstance(env.action_space(a), spaces.Dict) for a in env.possible_agents):
        allowed.append((r"Action space for each agent probably should be", DICT_ACTIONS))
    if any(isinstance(env.action_space(a), spaces.MultiDiscrete) for a in env.possible_agents):
        allowed.append((r"Action space for each agent probably should be", BRANCHES))
    if env._driver.names.scheme == "mlagents":
        allowed.append((r"We recommend agents to be named in the format", NAMES))
    return allowed


def _run(check, env_for_allowlist, *args, **kw):
    """``check(*args, **kw)``, allowing the warnings the env's spaces explain (at the start
    of the message)."""
    allowed = [f"^(?:{pattern})" for pattern, _ in _allowed(env_for_allowlist)]
    run_allowing(allowed, check, *args, **kw)


#: The checkers sample actions from the agents' spaces; seeding them makes every run take the
#: same trajectories. Seed 9 drives tag-spawn-no_restart to spawn a runner in the last cycle,
#: which the Parallel adapter once reported as truncated without it ever joining ``agents``.
ACTION_SEEDS = (0, 1, 9)


def _seed_spaces(env, seed: int):
    """Seeds every behaviour's spaces (one object shared by its agents); returns ``env``."""
    for observation_space, action_space in env.behavior_spaces().values():
        observation_space.seed(seed)
        action_space.seed(seed)
    return env


def _fns(config: str, seed: int = ACTION_SEEDS[0]):
    """The config's AEC and Parallel factories: core seed 3, spaces seeded with ``seed``."""
    module, kwargs = CONFIGS[config]

    def seeded(factory):
        def make(**kw):
            return _seed_spaces(factory(**{"seed": 3, **kwargs, **kw}), seed)

        return make

    return seeded(module.env), seeded(module.parallel_env)


@pytest.mark.parametrize("config", CONFIGS)
def test_api_test(config):
    env, _ = _fns(config)
    e = env()
    if DICT_OBS_API_TEST and isinstance(e.observation_space(e.possible_agents[0]), spaces.Dict):
        pytest.skip(DICT_OBS_API_TEST)
    _run(api_test, e, e, num_cycles=60)


@pytest.mark.parametrize("seed", ACTION_SEEDS)
@pytest.mark.parametrize("config", CONFIGS)
def test_parallel_api_test(config, seed):
    _, parallel = _fns(config, seed)
    e = parallel()
    _run(parallel_api_test, e, e, num_cycles=60)


@pytest.mark.parametrize("config", CONFIGS)
def test_seed_tests(config):
    env, parallel = _fns(config)
    _run(seed_test, env(), env, num_cycles=30)
    _run(parallel_seed_test, parallel(), parallel, num_cycles=30)


@pytest.mark.parametrize("config", CONFIGS)
def test_state_test(config):
    env, parallel = _fns(config)
    e = env()
    _run(state_test, e, e, parallel())


@pytest.mark.parametrize("config", CONFIGS)
def test_max_cycles_test(config):
    env, parallel = _fns(config)
    if "spawn" in config:
        # max_cycles_test sizes its counts by possible_agents at reset and indexes them with
        # every agent it meets, so an agent spawned within its 4 cycles is an IndexError.
        env = functools.partial(env, spawn_every=5)
        parallel = functools.partial(parallel, spawn_every=5)
    _run(max_cycles_test, env(), types.SimpleNamespace(env=env, parallel_env=parallel))


@pytest.mark.parametrize("config", CONFIGS)
def test_render_test(config, monkeypatch):
    env, _ = _fns(config)
    if importlib.util.find_spec("pygame") is None:
        monkeypatch.setitem(sys.modules, "pygame", FakePygame())
    assert env().metadata["render_modes"] == ["rgb_array", "human"]
    _run(render_test, env(), env)


@pytest.mark.skipif(not HAS_REGISTRY, reason="PettingZoo has a registry from 1.27.0 on")
def test_registry_entries_make_both_kinds():
    import pettingzoo

    ids = register_pettingzoo_envs()
    assert ids == [f"zooport/{m.replace('_v0', '-v0')}" for m in ENV_MODULES]
    assert register_pettingzoo_envs() == ids  # idempotent, no "Overriding" warning
    aec = pettingzoo.make("aec", "zooport/ball_balance-v0", n_agents=2, max_cycles=7)
    assert (
        isinstance(aec, pettingzoo.AECEnv) and aec.max_cycles == 7 and str(aec) == "ball_balance_v0"
    )
    parallel = pettingzoo.make("parallel", "zooport/tag-v0", seed=0)
    assert isinstance(parallel, pettingzoo.ParallelEnv)
    assert parallel.core.seedable and parallel.possible_agents[0] == "runner_0"


def test_entry_points_split_core_and_adapter_arguments():
    env = tag_v0.raw_env(n_runners=1, n_taggers=1, termination_mode="any", render_mode="rgb_array")
    assert env.possible_agents == ["runner_0", "tagger_1"]
    assert env.termination_mode == "any" and env.render_mode == "rgb_array"
    with pytest.raises(TypeError, match="no_such_option"):
        tag_v0.parallel_env(no_such_option=1)


def test_the_parallel_loop_example_runs_short(capsys):
    import runpy

    path = EXAMPLES / "pettingzoo_parallel_loop.py"
    example = runpy.run_path(str(path), run_name="example")
    assert example["main"](["--short", "--masks", "--mode", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "tag_v0: behaviours ['Runner?team=0', 'Tagger?team=1']" in out
    assert "episode 0: " in out and "steps/s" in out


@pytest.mark.parametrize("module", [tag_v0, soccer_v0])
def test_human_mode_shows_each_core_step_in_a_window(module, monkeypatch):
    pygame = FakePygame()
    monkeypatch.setitem(sys.modules, "pygame", pygame)
    for make in (module.parallel_env, module.env):
        pygame.shown.clear()
        env = make(seed=0, render_mode="human", max_cycles=3)
        env.reset(seed=0)
        assert env.render() is None and len(pygame.shown) == 1
        np.testing.assert_array_equal(pygame.shown[-1], env.core.render().transpose(1, 0, 2))
        if make is module.parallel_env:
            env.step({a: env.action_space(a).sample() for a in env.agents})
        else:
            for _ in env.agents[:]:
                env.step(env.action_space(env.agent_selection).sample())
        assert len(pygame.shown) == 2
        env.close()
        assert pygame.shown[-1] == "closed"


def test_human_mode_without_pygame_fails_at_the_first_frame(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygame", None)  # import pygame raises ImportError
    env = tag_v0.parallel_env(seed=0, render_mode="human")
    with pytest.raises(DependencyNotInstalled, match='pip install "pygame'):
        env.reset(seed=0)
