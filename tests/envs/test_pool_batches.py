"""The pure parts of a CorePool, alone: merging the cores' rows, and the buffer layouts."""

from __future__ import annotations

import numpy as np
import pytest

from zooport.envs.base_env import (
    ActionSpec,
    BehaviorSpec,
    TerminalSteps,
)
from zooport.envs.pool_batches import merge_steps
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


def test_rows_follow_core_order_with_pool_ids():
    core0 = _part(0, [0, 1], mask=np.array([[0, 1, 0, 0, 1], [1, 0, 0, 1, 0]], bool))
    core1 = _part(1, [7])  # sent no mask: every action available
    decision, terminal = merge_steps("B", SPEC, [(core0, None), (core1, None)], 2)
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
    decision, _ = merge_steps("B", SPEC, [(local, None)], 1)
    assert decision.reward is local.reward and decision.agent_id is local.agent_id
    decision, _ = merge_steps("B", SPEC, [(None, None), (worker, None)], 2)
    assert not np.shares_memory(decision.reward, worker.reward)
    assert decision.agent_id.tolist() == [7]


def test_terminal_steps_merge_and_the_empty_batch_is_the_callers():
    empty = TerminalSteps.empty(SPEC)
    _, terminal = merge_steps("B", SPEC, [(None, _part(0, [], terminal=True))], 2, empty)
    assert terminal is empty
    parts = [(None, _part(0, [4], terminal=True)), (None, _part(1, [4], terminal=True))]
    _, terminal = merge_steps("B", SPEC, parts, 2, empty)
    assert terminal.agent_id.tolist() == [8, 9] and terminal.interrupted.tolist() == [0, 0]


def test_ids_beyond_int32_and_shapes_that_differ_are_errors():
    with pytest.raises(SpecError, match=r"beyond int32; cores of a pool of 2 must keep"):
        merge_steps("B", SPEC, [(_part(1, [2**30]), None)], 2)
    with pytest.raises(SpecError, match=r"observation 0 has a different shape per core"):
        merge_steps("B", SPEC, [(_part(0, [0]), None), (_part(1, [0], obs_width=3), None)], 2)


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
