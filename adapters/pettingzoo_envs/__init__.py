"""The built-ins' PettingZoo environment modules (``tag_v0``, ...), as PettingZoo's own are."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zooport.adapters.registration import make_adapter, register_pettingzoo_envs

__all__ = ["ENV_MODULES", "entry_points", "register_pettingzoo_envs"]

#: The modules, in registry order (each built-in's declaration names its own).
ENV_MODULES = ("ball_balance_v0", "grid_world_v0", "tag_v0", "collector_v0", "soccer_v0")


def entry_points(registry_id: str, module: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """PettingZoo's ``env`` and ``parallel_env`` for the module named ``module``: keywords go
    to the adapter or to the registry's ``registry_id`` core by name."""
    name = module.rpartition(".")[2]

    def env(**kwargs: Any) -> Any:
        return make_adapter(registry_id, "aec", {"name": name, **kwargs})

    def parallel_env(**kwargs: Any) -> Any:
        return make_adapter(registry_id, "parallel", {"name": name, **kwargs})

    for function, api in ((env, "AEC"), (parallel_env, "Parallel")):
        # The module's own functions: pickled by reference, as a module file's are.
        function.__module__ = module
        function.__qualname__ = function.__name__
        function.__doc__ = f"A new {registry_id} as a PettingZoo {api} environment."
    return env, parallel_env


# After entry_points, which each module calls.
from zooport.adapters.pettingzoo_envs import (  # noqa: E402
    ball_balance_v0 as ball_balance_v0,
    collector_v0 as collector_v0,
    grid_world_v0 as grid_world_v0,
    soccer_v0 as soccer_v0,
    tag_v0 as tag_v0,
)
