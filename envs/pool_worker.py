"""The worker side of a :class:`~zooport.envs.core_pool.CorePool`: one core per process.

Classes:
    WorkerConfig: what a worker process is started with.
    RelayChannel: a side channel on the core's end that carries the bytes of one channel id
        between the core and the pool's channels.
    Relays: the relay channels of one core: delivers the pool's framed bytes to them and
        collects what the core sent back, framed.
    CoreLink: serves the pool's commands for one core in a worker: actions in, results out,
        through the shared memory of :mod:`zooport.envs.pool_shared_memory`.

Functions:
    run_worker: the target of a worker process.
    build_core: calls a core factory (with the relay channels when there are any) and
        presents the result as a current-API BaseEnv.
    core_description: what the pool needs to know of a core: specs in zooport's types,
        whether it can be seeded, whether it restarts finished agents, whether it renders,
        what global state it has (global_state_description).
    pickle_factory: a factory as bytes a worker can load (pickle; cloudpickle for lambdas and
        local functions where it is installed).
    describe_exception: an exception as data that crosses a pipe.

Commands and statuses are words of the worker's
:class:`~zooport.envs.pool_shared_memory.ControlBlock`; the pool posts the worker's command
semaphore, the worker answers on its done semaphore. A worker waits for a command by
spinning on the semaphore (``spin`` seconds, yielding the CPU between tries) and then
blocking on it in short slices, checking between slices that the process that started it is
still there; when it is gone the worker closes its core and exits, so no worker outlives the
pool's process. Ctrl-C is left to the pool's process (workers ignore SIGINT); SIGTERM closes
the core and exits.
"""

from __future__ import annotations

import os
import pickle
import signal
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zooport.envs.base_env import ActionTuple, BaseEnv, BaseEnvLike, BehaviorSpec
from zooport.envs.batched_env import BatchedEnv
from zooport.envs.capabilities import has_action_masks
from zooport.envs.compat import _convert_behavior, as_base_env
from zooport.envs.pool_batches import pool_ids
from zooport.envs.pool_shared_memory import (
    ACTIONS_SET,
    MASK_PRESENT,
    N_DECISION,
    N_TERMINAL,
    BehaviorBuffers,
    ControlBlock,
    DataLayout,
    DataSegment,
    StepRows,
)
from zooport.envs.side_channel.incoming_message import IncomingMessage
from zooport.envs.side_channel.side_channel import SideChannel
from zooport.envs.side_channel.side_channel_manager import _append_frame, _parse_frames
from zooport.envs.steps import check_agent_ids
from zooport.errors import CorePoolError, SpecError

__all__ = [
    "STEP",
    "RESET",
    "RENDER",
    "CLOSE",
    "STATE",
    "OK",
    "NEEDS_SEGMENT",
    "FAILED",
    "WorkerConfig",
    "RelayChannel",
    "Relays",
    "CoreLink",
    "run_worker",
    "build_core",
    "action_setter",
    "core_description",
    "global_state_description",
    "pickle_factory",
    "describe_exception",
]

# Commands (ControlBlock.COMMAND).
STEP, RESET, RENDER, CLOSE, STATE = 1, 2, 3, 4, 5
# Statuses (ControlBlock.STATUS): answered; the results need a bigger segment (the layout is
# on the pipe); the command raised (the error is on the pipe).
OK, NEEDS_SEGMENT, FAILED = 0, 1, 2
COMMAND_NAMES = {
    STEP: "step",
    RESET: "reset",
    RENDER: "render",
    CLOSE: "close",
    STATE: "global_state",
}

#: How often a worker checks that the pool's process is still there (seconds).
PARENT_CHECK = 0.25
#: How long a worker whose pool's process is gone may take to close its core (seconds).
PARENT_GRACE = 3.0

_yield = getattr(os, "sched_yield", lambda: time.sleep(0))


@dataclass
class WorkerConfig:
    """What a worker process is started with (pickled once, by the start method).

    Attributes:
        index: the core's index in the pool.
        factory: the pickled core factory (see :func:`pickle_factory`).
        relay_ids: the channel ids the core gets relay channels for (may be empty).
        control_name, side_bytes: the worker's control block.
        connection: the worker's end of the pipe (control messages only).
        command, done: the semaphores the pool posts and the worker posts.
        spin: seconds to spin for a command before blocking.
        pool_size: the number of cores in the pool: the worker writes pool agent ids
            (:func:`~zooport.envs.pool_batches.pool_ids`).
        any_done: async mode: a semaphore every worker of the pool also posts when it
            answers, so the pool can block until any of them has (None in sync mode).
    """

    index: int
    factory: bytes
    relay_ids: tuple[uuid.UUID, ...]
    control_name: str
    side_bytes: int
    connection: Any
    command: Any
    done: Any
    spin: float
    pool_size: int = 1
    any_done: Any = None


class _ParentGone(Exception):
    """The process that started this worker is gone."""


class RelayChannel(SideChannel):
    """The core's end of one of the pool's channels: queues what the pool sent, keeps what
    the core sent back (raw payloads) until :class:`Relays` collects them."""

    def __init__(self, channel_id: uuid.UUID) -> None:
        super().__init__(channel_id)
        self.received: list[bytes] = []

    def on_message_received(self, msg: IncomingMessage) -> None:
        # Duck-typed: a Unity build hands over mlagents_envs' IncomingMessage.
        self.received.append(bytes(msg.get_raw_bytes()))


class Relays:
    """The relay channels of one core, by channel id."""

    def __init__(self, channel_ids: Sequence[uuid.UUID]) -> None:
        self.channels = [RelayChannel(channel_id) for channel_id in channel_ids]
        self._by_id = {channel.channel_id: channel for channel in self.channels}

    def deliver(self, data: bytes) -> None:
        """Queues each framed message of ``data`` on its relay, to reach the core next."""
        for channel_id, payload in _parse_frames(data):
            self._by_id[channel_id].message_queue.append(payload)

    def collect(self) -> bytes:
        """What the core sent on every relay since the last call, framed; empties them."""
        out = bytearray()
        for channel in self.channels:
            if channel.received:
                for payload in channel.received:
                    _append_frame(out, channel.channel_id, payload)
                channel.received = []
        return bytes(out)


def pickle_factory(factory: Callable[..., Any], index: int) -> bytes:
    """``factory`` as bytes for a worker; raises a ``CorePoolError`` naming ``core_fns[index]``.

    Standard pickle first (module-level functions, classes, ``functools.partial`` of them);
    where that fails and cloudpickle is installed, cloudpickle (lambdas, local functions),
    whose output the worker loads with plain ``pickle``.
    """
    try:
        return pickle.dumps(factory)
    except Exception as first:  # pickle raises PicklingError, AttributeError, TypeError...
        try:
            import cloudpickle
        except ImportError:
            cloudpickle = None
        if cloudpickle is not None:
            try:
                return cloudpickle.dumps(factory)
            except Exception:
                pass
        raise CorePoolError(
            f"core_fns[{index}] ({factory!r}) cannot be sent to a worker process: {first}; "
            "use a module-level function, a class, or functools.partial of one (or install "
            "cloudpickle for lambdas)",
            index,
        ) from None


def build_core(factory: Callable[..., Any], relays: Relays) -> BaseEnv:
    """Calls ``factory`` (with ``side_channels=`` the relays when there are any)."""
    # A copy: UnityEnvironment appends its own analytics channel to the list it is given.
    core = factory(side_channels=list(relays.channels)) if relays.channels else factory()
    return as_base_env(core)


def action_setter(core: BaseEnv) -> Callable[[str, np.ndarray, np.ndarray], None]:
    """How the pool hands ``core`` a behaviour's action rows that it validated already.

    The rows are (n, c) float32 and (n, d) int32 for the n agents of the core's last
    DecisionSteps. A zooport core takes them without validating them a second time; any
    other core gets them through ``set_actions``.
    """
    if isinstance(core, BatchedEnv):
        return core._set_checked_actions

    def set_actions(name: str, continuous: np.ndarray, discrete: np.ndarray) -> None:
        core.set_actions(name, ActionTuple._trusted(continuous, discrete))

    return set_actions


def _zooport_spec(name: str, spec: Any) -> BehaviorSpec:
    if isinstance(spec, BehaviorSpec):
        return spec
    return _convert_behavior(name, spec).spec


def core_description(core: BaseEnv) -> dict[str, Any]:
    """What the pool needs to know of ``core`` (plain data, sent over the pipe)."""
    specs = {name: _zooport_spec(name, spec) for name, spec in core.behavior_specs.items()}
    restarts_finished = getattr(core, "restarts_finished", None)
    restarts = {
        name: bool(restarts_finished(name)) if callable(restarts_finished) else None
        for name in specs
    }
    inner = getattr(core, "legacy_env", core)
    metadata = getattr(core, "metadata", None) or {}
    return {
        "type": type(inner).__name__,
        "specs": specs,
        "seedable": bool(getattr(core, "seedable", False)),
        "restarts": restarts,
        "masks": has_action_masks(core),
        "render_fps": metadata.get("render_fps", 30) if isinstance(metadata, dict) else 30,
        **global_state_description(core),
    }


def global_state_description(core: BaseEnvLike) -> dict[str, Any]:
    """What ``core`` declares of a global state, as plain data.

    ``global_state``: whether it has a ``global_state()``; ``global_state_shape``: its
    ``global_state_shape`` as a tuple of ints (None where it declares none);
    ``global_state_bounds``: ``(low, high)`` arrays of its ``global_state_space`` where that
    is a box (it has ``low`` and ``high``), else None.

    Example:
        >>> from zooport.envs.builtin.tag import Tag
        >>> description = global_state_description(Tag(n_runners=1, n_taggers=1))
        >>> description["global_state"], description["global_state_shape"]
        (True, (10,))
    """
    shape = getattr(core, "global_state_shape", None)
    space = getattr(core, "global_state_space", None)
    low, high = getattr(space, "low", None), getattr(space, "high", None)
    return {
        "global_state": callable(getattr(core, "global_state", None)),
        "global_state_shape": None if shape is None else tuple(int(d) for d in shape),
        "global_state_bounds": (
            None if low is None or high is None else (np.asarray(low), np.asarray(high))
        ),
    }


def describe_exception(exc: BaseException) -> dict[str, Any]:
    """``exc`` as data: its type, message and traceback, and itself pickled when it can be."""
    pickled: bytes | None
    try:
        pickled = pickle.dumps(exc)
        pickle.loads(pickled)
    except Exception:
        pickled = None
    return {
        "type": f"{type(exc).__module__}.{type(exc).__qualname__}".removeprefix("builtins."),
        "message": str(exc),
        "traceback": "".join(traceback.format_exception(exc)),
        "pickled": pickled,
    }


class CoreLink:
    """Serves the pool's commands for one core, inside a worker process.

    Args:
        core: the core (a current-API BaseEnv).
        relays: its relay channels.
        control: the worker's control block.
        config: the worker's configuration.
    """

    def __init__(
        self, core: BaseEnv, relays: Relays, control: ControlBlock, config: WorkerConfig
    ) -> None:
        self.core = core
        self.relays = relays
        self.control = control
        self.config = config
        self.segment: DataSegment | None = None
        self.decisions: dict[str, int] = {}
        self.closed = False
        self._set_actions = action_setter(core)
        self._parent = os.getppid()

    # ------------------------------------------------------------------ the loop

    def serve(self) -> None:
        """Answers commands until ``close`` (or until the pool's process is gone)."""
        words = self.control.words
        while True:
            self._wait_for_command()
            command = int(words[ControlBlock.COMMAND])
            try:
                if command == CLOSE:
                    self.closed = True
                    self.core.close()
                    self._answer(OK)
                    return
                self._receive_side_channel_bytes()
                if command == STEP:
                    self._apply_actions()
                    self.core.step()
                elif command == RESET:
                    if words[ControlBlock.HAS_SEED]:
                        self.core.reset(seed=int(words[ControlBlock.SEED]))  # type: ignore[call-arg]  # seedable
                    else:
                        self.core.reset()
                elif command == RENDER:
                    self.control.words[ControlBlock.SIDE_OUT] = 0
                    self._answer(OK, self._frame())
                    continue
                elif command == STATE:
                    self.control.words[ControlBlock.SIDE_OUT] = 0
                    self._answer(OK, ("state", np.asarray(self.core.global_state())))  # type: ignore[attr-defined]  # asked only of cores with one
                    continue
                else:
                    raise CorePoolError(f"unknown command {command}", self.config.index)
                self._publish()
            except (_ParentGone, SystemExit):
                raise
            except Exception as exc:
                self._answer(FAILED, ("error", describe_exception(exc)))
                return

    def _wait_for_command(self) -> None:
        semaphore = self.config.command
        if semaphore.acquire(False):
            return
        deadline = time.perf_counter() + self.config.spin
        while time.perf_counter() < deadline:
            _yield()
            if semaphore.acquire(False):
                return
        while not semaphore.acquire(timeout=PARENT_CHECK):
            if os.getppid() != self._parent:
                raise _ParentGone

    def _answer(self, status: int, message: Any = None) -> None:
        """Posts the answer, then sends ``message`` on the pipe if there is one.

        In that order: the pool reads the pipe once it has the answer, so a message larger
        than the pipe's buffer cannot block both ends.
        """
        words = self.control.words
        words[ControlBlock.STATUS] = status
        words[ControlBlock.DONE] = words[ControlBlock.SEQUENCE]
        self.config.done.release()
        if self.config.any_done is not None:
            self.config.any_done.release()
        if message is not None:
            self.config.connection.send(message)

    def _pipe_message(self, kind: str) -> Any:
        """The next pipe message, which must be of ``kind``; waits while the pool is there."""
        connection = self.config.connection
        while not connection.poll(PARENT_CHECK):
            if os.getppid() != self._parent:
                raise _ParentGone
        message = connection.recv()
        if message[0] != kind:
            raise CorePoolError(
                f"expected a {kind!r} message from the pool, got {message[0]!r}", self.config.index
            )
        return message[1]

    # ------------------------------------------------------------------ side channels

    def _receive_side_channel_bytes(self) -> None:
        size = int(self.control.words[ControlBlock.SIDE_IN])
        if size == 0:
            return
        data = self.control.side_in[:size].tobytes() if size > 0 else self._pipe_message("side")
        self.relays.deliver(data)

    def _side_channel_bytes(self) -> tuple[str, bytes] | None:
        """Puts what the core sent into the control block; a pipe message if it is too big."""
        data = self.relays.collect() if self.relays.channels else b""
        if self.control.put_bytes(self.control.side_out, ControlBlock.SIDE_OUT, data):
            return None
        return ("side", data)

    # ------------------------------------------------------------------ data

    def _apply_actions(self) -> None:
        if self.segment is None:
            return
        for name, buffers in self.segment.behaviors.items():
            if buffers.header[ACTIONS_SET]:
                n = self.decisions.get(name, 0)
                # The buffers hold (rows, c) float32 and (rows, d) int32 the pool validated.
                self._set_actions(name, buffers.continuous[:n], buffers.discrete[:n])

    def _publish(self) -> None:
        core = self.core
        steps = {name: core.get_steps(name) for name in core.behavior_specs}
        for name, (decision, terminal) in steps.items():
            check_agent_ids(name, decision, terminal)
        segment = self.segment
        if segment is None or not _fits(segment, steps):
            segment = self._new_segment(steps)
        for name, (decision, terminal) in steps.items():
            self._write(segment.behaviors[name], decision, terminal)
        self._answer(OK, self._side_channel_bytes())

    def _new_segment(self, steps: dict[str, tuple[Any, Any]]) -> DataSegment:
        """Asks the pool for a segment that holds ``steps``, attaches to it and returns it."""
        description = core_description(self.core)
        counts, observations, actions = {}, {}, {}
        for name, (decision, terminal) in steps.items():
            counts[name] = max(len(decision), len(terminal))
            source = decision if len(decision) or not len(terminal) else terminal
            observations[name] = [np.asarray(o) for o in source.obs]
            action_spec = description["specs"][name].action_spec
            actions[name] = (action_spec.continuous_size, tuple(action_spec.discrete_branches))
        previous = self.segment.layout if self.segment is not None else None
        layout = DataLayout.fitting(counts, observations, actions, previous)
        for b in layout.behaviors:
            decision, terminal = steps[b.name]
            for kind, batch in (("DecisionSteps", decision), ("TerminalSteps", terminal)):
                if not _holds(b, batch):
                    shapes = [(np.asarray(o).shape[1:], np.asarray(o).dtype.str) for o in batch.obs]
                    raise SpecError(
                        f"behavior {b.name!r}: the {kind} observations (row shape, dtype) "
                        f"{shapes} differ from the other batch's {list(b.observations)}"
                    )
        self._answer(NEEDS_SEGMENT, ("layout", layout, description))
        name = self._pipe_message("segment")
        if self.segment is not None:
            self.segment.close()
        self.segment = DataSegment.attach(name, layout)
        return self.segment

    def _write(self, buffers: BehaviorBuffers, decision: Any, terminal: Any) -> None:
        header = buffers.header
        n = len(decision)
        header[N_DECISION] = n
        header[ACTIONS_SET] = 0
        self.decisions[buffers.layout.name] = n
        if n:
            self._write_rows(buffers.decision, decision, n, buffers.layout.name)
            header[MASK_PRESENT] = _write_mask(buffers, decision.action_mask, n)
        m = len(terminal)
        header[N_TERMINAL] = m
        if m:
            self._write_rows(buffers.terminal, terminal, m, buffers.layout.name)
            buffers.terminal_interrupted[:m] = terminal.interrupted

    def _write_rows(self, rows: StepRows, batch: Any, n: int, behavior: str) -> None:
        """Writes the ``n`` rows of a DecisionSteps or TerminalSteps into ``rows``."""
        for view, obs in zip(rows.obs, batch.obs, strict=True):
            view[:n] = obs
        rows.reward[:n] = batch.reward
        config = self.config
        pool_ids(behavior, batch.agent_id, config.pool_size, config.index, rows.agent_id[:n])
        rows.group_id[:n] = batch.group_id
        rows.group_reward[:n] = batch.group_reward

    def _frame(self) -> tuple[str, np.ndarray | None, str]:
        """The core's picture as a pipe message, or why it has none."""
        try:
            frame = self.core.render()  # type: ignore[attr-defined]  # optional, beyond BaseEnv
        except NotImplementedError as exc:
            return ("frame", None, str(exc))
        return ("frame", None if frame is None else np.asarray(frame), "")

    def close(self) -> None:
        """Unmaps the shared memory."""
        if self.segment is not None:
            self.segment.close()
            self.segment = None


def _fits(segment: DataSegment, steps: dict[str, tuple[Any, Any]]) -> bool:
    """Whether this step's batches fit the segment as it is (the per-step check)."""
    behaviors = segment.behaviors
    if len(steps) != len(behaviors):
        return False
    for name, (decision, terminal) in steps.items():
        buffers = behaviors.get(name)
        if buffers is None or not buffers.fits(decision) or not buffers.fits(terminal):
            return False
    return True


def _holds(layout: Any, batch: Any) -> bool:
    n = len(batch)
    if not n:
        return True  # nothing to write: an empty batch's dtype does not matter
    return layout.holds(n, [np.asarray(o) for o in batch.obs])


def _write_mask(buffers: BehaviorBuffers, mask: Any, n: int) -> int:
    """Writes a per-branch mask into the (rows, sum of branches) area; 1 if there was one."""
    width = buffers.layout.mask_width
    if mask is None or not width:
        return 0
    column = 0
    for branch in mask:
        branch = np.asarray(branch)
        size = branch.shape[1] if branch.ndim == 2 else -1
        if branch.shape != (n, size) or column + size > width:
            raise SpecError(
                f"behavior {buffers.layout.name!r}: an action mask branch of shape "
                f"{branch.shape} does not fit {n} agents and {width} mask columns"
            )
        buffers.decision_mask[:n, column : column + size] = branch
        column += size
    if column != width:
        raise SpecError(
            f"behavior {buffers.layout.name!r}: the action mask has {column} columns, the "
            f"branches need {width}"
        )
    return 1


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def _watch_parent(parent: int) -> None:
    """Ends this worker once the pool's process is gone, even inside a long or hung step.

    SIGTERM goes to the main thread (it interrupts a sleep or a blocking wait; the worker
    then closes its core); a core that does not let go within a grace period is cut off.
    """
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK)
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGTERM)
    time.sleep(PARENT_GRACE)
    os._exit(1)


def run_worker(config: WorkerConfig) -> None:
    """The worker process: builds the core, says ``ready``, serves commands until ``close``.

    A failure to build the core, or an exception from the core while serving, is sent to the
    pool as ``("error", describe_exception(exc))``; the worker then closes its core and exits.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    watchdog = threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True)
    watchdog.start()
    connection = config.connection
    control: ControlBlock | None = None
    core: BaseEnv | None = None
    link: CoreLink | None = None
    try:
        control = ControlBlock.attach(config.control_name, config.side_bytes)
        relays = Relays(config.relay_ids)
        factory = pickle.loads(config.factory)
        core = build_core(factory, relays)
        link = CoreLink(core, relays, control, config)
        connection.send(("ready", core_description(core)))
        link.serve()
        if link.closed:
            core = None  # the close command closed it (or reported why it could not)
    except (_ParentGone, SystemExit):
        pass
    except Exception as exc:
        try:
            connection.send(("error", describe_exception(exc)))
        except OSError:  # the pool's process is gone
            pass
    finally:
        if core is not None:
            try:
                core.close()
            except Exception:
                pass  # the worker is going away; the pool has been told why, or is gone
        if link is not None:
            link.close()
        if control is not None:
            control.close()
