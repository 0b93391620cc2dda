"""The batched multi-agent environment API, in ML-Agents' names and semantics.

Classes:
    ActionTuple: a batch of continuous and discrete actions.
    ActionSpec: the action layout of a behaviour (continuous size, discrete branches).
    DimensionProperty, ObservationType, ObservationSpec: what one observation is.
    BehaviorSpec: the observation specs and action spec of a behaviour.
    DecisionStep, DecisionSteps: agents that request a decision (one / a batch).
    TerminalStep, TerminalSteps: agents whose episode ended (one / a batch).
    BehaviorMapping: a read-only mapping from behaviour name to ``BehaviorSpec``.
    BaseEnv: the abstract environment every adapter consumes.

Code written against ``mlagents_envs.base_env`` works by changing the import to
``zooport.envs.base_env``. Where ML-Agents accepts bad input silently (a wrong batch size
or dtype, an out-of-range discrete action), zooport raises an :class:`~zooport.ActionError`
that names the behaviour, the expected and the given value.

Action masks follow ML-Agents' polarity: ``True`` means the action is NOT available.
"""

from __future__ import annotations

import enum
import functools
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from zooport.errors import ActionError, ArgumentError, UnknownAgentError

__all__ = [
    "AgentId",
    "GroupId",
    "BehaviorName",
    "ActionTuple",
    "ActionSpec",
    "DimensionProperty",
    "ObservationType",
    "ObservationSpec",
    "BehaviorSpec",
    "DecisionStep",
    "DecisionSteps",
    "TerminalStep",
    "TerminalSteps",
    "BehaviorMapping",
    "BaseEnv",
]

AgentId = int
GroupId = int
BehaviorName = str


_FLOAT32 = np.dtype(np.float32)
_INT32 = np.dtype(np.int32)
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_INT32_MIN, _INT32_MAX = int(np.iinfo(np.int32).min), int(np.iinfo(np.int32).max)


@functools.lru_cache(maxsize=64)
def _number_kind(dtype: np.dtype) -> str:
    """``"floating"``, ``"integer"`` or ``""`` (np.issubdtype is ~0.5 us a call)."""
    if np.issubdtype(dtype, np.floating):
        return "floating"
    return "integer" if np.issubdtype(dtype, np.integer) else ""


def _as_2d_array(values: Any, dtype: type, part: str, where: str) -> np.ndarray:
    """Converts ``values`` to a 2-D array of ``dtype`` without silently changing a value."""
    if (
        type(values) is np.ndarray
        and values.ndim == 2
        and values.dtype is (_FLOAT32 if dtype is np.float32 else _INT32)
    ):
        # The common case (a policy's float32 or int32 batch) needs no conversion or check.
        return values
    try:
        array = np.asarray(values)
    except (ValueError, TypeError) as exc:  # ragged nested lists and the like
        raise ActionError(
            f"{where}: expected a rectangular array of {part} actions, got a "
            f"{type(values).__name__} numpy cannot convert: {exc}"
        ) from None
    if array.ndim != 2:
        raise ActionError(
            f"{where}: expected {part} actions of rank 2 (n_agents, size), "
            f"got rank {array.ndim} with shape {array.shape}"
        )
    kind = _number_kind(array.dtype)
    if dtype is np.float32:
        if not kind:
            raise ActionError(
                f"{where}: expected numeric continuous actions, got dtype {array.dtype}"
            )
        if kind == "floating" and array.dtype.itemsize > 4 and array.size:
            # A float64 beyond float32's range would become inf (with a RuntimeWarning).
            finite = array[np.isfinite(array)]
            if finite.size and np.max(np.abs(finite)) > _FLOAT32_MAX:
                raise ActionError(
                    f"{where}: expected {part} actions within float32 range, got "
                    f"{finite[np.argmax(np.abs(finite))]}"
                )
        return array.astype(np.float32, copy=False)
    if kind == "integer":
        _check_int32_range(array, where)
        return array.astype(np.int32, copy=False)
    if kind == "floating" and array.size:
        # A float that is a whole number is accepted; 1.5 would be silently truncated.
        if not np.all(np.isfinite(array)) or not np.all(array == np.round(array)):
            raise ActionError(
                f"{where}: expected integer discrete actions, got non-integral values "
                f"of dtype {array.dtype}"
            )
        _check_int32_range(array, where)
        return array.astype(np.int32)
    if array.size == 0:
        return array.astype(np.int32)
    raise ActionError(f"{where}: expected integer discrete actions, got dtype {array.dtype}")


def _check_int32_range(array: np.ndarray, where: str) -> None:
    # Casting 2**32 + 1 to int32 would silently give 1, a valid action.
    if array.size and not np.can_cast(array.dtype, np.int32):
        # As Python numbers: comparing a float16 with 2**31 in numpy overflows (a warning).
        low, high = array.min().item(), array.max().item()
        if low < _INT32_MIN or high > _INT32_MAX:
            bad = low if low < _INT32_MIN else high
            raise ActionError(f"{where}: expected discrete actions within int32 range, got {bad}")


class ActionTuple:
    """A batch of actions: ``continuous`` (n, c) float32 and ``discrete`` (n, d) int32.

    A missing part is filled with an empty ``(n, 0)`` array of the right dtype.

    Example:
        >>> import numpy as np
        >>> a = ActionTuple(discrete=np.array([[1], [0]]))
        >>> a.discrete.dtype, a.continuous.shape
        (dtype('int32'), (2, 0))
    """

    __slots__ = ("_continuous", "_discrete")

    def __init__(self, continuous: Any = None, discrete: Any = None) -> None:
        self._continuous: np.ndarray | None = None
        self._discrete: np.ndarray | None = None
        if continuous is not None:
            self.add_continuous(continuous)
        if discrete is not None:
            self.add_discrete(discrete)

    @classmethod
    def _trusted(cls, continuous: np.ndarray, discrete: np.ndarray) -> ActionTuple:
        """Wraps arrays known to be (n, c) float32 and (n, d) int32, without checks.

        For a core's own action buffers, which it hands to its simulation every step: the
        checks of ``__init__`` would cost more than the rest of the wrapping.
        """
        action = cls.__new__(cls)
        action._continuous = continuous
        action._discrete = discrete
        return action

    @property
    def continuous(self) -> np.ndarray:
        """The continuous part, shape (n_agents, continuous_size), float32."""
        if self._continuous is None:
            return np.zeros((0, 0), dtype=np.float32)
        return self._continuous

    @property
    def discrete(self) -> np.ndarray:
        """The discrete part, shape (n_agents, n_branches), int32."""
        if self._discrete is None:
            return np.zeros((0, 0), dtype=np.int32)
        return self._discrete

    @property
    def discrete_dtype(self) -> type:
        """The dtype discrete actions are stored as."""
        return np.int32

    def add_continuous(self, continuous: Any) -> None:
        """Sets the continuous part; it must be a 2-D numeric array."""
        array = _as_2d_array(continuous, np.float32, "continuous", "ActionTuple")
        self._check_batch(array, self._discrete, "continuous")
        self._continuous = array
        if self._discrete is None:
            self._discrete = np.zeros((array.shape[0], 0), dtype=np.int32)

    def add_discrete(self, discrete: Any) -> None:
        """Sets the discrete part; it must be a 2-D integer array."""
        array = _as_2d_array(discrete, np.int32, "discrete", "ActionTuple")
        self._check_batch(array, self._continuous, "discrete")
        self._discrete = array
        if self._continuous is None:
            self._continuous = np.zeros((array.shape[0], 0), dtype=np.float32)

    @staticmethod
    def _check_batch(new: np.ndarray, other: np.ndarray | None, part: str) -> None:
        # The filler of the other part is (n, 0); only a real part may disagree.
        if other is not None and other.shape[1] > 0 and other.shape[0] != new.shape[0]:
            raise ActionError(
                f"ActionTuple: the {part} part has {new.shape[0]} rows but the other part "
                f"has {other.shape[0]}"
            )

    def __len__(self) -> int:
        return max(self.continuous.shape[0], self.discrete.shape[0])

    def __repr__(self) -> str:
        return f"ActionTuple(continuous={self.continuous!r}, discrete={self.discrete!r})"


class ActionSpec(NamedTuple):
    """The action layout of a behaviour.

    Attributes:
        continuous_size: number of continuous actions, each in [-1, 1] by convention.
        discrete_branches: the number of choices in each discrete branch.

    Example:
        >>> spec = ActionSpec.create_hybrid(2, (3, 2))
        >>> spec.discrete_size, spec.is_continuous(), spec.is_discrete()
        (2, False, False)
        >>> spec.empty_action(4).discrete.shape
        (4, 2)
    """

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

    def random_action(
        self, n_agents: int, rng: np.random.Generator | None = None
    ) -> ActionTuple:
        """Uniform random actions; pass ``rng`` (a ``numpy.random.Generator``) to seed them."""
        if rng is None:
            continuous = np.random.uniform(-1.0, 1.0, size=(n_agents, self.continuous_size))
            columns = [np.random.randint(0, b, size=n_agents) for b in self.discrete_branches]
        else:
            continuous = rng.uniform(-1.0, 1.0, size=(n_agents, self.continuous_size))
            columns = [rng.integers(0, b, size=n_agents) for b in self.discrete_branches]
        discrete = (
            np.stack(columns, axis=1).astype(np.int32)
            if columns
            else np.zeros((n_agents, 0), dtype=np.int32)
        )
        return ActionTuple(continuous=continuous.astype(np.float32), discrete=discrete)

    def _validate_action(
        self, actions: ActionTuple, n_agents: int | None, name: str
    ) -> ActionTuple:
        """Checks a batch against this spec; raises :class:`ActionError` naming ``name``.

        Shapes, finiteness of continuous values and the range of every discrete branch are
        checked. ``n_agents=None`` accepts any batch size.
        """
        if not isinstance(actions, ActionTuple):
            raise ActionError(
                f"behavior {name!r}: expected an ActionTuple, got {type(actions).__name__}"
            )
        continuous_size, discrete_size = self.continuous_size, len(self.discrete_branches)
        n = len(actions) if n_agents is None else n_agents
        continuous, discrete = actions.continuous, actions.discrete
        if continuous_size == 0 and continuous.shape[1]:
            raise ActionError(
                f"behavior {name!r} has no continuous actions, got a continuous part of "
                f"shape {continuous.shape}"
            )
        if discrete_size == 0 and discrete.shape[1]:
            raise ActionError(
                f"behavior {name!r} has no discrete actions, got a discrete part of "
                f"shape {discrete.shape}"
            )
        expected = (n, continuous_size)
        if continuous_size and continuous.shape != expected:
            raise ActionError(
                f"behavior {name!r} needs continuous actions of shape {expected} "
                f"(n_agents, continuous_size), got {continuous.shape}"
            )
        expected = (n, discrete_size)
        if discrete_size and discrete.shape != expected:
            raise ActionError(
                f"behavior {name!r} needs discrete actions of shape {expected} "
                f"(n_agents, n_branches), got {discrete.shape}"
            )
        # count_nonzero is the cheapest numpy reduction (all() and any() cost ~1 us each).
        if continuous_size and np.count_nonzero(np.isfinite(continuous)) != continuous.size:
            bad = np.argwhere(~np.isfinite(continuous))[0]
            raise ActionError(
                f"behavior {name!r}: continuous actions must be finite, got "
                f"{continuous[tuple(bad)]} at row {bad[0]}, column {bad[1]}"
            )
        # A spec built by hand may hold its branches in a list; the caches need a tuple.
        branch_sizes = tuple(self.discrete_branches)
        if discrete_size and discrete.size and _out_of_range(discrete, branch_sizes):
            branches = _branch_array(branch_sizes)
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
        return ActionSpec(_check_size(continuous_size, "continuous_size"), ())

    @staticmethod
    def create_discrete(discrete_branches: tuple[int, ...]) -> ActionSpec:
        """A spec with the given discrete branches and no continuous actions."""
        return ActionSpec(0, _check_branches(discrete_branches))

    @staticmethod
    def create_hybrid(continuous_size: int, discrete_branches: tuple[int, ...]) -> ActionSpec:
        """A spec with both continuous actions and discrete branches."""
        return ActionSpec(
            _check_size(continuous_size, "continuous_size"), _check_branches(discrete_branches)
        )


_BRANCH_ARRAYS: dict[tuple[int, ...], np.ndarray] = {}
_BRANCH_TOPS: dict[tuple[int, ...], np.uint32 | np.ndarray] = {}


def _branch_array(branches: tuple[int, ...]) -> np.ndarray:
    """The branch sizes as an array, built once per distinct spec (validation is hot)."""
    array = _BRANCH_ARRAYS.get(branches)
    if array is None:
        array = _BRANCH_ARRAYS[branches] = np.asarray(branches)
        array.setflags(write=False)
    return array


def _out_of_range(discrete: np.ndarray, branches: tuple[int, ...]) -> bool:
    """True if a value of the (n, len(branches)) int32 ``discrete`` is outside its branch.

    Viewed as uint32, a negative int32 is >= 2**31, above every branch's largest value
    (clipped to 2**31 - 1, the largest int32), so one comparison checks both bounds. When
    every branch has the same size the bound is a scalar: broadcasting a (d,) bound over
    the rows costs several microseconds at large n.
    """
    if discrete.dtype is not _INT32:
        bounds = _branch_array(branches)
        return bool(discrete.min() < 0 or (discrete.max(axis=0) >= bounds).any())
    tops = _BRANCH_TOPS.get(branches)
    if tops is None:
        clipped = [min(size - 1, _INT32_MAX) for size in branches]
        if len(set(clipped)) == 1:
            tops = np.uint32(clipped[0])
        else:
            tops = np.array(clipped, dtype=np.uint32)
            tops.setflags(write=False)
        _BRANCH_TOPS[branches] = tops
    return np.count_nonzero(discrete.view(np.uint32) > tops) > 0


def _check_size(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ArgumentError(f"Expected {what} to be a non-negative int, actually: {value!r}")
    return int(value)


def _check_branches(branches: tuple[int, ...]) -> tuple[int, ...]:
    branches = tuple(branches)
    for b in branches:
        if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 1:
            raise ArgumentError(
                f"Expected every discrete branch size to be a positive int, actually: {branches}"
            )
    return tuple(int(b) for b in branches)


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


class BehaviorSpec(NamedTuple):
    """The observation specs and the action spec shared by a behaviour's agents."""

    observation_specs: list[ObservationSpec]
    action_spec: ActionSpec


class DecisionStep(NamedTuple):
    """One agent that requests a decision."""

    obs: list[np.ndarray]
    reward: float
    agent_id: AgentId
    action_mask: list[np.ndarray] | None
    group_id: int
    group_reward: float


class TerminalStep(NamedTuple):
    """One agent whose episode ended; ``interrupted`` means truncated, not terminated."""

    obs: list[np.ndarray]
    reward: float
    interrupted: bool
    agent_id: AgentId
    group_id: int
    group_reward: float


class _StepsBase(Mapping):
    """Shared indexing of DecisionSteps and TerminalSteps by agent id.

    The fields are kept as given: arrays, or Python lists as ML-Agents' own tests build
    them (``agent_id=list(range(n))``); iteration, ``in`` and ``[agent_id]`` work on both.
    """

    obs: list[np.ndarray]
    agent_id: np.ndarray
    _agent_id_to_index: dict[AgentId, int] | None

    def _id_list(self) -> list[AgentId]:
        """The agent ids as Python ints, whether ``agent_id`` is an array or a list."""
        ids = self.agent_id
        return ids.tolist() if type(ids) is np.ndarray else np.asarray(ids).tolist()

    @property
    def agent_id_to_index(self) -> dict[AgentId, int]:
        """A dict from agent id to its row in the batch (built once, on first use)."""
        if self._agent_id_to_index is None:
            ids = self._id_list()
            self._agent_id_to_index = dict(zip(ids, range(len(ids)), strict=True))
        return self._agent_id_to_index

    def _index_of(self, agent_id: AgentId) -> int:
        try:
            return self.agent_id_to_index[agent_id]
        except (KeyError, TypeError):
            raise UnknownAgentError(
                f"agent_id {agent_id!r} is not present in the {type(self).__name__}; "
                f"present: {self._id_list()}"
            ) from None

    def __len__(self) -> int:
        return len(self.agent_id)

    # Mapping's own __contains__/get catch only KeyError; an absent id is not an error here.
    def __contains__(self, agent_id: object) -> bool:
        try:
            return agent_id in self.agent_id_to_index
        except TypeError:
            return False

    def get(self, agent_id: AgentId, default: Any = None) -> Any:
        """The step of ``agent_id``, or ``default`` when it is not in the batch."""
        return self[agent_id] if agent_id in self else default

    def __iter__(self) -> Iterator[AgentId]:
        yield from self._id_list()


class DecisionSteps(_StepsBase):
    """The batch of agents of one behaviour that request a decision.

    Attributes:
        obs: one array per observation spec, each of shape (n_agents, *spec.shape).
        reward: (n_agents,) float32, the reward since the agent's previous decision.
        agent_id: (n_agents,) int32.
        action_mask: one (n_agents, branch_size) bool array per discrete branch, or None;
            True means the action is NOT available.
        group_id: (n_agents,) int32, 0 when the agent is in no group.
        group_reward: (n_agents,) float32.
    """

    def __init__(
        self,
        obs: list[np.ndarray],
        reward: np.ndarray,
        agent_id: np.ndarray,
        action_mask: list[np.ndarray] | None,
        group_id: np.ndarray,
        group_reward: np.ndarray,
    ) -> None:
        self.obs = obs
        self.reward = reward
        self.agent_id = agent_id
        self.action_mask = action_mask
        self.group_id = group_id
        self.group_reward = group_reward
        self._agent_id_to_index = None

    def __getitem__(self, agent_id: AgentId) -> DecisionStep:
        i = self._index_of(agent_id)
        mask = None if self.action_mask is None else [m[i] for m in self.action_mask]
        return DecisionStep(
            obs=[o[i] for o in self.obs],
            reward=self.reward[i],
            agent_id=agent_id,
            action_mask=mask,
            group_id=self.group_id[i],
            group_reward=self.group_reward[i],
        )

    @staticmethod
    def empty(spec: BehaviorSpec) -> DecisionSteps:
        """An empty batch with the observation shapes of ``spec``."""
        return DecisionSteps(
            obs=[np.zeros((0, *s.shape), dtype=np.float32) for s in spec.observation_specs],
            reward=np.zeros(0, dtype=np.float32),
            agent_id=np.zeros(0, dtype=np.int32),
            action_mask=None,
            group_id=np.zeros(0, dtype=np.int32),
            group_reward=np.zeros(0, dtype=np.float32),
        )


class TerminalSteps(_StepsBase):
    """The batch of agents of one behaviour whose episode ended since the last step.

    Attributes are those of :class:`DecisionSteps` without ``action_mask``, plus
    ``interrupted``: (n_agents,) bool, True when the episode was cut short (truncated).
    """

    def __init__(
        self,
        obs: list[np.ndarray],
        reward: np.ndarray,
        interrupted: np.ndarray,
        agent_id: np.ndarray,
        group_id: np.ndarray,
        group_reward: np.ndarray,
    ) -> None:
        self.obs = obs
        self.reward = reward
        self.interrupted = interrupted
        self.agent_id = agent_id
        self.group_id = group_id
        self.group_reward = group_reward
        self._agent_id_to_index = None

    def __getitem__(self, agent_id: AgentId) -> TerminalStep:
        i = self._index_of(agent_id)
        return TerminalStep(
            obs=[o[i] for o in self.obs],
            reward=self.reward[i],
            interrupted=self.interrupted[i],
            agent_id=agent_id,
            group_id=self.group_id[i],
            group_reward=self.group_reward[i],
        )

    @staticmethod
    def empty(spec: BehaviorSpec) -> TerminalSteps:
        """An empty batch with the observation shapes of ``spec``."""
        return TerminalSteps(
            obs=[np.zeros((0, *s.shape), dtype=np.float32) for s in spec.observation_specs],
            reward=np.zeros(0, dtype=np.float32),
            interrupted=np.zeros(0, dtype=bool),
            agent_id=np.zeros(0, dtype=np.int32),
            group_id=np.zeros(0, dtype=np.int32),
            group_reward=np.zeros(0, dtype=np.float32),
        )


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
    """A batched environment with one or more behaviours, each with many agents.

    The loop is: ``reset()``; then repeatedly ``get_steps(name)`` for each behaviour,
    ``set_actions(name, actions)`` with one row per agent in the DecisionSteps, ``step()``.
    """

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
