"""Many cores in worker processes, presented as one BaseEnv: :class:`CorePool`.

Classes:
    CorePool: K cores (zooport cores, Unity builds, older ML-Agents envs) built by picklable
        factories, one per worker process, stepped together as one ``BaseEnv`` that every
        adapter consumes unchanged.

Functions (from :mod:`zooport.envs.pool_factories`, re-exported):
    registry_core: builds a registry environment (``functools.partial(registry_core, id,
        **kwargs)`` is a factory a worker can load).
    unity_instance: builds one instance of a Unity build (what :meth:`CorePool.unity` hands
        each worker).

The pool's parts: :mod:`zooport.envs.pool_handles` (a core in this process or in a worker),
:mod:`zooport.envs.pool_worker` (the worker process), :mod:`zooport.envs.pool_shared_memory`
(the buffers), :mod:`zooport.envs.pool_batches` (the cores' rows as the pool's batches),
:mod:`zooport.envs.pool_factories` (factories a worker can load), :mod:`zooport.envs.pool_channels`
(the side channels).

Design. A pool step is one step of every core, in parallel. The pool's own process steps
core 0 itself (``local_core=True``, the default in sync mode) while the workers step the
others: K cores cost K - 1 processes, the pool's process does useful work instead of
waiting, and on a machine with K CPUs nothing is oversubscribed. A worker waits for a command
on a semaphore, spinning on it first for ``spin`` seconds (yielding the CPU between tries)
and only then blocking, so a worker that is told to step again soon after answering wakes
without a system call, and one that is not gives its CPU back. The pool tells every worker
to step (a few words written to shared memory, one semaphore post each), steps its own core
while they run (a blocked worker's wake-up is hidden behind that step), then waits for each
worker the same way (spin, then block). Everything bulky crosses in shared memory, never
pickled: observations, rewards, agent and group ids, group rewards, flags and masks from the
workers, actions to them; the buffers are sized from what each core reported (twice its
agent count, at least 16 rows) and grow when a core reports more agents or another shape
(:mod:`zooport.envs.pool_shared_memory`). The pipe to each worker carries only control
messages: start-up, errors, a new buffer's name, side-channel bytes too large for their
64 KiB area, rendered frames.

Agent ids. The pool's id of agent ``a`` of core ``i`` (of K) is ``a * K + i``; ``core_of``
maps back. Rows of a pool batch are core 0's, then core 1's, and so on. Every pool id must fit
int32, as ML-Agents' ids do.

Seeding. ``reset(seed=s)`` resets core ``i`` with ``seed=s + i``. The pool is ``seedable``
only when every core is; ``reset(seed=...)`` on one that is not raises (adapters then reset
without a seed and warn, as they do for a Unity build).

Side channels. A channel given to the pool (``side_channels=``) reaches every core; one in
``core_side_channels[i]`` talks to core ``i`` only (:mod:`zooport.envs.pool_channels` says
how). Each core gets relay channels, passed to its factory as ``side_channels=[...]``: a
factory must take that keyword when the pool has channels for it (zooport cores and
``UnityEnvironment`` do).

Async mode. ``mode="async"``: ``step()`` tells every idle core to step and returns as soon as
``min_ready`` cores have answered; the agents of the others have no decision in that step
(DESIGN.md's decision periods: an adapter keeps their last observation, reports reward 0 and
ignores their actions, and what they earn arrives with their next decision). A core's results
are handed out exactly once, so no reward is lost.

Faults. A worker that dies, does not answer within ``timeout`` seconds, or whose core raises
turns into a :class:`~zooport.errors.CorePoolError` naming the core and the original error,
in bounded time (:mod:`zooport.envs.pool_handles` says how). After a fault the pool is
unusable: every call but ``close()`` raises. ``close()`` is idempotent; a pool that is
garbage collected, or alive when the interpreter exits, is closed the same way.

Start method. ``"spawn"`` (the default) or ``"forkserver"``; ``"fork"`` is refused (see
:data:`~zooport.envs.pool_options.START_METHODS`). Factories must be picklable, and a script
that makes a pool needs the ``if __name__ == "__main__":`` guard.
"""

from __future__ import annotations

import multiprocessing
import os
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from zooport.envs.actions import ActionTuple
from zooport.envs.arguments import check_int, check_seed
from zooport.envs.base_env import BaseEnv
from zooport.envs.pool_batches import merge_steps, split_actions
from zooport.envs.pool_channels import PoolChannels
from zooport.envs.pool_factories import (
    UNITY_BUILD_OPTIONS,
    registry_core,
    unity_factories,
    unity_instance,
)
from zooport.envs.pool_handles import BUSY, IDLE, LocalCore, WorkerCore, wait_for_answers
from zooport.envs.pool_options import (
    MODES,
    START_METHODS,
    PoolOptions,
    check_factories,
)
from zooport.envs.pool_views import GlobalStateLayout, PoolViews, agreed_specs, merged_specs
from zooport.envs.pool_worker import RESET, STEP, pickle_factory
from zooport.envs.side_channel.side_channel import SideChannel
from zooport.envs.specs import AgentId, BehaviorMapping, BehaviorName, BehaviorSpec
from zooport.envs.step_guard import StepGuard
from zooport.envs.steps import DecisionSteps, TerminalSteps
from zooport.errors import (
    ArgumentError,
    CorePoolError,
    EnvClosedError,
    EnvNotResetError,
    ReentrantCallError,
    SpecError,
    UnknownAgentError,
    UnknownBehaviorError,
    look_up,
)

__all__ = ["CorePool", "registry_core", "unity_instance", "MODES", "START_METHODS"]

#: Seeds travel to the workers as int64.
_MAX_SEED = 2**63
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def _shutdown(handles: list[Any], owner: int) -> None:
    """Closes every core of a pool that was not closed (garbage collection, exit)."""
    if os.getpid() != owner:
        return  # a fork of the pool's process: the workers are its parent's
    for handle in handles:
        try:
            handle.close()
        except Exception:
            pass  # nobody is left to tell: the pool is gone or the interpreter is exiting


class CorePool(PoolViews, BaseEnv):
    """K cores in worker processes as one ``BaseEnv``; see the module docstring.

    Args:
        core_fns: one zero-argument factory per core, each returning a BaseEnv (a zooport
            core, a ``UnityEnvironment``, an older-generation ML-Agents env). Each is called
            in its worker (core 0's in this process when ``local_core``), with
            ``side_channels=[...]`` when the pool has channels for that core.
        mode: ``"sync"`` (every step steps every core) or ``"async"`` (see the module
            docstring).
        min_ready: async mode: how many cores must have answered before ``step()`` returns
            (default 1). Sync mode: None or K.
        local_core: step core 0 in this process (default: True in sync mode, False in async
            mode, where a slow core 0 would hold back every step).
        side_channels: channels that reach every core (see the module docstring).
        core_side_channels: one list per core (None for none): channels of that core only.
        timeout: seconds a worker may take to start or to answer a command before it counts
            as hung (None: wait as long as it lives). A worker's death is noticed within a
            fraction of a second either way.
        start_method: ``"spawn"`` or ``"forkserver"``.
        spin: seconds the pool and each worker spin on a semaphore before they block
            (0: block at once).
        side_channel_bytes: the size of each worker's two side-channel areas; larger
            messages travel on the pipe.

    Raises:
        ArgumentError, ArgumentTypeError: a bad argument.
        CorePoolError: a factory that cannot be pickled, or one that raised, or a worker
            that died or hung while starting.
        SpecError: the cores' behaviours or specs differ (the message names the core).

    Example:
        >>> from functools import partial
        >>> import numpy as np
        >>> from zooport.envs.builtin.ball_balance import BallBalance
        >>> pool = CorePool([partial(BallBalance, n_agents=2) for _ in range(2)])
        >>> pool.reset(seed=0)  # core 0 gets seed 0, core 1 seed 1
        >>> decision, terminal = pool.get_steps("BallBalance")
        >>> decision.agent_id.tolist()  # core 0's agents 0 and 1, then core 1's
        [0, 2, 1, 3]
        >>> pool.core_of(3)  # (core index, that core's own id)
        (1, 1)
        >>> pool.set_actions("BallBalance", ActionTuple(np.zeros((4, 2), np.float32)))
        >>> pool.step()
        >>> pool.get_steps("BallBalance")[0].reward.tolist()
        [0.10000000149011612, 0.10000000149011612, 0.10000000149011612, 0.10000000149011612]
        >>> pool.close()
    """

    def __init__(
        self,
        core_fns: Sequence[Callable[..., Any]],
        *,
        mode: str = "sync",
        min_ready: int | None = None,
        local_core: bool | None = None,
        side_channels: Sequence[SideChannel] | None = None,
        core_side_channels: Sequence[Sequence[SideChannel] | None] | None = None,
        timeout: float | None = 60.0,
        start_method: str = "spawn",
        spin: float = 0.001,
        side_channel_bytes: int = 1 << 16,
    ) -> None:
        factories = check_factories(core_fns)
        k = len(factories)
        options = PoolOptions.checked(
            k, mode=mode, min_ready=min_ready, local_core=local_core, timeout=timeout,
            start_method=start_method, spin=spin, side_channel_bytes=side_channel_bytes,
        )  # fmt: skip
        self._options = options
        self._mode, self._min_ready = options.mode, options.min_ready
        self._timeout, self._spin = options.timeout, options.spin
        local = options.local_core
        self._channels = PoolChannels(side_channels, core_side_channels, k)
        self._num_cores = k
        self._closed = False
        self._was_reset = False
        self._fault: BaseException | None = None
        self._handles: list[Any] = []
        self._ready: list[Any] = []
        self._steps: dict[str, tuple[DecisionSteps, TerminalSteps]] = {}
        self._empty_terminal: dict[str, TerminalSteps] = {}
        self._global_layout: GlobalStateLayout | None = None
        self._state_space: Any = None
        # A child of os.fork() shares the workers but not the pool's state: it is refused.
        self._owner = os.getpid()
        # Closes the workers when the pool is garbage collected or the interpreter exits.
        self._finalizer = weakref.finalize(self, _shutdown, self._handles, self._owner)
        # Refuses a step or reset entered while another runs (a second thread).
        self._guard = StepGuard("CorePool")
        try:
            self._start(factories, local, options.start_method, options.side_channel_bytes)
            self._specs = agreed_specs([(h.label, h.description) for h in self._handles])
        except BaseException:
            self._closed = True
            self._finalizer()
            raise
        self._workers = [h for h in self._handles if h.kind == "worker"]
        self._local = self._handles[0] if local else None
        # Commands start on the workers first; the local core runs its own meanwhile.
        self._start_order = [*self._workers, *self._handles[:1]] if local else self._workers
        # One core in this process: its own steps are the pool's (ids are unchanged at K=1).
        self._passthrough = self._handles[0].core if local and k == 1 else None
        self.seedable = all(h.description["seedable"] for h in self._handles)

    # ------------------------------------------------------------------ construction

    def _start(
        self, factories: list[Callable[..., Any]], local: bool, method: str, side_bytes: int
    ) -> None:
        context = multiprocessing.get_context(method)
        # Async mode blocks until any worker answers: each also posts this semaphore.
        self._any_done = context.Semaphore(0) if self._mode == "async" else None
        pickled = {i: pickle_factory(f, i) for i, f in enumerate(factories) if i > 0 or not local}
        handles: list[Any] = [None] * len(factories)
        for i, data in pickled.items():
            handles[i] = WorkerCore(
                i,
                data,
                self._channels.relay_ids[i],
                len(factories),
                context,
                self._spin,
                side_bytes,
                self._timeout,
                self._any_done,
            )
            self._handles.append(handles[i])
        if local:  # built while the workers start
            handles[0] = LocalCore(0, factories[0], self._channels.relay_ids[0], len(factories))
            self._handles.insert(0, handles[0])
        for handle in handles:
            if handle.kind == "worker":
                handle.wait_ready()

    # ------------------------------------------------------------------ the pool's own API

    @property
    def num_cores(self) -> int:
        """K, the number of cores."""
        return self._num_cores

    @property
    def mode(self) -> str:
        """``"sync"`` or ``"async"``."""
        return self._mode

    @property
    def min_ready(self) -> int:
        """How many cores answer before ``step()`` returns (K in sync mode)."""
        return self._min_ready

    @property
    def closed(self) -> bool:
        """True once ``close()`` was called."""
        return self._closed

    @property
    def worker_pids(self) -> list[int]:
        """The process ids of the workers (core 0 is in this process when local)."""
        return [h.process.pid for h in self._handles if h.kind == "worker"]

    @property
    def side_channels(self) -> list[SideChannel]:
        """The channels given to the pool (they reach every core)."""
        return list(self._channels.shared)

    def core_side_channels(self, index: int) -> list[SideChannel]:
        """The channels of core ``index`` alone."""
        return list(self._channels.own[self._check_index(index)])

    def core_of(self, agent_id: AgentId) -> tuple[int, AgentId]:
        """``(core index, the core's own agent id)`` of a pool agent id.

        The pool's id of agent ``a`` of core ``i`` is ``a * K + i``.

        Raises:
            ArgumentTypeError: ``agent_id`` is not an int.
        """
        core_id, index = divmod(_any_int(agent_id, "agent_id"), self._num_cores)
        return index, core_id

    def pool_agent_id(self, index: int, core_agent_id: AgentId) -> AgentId:
        """The pool's id of agent ``core_agent_id`` of core ``index`` (``a * K + i``)."""
        index = self._check_index(index)
        k = self._num_cores
        own = check_int(
            core_agent_id, "core_agent_id", -((index - _INT32_MIN) // k),
            maximum=(_INT32_MAX - index) // k, where=f"CorePool of {k} (pool ids are int32)",
        )  # fmt: skip
        return own * k + index

    def restarts_finished(self, behavior_name: BehaviorName) -> bool:
        """False when some core says it does not restart the behaviour's finished agents."""
        self._check_open()
        self._spec(behavior_name)
        return all(h.description["restarts"].get(behavior_name) is not False for h in self._handles)

    @property
    def has_action_masks(self) -> bool:
        """Whether every core sends action masks for its discrete behaviours (each core asked
        by :func:`~zooport.envs.capabilities.has_action_masks`: a zooport core that does not
        implement ``_action_mask`` does not). Adapters read this when their ``action_masks``
        option is left on auto, as they would read a core."""
        self._check_open()
        return all(h.description["masks"] for h in self._handles)

    @property
    def metadata(self) -> dict[str, Any]:
        """Core 0's ``render_fps``; the pool renders ``rgb_array`` pictures."""
        fps = self._handles[0].description["render_fps"]
        return {"render_modes": ["rgb_array"], "render_fps": fps}

    # ------------------------------------------------------------------ BaseEnv

    @property
    def behavior_specs(self) -> BehaviorMapping:
        self._check_open()
        return self._specs

    def reset(self, seed: int | None = None) -> None:
        """Resets every core; with ``seed``, core ``i`` gets ``seed + i``.

        Raises:
            CorePoolError: ``seed`` given but a core cannot be seeded, or a fault.
        """
        self._check_usable()
        seed = check_seed(seed, "CorePool.reset")
        if seed is not None:
            if seed >= _MAX_SEED - self._num_cores:
                raise ArgumentError(
                    f"CorePool.reset: expected seed < 2**63 - {self._num_cores} (it travels as "
                    f"int64, plus the core index), got {seed}"
                )
            if not self.seedable:
                first = next(h for h in self._handles if not h.description["seedable"])
                raise CorePoolError(
                    f"reset(seed={seed}): {first.label} cannot be seeded (it declares no "
                    "seedable = True reset(seed=...)); call reset() without a seed"
                )
        self._guard.enter("reset")
        self._channels.gather()
        try:
            # Async: a step still running finishes first; its results are dropped, its
            # side-channel messages delivered.
            incoming = [(h, h.finish()) for h in self._handles if h.state == BUSY]
            for handle in self._start_order:
                handle.start(RESET, None if seed is None else seed + handle.index,
                             self._channels.take(handle.index))  # fmt: skip
            incoming += [(handle, handle.finish()) for handle in self._handles]
        except BaseException as exc:
            self._guard.abort(exc)
            self._broke(exc)
            raise
        self._guard.reset_done()
        self._was_reset = True
        self._publish(list(self._handles))
        self._channels.deliver(incoming)

    def step(self) -> None:
        """Steps every core (sync mode) or the idle ones, until ``min_ready`` answered.

        Before the first ``reset()``, a pool whose cores report no behaviour yet (Unity
        scenes whose agents have not asked for a decision) is reset instead, as a
        ``UnityEnvironment``'s first ``step()`` is: that is how adapters read late specs.
        """
        if not self._was_reset and not self._closed and not len(self._specs):
            self.reset()
            return
        self._check_ready()
        self._guard.enter("step")
        self._channels.gather()
        try:
            if self._mode == "sync":
                for handle in self._start_order:
                    handle.start(STEP, None, self._channels.take(handle.index))
                if self._local is not None and self._workers:
                    # While the workers finish: the local core's rows, ready to merge.
                    self._local.prepare_parts()
                ready = self._handles
            else:
                for handle in self._start_order:
                    if handle.state == IDLE:
                        handle.start(STEP, None, self._channels.take(handle.index))
                ready = wait_for_answers(self._handles, self._min_ready, self._any_done, self._spin)
            incoming = [(handle, handle.finish()) for handle in ready]
        except BaseException as exc:
            self._guard.abort(exc)
            self._broke(exc)
            raise
        self._guard.exit()
        self._publish(list(ready))
        # After the step is published: a channel that raises loses no result.
        self._channels.deliver(incoming)

    def get_steps(self, behavior_name: BehaviorName) -> tuple[DecisionSteps, TerminalSteps]:
        """This step's DecisionSteps and TerminalSteps of the behaviour, over every core that
        answered (rows of core 0 first); pool agent ids (see :meth:`core_of`)."""
        if self._guard.running is not None:
            self._reentered("get_steps")
        steps = self._steps.get(behavior_name)
        if steps is None:
            self._check_ready()
            spec = self._spec(behavior_name)
            if self._passthrough is not None:
                return self._passthrough.get_steps(behavior_name)
            empty = self._empty_terminal.get(behavior_name)
            if empty is None:
                empty = self._empty_terminal[behavior_name] = TerminalSteps.empty(spec)
            steps = self._steps[behavior_name] = merge_steps(
                behavior_name, spec, [h.parts(behavior_name) for h in self._ready], empty
            )
        return steps

    def set_actions(self, behavior_name: BehaviorName, action: ActionTuple) -> None:
        """Sets the actions of the agents in this step's DecisionSteps (one row each)."""
        if self._guard.running is not None:
            self._reentered("set_actions")
        self._check_ready()
        spec = self._spec(behavior_name)
        if self._passthrough is not None:  # the core validates as the pool would
            self._passthrough.set_actions(behavior_name, action)
            return
        counts = [h.decision_count(behavior_name) for h in self._ready]
        action = spec.action_spec._validate_action(action, sum(counts), behavior_name)
        for handle, (continuous, discrete) in zip(
            self._ready, split_actions(action, counts), strict=True
        ):
            if len(continuous):
                handle.set_actions(behavior_name, continuous, discrete)

    def set_action_for_agent(
        self, behavior_name: BehaviorName, agent_id: AgentId, action: ActionTuple
    ) -> None:
        """Sets one agent's action (a batch of one); the others that decided take zeros."""
        if self._guard.running is not None:
            self._reentered("set_action_for_agent")
        self._check_ready()
        spec = self._spec(behavior_name)
        action = spec.action_spec._validate_action(action, 1, behavior_name)
        decision = self.get_steps(behavior_name)[0]
        if agent_id not in decision:
            raise UnknownAgentError(
                f"behavior {behavior_name!r}: agent {agent_id!r} did not request a decision at "
                f"the last step; agents that did: {decision.agent_id.tolist()}"
            )
        index, core_id = self.core_of(agent_id)
        self._handles[index].set_action_for_agent(behavior_name, agent_id, core_id, action)

    def close(self) -> None:
        """Closes every core and stops every worker; a second call does nothing.

        A close interrupted (Ctrl-C) leaves the pool unusable and not closed: call it again
        to close what is left.

        Raises:
            CorePoolError: a core's own ``close()`` raised (after every core was closed).
        """
        if self._closed:
            return
        self._check_owner()
        self._steps.clear()
        self._ready = []
        # After a fault, what a core says while closing belongs to that fault (reported).
        healthy = self._fault is None
        if healthy:
            self._fault = CorePoolError("close() was interrupted; call close() again")
        errors = [error for error in (h.close() for h in self._handles) if error is not None]
        self._any_done = None  # the last reference: its name leaves /dev/shm now
        self._closed = True
        self._finalizer.detach()
        if errors and healthy:
            raise errors[0]

    def __reduce__(self) -> Any:
        raise CorePoolError(
            "a CorePool cannot be pickled or copied: it owns worker processes; pickle the core "
            "factories and build a new pool from them"
        )

    def __repr__(self) -> str:
        types = [h.description["type"] for h in self._handles]
        state = " closed" if self._closed else ""
        return f"CorePool({self._num_cores} cores {types}, mode={self._mode!r}{state})"

    # ------------------------------------------------------------------ Unity

    @classmethod
    def unity(cls, file_name: str | None, instances: int = 2, **options: Any) -> CorePool:
        """A pool of ``instances`` copies of one Unity build, each its own ``UnityEnvironment``.

        Instance ``i`` gets ``worker_id + i`` (so its port, ``base_port + worker_id + i``,
        differs from every other instance's; give a second pool on the same machine another
        ``worker_id``) and Unity's random seed ``seed + i``. A Unity build cannot be reseeded
        from Python, so the pool is not ``seedable``.

        Args:
            file_name: the build (as for ``UnityEnvironment``; None connects to the Editor,
                which is one instance only).
            instances: how many copies.
            **options: the keywords of :func:`~zooport.envs.pool_factories.unity_factories`
                (``worker_id``, ``base_port``, ``seed``, ``no_graphics``, ``timeout_wait``,
                ``additional_args``, ``log_folder``, ``environment_class``) build the
                instances; the others are :class:`CorePool`'s (``mode``, ``side_channels``,
                ``timeout``, ...).
        """
        build = {key: options.pop(key) for key in UNITY_BUILD_OPTIONS if key in options}
        return cls(unity_factories(file_name, instances, **build), **options)

    # ------------------------------------------------------------------ internals

    def _publish(self, ready: list[Any]) -> None:
        self._ready = ready
        for handle in ready:
            handle.state = IDLE
        if self._steps:
            self._steps.clear()
        for handle in ready:
            if handle.description_changed:
                handle.description_changed = False
                self._merge_specs(handle)

    def _merge_specs(self, handle: Any) -> None:
        """A core reported behaviours late (a Unity scene): add them, or reject a conflict."""
        try:
            self._specs = merged_specs(self._specs, (handle.label, handle.description))
        except SpecError as error:
            self._fault = error
            raise
        self._global_layout = None  # the new description is read again
        self._state_space = None

    def _spec(self, name: BehaviorName) -> BehaviorSpec:
        return look_up(self._specs, name, UnknownBehaviorError, lambda: (
            f"CorePool has no behavior {name!r}; behaviors: {list(self._specs)}"
        ))  # fmt: skip

    def _broke(self, exc: BaseException) -> None:
        self._steps.clear()
        if isinstance(exc, CorePoolError):
            self._fault = exc
        else:
            self._fault = CorePoolError(
                f"{type(exc).__name__} while the cores were running; their state is unknown"
            )
            self._fault.__cause__ = exc

    def _check_index(self, index: int) -> int:
        return check_int(index, "core index", 0, maximum=self._num_cores - 1, where="CorePool")

    def _check_owner(self) -> None:
        if os.getpid() != self._owner:
            raise CorePoolError(
                f"this CorePool belongs to process {self._owner}, not to this process "
                f"({os.getpid()}, made by os.fork()?): the cores would drift out of step; "
                "build a pool in this process instead"
            )

    def _reentered(self, call: str) -> None:
        raise ReentrantCallError(
            f"CorePool.{call}() was called while its {self._guard.running}() was running "
            "(from another thread or a callback); the pool is not thread-safe: call it from "
            "one place, one call at a time"
        )

    def _check_open(self) -> None:
        if self._closed:
            raise EnvClosedError("CorePool was used after close()")
        self._check_owner()

    def _check_usable(self) -> None:
        self._check_open()
        if self._fault is not None:
            first_line = str(self._fault).split("\n", 1)[0]
            raise CorePoolError(
                f"the pool is unusable after a failure ({first_line}); close() it",
                getattr(self._fault, "core_index", None),
            ) from self._fault

    def _check_ready(self) -> None:
        self._check_usable()
        if not self._was_reset:
            raise EnvNotResetError(
                "CorePool: call reset() before step(), get_steps() or set_actions()"
            )


def _any_int(value: Any, name: str) -> int:
    """An agent id: any int64 (a core's ids may be negative)."""
    return check_int(value, name, -(2**63), maximum=2**63 - 1, where="CorePool")
