"""A CorePool forwards its cores' global state: ``global_state()`` is theirs, concatenated.

Before, a pool had no ``global_state``, so PettingZoo's ``state()`` over a pooled Tag or
Soccer was every agent's observation instead of the cores' states. These tests compare the
pool's state, directly and through ``PettingZooParallelEnv.state()``, with raw cores stepped
in lockstep (core ``i`` of a pool reset with ``seed=s`` is reset with ``s + i``), and run
PettingZoo's own ``state_test`` on the pooled adapters.
"""

from __future__ import annotations

import functools
import re
import time
import warnings

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import state_test

from zooport.adapters import PettingZooAECEnv, PettingZooParallelEnv
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.builtin.soccer import Soccer
from zooport.envs.builtin.tag import Tag
from zooport.envs.core_pool import CorePool
from zooport.errors import CorePoolError, SpecError

#: Each config's core class and the options of its two cores (Tag's differ: the pool's
#: state is then two differently sized states).
CONFIGS = {
    "tag": (Tag, [{"n_runners": 2, "n_taggers": 1}, {"n_runners": 3, "n_taggers": 2}]),
    "soccer": (Soccer, [{"team_size": 1}, {"team_size": 1}]),
}
SEED = 5


class TagWithoutState(Tag):
    """A Tag that offers no global state (``callable(core.global_state)`` is False)."""

    global_state = None  # type: ignore[assignment]


class TagWithStateSpace(Tag):
    """A Tag that declares a box ``global_state_space`` (positions and velocities in
    [-1, 1]... and a live flag in [0, 1]: bounds chosen here, not checked)."""

    @property
    def global_state_space(self) -> spaces.Box:
        low = np.tile(np.array([-1, -1, -1, -1, 0], np.float32), self.global_state_shape[0] // 5)
        return spaces.Box(low, np.ones_like(low), dtype=np.float32)


class TagWithBrokenState(Tag):
    """A Tag whose ``global_state()`` raises."""

    def global_state(self) -> np.ndarray:
        raise RuntimeError("the state is not ready")


class SlowTag(Tag):
    """A Tag whose every step sleeps ``delay`` seconds (a slow core in an async pool)."""

    def __init__(self, *, delay: float = 0.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.delay = delay

    def _step(self, actions):
        time.sleep(self.delay)
        return super()._step(actions)


class TagThatMisstatesItsShape(Tag):
    """A Tag whose declared ``global_state_shape`` is one value short of its state."""

    @property
    def global_state_shape(self) -> tuple[int]:
        return (super().global_state_shape[0] - 1,)


def _pool(pools: list[CorePool], config: str, **pool_options) -> CorePool:
    cls, options = CONFIGS[config]
    pool = CorePool([functools.partial(cls, **o) for o in options], **pool_options)
    pools.append(pool)
    return pool


def _raw_cores(config: str) -> list:
    cls, options = CONFIGS[config]
    cores = [cls(**o) for o in options]
    for i, core in enumerate(cores):
        core.reset(seed=SEED + i)
    return cores


def _expected(cores) -> np.ndarray:
    return np.concatenate([core.global_state() for core in cores])


@pytest.mark.parametrize("config", CONFIGS)
def test_the_pools_state_is_its_cores_states_concatenated(config, pools):
    pool = _pool(pools, config)
    raw = _raw_cores(config)
    sizes = [core.global_state_shape[0] for core in raw]
    assert pool.global_state_shape == (sum(sizes),)
    pool.reset(seed=SEED)
    np.testing.assert_array_equal(pool.global_state(), _expected(raw))
    for _ in range(12):  # no actions: every agent takes the zero action, raw and pooled
        pool.step()
        for core in raw:
            core.step()
        state = pool.global_state()
        assert state.shape == (sum(sizes),) and state.dtype == np.float32
        np.testing.assert_array_equal(state, _expected(raw))
    assert pool.global_state() is not pool.global_state()  # a fresh array each call


@pytest.mark.parametrize("config", CONFIGS)
def test_pettingzoo_state_over_a_pool_is_the_cores_states(config, pools):
    env = PettingZooParallelEnv(_pool(pools, config))
    raw = _raw_cores(config)
    size = sum(core.global_state_shape[0] for core in raw)
    assert env.state_space == spaces.Box(-np.inf, np.inf, (size,), np.float32)
    env.reset(seed=SEED)
    np.testing.assert_array_equal(env.state(), _expected(raw))
    for _ in range(6):
        # Every agent decides every core step (Tag's runners, Soccer's players), so one
        # adapter step is one core step; zero actions, as the raw cores get by default.
        actions = {agent: np.zeros_like(env.action_space(agent).sample()) for agent in env.agents}
        env.step(actions)
        for core in raw:
            core.step()
        np.testing.assert_array_equal(env.state(), _expected(raw))


@pytest.mark.parametrize("config", CONFIGS)
def test_pettingzoo_state_test_on_a_pool(config, pools):
    aec = PettingZooAECEnv(_pool(pools, config))
    parallel = PettingZooParallelEnv(_pool(pools, config))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        state_test(aec, parallel)
    # The built-ins' states have no bounds (Box(-inf, inf)); nothing else may be said.
    unexpected = [
        str(w.message) for w in caught
        if not re.match(r"Environment's (minimum|maximum) state space value is", str(w.message))
    ]  # fmt: skip
    assert not unexpected


def test_a_pool_with_a_core_without_state_has_none(pools):
    mixed = CorePool([functools.partial(Tag), functools.partial(TagWithoutState)])
    pools.append(mixed)
    plain = _pool_of(pools, BallBalance, n_agents=2)
    for pool in (mixed, plain):
        assert not hasattr(pool, "global_state")
        assert not hasattr(pool, "global_state_shape")
        assert not hasattr(pool, "global_state_space")
    with pytest.raises(AttributeError, match=r"core 1 \(TagWithoutState.*has no global_state"):
        mixed.global_state  # noqa: B018
    # The adapter falls back as for a core without a global state: the agents' observations.
    env = PettingZooParallelEnv(plain)
    observations, _ = env.reset(seed=0)
    np.testing.assert_array_equal(
        env.state(), np.concatenate([observations[agent].ravel() for agent in env.agents])
    )


def _pool_of(pools: list[CorePool], cls, **options) -> CorePool:
    pool = CorePool([functools.partial(cls, **options)] * 2)
    pools.append(pool)
    return pool


def test_declared_boxes_make_the_pools_state_space(pools):
    pool = CorePool([functools.partial(TagWithStateSpace, n_runners=1, n_taggers=1),
                     functools.partial(TagWithStateSpace, n_runners=2, n_taggers=1)])  # fmt: skip
    pools.append(pool)
    one = TagWithStateSpace(n_runners=1, n_taggers=1)
    two = TagWithStateSpace(n_runners=2, n_taggers=1)
    space = pool.global_state_space
    np.testing.assert_array_equal(
        space.low, np.concatenate([one.global_state_space.low, two.global_state_space.low])
    )
    assert space.shape == (10 + 15,) and space.dtype == np.float32
    assert pool.global_state_space is space
    env = PettingZooParallelEnv(pool)
    assert env.state_space is space
    env.reset(seed=0)
    assert space.contains(env.state())


def test_a_state_that_contradicts_its_declared_shape_is_an_error(pools):
    pool = _pool_of(pools, TagThatMisstatesItsShape)
    pool.reset()
    with pytest.raises(SpecError, match=r"core 0 .*25 values where its global_state_shape says 24"):
        pool.global_state()


def test_async_mode_gives_a_state_of_the_full_shape_and_keeps_stepping(pools):
    pool = _pool(pools, "tag", mode="async", min_ready=1)
    raw = _raw_cores("tag")
    pool.reset(seed=SEED)
    np.testing.assert_array_equal(pool.global_state(), _expected(raw))
    for _ in range(5):
        pool.step()
        # A step still running finishes first; its results are handed out with the next step.
        assert pool.global_state().shape == pool.global_state_shape
    pool.step()
    assert len(pool.get_steps("Runner?team=0")[0]) > 0


@pytest.mark.parametrize("ask", ["render", "global_state"])
def test_asking_while_a_slow_core_steps_then_stepping_on(ask, pools):
    """In async mode a step still running when the pool asks every core (a picture, a state)
    is finished first and handed out with the next step. That next step used to wait for the
    same answer again, until the timeout made the core count as hung (render() had this)."""
    pool = CorePool(
        [functools.partial(SlowTag), functools.partial(SlowTag, delay=0.5)],
        mode="async", min_ready=1, timeout=10,
    )  # fmt: skip
    pools.append(pool)
    pool.reset(seed=0)
    pool.step()  # core 0 answers at once; core 1 sleeps (it is still stepping, normally)
    getattr(pool, ask)()
    seen = set()
    for _ in range(5):  # nothing hangs, and core 1's finished step is handed out
        pool.step()
        seen |= {pool.core_of(int(a))[0] for a in pool.get_steps("Runner?team=0")[0].agent_id}
    assert seen == {0, 1}


@pytest.mark.parametrize("broken", [0, 1], ids=["local core", "worker"])
def test_a_core_whose_global_state_raises_breaks_the_pool(broken, pools):
    factories = [functools.partial(Tag), functools.partial(Tag)]
    factories[broken] = functools.partial(TagWithBrokenState)
    pool = CorePool(factories)
    pools.append(pool)
    pool.reset()
    with pytest.raises(CorePoolError, match=rf"core {broken} .*RuntimeError.*global_state"):
        pool.global_state()
    with pytest.raises(CorePoolError, match="unusable"):
        pool.step()
