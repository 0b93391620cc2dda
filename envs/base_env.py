"""The batched multi-agent environment API in ML-Agents' names and semantics: code written
against ``mlagents_envs.base_env`` works by changing the import to ``zooport.envs.base_env``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Protocol

from zooport.envs.actions import ActionSpec, ActionTuple
from zooport.envs.specs import (
    AgentId,
    BehaviorMapping,
    BehaviorName,
    BehaviorSpec,
    DimensionProperty,
    GroupId,
    ObservationSpec,
    ObservationType,
)
from zooport.envs.steps import DecisionStep, DecisionSteps, TerminalStep, TerminalSteps

__all__ = [
    "AgentId", "GroupId", "BehaviorName", "ActionTuple", "ActionSpec", "DimensionProperty",
    "ObservationType", "ObservationSpec", "BehaviorSpec", "DecisionStep", "DecisionSteps",
    "TerminalStep", "TerminalSteps", "BehaviorMapping", "BaseEnv", "BaseEnvLike",
]  # fmt: skip


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
