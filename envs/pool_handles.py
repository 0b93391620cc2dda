"""The cores of a :class:`~zooport.envs.core_pool.CorePool`. A wait spins on the control array, then
blocks on the pipes and sentinels in slices: a death or hang is a ``CorePoolError`` in time."""

from __future__ import annotations

import contextlib
import multiprocessing
import pickle
import signal
import time
from collections import deque
from collections.abc import Callable, Sequence
from multiprocessing import connection as mp_connection
from typing import Any

import numpy as np

from zooport.envs import pool_shared_memory as shm, pool_worker
from zooport.envs.base_env import BehaviorMapping
from zooport.envs.pool_worker import SLICE, CoreRunner, PoolChannels, _yield
from zooport.errors import CorePoolError, SpecError

__all__ = ["Workers"]

#: How long ``close()`` waits for the workers to close their cores before stopping them (s).
CLOSE_GRACE = 10.0


class Workers:
    """The cores of a pool and which of them run or answered."""

    def __init__(
        self, factories: Sequence[Callable[..., Any]], channels: PoolChannels, local: bool,
        mode: str, min_ready: int, start_method: str, spin: float, side_bytes: int,
        timeout: float | None,
    ) -> None:  # fmt: skip
        k = self.k = len(factories)
        self.channels, self.mode, self.min_ready = channels, mode, min_ready
        self.spin, self.timeout, self.doing = spin, timeout, "start"
        self.every = slice(0, k)  # every core: a slice, so a command is a view
        self.control = shm.Control(k, side_bytes)
        self.words = self.control.words
        self.processes: dict[int, Any] = {}
        self.connections: dict[int, Any] = {}
        self.inboxes = {i: deque[Any]() for i in range(k)}
        self.descriptions: dict[int, dict[str, Any]] = {i: {"type": "?"} for i in range(k)}
        self.to_local = deque[Any]()  # what the pool sent core 0 in this process
        self.started = np.zeros(k)
        self.rows: dict[str, shm.Rows] = {}
        # Cores whose step was started and not handed out; answered, not handed out; handed
        # out by the last step (whose rows get_steps gathers).
        self.running, self.fresh, self.ready = (np.zeros(k, bool) for _ in range(3))
        self.local: CoreRunner | None = None
        self.closed = False
        self.core_specs: Any = None  # the lone core's specs at its last step
        context: Any = multiprocessing.get_context(start_method)
        try:
            for i in range(int(local), k):
                data = pool_worker.pickle_factory(factories[i], i)
                ours, theirs = context.Pipe()
                args = (i, data, tuple(channels.relay_ids[i]), self.control.memory.name, k,
                        side_bytes, theirs, spin)  # fmt: skip
                process = context.Process(target=pool_worker.run_worker, args=args,
                                          name=f"zooport-core-{i}", daemon=True)  # fmt: skip
                self.processes[i], self.connections[i] = process, ours
                self.started[i] = time.monotonic()
                try:
                    process.start()
                finally:
                    theirs.close()
            if local:  # built while the workers start
                try:
                    self.local = CoreRunner(factories[0], channels.relay_ids[0], 0, k)
                except Exception as exc:
                    why = f"its factory raised {type(exc).__name__}: {exc}"
                    raise CorePoolError(f"core 0: {why}", 0) from exc
                self.descriptions[0] = self.local.description
            for i in self.processes:
                answer = self.receive(i)
                if answer[0] == "error":
                    raise self._raised(i, answer, during="building its core")
                self.descriptions[i] = answer[1]
            self.doing = "step"
            self.control.memory.unlink()  # every worker has mapped it
            self.specs = BehaviorMapping(dict(self.descriptions[0]["specs"]))
            for i in range(1, k):
                self.agree(i, late=False)
        except BaseException:
            self.close(broken=True)
            raise
        # One core in this process: its own steps are the pool's (ids are unchanged at K=1).
        self.alone = self.local.core if self.local is not None and k == 1 else None
        self.names = tuple(self.specs)  # the behaviours, for a quick ``in``

    def agree(self, i: int, late: bool = True) -> None:
        # late: core i may bring new behaviours (a Unity scene's)
        theirs, merged = self.descriptions[i]["specs"], dict(self.specs)
        if not late and set(theirs) != set(merged):
            raise SpecError(
                f"{self.label(i)} has behaviors {sorted(theirs)} where core 0 has "
                f"{sorted(merged)}; every core of a pool must have the same behaviors"
            )
        for name, spec in theirs.items():
            if merged.setdefault(name, spec) != spec:
                raise SpecError(
                    f"behavior {name!r}: {self.label(i)} has the spec {spec} where "
                    f"{'the pool' if late else 'core 0'} has {merged[name]}; every core of a "
                    "pool must have the same specs"
                )
        self.specs = BehaviorMapping(merged)
        self.names = tuple(self.specs)

    def label(self, i: int) -> str:
        process = self.processes.get(i)
        where = "in this process" if process is None else f"worker pid {process.pid}"
        return f"core {i} ({self.descriptions[i]['type']}, {where})"

    def run(self, command: int, start: np.ndarray | None = None, seeds: Any = None) -> list[Any]:
        if command in (shm.RENDER, shm.STATE):  # the cores' answers go to self.answers
            incoming = self.finish_running()
            self.command(command, self.every)
            self.wait(self.every)
            self.requests(self.every)  # raises a core's error
            self.answers = {i: self.receive(i) for i in range(self.k)}
            return incoming
        if self.alone is not None:
            return self.run_alone(command, None if seeds is None else int(seeds[0]))
        # A reset drops the results of the steps still running (async), not their messages.
        incoming = self.finish_running() if command == shm.RESET else []
        which: Any = self.every if start is None else np.flatnonzero(start)  # None: fast path
        self.running[which] = True
        sides = self.channels.take(which)
        self.command(command, which, None if seeds is None else seeds[which], sides)
        if self.mode == "sync" or command == shm.RESET:
            self.wait(which)
            answered = self.running.copy()
        else:
            if self.min_ready > self.fresh.sum():
                self.wait(np.flatnonzero(self.running), self.min_ready - int(self.fresh.sum()))
            answered = self.running & self.answered(self.every)
        self._settle(answered)
        self.ready = answered | self.fresh  # the fresh ones' side-channel bytes were delivered
        self.running &= ~self.ready
        self.fresh[:] = False
        return incoming + self._incoming(answered)

    def run_alone(self, command: int, seed: int | None) -> list[Any]:  # K=1: its steps are ours
        runner, sides = self.local, self.channels.take([0])
        assert runner is not None  # noqa: S101  # internal invariant
        try:
            runner.run(command, seed, sides[0] if sides else b"")
        except Exception as exc:
            info = pool_worker.describe_exception(exc)
            raise self._raised(0, info, shm.COMMAND_NAMES[command]) from exc
        specs = runner.core.behavior_specs
        if specs is not self.core_specs and tuple(specs) != tuple(self.specs):  # a new one
            self.descriptions[0] = runner.description = pool_worker.core_description(runner.core)
            self.agree(0)
        self.core_specs = specs
        return [(0, pool_worker.relay_out(runner.relays))] if sides is not None else []

    def finish_running(self) -> list[Any]:
        running = self.running.copy()
        if not running.any():
            return []
        self.wait(np.flatnonzero(running))
        self._settle(running)
        self.running[:] = False
        self.fresh |= running
        return self._incoming(running)

    def _settle(self, answered: np.ndarray) -> None:  # the cores that asked for room get it
        requests = self.requests(np.flatnonzero(answered))
        if not requests:
            return
        others = self.running & ~answered
        if others.any():  # growing replaces segments that they may be writing: finish them
            self.wait(np.flatnonzero(others))
            answered |= others
            requests.update(self.requests(np.flatnonzero(others)))
        grown: dict[str, shm.BehaviorLayout] = {}
        for i, needs in requests.items():
            self.agree(i)
            for name, (count, observations) in needs.items():
                layout = grown.get(name) or getattr(self.rows.get(name), "layout", None)
                if layout is None:
                    action = self.specs[name].action_spec
                    layout = shm.BehaviorLayout(name, (shm.MIN_ROWS,) * self.k, observations,
                                                action.continuous_size, action.discrete_size,
                                                int(sum(action.discrete_branches)))  # fmt: skip
                grown[name] = layout.grown(i, count, observations if count else layout.observations)
        segments = {}
        for name, layout in grown.items():
            if name in self.rows:  # (unlinked once every core had mapped it)
                self.rows[name].close()
            self.rows[name] = rows = shm.Rows(layout)
            segments[name] = (rows.memory.name, layout)
        for i in range(self.k):
            self._send(i, segments)
        self.command(shm.ATTACH, self.every)
        self.wait(self.every)
        for name in grown:
            self.rows[name].memory.unlink()  # every core has mapped it
        self.requests(self.every)  # raises a core's error (an ATTACH asks for no room)

    def _incoming(self, ready: np.ndarray) -> list[Any]:
        incoming = []
        for i in np.flatnonzero(ready).tolist() if self.channels.any else ():
            data = self.control.get(shm.SIDE_OUT, i)
            incoming.append((i, self.receive(i)[1] if data is None else data))  # None: too big
        return incoming

    def command(self, command: int, which: Any, seeds: Any = None, sides: Any = None) -> None:
        words, late = self.words, []
        for i, data in (sides or {}).items():
            if not self.control.put(shm.SIDE_IN, i, data):
                late.append((i, data))
        words[which, shm.COMMAND] = command
        words[which, shm.SEED] = -1 if seeds is None else seeds  # seeds are >= 0
        words[which, shm.SEQ] += 1
        self.started[which] = time.monotonic()
        self.doing = shm.COMMAND_NAMES[command]
        asleep = words[which, shm.SLEEPING]
        try:  # a worker that died here leaves core 0 its command (close() needs that)
            for i in np.arange(self.k)[which][asleep != 0].tolist() if asleep.any() else ():
                self._send(i, None)  # a wake-up
            for i, data in late:  # after the command: the worker reads, a large send cannot block
                self._send(i, data)
        finally:  # core 0 in this process does what a worker does, and answers as one
            if self.local is not None and (which is self.every or 0 in np.arange(self.k)[which]):
                try:
                    status, payload = self.local.serve(self.control, self.to_local.popleft)
                except Exception as exc:
                    status, payload = shm.FAILED, pool_worker.describe_exception(exc)
                words[0, shm.STATUS], words[0, shm.DONE] = status, words[0, shm.SEQ]
                if payload is not None:
                    self.inboxes[0].append(payload)

    def answered(self, which: Any) -> np.ndarray:
        return self.words[which, shm.DONE] == self.words[which, shm.SEQ]

    def wait(self, which: Any, need: int | None = None) -> None:  # async: need of them
        done = self.answered(which)
        need = done.size if need is None else need
        if done.sum() >= need:
            return
        deadline = time.perf_counter() + self.spin
        while time.perf_counter() < deadline:
            if self.answered(which).sum() >= need:
                return
            _yield()
        indices = [i for i in np.arange(self.k)[which].tolist() if i in self.processes]
        self.words[-1, shm.WAITING] = 1
        try:
            while self.answered(which).sum() < need:
                waiting = [i for i in indices if self.words[i, shm.DONE] != self.words[i, shm.SEQ]]
                handles = [self.connections[i] for i in waiting]
                mp_connection.wait(handles + [self.processes[i].sentinel for i in waiting], SLICE)
                for i in waiting:
                    self._drain(i)
                    if self.words[i, shm.DONE] != self.words[i, shm.SEQ]:
                        self._check(i)
        finally:
            self.words[-1, shm.WAITING] = 0

    def _check(self, i: int) -> None:
        if not self.processes[i].is_alive():
            raise self._died(i)
        if self.timeout is not None and time.monotonic() - self.started[i] > self.timeout:
            self._stop(i)
            why = f"no answer to {self.doing} within the timeout of {self.timeout} s"
            raise CorePoolError(f"{self.label(i)}: {why}; the worker was stopped", i)

    def _drain(self, i: int) -> None:  # into the inbox, wake-ups dropped
        with contextlib.suppress(EOFError, OSError):  # it died: the sentinel says so
            while i in self.connections and self.connections[i].poll(0):
                message = self.connections[i].recv()
                if message is not None:
                    self.inboxes[i].append(message)

    def requests(self, which: Any) -> dict[int, Any]:
        statuses, requests = self.words[which, shm.STATUS], {}
        for i in np.arange(self.k)[which][statuses != 0].tolist() if statuses.any() else ():
            if self.words[i, shm.STATUS] == shm.FAILED:
                raise self._raised(i, self.receive(i), during=self.doing)
            _, requests[i], self.descriptions[i] = self.receive(i)
        return requests

    def receive(self, i: int) -> Any:  # core i's next message; a death or a hang is a fault
        while not self.inboxes[i]:
            mp_connection.wait([self.connections[i]], SLICE * 10)
            self._drain(i)
            if not self.inboxes[i]:
                self._check(i)
        return self.inboxes[i].popleft()

    def _send(self, i: int, message: Any) -> None:
        if i not in self.processes:  # core 0, in this process
            self.to_local.append(message)
            return
        try:
            self.connections[i].send(message)
        except OSError:  # BrokenPipeError: the worker is gone (answered close, or a wait says so)
            if message is not None:
                raise self._died(i) from None

    def _died(self, i: int) -> CorePoolError:
        process = self.processes[i]
        process.join(SLICE * 10)
        code, how = process.exitcode, f"exited with code {process.exitcode}"
        if code is not None and -code in signal.valid_signals():
            how = f"was killed by {signal.Signals(-code).name}"
        hint = "" if self.doing != "start" else (
            " before it could build its core; the likely cause: the script that makes the pool "
            'lacks the `if __name__ == "__main__":` guard, which spawn and forkserver need (each '
            "worker imports that script again); the worker's stderr says more"
        )  # fmt: skip
        return CorePoolError(
            f"{self.label(i)}: the worker process {how} during {self.doing}{hint}", i
        )

    def _raised(self, i: int, info: Any, during: str) -> CorePoolError:
        _, kind, text, pickled = info  # from pool_worker.describe_exception
        error = CorePoolError(f"{self.label(i)} raised {kind} during {during}: {text}", i)
        with contextlib.suppress(Exception):  # else the message and traceback carry it
            error.__cause__ = pickle.loads(pickled)
        return error

    def _stop(self, i: int) -> None:
        process = self.processes[i]
        for stop in (process.terminate, process.kill):
            if process.is_alive():
                stop()
                process.join(2.0)

    def close(self, broken: bool = False) -> CorePoolError | None:
        # Returns the first error a core's close() raised, or a worker's death or hang, unless
        # the pool is broken (its fault was reported): then the workers are only stopped.
        live = [i for i, p in self.processes.items() if p.pid is not None and p.is_alive()]
        live = ([0] if self.local is not None else []) + ([] if broken else live)
        self.timeout, error = min(CLOSE_GRACE, self.timeout or CLOSE_GRACE), None
        try:
            self.command(shm.CLOSE, live)
            self.wait(live)
            self.requests(live)
        except CorePoolError as exc:  # the others are stopped below
            error = exc
        if self.local is not None:
            self.local.release()
            self.local = None
        for i in list(self.processes):  # one at a time: an interrupted close goes on here
            if self.processes[i].pid is not None:
                self.processes[i].join(1.0 if i in live else 0)  # it answered: it is exiting
                self._stop(i)
                self.processes[i].close()
            del self.processes[i]
            self.connections.pop(i).close()
        for rows in self.rows.values():
            rows.memory.unlink()
            rows.close()
        self.rows.clear()
        if not self.closed:
            self.control.memory.unlink()
            self.control.close()
            self.closed = True
        return None if broken else error
