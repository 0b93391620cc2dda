"""zooport.envs: the batched BaseEnv API, side channels, registry, authoring base, built-ins.

Modules:
    base_env: ``ActionTuple``, ``ActionSpec``, ``BehaviorSpec``, ``DecisionSteps``, ``BaseEnv``...
    side_channel: ML-Agents' side channels, byte-compatible.
    exception: ML-Agents' exception names (``UnityException``, ``UnityActionException``...);
        zooport's errors are caught under them.
    batched_env: ``BatchedEnv``, the base class for writing a vectorised env.
    registry: ``default_registry`` (offline), with registry_entries (the entry classes) and
        registry_manifest (registry files).
    declaration: ``EnvDeclaration``, what zooport registers for a built-in (on its class).
    signatures: what a callable's signature says it takes (keyword options, positionals).
    checker: ``check_base_env``, a conformance checker for any BaseEnv.
    builtin: ``Basic``, ``BallBalance``, ``GridWorld``, ``Tag``, ``Collector``, ``Soccer``.

Importing it loads neither gymnasium nor pettingzoo (nor any adapter).
"""

from __future__ import annotations

from zooport.envs.base_env import (
    ActionSpec,
    ActionTuple,
    AgentId,
    BaseEnv,
    BehaviorMapping,
    BehaviorName,
    BehaviorSpec,
    DecisionStep,
    DecisionSteps,
    DimensionProperty,
    GroupId,
    ObservationSpec,
    ObservationType,
    TerminalStep,
    TerminalSteps,
)
from zooport.envs.batched_env import BatchedEnv, StepResult
from zooport.envs.checker import CheckReport, ConformanceError, check_base_env
from zooport.envs.registry import (
    BaseRegistryEntry,
    LocalRegistryEntry,
    RemoteRegistryEntry,
    ZooportEnvRegistry,
    default_registry,
)

__all__ = [
    "ActionSpec",
    "ActionTuple",
    "AgentId",
    "BaseEnv",
    "BatchedEnv",
    "BaseRegistryEntry",
    "CheckReport",
    "ConformanceError",
    "LocalRegistryEntry",
    "RemoteRegistryEntry",
    "ZooportEnvRegistry",
    "check_base_env",
    "default_registry",
    "BehaviorMapping",
    "BehaviorName",
    "BehaviorSpec",
    "DecisionStep",
    "DecisionSteps",
    "DimensionProperty",
    "GroupId",
    "ObservationSpec",
    "ObservationType",
    "StepResult",
    "TerminalStep",
    "TerminalSteps",
]
