"""The cores' side of a :class:`~zooport.envs.core_pool.CorePool`: a runner per core (in a worker,
or core 0 in the pool's process), and the side channels, relayed as raw bytes to each core."""

from __future__ import annotations

import contextlib
import importlib
import math
import os
import pickle
import signal
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from zooport.envs import pool_shared_memory as shm
from zooport.envs.base_env import ActionTuple, BaseEnv, BaseEnvLike, BehaviorSpec
from zooport.envs.batched_env import BatchedEnv, builds_own_steps
from zooport.envs.capabilities import has_action_masks
from zooport.envs.compat import _convert_behavior, as_base_env
from zooport.envs.side_channel import side_channel_manager as manager
from zooport.envs.side_channel.raw_bytes_channel import RawBytesChannel
from zooport.envs.side_channel.side_channel import IncomingMessage, SideChannel
from zooport.envs.steps import check_agent_ids
from zooport.errors import ArgumentError, CorePoolError, SpecError

__all__ = ["CoreRunner", "PoolChannels", "run_worker", "pickle_factory", "core_description",
           "describe_exception", "registry_core", "unity_instance"]  # fmt: skip

#: How often a worker looks for the pool's process, and how long it then has to close (s).
PARENT_CHECK, PARENT_GRACE = 0.25, 3.0
#: The longest a blocked process sleeps before it looks again (a missed wake-up costs this).
SLICE = 0.005

_yield = getattr(os, "sched_yield", lambda: time.sleep(0))


def relay_in(relays: Mapping[Any, RawBytesChannel], data: bytes) -> None:
    for channel_id, payload in manager._parse_frames(data) if data else ():
        if channel_id in relays:  # as Unity, ignore channels nobody registered
            relays[channel_id].message_queue.append(payload)


def relay_out(relays: Mapping[Any, RawBytesChannel]) -> bytes:  # what the core sent, framed
    out = bytearray()
    for channel in relays.values():
        for payload in channel.get_and_clear_received_messages():
            manager._append_frame(out, channel.channel_id, payload)
    return bytes(out)


class PoolChannels:
    """The side channels of a pool of ``k`` cores, and what is queued for each core."""

    def __init__(
        self, side_channels: Sequence[SideChannel] | None,
        core_side_channels: Sequence[Sequence[SideChannel] | None] | None, k: int,
    ) -> None:  # fmt: skip
        as_dict = manager.SideChannelManager._get_side_channels_dict
        shared = as_dict(side_channels)
        if core_side_channels is not None and (
            isinstance(core_side_channels, (str, bytes)) or len(core_side_channels) != k
        ):
            raise ArgumentError(
                f"Expect core_side_channels to be one list (or None) per core, {k} in all, "
                f"actually: {core_side_channels!r}"
            )
        per_core = [as_dict(c) for c in (core_side_channels or [None] * k)]
        self.shared = list(shared.values())
        self.own = [list(own.values()) for own in per_core]
        self.relay_ids = [list({**own, **shared}) for own in per_core]  # each core's relays
        self.any = bool(shared) or any(per_core)
        self._managers = [manager.SideChannelManager(c) for c in [self.shared, *self.own]]
        # What core i sends on an id goes to its own channel and to the pool's, if any.
        self._receivers = [
            {cid: [c for c in (own.get(cid), shared.get(cid)) if c is not None] for cid in ids}
            for own, ids in zip(per_core, self.relay_ids, strict=True)
        ]
        self._pending = [bytearray() for _ in range(k)]

    def take(self, which: Any) -> dict[int, bytes] | None:
        """What the channels queued for the cores ``which`` (None: the pool has no channels)."""
        if not self.any:  # (before the indices are made: no channels is the common case)
            return None
        shared = self._managers[0].generate_side_channel_messages()
        for pending, own in zip(self._pending, self._managers[1:], strict=True):
            pending += shared + own.generate_side_channel_messages()
        taken = {i: bytes(self._pending[i]) for i in np.arange(len(self._pending))[which].tolist()}
        for i in taken:
            self._pending[i].clear()
        return taken

    def deliver(self, incoming: Iterable[tuple[int, bytes]]) -> None:
        """Hands each core's ``(index, bytes)`` to the channels, then raises a channel's error."""
        error: BaseException | None = None
        for index, data in incoming:
            for channel_id, payload in manager._parse_frames(data) if data else ():
                for channel in self._receivers[index][channel_id]:
                    try:
                        channel.on_message_received(IncomingMessage(payload))
                    except Exception as exc:
                        error = error or exc
        if error is not None:
            raise error


def registry_core(env_id: str, **kwargs: Any) -> BaseEnv:
    """``default_registry[env_id].make(**kwargs)``: a factory with ``functools.partial``."""
    from zooport.envs.registry import default_registry

    return default_registry.make(env_id, **kwargs)


def unity_instance(
    environment_class: str | type, kwargs: Mapping[str, Any], side_channels: Any = None
) -> BaseEnvLike:
    """``environment_class(**kwargs, side_channels=...)``, a ``"module:attr"`` one imported here."""
    if isinstance(environment_class, str):
        module, _, attr = environment_class.partition(":")
        environment_class = getattr(importlib.import_module(module), attr)
    extra = {} if side_channels is None else {"side_channels": side_channels}
    return environment_class(**kwargs, **extra)  # type: ignore[operator]  # a class or a "module:attr" one


def pickle_factory(factory: Callable[..., Any], index: int) -> bytes:
    try:
        return pickle.dumps(factory)
    except Exception as first:  # pickle raises PicklingError, AttributeError, TypeError...
        with contextlib.suppress(Exception):  # cloudpickle: not installed, or it cannot either
            import cloudpickle

            return bytes(cloudpickle.dumps(factory))
        raise CorePoolError(
            f"core_fns[{index}] ({factory!r}) cannot be sent to a worker process: {first}; "
            "use a module-level function, a class, or functools.partial of one (or install "
            "cloudpickle for lambdas)",
            index,
        ) from None


def core_description(core: BaseEnv) -> dict[str, Any]:
    specs = {
        name: spec if isinstance(spec, BehaviorSpec) else _convert_behavior(name, spec).spec
        for name, spec in core.behavior_specs.items()
    }
    restarts = getattr(core, "restarts_finished", None)
    metadata = getattr(core, "metadata", None)
    shape = getattr(core, "global_state_shape", None)
    space = getattr(core, "global_state_space", None)
    low, high = getattr(space, "low", None), getattr(space, "high", None)
    return {
        "type": type(getattr(core, "legacy_env", core)).__name__,
        "specs": specs,
        "seedable": bool(getattr(core, "seedable", False)),
        "restarts": {n: bool(restarts(n)) if callable(restarts) else None for n in specs},
        "masks": has_action_masks(core),
        "render_fps": metadata.get("render_fps", 30) if isinstance(metadata, dict) else 30,
        "global_state": callable(getattr(core, "global_state", None)),
        "global_state_size": None if shape is None else math.prod(int(d) for d in shape),
        "global_state_bounds": None if low is None or high is None else (low, high),
    }


def describe_exception(exc: BaseException) -> tuple[str, str, str, bytes | None]:
    """``("error", type, message and traceback, the exception pickled or None)``."""
    pickled = None
    with contextlib.suppress(Exception):  # the pool unpickles it where it can
        pickled = pickle.dumps(exc)
    kind = f"{type(exc).__module__}.{type(exc).__qualname__}".removeprefix("builtins.")
    trace = "".join(traceback.format_exception(exc)).rstrip()
    return "error", kind, f"{exc}\n--- the worker's traceback:\n{trace}", pickled


class CoreRunner:
    """Runs the pool's commands on one core, in a worker or (core 0) in the pool's process."""

    def __init__(self, factory: Callable[..., Any], relay_ids: Any, index: int, k: int) -> None:
        # The core's end of each of the pool's channels keeps the raw payloads the core sent.
        self.relays = {channel_id: RawBytesChannel(channel_id) for channel_id in relay_ids}
        # A copy: UnityEnvironment appends its own analytics channel to the list it is given.
        core = factory(side_channels=list(self.relays.values())) if self.relays else factory()
        self.core: BaseEnv = as_base_env(core)
        self.index, self.k, self.segments = index, k, dict[str, shm.Rows]()
        self.description = core_description(self.core)
        self.held: dict[str, tuple[Any, Any]] = {}
        self.owes_side = False  # it asked for room: its side-channel bytes wait for the segments
        self.trusted = builds_own_steps(self.core)
        if isinstance(self.core, BatchedEnv):  # a zooport core skips the check the pool made
            self._set_actions = self.core._set_checked_actions
        else:
            self._set_actions = lambda behavior_name, continuous, discrete: self.core.set_actions(
                behavior_name, ActionTuple._trusted(continuous, discrete)
            )

    def run(self, command: int, seed: int | None, side: bytes) -> None:
        if side:  # (no call when there is no channel traffic, the common case)
            relay_in(self.relays, side)
        if command != shm.STEP:
            self.core.reset() if seed is None else self.core.reset(seed=seed)  # type: ignore[call-arg]  # seedable
            return
        for name, rows in self.segments.items():
            i = self.index
            n, start = int(rows.counts[i, shm.N_DECISION]), int(rows.start[i])
            if rows.counts[i, shm.ACTIONS_SET] and n:  # rows the pool validated
                end = start + n
                self._set_actions(name, rows.continuous[start:end], rows.discrete[start:end])
        self.core.step()

    def room(self) -> dict[str, Any]:
        needs = {}
        for name, (decision, terminal) in self.held.items():
            known = self.segments.get(name)
            if known is None or not (known.layout.holds(self.index, decision)
                                     and known.layout.holds(self.index, terminal)):  # fmt: skip
                count = max(len(decision), len(terminal))
                needs[name] = (count, shm.BehaviorLayout.signature(decision, terminal))
        return needs

    def write(self) -> None:
        for name, rows in self.segments.items():
            if name in self.held:
                rows.write(self.index, self.k, *self.held[name])
            else:
                rows.counts[self.index] = 0

    def serve(self, control: shm.Control, message: Callable[[], Any]) -> tuple[int, Any]:
        """Runs the command of its row; returns the status and what goes on the pipe (or None)."""
        i, words = self.index, control.words
        command = int(words[i, shm.COMMAND])
        if command == shm.CLOSE:
            self.core.close()
            return shm.OK, None
        if command == shm.STATE:
            return shm.OK, ("state", np.asarray(self.core.global_state()))  # type: ignore[attr-defined]  # asked only of cores with one
        if command == shm.RENDER:
            try:
                frame = self.core.render()  # type: ignore[attr-defined]  # optional, beyond BaseEnv
            except (NotImplementedError, AttributeError) as exc:
                return shm.OK, ("frame", None, str(exc) or "it has no render()")
            return shm.OK, ("frame", None if frame is None else np.asarray(frame), "")
        if command == shm.ATTACH:  # new segments: every core maps and fills them
            for name, (memory, layout) in message().items():
                if name in self.segments:
                    self.segments[name].close()
                self.segments[name] = shm.Rows(layout, memory)
            for name, (count, observations) in self.room().items():
                raise SpecError(
                    f"behavior {name!r}: core {i}'s {count} rows of observations "
                    f"{list(observations)} do not fit the pool's {self.segments[name].layout}; "
                    "every core of a pool must agree"
                )
            self.write()
            if not self.owes_side:
                return shm.OK, None  # its side-channel bytes, if any, stay where they are
        else:
            side = control.get(shm.SIDE_IN, i)
            seed = int(words[i, shm.SEED]) if words[i, shm.SEED] >= 0 else None
            self.run(command, seed, message() if side is None else side)
            self.held = steps = {n: self.core.get_steps(n) for n in self.core.behavior_specs}
            for name, (decision, terminal) in () if self.trusted else steps.items():
                check_agent_ids(name, decision, terminal)
            if new := tuple(steps) != tuple(self.description["specs"]):  # the pool must hear of it
                self.description = core_description(self.core)
            if (needs := self.room()) or new:  # its side-channel bytes follow the segments
                self.owes_side = True
                return shm.NEEDS_ROOM, ("room", needs, self.description)
            self.write()
        self.owes_side = False
        side = relay_out(self.relays)
        return shm.OK, None if control.put(shm.SIDE_OUT, i, side) else ("side", side)

    def release(self) -> None:
        for rows in self.segments.values():
            rows.close()
        self.segments.clear()


def _watch_parent(parent: int) -> None:
    """Ends this worker once the pool's process is gone, even inside a hung step."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK)
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGTERM)
    time.sleep(PARENT_GRACE)
    os._exit(1)


def run_worker(
    i: int, factory: bytes, relay_ids: Any, control_name: str, k: int, side_bytes: int,
    connection: Any, spin: float,
) -> None:  # fmt: skip
    """A worker: builds the core, says ``ready``, then answers each command until ``close``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # closes the core
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    control = shm.Control(k, side_bytes, control_name)
    words, inbox, seen, command = control.words, deque[Any](), 0, 0
    runner: CoreRunner | None = None

    def message() -> Any:  # the pool's next message, wake-ups (None) skipped
        found = None
        while found is None:  # a dead pool: EOFError (the watchdog ends a hung one)
            found = inbox.popleft() if inbox else connection.recv()
        return found

    def answer(status: int, payload: Any = None) -> None:
        # In the array first, then on the pipe: the pool reads a payload once it sees the
        # answer, so a large one cannot block both ends; a blocked pool needs a wake-up.
        words[i, shm.STATUS] = status
        words[i, shm.DONE] = words[i, shm.SEQ]
        if payload is not None or words[-1, shm.WAITING]:
            connection.send(payload)

    try:
        runner = CoreRunner(pickle.loads(factory), relay_ids, i, k)
        connection.send(("ready", runner.description))
        while True:
            if words[i, shm.SEQ] == seen:  # spin, then block on the pipe (the pool wakes us)
                deadline = time.perf_counter() + spin
                while words[i, shm.SEQ] == seen and time.perf_counter() < deadline:
                    _yield()
                words[i, shm.SLEEPING] = 1
                while words[i, shm.SEQ] == seen:
                    if connection.poll(SLICE):
                        inbox.append(connection.recv())
                words[i, shm.SLEEPING] = 0
            # Read before answering: once answered, the word may hold the pool's next command.
            seen, command = int(words[i, shm.SEQ]), int(words[i, shm.COMMAND])
            answer(*runner.serve(control, message))
            if command == shm.CLOSE:
                return
    except Exception as exc:  # the pool reads it on the pipe, while building or on FAILED
        with contextlib.suppress(OSError):  # the pool's process is gone
            answer(shm.FAILED, describe_exception(exc))
    finally:
        if runner is not None:
            if command != shm.CLOSE:
                with contextlib.suppress(Exception):  # the pool was told why, or is gone
                    runner.core.close()
            runner.release()
        control.close()
