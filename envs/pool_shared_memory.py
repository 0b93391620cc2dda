"""The shared memory between a :class:`~zooport.envs.core_pool.CorePool` and its workers.

Classes:
    ControlBlock: a worker's fixed block: command words and the side-channel bytes of a step.
    BehaviorLayout: what one behaviour occupies in a data segment (rows, observation shapes
        and dtypes, action sizes).
    DataLayout: every behaviour's layout, with the byte offset of each array.
    BehaviorBuffers: numpy views of one behaviour's arrays in a data segment.
    DataSegment: one data segment (a ``SharedMemory`` block) and its views.

Each worker has one control block for its whole life and one data segment at a time. The
data segment holds, per behaviour, a header row ``(decisions, terminals, actions set, mask
present)`` and row arrays of ``capacity`` rows: the DecisionSteps fields (observations,
reward, agent id, group id, group reward, the action mask as one ``(rows, sum of branches)``
bool array), the TerminalSteps fields (observations, reward, interrupted, agent id, group id,
group reward) and the actions (continuous float32, discrete int32). A step writes the first
``n`` rows; the header says ``n``.

The layout is a pure function of what a core reported (:meth:`DataLayout.fitting`): row
shapes and dtypes of its observations, its action sizes, and room for twice the agents it
reported (at least :data:`MIN_ROWS`). A core that later reports more agents, another
observation shape or dtype, or a new behaviour, gets a new segment (the worker asks over the
pipe, the pool creates it): buffers grow, and nothing is cast, truncated or broadcast.

Blocks are created by the pool's process and unlinked as soon as the worker has attached,
so no named block outlives the pool, even when a process is killed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from multiprocessing import shared_memory
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "MIN_ROWS",
    "ControlBlock",
    "BehaviorLayout",
    "DataLayout",
    "BehaviorBuffers",
    "DataSegment",
]

#: The fewest rows a behaviour's arrays get (a core may spawn agents after its first step).
MIN_ROWS = 16
#: Arrays start on a cache line, so two arrays never share one.
_ALIGN = 64

# Header columns of a behaviour in a data segment.
N_DECISION, N_TERMINAL, ACTIONS_SET, MASK_PRESENT = range(4)


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN


class _Block(shared_memory.SharedMemory):
    """A ``SharedMemory`` whose unmapping waits for the last numpy view instead of raising.

    ``close()`` with a view still alive (a ``BufferError``) leaves the mapping to be freed
    with that view; its name is unlinked already, so nothing outlives the processes.
    """

    def close(self) -> None:
        try:
            super().close()
        except BufferError:
            pass

    def __del__(self) -> None:
        try:
            self.close()
        except OSError:
            pass


class ControlBlock:
    """A worker's command words and side-channel byte areas, in one shared block.

    Words (int64): ``COMMAND``, ``SEED`` and ``HAS_SEED`` (of a reset), ``STATUS`` (what the
    worker reports), ``SIDE_IN``/``SIDE_OUT`` (the byte counts in the two side-channel areas,
    -1 when the bytes did not fit and travel on the pipe), ``SEQUENCE`` (commands sent) and
    ``DONE`` (commands answered).

    Args:
        memory: the shared block (see :meth:`create` and :meth:`attach`).
        side_bytes: the size of each side-channel area.
    """

    COMMAND, SEED, HAS_SEED, STATUS, SIDE_IN, SIDE_OUT, SEQUENCE, DONE = range(8)
    _WORDS = 16
    _HEADER = _WORDS * 8

    def __init__(self, memory: shared_memory.SharedMemory, side_bytes: int) -> None:
        self.memory = memory
        self.side_bytes = side_bytes
        buffer = memory.buf
        self.words = np.ndarray((self._WORDS,), np.int64, buffer)
        self.side_in = np.ndarray((side_bytes,), np.uint8, buffer, self._HEADER)
        self.side_out = np.ndarray((side_bytes,), np.uint8, buffer, self._HEADER + side_bytes)

    @classmethod
    def size(cls, side_bytes: int) -> int:
        """The block size for side-channel areas of ``side_bytes`` each."""
        return cls._HEADER + 2 * side_bytes

    @classmethod
    def create(cls, side_bytes: int) -> ControlBlock:
        """A new zeroed block (in the pool's process)."""
        memory = _Block(create=True, size=cls.size(side_bytes))
        block = cls(memory, side_bytes)
        block.words[:] = 0
        return block

    @classmethod
    def attach(cls, name: str, side_bytes: int) -> ControlBlock:
        """The block ``name`` (in a worker)."""
        return cls(_Block(name=name), side_bytes)

    def put_bytes(self, area: np.ndarray, word: int, data: bytes | bytearray) -> bool:
        """Writes ``data`` into ``area``; False (and the word -1) when it does not fit."""
        if len(data) > area.size:
            self.words[word] = -1
            return False
        if data:
            area[: len(data)] = np.frombuffer(data, np.uint8)
        self.words[word] = len(data)
        return True

    def close(self) -> None:
        """Drops the views and unmaps the block."""
        self.words = self.side_in = self.side_out = None
        self.memory.close()


@dataclass(frozen=True)
class BehaviorLayout:
    """One behaviour's share of a data segment.

    Attributes:
        name: the behaviour.
        rows: rows of every array (decisions and terminals each).
        observations: ``(row shape, dtype str)`` of each observation, as the core reports it.
        continuous: continuous action size.
        discrete: number of discrete branches.
        mask_width: the sum of the discrete branch sizes (the mask's columns).
    """

    name: str
    rows: int
    observations: tuple[tuple[tuple[int, ...], str], ...]
    continuous: int
    discrete: int
    mask_width: int

    def holds(self, count: int, observations: Sequence[np.ndarray]) -> bool:
        """Whether ``count`` rows of these observations fit as they are (no cast, no broadcast)."""
        if count > self.rows or len(observations) != len(self.observations):
            return False
        for array, (shape, dtype) in zip(observations, self.observations, strict=True):
            if array.shape[1:] != shape or array.dtype.str != dtype:
                return False
        return True


@dataclass(frozen=True)
class DataLayout:
    """Every behaviour's layout; offsets follow from it, identically in both processes."""

    behaviors: tuple[BehaviorLayout, ...]

    @staticmethod
    def fitting(
        counts: Mapping[str, int],
        observations: Mapping[str, Sequence[np.ndarray]],
        actions: Mapping[str, tuple[int, tuple[int, ...]]],
        previous: DataLayout | None = None,
    ) -> DataLayout:
        """A layout with room for twice ``counts[name]`` rows of each behaviour.

        ``observations[name]`` are arrays with the row shapes and dtypes to hold;
        ``actions[name]`` is ``(continuous size, discrete branches)``. A behaviour keeps the
        rows ``previous`` gave it when they are enough, so a layout never shrinks.
        """
        before = {b.name: b.rows for b in previous.behaviors} if previous else {}
        behaviors = []
        for name, count in counts.items():
            rows = max(MIN_ROWS, 2 * count)
            if before.get(name, 0) >= count:
                rows = max(rows, before[name])
            continuous, branches = actions[name]
            obs = tuple(
                (tuple(int(d) for d in o.shape[1:]), o.dtype.str) for o in observations[name]
            )
            behaviors.append(
                BehaviorLayout(name, rows, obs, continuous, len(branches), int(sum(branches)))
            )
        return DataLayout(tuple(behaviors))

    def arrays(self) -> list[list[tuple[str, tuple[int, ...], str, int]]]:
        """Per behaviour: ``(field, shape, dtype, offset)`` of each array; the header first."""
        offset = _aligned(len(self.behaviors) * 4 * 8)
        result = []
        for b in self.behaviors:
            fields: list[tuple[str, tuple[int, ...], str]] = []
            for kind in ("decision", "terminal"):
                fields += [(f"{kind}_obs{j}", (b.rows, *shape), dtype)
                           for j, (shape, dtype) in enumerate(b.observations)]  # fmt: skip
                fields += [
                    (f"{kind}_reward", (b.rows,), "<f4"),
                    (f"{kind}_agent_id", (b.rows,), "<i4"),
                    (f"{kind}_group_id", (b.rows,), "<i8"),  # any int64 id keeps its value
                    (f"{kind}_group_reward", (b.rows,), "<f4"),
                ]
            fields += [
                ("decision_mask", (b.rows, b.mask_width), "|b1"),
                ("terminal_interrupted", (b.rows,), "|b1"),
                ("continuous", (b.rows, b.continuous), "<f4"),
                ("discrete", (b.rows, b.discrete), "<i4"),
            ]
            placed = []
            for field, shape, dtype in fields:
                placed.append((field, shape, dtype, offset))
                offset = _aligned(offset + int(np.prod(shape)) * np.dtype(dtype).itemsize)
            result.append(placed)
        return result

    @property
    def nbytes(self) -> int:
        """The segment size."""
        end = _aligned(len(self.behaviors) * 4 * 8)
        for placed in self.arrays():
            if placed:
                field, shape, dtype, offset = placed[-1]
                end = offset + int(np.prod(shape)) * np.dtype(dtype).itemsize
        return max(end, 1)


class StepRows(NamedTuple):
    """The views a DecisionSteps or a TerminalSteps is written to, one row per agent."""

    obs: list[np.ndarray]
    reward: np.ndarray
    agent_id: np.ndarray
    group_id: np.ndarray
    group_reward: np.ndarray

    @classmethod
    def of(cls, views: dict[str, np.ndarray], kind: str, n_obs: int) -> StepRows:
        """The ``kind`` (``"decision"`` or ``"terminal"``) views of a behaviour."""
        return cls(
            [views[f"{kind}_obs{j}"] for j in range(n_obs)],
            *(
                views[f"{kind}_{name}"]
                for name in ("reward", "agent_id", "group_id", "group_reward")
            ),
        )


class BehaviorBuffers:
    """Views of one behaviour's arrays; ``header`` is its row of four int64 words.

    ``decision`` and ``terminal`` are the :class:`StepRows` of its DecisionSteps and
    TerminalSteps; ``decision_mask``, ``terminal_interrupted``, ``continuous`` and
    ``discrete`` the rest.
    """

    def __init__(self, layout: BehaviorLayout, header: np.ndarray, views: dict[str, np.ndarray]):
        self.layout = layout
        self.header = header
        n_obs = len(layout.observations)
        self.decision = StepRows.of(views, "decision", n_obs)
        self.terminal = StepRows.of(views, "terminal", n_obs)
        self.decision_mask = views["decision_mask"]
        self.terminal_interrupted = views["terminal_interrupted"]
        self.continuous = views["continuous"]
        self.discrete = views["discrete"]
        self.rows = layout.rows
        self._obs_checks = [(shape, np.dtype(dtype)) for shape, dtype in layout.observations]

    def fits(self, batch: Any) -> bool:
        """Whether a DecisionSteps or TerminalSteps fits as it is (the per-step check)."""
        n = len(batch)
        if not n:
            return True  # nothing to write: an empty batch's dtype does not matter
        if n > self.rows or len(batch.obs) != len(self._obs_checks):
            return False
        for obs, (shape, dtype) in zip(batch.obs, self._obs_checks, strict=True):
            if type(obs) is not np.ndarray:
                obs = np.asarray(obs)
            if obs.shape[1:] != shape or obs.dtype != dtype:
                return False
        return True


class DataSegment:
    """A data segment: a ``SharedMemory`` block laid out by a :class:`DataLayout`.

    Attributes:
        layout: the layout.
        memory: the block.
        behaviors: ``{name: BehaviorBuffers}`` in layout order.
    """

    def __init__(self, memory: shared_memory.SharedMemory, layout: DataLayout) -> None:
        self.memory = memory
        self.layout = layout
        buffer = memory.buf
        headers = np.ndarray((len(layout.behaviors), 4), np.int64, buffer)
        self.behaviors: dict[str, BehaviorBuffers] = {}
        for i, (b, placed) in enumerate(zip(layout.behaviors, layout.arrays(), strict=True)):
            views = {
                field: np.ndarray(shape, np.dtype(dtype), buffer, offset)
                for field, shape, dtype, offset in placed
            }
            self.behaviors[b.name] = BehaviorBuffers(b, headers[i], views)

    @classmethod
    def create(cls, layout: DataLayout) -> DataSegment:
        """A new block for ``layout`` (in the pool's process), headers zeroed."""
        memory = _Block(create=True, size=layout.nbytes)
        segment = cls(memory, layout)
        for buffers in segment.behaviors.values():
            buffers.header[:] = 0
        return segment

    @classmethod
    def attach(cls, name: str, layout: DataLayout) -> DataSegment:
        """The block ``name`` (in a worker)."""
        return cls(_Block(name=name), layout)

    def close(self) -> None:
        """Drops the views and unmaps the block."""
        self.behaviors = {}
        self.memory.close()


def unlink_quietly(memory: shared_memory.SharedMemory) -> None:
    """Unlinks a block whose name may already be gone."""
    try:
        memory.unlink()
    except FileNotFoundError:
        pass
