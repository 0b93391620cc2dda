"""A step interrupted by an exception is never stepped over silently (issue 13).

A core hook, a side channel or a wrapper that raises in the middle of ``step`` takes that
step's rewards and episode ends with it. A caller that catches the exception and steps on
used to lose them without a word; now every later ``step`` raises EnvNotResetError naming the
original error until ``reset()``, on the core and on every adapter and wrapper. A bad action
(rejected before anything moves) does not count: the env stays usable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from zooport.adapters import BehaviorVectorEnv, GymEnv, GymTask, PettingZooParallelEnv
from zooport.adapters.wrappers import (
    FoldAgents,
    ParallelWrapper,
    RewardShaping,
    TeamReward,
    TerminationPolicy,
)
from zooport.envs.base_env import ActionTuple
from zooport.envs.side_channel.stats_side_channel import StatsSideChannel
from zooport.errors import ActionError, EnvNotResetError

from tests.support.adapters import ADAPTERS
from tests.support.branches import BEHAVIOR, Hooked


class Boom(RuntimeError):
    pass


def explode() -> None:
    raise Boom("the hook failed")


class FailingStats(StatsSideChannel):
    """A user's statistics channel whose handler raises while ``armed``."""

    armed = False

    def on_message_received(self, msg) -> None:
        super().on_message_received(msg)
        if self.armed:
            raise Boom("the side channel failed")


class Reporting(Hooked):
    """Hooked that sends a statistic every step (to reach the user's side channel)."""

    def _step(self, actions):
        self.record_stat("steps", 1.0)
        return super()._step(actions)


def refused_until_reset(step, reset, match: str) -> EnvNotResetError:
    """After a failed step: ``step()`` is refused with EnvNotResetError naming the cause
    (``match``); ``reset()`` clears it and steps work again. Returns the refusal."""
    with pytest.raises(EnvNotResetError, match=match) as caught:
        step()
    reset()
    step()  # healthy again
    return caught.value


# ---------------------------------------------------------------------- the core


def test_core_refuses_to_step_after_a_hook_raised_and_recovers_with_reset():
    core = Hooked(n_agents=2, episode_length=2, seed=0)
    core.reset()
    core.step()
    core.after_restart = explode  # the episode ends in the next step: its rewards are lost
    with pytest.raises(Boom):
        core.step()
    core.after_restart = None
    with pytest.raises(EnvNotResetError, match=r"step raised Boom: the hook failed") as caught:
        core.step()
    assert "until reset()" in str(caught.value)
    with pytest.raises(EnvNotResetError, match="Boom"):
        core.step()  # still refused: nothing but reset() clears it
    core.reset()
    core.step()
    decision, terminal = core.get_steps(BEHAVIOR)
    assert len(decision) == 2 and len(terminal) == 0


def test_core_refuses_after_a_side_channel_raised_at_the_end_of_a_step():
    channel = FailingStats()
    core = Reporting(n_agents=2, episode_length=1, seed=0, side_channels=[channel])
    core.reset()
    channel.armed = True
    with pytest.raises(Boom):
        core.step()  # the step's terminal steps were published but nobody will read them
    channel.armed = False
    refused_until_reset(core.step, core.reset, "side channel failed")


def test_a_reset_that_raised_leaves_the_core_needing_reset():
    core = Hooked(n_agents=2, seed=0)
    core.reset()
    core.after_restart = explode
    with pytest.raises(Boom):
        core.reset()
    core.after_restart = None
    refused_until_reset(core.step, core.reset, "reset raised Boom")


def test_a_bad_action_or_seed_does_not_poison_the_core():
    core = Hooked(n_agents=2, seed=0)
    core.reset()
    with pytest.raises(ActionError):
        core.set_actions(BEHAVIOR, ActionTuple(discrete=np.full((2, 2), 9, np.int32)))
    with pytest.raises(ValueError):
        core.reset(seed=-1)  # numpy rejects it before anything changes
    core.step()
    core.step()


# ---------------------------------------------------------------------- adapters
#
# Each route: an adapter over a Hooked core (built as tests/support/adapters.py builds it)
# and how it steps once and resets. The hook is armed for one step in which episodes end; the
# caller catches the error and steps on.


def _single(env, core):
    return (lambda: env.step(np.array([1, 1]))), (lambda: env.reset(seed=1))


def _vector(env, core):
    actions = np.ones((core.n_agents, 2), np.int64)
    return (lambda: env.step(actions)), (lambda: env.reset(seed=1))


def _sb3(env, core):
    actions = np.ones((core.n_agents, 2), np.int64)
    return (lambda: env.step(actions)), env.reset


def _parallel(env, core):
    def step():
        return env.step({a: np.array([1, 1]) for a in env.agents})

    return step, (lambda: env.reset(seed=1))


def _aec(env, core):
    def step():
        for _ in range(len(env.agents)):
            env.step(np.array([1, 1]))

    return step, (lambda: env.reset(seed=1))


def _task(env, core):
    return (
        (lambda: env.step_all({a: np.array([1, 1]) for a in env.agents})),
        (lambda: env.reset(seed=1)),
    )


def _wrapped(core):
    return TerminationPolicy(TeamReward(PettingZooParallelEnv(core), "sum"), "all")


Driving = Callable[[Any, Any], tuple[Callable[[], Any], Callable[[], Any]]]

#: route -> (the adapter, as ADAPTERS names it, or a function of the core; how it is driven)
ROUTES: dict[str, tuple[str | Callable[[Any], Any], Driving]] = {
    "GymEnv": ("GymEnv", _single),
    "GymTask": ("GymTask", _single),
    "BehaviorVectorEnv": ("BehaviorVectorEnv", _vector),
    "SB3VecEnv": ("SB3VecEnv", _sb3),
    "Parallel": ("PettingZooParallelEnv", _parallel),
    "AEC": ("PettingZooAECEnv", _aec),
    "MultiAgentTask": ("MultiAgentTask", _task),
    "PettingZooTask": ("PettingZooTask", _parallel),
    "wrapped Parallel": (_wrapped, _parallel),
}


def _build(route: str, core: Any) -> tuple[Any, Callable[[], Any], Callable[[], Any]]:
    """(env, step once, reset) of ``route`` over ``core``."""
    adapter, driving = ROUTES[route]
    env = ADAPTERS[adapter].wrap(core) if isinstance(adapter, str) else adapter(core)
    return (env, *driving(env, core))


def _agents(route: str) -> int:
    return 1 if route.startswith("Gym") else 2


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize("where", ["hook", "side channel"])
def test_every_adapter_refuses_to_step_on_after_the_core_raised(route, where):
    channel = FailingStats()
    core = Reporting(n_agents=_agents(route), episode_length=2, seed=0, side_channels=[channel])
    env, step, reset = _build(route, core)
    reset()
    step()
    if where == "hook":
        core.after_restart = explode  # the agents' episodes end in this step
    else:
        channel.armed = True
    with pytest.raises(Boom):
        step()
    core.after_restart, channel.armed = None, False
    # Stepping on would lose the step's terminal rewards: refused, naming the cause.
    assert "reset()" in str(refused_until_reset(step, reset, "Boom"))
    step()


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_a_rejected_action_leaves_every_adapter_usable(route):
    core = Hooked(n_agents=_agents(route), seed=0)
    env, step, reset = _build(route, core)
    reset()
    bad = {
        "GymEnv": lambda: env.step(np.array([5, 0])),
        "GymTask": lambda: env.step(np.array([5, 0])),
        "BehaviorVectorEnv": lambda: env.step(np.full((2, 2), 5)),
        "SB3VecEnv": lambda: env.step(np.full((2, 2), 5)),
        "Parallel": lambda: env.step({a: np.array([5, 0]) for a in env.agents}),
        "wrapped Parallel": lambda: env.step({a: np.array([5, 0]) for a in env.agents}),
        "PettingZooTask": lambda: env.step({a: np.array([5, 0]) for a in env.agents}),
        "MultiAgentTask": lambda: env.step_all({a: np.array([5, 0]) for a in env.agents}),
        "AEC": lambda: [env.step(np.array([5, 0])) for _ in range(2)],
    }[route]
    with pytest.raises(ActionError):
        bad()
    step()
    step()


# ---------------------------------------------------------------------- wrappers


def shaping_that_fails(data) -> dict[str, float]:
    if data.episode_step == 2:
        raise Boom("the shaping component failed")
    return dict.fromkeys(data.agents, 0.0)


def test_a_wrapper_that_raises_after_its_env_stepped_refuses_to_step_on():
    env = RewardShaping(
        PettingZooParallelEnv(Hooked(n_agents=2, seed=0)), {"bonus": shaping_that_fails}
    )
    env.reset(seed=0)
    actions = {a: np.array([1, 1]) for a in env.agents}
    env.step(actions)
    with pytest.raises(Boom):
        env.step(actions)  # the adapter stepped; the wrapper lost its outputs
    refused_until_reset(
        lambda: env.step(actions), lambda: env.reset(seed=0), "shaping component failed"
    )


def test_a_wrapper_that_raises_before_its_env_stepped_stays_usable():
    calls = []

    def policy(observation):
        calls.append(1)
        if len(calls) == 2:
            raise Boom("the policy failed")
        return np.array([0, 0])

    inner = PettingZooParallelEnv(Hooked(n_agents=2, seed=0))
    env = FoldAgents(inner, policy, ["branches_1"])
    env.reset(seed=0)
    env.step({"branches_0": np.array([1, 1])})
    before = inner.step_guard.completed
    with pytest.raises(Boom):
        env.step({"branches_0": np.array([1, 1])})
    assert inner.step_guard.completed == before  # raised before the adapter moved
    env.step({"branches_0": np.array([1, 1])})
    assert inner.step_guard.completed == before + 1


def test_a_user_wrapper_subclass_is_guarded_too():
    class Fragile(ParallelWrapper):
        fail = False

        def step(self, actions):
            result = self.env.step(actions)
            if self.fail:
                raise Boom("my wrapper failed")
            return result

    env = Fragile(PettingZooParallelEnv(Hooked(n_agents=2, seed=0)))
    env.reset(seed=0)
    actions = {a: np.array([0, 0]) for a in env.agents}
    env.fail = True
    with pytest.raises(Boom):
        env.step(actions)
    env.fail = False
    refused_until_reset(lambda: env.step(actions), lambda: env.reset(seed=0), "my wrapper failed")


def test_gym_task_transform_that_raises_refuses_to_step_on():
    def reward_transform(*, reward):
        if reward > 5:
            raise Boom("the reward transform failed")
        return reward

    task = GymTask(GymEnv(Hooked(n_agents=1, seed=0)), reward_transform=reward_transform)
    task.reset(seed=0)
    task.step(np.array([1, 0]))  # reward 1
    with pytest.raises(Boom):
        task.step(np.array([1, 1]))  # reward 11
    refused_until_reset(
        lambda: task.step(np.array([1, 0])), lambda: task.reset(seed=0), "reward transform failed"
    )


# ---------------------------------------------------------------------- what used to vanish


def test_the_lost_step_is_what_the_refusal_protects():
    """Without the refusal, stepping on after the failed step reports fewer rewards and
    episode ends than the core paid: exactly the failed step's."""
    core = Hooked(n_agents=2, episode_length=2, seed=0)
    env = BehaviorVectorEnv(core)
    env.reset(seed=0)
    actions = np.ones((2, 2), np.int64)
    reported = env.step(actions)[1].astype(np.float64)
    core.after_restart = explode
    with pytest.raises(Boom):
        env.step(actions)
    core.after_restart = None
    assert not np.array_equal(core.paid, reported)  # 22 per agent paid, 11 reported
    with pytest.raises(EnvNotResetError):
        env.step(actions)
    assert env.step_guard.failure is not None and "Boom" in env.step_guard.failure
