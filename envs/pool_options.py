"""The arguments of a :class:`~zooport.envs.core_pool.CorePool` and of ``pool_options``,
checked once, each with an error that names it and its valid values."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from zooport.envs.arguments import check_bool, check_float, check_int
from zooport.envs.base_env import BaseEnv
from zooport.errors import ArgumentError, ArgumentTypeError

__all__ = ["MODES", "START_METHODS", "POOL_OPTIONS", "PoolOptions", "check_factories",
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


class PoolOptions(NamedTuple):
    """A pool's arguments, checked; see :class:`~zooport.envs.core_pool.CorePool` for each."""

    mode: str
    min_ready: int
    local_core: bool
    timeout: float | None
    start_method: str
    spin: float
    side_channel_bytes: int

    @classmethod
    def checked(cls, k: int, **given: Any) -> PoolOptions:
        """The options of a pool of ``k`` cores, defaults filled in.

        Example:
            >>> options = PoolOptions.checked(
            ...     2, mode="async", min_ready=None, local_core=None, timeout=60,
            ...     start_method="spawn", spin=0.001, side_channel_bytes=65536)
            >>> options.min_ready, options.local_core
            (1, False)
        """
        mode, method, timeout = given["mode"], given["start_method"], given["timeout"]
        for name, value, valid in (("mode", mode, MODES), ("start_method", method, START_METHODS)):
            if value not in valid:
                raise ArgumentError(
                    f"Expect {name} to be one of {list(valid)}, actually: {value!r}"
                )
        if method not in multiprocessing.get_all_start_methods():
            raise ArgumentError(f"start_method {method!r} is not available on this platform")
        local = given["local_core"]
        seconds = "a number of seconds"
        return cls(
            mode,
            _min_ready(given["min_ready"], mode, k),
            mode == "sync" if local is None else check_bool(local, "local_core"),
            None if timeout is None else check_float(timeout, "timeout", above=0, kind=seconds),
            method,
            check_float(
                given["spin"], "spin", above=0, below=MAX_SPIN, at_least=True, kind=seconds
            ),
            check_int(given["side_channel_bytes"], "side_channel_bytes", 0),
        )


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
    """``pool_options`` as CorePool keywords: a mapping of :data:`POOL_OPTIONS`, with ``workers``.

    Example:
        >>> check_pool_options({"nope": 1}, 2)
        Traceback (most recent call last):
        ...
        zooport.errors.ArgumentTypeError: Expect pool_options keys among ['mode', ...
    """
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


def _min_ready(min_ready: Any, mode: str, k: int) -> int:
    if min_ready is None:
        return k if mode == "sync" else 1
    value = check_int(min_ready, "min_ready", 1, maximum=k)
    if mode == "sync" and value != k:
        raise ArgumentError(
            f"Expect min_ready to be None or {k} (every core) in sync mode, actually: {value}; "
            "pass mode='async' to return before every core has answered"
        )
    return value
