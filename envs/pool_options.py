"""What a :class:`~zooport.envs.core_pool.CorePool` may be given: its modes, start methods, core
factories and the ``pool_options`` of ``make``, ``make_vec`` and the CLI."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from zooport.envs.base_env import BaseEnv
from zooport.errors import ArgumentError, ArgumentTypeError

__all__ = ["MODES", "START_METHODS", "POOL_OPTIONS", "MAX_SPIN", "check_factories",
           "check_pool_options"]  # fmt: skip

#: The pool's modes.
MODES = ("sync", "async")
#: The start methods that start a fresh interpreter (``"fork"`` would copy the parent's threads
#: and locks into the workers), so factories must be picklable.
START_METHODS = ("spawn", "forkserver")
#: The ``CorePool`` keywords a ``pool_options={...}`` may hold (``make``, ``make_vec``, the CLI).
POOL_OPTIONS = (
    "mode", "min_ready", "local_core", "core_side_channels", "timeout", "start_method", "spin",
    "side_channel_bytes",
)  # fmt: skip
#: The longest spin, in seconds: beyond it a waiting process would hold a CPU for nothing.
MAX_SPIN = 1.0


def check_factories(core_fns: Any) -> list[Callable[..., Any]]:
    """``core_fns`` as a list: a non-empty sequence of callables (a core is not a factory)."""
    if isinstance(core_fns, (str, bytes)) or not isinstance(core_fns, Sequence):
        raise ArgumentTypeError(
            f"Expect core_fns to be a sequence of core factories, actually: "
            f"{type(core_fns).__name__}"
        )
    factories = list(core_fns)
    if not factories:
        raise ArgumentError("Expect core_fns to hold at least one core factory, actually: []")
    for i, factory in enumerate(factories):
        if isinstance(factory, BaseEnv) or not callable(factory):
            raise ArgumentTypeError(
                f"Expect core_fns[{i}] to be a callable that builds a core (a class, a "
                f"function, functools.partial), actually: {type(factory).__name__}"
            )
    return factories


def check_pool_options(pool_options: Any, workers: Any) -> dict[str, Any]:
    """``pool_options`` as CorePool keywords: a mapping of :data:`POOL_OPTIONS`, with workers."""
    if pool_options is None:
        return {}
    if not isinstance(pool_options, Mapping):
        raise ArgumentTypeError(
            f"Expect pool_options to be a mapping of CorePool arguments {list(POOL_OPTIONS)}, "
            f"actually: {type(pool_options).__name__} {pool_options!r}"
        )
    unknown = [key for key in pool_options if key not in POOL_OPTIONS]
    if unknown:
        raise ArgumentTypeError(
            f"Expect pool_options keys among {list(POOL_OPTIONS)}, actually: {unknown}"
        )
    if workers is None and pool_options:
        raise ArgumentError(
            f"pool_options={dict(pool_options)!r} are CorePool arguments, and no pool is built "
            "without workers=K: pass workers too, or leave pool_options out"
        )
    return dict(pool_options)
