"""A behaviour's action spec as one Gymnasium space: batches both ways and masks."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from zooport.envs.base_env import ActionSpec, ActionTuple
from zooport.errors import ActionError, SpecError

__all__ = ["ActionLayout", "checked_discrete"]


@functools.lru_cache(maxsize=256)
def _largest(sizes: int | tuple[int, ...], dtype: np.dtype) -> Any:
    """The largest valid value per branch for ``dtype``, unsigned: a negative value viewed
    so is always above it."""
    top = 1 if dtype.kind == "b" else int(np.iinfo(dtype).max)
    unsigned = np.dtype(f"u{dtype.itemsize}")
    largest = [min(s - 1, top) for s in ((sizes,) if isinstance(sizes, int) else sizes)]
    if len(set(largest)) == 1:
        return unsigned.type(largest[0])
    array = np.array(largest, dtype=unsigned)
    array.setflags(write=False)
    return array


def checked_discrete(
    array: np.ndarray, sizes: int | tuple[int, ...], where: str, space: Any = None
) -> np.ndarray:
    """``array`` as integer discrete actions below ``sizes``, every value checked BEFORE any
    cast (an :class:`ActionError` names the range and the value)."""
    if type(sizes) is not int and not isinstance(sizes, tuple):
        sizes = int(sizes)  # a Discrete's n is a numpy integer (the cache needs one type)
    kind = array.dtype.kind
    if kind in "iub":
        # Viewed as unsigned, a negative value is larger than any valid one: one comparison
        # checks both bounds.
        unsigned = array if kind == "u" else array.view(f"u{array.dtype.itemsize}")
        if np.count_nonzero(unsigned > _largest(sizes, array.dtype)):
            _raise_discrete(array, sizes, where, space)
        # Bools as 0/1 (a bool array would index as a mask).
        return unsigned if kind == "b" else array
    if kind == "f":
        # NaN fails every comparison, +-inf the range; floor catches 1.5.
        largest = _largest(sizes, np.dtype(np.int64))  # as uint64: exact up to 2**63
        valid = (array >= 0) & (array <= largest) & (np.floor(array) == array)
        if np.count_nonzero(valid) != valid.size:
            _raise_discrete(array, sizes, where, space)
        return array.astype(np.int64)
    if array.size == 0:
        return array.astype(np.int64)
    given = array.reshape(-1)[:1].tolist()[0]
    space_text = "" if space is None else f" for {space}"
    raise ActionError(
        f"{where}: expected integer discrete actions{space_text}, got dtype {array.dtype} "
        f"(first value {given!r})"
    )


def _raise_discrete(
    array: np.ndarray, sizes: int | tuple[int, ...], where: str, space: Any
) -> None:
    limits = np.broadcast_to(np.asarray(sizes, dtype=np.float64), array.shape[-1:])
    values = array.astype(np.float64) if array.dtype.kind == "f" else array.astype(object)
    bad = ~((values >= 0) & (values < limits))
    if array.dtype.kind == "f":
        bad |= np.floor(values) != values
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    row = f" at row {index[0]}" if index else ""
    branch = f" in branch {index[-1]}" if array.ndim == 2 and limits.size > 1 else ""
    limit = int(limits[index[-1]] if array.ndim == 2 else limits.reshape(-1)[0])
    space_text = "" if space is None else f" for {space}"
    raise ActionError(
        f"{where}: expected integer discrete actions in [0, {limit - 1}]{space_text}, got "
        f"{array[index].item()!r}{branch}{row}"
    )


class ActionLayout:
    """How a behaviour's ``ActionSpec`` becomes one Gymnasium space, batch by batch
    (``flatten_branched``: ``lookup[k]`` is the branch tuple of ``Discrete`` index ``k``)."""

    def __init__(self, spec: ActionSpec, *, flatten_branched: bool = False, name: str = "") -> None:
        self.spec = spec
        self.name = name
        self.branches = tuple(int(b) for b in spec.discrete_branches)
        self.flatten = flatten_branched and len(self.branches) > 1
        # Row k: the branch tuple of flattened action k (no rows unless flattened).
        self._combinations = np.zeros((0, len(self.branches)), np.int32)
        if self.flatten:
            combinations = itertools.product(*(range(b) for b in self.branches))
            self._combinations = np.array(list(combinations), dtype=np.int32)
        self.lookup = self._combinations if self.flatten else None
        #: The length of one agent's consumer mask (0 without discrete branches).
        self.mask_size = len(self._combinations) if self.flatten else sum(self.branches)
        # What checked_discrete bounds each value by: one size for a Discrete (flattened
        # or not), one per branch for a MultiDiscrete.
        self._discrete_sizes: int | tuple[int, ...] = (
            len(self._combinations) if self.flatten else
            self.branches[0] if len(self.branches) == 1 else self.branches
        )  # fmt: skip
        parts: dict[str, spaces.Space] = {}
        if spec.continuous_size:
            parts["continuous"] = spaces.Box(-1.0, 1.0, (spec.continuous_size,), np.float32)
        if isinstance(self._discrete_sizes, int):
            parts["discrete"] = spaces.Discrete(self._discrete_sizes)
        elif self.branches:
            parts["discrete"] = spaces.MultiDiscrete(np.array(self.branches, dtype=np.int64))
        if not parts:
            raise SpecError(f"behavior {name!r}: an action spec with no actions has no space")
        self.is_hybrid = len(parts) == 2
        self.space: spaces.Space = spaces.Dict(parts) if self.is_hybrid else [*parts.values()][0]
        self._discrete_space = parts.get("discrete")
        self._where = f"behavior {name!r}"  # built once: error messages start with it

    def _discrete_to_core(self, actions: Any, n: int | None) -> np.ndarray:
        array = np.asarray(actions)
        single = isinstance(self._discrete_space, spaces.Discrete)
        if array.ndim != (1 if single else 2) or (n is not None and array.shape[0] != n):
            rows = "n" if n is None else n
            want = f"({rows},)" if single else f"({rows}, {len(self.branches)})"
            raise ActionError(
                f"behavior {self.name!r}: expected a batch of actions of shape {want} for "
                f"{self._discrete_space}, got shape {array.shape}"
            )
        array = checked_discrete(array, self._discrete_sizes, self._where, self._discrete_space)
        if self.flatten:
            return self._combinations[array]
        return (array.reshape(-1, 1) if single else array).astype(np.int32, copy=False)

    def _continuous_to_core(self, actions: Any, n: int | None) -> np.ndarray:
        array = np.asarray(actions)
        size = self.spec.continuous_size
        if array.ndim != 2 or array.shape[1] != size or (n is not None and array.shape[0] != n):
            raise ActionError(
                f"behavior {self.name!r}: expected a batch of continuous actions of shape "
                f"({n if n is not None else 'n'}, {size}), got shape {array.shape}"
            )
        if array.dtype.kind not in "fiu":
            raise ActionError(
                f"behavior {self.name!r}: expected numeric continuous actions, got {array.dtype}"
            )
        # Not cast here: ActionTuple checks a float64 against float32's range before casting
        # (1e300 would otherwise become inf).
        return array

    def to_core(self, actions: Any, n: int | None = None) -> ActionTuple:
        """A batch of consumer actions (rows = agents) as a core :class:`ActionTuple`."""
        if self.is_hybrid:
            if not isinstance(actions, dict) or set(actions) != {"continuous", "discrete"}:
                got = sorted(actions) if isinstance(actions, dict) else type(actions).__name__
                raise ActionError(
                    f"behavior {self.name!r}: expected hybrid actions as a dict with keys "
                    f"['continuous', 'discrete'], got {got}"
                )
            continuous = self._continuous_to_core(actions["continuous"], n)
            discrete = self._discrete_to_core(actions["discrete"], continuous.shape[0])
            return ActionTuple(continuous=continuous, discrete=discrete)
        if self.spec.continuous_size:
            continuous = self._continuous_to_core(actions, n)
            if continuous.dtype != np.float32:  # ActionTuple checks the range before the cast
                return ActionTuple(continuous=continuous)
            return ActionTuple._trusted(continuous, np.zeros((len(continuous), 0), np.int32))
        # Checked and cast above: the wrapping needs no second check.
        discrete = self._discrete_to_core(actions, n)
        return ActionTuple._trusted(np.zeros((len(discrete), 0), np.float32), discrete)

    def from_core(self, action: ActionTuple) -> np.ndarray | dict[str, np.ndarray]:
        """A core :class:`ActionTuple` as a batch of consumer actions (inverse of to_core)."""
        continuous = np.array(action.continuous, dtype=np.float32)
        if not self.branches:
            return continuous
        discrete = np.array(action.discrete, dtype=np.int64)
        if self.flatten:
            discrete = discrete @ np.cumprod((1,) + self.branches[:0:-1])[::-1]
        elif len(self.branches) == 1:
            discrete = discrete[:, 0]
        return {"continuous": continuous, "discrete": discrete} if self.is_hybrid else discrete

    def allowed_mask(self, core_mask: Sequence[np.ndarray] | None, n: int) -> np.ndarray:
        """The core's masks (True = NOT available) as int8 (n, mask_size), 1 = allowed."""
        if core_mask is None or not self.branches:
            return np.ones((n, self.mask_size), dtype=np.int8)
        if len(core_mask) != len(self.branches):
            raise SpecError(
                f"behavior {self.name!r}: expected one mask per discrete branch "
                f"({len(self.branches)}), got {len(core_mask)}"
            )
        if self.flatten:
            allowed = np.ones((n, len(self._combinations)), dtype=np.bool_)
            for j, mask in enumerate(core_mask):
                allowed &= ~np.asarray(mask, dtype=np.bool_)[:, self._combinations[:, j]]
            return allowed.astype(np.int8)
        masked = np.concatenate([np.asarray(m, dtype=bool) for m in core_mask], axis=1)
        return (~masked).astype(np.int8)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray | dict[str, np.ndarray]:
        """``n`` uniform random consumer actions (for tests and random rollouts)."""
        return self.from_core(self.spec.random_action(n, rng))
