"""The batches of agents a behaviour hands out after each step."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, TypeVar

import numpy as np

from zooport.errors import ObservationError, UnknownAgentError, look_up

if TYPE_CHECKING:
    from typing_extensions import Self

    from zooport.envs.base_env import AgentId, BehaviorSpec

__all__ = [
    "DecisionStep", "DecisionSteps", "TerminalStep", "TerminalSteps", "check_agent_ids",
    "decision_row",
]  # fmt: skip


def check_agent_ids(behavior: str, decision: Any, terminal: Any) -> None:
    """Refuses agent ids that are not integers or repeat within a batch (ML-Agents passes
    both through: a repeated id would merge two agents' rewards, a float id be truncated)."""
    for kind, steps in (("DecisionSteps", decision), ("TerminalSteps", terminal)):
        ids = np.asarray(getattr(steps, "agent_id", steps))
        if ids.size == 0:
            continue
        if ids.dtype.kind not in "iu":
            raise ObservationError(
                f"behaviour {behavior!r}: expected integer agent ids in {kind}, "
                f"got dtype {ids.dtype} ({ids.ravel()[:8].tolist()})"
            )
        ordered = np.sort(ids, axis=None)
        repeated = ordered[1:][ordered[1:] == ordered[:-1]]
        if repeated.size:
            raise ObservationError(
                f"behaviour {behavior!r}: agent ids repeat in {kind}: "
                f"{np.unique(repeated).tolist()}"
            )


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


Step = TypeVar("Step", bound="DecisionStep | TerminalStep")


class _StepsBase(Mapping[int, Step]):  # int: AgentId
    """Indexing by agent id, whether the fields are arrays or lists (as in ML-Agents' tests)."""

    obs: list[np.ndarray]
    agent_id: np.ndarray
    _step: ClassVar[type[Any]]  # one agent's row: Step
    _agent_id_to_index: dict[AgentId, int] | None = None  # built on first use

    def _id_list(self) -> list[AgentId]:
        return np.asarray(self.agent_id).tolist()

    @property
    def agent_id_to_index(self) -> dict[AgentId, int]:
        """A dict from agent id to its row in the batch (built once, on first use)."""
        if self._agent_id_to_index is None:
            ids = self._id_list()
            self._agent_id_to_index = dict(zip(ids, range(len(ids)), strict=True))
        return self._agent_id_to_index

    def __getitem__(self, agent_id: AgentId) -> Step:
        i = look_up(self.agent_id_to_index, agent_id, UnknownAgentError, lambda: (
            f"agent_id {agent_id!r} is not present in the {type(self).__name__}; "
            f"present: {self._id_list()}"
        ))  # fmt: skip
        row: list[Any] = []
        for field in self._step._fields:
            column = getattr(self, field)
            if field == "agent_id":
                row.append(agent_id)
            elif field in ("obs", "action_mask"):  # one array per spec or branch; no mask: None
                row.append(None if column is None else [c[i] for c in column])
            else:
                row.append(column[i])
        return self._step(*row)

    def __len__(self) -> int:
        return len(self.agent_id)

    def __contains__(self, agent_id: object) -> bool:  # without building a step
        try:
            return agent_id in self.agent_id_to_index
        except TypeError:  # an unhashable id is simply not there
            return False

    def __iter__(self) -> Iterator[AgentId]:
        yield from self._id_list()

    @classmethod
    def empty(cls, spec: BehaviorSpec) -> Self:
        """An empty batch with the observation shapes of ``spec``."""
        columns = {f: None if t is None else np.zeros(0, t) for f, t in COLUMN_DTYPES.items()}
        obs = [np.zeros((0, *o.shape), dtype=np.float32) for o in spec.observation_specs]
        return cls(obs=obs, **{f: columns[f] for f in cls._step._fields[1:]})  # type: ignore[call-arg]


#: Each per-agent column's dtype (None: action_mask, a list of arrays or None).
COLUMN_DTYPES = {
    "reward": np.float32, "agent_id": np.int32, "action_mask": None, "interrupted": bool,
    "group_id": np.int32, "group_reward": np.float32,
}  # fmt: skip


@dataclasses.dataclass(repr=False, eq=False)
class DecisionSteps(_StepsBase[DecisionStep]):
    """The agents of one behaviour that request a decision: ``obs`` holds one (n_agents, *shape)
    array per observation spec, ``action_mask`` one (n_agents, branch_size) bool array per
    branch (True = NOT available); ``group_id`` 0 is no group."""

    _step = DecisionStep
    obs: list[np.ndarray]
    reward: np.ndarray
    agent_id: np.ndarray
    action_mask: list[np.ndarray] | None
    group_id: np.ndarray
    group_reward: np.ndarray


@dataclasses.dataclass(repr=False, eq=False)
class TerminalSteps(_StepsBase[TerminalStep]):
    """The batch of agents whose episode ended: :class:`DecisionSteps`' fields without
    ``action_mask``, plus ``interrupted`` (bool, True when truncated)."""

    _step = TerminalStep
    obs: list[np.ndarray]
    reward: np.ndarray
    interrupted: np.ndarray
    agent_id: np.ndarray
    group_id: np.ndarray
    group_reward: np.ndarray


def decision_row(behavior: str, decision: DecisionSteps, agent_id: Any) -> int:
    """The row of ``agent_id`` in ``decision``; an agent not in it is an UnknownAgentError."""
    return look_up(decision.agent_id_to_index, agent_id, UnknownAgentError, lambda: (
        f"behavior {behavior!r}: agent {agent_id!r} did not request a decision at the last "
        f"step; agents that did: {decision.agent_id.tolist()}"
    ))  # fmt: skip
