"""Building a core (or a :class:`~zooport.envs.CorePool` of cores) from a registry identifier
or a factory, with the keyword arguments meant for the adapter split off by name; every entry
point of :mod:`zooport.adapters.registration` builds its core here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from zooport.errors import ArgumentTypeError

__all__ = [
    "build_core",
    "build_pool",
    "split_options",
    "check_workers",
    "resolve_factory",
    "describe_factory",
]


def build_core(
    *,
    env_id: str | None = None,
    factory: str | Callable[..., Any] | None = None,
    options: Mapping[str, Any],
    adapter_options: Collection[str],
) -> tuple[Any, dict[str, Any]]:
    """Makes a core and returns it with the options meant for the adapter.

    Options named in ``adapter_options`` go to the adapter, every other one to the core,
    which must declare it as a parameter (unless it takes ``**kwargs``). ``env_id`` (a
    registry identifier) and ``factory`` (a callable or ``"module:attr"``) are exclusive.

    Example:
        >>> core, adapter = build_core(env_id="Basic",
        ...                            options={"n_agents": 2, "render_mode": "rgb_array"},
        ...                            adapter_options=("render_mode",))
        >>> core.n_agents, adapter
        (2, {'render_mode': 'rgb_array'})
    """
    if (env_id is None) == (factory is None):
        raise ArgumentTypeError(
            "Expected exactly one of env_id= (a registry identifier) and factory=, actually: "
            f"env_id={env_id!r}, factory={factory!r}"
        )
    make, target = resolve_factory(env_id, factory)
    where = f"registry entry {env_id!r}" if env_id is not None else describe_factory(factory)
    core_kwargs, adapter_kwargs = split_options(target, options, adapter_options, where)
    return make(**core_kwargs), adapter_kwargs


def build_pool(
    *,
    env_id: str | None = None,
    factory: str | Callable[..., Any] | None = None,
    options: Mapping[str, Any],
    adapter_options: Collection[str],
    workers: int,
    core_options: Sequence[Mapping[str, Any]] | None = None,
    pool_options: Mapping[str, Any] | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Like :func:`build_core`, but ``workers`` cores in a :class:`~zooport.envs.CorePool`.

    Core ``i`` gets the core options updated by ``core_options[i]``, and ``seed + i`` when a
    ``seed`` is given (the pool's own rule for ``reset(seed=...)``); ``side_channels`` go to
    the pool, which relays them to every core.

    Example:
        >>> pool, adapter = build_pool(env_id="Basic", options={"n_agents": 2, "seed": 0},
        ...                            adapter_options=(), workers=2)
        >>> pool.num_cores, len(pool.worker_pids), adapter
        (2, 1, {})
        >>> pool.close()
    """
    from zooport.envs.core_pool import CorePool, registry_core
    from zooport.envs.pool_options import check_pool_options

    count = check_workers(workers)
    pool_kwargs = check_pool_options(pool_options, count)
    make, target = resolve_factory(env_id, factory)
    where = f"registry entry {env_id!r}" if env_id is not None else describe_factory(factory)
    core_kwargs, adapter_kwargs = split_options(target, options, adapter_options, where)
    side_channels = core_kwargs.pop("side_channels", None)
    seed = core_kwargs.pop("seed", None)
    overrides = list(core_options) if core_options is not None else [{}] * count
    factories = []
    for i, extra in enumerate(overrides):
        kwargs = {**core_kwargs, **extra}
        if seed is not None:
            kwargs["seed"] = seed + i
        if env_id is not None:
            factories.append(functools.partial(registry_core, env_id, **kwargs))
        else:
            factories.append(functools.partial(target or make, **kwargs))
    pool = CorePool(factories, side_channels=side_channels, **pool_kwargs)
    return pool, adapter_kwargs


def check_workers(workers: Any) -> int:
    """``workers`` as an int >= 1 (an ``ArgumentError``/``ArgumentTypeError`` otherwise)."""
    from zooport.envs.arguments import check_int

    return check_int(workers, "workers", 1)


def split_options(
    target: Callable[..., Any] | None,
    options: Mapping[str, Any],
    adapter_options: Collection[str],
    where: str,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Splits ``options`` into (core keywords, adapter keywords) by name.

    ``target`` is the core's constructor; None (unknown signature) accepts every keyword.
    """
    from zooport.envs.capabilities import keyword_parameters

    adapter = {k: v for k, v in options.items() if k in adapter_options}
    core = {k: v for k, v in options.items() if k not in adapter_options}
    accepted = keyword_parameters(target)
    if accepted is not None:
        unknown = [k for k in core if k not in accepted]
        if unknown:
            # Python's own words first: callers such as TorchRL's GymEnv retry without a
            # keyword when the error says "unexpected keyword argument '<name>'".
            name = getattr(target, "__qualname__", type(target).__name__)
            raise ArgumentTypeError(
                f"{name}() got an unexpected keyword argument {unknown[0]!r} ({where}: "
                f"unknown keyword arguments {unknown}; the core takes {sorted(accepted)} "
                f"and the adapter takes {list(adapter_options)})"
            )
    return core, adapter


def resolve_factory(
    env_id: str | None, factory: str | Callable[..., Any] | None
) -> tuple[Callable[..., Any], Callable[..., Any] | None]:
    """(the callable that makes the core, the callable whose signature lists its options)."""
    from zooport.envs.registry import LocalRegistryEntry, default_registry

    if env_id is not None:
        entry = default_registry[env_id]
        target = entry.load() if isinstance(entry, LocalRegistryEntry) else None
        return entry.make, target
    if isinstance(factory, str):
        entry = LocalRegistryEntry(factory, factory)
        return entry.make, entry.load()
    if not callable(factory):
        raise ArgumentTypeError(
            f"Expected factory to be a callable returning a BaseEnv or a 'module:attr' str, "
            f"actually: {type(factory).__name__}"
        )
    return factory, factory


def describe_factory(factory: Any) -> str:
    if isinstance(factory, str):
        return f"factory {factory!r}"
    return f"factory {getattr(factory, '__qualname__', type(factory).__name__)}"
