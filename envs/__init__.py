"""zooport.envs: the batched BaseEnv API (ML-Agents' names and semantics), the ``BatchedEnv``
authoring base, side channels, the registry, the built-ins, the checker and ``CorePool``.
Importing it loads the API only (no gymnasium, pettingzoo or adapter); the other public names
below load on first use, as Gymnasium's ``gymnasium.wrappers`` does."""

from __future__ import annotations

from typing import TYPE_CHECKING

from zooport._lazy import lazy_attributes
from zooport.envs import base_env
from zooport.envs.base_env import *  # noqa: F403  (the API, in base_env.__all__)

if TYPE_CHECKING:  # what type checkers read; at run time the table below loads them
    from zooport.envs.batched_env import BatchedEnv as BatchedEnv, StepResult as StepResult
    from zooport.envs.checker import (
        CheckReport as CheckReport,
        ConformanceError as ConformanceError,
        check_base_env as check_base_env,
    )
    from zooport.envs.core_pool import CorePool as CorePool
    from zooport.envs.registry import (
        BaseRegistryEntry as BaseRegistryEntry,
        LocalRegistryEntry as LocalRegistryEntry,
        RemoteRegistryEntry as RemoteRegistryEntry,
        ZooportEnvRegistry as ZooportEnvRegistry,
        default_registry as default_registry,
    )

#: The public names that load on first use, by the module that defines them.
_LAZY = {
    "BatchedEnv": "batched_env",  # with the side channels
    "StepResult": "batched_env",
    "CheckReport": "checker",
    "ConformanceError": "checker",
    "check_base_env": "checker",
    "CorePool": "core_pool",  # with multiprocessing
    "BaseRegistryEntry": "registry",
    "LocalRegistryEntry": "registry",
    "RemoteRegistryEntry": "registry",
    "ZooportEnvRegistry": "registry",
    "default_registry": "registry",
}
__all__ = [name for name in base_env.__all__ if name != "BaseEnvLike"] + list(_LAZY)
__getattr__, __dir__ = lazy_attributes(
    __name__, {name: f"{__name__}.{module}" for name, module in _LAZY.items()}
)
