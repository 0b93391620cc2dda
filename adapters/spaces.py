"""A behaviour's specs as Gymnasium spaces, and the step rules both engines share."""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import create_empty_array

from zooport.envs.base_env import (
    ActionSpec,
    ActionTuple,
    BehaviorSpec,
    DecisionSteps,
    ObservationSpec,
    TerminalSteps,
)
from zooport.errors import ActionError, ObservationError, SpecError

__all__ = [
    "ObservationLayout", "ActionLayout", "AgentSlots", "Index", "observation_key",
    "checked_discrete",
]  # fmt: skip

_FLOAT32 = np.dtype(np.float32)
_BOOL = np.dtype(bool)  # an instance: numpy converts a type on every call
_NOT_A_NAME = re.compile(r"[^0-9A-Za-z_]+")
#: The per-agent fields of a core batch (besides obs, masks, interrupted) and their dtypes.
_FIELD_TYPES = {"agent_id": None, "reward": _FLOAT32, "group_id": None, "group_reward": _FLOAT32}


def observation_key(spec: ObservationSpec, index: int) -> str:
    """The Dict key of an observation: its spec name made identifier-safe, or ``obs_<i>``."""
    name = _NOT_A_NAME.sub("_", spec.name or "").strip("_")
    return name or f"obs_{index}"


class ObservationLayout:
    """How a behaviour's observation specs (less the zero-size ones) become one Gymnasium space."""

    def __init__(
        self,
        specs: Sequence[ObservationSpec],
        *,
        uint8_visual: bool = False,
        allow_multiple_obs: bool = False,
        name: str = "",
    ) -> None:
        self.name = name
        self.all_specs = list(specs)
        self._shapes = [tuple(int(d) for d in s.shape) for s in self.all_specs]
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
            self.keys = []
            for i, spec in zip(kept, self.specs, strict=True):
                key = observation_key(spec, i)
                self.keys.append(f"{key}_{i}" if key in self.keys else key)
            # Gymnasium's Dict sorts its keys; conversions follow the space's order.
            self.space: spaces.Space = spaces.Dict(dict(zip(self.keys, parts, strict=True)))
            self._order = [self.keys.index(k) for k in self.space.spaces]
        elif len(parts) == 1:
            self.space = parts[0]
        else:
            size = sum(s.shape[0] for s in self.specs)
            self.space = spaces.Box(-np.inf, np.inf, (size,), np.float32)
        #: One float observation, not a Dict: a batch is written into a buffer as it is.
        as_uint8 = self._visual[0] and uint8_visual
        self.plain = len(self.all_specs) == 1 and self.keys is None and not as_uint8

    def _space(self, spec: ObservationSpec, visual: bool) -> spaces.Box:
        shape = tuple(int(d) for d in spec.shape)
        if visual and self.uint8_visual:
            return spaces.Box(0, 255, shape, np.uint8)
        low, high = (0.0, 1.0) if visual else (-np.inf, np.inf)
        return spaces.Box(low, high, shape, np.float32)

    def _part(self, obs: np.ndarray, i: int, rows: np.ndarray | None) -> np.ndarray:
        if rows is not None:
            obs = obs[rows]
        if self._visual[i] and self.uint8_visual:
            return np.rint(np.clip(obs, 0.0, 1.0) * 255.0).astype(np.uint8)
        return np.array(obs, dtype=_FLOAT32, copy=True)

    def checked(self, steps: Any, terminal: bool = False, rows_known: bool = False) -> Any:
        """A core batch checked against the specs, as arrays (``rows_known``: only obs checked)."""
        agent_id = steps.agent_id
        n = len(agent_id)
        if not n:
            return steps
        rows = (n,)
        obs, shapes = steps.obs, self._shapes
        # Arrays of the right shapes in a few comparisons; else the slow path says what is wrong.
        try:
            if (
                (
                    rows_known
                    or agent_id.shape == steps.reward.shape == steps.group_id.shape == rows
                    and steps.group_reward.shape == rows
                )
                and len(obs) == len(shapes)
                and (
                    obs[0].shape == rows + shapes[0]
                    if len(shapes) == 1
                    else all(o.shape == rows + s for o, s in zip(obs, shapes, strict=True))
                )
            ):
                if terminal:
                    if rows_known or steps.interrupted.shape == rows:
                        return steps
                else:
                    masks = steps.action_mask
                    if masks is None or all(m.shape[:1] == rows for m in masks):
                        return steps
        except AttributeError:
            pass
        if len(obs) != len(shapes):
            raise ObservationError(
                f"behavior {self.name!r}: {type(steps).__name__} has {len(obs)} observations, "
                f"expected {len(shapes)} (one per observation spec: "
                f"{[s.name for s in self.all_specs]})"
            )
        for i, (o, shape, spec) in enumerate(zip(obs, shapes, self.all_specs, strict=True)):
            what = f"behavior {self.name!r}: {type(steps).__name__} observation {i} ({spec.name!r})"
            try:
                given = np.shape(o)
            except ValueError:  # numpy cannot make one array of it (ragged lists)
                raise ObservationError(
                    f"{what} is not an array of one shape; expected {(n, *shape)}"
                ) from None
            if given[1:] == shape and given[:1] != (n,):
                raise ObservationError(
                    f"{what} has {given[0]} rows, but the batch has {n} agent ids"
                )
            if given[1:] != shape:
                raise ObservationError(
                    f"{what} has shape {given}, expected {(n, *shape)} ({n} agents x the spec's "
                    f"{shape})"
                )
        fields = [*_FIELD_TYPES, "interrupted"] if terminal else [*_FIELD_TYPES]
        given = {field: np.shape(getattr(steps, field)) for field in fields}
        masks = None if terminal else steps.action_mask
        for j, m in enumerate(() if masks is None else masks):
            given[f"action_mask[{j}]"] = np.shape(m)
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
        # Right shapes: lists (as in ML-Agents' tests) become arrays of the core's dtypes.
        arrays: dict[str, Any] = {
            f: np.asarray(getattr(steps, f), dtype=t) for f, t in _FIELD_TYPES.items()
        }
        arrays["obs"] = [o if type(o) is np.ndarray else np.asarray(o, _FLOAT32) for o in obs]
        if terminal:
            return TerminalSteps(interrupted=np.asarray(steps.interrupted, dtype=bool), **arrays)
        masks = None if masks is None else [np.asarray(m, dtype=bool) for m in masks]
        return DecisionSteps(action_mask=masks, **arrays)

    def convert(
        self, obs: Sequence[np.ndarray], rows: np.ndarray | None = None
    ) -> np.ndarray | dict[str, np.ndarray]:
        """A core batch as fresh consumer arrays; ``rows`` selects and orders the agents."""
        if self.plain and rows is None:
            return np.array(obs[0], dtype=_FLOAT32)  # _part's copy, without its checks
        if self._kept is not None:
            obs = [obs[i] for i in self._kept]
        if self.keys is not None:
            return {self.keys[i]: self._part(obs[i], i, rows) for i in self._order}
        if len(self.specs) == 1:
            return self._part(obs[0], 0, rows)
        return np.concatenate([self._part(o, i, rows) for i, o in enumerate(obs)], axis=1)

    def allocate(self, n: int) -> np.ndarray | dict[str, np.ndarray]:
        """A zero batch of ``n`` observations in the consumer layout."""
        return create_empty_array(self.space, n)  # type: ignore[return-value]  # Box or Dict

    def write(
        self,
        buffer: np.ndarray | dict[str, np.ndarray],
        slots: np.ndarray | slice,
        obs: Sequence[np.ndarray],
        rows: np.ndarray | None = None,
    ) -> None:
        """Writes a converted core batch into ``buffer[slots]`` (checked: :meth:`checked`)."""
        if isinstance(buffer, dict):  # a Dict layout's (allocate() made it)
            for key, value in self.convert(obs, rows).items():  # type: ignore[union-attr]
                buffer[key][slots] = value
        elif self.plain:
            # One float observation: assignment casts to float32; no intermediate copy.
            buffer[slots] = obs[0] if rows is None else obs[0][rows]
        else:
            buffer[slots] = self.convert(obs, rows)

    @staticmethod
    def copy(buffer: np.ndarray | dict[str, Any], row: int | None = None) -> Any:
        """A fresh copy of a batch, or of its row ``row`` (callers never hold a buffer)."""
        if isinstance(buffer, dict):
            return {k: (v if row is None else v[row]).copy() for k, v in buffer.items()}
        return buffer.copy() if row is None else buffer[row].copy()

    take = copy  # row ``i`` of a batch: ``take(buffer, i)``


@functools.lru_cache(maxsize=256)
def _largest(sizes: int | tuple[int, ...], dtype: np.dtype) -> Any:
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
    """``array`` as integer discrete actions below ``sizes``, checked before any cast."""
    if type(sizes) is not int and not isinstance(sizes, tuple):
        sizes = int(sizes)  # a Discrete's n is a numpy integer (the cache needs one type)
    kind = array.dtype.kind
    if kind in "iub":
        # Viewed as unsigned, a negative value is above any valid one: one comparison for both.
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
    """How a behaviour's ``ActionSpec`` becomes one Gymnasium space, batch by batch."""

    def __init__(self, spec: ActionSpec, *, flatten_branched: bool = False, name: str = "") -> None:
        self.spec = spec
        self.name = name
        self.branches = tuple(int(b) for b in spec.discrete_branches)
        self.flatten = flatten_branched and len(self.branches) > 1
        # Row k: the branch tuple of flattened action k.
        self.lookup: np.ndarray | None = None
        if self.flatten:
            self.lookup = np.array(list(itertools.product(*map(range, self.branches))), np.int32)
        #: The length of one agent's consumer mask (0 without discrete branches).
        self.mask_size = len(self.lookup) if self.lookup is not None else sum(self.branches)
        # What checked_discrete bounds each value by: one size for a Discrete (flattened
        # or not), one per branch for a MultiDiscrete.
        self._discrete_sizes: int | tuple[int, ...] = (
            self.mask_size if self.flatten or len(self.branches) == 1 else self.branches
        )
        parts: dict[str, spaces.Space] = {}
        if spec.continuous_size:
            parts["continuous"] = spaces.Box(-1.0, 1.0, (spec.continuous_size,), np.float32)
        if isinstance(self._discrete_sizes, int):
            parts["discrete"] = spaces.Discrete(self._discrete_sizes)
        elif self.branches:
            parts["discrete"] = spaces.MultiDiscrete(np.array(self.branches, dtype=np.int64))
        if not parts:
            raise SpecError(f"behavior {name!r}: an action spec with no actions has no space")
        self._where = f"behavior {name!r}"  # built once: error messages start with it
        self.is_hybrid = len(parts) == 2
        self.space: spaces.Space = spaces.Dict(parts) if self.is_hybrid else [*parts.values()][0]
        self._discrete_space = parts.get("discrete")

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
        if self.lookup is not None:
            return self.lookup[array]
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
                    f"behavior {self.name!r}: expected a dict action for hybrid actions (a dict "
                    f"with keys ['continuous', 'discrete']), got {got}"
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
        if self.lookup is not None:
            allowed = np.ones((n, self.mask_size), dtype=np.bool_)
            for j, mask in enumerate(core_mask):
                allowed &= ~np.asarray(mask, dtype=np.bool_)[:, self.lookup[:, j]]
            return allowed.astype(np.int8)
        masked = np.concatenate([np.asarray(m, dtype=bool) for m in core_mask], axis=1)
        return (~masked).astype(np.int8)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray | dict[str, np.ndarray]:
        """``n`` uniform random consumer actions (for tests and random rollouts)."""
        return self.from_core(self.spec.random_action(n, rng))


#: Slots to write: an index array, or a slice when they are the first slots in order.
Index = slice | np.ndarray


class AgentSlots:
    """A behaviour's layouts and the per-slot ``obs``, ``mask``, ``group_id`` an engine allocates;
    the rules: no terminal reward is lost, a slot without a decision keeps its observation."""

    obs: Any
    mask: np.ndarray
    group_id: np.ndarray
    mask_size: int

    def __init__(self, name: str, spec: BehaviorSpec, layout: Any) -> None:
        self.name = name
        self.spec = spec
        self.obs_layout = ObservationLayout(
            spec.observation_specs,
            uint8_visual=layout.uint8_visual,
            allow_multiple_obs=layout.allow_multiple_obs,
            name=name,
        )
        self.action_layout = ActionLayout(
            spec.action_spec, flatten_branched=layout.flatten_branched, name=name
        )

    def _end_episodes(
        self,
        index: Index,
        terminal: TerminalSteps,
        rows: np.ndarray | None,
        reward: np.ndarray,
        group_reward: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
        *,
        keep_obs: bool = True,
    ) -> None:
        """The slots ``index`` (rows ``rows`` of ``terminal``) end their episodes."""
        interrupted = np.asarray(terminal.interrupted, dtype=_BOOL)
        if rows is None:
            reward[index] = terminal.reward
            group_reward[index] = terminal.group_reward
        else:
            reward[index] = terminal.reward[rows]
            group_reward[index] = terminal.group_reward[rows]
            interrupted = interrupted[rows]
        truncated[index] = interrupted
        terminated[index] = ~interrupted
        if keep_obs:
            self.obs_layout.write(self.obs, index, terminal.obs, rows)

    def _take_decisions(
        self, index: Index, decision: DecisionSteps, rows: np.ndarray | None, count: int
    ) -> None:
        """The ``count`` slots ``index`` (rows ``rows`` of ``decision``) take their decision."""
        self.obs_layout.write(self.obs, index, decision.obs, rows)
        if self.mask_size:
            masks = decision.action_mask
            if rows is not None and masks is not None:
                masks = [np.asarray(m)[rows] for m in masks]
            self.mask[index] = self.action_layout.allowed_mask(masks, count)
        # mlagents_envs (0.28) hands group ids out as a list, not an array.
        self.group_id[index] = (
            decision.group_id if rows is None else np.asarray(decision.group_id)[rows]
        )
