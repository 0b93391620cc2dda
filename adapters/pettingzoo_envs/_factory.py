"""Builds the PettingZoo entry points of a built-in core: kwargs split between core and adapter.

Functions:
    entry_points: the ``env``, ``parallel_env`` and ``raw_env`` functions of one module.

Constants:
    ADAPTER_OPTIONS: the keyword arguments that configure the adapter; every other one goes
        to the core, which must take it (``registration.build_core`` says which it takes).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zooport.adapters.options import PettingZooOptions
from zooport.adapters.pettingzoo_aec import PettingZooAECEnv
from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.adapters.registration import build_core

__all__ = ["ADAPTER_OPTIONS", "EntryPoint", "entry_points"]

#: Keyword arguments that configure the adapter; every other one goes to the core.
ADAPTER_OPTIONS = frozenset(PettingZooOptions.names())


EntryPoint = Callable[..., Any]


def entry_points(module: str, env_id: str, name: str) -> tuple[EntryPoint, EntryPoint, EntryPoint]:
    """``(env, parallel_env, raw_env)`` for the registry entry ``env_id``, defined in ``module``.

    Each function makes a new core from the non-adapter keyword arguments (an unknown one
    is a ``TypeError`` listing the valid ones) and wraps it; ``raw_env`` is ``env``, since the
    native AEC adapter needs no PettingZoo wrappers.

    Example:
        >>> env, parallel_env, raw_env = entry_points("demo", "Basic", "basic_v0")
        >>> parallel_env(seed=0, max_cycles=3).max_cycles
        3
        >>> parallel_env(colour=1)
        Traceback (most recent call last):
        ...
        zooport.errors.ArgumentTypeError: registry entry 'Basic': unknown keyword arguments ...
    """

    def _build(kind: type, kwargs: dict[str, Any]) -> Any:
        core, options = build_core(env_id=env_id, options=kwargs, adapter_options=ADAPTER_OPTIONS)
        options.setdefault("name", name)
        return kind(core, **options)

    def env(**kwargs: Any) -> PettingZooAECEnv:
        return _build(PettingZooAECEnv, kwargs)

    def parallel_env(**kwargs: Any) -> PettingZooParallelEnv:
        return _build(PettingZooParallelEnv, kwargs)

    env.__doc__ = f"A new {env_id} as a PettingZoo AEC environment (kwargs: module docstring)."
    parallel_env.__doc__ = (
        f"A new {env_id} as a PettingZoo Parallel environment (kwargs: module docstring)."
    )
    # Named as module attributes, so pickle finds them by reference.
    for function in (env, parallel_env):
        function.__module__ = module
        function.__qualname__ = function.__name__
    return env, parallel_env, env
