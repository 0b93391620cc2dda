"""The pool's side of its worker processes: one control array for all of them. A command is one
vectorised write; a wait spins on the array, then blocks on the pipes and the process sentinels
in short slices, so a death or a hang becomes a :class:`~zooport.errors.CorePoolError` naming
the core in bounded time.
"""

from __future__ import annotations

import os
import pickle
import signal
import time
from collections import deque
from collections.abc import Sequence
from multiprocessing import connection as mp_connection
from typing import Any

import numpy as np

from zooport.envs.pool_shared_memory import (
    COMMAND,
    DONE,
    GENERATION,
    HAS_SEED,
    MIN_ROWS,
    POOL_GENERATION,
    SEED,
    SEQ,
    SIDE_IN,
    SIDE_OUT,
    SLEEPING,
    STATUS,
    WAITING,
    BehaviorLayout,
    Control,
    Rows,
    unlink_quietly,
)
from zooport.envs.pool_worker import (
    CLOSE,
    COMMAND_NAMES,
    FAILED,
    NEEDS_ROOM,
    SLICE,
    WRITE,
    WorkerConfig,
    next_message,
    run_worker,
)
from zooport.errors import CorePoolError, SpecError

__all__ = ["Workers", "CLOSE_GRACE"]

#: How long ``close()`` waits for the workers to close their cores before stopping them (s).
CLOSE_GRACE = 10.0

_yield = getattr(os, "sched_yield", lambda: time.sleep(0))


def _signal_name(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"was killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"was killed by signal {-exitcode}"
    return f"exited with code {exitcode}"


class Workers:
    """The worker processes of a pool of ``k`` cores (``factories``: ``{index: pickled
    factory}``) and the shared memory: the control array and the behaviours' segments."""

    def __init__(
        self,
        k: int,
        factories: dict[int, bytes],
        relay_ids: Sequence[Sequence[Any]],
        context: Any,
        spin: float,
        side_bytes: int,
        timeout: float | None,
    ) -> None:
        self.k, self.spin, self.timeout = k, spin, timeout
        self.indices = np.array(sorted(factories), np.int64)
        first = int(self.indices[0]) if len(self.indices) else k
        # Every worker at once: a slice, so a command or a wait is a view, not a gather.
        self.every: slice | np.ndarray = slice(first, k)
        self.control = Control.create(k, side_bytes)
        self.words = self.control.words
        self.processes: dict[int, Any] = {}
        self.connections: dict[int, Any] = {}
        self.inboxes: dict[int, deque[Any]] = {}
        self.descriptions: dict[int, dict[str, Any]] = {}
        self.started = np.zeros(k)
        self.doing = "start"
        self.rows: dict[str, Rows] = {}
        self.generation = 0
        self._unlink_later: list[tuple[int, Any]] = []
        self.closed = False
        try:
            for i, data in factories.items():
                self.descriptions[i] = {"type": "?"}
                self.inboxes[i] = deque()
                ours, theirs = context.Pipe()
                config = WorkerConfig(
                    i, data, tuple(relay_ids[i]), self.control.memory.name, k, side_bytes,
                    theirs, spin,
                )  # fmt: skip
                process = context.Process(
                    target=run_worker, args=(config,), name=f"zooport-core-{i}", daemon=True
                )
                self.processes[i], self.connections[i] = process, ours
                self.started[i] = time.monotonic()
                try:
                    process.start()
                finally:
                    theirs.close()
        except BaseException:
            self.close()
            raise

    def label(self, i: int) -> str:
        pid = self.processes[i].pid
        return f"core {i} ({self.descriptions[i]['type']}, worker pid {pid})"

    def wait_ready(self) -> None:
        """Waits for every worker's ``ready`` (its core built) within the timeout."""
        for i in self.indices.tolist():
            message = self.receive(i)
            if message[0] == "error":
                raise self._raised(i, message[1], during="building its core")
            self.descriptions[i] = message[1]
        self.doing = "step"
        unlink_quietly(self.control.memory)  # every worker has attached it

    # ------------------------------------------------------------------ commands

    def command(
        self, command: int, which: Any, seeds: Any = None, sides: dict[int, bytes] | None = None
    ) -> None:
        """Tells the workers ``which`` (a slice or an index array) to run ``command``."""
        words, late = self.words, []
        if sides:
            for i, data in sides.items():
                if not self.control.put(self.control.side_in, i, SIDE_IN, data):
                    late.append((i, data))
        words[which, COMMAND] = command
        words[which, HAS_SEED] = seeds is not None
        if seeds is not None:
            words[which, SEED] = seeds
        words[which, SEQ] += 1
        self.started[which] = time.monotonic()
        self.doing = COMMAND_NAMES[command]
        asleep = words[which, SLEEPING]
        if asleep.any():
            indices = np.arange(self.k)[which]
            for i in indices[asleep != 0].tolist():
                self._send(i, None)  # a wake-up
        for i, data in late:  # after the command: the worker is reading, a large send cannot block
            self._send(i, ("side", data))

    def answered(self, which: Any) -> np.ndarray:
        return self.words[which, DONE] == self.words[which, SEQ]

    def wait(self, which: Any, need: int | None = None, among: np.ndarray | None = None) -> None:
        """Waits until every worker of ``which`` answered (async: ``need`` of ``among``)."""
        if need is None and self.answered(which).all():
            return
        self._wait_slowly(which, need, among)

    def _enough(self, which: Any, need: int | None, among: np.ndarray | None) -> bool:
        if need is None:
            return bool(self.answered(which).all())
        return int((self.answered(slice(0, self.k)) & among).sum()) >= need

    def _wait_slowly(self, which: Any, need: int | None, among: np.ndarray | None) -> None:
        deadline = time.perf_counter() + self.spin
        while time.perf_counter() < deadline:
            if self._enough(which, need, among):
                return
            _yield()
        candidates = np.arange(self.k)[which if among is None else among]
        indices = [i for i in candidates.tolist() if i in self.processes]
        self.words[-1, WAITING] = 1
        try:
            while not self._enough(which, need, among):
                waiting = [i for i in indices if self.words[i, DONE] != self.words[i, SEQ]]
                handles = [self.connections[i] for i in waiting]
                handles += [self.processes[i].sentinel for i in waiting]
                for ready in mp_connection.wait(handles, SLICE):
                    for i in waiting:
                        if ready is self.connections[i]:
                            self._drain(i)
                for i in waiting:
                    self._check_alive(i)
        finally:
            self.words[-1, WAITING] = 0

    def _drain(self, i: int) -> None:
        """Moves what worker ``i`` sent into its inbox (wake-ups dropped)."""
        connection = self.connections[i]
        try:
            while connection.poll(0):
                message = connection.recv()
                if message is not None:
                    self.inboxes[i].append(message)
        except (EOFError, OSError):
            pass  # it died: the sentinel says so

    def _check_alive(self, i: int) -> None:
        if self.words[i, DONE] == self.words[i, SEQ]:
            return
        if not self.processes[i].is_alive():
            if self.words[i, DONE] != self.words[i, SEQ]:
                raise self._died(i)
        elif self.timeout is not None and time.monotonic() - self.started[i] > self.timeout:
            raise self._hung(i)

    def failures(self, which: Any) -> list[int]:
        """The workers of ``which`` whose answer is not a plain OK (after :meth:`wait`)."""
        statuses = self.words[which, STATUS]
        if not statuses.any():
            return []
        return np.arange(self.k)[which][statuses != 0].tolist()

    def requests(self, indices: list[int]) -> dict[int, Any]:
        """``{core: needs}`` of the workers that answered NEEDS_ROOM; a failed one raises."""
        requests = {}
        for i in indices:
            status = int(self.words[i, STATUS])
            if status == FAILED:
                raise self._raised(i, self.receive(i)[1], during=self.doing)
            if status == NEEDS_ROOM:
                _, needs, description = self.receive(i)
                self.descriptions[i] = description
                requests[i] = needs
        return requests

    def side_out(self, i: int) -> bytes:
        data = self.control.get(self.control.side_out, i, SIDE_OUT)
        return self.receive(i)[1] if data is None else data

    # ------------------------------------------------------------------ segments

    def grow(self, requests: dict[int, dict[str, Any]], specs: Any) -> None:
        """New segments for the behaviours of ``requests``, the other cores' rows copied over;
        the workers that asked write their rows now."""
        grown: dict[str, BehaviorLayout] = {}
        for i, needs in requests.items():
            for name, (count, observations) in needs.items():
                layout = grown.get(name) or self._first_layout(name, specs, observations)
                if layout.observations != observations and count:
                    self._check_observations(layout, i, observations)
                grown[name] = layout.grown(i, count, observations if count else layout.observations)
        self.generation += 1
        segments = {}
        for name, layout in grown.items():
            rows = Rows.create(layout)
            old = self.rows.get(name)
            for i in range(self.k):
                if old is not None and i not in requests:
                    rows.copy_core(old, i)
            if old is not None:
                self._unlink_later.append((self.generation, old.memory))
            self.rows[name] = rows
            self._unlink_later.append((self.generation, rows.memory))
            segments[name] = (rows.memory.name, layout)
        for i in self.indices.tolist():
            self._send(i, ("segments", (self.generation, segments)))
        self.words[-1, POOL_GENERATION] = self.generation
        again = np.array([i for i in requests if i in self.processes], np.int64)
        if len(again):
            self.command(WRITE, again)

    def _first_layout(self, name: str, specs: Any, observations: Any) -> BehaviorLayout:
        old = self.rows.get(name)
        if old is not None:
            return old.layout
        spec = specs.get(name)
        if spec is None:  # a behaviour a core reports late: the first description has it
            spec = next(d["specs"][name] for d in self.descriptions.values() if name in d["specs"])
        branches = tuple(spec.action_spec.discrete_branches)
        return BehaviorLayout(
            name, (MIN_ROWS,) * self.k, observations, spec.action_spec.continuous_size,
            len(branches), int(sum(branches)),
        )  # fmt: skip

    def _check_observations(self, layout: BehaviorLayout, i: int, observations: Any) -> None:
        """Core ``i`` alone may change a behaviour's observations: no other has rows of it."""
        old = self.rows.get(layout.name)
        others: Any = [] if old is None else np.flatnonzero(old.counts[:, :2].max(axis=1))
        if any(j != i for j in others):
            raise SpecError(
                f"behavior {layout.name!r}: core {i}'s observations (row shape, dtype) "
                f"{list(observations)} differ from the other cores' {list(layout.observations)}"
                "; every core of a pool must agree"
            )

    def unlink_attached(self) -> None:
        """Unlinks the segments every worker has attached."""
        if self._unlink_later:
            attached = self.generation  # no worker: every name
            if len(self.indices):
                attached = int(self.words[self.indices, GENERATION].min())
            for generation, memory in self._unlink_later:
                if generation <= attached:
                    unlink_quietly(memory)
            self._unlink_later = [(g, m) for g, m in self._unlink_later if g > attached]

    # ------------------------------------------------------------------ the pipes

    def receive(self, i: int) -> Any:
        """Worker ``i``'s next pipe message, within the timeout; a death is a fault."""
        while True:
            try:
                message = next_message(self.connections[i], self.inboxes[i], SLICE * 10)
            except (EOFError, OSError):
                raise self._died(i) from None
            if message is not None:
                return message
            if not self.processes[i].is_alive():
                self._drain(i)
                if not self.inboxes[i]:
                    raise self._died(i)
            elif self.timeout is not None and time.monotonic() - self.started[i] > self.timeout:
                raise self._hung(i)

    def _send(self, i: int, message: Any) -> None:
        try:
            self.connections[i].send(message)
        except OSError:  # BrokenPipeError: the worker is gone
            self.processes[i].join(SLICE)
            raise self._died(i) from None

    # ------------------------------------------------------------------ faults

    def _died(self, i: int) -> CorePoolError:
        process = self.processes[i]
        process.join(SLICE * 10)
        hint = ""
        if self.doing == "start":
            hint = (
                " before it could build its core; the likely cause: the script that makes "
                'the pool lacks the `if __name__ == "__main__":` guard, which spawn and '
                "forkserver need (each worker imports that script again); the worker's "
                "stderr says more"
            )
        return CorePoolError(
            f"{self.label(i)}: the worker process {_signal_name(process.exitcode)} during "
            f"{self.doing}{hint}",
            i,
        )

    def _hung(self, i: int) -> CorePoolError:
        self._stop(i)
        return CorePoolError(
            f"{self.label(i)}: no answer to {self.doing} within the timeout of "
            f"{self.timeout} s; the worker was stopped",
            i,
        )

    def _raised(self, i: int, info: dict[str, Any], during: str) -> CorePoolError:
        error = CorePoolError(
            f"{self.label(i)} raised {info['type']} during {during}: {info['message']}\n"
            f"--- the worker's traceback:\n{info['traceback'].rstrip()}",
            i,
        )
        if info.get("pickled") is not None:
            try:
                error.__cause__ = pickle.loads(info["pickled"])
            except Exception:
                pass  # the message and traceback above carry it
        return error

    def _stop(self, i: int) -> None:
        """Stops a worker: SIGTERM (it closes its core), then SIGKILL."""
        process = self.processes[i]
        if process.is_alive():
            process.terminate()
            process.join(2.0)
        if process.is_alive():
            process.kill()
            process.join(2.0)

    # ------------------------------------------------------------------ close

    def close(self, broken: bool = False) -> CorePoolError | None:
        """Asks every worker to close its core, stops those that do not, frees the memory;
        returns the first error a core's ``close()`` raised. Safe to call again."""
        error = None
        live = [i for i, p in self.processes.items() if p.pid is not None and p.is_alive()]
        if live and not broken:
            which = np.array(live, np.int64)
            self.words[which, COMMAND] = CLOSE
            self.words[which, SEQ] += 1
            self.doing = "close"
            for i in live:
                try:
                    self.connections[i].send(None)  # a wake-up
                except OSError:
                    pass
            deadline = time.monotonic() + min(CLOSE_GRACE, self.timeout or CLOSE_GRACE)
            # Reading while waiting: a worker whose close raised sends the error, and would
            # block on a message larger than the pipe's buffer if nobody read it.
            for i in live:
                while self.processes[i].is_alive() and time.monotonic() < deadline:
                    self._drain(i)
                    self.processes[i].join(SLICE)
                self._drain(i)
                for message in self.inboxes[i]:
                    if error is None and message[0] == "error":
                        error = self._raised(i, message[1], during="close")
        for i in list(self.processes):  # one at a time: an interrupted close goes on here
            if self.processes[i].pid is not None:
                self._stop(i)
                self.processes[i].close()
            del self.processes[i]
            self.connections.pop(i).close()
        for rows in self.rows.values():
            unlink_quietly(rows.memory)
            rows.close()
        for _, memory in self._unlink_later:
            unlink_quietly(memory)
        self.rows, self._unlink_later = {}, []
        if not self.closed:
            unlink_quietly(self.control.memory)
            self.control.close()
            self.closed = True
        return error
