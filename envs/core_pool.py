"""Many cores in worker processes, presented as one BaseEnv: :class:`CorePool`. A pool step is
one step of every core in parallel (core 0 in this process by default in sync mode), with one
write to a shared control array and one gather of the rows the cores wrote into shared memory
(:mod:`zooport.envs.pool_shared_memory`), so the pool's own work per step does not grow with K.
Agent ``a`` of core ``i`` (of K) is pool agent ``a * K + i``; ``reset(seed=s)`` gives core ``i``
the seed ``s + i``; a dead, hung or raising worker is a :class:`~zooport.errors.CorePoolError`.
"""

from __future__ import annotations

import multiprocessing
import os
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from zooport.envs.actions import ActionTuple
from zooport.envs.arguments import check_seed
from zooport.envs.base_env import BaseEnv
from zooport.envs.pool_channels import PoolChannels
from zooport.envs.pool_factories import (
    UNITY_BUILD_OPTIONS,
    registry_core,
    unity_factories,
    unity_instance,
)
from zooport.envs.pool_handles import Workers
from zooport.envs.pool_options import MODES, START_METHODS, PoolOptions, check_factories
from zooport.envs.pool_shared_memory import N_DECISION, Rows, gather, scatter, scatter_one
from zooport.envs.pool_views import GlobalStateLayout, PoolViews, agreed_specs
from zooport.envs.pool_worker import (
    CLOSE,
    COMMAND_NAMES,
    RESET,
    STEP,
    CoreRunner,
    core_description,
    pickle_factory,
)
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
    UnknownAgentError,
    UnknownBehaviorError,
    look_up,
)

__all__ = ["CorePool", "registry_core", "unity_instance", "MODES", "START_METHODS"]

#: This process's id, kept current across os.fork() (a pool compares it on every call).
_PID = [os.getpid()]
os.register_at_fork(after_in_child=lambda: _PID.__setitem__(0, os.getpid()))


def _shutdown(workers: Workers, local: list[Any], owner: int) -> None:
    """Closes a pool that was not closed (garbage collection, exit)."""
    if _PID[0] != owner:
        return  # a fork of the pool's process: the workers are its parent's
    try:
        workers.close()
        for runner in local:
            runner.core.close()
    except Exception:
        pass  # nobody is left to tell: the pool is gone or the interpreter is exiting


class CorePool(PoolViews, BaseEnv):
    """K cores in worker processes as one ``BaseEnv``; see the module docstring.

    Args:
        core_fns: one picklable zero-argument factory per core, returning a BaseEnv (called
            with ``side_channels=[...]`` when the pool has channels for that core).
        mode: ``"sync"`` (every step steps every core) or ``"async"`` (a step returns once
            ``min_ready`` cores answered, default 1; the others' agents have no decision).
        local_core: step core 0 in this process (default: in sync mode only).
        side_channels: channels that reach every core.
        core_side_channels: one list per core (None for none): channels of that core only.
        timeout: seconds a worker may take to start or answer before it counts as hung.
        start_method: ``"spawn"`` or ``"forkserver"`` (a script needs the ``__main__`` guard).
        spin: seconds the pool and each worker spin before they block (0 <= spin < 1).
        side_channel_bytes: each core's side-channel areas; larger messages use the pipe.

    Example:
        >>> from functools import partial
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
        k = self._num_cores = len(factories)
        options = PoolOptions.checked(
            k, mode=mode, min_ready=min_ready, local_core=local_core, timeout=timeout,
            start_method=start_method, spin=spin, side_channel_bytes=side_channel_bytes,
        )  # fmt: skip
        self._mode, self._min_ready = options.mode, options.min_ready
        self._channels = PoolChannels(side_channels, core_side_channels, k)
        # _live: reset, open and healthy (the one check a call makes on its fast path).
        self._closed = self._was_reset = self._live = False
        self._fault: BaseException | None = None
        self._steps: dict[str, tuple[DecisionSteps, TerminalSteps]] = {}
        self._taken: dict[str, np.ndarray] = {}
        self._global_layout: GlobalStateLayout | None = None
        self._state_space: Any = None
        # A child of os.fork() shares the workers but not the pool's state: it is refused.
        self._owner = os.getpid()
        self._guard = StepGuard("CorePool")  # refuses a call made while a step runs
        local = options.local_core
        # Cores whose step was started and not handed out; answered, not handed out; handed
        # out by the last step (whose rows get_steps gathers).
        self._running = np.zeros(k, bool)
        self._fresh = np.zeros(k, bool)
        self._ready = np.zeros(k, bool)
        pickled = {i: pickle_factory(f, i) for i, f in enumerate(factories) if i or not local}
        context = multiprocessing.get_context(options.start_method)
        self._workers = Workers(
            k, pickled, self._channels.relay_ids, context, options.spin,
            options.side_channel_bytes, options.timeout,
        )  # fmt: skip
        rows = self._workers.rows
        self._local: list[CoreRunner] = []  # core 0 when it is in this process
        self._local_mask = np.arange(k) == 0 if local else np.zeros(k, bool)
        self._finalizer = weakref.finalize(self, _shutdown, self._workers, self._local, self._owner)
        try:
            if local:  # built while the workers start
                try:
                    runner = CoreRunner(factories[0], self._channels.relay_ids[0], 0, k, rows)
                except Exception as exc:
                    name = type(exc).__name__
                    raise CorePoolError(f"core 0: its factory raised {name}: {exc}", 0) from exc
                self._local.append(runner)
            self._workers.wait_ready()
            self._specs = agreed_specs([(self._label(i), self._description(i)) for i in range(k)])
            self._names = tuple(self._specs)
        except BaseException:
            self._closed = True
            self._finalizer()
            raise
        # One core in this process: its own steps are the pool's (ids are unchanged at K=1).
        self._passthrough = self._local[0].core if local and k == 1 else None
        self._core_specs: Any = None  # the passthrough core's behavior_specs at its last step
        self.seedable = all(self._description(i)["seedable"] for i in range(k))

    @property
    def behavior_specs(self) -> BehaviorMapping:
        self._check_open()
        return self._specs

    def reset(self, seed: int | None = None) -> None:
        """Resets every core; with ``seed``, core ``i`` gets ``seed + i``."""
        self._check_ready(reset=True)
        seed = check_seed(seed, "CorePool.reset")
        k = self._num_cores
        if seed is not None:
            if seed >= 2**63 - k:  # seeds travel as int64
                raise ArgumentError(
                    f"CorePool.reset: expected seed < 2**63 - {k} (it travels as int64, plus "
                    f"the core index), got {seed}"
                )
            if not self.seedable:
                first = next(i for i in range(k) if not self._description(i)["seedable"])
                raise CorePoolError(
                    f"reset(seed={seed}): {self._label(first)} cannot be seeded (it declares "
                    "no seedable = True reset(seed=...)); call reset() without a seed"
                )
        self._guard.enter("reset")
        try:
            # Async: a step still running finishes first; its results are dropped, its
            # side-channel messages delivered.
            incoming = self._finish_running()
            seeds = None if seed is None else seed + np.arange(k)
            incoming += self._run(RESET, np.ones(k, bool), seeds)
        except BaseException as exc:
            self._guard.abort(exc)
            self._broke(exc)
            raise
        self._guard.reset_done()
        self._was_reset = self._live = True
        self._channels.deliver(incoming)

    def step(self) -> None:
        """Steps every core (sync mode) or the idle ones, until ``min_ready`` answered.

        Before the first ``reset()``, a pool with no behaviour yet (a Unity scene) is reset
        instead, as a ``UnityEnvironment``'s first ``step()`` is.
        """
        if not self._live or _PID[0] != self._owner:
            if not self._was_reset and not self._closed and not len(self._specs):
                self.reset()
                return
            self._check_ready()
        self._guard.enter("step")
        try:
            if self._passthrough is not None:
                incoming = self._run_alone(STEP, None)
            elif self._mode == "sync":
                incoming = self._run(STEP, None)
            else:
                incoming = self._run(STEP, ~(self._running | self._fresh))
        except BaseException as exc:
            self._guard.abort(exc)
            self._broke(exc)
            raise
        self._guard.exit()
        if incoming:  # after the step is published: a channel that raises loses no result
            self._channels.deliver(incoming)

    def get_steps(self, behavior_name: BehaviorName) -> tuple[DecisionSteps, TerminalSteps]:
        """This step's DecisionSteps and TerminalSteps of the behaviour, over every core that
        answered (rows of core 0 first); pool agent ids (see :meth:`core_of`)."""
        if not self._live or self._guard.running is not None or _PID[0] != self._owner:
            self._check_ready("get_steps")
        steps = self._steps.get(behavior_name)
        if steps is None:
            if self._passthrough is not None and behavior_name in self._names:
                return self._passthrough.get_steps(behavior_name)
            spec = self._spec(behavior_name)
            rows = self._workers.rows.get(behavior_name)
            if rows is None:
                steps = DecisionSteps.empty(spec), TerminalSteps.empty(spec)
            else:
                steps = gather(rows, spec, self._taken_rows(behavior_name, rows), self._ready)
            self._steps[behavior_name] = steps
        return steps

    def set_actions(self, behavior_name: BehaviorName, action: ActionTuple) -> None:
        """Sets the actions of the agents in this step's DecisionSteps (one row each)."""
        if not self._live or self._guard.running is not None or _PID[0] != self._owner:
            self._check_ready("set_actions")
        if self._passthrough is not None and behavior_name in self._names:
            self._passthrough.set_actions(behavior_name, action)  # it validates as the pool would
            return
        spec = self._spec(behavior_name)
        rows = self._workers.rows.get(behavior_name)
        taken = self._taken_rows(behavior_name, rows) if rows is not None else np.zeros(0, int)
        action = spec.action_spec._validate_action(action, len(taken), behavior_name)
        if rows is not None and len(taken):
            scatter(rows, taken, action, self._ready)

    def set_action_for_agent(
        self, behavior_name: BehaviorName, agent_id: AgentId, action: ActionTuple
    ) -> None:
        """Sets one agent's action (a batch of one); the others that decided take zeros."""
        self._check_ready("set_action_for_agent")
        spec = self._spec(behavior_name)
        action = spec.action_spec._validate_action(action, 1, behavior_name)
        decision = self.get_steps(behavior_name)[0]
        if agent_id not in decision:
            raise UnknownAgentError(
                f"behavior {behavior_name!r}: agent {agent_id!r} did not request a decision at "
                f"the last step; agents that did: {decision.agent_id.tolist()}"
            )
        if self._passthrough is not None:
            self._passthrough.set_action_for_agent(behavior_name, agent_id, action)
            return
        rows = self._workers.rows[behavior_name]  # it has this agent
        scatter_one(rows, self.core_of(agent_id)[0], agent_id, action)

    def close(self) -> None:
        """Closes every core and stops every worker; an interrupted close can be called again."""
        if self._closed:
            return
        self._check_open()
        self._steps.clear()
        self._live = False
        # After a fault, what a core says while closing belongs to that fault (reported).
        healthy = self._fault is None
        if healthy:
            self._fault = CorePoolError("close() was interrupted; call close() again")
        closing = [self._workers.close(broken=not healthy)]
        while self._local:
            try:
                self._local[0].core.close()
            except Exception as exc:  # its label needs it: popped after
                error = self._local_error(CLOSE, exc)
                error.__cause__ = exc
                closing.insert(0, error)
            finally:
                self._local.pop()
        self._closed = True
        self._finalizer.detach()
        errors = [e for e in closing if e is not None]
        if errors and healthy:
            raise errors[0]

    @classmethod
    def unity(cls, file_name: str | None, instances: int = 2, **options: Any) -> CorePool:
        """A pool of ``instances`` copies of one Unity build; instance ``i`` gets ``worker_id + i``
        and Unity's seed ``seed + i`` (``options``: those of
        :func:`~zooport.envs.pool_factories.unity_factories` and the pool's)."""
        build = {key: options.pop(key) for key in UNITY_BUILD_OPTIONS if key in options}
        return cls(unity_factories(file_name, instances, **build), **options)

    def _run(self, command: int, start: np.ndarray | None, seeds: Any = None) -> list[Any]:
        """Runs ``command`` on the cores ``start`` (None: every core) and publishes those that
        answered; returns their side-channel bytes."""
        if self._passthrough is not None:
            return self._run_alone(command, None if seeds is None else int(seeds[0]))
        workers, k = self._workers, self._num_cores
        if start is None:  # every worker: a slice, the fast path
            which: Any = workers.every
            self._running[which] = True
            local = bool(self._local)
        else:
            local = bool(self._local) and bool(start[0])
            started = start & ~self._local_mask
            which = np.flatnonzero(started)
            self._running |= started
        sides = None
        if self._channels.any:
            self._channels.gather()
            sides = {i: self._channels.take(i) for i in np.arange(k)[which].tolist()}
        workers.command(command, which, None if seeds is None else seeds[which], sides)
        requests: dict[int, Any] = {}
        if local:  # while the workers run theirs
            seed = None if seeds is None else int(seeds[0])
            try:
                needs = self._local[0].run(command, seed, self._channels.take(0))
            except Exception as exc:
                raise self._local_error(command, exc) from exc
            if needs is not None:
                requests = {0: needs}  # its rows are written once they have room
            else:
                self._local_side = self._local[0].write()
        if self._mode == "sync" or command == RESET:
            workers.wait(which)
            answered = self._running.copy()
        else:
            need = self._min_ready - int(self._fresh.sum()) - int(local)
            if need > 0:
                workers.wait(which, need, self._running)
            answered = self._running & workers.answered(slice(0, k))
        answered[0] |= local
        self._settle(answered, requests)
        ready = answered | self._fresh  # the fresh ones' side-channel bytes were delivered
        self._running &= ~ready
        self._fresh[:] = False
        incoming = self._incoming(answered)
        self._ready = ready
        self._steps.clear()
        self._taken.clear()
        workers.unlink_attached()
        return incoming

    def _run_alone(self, command: int, seed: int | None) -> list[Any]:
        """A pool of one in this process: the core's own steps are the pool's, nothing copied."""
        runner, channels = self._local[0], self._channels
        core = runner.core
        try:
            if channels.any:
                channels.gather()
                runner.relays.deliver(channels.take(0))
            if command == STEP:
                core.step()
            else:
                core.reset() if seed is None else core.reset(seed=seed)  # type: ignore[call-arg]  # seedable
        except Exception as exc:
            raise self._local_error(command, exc) from exc
        specs = core.behavior_specs
        if specs is not self._core_specs and tuple(specs) != self._names:  # a Unity scene's new one
            runner.description = core_description(core)
            self._merge_specs(0)
        self._core_specs = specs
        return [(0, runner.side_out())] if channels.any else []

    def _finish_running(self) -> list[Any]:
        """Waits for the steps still running (async); their results stay to be handed out."""
        running = self._running.copy()
        if not running.any():
            return []
        self._workers.wait(slice(0, self._num_cores), int(running.sum()), running)
        self._settle(running, {})
        self._running[:] = False
        self._fresh |= running
        return self._incoming(running)

    def _settle(self, answered: np.ndarray, requests: dict[int, Any]) -> None:
        """Raises a failed core's error; gives the cores that asked for room new segments."""
        workers = self._workers
        which = np.flatnonzero(answered & ~self._local_mask)
        bad = workers.failures(which)
        while bad or requests:
            if self._running.any() and (self._running & ~answered).any():
                # Growing replaces segments that running workers may be writing: finish them.
                others = self._running & ~answered
                workers.wait(slice(0, self._num_cores), int(others.sum()), others)
                answered |= others
                bad = workers.failures(np.flatnonzero(answered & ~self._local_mask))
            requests.update(workers.requests(bad))
            if not requests:
                return
            for i in requests:
                self._merge_specs(i)
            workers.grow(requests, self._specs)
            if 0 in requests and self._local:
                self._local_side = self._local[0].write()
            again = np.array([i for i in requests if i in workers.processes], np.int64)
            requests = {}
            workers.wait(again)
            bad = workers.failures(again)

    def _local_error(self, command: int, exc: Exception) -> CorePoolError:
        name = type(exc).__name__
        return CorePoolError(
            f"{self._label(0)} raised {name} during {COMMAND_NAMES[command]}: {exc}", 0
        )

    def _incoming(self, ready: np.ndarray) -> list[Any]:
        """``(core, side-channel bytes)`` of the cores that answered a step or reset."""
        if not self._channels.any:
            return []
        local, side_out = bool(self._local), self._workers.side_out
        return [(i, self._local_side if i == 0 and local else side_out(i)) for i in
                np.flatnonzero(ready).tolist()]  # fmt: skip

    def _taken_rows(self, name: str, rows: Rows) -> np.ndarray:
        taken = self._taken.get(name)
        if taken is None:
            counts = np.where(self._ready, rows.counts[:, N_DECISION], 0)
            taken = self._taken[name] = rows.taken(counts)
        return taken

    def _spec(self, name: BehaviorName) -> BehaviorSpec:
        return look_up(self._specs, name, UnknownBehaviorError, lambda: (
            f"CorePool has no behavior {name!r}; behaviors: {list(self._specs)}"
        ))  # fmt: skip

    def _broke(self, exc: BaseException) -> None:
        self._steps.clear()
        self._live = False
        if isinstance(exc, CorePoolError):
            self._fault = exc
        else:
            name = type(exc).__name__
            self._fault = CorePoolError(f"{name} while the cores were running; state unknown")
            self._fault.__cause__ = exc

    def _check_open(self) -> None:
        if self._closed:
            raise EnvClosedError("CorePool was used after close()")
        if _PID[0] != self._owner:
            raise CorePoolError(
                f"this CorePool belongs to process {self._owner}, not to this process "
                f"({os.getpid()}, made by os.fork()?): the cores would drift out of step; "
                "build a pool in this process instead"
            )

    def _check_ready(self, call: str | None = None, reset: bool = False) -> None:
        """Raises why the pool cannot take ``call`` now (the slow path of a call's check)."""
        if call is not None and self._guard.running is not None:
            raise ReentrantCallError(
                f"CorePool.{call}() was called while its {self._guard.running}() was running "
                "(from another thread or a callback); the pool is not thread-safe: call it "
                "from one place, one call at a time"
            )
        self._check_open()
        if self._fault is not None:
            first_line = str(self._fault).split("\n", 1)[0]
            raise CorePoolError(
                f"the pool is unusable after a failure ({first_line}); close() it",
                getattr(self._fault, "core_index", None),
            ) from self._fault
        if not (reset or self._was_reset):
            raise EnvNotResetError(
                "CorePool: call reset() before step(), get_steps() or set_actions()"
            )
