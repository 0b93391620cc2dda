"""Many cores in worker processes as one BaseEnv: a step is one write to a shared control array,
and the batches are the cores' rows in shared memory. Agent ``a`` of core ``i`` is ``a * K + i``."""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from zooport import errors
from zooport.envs import pool_shared_memory as shm
from zooport.envs.arguments import check_bool, check_float, check_int, check_seed
from zooport.envs.base_env import (
    ActionTuple,
    AgentId,
    BaseEnv,
    BehaviorMapping,
    BehaviorName,
    BehaviorSpec,
)
from zooport.envs.pool_handles import Workers
from zooport.envs.pool_shared_memory import gather
from zooport.envs.pool_worker import PoolChannels, registry_core, unity_instance
from zooport.envs.side_channel.side_channel import SideChannel
from zooport.envs.step_guard import StepGuard
from zooport.envs.steps import DecisionSteps, TerminalSteps, decision_row
from zooport.errors import ArgumentError, ArgumentTypeError, CorePoolError

__all__ = ["CorePool", "POOL_OPTIONS", "check_pool_options", "registry_core", "unity_instance"]

#: The ``CorePool`` keywords a ``pool_options={...}`` may hold (``make``, ``make_vec``, the CLI).
POOL_OPTIONS = (
    "mode", "min_ready", "local_core", "core_side_channels", "timeout", "start_method", "spin",
    "side_channel_bytes",
)  # fmt: skip

#: This process's id, kept current across os.fork() (a pool compares it on every call).
_PID = [os.getpid()]
os.register_at_fork(after_in_child=lambda: _PID.__setitem__(0, os.getpid()))


def _shutdown(workers: Workers, owner: int) -> None:  # a pool that was not closed
    if _PID[0] == owner:  # in a fork of the pool's process, the workers are its parent's
        with contextlib.suppress(Exception):  # nobody is left to tell: the pool is gone
            workers.close()


def check_pool_options(pool_options: Any, workers: Any) -> dict[str, Any]:
    """``pool_options`` as CorePool keywords: a mapping of :data:`POOL_OPTIONS`, with workers."""
    if pool_options is not None and not isinstance(pool_options, Mapping):
        raise ArgumentTypeError(
            f"Expect pool_options to be a mapping of CorePool arguments {list(POOL_OPTIONS)}, "
            f"actually: {type(pool_options).__name__} {pool_options!r}"
        )
    options = dict(pool_options or {})
    if unknown := [key for key in options if key not in POOL_OPTIONS]:
        raise ArgumentTypeError(
            f"Expect pool_options keys among {list(POOL_OPTIONS)}, actually: {unknown}"
        )
    if workers is None and options:
        raise ArgumentError(
            f"pool_options={options!r} are CorePool arguments, and no pool is built without "
            "workers=K: pass workers too, or leave pool_options out"
        )
    return options


class CorePool(BaseEnv):
    """K cores, each built by a picklable factory in a worker process, as one ``BaseEnv``."""

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
        if isinstance(core_fns, (str, bytes)) or not isinstance(core_fns, Sequence):
            raise ArgumentTypeError(
                f"Expect core_fns to be a sequence of core factories, actually: "
                f"{type(core_fns).__name__}"
            )
        if not core_fns:
            raise ArgumentError("Expect core_fns to hold at least one core factory, actually: []")
        for i, factory in enumerate(core_fns):
            if isinstance(factory, BaseEnv) or not callable(factory):
                raise ArgumentTypeError(
                    f"Expect core_fns[{i}] to be a callable that builds a core (a class, a "
                    f"function, functools.partial), actually: {type(factory).__name__}"
                )
        k = self.num_cores = len(core_fns)
        # spawn and forkserver start a fresh interpreter; fork would copy our threads and locks.
        for name, value, valid in (
            ("mode", mode, ("sync", "async")),
            ("start_method", start_method, ("spawn", "forkserver")),
        ):
            if value not in valid:
                raise ArgumentError(
                    f"Expect {name} to be one of {list(valid)}, actually: {value!r}"
                )
        if start_method not in multiprocessing.get_all_start_methods():
            raise ArgumentError(f"start_method {start_method!r} is not available on this platform")
        sync, seconds = mode == "sync", "a number of seconds"
        if min_ready is not None and check_int(min_ready, "min_ready", 1, maximum=k) != k and sync:
            raise ArgumentError(
                f"Expect min_ready to be None or {k} (every core) in sync mode, actually: "
                f"{min_ready}; pass mode='async' to return before every core has answered"
            )
        self.mode, self.min_ready = mode, int(min_ready or (k if sync else 1))
        local = sync if local_core is None else check_bool(local_core, "local_core")
        if timeout is not None:
            timeout = check_float(timeout, "timeout", above=0, kind=seconds)
        # Spinning longer than a second would hold a CPU for nothing.
        spin = check_float(spin, "spin", above=0, below=1.0, at_least=True, kind=seconds)
        side_bytes = check_int(side_channel_bytes, "side_channel_bytes", 0)
        self._channels = PoolChannels(side_channels, core_side_channels, k)
        # _live: reset, open and healthy (the one check a call makes on its fast path).
        self.closed = self._was_reset = self._live = False
        self._fault: BaseException | None = None
        self._steps: dict[str, tuple[DecisionSteps, TerminalSteps]] = {}
        self._state_space: Any = None
        self._owner = os.getpid()
        self._guard = StepGuard("CorePool")  # refuses a call made while a step runs
        self._workers = Workers(list(core_fns), self._channels, local, self.mode, self.min_ready,
                                start_method, spin, side_bytes, timeout)  # fmt: skip
        self._finalizer = weakref.finalize(self, _shutdown, self._workers, self._owner)
        self._descriptions = self._workers.descriptions.values()  # in core order
        self.seedable = all(d["seedable"] for d in self._descriptions)

    @classmethod
    def unity(
        cls, file_name: str | None, instances: int = 2, *, worker_id: int = 0,
        base_port: int | None = None, seed: int = 0, no_graphics: bool = True,
        timeout_wait: int = 60, additional_args: Sequence[str] | None = None,
        log_folder: str | None = None,
        environment_class: str | type = "mlagents_envs.environment:UnityEnvironment",
        **options: Any,
    ) -> CorePool:  # fmt: skip
        """``instances`` copies of one Unity build: instance ``i`` gets ``worker_id + i`` (its
        port ``base_port + worker_id + i``) and seed ``seed + i``; ``options`` are the pool's."""
        instances = check_int(instances, "instances", 1, where="CorePool.unity")
        worker_id = check_int(worker_id, "worker_id", 0, where="CorePool.unity")
        seed = check_int(seed, "seed", 0, where="CorePool.unity")
        base = {
            "file_name": file_name, "base_port": base_port, "no_graphics": no_graphics,
            "timeout_wait": timeout_wait, "log_folder": log_folder,
            "additional_args": None if additional_args is None else list(additional_args),
        }  # fmt: skip
        kwargs = [{**base, "worker_id": worker_id + i, "seed": seed + i} for i in range(instances)]
        return cls([functools.partial(unity_instance, environment_class, kw) for kw in kwargs],
                   **options)  # fmt: skip

    @property
    def behavior_specs(self) -> BehaviorMapping:
        self._check_open()
        return self._workers.specs

    def reset(self, seed: int | None = None) -> None:
        """Resets every core; with ``seed``, core ``i`` gets ``seed + i``."""
        self._check_ready(reset=True)
        seed, k = check_seed(seed, "CorePool.reset"), self.num_cores
        if seed is not None and seed >= 2**63 - k:  # seeds travel as int64
            raise errors.ArgumentError(
                f"CorePool.reset: expected seed < 2**63 - {k} (it travels as int64, plus the core "
                f"index), got {seed}"
            )
        if seed is not None and not self.seedable:
            first = next(i for i in range(k) if not self._workers.descriptions[i]["seedable"])
            raise CorePoolError(
                f"reset(seed={seed}): {self._workers.label(first)} cannot be seeded (it declares "
                "no seedable = True reset(seed=...)); call reset() without a seed"
            )
        self._run(shm.RESET, np.ones(k, bool), None if seed is None else seed + np.arange(k))

    def step(self) -> None:
        """Steps every core (sync mode) or the idle ones until ``min_ready`` answered."""
        if not self._live or _PID[0] != self._owner:
            if not (self._was_reset or self.closed or len(self._workers.specs)):
                self.reset()  # a pool with no behaviour yet (a Unity scene)
                return
            self._check_ready()
        workers = self._workers  # async: the idle cores (a pool of one here runs alone)
        self._run(shm.STEP, None if self.mode == "sync" else ~(workers.running | workers.fresh))

    def get_steps(self, behavior_name: BehaviorName) -> tuple[DecisionSteps, TerminalSteps]:
        """The behaviour's steps of every core that answered, core 0's rows first, pool ids."""
        if not self._live or self._guard.running is not None or _PID[0] != self._owner:
            self._check_ready("get_steps")
        steps = self._steps.get(behavior_name)
        if steps is None:
            workers = self._workers
            if workers.alone is not None and behavior_name in workers.names:
                return workers.alone.get_steps(behavior_name)
            spec, rows = self._spec(behavior_name), workers.rows.get(behavior_name)
            if rows is None:
                steps = DecisionSteps.empty(spec), TerminalSteps.empty(spec)
            else:
                steps = gather(rows, spec, workers.ready)
            self._steps[behavior_name] = steps
        return steps

    def set_actions(self, behavior_name: BehaviorName, action: ActionTuple) -> None:
        """Sets the actions of the agents in this step's DecisionSteps (one row each)."""
        if not self._live or self._guard.running is not None or _PID[0] != self._owner:
            self._check_ready("set_actions")
        workers = self._workers
        if workers.alone is not None and behavior_name in workers.names:
            workers.alone.set_actions(behavior_name, action)  # it validates as a pool would
            return
        spec, rows = self._spec(behavior_name), workers.rows.get(behavior_name)
        taken = rows.decided(workers.ready) if rows is not None else np.zeros(0, int)
        action = spec.action_spec._validate_action(action, len(taken), behavior_name)
        if rows is not None and len(taken):
            if rows.layout.continuous:
                rows.continuous[taken] = action.continuous
            if rows.layout.discrete:
                rows.discrete[taken] = action.discrete
            rows.counts[workers.ready & (rows.counts[:, shm.N_DECISION] > 0), shm.ACTIONS_SET] = 1

    def set_action_for_agent(
        self, behavior_name: BehaviorName, agent_id: AgentId, action: ActionTuple
    ) -> None:
        """Sets one agent's action (a batch of one); the others that decided take zeros."""
        self._check_ready("set_action_for_agent")
        action = self._spec(behavior_name).action_spec._validate_action(action, 1, behavior_name)
        row = decision_row(behavior_name, self.get_steps(behavior_name)[0], agent_id)
        workers = self._workers
        if workers.alone is not None:
            workers.alone.set_action_for_agent(behavior_name, agent_id, action)
            return
        rows, core = workers.rows[behavior_name], self.core_of(agent_id)[0]
        if not rows.counts[core, shm.ACTIONS_SET]:  # the core's others take zeros
            own = slice(rows.start[core], rows.start[core] + rows.counts[core, shm.N_DECISION])
            rows.continuous[own] = rows.discrete[own] = 0
            rows.counts[core, shm.ACTIONS_SET] = 1
        row = rows.decided(workers.ready)[row]
        rows.continuous[row], rows.discrete[row] = action.continuous[0], action.discrete[0]

    def close(self) -> None:
        """Closes every core and stops every worker; an interrupted close can be called again."""
        if self.closed:
            return
        self._check_open()
        self._live = False
        # After a fault, what a core says while closing belongs to that fault (reported).
        if healthy := self._fault is None:
            self._fault = CorePoolError("close() was interrupted; call close() again")
        error = self._workers.close(not healthy)
        self.closed = True
        self._finalizer.detach()
        if error is not None:
            raise error

    @property
    def worker_pids(self) -> list[int]:
        """The process ids of the workers (core 0 is in this process when local)."""
        return [p.pid for p in self._workers.processes.values()]

    @property
    def side_channels(self) -> list[SideChannel]:
        """The channels given to the pool (they reach every core)."""
        return list(self._channels.shared)

    def core_side_channels(self, index: int) -> list[SideChannel]:
        """The channels of core ``index`` alone."""
        return list(self._channels.own[self._check_index(index)])

    def core_of(self, agent_id: AgentId) -> tuple[int, AgentId]:
        """``(core index, the core's own agent id)`` of a pool agent id (``a * K + i``)."""
        value = check_int(agent_id, "agent_id", -(2**63), maximum=2**63 - 1, where="CorePool")
        core_id, index = divmod(value, self.num_cores)
        return index, core_id

    def pool_agent_id(self, index: int, core_agent_id: AgentId) -> AgentId:
        """The pool's id of agent ``core_agent_id`` of core ``index`` (``a * K + i``, int32)."""
        index, k = self._check_index(index), self.num_cores
        own = check_int(
            core_agent_id, "core_agent_id", -((index - shm._INT32_MIN) // k),
            maximum=(shm._INT32_MAX - index) // k, where=f"CorePool of {k} (pool ids are int32)",
        )  # fmt: skip
        return own * k + index

    def restarts_finished(self, behavior_name: BehaviorName) -> bool:
        """False when some core says it does not restart the behaviour's finished agents."""
        self._check_open()
        self._spec(behavior_name)
        return all(d["restarts"].get(behavior_name) is not False for d in self._descriptions)

    @property
    def has_action_masks(self) -> bool:
        """Whether every core sends action masks for its discrete behaviours."""
        self._check_open()
        return all(d["masks"] for d in self._descriptions)

    @property
    def metadata(self) -> dict[str, Any]:
        """Core 0's ``render_fps``; the pool renders ``rgb_array`` pictures."""
        fps = self._workers.descriptions[0]["render_fps"]
        return {"render_modes": ["rgb_array"], "render_fps": fps}

    def render(self) -> np.ndarray | None:
        """The cores' ``rgb_array`` pictures side by side, padded to the tallest (or None)."""
        answers = self._ask(shm.RENDER)
        for i, (_, _, reason) in answers.items():
            if reason:
                raise NotImplementedError(f"{self._workers.label(i)} cannot render: {reason}")
        frames = [answers[i][1] for i in range(self.num_cores) if answers[i][1] is not None]
        if not frames:
            return None
        height = max(f.shape[0] for f in frames)
        pad = [np.pad(f, [(0, height - f.shape[0])] + [(0, 0)] * (f.ndim - 1)) for f in frames]
        return np.concatenate(pad, axis=1)

    @property
    def global_state(self) -> Callable[[], np.ndarray]:
        """Every core's ``global_state()``, flattened and concatenated in core order."""
        if missing := [self._workers.label(i) for i, d in enumerate(self._descriptions)
                       if not d["global_state"]]:  # fmt: skip
            raise AttributeError(
                f"CorePool has no global_state: {', '.join(missing)} has no global_state()"
            )
        return self._global_state

    @property
    def global_state_shape(self) -> tuple[int]:
        """``(total values,)`` of :attr:`global_state`, where every core declares a shape."""
        sizes = self._declared("global_state_size")
        return (self.global_state_space.shape[0],) if sizes is None else (sum(sizes),)

    @property
    def global_state_space(self) -> Any:
        """A ``gymnasium.spaces.Box`` of :attr:`global_state`, where every core declares one."""
        if self._state_space is None:
            if (bounds := self._declared("global_state_bounds")) is None:
                raise AttributeError("CorePool has no global_state_space: a core declares none")
            from gymnasium import spaces

            low, high = (np.concatenate([np.ravel(b[j]) for b in bounds]) for j in (0, 1))
            self._state_space = spaces.Box(low, high, dtype=low.dtype)
        return self._state_space

    def __reduce__(self) -> Any:
        raise CorePoolError(
            "a CorePool cannot be pickled or copied: it owns worker processes; pickle the core "
            "factories and build a new pool from them"
        )

    def __repr__(self) -> str:
        types = [d["type"] for d in self._descriptions]
        state = " closed" if self.closed else ""
        return f"CorePool({self.num_cores} cores {types}, mode={self.mode!r}{state})"

    def _declared(self, key: str) -> list[Any] | None:
        values = [d[key] if d["global_state"] else None for d in self._descriptions]
        return None if any(v is None for v in values) else values

    def _global_state(self) -> np.ndarray:
        states = [np.ravel(state) for _, state in self._ask(shm.STATE).values()]  # in core order
        for i, (state, d) in enumerate(zip(states, self._descriptions, strict=True)):
            if d["global_state_size"] not in (None, state.size):
                raise errors.SpecError(
                    f"{self._workers.label(i)}: global_state() has {state.size} values where "
                    f"its global_state_shape says {d['global_state_size']}"
                )
        return np.concatenate(states)

    def _run(self, command: int, start: np.ndarray | None = None, seeds: Any = None) -> None:
        self._guard.enter(shm.COMMAND_NAMES[command])
        self._steps.clear()
        try:
            incoming = self._workers.run(command, start, seeds)
        except BaseException as exc:  # the cores' state is unknown now
            self._guard.abort(exc)
            self._live, self._fault = False, exc
            if not isinstance(exc, CorePoolError):
                name = type(exc).__name__
                self._fault = CorePoolError(f"{name} while the cores were running; state unknown")
                self._fault.__cause__ = exc
            raise
        self._guard.exit()
        self._was_reset = self._live = True
        if incoming:  # after the step is published: a channel that raises loses no result
            self._channels.deliver(incoming)

    def _ask(self, command: int) -> dict[int, Any]:  # a running async step finishes first
        self._check_ready()
        self._run(command)
        return self._workers.answers

    def _spec(self, name: BehaviorName) -> BehaviorSpec:
        specs = self._workers.specs
        return errors.look_up(specs, name, errors.UnknownBehaviorError, lambda: (
            f"CorePool has no behavior {name!r}; behaviors: {list(specs)}"
        ))  # fmt: skip

    def _check_index(self, index: int) -> int:
        return check_int(index, "core index", 0, maximum=self.num_cores - 1, where="CorePool")

    def _check_open(self) -> None:
        if self.closed:
            raise errors.EnvClosedError("CorePool was used after close()")
        if _PID[0] != self._owner:
            raise CorePoolError(
                f"this CorePool belongs to process {self._owner}, not to this process "
                f"({os.getpid()}, made by os.fork()?): the cores would drift out of step; "
                "build a pool in this process instead"
            )

    def _check_ready(self, call: str | None = None, reset: bool = False) -> None:
        if call is not None and self._guard.running is not None:
            self._guard.enter(call)  # raises ReentrantCallError: a step is running
        self._check_open()
        if self._fault is not None:
            first_line = str(self._fault).split("\n", 1)[0]
            raise CorePoolError(
                f"the pool is unusable after a failure ({first_line}); close() it",
                getattr(self._fault, "core_index", None),
            ) from self._fault
        if not (reset or self._was_reset):
            raise errors.EnvNotResetError(
                "CorePool: call reset() before step(), get_steps() or set_actions()"
            )
