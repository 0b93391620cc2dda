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
    BaseEnvLike: the static type of "anything BaseEnv-like" an adapter accepts.

Code written against ``mlagents_envs.base_env`` works by changing the import to
``zooport.envs.base_env``. Where ML-Agents accepts bad input silently (a wrong batch size
or dtype, an out-of-range discrete action), zooport raises an :class:`~zooport.ActionError`
that names the behaviour, the expected and the given value.

Action masks follow ML-Agents' polarity: ``True`` means the action is NOT available.

The classes live in modules by concern (:mod:`~zooport.envs.actions`,
:mod:`~zooport.envs.specs`, :mod:`~zooport.envs.steps`); this module holds ``BaseEnv`` and
re-exports every name, so ML-Agents' one import path keeps working.
"""

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
    "BaseEnvLike",
]


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


class BaseEnvLike(Protocol):
    """What an adapter calls on a core: the members of :class:`BaseEnv`, as a structural type.

    A static type only: a :class:`BaseEnv` subclass, a
    :class:`~zooport.envs.core_pool.CorePool`, ML-Agents' ``UnityEnvironment`` or an older
    ML-Agents generation's environment all fit without subclassing anything, and nothing
    checks ``isinstance`` against it at run time (what a core offers beyond these members -
    seeding, masks, rendering - is probed where it is used, see
    :mod:`~zooport.envs.capabilities`).

    Example:
        >>> from zooport.envs.builtin.tag import Tag
        >>> core: BaseEnvLike = Tag(seed=0)
        >>> sorted(core.behavior_specs)
        ['Runner?team=0', 'Tagger?team=1']
    """

    @property
    def behavior_specs(self) -> Mapping[BehaviorName, BehaviorSpec]:
        """The behaviours of the environment, by name."""
        ...

    def reset(self) -> None:
        """Starts a new episode for every agent."""
        ...

    def step(self) -> None:
        """Advances the simulation with the actions set since the last step."""
        ...

    def get_steps(self, behavior_name: BehaviorName) -> tuple[DecisionSteps, TerminalSteps]:
        """The agents that request a decision and those whose episode ended."""
        ...

    def set_actions(self, behavior_name: BehaviorName, action: ActionTuple) -> None:
        """Sets the actions of every agent in the behaviour's last DecisionSteps."""
        ...

    def set_action_for_agent(
        self, behavior_name: BehaviorName, agent_id: AgentId, action: ActionTuple
    ) -> None:
        """Sets the action of one agent; ``action`` holds a batch of one."""
        ...

    def close(self) -> None:
        """Releases the simulation's resources."""
        ...
