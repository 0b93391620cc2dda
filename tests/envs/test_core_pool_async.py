"""Nothing is lost through a CorePool, in sync and async mode, through every adapter.

``LedgerCore`` puts in each observation what the agent has earned since the reset, and pays
all of it with the agent's decisions and terminal steps. So through any consumer, at every
step, the sum of the rewards an agent was given must equal the first number of its latest
observation (the final one for an agent whose episode ended): a reward lost, duplicated or
given to the wrong agent breaks the equality. The cores have decision periods, random
episode ends, time limits and random step times, so in async mode different cores answer
each step; the agents of the others have no decision, and get theirs later.
"""

from __future__ import annotations

import functools
import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from zooport.adapters import (
    BehaviorVectorEnv,
    MultiAgentTask,
    PettingZooAECEnv,
    PettingZooParallelEnv,
    SB3VecEnv,
)
from zooport.envs.base_env import ActionTuple
from zooport.envs.core_pool import CorePool

from tests.support.pool_cores import GatedCore, LedgerCore, fast

K = 2
N = 3  # agents per core
LEDGER = functools.partial(
    LedgerCore, n_agents=N, period=2, end_probability=0.15, max_steps=7, jitter=0.002
)
SETTINGS = settings(max_examples=6, deadline=None, derandomize=True)


@pytest.fixture(scope="module", params=["sync", "async"])
def mode(request):
    return request.param


def _ledger_pool(mode: str) -> CorePool:
    options = {"mode": mode, "min_ready": 1} if mode == "async" else {"mode": mode}
    return CorePool([LEDGER] * K, **options, **fast())


@pytest.fixture(scope="module")
def pool(mode):
    pool = _ledger_pool(mode)
    yield pool
    pool.close()


def _actions(rng, n):
    return rng.integers(0, 3, n)


# --------------------------------------------------------------------------- vector adapters


@pytest.fixture(scope="module", params=["BehaviorVectorEnv", "SB3VecEnv"])
def slot_env(mode, request):
    # Each adapter gets a pool of its own: an adapter closes its core when it is closed or
    # garbage-collected (Gymnasium 1.0's VectorEnv.__del__ closes), which must not close the
    # pool another adapter of these tests still steps.
    adapter = {"BehaviorVectorEnv": BehaviorVectorEnv, "SB3VecEnv": SB3VecEnv}[request.param]
    env = adapter(_ledger_pool(mode))
    yield env
    env.close()


def _reset(env, seed: int) -> np.ndarray:
    if isinstance(env, SB3VecEnv):
        env.seed(seed)
        return env.reset()
    return env.reset(seed=seed)[0]


def _step(env, actions):
    """(obs, reward, ended, final observation by slot) of a step of either slot adapter."""
    if isinstance(env, SB3VecEnv):
        obs, reward, ended, infos = env.step(actions)
        return obs, reward, ended, [info.get("terminal_observation") for info in infos]
    obs, reward, terminated, truncated, info = env.step(actions)
    ended = terminated | truncated
    assert not reward[~info["decided"] & ~ended].any()  # no decision: reward 0, it comes later
    return obs, reward, ended, info.get("final_obs")


@given(seed=st.integers(0, 2**16), steps=st.integers(10, 60))
@SETTINGS
def test_slot_adapters_lose_nothing(slot_env, seed, steps):
    rng = np.random.default_rng(seed)
    obs = _reset(slot_env, seed)
    total = np.zeros(slot_env.num_envs, np.float32)
    np.testing.assert_array_equal(obs[:, 0], total)
    for _ in range(steps):
        obs, reward, ended, final_obs = _step(slot_env, _actions(rng, slot_env.num_envs))
        total += reward
        for slot in np.flatnonzero(ended):
            assert final_obs[slot][0] == total[slot]
        # decided slots show their new ledger, the others their last one: all must match
        np.testing.assert_array_equal(obs[:, 0], total)


# --------------------------------------------------------------------------- multi-agent

#: The multi-agent adapters' options in these tests.
DRIVER_OPTIONS = {"termination_mode": "all", "mask_in_info": True, "max_cycles": 25}


@pytest.fixture(scope="module", params=["PettingZooParallelEnv", "MultiAgentTask"])
def parallel_env(mode, request):
    """An env stepped with every live agent's action at once (over a pool of its own)."""
    adapter = {"PettingZooParallelEnv": PettingZooParallelEnv, "MultiAgentTask": MultiAgentTask}
    env = adapter[request.param](_ledger_pool(mode), **DRIVER_OPTIONS)
    yield env
    env.close()


def _transitions(env, actions) -> dict[str, tuple[np.ndarray, float]]:
    """{agent: (observation, reward)} of a step of either parallel env."""
    if isinstance(env, MultiAgentTask):
        return {a: (obs, reward) for a, (obs, reward, _, _) in env.step_all(actions).items()}
    observations, rewards, terminations, truncations, infos = env.step(actions)
    assert set(rewards) == set(observations)
    for agent, reward in rewards.items():
        if not infos[agent]["decided"] and not (terminations[agent] or truncations[agent]):
            assert reward == 0  # no decision: reward 0, it comes later
    return {agent: (observations[agent], rewards[agent]) for agent in rewards}


@given(seed=st.integers(0, 2**16), steps=st.integers(10, 80))
@SETTINGS
def test_parallel_envs_lose_nothing(parallel_env, seed, steps):
    rng = np.random.default_rng(seed)
    episode = 0
    parallel_env.reset(seed=seed)
    total: dict[str, float] = {}
    for _ in range(steps):
        task = isinstance(parallel_env, MultiAgentTask)
        if parallel_env.game_over if task else not parallel_env.agents:
            episode += 1
            parallel_env.reset(seed=seed + episode)
            total = {}
        actions = {a: int(rng.integers(0, 3)) for a in parallel_env.agents}
        for agent, (obs, reward) in _transitions(parallel_env, actions).items():
            total[agent] = total.get(agent, 0.0) + reward
            assert obs[0] == total[agent], agent


@pytest.fixture(scope="module")
def aec_env(pool):
    return PettingZooAECEnv(pool, **DRIVER_OPTIONS)


@given(seed=st.integers(0, 2**16), turns=st.integers(20, 200))
@SETTINGS
def test_pettingzoo_aec_env_loses_nothing(aec_env, seed, turns):
    rng = np.random.default_rng(seed)
    aec_env.reset(seed=seed)
    total: dict[str, float] = {}
    for episode in range(1000):
        for agent in aec_env.agent_iter(turns):
            obs, reward, terminated, truncated, _ = aec_env.last()
            total[agent] = total.get(agent, 0.0) + reward
            assert obs[0] == total[agent], agent
            aec_env.step(None if terminated or truncated else int(rng.integers(0, 3)))
            turns -= 1
        if turns <= 0:
            break
        aec_env.reset(seed=seed + episode + 1)
        total = {}


# --------------------------------------------------------------------------- async itself


def test_async_step_returns_without_a_core_that_has_not_answered(tmp_path):
    gate = tmp_path / "gate"
    factories = [
        functools.partial(LedgerCore, n_agents=N, end_probability=0.0),
        functools.partial(GatedCore, n_agents=N, end_probability=0.0, gate=str(gate)),
    ]
    pool = CorePool(factories, mode="async", min_ready=1, **fast())
    try:
        gate.touch()  # core 1 may reset
        pool.reset(seed=0)
        gate.unlink()  # ... but not step
        received = np.zeros(2 * N, np.float32)  # by pool id
        for _ in range(5):
            decision, terminal = pool.get_steps("Ledger")
            pool.set_actions("Ledger", ActionTuple(discrete=np.ones((len(decision), 1))))
            pool.step()
            decision, _ = pool.get_steps("Ledger")
            assert decision.agent_id.tolist() == [0, 2, 4]  # core 0's agents only
            received[decision.agent_id] += decision.reward
            np.testing.assert_array_equal(decision.obs[0][:, 0], received[decision.agent_id])
        gate.touch()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            pool.set_actions("Ledger", ActionTuple(discrete=np.ones((len(decision), 1))))
            pool.step()
            decision, _ = pool.get_steps("Ledger")
            received[decision.agent_id] += decision.reward
            np.testing.assert_array_equal(decision.obs[0][:, 0], received[decision.agent_id])
            if 1 in decision.agent_id:
                break
        else:
            pytest.fail("core 1 never answered")
        # core 1 ran one step, with the actions set after the reset (1): 2 each, paid now
        np.testing.assert_array_equal(received[[1, 3, 5]], [2, 2, 2])
        pool.reset(seed=1)  # waits for a step still running
        assert len(pool.get_steps("Ledger")[0]) == 2 * N
    finally:
        gate.touch()
        pool.close()
