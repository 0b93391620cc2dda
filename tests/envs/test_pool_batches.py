"""The pure parts of a CorePool, alone: merging the cores' rows, and the buffer layouts."""

from __future__ import annotations

import numpy as np
import pytest

from zooport.envs.base_env import (
    ActionSpec,
    BehaviorSpec,
    TerminalSteps,
)
from zooport.envs.pool_batches import merge_steps, pool_ids
from zooport.envs.pool_handles import Part
from zooport.envs.pool_shared_memory import MIN_ROWS, DataLayout, DataSegment
from zooport.errors import SpecError

from tests.support.specs import obs_spec

SPEC = BehaviorSpec(
    [obs_spec((2,), "x")],
    ActionSpec.create_discrete((2, 3)),
)


def _part(index, ids, *, mask=None, shared=True, obs_width=2, terminal=False):
    ids = np.asarray(ids, np.int32)
    n = ids.size
    return Part(
        index, n, [np.arange(n * obs_width, dtype=np.float32).reshape(n, obs_width) + index],
        np.full(n, index + 0.5, np.float32), ids, np.full(n, index, np.int32),
        np.zeros(n, np.float32), mask, np.zeros(n, bool) if terminal else None, shared,
    )  # fmt: skip


def test_rows_follow_core_order():
    core0 = _part(0, [0, 2], mask=np.array([[0, 1, 0, 0, 1], [1, 0, 0, 1, 0]], bool))
    core1 = _part(1, [15])  # sent no mask: every action available
    decision, terminal = merge_steps("B", SPEC, [(core0, None), (core1, None)])
    assert decision.agent_id.tolist() == [0, 2, 15] and decision.agent_id.dtype == np.int32
    assert decision.reward.tolist() == [0.5, 0.5, 1.5]
    assert decision.group_id.tolist() == [0, 0, 1]
    np.testing.assert_array_equal(decision.obs[0][2], [1, 2])
    first, second = decision.action_mask
    assert first.tolist() == [[False, True], [True, False], [False, False]]
    assert second.tolist() == [[False, False, True], [False, True, False], [False, False, False]]
    assert len(terminal) == 0 and isinstance(terminal, TerminalSteps)


def test_shared_memory_views_are_copied_and_a_local_core_s_arrays_passed():
    local = _part(0, [3], shared=False)
    worker = _part(1, [3])
    decision, _ = merge_steps("B", SPEC, [(local, None)])
    assert decision.reward is local.reward and decision.agent_id is local.agent_id
    decision, _ = merge_steps("B", SPEC, [(None, None), (worker, None)])
    assert not np.shares_memory(decision.reward, worker.reward)
    assert not np.shares_memory(decision.agent_id, worker.agent_id)
    assert decision.agent_id.tolist() == [3]


def test_terminal_steps_merge_and_the_empty_batch_is_the_callers():
    empty = TerminalSteps.empty(SPEC)
    _, terminal = merge_steps("B", SPEC, [(None, _part(0, [], terminal=True))], empty)
    _, again = merge_steps("B", SPEC, [(None, _part(0, [], terminal=True))], empty)
    # A new batch each step (as BatchedEnv's), sharing only the caller's size-0 arrays.
    assert terminal is not empty and again is not terminal and terminal.obs is not again.obs
    assert terminal.reward is empty.reward and len(terminal) == 0
    parts = [(None, _part(0, [8], terminal=True)), (None, _part(1, [9], terminal=True))]
    _, terminal = merge_steps("B", SPEC, parts, empty)
    assert terminal.agent_id.tolist() == [8, 9] and terminal.interrupted.tolist() == [0, 0]


def test_pool_ids_are_core_id_times_k_plus_index_within_int32():
    ids = np.array([0, 1, 7, -3], np.int32)
    assert pool_ids("B", ids, 2, 1).tolist() == [1, 3, 15, -5]
    assert pool_ids("B", ids, 1, 0).tolist() == [0, 1, 7, -3]
    out = np.full(4, -1, np.int32)
    assert pool_ids("B", np.array([4, 5, 6, 7], np.int64), 3, 2, out) is out
    assert out.tolist() == [14, 17, 20, 23] and out.dtype == np.int32
    assert pool_ids("B", np.zeros(0, np.int32), 2, 1).shape == (0,)
    # The last core ids that fit at index 1 of 2 (2 * top + 1 and 2 * bottom + 1 are the ends).
    top, bottom = (2**31 - 2) // 2, -((1 + 2**31) // 2)
    assert pool_ids("B", np.array([top, bottom]), 2, 1).tolist() == [2**31 - 1, -(2**31) + 1]
    for beyond in (top + 1, bottom - 1, 2**40):
        with pytest.raises(SpecError, match=r"beyond int32; cores of a pool of 2 must keep"):
            pool_ids("B", np.array([0, beyond]), 2, 1)
    with pytest.raises(SpecError, match=r"core 0's agents \(ids 0\.\.2147483648\)"):
        pool_ids("B", np.array([0, 2**31]), 1, 0)
    # Unsigned ids: within range as they are, beyond it an error (never wrapped).
    assert pool_ids("B", np.array([3, 4], np.uint32), 2, 1).tolist() == [7, 9]
    with pytest.raises(SpecError, match=r"core 1's agents \(ids 0\.\.2147483648\)"):
        pool_ids("B", np.array([0, 2**31], np.uint32), 2, 1)


def test_shapes_that_differ_are_errors():
    with pytest.raises(SpecError, match=r"observation 0 has a different shape per core"):
        merge_steps("B", SPEC, [(_part(0, [0]), None), (_part(1, [0], obs_width=3), None)])


def test_layouts_have_room_for_twice_the_agents_and_never_shrink():
    obs = {"B": [np.zeros((5, 2), np.float32)]}
    actions = {"B": (0, (2, 3))}
    first = DataLayout.fitting({"B": 5}, obs, actions)
    assert first.behaviors[0].rows == MIN_ROWS and first.behaviors[0].mask_width == 5
    grown = DataLayout.fitting({"B": 40}, obs, actions, previous=first)
    assert grown.behaviors[0].rows == 80
    again = DataLayout.fitting({"B": 30}, obs, actions, previous=grown)
    assert again.behaviors[0].rows == 80
    segment = DataSegment.create(grown)
    try:
        buffers = segment.behaviors["B"]
        assert buffers.decision.obs[0].shape == (80, 2) and buffers.discrete.shape == (80, 2)
        assert buffers.fits(_steps(80, 2)) and not buffers.fits(_steps(81, 2))
        assert not buffers.fits(_steps(3, 4))  # another shape: a new layout, never a broadcast
        arrays = [a for placed in grown.arrays() for a in placed]
        assert all(offset % 64 == 0 for *_, offset in arrays)
    finally:
        segment.close()
        segment.memory.unlink()


def _steps(n, width):
    class Batch:
        obs = [np.zeros((n, width), np.float32)]

        def __len__(self):
            return n

    return Batch()
