"""What a :class:`~zooport.envs.core_pool.CorePool` shows of all its cores together: the
specs they agree on, ``render()`` and the global state, from plain data (no worker needed).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zooport.envs.arguments import check_int
from zooport.envs.pool_channels import PoolChannels
from zooport.envs.pool_handles import Workers
from zooport.envs.pool_worker import RENDER, STATE
from zooport.envs.side_channel.side_channel import SideChannel
from zooport.envs.specs import AgentId, BehaviorMapping, BehaviorName, BehaviorSpec
from zooport.errors import CorePoolError, SpecError

__all__ = ["agreed_specs", "merged_specs", "stitch_frames", "GlobalStateLayout", "PoolViews"]

#: A core as these functions see it: ``(label, description)``.
CoreView = tuple[str, Mapping[str, Any]]
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def agreed_specs(cores: Sequence[CoreView]) -> BehaviorMapping:
    """The specs of core 0, which every other core must have too (else a ``SpecError``)."""
    first: Mapping[str, BehaviorSpec] = cores[0][1]["specs"]
    for label, description in cores[1:]:
        specs = description["specs"]
        if set(specs) != set(first):
            raise SpecError(
                f"{label} has behaviors {sorted(specs)} where core 0 has "
                f"{sorted(first)}; every core of a pool must have the same behaviors"
            )
        for name, spec in first.items():
            if specs[name] != spec:
                raise SpecError(
                    f"behavior {name!r}: {label} has the spec {specs[name]} where "
                    f"core 0 has {spec}; every core of a pool must have the same specs"
                )
    return BehaviorMapping(dict(first))


def merged_specs(specs: Mapping[str, BehaviorSpec], core: CoreView) -> BehaviorMapping:
    """``specs`` with the behaviours ``core`` reports late (a conflict is a ``SpecError``)."""
    label, description = core
    merged = dict(specs)
    for name, spec in description["specs"].items():
        known = merged.get(name)
        if known is None:
            merged[name] = spec
        elif known != spec:
            raise SpecError(
                f"behavior {name!r}: {label} now has the spec {spec} where the pool "
                f"has {known}; every core of a pool must have the same specs"
            )
    return BehaviorMapping(merged)


def stitch_frames(frames: Sequence[np.ndarray | None]) -> np.ndarray | None:
    """The pictures side by side, each padded (at the bottom) to the tallest; None for none.

    Example:
        >>> tall, wide = np.ones((2, 1, 3), np.uint8), np.ones((1, 2, 3), np.uint8)
        >>> stitch_frames([tall, None, wide])[..., 0]
        array([[1, 1, 1],
               [1, 0, 0]], dtype=uint8)
    """
    present = [f for f in frames if f is not None]
    if not present:
        return None
    height = max(f.shape[0] for f in present)
    padded = [np.pad(f, [(0, height - f.shape[0])] + [(0, 0)] * (f.ndim - 1)) for f in present]
    return np.concatenate(padded, axis=1)


@dataclass(frozen=True)
class GlobalStateLayout:
    """The pool's global state: every core's ``global_state()`` flattened, in core order;
    ``sizes`` and ``bounds`` where every core declares a shape or a box space, else None.

    Example:
        >>> from zooport.envs.pool_worker import global_state_description
        >>> from zooport.envs.builtin.tag import Tag
        >>> cores = [("core 0", global_state_description(Tag(n_runners=1, n_taggers=1))),
        ...          ("core 1", global_state_description(Tag(n_runners=2, n_taggers=1)))]
        >>> layout = GlobalStateLayout.of(cores)
        >>> layout.available, layout.shape
        (True, (25,))
        >>> layout.concatenate([np.zeros(10, np.float32), np.ones(15, np.float32)]).shape
        (25,)
    """

    available: bool
    sizes: tuple[int, ...] | None
    bounds: tuple[np.ndarray, np.ndarray] | None
    labels: tuple[str, ...]

    @classmethod
    def of(cls, cores: Sequence[CoreView]) -> GlobalStateLayout:
        descriptions = [description for _, description in cores]
        available = all(d.get("global_state", False) for d in descriptions)
        shapes: list[Any] = [d.get("global_state_shape") for d in descriptions]
        boxes = [d.get("global_state_bounds") for d in descriptions]
        sizes = bounds = None
        if available and all(shape is not None for shape in shapes):
            sizes = tuple(math.prod(shape) for shape in shapes)
        if available and all(box is not None for box in boxes):
            lows, highs = zip(*boxes, strict=True)
            bounds = (np.concatenate([np.ravel(a) for a in lows]),
                      np.concatenate([np.ravel(a) for a in highs]))  # fmt: skip
        return cls(available, sizes, bounds, tuple(label for label, _ in cores))

    @property
    def shape(self) -> tuple[int] | None:
        if self.sizes is not None:
            return (sum(self.sizes),)
        if self.bounds is not None:
            return (self.bounds[0].size,)
        return None

    def concatenate(self, states: Sequence[Any]) -> np.ndarray:
        """The cores' states flattened and concatenated; a size off its shape is a SpecError."""
        flat = [np.ravel(np.asarray(state)) for state in states]
        if self.sizes is not None:
            for label, values, size in zip(self.labels, flat, self.sizes, strict=True):
                if values.size != size:
                    raise SpecError(
                        f"{label}: global_state() has {values.size} values where its "
                        f"global_state_shape says {size}"
                    )
        return np.concatenate(flat)


class PoolViews:
    """What a CorePool tells of its cores: its own API beyond BaseEnv, ``render()`` and the
    global state (asked of every core at once)."""

    _num_cores: int
    _mode: str
    _min_ready: int
    _closed: bool
    _local: list[Any]
    _workers: Workers
    _channels: PoolChannels
    _global_layout: GlobalStateLayout | None
    _specs: BehaviorMapping
    _names: tuple[str, ...]
    _fault: BaseException | None
    _live: bool
    _state_space: Any
    _spec: Callable[[str], BehaviorSpec]
    _check_open: Callable[[], None]
    _check_ready: Callable[..., None]
    _finish_running: Callable[[], list[Any]]
    _broke: Callable[[BaseException], None]
    _local_error: Callable[[int, Exception], CorePoolError]

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
        """True once ``close()`` finished."""
        return self._closed

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
        core_id, index = divmod(value, self._num_cores)
        return index, core_id

    def pool_agent_id(self, index: int, core_agent_id: AgentId) -> AgentId:
        """The pool's id of agent ``core_agent_id`` of core ``index`` (``a * K + i``, int32)."""
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
        return all(
            self._description(i)["restarts"].get(behavior_name) is not False
            for i in range(self._num_cores)
        )

    @property
    def has_action_masks(self) -> bool:
        """Whether every core sends action masks for its discrete behaviours."""
        self._check_open()
        return all(self._description(i)["masks"] for i in range(self._num_cores))

    @property
    def metadata(self) -> dict[str, Any]:
        """Core 0's ``render_fps``; the pool renders ``rgb_array`` pictures."""
        return {"render_modes": ["rgb_array"], "render_fps": self._description(0)["render_fps"]}

    def __reduce__(self) -> Any:
        raise CorePoolError(
            "a CorePool cannot be pickled or copied: it owns worker processes; pickle the core "
            "factories and build a new pool from them"
        )

    def __repr__(self) -> str:
        types = [self._description(i)["type"] for i in range(self._num_cores)]
        state = " closed" if self._closed else ""
        return f"CorePool({self._num_cores} cores {types}, mode={self._mode!r}{state})"

    def _ask(self, command: int) -> dict[int, Any]:
        """Every core's answer to RENDER or STATE (a running async step finishes first)."""
        self._check_ready()
        try:
            incoming = self._finish_running()
            workers = self._workers
            workers.command(command, workers.every)
            answers = {}
            if self._local:
                try:
                    answers[0] = self._local[0].answer(command)
                except Exception as exc:
                    raise self._local_error(command, exc) from exc
            workers.wait(workers.every)
            for i in workers.indices.tolist():
                if workers.failures([i]):
                    workers.requests([i])  # raises the core's error
                answers[i] = workers.receive(i)
        except BaseException as exc:
            self._broke(exc)
            raise
        self._channels.deliver(incoming)
        return answers

    def _description(self, i: int) -> dict[str, Any]:
        if i == 0 and self._local:
            return self._local[0].description
        return self._workers.descriptions.get(i, {"type": "?"})

    def _label(self, i: int) -> str:
        return self._local[0].label if i == 0 and self._local else self._workers.label(i)

    def _merge_specs(self, i: int) -> None:
        """A core reported behaviours late (a Unity scene): add them, or reject a conflict."""
        try:
            self._specs = merged_specs(self._specs, (self._label(i), self._description(i)))
        except SpecError as error:
            self._fault, self._live = error, False
            raise
        self._names = tuple(self._specs)
        self._global_layout = None
        self._state_space = None

    def _check_index(self, index: int) -> int:
        return check_int(index, "core index", 0, maximum=self._num_cores - 1, where="CorePool")

    def render(self) -> np.ndarray | None:
        """Every core's ``rgb_array`` picture, side by side (core 0 leftmost)."""
        answers = self._ask(RENDER)
        cannot = [(i, reason) for i, (_, frame, reason) in answers.items() if reason]
        if cannot:
            i, reason = cannot[0]
            raise NotImplementedError(f"{self._label(i)} cannot render: {reason}")
        return stitch_frames([answers[i][1] for i in range(self._num_cores)])

    @property
    def global_state(self) -> Callable[[], np.ndarray]:
        """``global_state()`` where every core has one: their states concatenated in core order
        (a pool with a core without one has no such attribute, like that core).

        Example:
            >>> from functools import partial
            >>> from zooport.envs.builtin.tag import Tag
            >>> from zooport.envs.core_pool import CorePool
            >>> pool = CorePool([partial(Tag, n_runners=1, n_taggers=1)] * 2)
            >>> pool.reset(seed=0)
            >>> pool.global_state().shape, pool.global_state_shape  # 10 values per core
            ((20,), (20,))
            >>> pool.close()
        """
        if not self._state_layout().available:
            k = self._num_cores
            missing = [self._label(i) for i in range(k) if not self._description(i)["global_state"]]
            raise AttributeError(
                f"CorePool has no global_state: {', '.join(missing)} has no global_state()"
            )
        return self._gather_global_state

    @property
    def global_state_shape(self) -> tuple[int]:
        """``(total values,)`` of :attr:`global_state`, where every core declares a shape."""
        layout = self._state_layout()
        shape = layout.shape if layout.available else None
        if shape is None:
            raise AttributeError("CorePool has no global_state_shape: a core declares none")
        return shape

    @property
    def global_state_space(self) -> Any:
        """A ``gymnasium.spaces.Box`` of :attr:`global_state`, where every core declares one."""
        if self._state_space is None:
            bounds = self._state_layout().bounds
            if bounds is None:
                raise AttributeError("CorePool has no global_state_space: a core declares none")
            from gymnasium import spaces

            self._state_space = spaces.Box(bounds[0], bounds[1], dtype=bounds[0].dtype)
        return self._state_space

    def _state_layout(self) -> GlobalStateLayout:
        if self._global_layout is None:
            k = self._num_cores
            cores = [(self._label(i), self._description(i)) for i in range(k)]
            self._global_layout = GlobalStateLayout.of(cores)
        return self._global_layout

    def _gather_global_state(self) -> np.ndarray:
        answers = self._ask(STATE)
        return self._state_layout().concatenate([answers[i][1] for i in range(self._num_cores)])
