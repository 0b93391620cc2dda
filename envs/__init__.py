"""zooport.envs: the batched BaseEnv API, side channels, registry, authoring base, built-ins.

Modules:
    base_env: ``ActionTuple``, ``ActionSpec``, ``BehaviorSpec``, ``DecisionSteps``, ``BaseEnv``...
        (every name of ML-Agents' ``base_env``; the classes live in ``actions``, ``specs``
        and ``steps``, by concern).
    capabilities: what a factory or core supports (keywords, seeding), asked in one place.
    side_channel: ML-Agents' side channels, byte-compatible.
    exception: ML-Agents' exception names (``UnityException``, ``UnityActionException``...);
        zooport's errors are caught under them.
    batched_env: ``BatchedEnv``, the base class for writing a vectorised env.
    registry: ``default_registry`` (offline) and registry files; registry_entries: the entries.
    declaration: ``EnvDeclaration``, what zooport registers for a built-in (on its class).
    capabilities: what a factory or a core supports (keywords, seeding, masks), in one place.
    checker: ``check_base_env``, a conformance checker for any BaseEnv (its report in
        ``checker_report``, its run in ``checker_run``).
    builtin: ``Basic``, ``BallBalance``, ``GridWorld``, ``Tag``, ``Collector``, ``Soccer``.
    core_pool: ``CorePool``, many cores in worker processes as one BaseEnv (imported on
        first use of the name: it loads multiprocessing).

Importing it loads neither gymnasium nor pettingzoo (nor any adapter).
"""

from __future__ import annotations

from typing import Any

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
    "CorePool",
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


def __getattr__(name: str) -> Any:
    if name == "CorePool":
        from zooport.envs.core_pool import CorePool

        return CorePool
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
