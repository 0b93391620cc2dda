"""Core factories a :class:`~zooport.envs.core_pool.CorePool` worker can load by reference (a
worker is a fresh interpreter): registry environments and Unity build instances.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping, Sequence
from typing import Any

from zooport.envs.base_env import BaseEnv, BaseEnvLike

__all__ = ["registry_core", "unity_instance", "unity_factories", "UNITY_BUILD_OPTIONS"]

#: The class :func:`unity_instance` builds by default (imported in the worker).
UNITY_ENVIRONMENT = "mlagents_envs.environment:UnityEnvironment"


def registry_core(env_id: str, **kwargs: Any) -> BaseEnv:
    """``default_registry[env_id].make(**kwargs)``: a factory with ``functools.partial``.

    Example:
        >>> core = registry_core("Basic", n_agents=2)
        >>> type(core).__name__, core.n_agents
        ('Basic', 2)
    """
    from zooport.envs.registry import default_registry

    return default_registry.make(env_id, **kwargs)


def unity_instance(
    environment_class: str | type, kwargs: Mapping[str, Any], side_channels: Any = None
) -> BaseEnvLike:
    """``environment_class(**kwargs, side_channels=...)``; a ``"module:attr"`` class is
    imported here, in the worker, so the pool's process need not import mlagents_envs."""
    if isinstance(environment_class, str):
        module, _, attr = environment_class.partition(":")
        make = getattr(importlib.import_module(module), attr)
    else:
        make = environment_class
    options = dict(kwargs)
    if side_channels is not None:
        options["side_channels"] = side_channels
    return make(**options)


def unity_factories(
    file_name: str | None,
    instances: int,
    *,
    worker_id: int = 0,
    base_port: int | None = None,
    seed: int = 0,
    no_graphics: bool = True,
    timeout_wait: int = 60,
    additional_args: Sequence[str] | None = None,
    log_folder: str | None = None,
    environment_class: str | type = UNITY_ENVIRONMENT,
) -> list[functools.partial[BaseEnvLike]]:
    """One factory per instance of a build: instance ``i`` gets ``worker_id + i`` (its port
    is ``base_port + worker_id + i``) and Unity's random seed ``seed + i``.

    Example:
        >>> factories = unity_factories("builds/3DBall", 2, worker_id=4)
        >>> [f.args[1]["worker_id"] for f in factories], [f.args[1]["seed"] for f in factories]
        ([4, 5], [0, 1])
    """
    from zooport.envs.arguments import check_int

    instances = check_int(instances, "instances", 1, where="CorePool.unity")
    worker_id = check_int(worker_id, "worker_id", 0, where="CorePool.unity")
    seed = check_int(seed, "seed", 0, where="CorePool.unity")
    base = {
        "file_name": file_name, "base_port": base_port, "no_graphics": no_graphics,
        "timeout_wait": timeout_wait, "log_folder": log_folder,
        "additional_args": None if additional_args is None else list(additional_args),
    }  # fmt: skip
    return [
        functools.partial(
            unity_instance,
            environment_class,
            {**base, "worker_id": worker_id + i, "seed": seed + i},
        )
        for i in range(instances)
    ]


#: The keywords of :func:`unity_factories` (what :meth:`CorePool.unity` passes to it).
UNITY_BUILD_OPTIONS = ("worker_id", "base_port", "seed", "no_graphics", "timeout_wait",
                       "additional_args", "log_folder", "environment_class")  # fmt: skip
