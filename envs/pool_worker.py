"""The worker side of a :class:`~zooport.envs.core_pool.CorePool`: one core per process. A worker
waits for its sequence word in the control array to move (spinning, then blocking on its
pipe), runs the command, writes its rows and answers in the array; a core that raises is
answered as a failure, and a watchdog thread ends the worker once the pool's process is gone.
"""

from __future__ import annotations

import os
import pickle
import signal
import threading
import time
import traceback
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zooport.envs.base_env import ActionTuple, BaseEnv, BaseEnvLike, BehaviorSpec
from zooport.envs.batched_env import BatchedEnv
from zooport.envs.capabilities import has_action_masks
from zooport.envs.compat import _convert_behavior, as_base_env
from zooport.envs.pool_shared_memory import (
    ACTIONS_SET,
    COMMAND,
    DONE,
    GENERATION,
    HAS_SEED,
    N_DECISION,
    POOL_GENERATION,
    SEED,
    SEQ,
    SIDE_IN,
    SIDE_OUT,
    SLEEPING,
    STATUS,
    WAITING,
    BehaviorLayout,
    Block,
    Control,
    Rows,
)
from zooport.envs.side_channel.incoming_message import IncomingMessage
from zooport.envs.side_channel.side_channel import SideChannel
from zooport.envs.side_channel.side_channel_manager import _append_frame, _parse_frames
from zooport.envs.steps import check_agent_ids
from zooport.errors import CorePoolError, SpecError

__all__ = ["CoreRunner", "Relays", "WorkerConfig", "run_worker", "pickle_factory",
           "core_description", "global_state_description", "next_message"]  # fmt: skip

# Commands; WRITE writes the steps held back by a NEEDS_ROOM answer into the new segments.
STEP, RESET, RENDER, CLOSE, STATE, WRITE = 1, 2, 3, 4, 5, 6
# Statuses: answered; the rows need new segments (the request is on the pipe); the command
# raised (the error is on the pipe).
OK, NEEDS_ROOM, FAILED = 0, 1, 2
COMMAND_NAMES = {STEP: "step", RESET: "reset", RENDER: "render", CLOSE: "close",
                 STATE: "global_state", WRITE: "step"}  # fmt: skip

#: How often a worker checks that the pool's process is still there (seconds).
PARENT_CHECK = 0.25
#: How long a worker whose pool's process is gone may take to close its core (seconds).
PARENT_GRACE = 3.0
#: The longest a blocked process sleeps before it looks again (a missed wake-up costs this).
SLICE = 0.005

_yield = getattr(os, "sched_yield", lambda: time.sleep(0))


@dataclass
class WorkerConfig:
    """What a worker process is started with."""

    index: int
    factory: bytes
    relay_ids: tuple[uuid.UUID, ...]
    control_name: str
    k: int
    side_bytes: int
    connection: Any
    spin: float


def next_message(connection: Any, inbox: deque[Any], wait: float) -> Any:
    """The next message of ``inbox`` or the pipe within ``wait`` s, wake-ups (None) skipped."""
    while inbox:
        message = inbox.popleft()
        if message is not None:
            return message
    while connection.poll(wait):
        message = connection.recv()
        if message is not None:
            return message
    return None


class RelayChannel(SideChannel):
    """The core's end of one of the pool's channels: it keeps the raw payloads the core sent."""

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
    """``factory`` as bytes for a worker: pickle, else cloudpickle where installed."""
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


def action_setter(core: BaseEnv) -> Callable[[str, np.ndarray, np.ndarray], None]:
    """How the pool hands ``core`` action rows it validated (a zooport core skips a check)."""
    if isinstance(core, BatchedEnv):
        return core._set_checked_actions

    def set_actions(name: str, continuous: np.ndarray, discrete: np.ndarray) -> None:
        core.set_actions(name, ActionTuple._trusted(continuous, discrete))

    return set_actions


def core_description(core: BaseEnv) -> dict[str, Any]:
    """What the pool needs to know of ``core`` (plain data, sent over the pipe)."""
    specs = {
        name: spec if isinstance(spec, BehaviorSpec) else _convert_behavior(name, spec).spec
        for name, spec in core.behavior_specs.items()
    }
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
    """What ``core`` declares of a global state (has one, its shape, its box bounds), as data.

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


class CoreRunner:
    """Runs the pool's commands on one core and writes its rows, in a worker or (core 0) in
    the pool's own process."""

    def __init__(
        self, factory: Callable[..., Any], relay_ids: Any, index: int, k: int, segments: Any
    ) -> None:
        self.relays = relays = Relays(relay_ids)
        # A copy: UnityEnvironment appends its own analytics channel to the list it is given.
        core = factory(side_channels=list(relays.channels)) if relays.channels else factory()
        self.core: BaseEnv = as_base_env(core)
        self.index, self.k, self.segments = index, k, segments
        self.description = core_description(self.core)
        self.held: dict[str, tuple[Any, Any]] = {}
        self._set_actions = action_setter(self.core)

    @property
    def label(self) -> str:
        return f"core {self.index} ({self.description['type']}, in this process)"

    def run(self, command: int, seed: int | None, side: bytes) -> dict[str, Any] | None:
        """Steps or resets the core; None when its rows fit the segments, else what does not fit,
        ``{behaviour: (rows, observation signature)}``."""
        core, i = self.core, self.index
        if side:
            self.relays.deliver(side)
        if command == STEP:
            for name, rows in self.segments.items():
                n, start = int(rows.counts[i, N_DECISION]), int(rows.start[i])
                if rows.counts[i, ACTIONS_SET] and n:  # rows the pool validated
                    end = start + n
                    self._set_actions(name, rows.continuous[start:end], rows.discrete[start:end])
            core.step()
        else:
            core.reset() if seed is None else core.reset(seed=seed)  # type: ignore[call-arg]  # seedable
        self.held = steps = {name: core.get_steps(name) for name in core.behavior_specs}
        needs = {}
        for name, (decision, terminal) in steps.items():
            check_agent_ids(name, decision, terminal)
            known = self.segments.get(name)
            if known is None or not (known.layout.holds(i, decision)
                                     and known.layout.holds(i, terminal)):  # fmt: skip
                needs[name] = (max(len(decision), len(terminal)), _signature(decision, terminal))
        if tuple(steps) != tuple(self.description["specs"]):  # a behaviour a Unity scene adds
            self.description = core_description(self.core)
            return needs
        return needs or None

    def write(self) -> bytes:
        """Writes the held rows into the segments; returns what the core sent on its relays."""
        for name, rows in self.segments.items():
            if name in self.held:
                rows.write(self.index, self.k, *self.held[name])
            else:
                rows.counts[self.index] = 0
        return self.side_out()

    def side_out(self) -> bytes:
        """What the core sent on its relays since the last call."""
        return self.relays.collect() if self.relays.channels else b""

    def answer(self, command: int) -> tuple[Any, ...]:
        """The core's picture (``("frame", array or None, why not)``) or its global state."""
        if command == STATE:
            return ("state", np.asarray(self.core.global_state()))  # type: ignore[attr-defined]  # asked only of cores with one
        try:
            frame = self.core.render()  # type: ignore[attr-defined]  # optional, beyond BaseEnv
        except (NotImplementedError, AttributeError) as exc:
            return ("frame", None, str(exc) or "it has no render()")
        return ("frame", None if frame is None else np.asarray(frame), "")


def _serve(runner: CoreRunner, control: Control, config: WorkerConfig) -> None:
    """Answers the pool's commands until ``close`` (a core that raises ends it too)."""
    i, words, connection = config.index, control.words, config.connection
    inbox: deque[Any] = deque()
    generation = seen = 0

    def message(kind: str) -> Any:
        found = None
        while found is None:
            found = next_message(connection, inbox, PARENT_CHECK)
        if found[0] != kind:
            raise CorePoolError(f"expected a {kind!r} message, got {found[0]!r}", i)
        return found[1]

    def answer(status: int, payload: Any = None) -> None:
        # In the array first, then on the pipe: the pool reads a payload once it sees the
        # answer, so a large one cannot block both ends; a blocked pool needs a wake-up.
        words[i, STATUS] = status
        words[i, DONE] = words[i, SEQ]
        if payload is not None or words[-1, WAITING]:
            connection.send(payload)

    while True:
        if words[i, SEQ] == seen:  # spin, then block on the pipe (the pool wakes us there)
            deadline = time.perf_counter() + config.spin
            while words[i, SEQ] == seen and time.perf_counter() < deadline:
                _yield()
            words[i, SLEEPING] = 1
            while words[i, SEQ] == seen:
                if connection.poll(SLICE):
                    inbox.append(connection.recv())
            words[i, SLEEPING] = 0
        seen = int(words[i, SEQ])
        command = int(words[i, COMMAND])
        while generation != words[-1, POOL_GENERATION]:  # new segments: attach them
            generation, segments = message("segments")
            for name, (memory, layout) in segments.items():
                if name in runner.segments:
                    runner.segments[name].close()
                runner.segments[name] = Rows(Block(name=memory), layout)
            words[i, GENERATION] = generation
        try:
            if command == CLOSE:
                runner.core.close()
                answer(OK)
                return
            if command in (RENDER, STATE):
                answer(OK, runner.answer(command))
                continue
            if command != WRITE:
                side = control.get(control.side_in, i, SIDE_IN)
                seed = int(words[i, SEED]) if words[i, HAS_SEED] else None
                needs = runner.run(command, seed, message("side") if side is None else side)
                if needs is not None:
                    answer(NEEDS_ROOM, ("room", needs, runner.description))
                    continue
            side = runner.write()
            answer(OK, None if control.put(control.side_out, i, SIDE_OUT, side) else ("side", side))
        except Exception as exc:
            answer(FAILED, ("error", describe_exception(exc)))
            return


def _signature(decision: Any, terminal: Any) -> Any:
    """The observations' ``(row shape, dtype)`` (of the batch with rows), checked to agree."""
    first, second = BehaviorLayout.signature(decision), BehaviorLayout.signature(terminal)
    if len(decision) and len(terminal) and first != second:
        raise SpecError(
            f"the DecisionSteps observations (row shape, dtype) {list(first)} differ from the "
            f"TerminalSteps' {list(second)}"
        )
    return first if len(decision) or not len(terminal) else second


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def _watch_parent(parent: int) -> None:
    """Ends this worker once the pool's process is gone, even inside a hung step: SIGTERM
    to the main thread (it closes its core), then a hard exit after a grace period."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK)
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGTERM)
    time.sleep(PARENT_GRACE)
    os._exit(1)


def run_worker(config: WorkerConfig) -> None:
    """The worker process: builds the core, says ``ready``, serves commands until ``close``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    control: Control | None = None
    runner: CoreRunner | None = None
    try:
        control = Control(Block(name=config.control_name), config.k, config.side_bytes)
        factory = pickle.loads(config.factory)
        runner = CoreRunner(factory, config.relay_ids, config.index, config.k, {})
        config.connection.send(("ready", runner.description))
        _serve(runner, control, config)
    except SystemExit:
        pass
    except Exception as exc:
        try:
            config.connection.send(("error", describe_exception(exc)))
        except OSError:  # the pool's process is gone
            pass
    finally:
        if runner is not None and int(control.words[config.index, COMMAND]) != CLOSE:  # type: ignore[union-attr]
            try:
                runner.core.close()
            except Exception:
                pass  # the worker is going away; the pool has been told why, or is gone
        if runner is not None:
            for rows in runner.segments.values():
                rows.close()
        if control is not None:
            control.close()
