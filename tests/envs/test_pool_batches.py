"""The pure parts of a CorePool, alone: pool ids, and every core's rows in one segment."""

from __future__ import annotations

import numpy as np
import pytest

from zooport.envs.base_env import ActionSpec, BehaviorSpec, DecisionSteps, TerminalSteps
from zooport.envs.pool_shared_memory import (
    MIN_ROWS,
    BehaviorLayout,
    Rows,
    pool_ids,
)
from zooport.errors import SpecError

from tests.support.specs import obs_spec

SPEC = BehaviorSpec([obs_spec((2,), "x")], ActionSpec.create_discrete((2, 3)))


def _decision(ids, *, index=0, mask=None):
    ids = np.asarray(ids, np.int32)
    n = ids.size
    obs = [np.arange(n * 2, dtype=np.float32).reshape(n, 2) + index]
    return DecisionSteps(obs, np.full(n, index + 0.5, np.float32), ids, mask,
                         np.full(n, 2**40 + index, np.int64), np.zeros(n, np.float32))  # fmt: skip


def _terminal(ids):
    n = len(ids)
    return TerminalSteps([np.ones((n, 2), np.float32)], np.ones(n, np.float32), np.ones(n, bool),
                         np.asarray(ids, np.int32), np.zeros(n, np.int32),
                         np.zeros(n, np.float32))  # fmt: skip


@pytest.fixture
def rows():
    layout = BehaviorLayout("B", (2, 3, 2), BehaviorLayout.signature(_decision([0])), 0, 2, 5)
    made = Rows(layout)
    yield made
    made.memory.unlink()
    made.close()


def test_each_core_writes_its_range_and_a_gather_takes_the_rows_in_core_order(rows):
    mask = [np.array([[0, 1], [1, 0]], bool), np.array([[0, 0, 1], [0, 1, 0]], bool)]
    rows.write(0, 3, _decision([0, 1], mask=mask), _terminal([]))
    rows.write(1, 3, _decision([5], index=1), _terminal([7, 8]))  # sent no mask
    rows.write(2, 3, _decision([], index=2), _terminal([]))
    assert rows.counts[:, :3].tolist() == [[2, 0, 1], [1, 2, 0], [0, 0, 0]]
    taken = rows.taken(rows.counts[:, 0])
    assert taken.tolist() == [0, 1, 2]  # core 0's two rows, then core 1's first (row 2)
    assert rows.d_id[taken].tolist() == [0, 3, 16]  # id * 3 + core
    assert rows.d_group[taken].tolist() == [2**40, 2**40, 2**40 + 1]  # int64 ids kept
    np.testing.assert_array_equal(rows.d_obs[0][taken][2], [1, 2])
    assert rows.d_mask[taken].astype(int).tolist() == [[0, 1, 0, 0, 1], [1, 0, 0, 1, 0],
                                                       [0, 0, 0, 0, 0]]  # fmt: skip
    ended = rows.taken(rows.counts[:, 1])
    assert rows.t_id[ended].tolist() == [22, 25] and rows.t_interrupted[ended].all()


def test_a_mask_that_does_not_fit_is_an_error(rows):
    with pytest.raises(
        SpecError, match=r"mask branches of shapes \[\(2, 2\)\] do not fit 1 agents"
    ):
        rows.write(0, 3, _decision([0], mask=[np.zeros((2, 2), bool)]), _terminal([]))


def test_grown_ranges_never_shrink_and_move_the_later_cores_rows(rows):
    layout = rows.layout
    assert layout.holds(1, _decision([0, 1, 2])) and not layout.holds(1, _decision([0, 1, 2, 3]))
    wide = _decision([0])
    wide.obs = [np.zeros((1, 3), np.float32)]
    assert not layout.holds(0, wide)  # another shape: a new layout, never a broadcast
    grown = layout.grown(1, 40, layout.observations)
    assert grown.rows == (2, 80, 2)
    assert grown.grown(1, 30, layout.observations).rows == (2, 80, 2)
    assert layout.grown(0, 1, layout.observations).rows == (MIN_ROWS, 3, 2)
    assert all(offset % 64 == 0 for *_, offset in grown.fields())
    bigger = Rows(grown)
    try:  # every core writes its held steps again into the grown segment
        bigger.write(2, 3, _decision([4], index=2), _terminal([]))
        assert bigger.counts[2, 0] == 1 and bigger.d_id[82] == 14
    finally:
        bigger.memory.unlink()
        bigger.close()


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
