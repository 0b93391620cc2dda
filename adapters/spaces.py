"""Pure conversions between a behaviour's specs and Gymnasium spaces, for every adapter.

Classes:
    ObservationLayout: observation specs -> one Gymnasium space, and batch conversion.
    ActionLayout: an action spec -> one Gymnasium space, batch conversion both ways,
        and action masks in the consumers' polarity.

Functions:
    observation_key: the Dict key of an observation spec.
    checked_discrete: discrete action values checked (integral, finite, in range) before
        any cast.

Nothing here holds an environment: each layout is computed once from specs and then
converts whole batches with array code, so every adapter shares one tested conversion.

Conventions:
    - rank-3 observations are visual: ``Box(0, 1, float32)``, or ``Box(0, 255, uint8)``
      with ``uint8_visual`` (rounded, not truncated);
    - other observations are ``Box(-inf, inf, float32)`` of the spec's shape (rank-2
      variable-size observations are kept as they are);
    - several observations: a ``Dict`` keyed by :func:`observation_key`; without
      ``allow_multiple_obs``, observations that are all rank 1 are concatenated in spec order
      into one ``Box`` instead (nothing is dropped);
    - a zero-size observation (an empty vector sensor beside a camera, common in visual
      Unity scenes) is dropped from the space, as ML-Agents' gym wrapper does; the others
      keep their keys (``obs_<i>`` counts every spec);
    - a core batch is checked against the specs once per batch (not per agent): one array
      per spec, each of shape ``(agents, *spec.shape)``, and as many rewards, group entries,
      flags and mask rows as agent ids; anything else is an
      :class:`~zooport.errors.ObservationError`, never a silent broadcast;
    - one discrete branch -> ``Discrete``; several -> ``MultiDiscrete``, or one ``Discrete``
      over every combination with ``flatten_branched``; continuous -> ``Box(-1, 1, float32)``;
      hybrid -> ``Dict(continuous=..., discrete=...)``;
    - masks: the core says True = NOT available; consumers get int8, 1 = allowed, flattened
      over branches (or over combinations with ``flatten_branched``).
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from zooport.envs.base_env import (
    ActionSpec,
    ActionTuple,
    DecisionSteps,
    ObservationSpec,
    TerminalSteps,
)
from zooport.errors import ActionError, ObservationError, SpecError

__all__ = ["ObservationLayout", "ActionLayout", "observation_key", "checked_discrete"]

_NOT_A_NAME = re.compile(r"[^0-9A-Za-z_]+")


def observation_key(spec: ObservationSpec, index: int) -> str:
    """The Dict key of an observation: its spec name made identifier-safe, or ``obs_<i>``.

    Example:
        >>> from zooport.envs.base_env import ObservationSpec, ObservationType
        >>> observation_key(ObservationSpec((3,), (), ObservationType.DEFAULT, "Ray Sensor"), 0)
        'Ray_Sensor'
        >>> observation_key(ObservationSpec((3,), (), ObservationType.DEFAULT, ""), 2)
        'obs_2'
    """
    name = _NOT_A_NAME.sub("_", spec.name or "").strip("_")
    return name or f"obs_{index}"


def _unique_keys(specs: Sequence[ObservationSpec], indices: Sequence[int]) -> list[str]:
    """The keys of ``specs``, whose positions among all the behaviour's specs are ``indices``."""
    keys: list[str] = []
    for i, spec in zip(indices, specs, strict=True):
        key = observation_key(spec, i)
        if key in keys:
            key = f"{key}_{i}"
        keys.append(key)
    return keys


@functools.lru_cache(maxsize=256)
def _largest(sizes: int | tuple[int, ...], dtype: np.dtype) -> Any:
    """The largest valid value per branch for an array of ``dtype``, as its unsigned view.

    Clipped to ``dtype``'s own largest value: a negative signed value viewed as unsigned is
    then always above it. A scalar when every branch has the same size.
    """
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
    """``array`` as integer discrete actions, every value checked BEFORE any cast.

    ``sizes`` bounds each value: one size for all, or one per column (branch). Accepted:
    integer and bool arrays (``True`` is 1, as for Gymnasium's ``Discrete``), and floats
    that are whole numbers (``1.0``: Gymnasium's table envs take them, and they convert
    exactly). Rejected with an :class:`ActionError` naming the expected range and the given
    value: non-integral (``1.5``), non-finite (``inf``, ``nan``) and out-of-range values,
    including those that a cast to int32 would wrap into a valid action (``2**32 + 1`` is
    not action 1). Integer arrays come back unchanged, bools as uint8, floats as int64. One
    comparison and one count per batch, no per-element Python.

    Example:
        >>> checked_discrete(np.array([2, 0], np.int64), 3, "demo").tolist()
        [2, 0]
        >>> checked_discrete(np.array([2**32 + 1]), 3, "demo")  # int32 would make it 1
        Traceback (most recent call last):
        ...
        zooport.errors.ActionError: demo: expected ... in [0, 2], got 4294967297 at row 0
    """
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
    raise ActionError(
        f"{where}: expected integer discrete actions{_for(space)}, got dtype {array.dtype} "
        f"(first value {given!r})"
    )


def _raise_discrete(
    array: np.ndarray, sizes: int | tuple[int, ...], where: str, space: Any
) -> None:
    """Raises the :class:`ActionError` for the first invalid value of ``array``."""
    limits = np.broadcast_to(np.asarray(sizes, dtype=np.float64), array.shape[-1:])
    values = array.astype(np.float64) if array.dtype.kind == "f" else array.astype(object)
    bad = ~((values >= 0) & (values < limits))
    if array.dtype.kind == "f":
        bad |= np.floor(values) != values
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    row = f" at row {index[0]}" if index else ""
    branch = f" in branch {index[-1]}" if array.ndim == 2 and limits.size > 1 else ""
    limit = int(limits[index[-1]] if array.ndim == 2 else limits.reshape(-1)[0])
    raise ActionError(
        f"{where}: expected integer discrete actions in [0, {limit - 1}]{_for(space)}, got "
        f"{array[index].item()!r}{branch}{row}"
    )


def _for(space: Any) -> str:
    return "" if space is None else f" for {space}"


class ObservationLayout:
    """How a behaviour's observations become one Gymnasium space, batch by batch.

    Args:
        specs: the behaviour's observation specs; zero-size ones get no part of the space.
        uint8_visual: rank-3 observations as uint8 0..255 instead of float32 0..1.
        allow_multiple_obs: always a ``Dict`` keyed by observation name.
        name: the behaviour's name, for error messages.

    Attributes:
        specs: the specs that are part of the space (every spec but zero-size ones).
        all_specs: every spec of the behaviour, as the core's batches hold them.

    Example:
        >>> import numpy as np
        >>> from zooport.envs.base_env import ObservationSpec, ObservationType
        >>> vec = ObservationSpec((2,), (), ObservationType.DEFAULT, "position")
        >>> goal = ObservationSpec((3,), (), ObservationType.GOAL_SIGNAL, "goal")
        >>> layout = ObservationLayout([vec, goal])
        >>> layout.space
        Box(-inf, inf, (5,), float32)
        >>> layout.convert([np.ones((1, 2)), np.zeros((1, 3))]).tolist()
        [[1.0, 1.0, 0.0, 0.0, 0.0]]
        >>> camera = ObservationSpec((8, 8, 3), (), ObservationType.DEFAULT, "camera")
        >>> empty = ObservationSpec((0,), (), ObservationType.DEFAULT, "vector")
        >>> ObservationLayout([camera, empty]).space  # the empty vector sensor is dropped
        Box(0.0, 1.0, (8, 8, 3), float32)
    """

    def __init__(
        self,
        specs: Sequence[ObservationSpec],
        *,
        uint8_visual: bool = False,
        allow_multiple_obs: bool = False,
        name: str = "",
    ) -> None:
        if not specs:
            raise SpecError(
                f"behavior {name!r}: a behaviour without observations cannot be given a space"
            )
        self.name = name
        self.all_specs = list(specs)
        self._shapes = [tuple(int(d) for d in s.shape) for s in self.all_specs]
        self._spec_names = [s.name for s in self.all_specs]
        kept = [i for i, shape in enumerate(self._shapes) if math.prod(shape) > 0]
        if not kept:
            raise SpecError(
                f"behavior {name!r}: every observation is empty (shapes {self._shapes}); "
                "a behaviour without observations cannot be given a space"
            )
        # The core's observations that are part of the space; None when all of them are.
        self._kept: list[int] | None = None if len(kept) == len(self.all_specs) else kept
        self.specs = [self.all_specs[i] for i in kept]
        self.uint8_visual = uint8_visual
        self._visual = [len(s.shape) == 3 for s in self.specs]
        parts = [self._space(s, v) for s, v in zip(self.specs, self._visual, strict=True)]
        self.keys: list[str] | None = None
        if allow_multiple_obs or (len(parts) > 1 and any(len(s.shape) != 1 for s in self.specs)):
            self.keys = _unique_keys(self.specs, kept)
            # Gymnasium's Dict sorts its keys; conversions follow the space's order.
            self.space: spaces.Space = spaces.Dict(dict(zip(self.keys, parts, strict=True)))
            self._order = [self.keys.index(k) for k in self.space.spaces]
        elif len(parts) == 1:
            self.space = parts[0]
        else:
            size = sum(s.shape[0] for s in self.specs)
            self.space = spaces.Box(-np.inf, np.inf, (size,), np.float32)

    def _space(self, spec: ObservationSpec, visual: bool) -> spaces.Box:
        shape = tuple(int(d) for d in spec.shape)
        if visual and self.uint8_visual:
            return spaces.Box(0, 255, shape, np.uint8)
        if visual:
            return spaces.Box(0.0, 1.0, shape, np.float32)
        return spaces.Box(-np.inf, np.inf, shape, np.float32)

    @property
    def is_dict(self) -> bool:
        """True when observations are dicts keyed by observation name."""
        return self.keys is not None

    def _part(self, obs: np.ndarray, i: int, rows: np.ndarray | None) -> np.ndarray:
        if rows is not None:
            obs = obs[rows]
        if self._visual[i] and self.uint8_visual:
            return np.rint(np.clip(obs, 0.0, 1.0) * 255.0).astype(np.uint8)
        return np.array(obs, dtype=np.float32, copy=True)

    def checked(self, steps: Any, terminal: bool = False) -> Any:
        """A core batch (DecisionSteps, or TerminalSteps with ``terminal``), checked.

        Once per batch, not per agent: one observation per spec (zero-size ones included),
        each of shape ``(len(agent_id), *spec.shape)``, and as many rewards, group ids,
        group rewards (and ``interrupted`` flags, or action-mask rows) as agent ids. An empty
        batch is not checked (nothing is read from it). Returns ``steps`` itself; a batch
        built from Python lists (as ML-Agents' own tests and its 0.28 ``group_id`` do) comes
        back as an equal batch of arrays.

        Raises:
            ObservationError: naming the behaviour, the observation (index and name), the
                expected and the given shape, or the fields whose shapes disagree.

        Example:
            >>> from zooport.envs.base_env import DecisionSteps, ObservationSpec, ObservationType
            >>> layout = ObservationLayout(
            ...     [ObservationSpec((3,), (), ObservationType.DEFAULT, "state")], name="Walker")
            >>> steps = DecisionSteps([np.full((2, 1), 7.0)], np.zeros(2), np.arange(2),
            ...                       None, np.zeros(2), np.zeros(2))
            >>> layout.checked(steps)
            Traceback (most recent call last):
            ...
            zooport.errors.ObservationError: behavior 'Walker': DecisionSteps observation 0 \
('state') has shape (2, 1), expected (2, 3) (2 agents x the spec's (3,))
        """
        agent_id = steps.agent_id
        n = len(agent_id)
        if not n:
            return steps
        rows = (n,)
        # The common case, arrays of the right shapes, in a few tuple comparisons; anything
        # else (an error, or lists) takes the slow path, which says what is wrong.
        try:
            obs = steps.obs
            shapes = self._shapes
            if (
                agent_id.shape == rows
                and steps.reward.shape == rows
                and steps.group_id.shape == rows
                and steps.group_reward.shape == rows
                and len(obs) == len(shapes)
                and (
                    obs[0].shape == rows + shapes[0]
                    if len(shapes) == 1
                    else all(o.shape == rows + s for o, s in zip(obs, shapes, strict=True))
                )
            ):
                if terminal:
                    if steps.interrupted.shape == rows:
                        return steps
                else:
                    masks = steps.action_mask
                    if masks is None or all(m.shape[:1] == rows for m in masks):
                        return steps
        except AttributeError:
            pass
        return self._checked_slowly(steps, terminal, n)

    def _checked_slowly(self, steps: Any, terminal: bool, n: int) -> Any:
        """:meth:`checked` for a batch that is wrong or not made of arrays."""
        obs = steps.obs
        shapes = self._shapes
        if len(obs) != len(shapes):
            raise ObservationError(
                f"behavior {self.name!r}: {type(steps).__name__} has {len(obs)} observations, "
                f"expected {len(shapes)} (one per observation spec: {self._spec_names})"
            )
        for i, (o, shape) in enumerate(zip(obs, shapes, strict=True)):
            try:
                given = np.shape(o)
            except ValueError:  # numpy cannot make one array of it (ragged lists)
                raise ObservationError(
                    f"behavior {self.name!r}: {type(steps).__name__} observation {i} "
                    f"({self._spec_names[i]!r}) is not an array of one shape; expected "
                    f"{(n, *shape)}"
                ) from None
            if given[1:] != shape or given[:1] != (n,):
                self._shape_error(steps, i, given, n)
        fields = ["agent_id", "reward", "group_id", "group_reward"]
        fields.append("interrupted" if terminal else "action_mask")
        given = {}
        for field in fields:
            value = getattr(steps, field)
            if field == "action_mask":
                for j, m in enumerate(() if value is None else value):
                    given[f"action_mask[{j}]"] = np.shape(m)
            else:
                given[field] = np.shape(value)
        wrong = {
            f: shape for f, shape in given.items()
            if shape[:1] != (n,) or (len(shape) != 1 and not f.startswith("action_mask"))
        }  # fmt: skip
        if wrong:
            raise ObservationError(
                f"behavior {self.name!r}: {type(steps).__name__} has {n} agent ids but "
                + ", ".join(f"{f} of shape {shape}" for f, shape in wrong.items())
                + f"; expected ({n},) for each"
            )
        return _as_arrays(steps, terminal)

    def _shape_error(self, steps: Any, i: int, given: tuple[int, ...], n: int) -> None:
        shape = self._shapes[i]
        what = f"behavior {self.name!r}: {type(steps).__name__} observation {i} "
        what += f"({self._spec_names[i]!r})"
        if given[1:] == shape:
            raise ObservationError(f"{what} has {given[0]} rows, but the batch has {n} agent ids")
        raise ObservationError(
            f"{what} has shape {given}, expected {(n, *shape)} ({n} agents x the spec's {shape})"
        )

    def convert(
        self, obs: Sequence[np.ndarray], rows: np.ndarray | None = None
    ) -> np.ndarray | dict[str, np.ndarray]:
        """A core batch (one array per spec, rows = agents) as fresh consumer arrays.

        ``rows`` selects and orders the agents; every returned array is a new copy.
        Zero-size observations are left out.
        """
        if self._kept is not None:
            obs = [obs[i] for i in self._kept]
        return self._convert(obs, rows)

    def _convert(
        self, obs: Sequence[np.ndarray], rows: np.ndarray | None
    ) -> np.ndarray | dict[str, np.ndarray]:
        if self.keys is not None:
            return {self.keys[i]: self._part(obs[i], i, rows) for i in self._order}
        if len(self.specs) == 1:
            return self._part(obs[0], 0, rows)
        return np.concatenate([self._part(o, i, rows) for i, o in enumerate(obs)], axis=1)

    def allocate(self, n: int) -> np.ndarray | dict[str, np.ndarray]:
        """A zero batch of ``n`` observations in the consumer layout."""
        if isinstance(self.space, spaces.Dict):
            return {k: np.zeros((n, *s.shape), s.dtype) for k, s in self.space.spaces.items()}
        return np.zeros((n, *self.space.shape), self.space.dtype)

    def write(
        self,
        buffer: np.ndarray | dict[str, np.ndarray],
        slots: np.ndarray,
        obs: Sequence[np.ndarray],
        rows: np.ndarray | None = None,
    ) -> None:
        """Writes a converted core batch into ``buffer[slots]`` (checked: :meth:`checked`)."""
        if self._kept is not None:
            obs = [obs[i] for i in self._kept]
        as_uint8 = self._visual[0] and self.uint8_visual
        if self.keys is None and len(self.specs) == 1 and not as_uint8:
            # One float observation: assignment casts to float32; no intermediate copy.
            buffer[slots] = obs[0] if rows is None else obs[0][rows]
            return
        converted = self._convert(obs, rows)
        if isinstance(buffer, dict):
            for key, value in converted.items():
                buffer[key][slots] = value
        else:
            buffer[slots] = converted

    @staticmethod
    def copy(buffer: np.ndarray | dict[str, np.ndarray]) -> np.ndarray | dict[str, np.ndarray]:
        """A fresh copy of a batch (so callers never hold an adapter's buffer)."""
        if isinstance(buffer, dict):
            return {k: v.copy() for k, v in buffer.items()}
        return buffer.copy()

    @staticmethod
    def take(buffer: np.ndarray | dict[str, np.ndarray], i: int) -> np.ndarray | dict[str, Any]:
        """Row ``i`` of a batch, as fresh arrays."""
        if isinstance(buffer, dict):
            return {k: v[i].copy() for k, v in buffer.items()}
        return buffer[i].copy()


def _as_arrays(steps: Any, terminal: bool) -> DecisionSteps | TerminalSteps:
    """An equal batch whose fields are arrays (of a batch built from Python lists)."""
    obs = [np.asarray(o, dtype=np.float32) if type(o) is not np.ndarray else o for o in steps.obs]
    common = {
        "obs": obs,
        "reward": np.asarray(steps.reward, dtype=np.float32),
        "agent_id": np.asarray(steps.agent_id),
        "group_id": np.asarray(steps.group_id),
        "group_reward": np.asarray(steps.group_reward, dtype=np.float32),
    }
    if terminal:
        return TerminalSteps(interrupted=np.asarray(steps.interrupted, dtype=bool), **common)
    masks = steps.action_mask
    if masks is not None:
        masks = [np.asarray(m, dtype=bool) for m in masks]
    return DecisionSteps(action_mask=masks, **common)


class ActionLayout:
    """How a behaviour's ``ActionSpec`` becomes one Gymnasium space, batch by batch.

    Args:
        spec: the behaviour's action spec.
        flatten_branched: several discrete branches as one ``Discrete`` over every
            combination; ``lookup[k]`` is the branch tuple of index ``k``.
        name: the behaviour's name, used in error messages.

    Example:
        >>> layout = ActionLayout(ActionSpec.create_discrete((2, 2, 3)), flatten_branched=True)
        >>> layout.space, layout.lookup[11].tolist()
        (Discrete(12), [1, 1, 2])
        >>> layout.to_core(np.array([11, 0])).discrete.tolist()
        [[1, 1, 2], [0, 0, 0]]
    """

    def __init__(self, spec: ActionSpec, *, flatten_branched: bool = False, name: str = "") -> None:
        self.spec = spec
        self.name = name
        self.branches = tuple(int(b) for b in spec.discrete_branches)
        self.flatten = flatten_branched and len(self.branches) > 1
        self.lookup: np.ndarray | None = None
        if self.flatten:
            self.lookup = np.array(
                list(itertools.product(*(range(b) for b in self.branches))), dtype=np.int32
            )
        continuous = (
            spaces.Box(-1.0, 1.0, (spec.continuous_size,), np.float32)
            if spec.continuous_size
            else None
        )
        discrete: spaces.Space | None = None
        if self.flatten:
            discrete = spaces.Discrete(len(self.lookup))
        elif len(self.branches) == 1:
            discrete = spaces.Discrete(self.branches[0])
        elif self.branches:
            discrete = spaces.MultiDiscrete(np.array(self.branches, dtype=np.int64))
        self.is_hybrid = continuous is not None and discrete is not None
        if self.is_hybrid:
            self.space: spaces.Space = spaces.Dict({"continuous": continuous, "discrete": discrete})
        elif continuous is not None:
            self.space = continuous
        elif discrete is not None:
            self.space = discrete
        else:
            raise SpecError(f"behavior {name!r}: an action spec with no actions has no space")
        self._discrete_space = discrete
        self._where = f"behavior {name!r}"  # built once: error messages start with it
        # What checked_discrete bounds each value by: one size for a Discrete (flattened
        # or not), one per branch for a MultiDiscrete.
        self._discrete_sizes: int | tuple[int, ...] = (
            len(self.lookup) if self.flatten else
            self.branches[0] if len(self.branches) == 1 else self.branches
        )  # fmt: skip
        self._branch_array = np.array(self.branches, dtype=np.int64)
        self._offsets = np.cumsum((0,) + self.branches)

    # ------------------------------------------------------------------ actions

    def _discrete_to_core(self, actions: Any, n: int | None) -> np.ndarray:
        array = np.asarray(actions)
        single = isinstance(self._discrete_space, spaces.Discrete)
        expected_ndim = 1 if single else 2
        if array.ndim != expected_ndim or (n is not None and array.shape[0] != n):
            want = f"({n if n is not None else 'n'},)" if single else (
                f"({n if n is not None else 'n'}, {len(self.branches)})"
            )
            raise ActionError(
                f"behavior {self.name!r}: expected a batch of actions of shape {want} for "
                f"{self._discrete_space}, got shape {array.shape}"
            )
        array = checked_discrete(array, self._discrete_sizes, self._where, self._discrete_space)
        if self.flatten:
            return self.lookup[array]
        if single:
            return array.reshape(-1, 1).astype(np.int32, copy=False)
        return array.astype(np.int32, copy=False)

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
        """A batch of consumer actions (rows = agents) as a core :class:`ActionTuple`.

        Checks the consumer layout and every discrete value (integral, finite, in its
        branch's range: see :func:`checked_discrete`) before any cast, so no value wraps
        into a valid action whatever the core checks; the core validates continuous values.
        """
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
            return ActionTuple(continuous=self._continuous_to_core(actions, n))
        return ActionTuple(discrete=self._discrete_to_core(actions, n))

    def from_core(self, action: ActionTuple) -> np.ndarray | dict[str, np.ndarray]:
        """A core :class:`ActionTuple` as a batch of consumer actions (inverse of to_core)."""
        discrete: np.ndarray | None = None
        if self.branches:
            d = np.asarray(action.discrete, dtype=np.int64)
            if self.flatten:
                strides = np.cumprod((1,) + self.branches[:0:-1])[::-1]
                discrete = d @ strides
            elif len(self.branches) == 1:
                discrete = d[:, 0]
            else:
                discrete = d
        continuous = np.asarray(action.continuous, dtype=np.float32)
        if self.is_hybrid:
            return {"continuous": continuous.copy(), "discrete": discrete}
        return continuous.copy() if self.spec.continuous_size else discrete

    # ------------------------------------------------------------------ masks

    @property
    def mask_size(self) -> int:
        """The length of one agent's consumer mask (0 without discrete branches)."""
        if self.flatten:
            return len(self.lookup)
        return int(sum(self.branches))

    def allowed_mask(self, core_mask: Sequence[np.ndarray] | None, n: int) -> np.ndarray:
        """The core's masks (True = NOT available) as int8 (n, mask_size), 1 = allowed.

        Example:
            >>> layout = ActionLayout(ActionSpec.create_discrete((2, 3)))
            >>> core = [np.array([[False, True]]), np.array([[True, False, False]])]
            >>> layout.allowed_mask(core, 1).tolist()
            [[1, 0, 0, 1, 1]]
        """
        if core_mask is None or not self.branches:
            return np.ones((n, self.mask_size), dtype=np.int8)
        if len(core_mask) != len(self.branches):
            raise SpecError(
                f"behavior {self.name!r}: expected one mask per discrete branch "
                f"({len(self.branches)}), got {len(core_mask)}"
            )
        if self.flatten:
            allowed = np.ones((n, len(self.lookup)), dtype=bool)
            for j, mask in enumerate(core_mask):
                allowed &= ~np.asarray(mask, dtype=bool)[:, self.lookup[:, j]]
            return allowed.astype(np.int8)
        return (~np.concatenate([np.asarray(m, dtype=bool) for m in core_mask], axis=1)).astype(
            np.int8
        )

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray | dict[str, np.ndarray]:
        """``n`` uniform random consumer actions (for tests and random rollouts)."""
        return self.from_core(self.spec.random_action(n, rng))
