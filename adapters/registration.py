"""Registers zooport's environments with Gymnasium (``zooport/<Name>-v0``) and PettingZoo
(``zooport/<name>-v0``), as each built-in's :class:`~zooport.envs.declaration.EnvDeclaration`
says, and holds every entry point. It imports no adapter, environment, Gymnasium or PettingZoo
at import time."""

from __future__ import annotations

import functools
import importlib
import numbers
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from zooport.adapters.core_building import (
    build_core,
    build_pool,
    check_workers,
    describe_factory,
    resolve_factory,
    split_options,
)
from zooport.adapters.options import GymOptions, PettingZooOptions, SlotOptions
from zooport.errors import ArgumentError, ArgumentTypeError, SpecError

if TYPE_CHECKING:
    from zooport.envs.declaration import DeclaredEnvClass, EnvDeclaration

__all__ = [
    "BuiltinGymEnv",
    "APIS",
    "builtin_envs",
    "gym_id",
    "register_builtin_envs",
    "register_pettingzoo_envs",
    "register_gymnasium",
    "make_gym_env",
    "make_vector_env",
    "make_adapter",
]

GYM_ENTRY_POINT = "zooport.adapters.registration:make_gym_env"
VECTOR_ENTRY_POINT = "zooport.adapters.registration:make_vector_env"
#: BehaviorVectorEnv's keywords that make_vector_env routes to the adapter (it takes
#: ``behavior_name`` itself); every other keyword goes to the core.
VECTOR_OPTIONS = tuple(name for name in SlotOptions.names() if name != "behavior_name")
#: The adapters :func:`make_adapter` (and ``zooport.make``) build, by ``api``.
APIS = ("parallel", "aec", "gym", "vector")


def builtin_envs() -> dict[str, DeclaredEnvClass]:
    """The built-in environment classes by registry identifier (importing them).

    Example:
        >>> list(builtin_envs())
        ['Basic', 'BallBalance', 'GridWorld', 'Tag', 'Collector', 'Soccer']
    """
    from zooport.envs import builtin

    return {name: getattr(builtin, name) for name in builtin.BUILTINS}


class BuiltinGymEnv(NamedTuple):
    """A built-in's Gymnasium registration as its declaration gives it (``BUILTIN_GYM_ENVS``,
    read on first use, so that importing this module imports no built-in)."""

    registry_id: str
    kwargs: Mapping[str, Any]
    threshold_from_registry: bool

    @property
    def gym_id(self) -> str:
        """``zooport/<registry_id>-v0``."""
        return gym_id(self.registry_id)


def __getattr__(name: str) -> Any:
    if name == "BUILTIN_GYM_ENVS":
        value = tuple(
            BuiltinGymEnv(n, dict(c.declaration.gym_kwargs), c.declaration.gym_threshold)
            for n, c in builtin_envs().items()
        )
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def gym_id(registry_id: str) -> str:
    """The Gymnasium id of a registry identifier: ``zooport/<registry_id>-v0``."""
    return f"zooport/{registry_id}-v0"


def register_builtin_envs() -> list[str]:
    """Registers ``zooport/<Name>-v0`` for every built-in not registered yet; returns the ids.

    ``max_episode_steps`` is the env's episode cap, ``reward_threshold`` its
    ``expected_reward`` (unless its declaration says otherwise), the keywords its
    declaration's ``gym_kwargs``."""
    import gymnasium as gym

    ids = []
    for name, cls in builtin_envs().items():
        env_id = gym_id(name)
        ids.append(env_id)
        if env_id in gym.registry:
            continue
        declaration: EnvDeclaration = cls.declaration
        gym.register(
            id=env_id,
            entry_point=GYM_ENTRY_POINT,
            vector_entry_point=VECTOR_ENTRY_POINT,
            reward_threshold=float(cls.expected_reward) if declaration.gym_threshold else None,
            nondeterministic=False,
            max_episode_steps=cls.max_episode_steps,
            kwargs={"env_id": name, **declaration.gym_kwargs},
        )
    return ids


def register_pettingzoo_envs() -> list[str]:
    """Registers ``zooport/<name>-v0`` (AEC and Parallel) for each built-in with a
    ``pettingzoo_name``; returns the ids (``[]`` where PettingZoo has no registry, before 1.27)."""
    try:
        pettingzoo = importlib.import_module("pettingzoo")
        register = pettingzoo.register
        registries = {"aec": pettingzoo.aec_registry, "parallel": pettingzoo.parallel_registry}
    except (ImportError, AttributeError):
        return []
    ids = []
    for cls in builtin_envs().values():
        declaration: EnvDeclaration = cls.declaration
        env_id = declaration.pettingzoo_id
        if env_id is None:  # no pettingzoo_name: no PettingZoo entry points
            continue
        module = f"zooport.adapters.pettingzoo_envs.{declaration.pettingzoo_name}"
        for kind, attr in (("aec", "env"), ("parallel", "parallel_env")):
            if env_id not in registries[kind]:
                register(kind, env_id, entry_point=f"{module}:{attr}")
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
    """Registers a ``BaseEnv`` factory with Gymnasium: ``gym.make(env_id)`` gives a GymEnv.

    ``factory`` is a callable returning a ``BaseEnv`` or a ``"module:attr"`` string naming
    one (plain data, so it also works in a process that only imported the registering
    module); ``behavior_name`` is needed when the core has several; ``kwargs`` are default
    ``gym.make`` keywords: GymEnv options or parameters of ``factory``.

    Raises:
        ArgumentTypeError: a keyword is neither a GymEnv option nor a parameter of ``factory``.

    Example:
        >>> import gymnasium as gym
        >>> from zooport.envs.builtin.basic import Basic
        >>> register_gymnasium("my_project/Walk-v0", Basic, max_steps=20)
        >>> env = gym.make("my_project/Walk-v0")
        >>> env.unwrapped.core.behavior_specs["Basic"].action_spec.discrete_branches
        (3,)
        >>> env.close()
    """
    import gymnasium as gym

    defaults = dict(kwargs)
    if behavior_name is not None:
        defaults["behavior_name"] = behavior_name
    if isinstance(factory, str):
        _, target = resolve_factory(None, factory)
        split_options(target, defaults, GymOptions.names(), f"factory {factory!r}")
        entry_point: str | Callable[..., Any] = GYM_ENTRY_POINT
        defaults["factory"] = factory
    elif callable(factory):
        split_options(factory, defaults, GymOptions.names(), describe_factory(factory))
        entry_point = functools.partial(make_gym_env, factory=factory)
    else:
        raise ArgumentTypeError(
            f"Expected factory to be a callable returning a BaseEnv or a 'module:attr' str, "
            f"actually: {type(factory).__name__}"
        )
    gym.register(
        id=env_id,
        entry_point=entry_point,
        max_episode_steps=max_episode_steps,
        reward_threshold=reward_threshold,
        kwargs=defaults,
    )


def make_gym_env(
    env_id: str | None = None,
    *,
    factory: str | Callable[..., Any] | None = None,
    **kwargs: Any,
) -> Any:
    """The ``gym.make`` entry point: a GymEnv over a core made from the registry (``env_id``
    such as ``"Basic"``) or a ``factory``; ``kwargs`` named like GymEnv options configure the
    adapter, every other one must be a parameter of the core.

    Raises:
        ArgumentTypeError: a keyword is neither a core parameter nor an adapter option."""
    from zooport.adapters.gym_env import GymEnv

    core, adapter_kwargs = build_core(
        env_id=env_id, factory=factory, options=kwargs, adapter_options=GymOptions.names()
    )
    try:
        return GymEnv(core, **adapter_kwargs)
    except BaseException:
        core.close()
        raise


# gym.make reads its entry point's metadata: with it, render_mode="rgb_array_list" (and
# "human", where pygame is installed) are served by Gymnasium's RenderCollection and
# HumanRendering wrappers over the rgb_array frames.
make_gym_env.metadata = {"render_modes": ["rgb_array"], "render_fps": 30}  # type: ignore[attr-defined]  # read by gym.make


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
    """The ``vector_entry_point`` of ``zooport/<Name>-v0``: ONE core with ``num_envs`` agents
    in the behaviour, as a ``BehaviorVectorEnv`` (``gym.make_vec("zooport/BallBalance-v0",
    num_envs=64)`` is one ``BallBalance(n_agents=64)``).

    With ``workers=K`` the agents are shared out over K cores of a
    :class:`~zooport.envs.CorePool` (the first cores taking one more; core ``i`` gets
    ``seed + i``; ``pool_options`` are its arguments). ``max_episode_steps`` becomes the
    core's ``max_steps`` unless that is given or the core has no such keyword.
    ``agent_count_kwarg`` is the core keyword that sets the agent count (default: the
    built-in's declared one, else ``n_agents``). ``kwargs`` named in :data:`VECTOR_OPTIONS`
    go to the adapter, the others to the core. ``render_mode="human"`` shows the adapter's
    ``"rgb_array"`` pictures in a window, as ``gym.make`` does for a single env.

    Raises:
        ArgumentError: ``num_envs`` is not a positive int.
        ArgumentTypeError: a keyword is neither a core parameter nor an adapter option.
        SpecError: the behaviour does not end up with ``num_envs`` agents.

    Example:
        >>> envs = make_vector_env(num_envs=3, env_id="BallBalance", seed=0)
        >>> envs.num_envs, envs.core.n_agents
        (3, 3)
        >>> envs.close()
    """
    from zooport.adapters.rendering import VectorHumanRendering
    from zooport.adapters.vector_env import BehaviorVectorEnv

    if isinstance(num_envs, bool) or not isinstance(num_envs, numbers.Integral) or num_envs < 1:
        raise ArgumentError(f"Expect num_envs to be a positive int, actually: {num_envs!r}")
    from zooport.envs.pool_options import check_pool_options

    check_pool_options(pool_options, workers)
    from zooport.envs.capabilities import keyword_parameters
    from zooport.envs.declaration import EnvDeclaration

    _, target = resolve_factory(env_id, factory)
    if agent_count_kwarg is None:
        declaration = getattr(target, "declaration", None) if env_id is not None else None
        agent_count_kwarg = (
            declaration.agent_count_keyword(behavior_name)
            if isinstance(declaration, EnvDeclaration)
            else "n_agents"
        )
    options = {**kwargs, agent_count_kwarg: int(num_envs)}
    if max_episode_steps is not None and "max_steps" not in options:
        accepted = keyword_parameters(target)
        if accepted is None or "max_steps" in accepted:
            options["max_steps"] = int(max_episode_steps)
    human = options.get("render_mode") == "human"
    if human:
        # As gym.make serves "human" for a GymEnv: rgb_array frames, shown in a window.
        options["render_mode"] = "rgb_array"
    if workers is None:
        core, adapter_kwargs = build_core(
            env_id=env_id, factory=factory, options=options, adapter_options=VECTOR_OPTIONS
        )
    else:
        count = check_workers(workers)
        if count > num_envs:
            raise ArgumentError(f"Expect workers <= num_envs ({num_envs}), actually: {count}")
        shares = [num_envs // count + (i < num_envs % count) for i in range(count)]
        core, adapter_kwargs = build_pool(
            env_id=env_id, factory=factory, options=options, adapter_options=VECTOR_OPTIONS,
            workers=count, core_options=[{agent_count_kwarg: n} for n in shares],
            pool_options=pool_options,
        )  # fmt: skip
    try:
        envs = BehaviorVectorEnv(core, behavior_name, **adapter_kwargs)
    except BaseException:
        core.close()
        raise
    if envs.num_envs != num_envs:
        envs.close()
        raise SpecError(
            f"make_vector_env: expected {num_envs} agents of behavior {envs.behavior_name!r} "
            f"after setting {agent_count_kwarg}={num_envs}, got {envs.num_envs}; pass "
            "agent_count_kwarg= naming the core keyword that sets that behaviour's count"
        )
    return VectorHumanRendering(envs) if human else envs


def make_adapter(registry_id: str, api: str, kwargs: Mapping[str, Any]) -> Any:
    """A registry environment through the ``api`` adapter, ``kwargs`` split by name.

    ``"gym"`` puts the built-in's declared ``gym_kwargs`` under the given ones; ``"vector"``
    with ``num_envs=`` is :func:`make_vector_env`. ``workers=K`` (with ``pool_options=``)
    builds K cores in a :class:`~zooport.envs.CorePool` behind the adapter (not for ``"gym"``).

    Raises:
        ArgumentError: an ``api`` not in :data:`APIS`; ``workers`` with ``api="gym"``.
        ArgumentTypeError: a keyword neither the adapter nor the core takes."""
    kwargs = dict(kwargs)
    adapter: Callable[..., Any]
    workers, pool_options = kwargs.pop("workers", None), kwargs.pop("pool_options", None)
    from zooport.envs.pool_options import check_pool_options

    check_pool_options(pool_options, workers)
    if workers is not None and api == "gym":
        raise ArgumentError(
            "workers= builds a CorePool of several cores, whose agents a single-agent "
            "GymEnv cannot serve; use api='vector' or a PettingZoo api"
        )
    if api in ("parallel", "aec"):
        if api == "parallel":
            from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv as adapter
        else:
            from zooport.adapters.pettingzoo_aec import PettingZooAECEnv as adapter
        names: Collection[str] = PettingZooOptions.names()
    elif api == "gym":
        from zooport.adapters.gym_env import GymEnv as adapter

        cls = builtin_envs().get(registry_id)
        defaults = cls.declaration.gym_kwargs if cls is not None else {}
        kwargs = {**defaults, **kwargs}
        names = GymOptions.names()
    elif api == "vector":
        if "num_envs" in kwargs:
            if workers is not None:
                kwargs.update(workers=workers, pool_options=pool_options)
            return make_vector_env(env_id=registry_id, **kwargs)
        from zooport.adapters.vector_env import BehaviorVectorEnv as adapter

        names = SlotOptions.names()
    else:
        raise ArgumentError(f"Expect api to be one of {list(APIS)}, actually: {api!r}")
    if workers is None:
        core, adapter_kwargs = build_core(env_id=registry_id, options=kwargs, adapter_options=names)
    else:
        core, adapter_kwargs = build_pool(
            env_id=registry_id, options=kwargs, adapter_options=names, workers=workers,
            pool_options=pool_options,
        )  # fmt: skip
    try:
        return adapter(core, **adapter_kwargs)
    except BaseException:
        core.close()
        raise
