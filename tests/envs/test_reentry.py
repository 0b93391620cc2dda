"""Re-entrant and concurrent use is an error, not a silent double count (issue 13).

``step``/``reset`` called while another ``step``/``reset`` of the same env runs - from a core
hook, a side-channel callback, a FoldAgents policy or a second thread - raises
ReentrantCallError. The outer call then fails too (its hook raised), so it is refused like
any interrupted step until ``reset()``; a hook that catches the refusal lets its step finish
normally, with every reward accounted for.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from zooport.adapters import (
    BehaviorVectorEnv,
    GymEnv,
    MultiAgentTask,
    PettingZooAECEnv,
    PettingZooParallelEnv,
)
from zooport.adapters.sb3_vec_env import SB3VecEnv
from zooport.adapters.wrappers import FoldAgents, TeamReward
from zooport.envs.base_env import ActionTuple
from zooport.envs.side_channel.stats_side_channel import StatsSideChannel
from zooport.errors import EnvNotResetError, ReentrantCallError

from tests.support.branches import BEHAVIOR, Hooked

ACTION = np.array([1, 1])


def test_a_core_hook_that_steps_or_resets_the_core_is_refused():
    core = Hooked(n_agents=2, seed=0)
    core.reset()
    core.before_step = core.step
    with pytest.raises(ReentrantCallError, match=r"Hooked.step\(\) was called while its step"):
        core.step()
    core.before_step = core.reset
    with pytest.raises(EnvNotResetError):  # the first refusal interrupted that step
        core.step()
    core.before_step = None
    core.reset()
    core.before_step = core.reset
    with pytest.raises(ReentrantCallError, match=r"reset\(\) was called while its step"):
        core.step()


def test_a_core_hook_that_sets_actions_mid_step_is_refused():
    core = Hooked(n_agents=2, seed=0)
    core.reset()
    zero = ActionTuple(discrete=np.zeros((2, 2), np.int32))
    core.before_step = lambda: core.set_actions(BEHAVIOR, zero)
    with pytest.raises(ReentrantCallError, match="set_actions"):
        core.step()
    core.before_step = None
    core.reset()
    one = ActionTuple(discrete=np.zeros((1, 2), np.int32))
    core.before_step = lambda: core.set_action_for_agent(BEHAVIOR, 0, one)
    with pytest.raises(ReentrantCallError, match="set_action_for_agent"):
        core.step()


def test_a_hook_that_catches_the_refusal_lets_its_step_finish_with_nothing_lost():
    core = Hooked(n_agents=2, seed=0)
    env = BehaviorVectorEnv(core)
    env.reset(seed=0)
    refused = []

    def sneaky_step():
        try:
            env.step(np.zeros((2, 2), np.int64))
        except ReentrantCallError as error:
            refused.append(error)

    core.before_step = sneaky_step
    total = np.zeros(2)
    for _ in range(5):
        total += env.step(np.ones((2, 2), np.int64))[1]
    assert len(refused) == 5
    np.testing.assert_array_equal(total, core.paid)  # 11 per step, counted once


class CallbackChannel(StatsSideChannel):
    """A statistics channel whose handler runs ``callback`` (a user's side effect)."""

    callback = None

    def on_message_received(self, msg) -> None:
        super().on_message_received(msg)
        if self.callback is not None:
            self.callback()


class Reporting(Hooked):
    def _step(self, actions):
        self.record_stat("steps", 1.0)
        return super()._step(actions)


def _adapters(core):
    return {
        "GymEnv": lambda: (GymEnv(core), ACTION),
        "BehaviorVectorEnv": lambda: (BehaviorVectorEnv(core), np.ones((1, 2), np.int64)),
        "SB3VecEnv": lambda: (SB3VecEnv(core), np.ones((1, 2), np.int64)),
    }


@pytest.mark.parametrize("name", ["GymEnv", "BehaviorVectorEnv", "SB3VecEnv"])
@pytest.mark.parametrize("call", ["step", "reset"])
def test_a_side_channel_callback_that_calls_the_adapter_is_refused(name, call):
    channel = CallbackChannel()
    core = Reporting(n_agents=1, seed=0, side_channels=[channel])
    env, action = _adapters(core)[name]()
    env.reset()
    channel.callback = (lambda: env.step(action)) if call == "step" else env.reset
    with pytest.raises(ReentrantCallError, match=rf"{name}.{call}\(\) was called while its step"):
        env.step(action)


@pytest.mark.parametrize("api", ["parallel", "aec", "task"])
def test_a_side_channel_callback_that_acts_in_a_multi_agent_adapter_is_refused(api):
    channel = CallbackChannel()
    core = Reporting(n_agents=2, seed=0, side_channels=[channel])
    if api == "parallel":
        env = PettingZooParallelEnv(core)
        env.reset(seed=0)
        channel.callback = lambda: env.step(dict.fromkeys(env.agents, ACTION))

        def act():
            env.step(dict.fromkeys(env.agents, ACTION))
    elif api == "aec":
        env = PettingZooAECEnv(core)
        env.reset(seed=0)
        # One turn taken from the callback: it would be silently wiped with the cycle.
        channel.callback = lambda: env.step(ACTION)

        def act():
            for _ in range(len(env.agents)):
                env.step(ACTION)
    else:
        env = MultiAgentTask(core)
        env.reset(seed=0)
        channel.callback = lambda: env.step(ACTION, 0)

        def act():
            env.step_all(dict.fromkeys(env.agents, ACTION))

    with pytest.raises(ReentrantCallError, match=r"step\(\) was called while its step"):
        act()


def test_a_folded_policy_that_steps_the_env_is_refused():
    holder = {}

    def policy(observation):
        holder["env"].step({"branches_0": ACTION})
        return ACTION

    env = TeamReward(
        FoldAgents(PettingZooParallelEnv(Hooked(n_agents=2, seed=0)), policy, ["branches_1"])
    )
    holder["env"] = env
    env.reset(seed=0)
    with pytest.raises(ReentrantCallError, match=r"TeamReward.step\(\) was called while its"):
        env.step({"branches_0": ACTION})


def test_a_second_thread_stepping_a_vector_env_mid_step_is_refused():
    """Deterministic: thread A is held inside the core's step while thread B steps."""
    core = Hooked(n_agents=2, seed=0)
    env = BehaviorVectorEnv(core)
    env.reset(seed=0)
    inside, release = threading.Event(), threading.Event()

    def hold():
        inside.set()
        assert release.wait(timeout=60)

    core.before_step = hold
    actions = np.ones((2, 2), np.int64)
    results = {}

    def thread_a():
        results["a"] = env.step(actions)[1]

    a = threading.Thread(target=thread_a)
    a.start()
    assert inside.wait(timeout=60)
    try:
        with pytest.raises(ReentrantCallError, match="another thread"):
            env.step(actions)
    finally:
        release.set()
        a.join(timeout=60)
    core.before_step = None
    # Thread A's step completed untouched; the refused one paid nothing.
    np.testing.assert_array_equal(results["a"], core.paid)
    env.step(actions)
