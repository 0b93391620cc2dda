"""Gymnasium registration of zooport environments (``gym.make`` / ``gym.make_vec``).

Classes:
    BuiltinGymEnv: how one built-in environment is registered: its registry identifier
        and the default ``gym.make`` keywords.

Functions:
    register_builtin_envs: registers ``zooport/<Name>-v0`` for every built-in environment;
        idempotent (``import zooport`` calls it).
    register_gymnasium: registers a user's ``BaseEnv`` factory under the user's own id.
    build_core: makes a core from a registry identifier or a factory and splits keyword
        arguments by name between the core and an adapter (used by the entry points).
    gym_id: the Gymnasium id of a registry identifier.

Registered ids make a single-agent :class:`~zooport.adapters.gym_env.GymEnv` through
``zooport.adapters.gym_env:make_gym_env``; ``gym.make_vec`` uses the vector entry point
``zooport.adapters.vector_env:make_vector_env``, which Gymnasium (1.0 to 1.4) calls as
``make_vector_env(num_envs=n, max_episode_steps=<spec's, unless given>, **kwargs)`` with the
same registered keywords (``env_id``, the registry identifier, and the defaults) updated by
the caller's.
Nothing here touches the network.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from zooport.adapters.options import GymOptions, SlotOptions
from zooport.envs.registry import keyword_parameters as _keyword_parameters
from zooport.errors import ArgumentError, ArgumentTypeError, SpecError

__all__ = [
    "BuiltinGymEnv",
    "BUILTIN_GYM_ENVS",
    "GYM_NAMESPACE",
    "GYM_ENTRY_POINT",
    "VECTOR_ENTRY_POINT",
    "gym_id",
    "register_builtin_envs",
    "register_gymnasium",
    "build_core",
    "split_options",
]

GYM_NAMESPACE = "zooport"
GYM_ENTRY_POINT = "zooport.adapters.registration:make_gym_env"
VECTOR_ENTRY_POINT = "zooport.adapters.registration:make_vector_env"


@dataclass(frozen=True)
class BuiltinGymEnv:
    """How a built-in environment is registered with Gymnasium.

    Attributes:
        registry_id: its identifier in ``zooport.envs.registry.default_registry``.
        kwargs: default ``gym.make`` keywords besides ``env_id`` (core options such as
            ``n_agents=1`` and adapter options such as ``behavior_name``).
        threshold_from_registry: use the registry's ``expected_reward`` as
            ``reward_threshold``; False where it measures a different behaviour.
    """

    registry_id: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    threshold_from_registry: bool = True

    @property
    def gym_id(self) -> str:
        """``zooport/<registry_id>-v0``."""
        return gym_id(self.registry_id)


#: The built-ins, made single-agent: one agent in the served behaviour.
BUILTIN_GYM_ENVS: tuple[BuiltinGymEnv, ...] = (
    BuiltinGymEnv("Basic", {"n_agents": 1}),
    BuiltinGymEnv("BallBalance", {"n_agents": 1}),
    # The 5x5 camera stays float32: as uint8 SB3 would take it for an image and build a CNN
    # that cannot convolve 5x5 pixels; as a float Box its policies flatten it.
    BuiltinGymEnv("GridWorld", {"n_agents": 1}),
    # One runner against one tagger; the tagger takes no actions (ML-Agents' rule: an agent
    # that gets no action takes the zero action, "stay"). The registry's expected reward is
    # the taggers', so it is no threshold for the runner.
    BuiltinGymEnv(
        "Tag",
        {"n_runners": 1, "n_taggers": 1, "behavior_name": "Runner?team=0"},
        threshold_from_registry=False,
    ),
    BuiltinGymEnv("Collector", {"n_agents": 1}),
    # One player against one who takes no actions (stands where it kicked off). The
    # registry's expected reward is a team's against a random team: no threshold here.
    BuiltinGymEnv(
        "Soccer",
        {"team_size": 1, "behavior_name": "Soccer?team=0"},
        threshold_from_registry=False,
    ),
)


def gym_id(registry_id: str) -> str:
    """The Gymnasium id of a registry identifier.

    Example:
        >>> gym_id("Basic")
        'zooport/Basic-v0'
    """
    return f"{GYM_NAMESPACE}/{registry_id}-v0"


def register_builtin_envs() -> list[str]:
    """Registers ``zooport/<Name>-v0`` for every built-in environment; returns the ids.

    Idempotent: ids already in Gymnasium's registry are left as they are (no warning).
    ``max_episode_steps`` is the environment's own episode cap and ``reward_threshold``
    the registry's ``expected_reward``.

    Example:
        >>> import gymnasium as gym
        >>> "zooport/Basic-v0" in register_builtin_envs()
        True
        >>> gym.spec("zooport/Basic-v0").max_episode_steps
        100
    """
    from zooport.envs.registry import default_registry

    ids = []
    for builtin in BUILTIN_GYM_ENVS:
        env_id = builtin.gym_id
        ids.append(env_id)
        if env_id in gym.registry:
            continue
        entry = default_registry[builtin.registry_id]
        gym.register(
            id=env_id,
            entry_point=GYM_ENTRY_POINT,
            vector_entry_point=VECTOR_ENTRY_POINT,
            reward_threshold=entry.expected_reward if builtin.threshold_from_registry else None,
            nondeterministic=False,
            max_episode_steps=getattr(entry, "max_episode_steps", None),
            kwargs={"env_id": builtin.registry_id, **builtin.kwargs},
        )
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

    Args:
        env_id: the Gymnasium id, e.g. ``"my_project/MyEnv-v0"``.
        factory: a callable returning a ``BaseEnv`` (a class or a function), or a
            ``"module:attr"`` string naming one (such an entry is plain data, so it also
            works in a process that only imported the module registering it). A core with
            no behaviours yet (a Unity scene) is stepped once by the GymEnv.
        behavior_name: the behaviour to serve (needed when the core has several).
        max_episode_steps: Gymnasium's ``TimeLimit``; None for none.
        reward_threshold: the return at which the task counts as solved.
        **kwargs: default ``gym.make`` keywords: :class:`GymEnv` options
            (``uint8_visual``, ``flatten_branched``, ...) or parameters of ``factory``.

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
    defaults = dict(kwargs)
    if behavior_name is not None:
        defaults["behavior_name"] = behavior_name
    if isinstance(factory, str):
        _, target = _resolve(None, factory)
        split_options(target, defaults, GymOptions.names(), f"factory {factory!r}")
        entry_point: str | Callable[..., Any] = GYM_ENTRY_POINT
        defaults["factory"] = factory
    elif callable(factory):
        split_options(factory, defaults, GymOptions.names(), _describe(factory))
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


# ---------------------------------------------------------------------- gym entry point


def make_gym_env(
    env_id: str | None = None,
    *,
    factory: str | Callable[..., Any] | None = None,
    **kwargs: Any,
) -> Any:
    """The ``gym.make`` entry point: a core made from the registry or a factory, wrapped.

    ``kwargs`` named like ``GymEnv`` options (:class:`~zooport.adapters.options.GymOptions`)
    configure the adapter; every other keyword must be a parameter of the core's constructor.

    Args:
        env_id: an identifier of ``zooport.envs.registry.default_registry`` (not a
            Gymnasium id), e.g. ``"Basic"``.
        factory: instead of ``env_id``: a callable returning a ``BaseEnv``, or a
            ``"module:attr"`` string naming one.
        **kwargs: core and adapter options.

    Raises:
        ArgumentTypeError: a keyword is neither a core parameter nor an adapter option.

    Example:
        >>> env = make_gym_env("Basic", max_steps=5, flatten_branched=True)
        >>> env.core.behavior_specs["Basic"].action_spec.discrete_branches, env.action_space
        ((3,), Discrete(3))
    """
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
make_gym_env.metadata = {"render_modes": ["rgb_array"], "render_fps": 30}  # type: ignore[attr-defined]


# ---------------------------------------------------------------------- vector entry point

#: The keyword arguments of ``BehaviorVectorEnv`` that ``make_vector_env`` routes to the
#: adapter (it takes ``behavior_name`` itself); every other keyword goes to the core.
VECTOR_OPTIONS = tuple(name for name in SlotOptions.names() if name != "behavior_name")

#: Registry ids whose agent count is not the ``n_agents`` keyword: the keyword that sets
#: each behaviour's count.
_AGENT_COUNT_KWARGS: dict[str, dict[str, str]] = {
    "Tag": {"Runner?team=0": "n_runners", "Tagger?team=1": "n_taggers"},
    "Soccer": {"Soccer?team=0": "team_size", "Soccer?team=1": "team_size"},
}


def make_vector_env(
    *,
    num_envs: int,
    env_id: str | None = None,
    factory: str | Callable[..., Any] | None = None,
    behavior_name: str | None = None,
    max_episode_steps: int | None = None,
    agent_count_kwarg: str | None = None,
    **kwargs: Any,
) -> Any:
    """Builds ONE core with ``num_envs`` agents in the behaviour, as a ``BehaviorVectorEnv``.

    This is the ``vector_entry_point`` of ``zooport/<Name>-v0``: Gymnasium calls it as
    ``make_vector_env(num_envs=N, max_episode_steps=..., **registered_kwargs, **kwargs)``,
    so ``gym.make_vec("zooport/BallBalance-v0", num_envs=64,
    vectorization_mode="vector_entry_point")`` is one ``BallBalance(n_agents=64)``.

    Args:
        num_envs: the number of slots: the core is built with that many agents.
        env_id: an identifier of ``zooport.envs.registry.default_registry`` (e.g.
            ``"BallBalance"``, not the Gymnasium id); exclusive with ``factory``.
        factory: instead of ``env_id``: a callable returning a ``BaseEnv`` or a
            ``"module:attr"`` string naming one.
        behavior_name: the behaviour whose agents are the slots (None: the only one).
        max_episode_steps: the registration's episode cap; it becomes the core's
            ``max_steps`` (the core interrupts its agents) unless ``max_steps`` is given or
            the core has no such keyword.
        agent_count_kwarg: the core keyword that sets the behaviour's agent count (default
            ``n_agents``; ``n_runners``/``n_taggers`` for ``Tag``, ``team_size`` for
            ``Soccer``).
        **kwargs: :data:`VECTOR_OPTIONS` for the adapter, every other keyword for the
            core (a registered ``n_agents=1`` is overridden by ``num_envs``).

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
    from zooport.adapters.vector_env import BehaviorVectorEnv

    if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
        raise ArgumentError(f"Expect num_envs to be a positive int, actually: {num_envs!r}")
    if agent_count_kwarg is None:
        counts = _AGENT_COUNT_KWARGS.get(env_id or "", {})
        agent_count_kwarg = counts.get(behavior_name or "", "n_agents")
    options = {**kwargs, agent_count_kwarg: int(num_envs)}
    if max_episode_steps is not None and "max_steps" not in options:
        accepted = _keyword_parameters(_resolve(env_id, factory)[1])
        if accepted is None or "max_steps" in accepted:
            options["max_steps"] = int(max_episode_steps)
    core, adapter_kwargs = build_core(
        env_id=env_id, factory=factory, options=options, adapter_options=VECTOR_OPTIONS
    )
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
    return envs


# ---------------------------------------------------------------------- entry-point helpers


def build_core(
    *,
    env_id: str | None = None,
    factory: str | Callable[..., Any] | None = None,
    options: Mapping[str, Any],
    adapter_options: Collection[str],
) -> tuple[Any, dict[str, Any]]:
    """Makes a core and returns it with the options meant for the adapter.

    Options named in ``adapter_options`` go to the adapter, every other one to the core,
    which must declare it as a parameter (unless it takes ``**kwargs``).

    Args:
        env_id: an identifier of ``default_registry`` (exclusive with ``factory``).
        factory: a callable returning a ``BaseEnv``, or a ``"module:attr"`` string.
        options: the keyword arguments given to ``gym.make`` (plus the registered ones).
        adapter_options: the names the adapter takes.

    Raises:
        ArgumentTypeError: neither or both of ``env_id`` and ``factory`` given, or an option
            that neither the core nor the adapter takes (the message lists the valid ones).

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
    make, target = _resolve(env_id, factory)
    where = f"registry entry {env_id!r}" if env_id is not None else _describe(factory)
    core_kwargs, adapter_kwargs = split_options(target, options, adapter_options, where)
    return make(**core_kwargs), adapter_kwargs


def split_options(
    target: Callable[..., Any] | None,
    options: Mapping[str, Any],
    adapter_options: Collection[str],
    where: str,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Splits ``options`` into (core keywords, adapter keywords) by name.

    ``target`` is the core's constructor; None (unknown signature) accepts every keyword.

    Raises:
        ArgumentTypeError: an option that neither ``target`` nor the adapter takes.
    """
    adapter = {k: v for k, v in options.items() if k in adapter_options}
    core = {k: v for k, v in options.items() if k not in adapter_options}
    accepted = _keyword_parameters(target)
    if accepted is not None:
        unknown = [k for k in core if k not in accepted]
        if unknown:
            raise ArgumentTypeError(
                f"{where}: unknown keyword arguments {unknown}; the core takes "
                f"{sorted(accepted)} and the adapter takes {list(adapter_options)}"
            )
    return core, adapter


def _resolve(
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


def _describe(factory: Any) -> str:
    if isinstance(factory, str):
        return f"factory {factory!r}"
    return f"factory {getattr(factory, '__qualname__', type(factory).__name__)}"
