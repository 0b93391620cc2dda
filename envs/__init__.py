"""zooport.envs: the batched BaseEnv API (ML-Agents' names and semantics), ``BatchedEnv``, side
channels, the registry, the built-ins, the checker and ``CorePool``; only the API loads at once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from zooport._lazy import lazy_attributes
from zooport.envs import base_env
from zooport.envs.base_env import *  # noqa: F403  (the API, in base_env.__all__)

# ruff: noqa: F401  (type checkers read the imports below; at run time _LAZY loads them)
if TYPE_CHECKING:
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

_LAZY = {
    "batched_env": ("BatchedEnv", "StepResult"),  # with the side channels
    "checker": ("CheckReport", "ConformanceError", "check_base_env"),
    "core_pool": ("CorePool",),  # with multiprocessing
    "registry": ("BaseRegistryEntry", "LocalRegistryEntry", "RemoteRegistryEntry",
                 "ZooportEnvRegistry", "default_registry"),
}  # fmt: skip
__all__ = [name for name in base_env.__all__ if name != "BaseEnvLike"]
__all__ += [name for names in _LAZY.values() for name in names]
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)
