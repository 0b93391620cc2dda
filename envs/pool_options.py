"""What a :class:`~zooport.envs.core_pool.CorePool` may be given: its options, the ``pool_options``
of ``make``, ``make_vec`` and the CLI, and core factories a worker loads by reference."""

from __future__ import annotations

import importlib
import multiprocessing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from zooport.envs.arguments import check_bool, check_float, check_int
from zooport.envs.base_env import BaseEnv, BaseEnvLike
from zooport.errors import ArgumentError, ArgumentTypeError

__all__ = ["MODES", "START_METHODS", "POOL_OPTIONS", "MAX_SPIN", "check_factories",
           "check_pool_options", "check_options", "registry_core", "unity_instance"]  # fmt: skip

MODES = ("sync", "async")
#: Those that start a fresh interpreter (``"fork"`` would copy the parent's threads and locks).
START_METHODS = ("spawn", "forkserver")
#: The ``CorePool`` keywords a ``pool_options={...}`` may hold (``make``, ``make_vec``, the CLI).
POOL_OPTIONS = (
    "mode", "min_ready", "local_core", "core_side_channels", "timeout", "start_method", "spin",
    "side_channel_bytes",
)  # fmt: skip
MAX_SPIN = 1.0  # seconds: beyond it a waiting process would hold a CPU for nothing


def check_options(
    k: int, mode: Any, min_ready: Any, local_core: Any, timeout: Any, start_method: Any,
    spin: Any, side_channel_bytes: Any,
) -> tuple[str, int, bool, float | None, float, int]:  # fmt: skip
    for name, value, valid in (("mode", mode, MODES), ("start_method", start_method,
                                                         START_METHODS)):  # fmt: skip
        if value not in valid:
            raise ArgumentError(f"Expect {name} to be one of {list(valid)}, actually: {value!r}")
    if start_method not in multiprocessing.get_all_start_methods():
        raise ArgumentError(f"start_method {start_method!r} is not available on this platform")
    sync, seconds = mode == "sync", "a number of seconds"
    if min_ready is not None and check_int(min_ready, "min_ready", 1, maximum=k) != k and sync:
        raise ArgumentError(
            f"Expect min_ready to be None or {k} (every core) in sync mode, actually: "
            f"{min_ready}; pass mode='async' to return before every core has answered"
        )
    return (
        mode, int(min_ready or (k if sync else 1)),
        sync if local_core is None else check_bool(local_core, "local_core"),
        None if timeout is None else check_float(timeout, "timeout", above=0, kind=seconds),
        check_float(spin, "spin", above=0, below=MAX_SPIN, at_least=True, kind=seconds),
        check_int(side_channel_bytes, "side_channel_bytes", 0),
    )  # fmt: skip


def check_factories(core_fns: Any) -> list[Callable[..., Any]]:
    if isinstance(core_fns, (str, bytes)) or not isinstance(core_fns, Sequence):
        raise ArgumentTypeError(
            f"Expect core_fns to be a sequence of core factories, actually: "
            f"{type(core_fns).__name__}"
        )
    if not core_fns:
        raise ArgumentError("Expect core_fns to hold at least one core factory, actually: []")
    for i, factory in enumerate(core_fns):
        if isinstance(factory, BaseEnv) or not callable(factory):
            raise ArgumentTypeError(
                f"Expect core_fns[{i}] to be a callable that builds a core (a class, a "
                f"function, functools.partial), actually: {type(factory).__name__}"
            )
    return list(core_fns)


def check_pool_options(pool_options: Any, workers: Any) -> dict[str, Any]:
    """``pool_options`` as CorePool keywords: a mapping of :data:`POOL_OPTIONS`, with workers."""
    if pool_options is not None and not isinstance(pool_options, Mapping):
        raise ArgumentTypeError(
            f"Expect pool_options to be a mapping of CorePool arguments {list(POOL_OPTIONS)}, "
            f"actually: {type(pool_options).__name__} {pool_options!r}"
        )
    options = dict(pool_options or {})
    if unknown := [key for key in options if key not in POOL_OPTIONS]:
        raise ArgumentTypeError(
            f"Expect pool_options keys among {list(POOL_OPTIONS)}, actually: {unknown}"
        )
    if workers is None and options:
        raise ArgumentError(
            f"pool_options={options!r} are CorePool arguments, and no pool is built without "
            "workers=K: pass workers too, or leave pool_options out"
        )
    return options


def registry_core(env_id: str, **kwargs: Any) -> BaseEnv:
    """``default_registry[env_id].make(**kwargs)``: a factory with ``functools.partial``."""
    from zooport.envs.registry import default_registry

    return default_registry.make(env_id, **kwargs)


def unity_instance(
    environment_class: str | type, kwargs: Mapping[str, Any], side_channels: Any = None
) -> BaseEnvLike:
    """``environment_class(**kwargs, side_channels=...)``; a ``"module:attr"`` class is imported
    here, in the worker, so the pool's process need not import mlagents_envs."""
    if isinstance(environment_class, str):
        module, _, attr = environment_class.partition(":")
        environment_class = getattr(importlib.import_module(module), attr)
    extra = {} if side_channels is None else {"side_channels": side_channels}
    return environment_class(**kwargs, **extra)  # type: ignore[operator]  # a class or a "module:attr" one
