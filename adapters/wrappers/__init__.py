"""Wrappers for any PettingZoo Parallel env (zooport's or not), and ``apply_wrappers``, which
``zooport.make(id, api=..., wrappers=[...])`` uses (first = innermost); see the wrappers guide."""

from __future__ import annotations

from zooport.adapters.wrappers.action import (
    ActionGrid,
    DiscretizeActions,
    GymDiscretizeActions,
    VectorDiscretizeActions,
)
from zooport.adapters.wrappers.base import AgentSelector, ParallelWrapper, Teams
from zooport.adapters.wrappers.communication import (
    ExtraCommunicationDelays,
    Message,
    MessageBus,
    MessageChannel,
    MessageFilter,
    NoCommunication,
    RandomMessageDropout,
    RestrictedCommunicationRange,
    send_messages,
)
from zooport.adapters.wrappers.composition import (
    WrapperOrderError,
    WrapperSpec,
    apply_wrappers,
    get_wrapper,
    has_wrapper,
)
from zooport.adapters.wrappers.observation import (
    CentralisedObservation,
    EntitySlots,
    GymRescaleObservations,
    RescaleObservations,
    SharedVisibility,
    VectorRescaleObservations,
)
from zooport.adapters.wrappers.reward import (
    IndividualDone,
    RewardShaping,
    StepData,
    TeamReward,
    TerminationPolicy,
)
from zooport.adapters.wrappers.team import FoldAgents, RandomPolicy, SingleAgentView

__all__ = [
    "ParallelWrapper",
    "WrapperSpec",
    "WrapperOrderError",
    "apply_wrappers",
    "has_wrapper",
    "get_wrapper",
    "AgentSelector",
    "Teams",
    "FoldAgents",
    "SingleAgentView",
    "RandomPolicy",
    "RewardShaping",
    "StepData",
    "TeamReward",
    "ActionGrid",
    "DiscretizeActions",
    "GymDiscretizeActions",
    "VectorDiscretizeActions",
    "RescaleObservations",
    "GymRescaleObservations",
    "VectorRescaleObservations",
    "CentralisedObservation",
    "EntitySlots",
    "SharedVisibility",
    "TerminationPolicy",
    "IndividualDone",
    "Message",
    "MessageBus",
    "MessageChannel",
    "MessageFilter",
    "RandomMessageDropout",
    "RestrictedCommunicationRange",
    "NoCommunication",
    "ExtraCommunicationDelays",
    "send_messages",
]
