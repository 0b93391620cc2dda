"""The shared memory of a :class:`~zooport.envs.core_pool.CorePool`: one control array, and one
segment per behaviour in which core ``i`` owns the rows ``[start[i], start[i] + rows[i])``."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace
from multiprocessing import shared_memory
from typing import TYPE_CHECKING, Any

import numpy as np

from zooport.envs.base_env import BehaviorSpec
from zooport.envs.steps import DecisionSteps, TerminalSteps
from zooport.errors import SpecError

__all__ = ["MIN_ROWS", "Control", "BehaviorLayout", "Rows", "pool_ids", "gather"]

#: The fewest rows a core's range gets (a core may spawn agents after its first step).
MIN_ROWS = 16
# A core's words: the pool writes SEQ (commands sent), COMMAND, SEED (-1: none) and SIDE_IN; the
# worker writes DONE (commands answered), STATUS, SIDE_OUT and SLEEPING (it blocks on its pipe).
SEQ, COMMAND, SEED, DONE, STATUS, SIDE_IN, SIDE_OUT, SLEEPING = range(8)
# Commands (ATTACH: map the segments on the pipe, write the held steps there), and statuses
# (NEEDS_ROOM: the rows need room, the request is on the pipe; FAILED: so is the error).
STEP, RESET, RENDER, CLOSE, STATE, ATTACH = range(1, 7)
OK, NEEDS_ROOM, FAILED = 0, 1, 2
COMMAND_NAMES = {STEP: "step", RESET: "reset", RENDER: "render", CLOSE: "close",
                 STATE: "global_state", ATTACH: "step"}  # fmt: skip
WAITING = 0  # in the pool's row (the last): it blocks on the pipes, so answer there too
N_DECISION, N_TERMINAL, MASKED, ACTIONS_SET = range(4)  # a segment's count table
_WORDS = 16
_INT32_MIN, _INT32_MAX = int(np.iinfo(np.int32).min), int(np.iinfo(np.int32).max)


class Block(shared_memory.SharedMemory):
    def close(self) -> None:
        with contextlib.suppress(BufferError):  # a numpy view is alive: the mapping goes with it
            super().close()

    def unlink(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            super().unlink()


class Control:
    """The control array of ``k`` cores and their side-channel areas (new unless ``name``)."""

    def __init__(self, k: int, side_bytes: int, name: str | None = None) -> None:
        words = (k + 1) * _WORDS * 8  # fresh shared memory is zeros
        self.memory = Block(name=name, create=name is None, size=words + 2 * k * side_bytes)
        self.words = np.ndarray((k + 1, _WORDS), np.int64, self.memory.buf)
        self.side = np.ndarray((2, k, side_bytes), np.uint8, self.memory.buf, words)  # in, out

    def put(self, word: int, index: int, data: bytes) -> bool:  # False: too big for the area
        fits = len(data) <= self.side.shape[2]
        if fits and data:  # (no channel traffic, the common case, writes one word)
            self.side[word - SIDE_IN, index, : len(data)] = np.frombuffer(data, np.uint8)
        self.words[index, word] = len(data) if fits else -1
        return fits

    def get(self, word: int, index: int) -> bytes | None:  # None: the bytes are on the pipe
        size = int(self.words[index, word])
        if size <= 0:
            return b"" if size == 0 else None
        return self.side[word - SIDE_IN, index, :size].tobytes()

    def close(self) -> None:
        self.words = self.side = None  # no view outlives the block
        self.memory.close()


@dataclass(frozen=True)
class BehaviorLayout:
    """One behaviour's segment: rows per core, observations, action sizes and mask columns."""

    name: str
    rows: tuple[int, ...]
    observations: tuple[tuple[tuple[int, ...], str], ...]
    continuous: int
    discrete: int
    mask_width: int

    @staticmethod
    def signature(*batches: Any) -> tuple[tuple[tuple[int, ...], str], ...]:
        # Of the first batch with rows: one that differs does not fit (the worker says so).
        batch = next((b for b in batches if len(b)), batches[0])
        return tuple((a.shape[1:], a.dtype.str) for a in map(np.asarray, batch.obs))

    def holds(self, index: int, batch: Any) -> bool:
        if not len(batch):
            return True
        return len(batch) <= self.rows[index] and self.signature(batch) == self.observations

    def grown(self, index: int, count: int, observations: Any) -> BehaviorLayout:
        rows = list(self.rows)
        rows[index] = max(rows[index], 2 * count, MIN_ROWS)
        return replace(self, rows=tuple(rows), observations=observations)

    def fields(self) -> list[tuple[str, tuple[int, ...], str, int]]:
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
            offset += -(-int(np.prod(shape)) * np.dtype(dtype).itemsize // 64) * 64
        return placed


class Rows:
    """Views of one behaviour's segment, a field per attribute (``d_obs``, ``t_obs``: lists)."""

    if TYPE_CHECKING:  # the fields of BehaviorLayout.fields(), set in __init__

        def __getattr__(self, field: str) -> np.ndarray: ...

    def __init__(self, layout: BehaviorLayout, name: str | None = None) -> None:  # None: new
        fields = layout.fields()
        *_, (_, shape, dtype, offset) = fields
        size = offset + int(np.prod(shape)) * np.dtype(dtype).itemsize
        self.memory, self.layout = Block(name, name is None, max(size, 1)), layout
        self.views = {f: np.ndarray(s, np.dtype(d), self.memory.buf, o) for f, s, d, o in fields}
        n_obs = len(layout.observations)
        self.d_obs = [self.views[f"d_obs{j}"] for j in range(n_obs)]
        self.t_obs = [self.views[f"t_obs{j}"] for j in range(n_obs)]
        self.__dict__.update(self.views)
        self.start = np.concatenate([[0], np.cumsum(layout.rows)[:-1]]).astype(np.int64)
        # Which core each row belongs to, and its place in that core's range.
        self.row_core = np.repeat(np.arange(len(layout.rows)), layout.rows)
        self.row_place = np.arange(sum(layout.rows)) - self.start[self.row_core]
        self.last: tuple[bytes, np.ndarray] = (b"", self.row_place[:0])

    def taken(self, counts: np.ndarray) -> np.ndarray:  # each core's first counts[core] rows
        if counts.tobytes() != self.last[0]:  # (kept: the counts rarely change between steps)
            self.last = counts.tobytes(), np.flatnonzero(self.row_place < counts[self.row_core])
        return self.last[1]

    def decided(self, ready: np.ndarray) -> np.ndarray:  # the rows of the cores' decisions
        return self.taken(np.where(ready, self.counts[:, N_DECISION], 0))

    def write(self, index: int, k: int, decision: Any, terminal: Any) -> None:
        name, start, masked = self.layout.name, int(self.start[index]), 0
        for kind, batch in (("d", decision), ("t", terminal)):
            end = start + len(batch)
            if end == start:
                continue
            for view, obs in zip(getattr(self, f"{kind}_obs"), batch.obs, strict=True):
                view[start:end] = obs
            self.views[f"{kind}_reward"][start:end] = batch.reward
            pool_ids(name, batch.agent_id, k, index, self.views[f"{kind}_id"][start:end])
            self.views[f"{kind}_group"][start:end] = batch.group_id
            self.views[f"{kind}_group_reward"][start:end] = batch.group_reward
            if kind == "t":
                self.t_interrupted[start:end] = batch.interrupted
            elif self.layout.mask_width and batch.action_mask is None:
                self.d_mask[start:end] = False  # every action available
            elif width := self.layout.mask_width:
                branches = [np.asarray(b) for b in batch.action_mask]
                shapes = [b.shape for b in branches]
                fits = all(len(s) == 2 and s[0] == len(batch) for s in shapes)
                if not fits or sum(s[1] for s in shapes) != width:
                    raise SpecError(
                        f"behavior {name!r}: action mask branches of shapes {shapes} do not fit "
                        f"{len(batch)} agents and {width} mask columns"
                    )
                self.d_mask[start:end] = np.concatenate(branches, axis=1)
                masked = 1
        self.counts[index] = (len(decision), len(terminal), masked, 0)

    def close(self) -> None:
        self.__dict__ = {"memory": self.memory, "layout": self.layout}
        self.memory.close()


def pool_ids(name: str, ids: Any, k: int, index: int, out: np.ndarray | None = None) -> np.ndarray:
    """Core ``index``'s agent ids as pool ids, ``id * k + index``, int32 (else a SpecError)."""
    ids = np.asarray(ids)
    out = np.empty(ids.shape, np.int32) if out is None else out
    # Checked on the core's ids, so the arithmetic cannot overflow: at once when every id is
    # in [0, high] (read as unsigned, a negative id is huge), else exactly.
    high, low = (_INT32_MAX - index) // k, -((index - _INT32_MIN) // k)
    if ids.size and not (
        ids.dtype.kind in "iu" and ids.view(f"u{ids.dtype.itemsize}").max() <= high
    ):
        if ids.min() < low or ids.max() > high:
            raise SpecError(
                f"behavior {name!r}: the pool ids (core id * {k} + core index) of core "
                f"{index}'s agents (ids {ids.min()}..{ids.max()}) go beyond int32; cores of a "
                f"pool of {k} must keep their ids within +-{_INT32_MAX // k}"
            )
    np.multiply(ids, k, out=out, casting="unsafe")
    if index:
        out += index
    return out


def gather(
    rows: Rows, spec: BehaviorSpec, ready: np.ndarray
) -> tuple[DecisionSteps, TerminalSteps]:
    """The DecisionSteps and the TerminalSteps of the cores ``ready``, in core order."""
    taken = rows.decided(ready)
    if len(taken):
        mask = None
        if (rows.counts[:, MASKED] * ready).any():  # a core without one: every action open
            branches = np.cumsum(spec.action_spec.discrete_branches)[:-1]
            mask = np.split(rows.d_mask.take(taken, 0), branches, axis=1)
        decision = DecisionSteps(  # (take: several times faster than [taken] on 2-d arrays)
            [o.take(taken, 0) for o in rows.d_obs], rows.d_reward[taken], rows.d_id[taken], mask,
            rows.d_group[taken], rows.d_group_reward[taken],
        )  # fmt: skip
    else:
        decision = DecisionSteps.empty(spec)
    ended = np.where(ready, rows.counts[:, N_TERMINAL], 0)
    if not ended.any():
        return decision, TerminalSteps.empty(spec)
    t = rows.taken(ended)
    terminal = TerminalSteps(
        [o.take(t, 0) for o in rows.t_obs], rows.t_reward[t], rows.t_interrupted[t], rows.t_id[t],
        rows.t_group[t], rows.t_group_reward[t],
    )  # fmt: skip
    return decision, terminal
