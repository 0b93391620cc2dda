"""AgentSlots, the two rules both adapter engines apply, alone: batches written by hand.

*Terminal reward never lost* (``_end_episodes``) and *no decision: last observation, reward
0* (``_take_decisions``), with rows mapped to slots through an index array or a slice and a
subset of the batch's rows.
"""

from __future__ import annotations

import numpy as np
import pytest

from zooport.adapters.options import LayoutOptions
from zooport.adapters.spaces import AgentSlots
from zooport.envs.base_env import ActionSpec, BehaviorSpec, DecisionSteps, TerminalSteps

from tests.support.specs import obs_spec

SLOTS = 4


def slots() -> AgentSlots:
    """Slots of a behaviour with a (2,) observation and branches (3, 2), storage as an
    engine allocates it: observations 9, masks all allowed, group ids 0."""
    spec = BehaviorSpec([obs_spec((2,))], ActionSpec.create_discrete((3, 2)))
    s = AgentSlots("B", spec, LayoutOptions())
    s.obs = np.full((SLOTS, 2), 9.0, np.float32)
    s.mask_size = s.action_layout.mask_size
    s.mask = np.ones((SLOTS, s.mask_size), np.int8)
    s.group_id = np.zeros(SLOTS, np.int64)
    return s


def step_outputs():
    """reward, group_reward, terminated, truncated: one step's outputs, as an engine clears them."""
    return (np.zeros(SLOTS, np.float32), np.zeros(SLOTS, np.float32)) + tuple(
        np.zeros(SLOTS, bool) for _ in range(2)
    )


def terminal() -> TerminalSteps:
    """Three rows: agent 30 terminated, 31 interrupted, 32 terminated."""
    return TerminalSteps(
        [np.array([[1, 2], [3, 4], [5, 6]], np.float32)],
        np.array([1.5, -2.0, 0.25], np.float32),
        np.array([False, True, False]),
        np.array([30, 31, 32], np.int32),
        np.zeros(3, np.int32),
        np.array([0.5, 0.0, 1.0], np.float32),
    )


def decision(group_id) -> DecisionSteps:
    """Two rows whose core masks forbid action 2 of branch 0 (row 0) and action 0 of
    branch 1 (row 1)."""
    return DecisionSteps(
        [np.array([[10, 11], [12, 13]], np.float32)],
        np.array([7.0, 8.0], np.float32),
        np.array([40, 41], np.int32),
        [
            np.array([[False, False, True], [False, False, False]]),
            np.array([[False, False], [True, False]]),
        ],
        group_id,
        np.zeros(2, np.float32),
    )


def test_end_episodes_writes_the_terminal_reward_flags_and_final_observation():
    s = slots()
    reward, group_reward, terminated, truncated = step_outputs()
    s._end_episodes(
        np.array([3, 0, 2]), terminal(), None, reward, group_reward, terminated, truncated
    )
    assert reward.tolist() == [-2.0, 0.0, 0.25, 1.5]
    assert group_reward.tolist() == [0.0, 0.0, 1.0, 0.5]
    assert terminated.tolist() == [False, False, True, True]
    assert truncated.tolist() == [True, False, False, False]  # interrupted is truncated
    assert s.obs.tolist() == [[3, 4], [9, 9], [5, 6], [1, 2]]  # slot 1 untouched


def test_end_episodes_takes_only_the_rows_asked_for():
    s = slots()
    reward, group_reward, terminated, truncated = step_outputs()
    s._end_episodes(
        slice(0, 2), terminal(), np.array([1, 2]), reward, group_reward, terminated, truncated
    )
    assert reward.tolist() == [-2.0, 0.25, 0.0, 0.0]
    assert (terminated.tolist(), truncated.tolist()) == (
        [False, True, False, False],
        [True, False, False, False],
    )
    assert s.obs.tolist() == [[3, 4], [5, 6], [9, 9], [9, 9]]


def test_end_episodes_without_keep_obs_leaves_the_observations():
    s = slots()
    reward, group_reward, terminated, truncated = step_outputs()
    s._end_episodes(
        np.array([0, 1, 2]),
        terminal(),
        None,
        reward,
        group_reward,
        terminated,
        truncated,
        keep_obs=False,
    )
    assert reward.tolist() == [1.5, -2.0, 0.25, 0.0] and (s.obs == 9).all()


@pytest.mark.parametrize("group_id", [np.array([4, 5]), [4, 5]], ids=["array", "list"])
def test_take_decisions_writes_observation_allowed_mask_and_group_id(group_id):
    s = slots()
    s._take_decisions(np.array([2, 0]), decision(group_id), None, 2)
    assert s.obs.tolist() == [[12, 13], [9, 9], [10, 11], [9, 9]]
    # The consumer's polarity (1 = allowed) over both branches; slots 1 and 3 keep theirs.
    assert s.mask.tolist() == [[1, 1, 1, 0, 1], [1] * 5, [1, 1, 0, 1, 1], [1] * 5]
    assert s.group_id.tolist() == [5, 0, 4, 0]


@pytest.mark.parametrize("group_id", [np.array([4, 5]), [4, 5]], ids=["array", "list"])
def test_take_decisions_takes_only_the_rows_asked_for(group_id):
    s = slots()
    s._take_decisions(np.array([3]), decision(group_id), np.array([1]), 1)
    assert s.obs.tolist() == [[9, 9], [9, 9], [9, 9], [12, 13]]
    assert s.mask[3].tolist() == [1, 1, 1, 0, 1] and s.group_id.tolist() == [0, 0, 0, 5]


def test_take_decisions_without_masks_kept_writes_none():
    s = slots()
    s.mask_size = 0
    s._take_decisions(slice(0, 2), decision(np.array([4, 5])), None, 2)
    assert (s.mask == 1).all() and s.obs[:2].tolist() == [[10, 11], [12, 13]]
