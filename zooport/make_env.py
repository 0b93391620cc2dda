"""``zooport.make`` (exported at the top level): a registry environment through a chosen adapter
(``"parallel"``, ``"aec"``, ``"gym"`` or ``"vector"``), with wrappers applied. Keyword arguments
are split by name between the adapter's options and the environment's constructor (an unknown
one is a ``TypeError`` listing both sets). Nothing here touches the network.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from zooport.adapters.wrappers.composition import adapter_api, apply_wrappers
from zooport.errors import RegistryError

__all__ = ["make", "resolve_id"]

_ID = re.compile(r"^(?:(?P<namespace>[^/]+)/)?(?P<name>[^/]+?)(?:-v(?P<version>\d+))?$")


def _fold(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


def resolve_id(env_id: str) -> str:
    """The ``default_registry`` identifier of ``env_id``.

    Accepted: a registry identifier (``"Tag"``), the Gymnasium form
    (``"zooport/Tag-v0"``) and the PettingZoo form (``"zooport/tag-v0"``,
    ``"zooport/grid_world-v0"``); names match ignoring case and ``_``/``-``.

    Raises:
        RegistryError: another namespace or version, or no such environment (the message
            suggests close names).

    Example:
        >>> resolve_id("zooport/grid_world-v0"), resolve_id("Tag"), resolve_id("zooport/Basic-v0")
        ('GridWorld', 'Tag', 'Basic')
    """
    from zooport.envs.registry import default_registry

    if not isinstance(env_id, str):
        raise RegistryError(f"Expect an environment id str, actually: {env_id!r}")
    match = _ID.match(env_id.strip())
    if match is None:
        raise RegistryError(
            f"{env_id!r} is not an environment id; expected 'Name' or 'zooport/Name-v0'"
        )
    namespace, name, version = match["namespace"], match["name"], match["version"]
    if namespace not in (None, "zooport"):
        raise RegistryError(
            f"{env_id!r}: zooport.make builds zooport environments ('Name' or "
            f"'zooport/Name-v0'), not namespace {namespace!r}"
        )
    if version not in (None, "0"):
        raise RegistryError(f"{env_id!r}: zooport's environments are version 0, not v{version}")
    if name in default_registry:
        return name
    folded = {_fold(identifier): identifier for identifier in default_registry}
    if _fold(name) in folded:
        return folded[_fold(name)]
    default_registry[name]  # raises UnknownEnvironmentError with close matches
    return name  # pragma: no cover - the line above raised


def make(
    id: str,  # noqa: A002 - the name Gymnasium, PettingZoo and MATE use
    *,
    api: str = "parallel",
    wrappers: Sequence[Any] = (),
    **kwargs: Any,
) -> Any:
    """A registry environment through the ``api`` adapter, wrapped by ``wrappers``.

    Args:
        id: a registry id (see :func:`resolve_id`).
        api: ``"parallel"`` (default), ``"aec"``, ``"gym"`` or ``"vector"``.
        wrappers: wrapper classes, ``WrapperSpec(cls, *args, **kwargs)`` s or callables
            ``env -> env``, first = innermost. zooport's Parallel wrappers use their
            gym/vector form where the env is one (``DiscretizeActions``,
            ``RescaleObservations``) and are rejected where they have none; for
            ``api="aec"`` they come first and the Parallel adapter they wrap is converted
            with ``parallel_to_aec`` after them. ``SingleAgentView`` (api="parallel" only)
            turns the env into a ``gymnasium.Env``; Gymnasium wrappers may follow it.
        **kwargs: adapter options and environment constructor arguments, split by name.
            ``workers=K`` (not for ``api="gym"``) builds K cores in a
            :class:`~zooport.envs.CorePool` behind the adapter (core ``i`` gets ``seed + i``;
            with ``api="vector"`` and ``num_envs`` the agents are shared out over the
            cores); ``pool_options={...}`` are further ``CorePool`` arguments.

    Raises:
        RegistryError: an unknown id.
        ArgumentError: an unknown ``api``.
        ArgumentTypeError: a keyword neither the adapter nor the environment takes (the message
            lists both), or a wrapper item that is not callable.
        WrapperOrderError: a wrapper where it cannot stand (a channel without a MessageBus
            beneath it, a second copy of a wrapper applied once, a Parallel-only wrapper
            for ``api="gym"``, ...).

    Example:
        >>> from zooport.adapters.wrappers import MessageBus, TerminationPolicy, WrapperSpec
        >>> env = make("zooport/Tag-v0", seed=0, n_runners=2, max_cycles=50,
        ...            wrappers=[MessageBus, WrapperSpec(TerminationPolicy, "majority")])
        >>> str(env), env.possible_agents
        ('TerminationPolicy<MessageBus<zooport_tag>>',
         ['runner_0', 'runner_1', 'tagger_2', 'tagger_3'])
        >>> make("Tag", speed=2)
        Traceback (most recent call last):
        ...
        zooport.errors.ArgumentTypeError: Tag() got an unexpected keyword argument 'speed' ...
    """
    built_api = adapter_api(wrappers, api)
    env = _build(resolve_id(id), built_api, kwargs)
    try:
        return apply_wrappers(env, wrappers, api=api)
    except BaseException:
        env.close()
        raise


def _build(registry_id: str, api: str, kwargs: dict[str, Any]) -> Any:
    from zooport.adapters.registration import make_adapter

    return make_adapter(registry_id, api, kwargs)
