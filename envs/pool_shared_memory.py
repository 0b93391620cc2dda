"""The shared memory of a :class:`~zooport.envs.core_pool.CorePool`: one control array for
every worker, and one segment per behaviour holding every core's rows.

The control array has a row of int64 words per core (the command and its sequence number,
written by the pool; the sequence number answered and the status, written by the worker) and
a last row of the pool's own words, then two side-channel byte areas per core. A behaviour's
segment holds the DecisionSteps, TerminalSteps and action rows of all K cores: core ``i``
owns the rows ``[start[i], start[i] + rows[i])`` and writes its count of decisions and
terminal steps into row ``i`` of a ``(K, 4)`` table. Ranges are sized from what the cores
reported (twice their agents, at least :data:`MIN_ROWS`); a core that outgrows its range, or
a behaviour that appears, gets a new segment (:meth:`BehaviorLayout.grown`). Nothing is cast,
truncated or broadcast. Blocks are unlinked once every worker has attached them, so no name
outlives the processes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from multiprocessing import shared_memory
from typing import Any

import numpy as np

from zooport.errors import SpecError

__all__ = ["MIN_ROWS", "Block", "Control", "BehaviorLayout", "Rows", "pool_ids", "unlink_quietly"]

#: The fewest rows a core's range gets (a core may spawn agents after its first step).
MIN_ROWS = 16
_ALIGN = 64
# A core's control words: the pool writes SEQ (commands sent), COMMAND, SEED, HAS_SEED and
# SIDE_IN; the worker writes DONE (commands answered), STATUS, SIDE_OUT, SLEEPING (it blocks
# on its pipe: wake it there) and GENERATION (the segments it has attached).
SEQ, COMMAND, SEED, HAS_SEED, DONE, STATUS, SIDE_IN, SIDE_OUT, SLEEPING, GENERATION = range(10)
# The pool's row (the last): WAITING (it blocks on the pipes: answer there too), and the
# generation of the segments the workers must attach before their next command.
WAITING, POOL_GENERATION = 0, 1
# Columns of a segment's count table.
N_DECISION, N_TERMINAL, MASKED, ACTIONS_SET = range(4)
_WORDS = 16
_INT32_MIN, _INT32_MAX = int(np.iinfo(np.int32).min), int(np.iinfo(np.int32).max)


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN


class Block(shared_memory.SharedMemory):
    """A ``SharedMemory`` whose unmapping waits for the last numpy view instead of raising."""

    def close(self) -> None:
        try:
            super().close()
        except BufferError:
            pass  # a view is alive: the mapping goes with it (the name is unlinked already)

    def __del__(self) -> None:
        try:
            self.close()
        except OSError:
            pass


def unlink_quietly(memory: shared_memory.SharedMemory) -> None:
    """Unlinks a block whose name may already be gone."""
    try:
        memory.unlink()
    except FileNotFoundError:
        pass


class Control:
    """The control array of a pool of ``k`` cores (see the module docstring)."""

    def __init__(self, memory: shared_memory.SharedMemory, k: int, side_bytes: int) -> None:
        self.memory = memory
        buffer = memory.buf
        self.words = np.ndarray((k + 1, _WORDS), np.int64, buffer)
        offset = (k + 1) * _WORDS * 8
        self.side_in = np.ndarray((k, side_bytes), np.uint8, buffer, offset)
        self.side_out = np.ndarray((k, side_bytes), np.uint8, buffer, offset + k * side_bytes)

    @classmethod
    def create(cls, k: int, side_bytes: int) -> Control:
        memory = Block(create=True, size=(k + 1) * _WORDS * 8 + 2 * k * side_bytes)
        control = cls(memory, k, side_bytes)
        control.words[:] = 0
        return control

    def put(self, area: np.ndarray, index: int, word: int, data: bytes) -> bool:
        """Writes ``data`` into core ``index``'s ``area``; False (the word -1) when too big."""
        words = self.words[index]
        if len(data) > area.shape[1]:
            words[word] = -1
            return False
        if data:
            area[index, : len(data)] = np.frombuffer(data, np.uint8)
        words[word] = len(data)
        return True

    def get(self, area: np.ndarray, index: int, word: int) -> bytes | None:
        """Core ``index``'s bytes in ``area``; None when they travel on the pipe."""
        size = int(self.words[index, word])
        return None if size < 0 else area[index, :size].tobytes()

    def close(self) -> None:
        self.words = self.side_in = self.side_out = None
        self.memory.close()


@dataclass(frozen=True)
class BehaviorLayout:
    """One behaviour's segment: rows per core, ``(row shape, dtype str)`` per observation,
    continuous size, discrete branches and mask columns (the sum of the branch sizes)."""

    name: str
    rows: tuple[int, ...]
    observations: tuple[tuple[tuple[int, ...], str], ...]
    continuous: int
    discrete: int
    mask_width: int

    @staticmethod
    def signature(batch: Any) -> tuple[tuple[tuple[int, ...], str], ...]:
        """``(row shape, dtype str)`` of each observation of a DecisionSteps or TerminalSteps."""
        arrays = [np.asarray(o) for o in batch.obs]
        return tuple((tuple(int(d) for d in a.shape[1:]), a.dtype.str) for a in arrays)

    def holds(self, index: int, batch: Any) -> bool:
        """Whether core ``index``'s batch fits its range as it is (the per-step check)."""
        n = len(batch)
        if not n:
            return True  # nothing to write: an empty batch's dtype does not matter
        if n > self.rows[index] or len(batch.obs) != len(self.observations):
            return False
        for obs, (shape, dtype) in zip(batch.obs, self.observations, strict=True):
            if type(obs) is not np.ndarray:
                obs = np.asarray(obs)
            if obs.shape[1:] != shape or obs.dtype.str != dtype:
                return False
        return True

    def grown(self, index: int, count: int, observations: Any) -> BehaviorLayout:
        """This layout with room for twice ``count`` rows of core ``index`` (never fewer than
        before) and these observations."""
        rows = list(self.rows)
        rows[index] = max(rows[index], 2 * count, MIN_ROWS)
        return replace(self, rows=tuple(rows), observations=observations)

    @property
    def starts(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.rows)[:-1]]).astype(np.int64)

    def fields(self) -> list[tuple[str, tuple[int, ...], str, int]]:
        """``(field, shape, dtype, offset)`` of each array, the count table first."""
        total, k = sum(self.rows), len(self.rows)
        fields: list[tuple[str, tuple[int, ...], str]] = [("counts", (k, 4), "<i8")]
        for kind in ("d", "t"):
            fields += [(f"{kind}_obs{j}", (total, *shape), dtype)
                       for j, (shape, dtype) in enumerate(self.observations)]  # fmt: skip
            fields += [(f"{kind}_reward", (total,), "<f4"), (f"{kind}_id", (total,), "<i4"),
                       (f"{kind}_group", (total,), "<i8"),  # any int64 group id keeps its value
                       (f"{kind}_group_reward", (total,), "<f4")]  # fmt: skip
        fields += [("d_mask", (total, self.mask_width), "|b1"), ("t_interrupted", (total,), "|b1"),
                   ("continuous", (total, self.continuous), "<f4"),
                   ("discrete", (total, self.discrete), "<i4")]  # fmt: skip
        placed, offset = [], 0
        for field, shape, dtype in fields:
            placed.append((field, shape, dtype, offset))
            offset = _aligned(offset + int(np.prod(shape)) * np.dtype(dtype).itemsize)
        return placed


class Rows:
    """Views of one behaviour's segment; each field is an attribute (``d_reward``,
    ``t_interrupted``, ``continuous``...), observations are the lists ``d_obs``/``t_obs``."""

    counts: np.ndarray
    d_reward: np.ndarray
    d_id: np.ndarray
    d_group: np.ndarray
    d_group_reward: np.ndarray
    d_mask: np.ndarray
    t_reward: np.ndarray
    t_id: np.ndarray
    t_group: np.ndarray
    t_group_reward: np.ndarray
    t_interrupted: np.ndarray
    continuous: np.ndarray
    discrete: np.ndarray

    def __init__(self, memory: shared_memory.SharedMemory, layout: BehaviorLayout) -> None:
        self.memory = memory
        self.layout = layout
        self.start = layout.starts
        views = {f: np.ndarray(s, np.dtype(d), memory.buf, o) for f, s, d, o in layout.fields()}
        n_obs = len(layout.observations)
        self.d_obs = [views.pop(f"d_obs{j}") for j in range(n_obs)]
        self.t_obs = [views.pop(f"t_obs{j}") for j in range(n_obs)]
        self.__dict__.update(views)
        # Which core each row belongs to, and its place in that core's range.
        self.row_core = np.repeat(np.arange(len(layout.rows)), layout.rows)
        self.row_place = np.arange(sum(layout.rows)) - self.start[self.row_core]

    @classmethod
    def create(cls, layout: BehaviorLayout) -> Rows:
        *_, (field, shape, dtype, offset) = layout.fields()
        size = offset + int(np.prod(shape)) * np.dtype(dtype).itemsize
        rows = cls(Block(create=True, size=max(size, 1)), layout)
        rows.counts[:] = 0
        return rows

    def taken(self, counts: np.ndarray) -> np.ndarray:
        """The rows of each core's first ``counts[core]`` entries, in core order."""
        return np.flatnonzero(self.row_place < counts[self.row_core])

    def write(self, index: int, k: int, decision: Any, terminal: Any) -> None:
        """Writes core ``index``'s DecisionSteps and TerminalSteps (pool ids) into its range."""
        name, start = self.layout.name, int(self.start[index])
        masked = 0
        for kind, batch in (("d", decision), ("t", terminal)):
            end = start + len(batch)
            if end == start:
                continue
            for view, obs in zip(getattr(self, f"{kind}_obs"), batch.obs, strict=True):
                view[start:end] = obs
            getattr(self, f"{kind}_reward")[start:end] = batch.reward
            pool_ids(name, batch.agent_id, k, index, getattr(self, f"{kind}_id")[start:end])
            getattr(self, f"{kind}_group")[start:end] = batch.group_id
            getattr(self, f"{kind}_group_reward")[start:end] = batch.group_reward
            if kind == "t":
                self.t_interrupted[start:end] = batch.interrupted
            elif self.layout.mask_width:
                masked = self._write_mask(start, end, decision.action_mask)
        self.counts[index] = (len(decision), len(terminal), masked, 0)

    def _write_mask(self, start: int, end: int, mask: Any) -> int:
        rows = self.d_mask[start:end]
        if mask is None:
            rows[:] = False  # every action available
            return 0
        column, width = 0, self.layout.mask_width
        for branch in mask:
            branch = np.asarray(branch)
            size = branch.shape[1] if branch.ndim == 2 else -1
            if branch.shape != (end - start, size) or column + size > width:
                raise SpecError(
                    f"behavior {self.layout.name!r}: an action mask branch of shape "
                    f"{branch.shape} does not fit {end - start} agents and {width} mask columns"
                )
            rows[:, column : column + size] = branch
            column += size
        if column != width:
            raise SpecError(
                f"behavior {self.layout.name!r}: the action mask has {column} columns, the "
                f"branches need {width}"
            )
        return 1

    def copy_core(self, old: Rows, index: int) -> None:
        """Copies core ``index``'s rows of this step from an older segment of the behaviour."""
        n = int(old.counts[index, :2].max())
        self.counts[index] = old.counts[index]
        a, b = int(old.start[index]), int(self.start[index])
        for field, *_ in self.layout.fields()[1:]:
            source, target = _field(old, field), _field(self, field)
            if source.shape[1:] != target.shape[1:] or source.dtype != target.dtype:
                if n:
                    raise SpecError(
                        f"behavior {self.layout.name!r}: core {index}'s {field} rows have "
                        f"{source.shape[1:]} {source.dtype}, another core's "
                        f"{target.shape[1:]} {target.dtype}; every core of a pool must agree"
                    )
                continue
            target[b : b + n] = source[a : a + n]

    def close(self) -> None:
        self.__dict__ = {"memory": self.memory, "layout": self.layout}
        self.memory.close()


def _field(rows: Rows, field: str) -> np.ndarray:
    if "_obs" in field:
        kind, j = field.split("_obs")
        return getattr(rows, f"{kind}_obs")[int(j)]
    return getattr(rows, field)


def pool_ids(name: str, ids: Any, k: int, index: int, out: np.ndarray | None = None) -> np.ndarray:
    """Core ``index``'s agent ids (of a pool of ``k``) as pool ids, ``id * k + index``, int32.

    Raises:
        SpecError: a pool id would leave int32.

    Example:
        >>> pool_ids("B", np.array([0, 1, 5], np.int32), 3, 2).tolist()
        [2, 5, 17]
    """
    ids = np.asarray(ids)
    if out is None:
        out = np.empty(ids.shape, np.int32)
    if not ids.size:
        return out
    # Checked on the core's ids, so the arithmetic cannot overflow: at once when every id is
    # in [0, high] (read as unsigned, a negative id is huge), else exactly.
    high = (_INT32_MAX - index) // k
    if not (ids.dtype.kind in "iu" and ids.view(f"u{ids.dtype.itemsize}").max() <= high):
        low = -((index - _INT32_MIN) // k)
        smallest, largest = ids.min(), ids.max()
        if smallest < low or largest > high:
            raise SpecError(
                f"behavior {name!r}: the pool ids (core id * {k} + core index) of core "
                f"{index}'s agents (ids {smallest}..{largest}) go beyond int32; cores of a pool "
                f"of {k} must keep their ids within +-{_INT32_MAX // k}"
            )
    np.multiply(ids, k, out=out, casting="unsafe")
    if index:
        out += index
    return out


def layout_for(name: str, k: int, spec: Any, observations: Sequence[Any]) -> BehaviorLayout:
    """A first layout of a behaviour: :data:`MIN_ROWS` per core, these observations."""
    branches = tuple(spec.action_spec.discrete_branches)
    return BehaviorLayout(
        name, (MIN_ROWS,) * k, tuple(observations), spec.action_spec.continuous_size,
        len(branches), int(sum(branches)),
    )  # fmt: skip
