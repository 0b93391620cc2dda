"""No discrete action value wraps into a valid one, on any route (issue 13, first finding).

Every route that takes discrete actions (the single and vector adapters, the PettingZoo
adapters and tasks, hybrid actions, MultiDiscrete and flattened branches, the
``gym.make``/``zooport.make`` entry points and the wrappers that convert actions) must reject
a value that is non-integral, non-finite or outside its branch with an ActionError naming
the expected range and the given value, BEFORE any cast: ``2**32 + 1`` cast to int32 is 1, a
valid action. After the rejection the env has not moved: its next valid step equals that of
a twin env that never saw the bad value.

Tolerated, as the ecosystem's consumers send them: Python ints, numpy integer scalars and
arrays of any integer dtype (SB3 sends int64), 0-d arrays, and floats that are whole numbers
(Gymnasium's table envs take ``1.0``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

import zooport
from zooport.adapters.gym_env import GymEnv
from zooport.adapters.multi_agent_task import MultiAgentTask, PettingZooTask
from zooport.adapters.pettingzoo_aec import PettingZooAECEnv
from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.adapters.sb3_vec_env import SB3VecEnv
from zooport.adapters.spaces import checked_discrete
from zooport.adapters.task_api import GymTask
from zooport.adapters.vector_env import BehaviorVectorEnv
from zooport.adapters.wrappers import DiscretizeActions
from zooport.adapters.wrappers.action import GymDiscretizeActions, VectorDiscretizeActions
from zooport.envs.builtin import BallBalance, Basic, Collector, Tag
from zooport.errors import ActionError

from tests.support.branches import Branches

# Each bad value and the text the error shows for it. 2**32 + 1 and -(2**32) + 1 wrap to
# 1 in int32; 2**64 - 1 as uint64 is -1 as int64; inf cast to an integer is undefined (0 or
# INT_MIN in practice).
BAD_VALUES = [
    pytest.param(2**32 + 1, "4294967297", id="2**32+1"),
    pytest.param(-(2**32) + 1, "-4294967295", id="-2**32+1"),
    pytest.param(2**63 - 1, "9223372036854775807", id="int64-max"),
    pytest.param(np.uint64(2**64 - 1), "18446744073709551615", id="uint64-max"),
    pytest.param(float("inf"), "inf", id="inf"),
    pytest.param(float("-inf"), "-inf", id="-inf"),
    pytest.param(float("nan"), "nan", id="nan"),
    pytest.param(1.5, "1.5", id="1.5"),
    pytest.param(-1, "-1", id="-1"),
    pytest.param(np.int64(7), "7", id="too-large"),
]


# ---------------------------------------------------------------------- routes
#
# A route builds an env and returns (step_with(value), step_valid()): the first sends the
# value as one agent's (or slot's) discrete action with valid actions for the others; the
# second sends valid actions only and returns what the env reported.


def _gym(make: Callable[[], Any], valid: Any = 1, wrap: Callable[[Any], Any] = lambda v: v):
    env = make()
    env.reset(seed=0)
    return (lambda v: env.step(wrap(v))), (lambda: env.step(wrap(valid)))


def _vector(make: Callable[[], Any], batch: Callable[[Any], np.ndarray], sb3: bool = False):
    env = make()
    if sb3:
        env.seed(0)
        env.reset()
        return (lambda v: env.step(batch(v))), (lambda: env.step(batch(0)))
    env.reset(seed=0)
    return (lambda v: env.step(batch(v))), (lambda: env.step(batch(0)))


def _parallel(make: Callable[[], Any], action: Callable[[Any], Any] = lambda v: v):
    env = make()
    env.reset(seed=0)

    def step(value):
        first, *others = env.agents
        return env.step({first: action(value), **{a: action(0) for a in others}})

    return step, (lambda: step(0))


def _aec(make: Callable[[], Any]):
    env = make()
    env.reset(seed=0)

    def step(value):
        # The first agent of the cycle sends the value; the core steps (and checks) when the
        # cycle's last agent has acted.
        for i in range(len(env.agents)):
            env.step(value if i == 0 else 0)
        return env.last()

    return step, (lambda: step(0))


def _task(make: Callable[[], Any]):
    task = make()
    task.reset(seed=0)

    def step(value):
        first, *others = task.agents
        return task.step_all({first: value, **dict.fromkeys(others, 0)})

    return step, (lambda: step(0))


def _pettingzoo_task():
    task = PettingZooTask(PettingZooParallelEnv(Tag(seed=0)))
    task.reset(seed=0)

    def step(value):
        first, *others = task.agents
        return task.step({first: value, **dict.fromkeys(others, 0)})

    return step, (lambda: step(0))


def _hybrid(value):
    return {"continuous": np.zeros(2, np.float32), "discrete": value}


def _multi(value):  # MultiDiscrete([3, 4]): the value in the second branch of slot 0
    batch = np.zeros((2, 2), np.asarray(value).dtype)  # the value's own dtype, as sent
    batch[0, 1] = value
    return batch


def _flat(value):  # Discrete(12): the value for slot 0
    batch = np.zeros(2, np.asarray(value).dtype)
    batch[0] = value
    return batch


ROUTES: dict[str, Callable[[], tuple[Callable[[Any], Any], Callable[[], Any]]]] = {
    "GymEnv": lambda: _gym(lambda: GymEnv(Basic(seed=0))),
    "GymEnv-0d-array": lambda: _gym(lambda: GymEnv(Basic(seed=0)), wrap=np.asarray),
    "gym.make": lambda: _gym(lambda: gym.make("zooport/Basic-v0", seed=0)),
    "GymTask": lambda: _gym(lambda: GymTask(GymEnv(Basic(seed=0)))),
    "GymEnv-hybrid": lambda: _gym(
        lambda: GymEnv(Collector(seed=0, n_agents=1)), valid=0, wrap=_hybrid
    ),
    "BehaviorVectorEnv-MultiDiscrete": lambda: _vector(
        lambda: BehaviorVectorEnv(Branches()), _multi
    ),
    "BehaviorVectorEnv-flattened": lambda: _vector(
        lambda: BehaviorVectorEnv(Branches(), flatten_branched=True), _flat
    ),
    "SB3VecEnv-MultiDiscrete": lambda: _vector(lambda: SB3VecEnv(Branches()), _multi, sb3=True),
    "SB3VecEnv-flattened": lambda: _vector(
        lambda: SB3VecEnv(Branches(), flatten_branched=True), _flat, sb3=True
    ),
    "Parallel": lambda: _parallel(lambda: PettingZooParallelEnv(Tag(seed=0))),
    "Parallel-hybrid": lambda: _parallel(
        lambda: PettingZooParallelEnv(Collector(seed=0, n_agents=2)), _hybrid
    ),
    "zooport.make": lambda: _parallel(lambda: zooport.make("Tag", seed=0)),
    "AEC": lambda: _aec(lambda: PettingZooAECEnv(Tag(seed=0))),
    "MultiAgentTask": lambda: _task(lambda: MultiAgentTask(Tag(seed=0))),
    "PettingZooTask": _pettingzoo_task,
}


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize(("value", "shown"), BAD_VALUES)
def test_a_bad_discrete_value_is_rejected_before_any_cast(route, value, shown):
    step_with, step_valid = ROUTES[route]()
    twin_step_with, twin_step_valid = ROUTES[route]()
    if route.endswith("flattened") and isinstance(value, np.int64):
        value = np.int64(12)  # Discrete(12): 7 is a valid flattened action
        shown = "12"
    if route.endswith("MultiDiscrete") and value == np.int64(7):
        shown = "7"
    if route == "GymTask" and value == 1.5:
        # ai-traineree's GymTask casts a discrete action with int() (issue 22): 1.5 is 1.
        assert data_equivalence(step_with(value), twin_step_with(int(value)))
        return
    with pytest.raises(ActionError) as caught:
        step_with(value)
    message = str(caught.value)
    assert "expected" in message and shown in message, message
    assert "in [0, " in message, message  # the valid range is named
    # Nothing moved: the next valid step is the twin's first one.
    assert data_equivalence(step_valid(), twin_step_valid())


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize(
    "value",
    [1, np.int64(1), np.int32(1), np.uint8(1), 1.0, np.float32(1.0), True],
    ids=["int", "int64", "int32", "uint8", "1.0", "float32-1.0", "True"],
)
def test_conventional_integer_forms_are_accepted_and_mean_the_same(route, value):
    step_with, _ = ROUTES[route]()
    twin_step_with, _ = ROUTES[route]()
    assert data_equivalence(step_with(value), twin_step_with(1))


def test_discretize_actions_forms_check_before_casting():
    par = DiscretizeActions(PettingZooParallelEnv(BallBalance(n_agents=2, seed=0)), 3)
    par.reset(seed=0)
    bad = [(9, "9"), (-1, "-1"), (1.5, "1.5"), (math.inf, "inf"), (2**32 + 1, "4294967297")]
    for value, shown in bad:
        with pytest.raises(ActionError, match=rf"in \[0, 8\] for Discrete\(9\), got {shown}"):
            par.step({"ballbalance_0": value, "ballbalance_1": 0})
        one = GymDiscretizeActions(GymEnv(BallBalance(n_agents=1, seed=0)), 3)
        one.reset(seed=0)
        with pytest.raises(ActionError, match=rf"got {shown}"):
            one.step(value)
        vec = VectorDiscretizeActions(BehaviorVectorEnv(BallBalance(n_agents=2, seed=0)), 3)
        vec.reset(seed=0)
        with pytest.raises(ActionError, match=rf"got {shown}"):
            vec.step(np.array([value, 0]))
    # -1 used to index the last grid point; 4.0 is accepted as 4, the centre.
    assert GymDiscretizeActions(GymEnv(BallBalance(n_agents=1)), 3).action(4.0).tolist() == [0, 0]


def test_checked_discrete_bounds_every_branch_and_keeps_integer_arrays():
    batch = np.array([[2, 3], [0, 0]], np.int64)
    assert checked_discrete(batch, (3, 4), "w") is batch  # no copy, no cast
    with pytest.raises(ActionError, match=r"in \[0, 2\], got 4294967297 at row 0"):
        checked_discrete(np.array([2**32 + 1]), 3, "demo")  # int32 would make it 1
    with pytest.raises(ActionError, match=r"in \[0, 2\], got 3 in branch 0 at row 1"):
        checked_discrete(np.array([[2, 3], [3, 0]]), (3, 4), "w")
    # A signed value viewed as unsigned: -1 in int8 is 255, above every valid int8 value.
    with pytest.raises(ActionError, match="got -1"):
        checked_discrete(np.array([-1], np.int8), 300, "w")
    assert checked_discrete(np.array([127], np.int8), 300, "w").tolist() == [127]
    assert checked_discrete(np.array([3.0], np.float16), 4, "w").dtype == np.int64
    with pytest.raises(ActionError, match="got dtype object"):
        checked_discrete(np.array([2**70]), 3, "w")
