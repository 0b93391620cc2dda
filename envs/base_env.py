"""The batched multi-agent environment API in ML-Agents' names and semantics: code written
against ``mlagents_envs.base_env`` works by changing the import to ``zooport.envs.base_env``."""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple, Protocol

import numpy as np

from zooport.envs.arguments import check_int
from zooport.envs.steps import DecisionStep, DecisionSteps, TerminalStep, TerminalSteps
from zooport.errors import ActionError, ArgumentError, a_type

__all__ = [
    "AgentId", "GroupId", "BehaviorName", "ActionTuple", "ActionSpec", "DimensionProperty",
    "ObservationType", "ObservationSpec", "BehaviorSpec", "DecisionStep", "DecisionSteps",
    "TerminalStep", "TerminalSteps", "BehaviorMapping", "BaseEnv", "BaseEnvLike",
]  # fmt: skip

_FLOAT32 = np.dtype(np.float32)
_INT32 = np.dtype(np.int32)
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_INT32_MIN, _INT32_MAX = int(np.iinfo(np.int32).min), int(np.iinfo(np.int32).max)
_NO_CONTINUOUS = np.zeros((0, 0), np.float32)
_NO_DISCRETE = np.zeros((0, 0), np.int32)
_BRANCH_TOPS: dict[tuple[int, ...], np.uint32 | np.ndarray] = {}  # see _out_of_range


def _as_2d_array(values: Any, dtype: np.dtype, part: str, where: str) -> np.ndarray:
    # Every check runs before any cast, so no value can wrap or truncate into a valid action.
    if type(values) is np.ndarray and values.ndim == 2 and values.dtype is dtype:
        # The common case (a policy's float32 or int32 batch) needs no conversion or check.
        return values
    try:
        array = np.asarray(values)
    except (ValueError, TypeError) as exc:  # ragged nested lists and the like
        raise ActionError(
            f"{where}: expected a rectangular array of {part} actions, got "
            f"{a_type(values)} numpy cannot convert: {exc}"
        ) from None
    if array.ndim != 2:
        raise ActionError(
            f"{where}: expected {part} actions of rank 2 (n_agents, size), "
            f"got rank {array.ndim} with shape {array.shape}"
        )
    kind = array.dtype.kind
    if kind not in "fiu" and (dtype is _FLOAT32 or array.size):  # an empty batch takes any dtype
        expected = "numeric" if dtype is _FLOAT32 else "integer"
        raise ActionError(f"{where}: expected {expected} {part} actions, got dtype {array.dtype}")
    if dtype is _FLOAT32:
        if kind == "f" and array.dtype.itemsize > 4 and array.size:
            # A float64 beyond float32's range would become inf (with a RuntimeWarning).
            finite = array[np.isfinite(array)]
            if finite.size and np.max(np.abs(finite)) > _FLOAT32_MAX:
                raise ActionError(
                    f"{where}: expected {part} actions within float32 range, got "
                    f"{finite[np.argmax(np.abs(finite))]}"
                )
        return array.astype(np.float32, copy=False)
    if not array.size:
        return array.astype(np.int32)
    # A float that is a whole number is accepted; 1.5 would be silently truncated.
    if kind == "f" and not (np.all(np.isfinite(array)) and np.all(array == np.round(array))):
        raise ActionError(
            f"{where}: expected integer discrete actions, got non-integral values "
            f"of dtype {array.dtype}"
        )
    # Casting 2**32 + 1 to int32 would silently give 1, a valid action.
    if not np.can_cast(array.dtype, np.int32):
        # As Python numbers: comparing a float16 with 2**31 in numpy overflows (a warning).
        low, high = array.min().item(), array.max().item()
        if low < _INT32_MIN or high > _INT32_MAX:
            bad = low if low < _INT32_MIN else high
            raise ActionError(f"{where}: expected discrete actions within int32 range, got {bad}")
    return array.astype(np.int32, copy=False)


def _add_part(values: Any, other: np.ndarray, part: str) -> tuple[np.ndarray, np.ndarray]:
    """``values`` as the ``part`` of an ActionTuple, and the other part, which must agree."""
    array = _as_2d_array(values, _FLOAT32 if part == "continuous" else _INT32, part, "ActionTuple")
    if not other.shape[1]:  # the other part is a filler: it takes this batch size
        return array, np.zeros((array.shape[0], 0), other.dtype)
    if other.shape[0] != array.shape[0]:
        raise ActionError(
            f"ActionTuple: the {part} part has {array.shape[0]} rows but the other part "
            f"has {other.shape[0]}"
        )
    return array, other


class ActionTuple:
    """A batch of actions: ``continuous`` (n, c) float32 and ``discrete`` (n, d) int32."""

    __slots__ = ("_continuous", "_discrete")

    def __init__(self, continuous: Any = None, discrete: Any = None) -> None:
        # A missing part is an empty (n, 0) filler; the part added sets its batch size n.
        self._continuous = _NO_CONTINUOUS
        self._discrete = _NO_DISCRETE
        if continuous is not None:
            self.add_continuous(continuous)
        if discrete is not None:
            self.add_discrete(discrete)

    @classmethod
    def _trusted(cls, continuous: np.ndarray, discrete: np.ndarray) -> ActionTuple:  # unchecked
        action = cls.__new__(cls)
        action._continuous = continuous
        action._discrete = discrete
        return action

    @property
    def continuous(self) -> np.ndarray:
        """The continuous part, shape (n_agents, continuous_size), float32."""
        return self._continuous

    @property
    def discrete(self) -> np.ndarray:
        """The discrete part, shape (n_agents, n_branches), int32."""
        return self._discrete

    @property
    def discrete_dtype(self) -> type:
        """The dtype discrete actions are stored as."""
        return np.int32

    def add_continuous(self, continuous: Any) -> None:
        """Sets the continuous part; it must be a 2-D numeric array."""
        self._continuous, self._discrete = _add_part(continuous, self._discrete, "continuous")

    def add_discrete(self, discrete: Any) -> None:
        """Sets the discrete part; it must be a 2-D integer array."""
        self._discrete, self._continuous = _add_part(discrete, self._continuous, "discrete")

    def __len__(self) -> int:
        return max(self.continuous.shape[0], self.discrete.shape[0])

    def __repr__(self) -> str:
        return f"ActionTuple(continuous={self.continuous!r}, discrete={self.discrete!r})"


class ActionSpec(NamedTuple):
    """The action layout of a behaviour: continuous actions (in [-1, 1]) and discrete branches."""

    continuous_size: int
    discrete_branches: tuple[int, ...]

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ActionSpec)
            and self.continuous_size == other.continuous_size
            and tuple(self.discrete_branches) == tuple(other.discrete_branches)
        )

    def __hash__(self) -> int:
        return hash((self.continuous_size, tuple(self.discrete_branches)))

    def is_discrete(self) -> bool:
        """True when the spec has discrete branches and no continuous actions."""
        return self.discrete_size > 0 and self.continuous_size == 0

    def is_continuous(self) -> bool:
        """True when the spec has continuous actions and no discrete branches."""
        return self.discrete_size == 0 and self.continuous_size > 0

    @property
    def discrete_size(self) -> int:
        """The number of discrete branches."""
        return len(self.discrete_branches)

    def empty_action(self, n_agents: int) -> ActionTuple:
        """Zero actions for ``n_agents`` agents."""
        return ActionTuple(
            continuous=np.zeros((n_agents, self.continuous_size), dtype=np.float32),
            discrete=np.zeros((n_agents, self.discrete_size), dtype=np.int32),
        )

    def random_action(self, n_agents: int, rng: np.random.Generator | None = None) -> ActionTuple:
        """Uniform random actions; pass ``rng`` (a ``numpy.random.Generator``) to seed them."""
        return random_actions(self, n_agents, np.random if rng is None else rng)

    def _validate_action(self, actions: ActionTuple, n: int, name: str) -> ActionTuple:
        if not isinstance(actions, ActionTuple):
            raise ActionError(
                f"behavior {name!r}: expected an ActionTuple, got {type(actions).__name__}"
            )
        continuous_size, discrete_size = self.continuous_size, len(self.discrete_branches)
        continuous, discrete = actions.continuous, actions.discrete
        for part, array, size, columns in (
            ("continuous", continuous, continuous_size, "continuous_size"),
            ("discrete", discrete, discrete_size, "n_branches"),
        ):
            if size == 0 and array.shape[1]:
                raise ActionError(
                    f"behavior {name!r} has no {part} actions, got a {part} part of "
                    f"shape {array.shape}"
                )
            if size and array.shape != (n, size):
                raise ActionError(
                    f"behavior {name!r} needs {part} actions of shape {(n, size)} "
                    f"(n_agents, {columns}), got {array.shape}"
                )
        # count_nonzero is the cheapest numpy reduction (all() and any() cost ~1 us each).
        if continuous_size and np.count_nonzero(np.isfinite(continuous)) != continuous.size:
            bad = np.argwhere(~np.isfinite(continuous))[0]
            raise ActionError(
                f"behavior {name!r}: continuous actions must be finite, got "
                f"{continuous[tuple(bad)]} at row {bad[0]}, column {bad[1]}"
            )
        # A spec built by hand may hold its branches in a list; the cache needs a tuple.
        branch_sizes = tuple(self.discrete_branches)
        if discrete_size and discrete.size and _out_of_range(discrete, branch_sizes):
            branches = np.asarray(branch_sizes)
            row, col = np.argwhere((discrete < 0) | (discrete >= branches))[0]
            raise ActionError(
                f"behavior {name!r}: discrete branch {col} takes values in "
                f"[0, {branches[col] - 1}], got {discrete[row, col]} at row {row}"
            )
        if continuous.shape[0] != n or discrete.shape[0] != n:
            # Fill the absent part with the right empty shape so cores can index it.
            actions = ActionTuple(
                continuous=continuous if continuous_size else np.zeros((n, 0), np.float32),
                discrete=discrete if discrete_size else np.zeros((n, 0), np.int32),
            )
        return actions

    @staticmethod
    def create_continuous(continuous_size: int) -> ActionSpec:
        """A spec with ``continuous_size`` continuous actions and no discrete branches."""
        return ActionSpec.create_hybrid(continuous_size, ())

    @staticmethod
    def create_discrete(discrete_branches: tuple[int, ...]) -> ActionSpec:
        """A spec with the given discrete branches and no continuous actions."""
        return ActionSpec.create_hybrid(0, discrete_branches)

    @staticmethod
    def create_hybrid(continuous_size: int, discrete_branches: tuple[int, ...]) -> ActionSpec:
        """A spec with both continuous actions and discrete branches."""
        branches = tuple(discrete_branches)
        if not _is_int(continuous_size) or continuous_size < 0:
            raise ArgumentError(
                f"Expected continuous_size to be a non-negative int, actually: {continuous_size!r}"
            )
        if not all(_is_int(b) and b >= 1 for b in branches):
            raise ArgumentError(
                f"Expected every discrete branch size to be a positive int, actually: {branches}"
            )
        return ActionSpec(int(continuous_size), tuple(int(b) for b in branches))


def _is_int(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, np.integer))


def _out_of_range(discrete: np.ndarray, branches: tuple[int, ...]) -> bool:
    # Viewed as uint32, a negative int32 is >= 2**31, above every branch's top, so one
    # comparison checks both bounds; a scalar top (equal branches) avoids a broadcast.
    if discrete.dtype is not _INT32:
        return bool(discrete.min() < 0 or (discrete.max(axis=0) >= np.asarray(branches)).any())
    tops = _BRANCH_TOPS.get(branches)
    if tops is None:
        clipped = [min(size - 1, _INT32_MAX) for size in branches]
        if len(set(clipped)) == 1:
            tops = np.uint32(clipped[0])
        else:
            tops = np.array(clipped, dtype=np.uint32)
            tops.setflags(write=False)
        _BRANCH_TOPS[branches] = tops
    return bool(np.count_nonzero(discrete.view(np.uint32) > tops))


def random_actions(
    action_spec: Any,
    n_agents: int,
    rng: Any,
    action_mask: Any = None,
) -> ActionTuple:
    """Uniform random actions of any action spec, never one ML-Agents' ``action_mask`` (a bool
    array per branch, True = NOT available) forbids; ``rng``: a Generator or ``numpy.random``."""
    branches = tuple(int(b) for b in action_spec.discrete_branches)
    continuous = rng.uniform(-1.0, 1.0, size=(n_agents, int(action_spec.continuous_size)))
    discrete = np.zeros((n_agents, len(branches)), dtype=np.int32)
    for b, size in enumerate(branches):
        scores = rng.random((n_agents, size))
        if action_mask is not None:
            # Allowed scores are in [0, 1), masked ones -1 (a fully masked row picks 0).
            scores = np.where(np.asarray(action_mask[b], dtype=bool), -1.0, scores)
        discrete[:, b] = np.argmax(scores, axis=1)
    return ActionTuple._trusted(continuous.astype(np.float32), discrete)


AgentId = int
GroupId = int
BehaviorName = str


class DimensionProperty(enum.IntFlag):
    """Properties of one observation dimension."""

    UNSPECIFIED = 0
    NONE = 1
    TRANSLATIONAL_EQUIVARIANCE = 2
    VARIABLE_SIZE = 4


class ObservationType(enum.Enum):
    """What an observation is used for."""

    DEFAULT = 0
    GOAL_SIGNAL = 1


class ObservationSpec(NamedTuple):
    """One observation of a behaviour: its shape, per-dimension properties, type and name."""

    shape: tuple[int, ...]
    dimension_property: tuple[DimensionProperty, ...]
    observation_type: ObservationType
    name: str

    @classmethod
    def vector(
        cls, size: int, name: str, *, observation_type: ObservationType = ObservationType.DEFAULT
    ) -> ObservationSpec:
        """A vector observation of ``size`` floats (a ``VectorSensor``'s spec)."""
        shape = _sizes(f"ObservationSpec.vector({name!r})", size=(size, 0))
        return cls(shape, (DimensionProperty.NONE,), observation_type, name)

    @classmethod
    def visual(
        cls,
        height: int,
        width: int,
        channels: int,
        name: str,
        *,
        observation_type: ObservationType = ObservationType.DEFAULT,
    ) -> ObservationSpec:
        """An (height, width, channels) image, equivariant along its two spatial dimensions."""
        where = f"ObservationSpec.visual({name!r})"
        shape = _sizes(where, height=(height, 1), width=(width, 1), channels=(channels, 1))
        equivariant = DimensionProperty.TRANSLATIONAL_EQUIVARIANCE
        return cls(
            shape, (equivariant, equivariant, DimensionProperty.NONE), observation_type, name
        )

    @classmethod
    def entities(
        cls,
        count: int,
        features: int,
        name: str,
        *,
        observation_type: ObservationType = ObservationType.DEFAULT,
    ) -> ObservationSpec:
        """Up to ``count`` entities of ``features`` floats each (a ``BufferSensor``'s spec)."""
        shape = _sizes(
            f"ObservationSpec.entities({name!r})", count=(count, 1), features=(features, 1)
        )
        variable = DimensionProperty.VARIABLE_SIZE
        return cls(shape, (variable, DimensionProperty.NONE), observation_type, name)


def _sizes(where: str, **sizes: tuple[int, int]) -> tuple[int, ...]:
    return tuple(check_int(size, label, low, where=where) for label, (size, low) in sizes.items())


class BehaviorSpec(NamedTuple):
    """The observation specs and the action spec shared by a behaviour's agents."""

    observation_specs: list[ObservationSpec]
    action_spec: ActionSpec


class BehaviorMapping(Mapping):
    """A read-only mapping from behaviour name to :class:`BehaviorSpec`."""

    def __init__(self, specs: dict[BehaviorName, BehaviorSpec]) -> None:
        self._dict = specs

    def __len__(self) -> int:
        return len(self._dict)

    def __getitem__(self, behavior: BehaviorName) -> BehaviorSpec:
        return self._dict[behavior]

    def __iter__(self) -> Iterator[BehaviorName]:
        yield from self._dict

    def __repr__(self) -> str:
        return f"BehaviorMapping({self._dict!r})"


class BaseEnv(ABC):
    """A batched environment of behaviours with many agents each: ``reset()``, then for each
    behaviour ``get_steps(name)`` and ``set_actions(name, actions)``, then ``step()``."""

    @abstractmethod
    def step(self) -> None:
        """Advances the simulation with the actions set since the last step."""

    @abstractmethod
    def reset(self) -> None:
        """Starts a new episode for every agent."""

    @abstractmethod
    def close(self) -> None:
        """Releases the simulation's resources."""

    @property
    @abstractmethod
    def behavior_specs(self) -> Mapping[BehaviorName, BehaviorSpec]:
        """The behaviours of the environment, by name."""

    @abstractmethod
    def set_actions(self, behavior_name: BehaviorName, action: ActionTuple) -> None:
        """Sets the actions of every agent in the behaviour's last DecisionSteps."""

    @abstractmethod
    def set_action_for_agent(
        self, behavior_name: BehaviorName, agent_id: AgentId, action: ActionTuple
    ) -> None:
        """Sets the action of one agent; ``action`` holds a batch of one."""

    @abstractmethod
    def get_steps(self, behavior_name: BehaviorName) -> tuple[DecisionSteps, TerminalSteps]:
        """The agents that request a decision and those whose episode ended."""


class BaseEnvLike(Protocol):
    """The members of :class:`BaseEnv` as a structural type, for static checking only: a
    ``CorePool`` or ML-Agents' ``UnityEnvironment`` fits without subclassing."""

    @property
    def behavior_specs(self) -> Mapping[BehaviorName, BehaviorSpec]: ...
    def reset(self) -> None: ...
    def step(self) -> None: ...
    def get_steps(self, behavior_name: BehaviorName) -> tuple[DecisionSteps, TerminalSteps]: ...
    def set_actions(self, behavior_name: BehaviorName, action: ActionTuple) -> None: ...
    def set_action_for_agent(
        self, behavior_name: BehaviorName, agent_id: AgentId, action: ActionTuple
    ) -> None: ...
    def close(self) -> None: ...
