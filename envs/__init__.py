"""zooport.envs: the batched BaseEnv API (ML-Agents' names and semantics), the ``BatchedEnv``
authoring base, side channels, the registry, the built-ins, the checker and ``CorePool``.
Importing it loads the API only (no gymnasium, pettingzoo or adapter); the other public names
below load on first use, as Gymnasium's ``gymnasium.wrappers`` does."""

from __future__ import annotations

from typing import TYPE_CHECKING

from zooport._lazy import lazy_attributes
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

if TYPE_CHECKING:  # what type checkers read; at run time the table below loads them
    from zooport.envs.batched_env import BatchedEnv, StepResult
    from zooport.envs.checker import CheckReport, ConformanceError, check_base_env
    from zooport.envs.core_pool import CorePool
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

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        name: f"{__name__}.{module}"
        for module, names in {
            "batched_env": ("BatchedEnv", "StepResult"),  # with the side channels
            "checker": ("CheckReport", "ConformanceError", "check_base_env"),
            "core_pool": ("CorePool",),  # with multiprocessing
            "registry": (
                "BaseRegistryEntry",
                "LocalRegistryEntry",
                "RemoteRegistryEntry",
                "ZooportEnvRegistry",
                "default_registry",
            ),
        }.items()
        for name in names
    },
)
