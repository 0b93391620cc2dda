"""The pool's side of each core of a :class:`~zooport.envs.core_pool.CorePool`.

Classes:
    Part: one core's rows of a behaviour's DecisionSteps or TerminalSteps (from
        :mod:`zooport.envs.pool_batches`, re-exported).
    LocalCore: a core the pool's own process builds and steps.
    WorkerCore: a core in a worker process: starts the process, sends it commands through
        shared memory, waits for its answers within a timeout, turns a death, a hang or an
        exception into a :class:`~zooport.errors.CorePoolError` naming the core, stops it.

Functions:
    wait_for_answers: async mode: the cores that answered, once enough have.

Both answer the same calls: ``start(command, seed, side_bytes)`` (a local core runs the
command right there; a worker is only told), ``finish()`` (waits for the answer and
returns the side-channel bytes the core sent), ``poll()`` (has it answered?), ``parts(name)``,
``set_actions``, ``set_action_for_agent``, ``request_frame()`` then ``frame()``,
``request_state()`` then ``global_state()``, and ``close()``.

Waiting for a worker spins on its done semaphore for ``spin`` seconds (yielding the CPU
between tries), then blocks on it in short slices, checking between slices that the worker
is alive and that the timeout has not passed.

Faults. A worker that dies, does not answer within the timeout, or whose core raises becomes
a :class:`~zooport.errors.CorePoolError` naming the core and the original error (with the
worker's traceback), in bounded time. ``close()`` asks the worker to close its core and stops
it if it does not; a worker whose parent process is gone (killed) closes its core and exits
by itself within a fraction of a second (:mod:`zooport.envs.pool_worker`); Ctrl-C reaches
only the pool's process (workers ignore SIGINT), which then closes them at exit.
"""

from __future__ import annotations

import os
import pickle
import signal
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from zooport.envs.base_env import ActionTuple, BaseEnv
from zooport.envs.pool_batches import Part, pool_ids
from zooport.envs.pool_shared_memory import (
    ACTIONS_SET,
    MASK_PRESENT,
    N_DECISION,
    N_TERMINAL,
    ControlBlock,
    DataSegment,
    StepRows,
    unlink_quietly,
)
from zooport.envs.pool_worker import (
    CLOSE,
    COMMAND_NAMES,
    FAILED,
    NEEDS_SEGMENT,
    RENDER,
    RESET,
    STATE,
    STEP,
    Relays,
    WorkerConfig,
    action_setter,
    build_core,
    core_description,
    run_worker,
)
from zooport.envs.steps import check_agent_ids
from zooport.errors import CorePoolError

if TYPE_CHECKING:
    from zooport.envs.pool_shared_memory import BehaviorBuffers

__all__ = ["Part", "LocalCore", "WorkerCore", "wait_for_answers", "IDLE", "BUSY", "DONE", "BROKEN"]

# What a core is doing: waiting for a command; running one; answered, results not consumed;
# failed (dead, hung or raised).
IDLE, BUSY, DONE, BROKEN = "idle", "busy", "done", "broken"

#: How long a blocked wait sleeps between checks that the worker is alive (seconds).
_SLICE = 0.05
#: How long ``close()`` waits for a worker to close its core before stopping it (seconds).
CLOSE_GRACE = 10.0

_yield = getattr(os, "sched_yield", lambda: time.sleep(0))


def _shared_part(index: int, rows: StepRows, n: int, mask: Any, interrupted: Any) -> Part:
    """Core ``index``'s first ``n`` rows of shared memory as a :class:`Part` (views)."""
    return Part(
        index, n, [o[:n] for o in rows.obs], rows.reward[:n], rows.agent_id[:n],
        rows.group_id[:n], rows.group_reward[:n], mask, interrupted, True,
    )  # fmt: skip


def _signal_name(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"was killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"was killed by signal {-exitcode}"
    return f"exited with code {exitcode}"


class LocalCore:
    """A core the pool's own process builds and steps (no process, no shared memory).

    Args:
        index: the core's index in the pool.
        factory: the core factory.
        relay_ids: the channel ids the core gets relay channels for.
        pool_size: the number of cores in the pool (for pool agent ids).
    """

    kind = "local"

    def __init__(
        self,
        index: int,
        factory: Callable[..., Any],
        relay_ids: Sequence[uuid.UUID],
        pool_size: int = 1,
    ) -> None:
        self.index = index
        self.pool_size = pool_size
        self.relays = Relays(relay_ids)
        # This step's parts, by behaviour (made once a step, at the latest when merged).
        self._parts: dict[str, tuple[Part | None, Part | None]] = {}
        self.state = IDLE
        self.description_changed = False
        try:
            self.core: BaseEnv = build_core(factory, self.relays)
            self.description = core_description(self.core)
            self.set_actions = action_setter(self.core)
        except Exception as exc:
            self.state = BROKEN
            raise CorePoolError(
                f"core {index}: its factory raised {type(exc).__name__}: {exc}", index
            ) from exc
        self._names = tuple(self.description["specs"])
        self._side_out = b""

    @property
    def label(self) -> str:
        return f"core {self.index} ({self.description['type']}, in this process)"

    def start(self, command: int, seed: int | None = None, side: bytes = b"") -> None:
        """Runs the command now (the pool starts its workers first, so they run meanwhile)."""
        self.state = BUSY
        self._parts.clear()
        core = self.core
        try:
            if side:
                self.relays.deliver(side)
            if command == STEP:
                core.step()
            elif command == RESET:
                core.reset() if seed is None else core.reset(seed=seed)  # type: ignore[call-arg]  # seedable
            names = tuple(core.behavior_specs)
            if names != self._names:  # a behaviour a Unity scene registers late
                self.description = core_description(core)
                self._names = names
                self.description_changed = True
            self._side_out = self.relays.collect() if self.relays.channels else b""
        except Exception as exc:
            self.state = BROKEN
            raise CorePoolError(
                f"{self.label} raised {type(exc).__name__} during {COMMAND_NAMES[command]}: {exc}",
                self.index,
            ) from exc
        self.state = DONE

    def finish(self) -> bytes:
        side, self._side_out = self._side_out, b""  # handed out once
        return side

    def poll(self) -> bool:
        return self.state == DONE

    def parts(self, name: str) -> tuple[Part | None, Part | None]:
        parts = self._parts.get(name)
        if parts is None:
            parts = self._parts[name] = self._make_parts(name)
        return parts

    def prepare_parts(self) -> None:
        """Makes this step's parts now (while the pool waits for its workers).

        A failure is left for :meth:`parts` to raise again when the pool merges.
        """
        try:
            for name in self._names:
                self.parts(name)
        except Exception:
            self._parts.clear()

    def _make_parts(self, name: str) -> tuple[Part | None, Part | None]:
        if name not in self.description["specs"]:
            return None, None
        decision, terminal = self.core.get_steps(name)
        check_agent_ids(name, decision, terminal)
        k, index = self.pool_size, self.index
        if k == 1:  # a pool of one: the core's own ids, as in-process
            decision_ids, terminal_ids = decision.agent_id, terminal.agent_id
        else:
            decision_ids = pool_ids(name, decision.agent_id, k, index)
            terminal_ids = pool_ids(name, terminal.agent_id, k, index)
        return (
            Part(index, len(decision), list(decision.obs), decision.reward, decision_ids,
                 decision.group_id, decision.group_reward, decision.action_mask, None, False),
            Part(index, len(terminal), list(terminal.obs), terminal.reward, terminal_ids,
                 terminal.group_id, terminal.group_reward, None, terminal.interrupted, False),
        )  # fmt: skip

    def decision_count(self, name: str) -> int:
        if name not in self.description["specs"]:
            return 0
        return len(self.core.get_steps(name)[0])

    def set_action_for_agent(
        self, name: str, pool_id: int, core_id: int, action: ActionTuple
    ) -> None:
        self.core.set_action_for_agent(name, core_id, action)

    def request_frame(self) -> None:
        pass

    def frame(self) -> np.ndarray | None:
        render = getattr(self.core, "render", None)
        if render is None:
            raise NotImplementedError(f"{self.label} cannot render")
        frame = render()
        return None if frame is None else np.asarray(frame)

    def request_state(self) -> None:
        pass

    def global_state(self) -> np.ndarray:
        try:
            return np.asarray(self.core.global_state())  # type: ignore[attr-defined]  # beyond BaseEnvLike
        except Exception as exc:
            self.state = BROKEN
            raise CorePoolError(
                f"{self.label} raised {type(exc).__name__} during global_state: {exc}",
                self.index,
            ) from exc

    def close(self) -> CorePoolError | None:
        if self.state == "closed":
            return None
        self.state = "closed"
        try:
            self.core.close()
        except Exception as exc:
            error = CorePoolError(
                f"{self.label} raised {type(exc).__name__} during close: {exc}", self.index
            )
            error.__cause__ = exc
            return error
        return None


class WorkerCore:
    """A core in a worker process; see the module docstring.

    Args:
        index: the core's index in the pool.
        factory: the pickled factory.
        relay_ids: the channel ids the core gets relay channels for.
        pool_size: the number of cores in the pool (the worker writes pool agent ids).
        context: the multiprocessing context (its start method).
        spin: seconds to spin on a semaphore before blocking (both sides).
        side_bytes: the size of each side-channel area of the control block.
        timeout: seconds a command may take before the worker counts as hung (None: never).
        any_done: async mode: the pool's semaphore every worker also posts when it answers.
    """

    kind = "worker"

    def __init__(
        self,
        index: int,
        factory: bytes,
        relay_ids: Sequence[uuid.UUID],
        pool_size: int,
        context: Any,
        spin: float,
        side_bytes: int,
        timeout: float | None,
        any_done: Any = None,
    ) -> None:
        self.index = index
        self.spin = spin
        self.timeout = timeout
        self.state = BUSY
        self.description: dict[str, Any] = {"type": "?"}
        self.description_changed = False
        self.segment: DataSegment | None = None
        self._unlink_after_answer: list[Any] = []
        self._acquired = False
        self._doing = "start"
        self._started = time.monotonic()
        self.control = ControlBlock.create(side_bytes)
        self._unlink_after_answer.append(self.control.memory)
        self.command = context.Semaphore(0)
        self.done = context.Semaphore(0)
        self.connection, child = context.Pipe()
        config = WorkerConfig(
            index, factory, tuple(relay_ids), self.control.memory.name, side_bytes, child,
            self.command, self.done, spin, pool_size, any_done,
        )  # fmt: skip
        self.process = context.Process(
            target=run_worker, args=(config,), name=f"zooport-core-{index}", daemon=True
        )
        try:
            self.process.start()
        except BaseException:
            self._release_names()
            self.control.close()
            raise
        finally:
            child.close()

    @property
    def label(self) -> str:
        return f"core {self.index} ({self.description['type']}, worker pid {self.process.pid})"

    # ------------------------------------------------------------------ start-up

    def wait_ready(self) -> None:
        """Waits for the worker's ``ready`` (its core built) within the timeout."""
        message = self._receive()
        if message[0] == "error":
            raise self._raised(message[1], during="building its core")
        self.description = message[1]
        self._release_names()
        self.state = IDLE

    # ------------------------------------------------------------------ commands

    def start(self, command: int, seed: int | None = None, side: bytes = b"") -> None:
        """Tells the worker to run ``command`` (with its side-channel bytes)."""
        control = self.control
        words = control.words
        words[ControlBlock.COMMAND] = command
        words[ControlBlock.HAS_SEED] = seed is not None
        if seed is not None:
            words[ControlBlock.SEED] = seed
        on_pipe = not control.put_bytes(control.side_in, ControlBlock.SIDE_IN, side)
        words[ControlBlock.SEQUENCE] += 1
        self._doing = COMMAND_NAMES[command]
        self._started = time.monotonic()
        self.state = BUSY
        self.command.release()
        if on_pipe:  # after the command: the worker is reading it, so a large send cannot block
            self._send(("side", bytes(side)))

    def poll(self) -> bool:
        """True once the worker answered the running command (does not wait)."""
        if self.state == DONE or self._acquired:
            return True
        if self.done.acquire(False):
            self._acquired = True
            return True
        if not self.process.is_alive():
            self._acquired = self.done.acquire(False)
            if not self._acquired:
                raise self._died()
        elif self.timeout is not None and time.monotonic() - self._started > self.timeout:
            raise self._hung()
        return self._acquired

    def finish(self) -> bytes:
        """Waits for the answer (within the timeout); returns the core's side-channel bytes.

        Once per answer: a core already finished (``DONE``: the pool asked every core for a
        picture or a state while its step ran, and finished that step first) has nothing
        more to wait for or to hand out.
        """
        if self.state == DONE:
            return b""
        words = self.control.words
        while True:
            self._wait_done()
            for memory in self._unlink_after_answer:
                unlink_quietly(memory)
            self._unlink_after_answer.clear()
            status = int(words[ControlBlock.STATUS])
            if status == NEEDS_SEGMENT:
                self._give_segment()
                continue
            if status == FAILED:
                message = self._receive()
                raise self._raised(message[1], during=self._doing)
            break
        self.state = DONE
        size = int(words[ControlBlock.SIDE_OUT])
        if size == 0:
            return b""
        if size > 0:
            return self.control.side_out[:size].tobytes()
        return self._receive()[1]

    def _wait_done(self) -> None:
        if self._acquired:
            self._acquired = False
            return
        done = self.done
        if done.acquire(False):
            return
        deadline = time.perf_counter() + self.spin
        while time.perf_counter() < deadline:
            _yield()
            if done.acquire(False):
                return
        while not done.acquire(timeout=_SLICE):
            if not self.process.is_alive():
                if done.acquire(False):  # it answered, then exited (a failed command)
                    return
                raise self._died()
            if self.timeout is not None and time.monotonic() - self._started > self.timeout:
                raise self._hung()

    def _give_segment(self) -> None:
        """The worker needs a (bigger) data segment: create it, send its name."""
        kind, layout, description = self._receive()
        segment = DataSegment.create(layout)
        self._send(("segment", segment.memory.name))
        if self.segment is not None:
            self.segment.close()
        self.segment = segment
        self._unlink_after_answer.append(segment.memory)
        self.description = description
        self.description_changed = True

    # ------------------------------------------------------------------ data

    def parts(self, name: str) -> tuple[Part | None, Part | None]:
        buffers = self.segment.behaviors.get(name) if self.segment is not None else None
        if buffers is None:
            return None, None
        header = buffers.header
        n, m = int(header[N_DECISION]), int(header[N_TERMINAL])
        mask = buffers.decision_mask[:n] if header[MASK_PRESENT] else None
        return (
            _shared_part(self.index, buffers.decision, n, mask, None),
            _shared_part(self.index, buffers.terminal, m, None, buffers.terminal_interrupted[:m]),
        )

    def decision_count(self, name: str) -> int:
        buffers = self.segment.behaviors.get(name) if self.segment is not None else None
        return 0 if buffers is None else int(buffers.header[N_DECISION])

    def _buffers(self, name: str) -> BehaviorBuffers:
        """The behaviour's buffers; the pool asks only for a behaviour the core has rows of."""
        if self.segment is None:
            raise CorePoolError(f"{self.label} has sent no rows of behavior {name!r}", self.index)
        return self.segment.behaviors[name]

    def set_actions(self, name: str, continuous: np.ndarray, discrete: np.ndarray) -> None:
        buffers = self._buffers(name)
        n = int(buffers.header[N_DECISION])
        buffers.continuous[:n] = continuous
        buffers.discrete[:n] = discrete
        buffers.header[ACTIONS_SET] = 1

    def set_action_for_agent(
        self, name: str, pool_id: int, core_id: int, action: ActionTuple
    ) -> None:
        buffers = self._buffers(name)
        header = buffers.header
        n = int(header[N_DECISION])
        row = int(np.flatnonzero(buffers.decision.agent_id[:n] == pool_id)[0])
        if not header[ACTIONS_SET]:
            # ML-Agents' rule: the other agents that decided take the zero action.
            buffers.continuous[:n] = 0
            buffers.discrete[:n] = 0
            header[ACTIONS_SET] = 1
        buffers.continuous[row] = action.continuous[0]
        buffers.discrete[row] = action.discrete[0]

    def request_frame(self) -> None:
        self.start(RENDER)

    def frame(self) -> np.ndarray | None:
        self.finish()
        _, frame, reason = self._receive()
        if frame is None and reason:
            raise NotImplementedError(f"{self.label} cannot render: {reason}")
        return frame

    def request_state(self) -> None:
        self.start(STATE)

    def global_state(self) -> np.ndarray:
        self.finish()
        _, state = self._receive()
        return state

    # ------------------------------------------------------------------ faults

    def _receive(self) -> Any:
        """The worker's next pipe message, within the timeout; a death is a fault."""
        connection = self.connection
        while not connection.poll(_SLICE):
            if not self.process.is_alive():
                if connection.poll(0):
                    break  # it said something before it exited
                raise self._died()
            if self.timeout is not None and time.monotonic() - self._started > self.timeout:
                raise self._hung()
        try:
            return connection.recv()
        except (EOFError, OSError):
            raise self._died() from None

    def _send(self, message: Any) -> None:
        try:
            self.connection.send(message)
        except OSError:  # BrokenPipeError: the worker is gone
            self.process.join(_SLICE)
            raise self._died() from None

    def _died(self) -> CorePoolError:
        self.state = BROKEN
        self.process.join(_SLICE)
        hint = ""
        if self._doing == "start":
            hint = (
                " before it could build its core; the likely cause: the script that makes "
                'the pool lacks the `if __name__ == "__main__":` guard, which spawn and '
                "forkserver need (each worker imports that script again); the worker's "
                "stderr says more"
            )
        return CorePoolError(
            f"{self.label}: the worker process {_signal_name(self.process.exitcode)} during "
            f"{self._doing}{hint}",
            self.index,
        )

    def _hung(self) -> CorePoolError:
        self.state = BROKEN
        self._stop()
        return CorePoolError(
            f"{self.label}: no answer to {self._doing} within the timeout of {self.timeout} s; "
            "the worker was stopped",
            self.index,
        )

    def _raised(self, info: dict[str, Any], during: str) -> CorePoolError:
        self.state = BROKEN
        error = CorePoolError(
            f"{self.label} raised {info['type']} during {during}: {info['message']}\n"
            f"--- the worker's traceback:\n{info['traceback'].rstrip()}",
            self.index,
        )
        if info.get("pickled") is not None:
            try:
                error.__cause__ = pickle.loads(info["pickled"])
            except Exception:
                pass  # the message and traceback above carry it
        return error

    def _stop(self) -> None:
        """Stops the process: SIGTERM (the worker closes its core), then SIGKILL."""
        process = self.process
        if process.is_alive():
            process.terminate()
            process.join(2.0)
        if process.is_alive():
            process.kill()
            process.join(2.0)

    # ------------------------------------------------------------------ close

    def close(self) -> CorePoolError | None:
        """Asks the worker to close its core, waits, stops it if needed, frees its memory.

        Returns the error its core's ``close()`` raised, if any.
        """
        if self.state == "closed":
            return None
        error = None
        process = self.process
        if process.is_alive() and self.state != BROKEN:
            self._doing = "close"
            self.control.words[ControlBlock.COMMAND] = CLOSE
            self.control.words[ControlBlock.SEQUENCE] += 1
            self.command.release()
            grace = CLOSE_GRACE if self.timeout is None else min(CLOSE_GRACE, self.timeout)
            deadline = time.monotonic() + grace
            # Reading while waiting: a worker whose close raised sends the error, and would
            # block on a message larger than the pipe's buffer if nobody read it.
            while process.is_alive() and time.monotonic() < deadline:
                message = self._next_message(_SLICE)
                if message is not None and message[0] == "error":
                    error = self._raised(message[1], during="close")
            message = self._next_message(0)
            if error is None and message is not None and message[0] == "error":
                error = self._raised(message[1], during="close")
        self._stop()
        self.state = "closed"
        if not process.is_alive():
            process.close()
        self._release_names()
        if self.segment is not None:
            self.segment.close()
            self.segment = None
        self.control.close()
        self.connection.close()
        # The last references to the semaphores (the process keeps its arguments): their
        # names leave /dev/shm now rather than at some later garbage collection.
        self.command = self.done = None
        process._args = ()
        return error

    def _next_message(self, wait: float) -> Any:
        """A pipe message if one arrives within ``wait`` seconds (None at EOF or none)."""
        try:
            if self.connection.poll(wait):
                return self.connection.recv()
        except (EOFError, OSError):
            self.process.join(wait)
        return None

    def _release_names(self) -> None:
        for memory in self._unlink_after_answer:
            unlink_quietly(memory)
        self._unlink_after_answer.clear()


def wait_for_answers(
    handles: Sequence[Any], min_ready: int, any_done: Any, spin: float
) -> list[Any]:
    """The handles that answered, once at least ``min_ready`` have (async mode).

    Spins for ``spin`` seconds, then blocks on ``any_done``, the semaphore every worker also
    posts when it answers. It is emptied before each look at the workers, so a post it still
    holds afterwards is an answer made after that look: no answer is missed, and old posts
    cost one look each.
    """
    spin_until = time.perf_counter() + spin
    while True:
        if any_done is not None:
            while any_done.acquire(False):
                pass
        answered = [h for h in handles if h.state == DONE or h.poll()]
        if len(answered) >= min_ready:
            return answered
        if time.perf_counter() < spin_until:
            _yield()
        elif any_done is not None:
            # A slice at a time: between slices poll() checks each worker is alive.
            any_done.acquire(timeout=_SLICE)
