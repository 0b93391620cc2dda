"""What a :class:`~zooport.envs.core_pool.CorePool` shows of all its cores together: the
specs they agree on, ``render()`` and the global state, from plain data (no worker needed).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zooport.envs.pool_worker import RENDER, STATE
from zooport.envs.specs import BehaviorMapping, BehaviorSpec
from zooport.errors import SpecError

__all__ = ["agreed_specs", "merged_specs", "stitch_frames", "GlobalStateLayout", "PoolViews"]

#: A core as these functions see it: ``(label, description)``.
CoreView = tuple[str, Mapping[str, Any]]


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
        shapes = [d.get("global_state_shape") for d in descriptions]
        known_shapes = [shape for shape in shapes if shape is not None]
        sizes = None
        if available and len(known_shapes) == len(shapes):
            sizes = tuple(math.prod(shape) for shape in known_shapes)
        all_bounds = [d.get("global_state_bounds") for d in descriptions]
        known_bounds = [b for b in all_bounds if b is not None]
        bounds = None
        if available and len(known_bounds) == len(all_bounds):
            bounds = (
                np.concatenate([np.ravel(low) for low, _ in known_bounds]),
                np.concatenate([np.ravel(high) for _, high in known_bounds]),
            )
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
    """``render()`` and the global state of a CorePool, from its cores' answers (``_ask``)."""

    _num_cores: int
    _global_layout: GlobalStateLayout | None
    _state_space: Any
    _ask: Callable[[int], dict[int, Any]]
    _label: Callable[[int], str]
    _description: Callable[[int], dict[str, Any]]

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
