"""zooport's environments registered with Gymnasium and PettingZoo, their entry points, and the
core (or CorePool) builders; importing it imports no adapter, env, Gymnasium or PettingZoo."""

from __future__ import annotations

import contextlib
import functools
import importlib
import numbers
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from zooport.adapters.options import GymOptions, LayoutOptions, PettingZooOptions, SlotOptions
from zooport.errors import ArgumentError, ArgumentTypeError, SpecError

if TYPE_CHECKING:
    from zooport.envs.batched_env import DeclaredEnvClass

__all__ = [
    "APIS", "builtin_envs", "gym_id", "register_builtin_envs",
    "register_pettingzoo_envs", "entry_points", "register_gymnasium", "make_gym_env",
    "make_vector_env", "make_adapter", "build_core", "build_pool", "split_options",
]  # fmt: skip

GYM_ENTRY_POINT = "zooport.adapters.registration:make_gym_env"
VECTOR_ENTRY_POINT = "zooport.adapters.registration:make_vector_env"
VECTOR_OPTIONS = tuple(name for name in SlotOptions.names() if name != "behavior_name")
_ADAPTERS: dict[str, tuple[str, str, type[LayoutOptions]]] = {
    "parallel": ("pettingzoo_parallel", "PettingZooParallelEnv", PettingZooOptions),
    "aec": ("pettingzoo_aec", "PettingZooAECEnv", PettingZooOptions),
    "gym": ("gym_env", "GymEnv", GymOptions),
    "vector": ("vector_env", "BehaviorVectorEnv", SlotOptions),
}
APIS = tuple(_ADAPTERS)


def builtin_envs() -> dict[str, DeclaredEnvClass]:
    """The built-in environment classes by registry identifier (importing them)."""
    from zooport.envs import builtin

    return {name: getattr(builtin, name) for name in builtin.BUILTINS}


def gym_id(registry_id: str) -> str:
    """The Gymnasium id of a registry identifier: ``zooport/<registry_id>-v0``."""
    return f"zooport/{registry_id}-v0"


def register_builtin_envs() -> list[str]:
    """Registers ``zooport/<Name>-v0`` for every built-in not yet registered; returns the ids."""
    import gymnasium as gym

    classes = builtin_envs()
    for name, cls in classes.items():
        if gym_id(name) in gym.registry:
            continue
        gym.register(
            id=gym_id(name),
            entry_point=GYM_ENTRY_POINT,
            vector_entry_point=VECTOR_ENTRY_POINT,
            reward_threshold=float(cls.expected_reward) if cls.declaration.gym_threshold else None,
            max_episode_steps=cls.max_episode_steps,
            kwargs={"env_id": name, **cls.declaration.gym_kwargs},
        )
    return [gym_id(name) for name in classes]


def register_pettingzoo_envs() -> list[str]:
    """Registers each built-in's PettingZoo id (AEC and Parallel; PettingZoo >= 1.27); the ids."""
    try:
        pettingzoo = importlib.import_module("pettingzoo")
        registries = {"aec": pettingzoo.aec_registry, "parallel": pettingzoo.parallel_registry}
    except (ImportError, AttributeError):
        return []
    ids = []
    for cls in builtin_envs().values():
        env_id = cls.declaration.pettingzoo_id
        if env_id is None:
            continue
        module = f"zooport.adapters.pettingzoo_envs.{cls.declaration.pettingzoo_name}"
        for kind, attr in (("aec", "env"), ("parallel", "parallel_env")):
            if env_id not in registries[kind]:
                pettingzoo.register(kind, env_id, entry_point=f"{module}:{attr}")
        ids.append(env_id)
    return ids


def register_gymnasium(
    env_id: str,
    factory: str | Callable[..., Any],
    *,
    behavior_name: str | None = None,
    max_episode_steps: int | None = None,
    reward_threshold: float | None = None,
    **kwargs: Any,
) -> None:
    """Registers a ``BaseEnv`` factory (or ``"module:attr"``) with Gymnasium as a GymEnv."""
    import gymnasium as gym

    defaults = dict(kwargs)
    if behavior_name is not None:
        defaults["behavior_name"] = behavior_name
    split_options(None, factory, defaults, GymOptions.names())  # refused now, not at make
    entry_point: str | Callable[..., Any] = GYM_ENTRY_POINT
    if isinstance(factory, str):
        defaults["factory"] = factory
    else:
        entry_point = functools.partial(make_gym_env, factory=factory)
    gym.register(
        id=env_id,
        entry_point=entry_point,
        max_episode_steps=max_episode_steps,
        reward_threshold=reward_threshold,
        kwargs=defaults,
    )


def make_gym_env(
    env_id: str | None = None, *, factory: str | Callable[..., Any] | None = None, **kwargs: Any
) -> Any:
    """The ``gym.make`` entry point: a GymEnv over a registry (``env_id``) or ``factory`` core."""
    from zooport.adapters.gym_env import GymEnv

    core, adapter_kwargs = build_core(
        env_id=env_id, factory=factory, options=kwargs, adapter_options=GymOptions.names()
    )
    return _adapt(GymEnv, core, **adapter_kwargs)


# gym.make serves "rgb_array_list" and "human" with RenderCollection and HumanRendering.
make_gym_env.metadata = {"render_modes": ["rgb_array"], "render_fps": 30}  # type: ignore[attr-defined]


def make_vector_env(
    *,
    num_envs: int,
    env_id: str | None = None,
    factory: str | Callable[..., Any] | None = None,
    behavior_name: str | None = None,
    max_episode_steps: int | None = None,
    agent_count_kwarg: str | None = None,
    workers: int | None = None,
    pool_options: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> Any:
    """The ``vector_entry_point``: ONE core (``workers=K``: a CorePool of K) with ``num_envs``
    agents, set by ``agent_count_kwarg`` (default: the declared one, else ``n_agents``)."""
    from zooport.adapters.rendering import VectorHumanRendering
    from zooport.adapters.vector_env import BehaviorVectorEnv
    from zooport.envs.arguments import check_int
    from zooport.envs.batched_env import EnvDeclaration
    from zooport.envs.capabilities import keyword_parameters

    if isinstance(num_envs, bool) or not isinstance(num_envs, numbers.Integral) or num_envs < 1:
        raise ArgumentError(f"Expect num_envs to be a positive int, actually: {num_envs!r}")
    _, target, _, _ = split_options(env_id, factory, {}, ())
    declaration = getattr(target, "declaration", None) if env_id is not None else None
    if agent_count_kwarg is None and isinstance(declaration, EnvDeclaration):
        agent_count_kwarg = declaration.agent_counts.get(behavior_name or "")
    agent_count_kwarg = "n_agents" if agent_count_kwarg is None else agent_count_kwarg
    options = {**kwargs, agent_count_kwarg: int(num_envs)}
    accepted = keyword_parameters(target)
    if max_episode_steps is not None and (accepted is None or "max_steps" in accepted):
        options.setdefault("max_steps", int(max_episode_steps))
    human = options.get("render_mode") == "human"
    if human:  # as gym.make serves "human" to a GymEnv: rgb_array frames in a window
        options["render_mode"] = "rgb_array"
    shares = None
    if workers is not None:
        count = check_int(workers, "workers", 1)
        if count > num_envs:
            raise ArgumentError(f"Expect workers <= num_envs ({num_envs}), actually: {count}")
        shares = [
            {agent_count_kwarg: num_envs // count + (i < num_envs % count)} for i in range(count)
        ]
    core, adapter_kwargs = build_pool(
        env_id=env_id, factory=factory, options=options, adapter_options=VECTOR_OPTIONS,
        workers=workers, core_options=shares, pool_options=pool_options,
    )  # fmt: skip
    envs = _adapt(BehaviorVectorEnv, core, behavior_name, **adapter_kwargs)
    if envs.num_envs != num_envs:
        envs.close()
        raise SpecError(
            f"make_vector_env: expected {num_envs} agents of behavior {envs.behavior_name!r} "
            f"after setting {agent_count_kwarg}={num_envs}, got {envs.num_envs}; pass "
            "agent_count_kwarg= naming the core keyword that sets that behaviour's count"
        )
    return VectorHumanRendering(envs) if human else envs


def make_adapter(registry_id: str, api: str, kwargs: Mapping[str, Any]) -> Any:
    """A registry environment through the ``api`` adapter, ``kwargs`` split by name."""
    if api == "gym" and kwargs.get("workers") is not None:
        raise ArgumentError(
            "workers= builds a CorePool of several cores, whose agents a single-agent "
            "GymEnv cannot serve; use api='vector' or a PettingZoo api"
        )
    if api not in _ADAPTERS:
        raise ArgumentError(f"Expect api to be one of {list(APIS)}, actually: {api!r}")
    if api == "vector" and "num_envs" in kwargs:
        return make_vector_env(env_id=registry_id, **kwargs)
    cls = builtin_envs().get(registry_id) if api == "gym" else None
    options = {**(cls.declaration.gym_kwargs if cls is not None else {}), **kwargs}
    workers, pool_options = options.pop("workers", None), options.pop("pool_options", None)
    module, name, adapter_options = _ADAPTERS[api]
    adapter = getattr(importlib.import_module(f"zooport.adapters.{module}"), name)
    core, adapter_kwargs = build_pool(
        env_id=registry_id, options=options, adapter_options=adapter_options.names(),
        workers=workers, pool_options=pool_options,
    )  # fmt: skip
    return _adapt(adapter, core, **adapter_kwargs)


def _adapt(adapter: Callable[..., Any], core: Any, *args: Any, **kwargs: Any) -> Any:
    """``adapter(core, ...)``, closing ``core`` when that fails (a failing close hides nothing)."""
    try:
        return adapter(core, *args, **kwargs)
    except BaseException:
        with contextlib.suppress(Exception):
            core.close()
        raise


def build_pool(
    *,
    env_id: str | None = None,
    factory: str | Callable[..., Any] | None = None,
    options: Mapping[str, Any],
    adapter_options: Collection[str],
    workers: int | None = None,
    core_options: Sequence[Mapping[str, Any]] | None = None,
    pool_options: Mapping[str, Any] | None = None,
) -> tuple[Any, dict[str, Any]]:
    """A core, or a CorePool of ``workers`` (core ``i``: ``core_options[i]``, ``seed + i``)."""
    from zooport.envs.arguments import check_int
    from zooport.envs.core_pool import CorePool, check_pool_options, registry_core

    pool_kwargs = check_pool_options(pool_options, workers)
    make, target, core_kwargs, adapter_kwargs = split_options(
        env_id, factory, options, adapter_options
    )
    if workers is None:
        return make(**core_kwargs), adapter_kwargs
    count = check_int(workers, "workers", 1)
    side_channels = core_kwargs.pop("side_channels", None)
    seed = core_kwargs.pop("seed", None)
    make_one = functools.partial(registry_core, env_id) if env_id is not None else target or make
    factories = []
    for i, extra in enumerate(core_options if core_options is not None else [{}] * count):
        seeded = {} if seed is None else {"seed": seed + i}
        factories.append(functools.partial(make_one, **{**core_kwargs, **extra, **seeded}))
    return CorePool(factories, side_channels=side_channels, **pool_kwargs), adapter_kwargs


build_core = build_pool


def split_options(
    env_id: str | None,
    factory: str | Callable[..., Any] | None,
    options: Mapping[str, Any],
    adapter_options: Collection[str],
) -> tuple[Callable[..., Any], Callable[..., Any] | None, dict[str, Any], dict[str, Any]]:
    """(core maker, its constructor, core keywords, adapter keywords) of ``options``."""
    from zooport.envs.registry import LocalRegistryEntry, check_keywords, default_registry

    if (env_id is None) == (factory is None):
        raise ArgumentTypeError(
            "Expected exactly one of env_id= (a registry identifier) and factory=, actually: "
            f"env_id={env_id!r}, factory={factory!r}"
        )
    where = f"registry entry {env_id!r}" if env_id is not None else f"factory {factory!r}"
    entry = default_registry[env_id] if env_id is not None else None
    if isinstance(factory, str):
        entry = LocalRegistryEntry(factory, factory)
    if entry is not None:
        make, target = entry.make, entry.load() if isinstance(entry, LocalRegistryEntry) else None
    elif callable(factory):
        make = target = factory
        where = f"factory {getattr(factory, '__qualname__', type(factory).__name__)}"
    else:
        raise ArgumentTypeError(
            f"Expected factory to be a callable returning a BaseEnv or a 'module:attr' str, "
            f"actually: {type(factory).__name__}"
        )
    adapter = {k: v for k, v in options.items() if k in adapter_options}
    core = {k: v for k, v in options.items() if k not in adapter_options}
    check_keywords(
        target, core, where, f"the core takes {{}} and the adapter takes {list(adapter_options)}"
    )
    return make, target, core, adapter


def entry_points(registry_id: str, module: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """PettingZoo's ``env`` and ``parallel_env`` for the module named ``module``."""
    name = module.rpartition(".")[2]

    def entry_point(api: str, attr: str, kind: str) -> Callable[..., Any]:
        def function(**kwargs: Any) -> Any:
            return make_adapter(registry_id, api, {"name": name, **kwargs})

        # The module's own functions: pickled by reference, as a module file's are.
        function.__module__, function.__name__, function.__qualname__ = module, attr, attr
        function.__doc__ = f"A new {registry_id} as a PettingZoo {kind} environment."
        return function

    return entry_point("aec", "env", "AEC"), entry_point("parallel", "parallel_env", "Parallel")
