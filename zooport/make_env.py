"""``zooport.make``: a registry environment through a chosen adapter, with wrappers applied;
keyword arguments are split by name between the adapter and the environment's constructor."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from zooport.adapters.wrappers import adapter_api, apply_wrappers
from zooport.errors import RegistryError

__all__ = ["make", "resolve_id"]

_ID = re.compile(r"^(?:(?P<namespace>[^/]+)/)?(?P<name>[^/]+?)(?:-v(?P<version>\d+))?$")


def _fold(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


def resolve_id(env_id: str) -> str:
    """The ``default_registry`` id of ``"Tag"``, ``"zooport/Tag-v0"`` or ``"zooport/tag-v0"``."""
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
    if name not in default_registry:
        name = {_fold(known): known for known in default_registry}.get(_fold(name), name)
    return default_registry[name].identifier  # else UnknownEnvironmentError, with close matches


def make(
    id: str,  # noqa: A002 - the name Gymnasium, PettingZoo and MATE use
    *,
    api: str = "parallel",
    wrappers: Sequence[Any] = (),
    **kwargs: Any,
) -> Any:
    """A registry environment through the ``api`` adapter (``"parallel"``, ``"aec"``, ``"gym"``
    or ``"vector"``) wrapped by ``wrappers`` (first = innermost); ``kwargs`` are adapter options
    and constructor arguments, split by name."""
    from zooport.adapters.registration import _adapt, make_adapter

    adapter = adapter_api(wrappers, api)  # the wrappers are checked before the id
    return _adapt(apply_wrappers, make_adapter(resolve_id(id), adapter, kwargs), wrappers, api=api)
