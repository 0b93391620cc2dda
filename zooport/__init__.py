"""zooport: one batched multi-agent simulation, every RL library. Importing it registers the
built-ins with Gymnasium and PettingZoo once each is imported (it imports neither itself)."""

from __future__ import annotations

import os as _os
import sys as _sys

from zooport import errors as _errors
from zooport._lazy import lazy_attributes as _lazy_attributes
from zooport.errors import *  # noqa: F403  (every zooport error, as zooport.<Name>)

# ruff: noqa: F405  (__path__ and the lazy names in __all__ are no star-imported names)

# In a source checkout (which shadows an installed zooport), envs/ and adapters/ are subpackages.
_checkout = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if _os.path.isfile(_os.path.join(_checkout, "envs", "base_env.py")) and _checkout not in __path__:
    __path__.append(_checkout)

__version__ = "0.1.0"

if _errors.TYPE_CHECKING:  # False: importing typing would cost `import zooport` 13 ms
    from collections.abc import Sequence as _Sequence
    from typing import Any as _Any

_WAITING = {"gymnasium": "register_builtin_envs", "pettingzoo": "register_pettingzoo_envs"}


class _RegisterAfterImport:
    # Registers zooport's envs once gymnasium (pettingzoo) has run, by wrapping its loader: its
    # import costs 0.3 s, and torchrl calls find_spec("gymnasium") long before importing it.

    def find_spec(self, name: str, path: _Any = None, target: _Any = None) -> _Any:
        if name not in _WAITING:
            return None
        finders = (f for f in _sys.meta_path if f is not self and hasattr(f, "find_spec"))
        spec = next(filter(None, (f.find_spec(name, path, target) for f in finders)), None)
        loader: _Any = getattr(spec, "loader", None)
        run = getattr(loader, "exec_module", None)
        if run is not None:

            def exec_module(module: _Any) -> None:
                del loader.exec_module  # the loader's own method from now on
                run(module)
                _register(name)

            try:
                loader.exec_module = exec_module
            except AttributeError:  # a loader without __dict__: the import goes on unregistered
                pass
        return spec


def _register(name: str) -> None:
    function = _WAITING.pop(name, None)
    if not _WAITING:
        _sys.meta_path[:] = [f for f in _sys.meta_path if not isinstance(f, _RegisterAfterImport)]
    if function is None:
        return
    try:
        from zooport.adapters import registration

        getattr(registration, function)()
    except Exception as error:  # noqa: BLE001 - never break the import it follows
        import warnings

        warnings.warn(f"zooport: registering with {name} failed: {error!r}", RuntimeWarning, 2)


_sys.meta_path.insert(0, _RegisterAfterImport())  # _register takes it out when none waits
for _name in [n for n in _WAITING if n in _sys.modules]:
    _register(_name)


def resolve_id(env_id: str) -> str:
    """The ``default_registry`` id of ``"Tag"``, ``"zooport/Tag-v0"`` or ``"zooport/tag-v0"``."""
    import re

    from zooport.envs.registry import default_registry

    if not isinstance(env_id, str):
        raise RegistryError(f"Expect an environment id str, actually: {env_id!r}")
    match = re.match(
        r"^(?:(?P<namespace>[^/]+)/)?(?P<name>[^/]+?)(?:-v(?P<version>\d+))?$", env_id.strip()
    )
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
    if name not in default_registry:  # "tag" or "ball_balance" for "BallBalance"
        folded = {re.sub(r"[^0-9a-z]", "", known.lower()): known for known in default_registry}
        name = folded.get(re.sub(r"[^0-9a-z]", "", name.lower()), name)
    return default_registry[name].identifier  # else UnknownEnvironmentError, with close matches


def make(
    id: str,  # noqa: A002 - the name Gymnasium, PettingZoo and MATE use
    *,
    api: str = "parallel",
    wrappers: _Sequence[_Any] = (),
    **kwargs: _Any,
) -> _Any:
    """A registry environment through the ``api`` adapter, wrapped by ``wrappers`` (first =
    innermost); ``kwargs`` are adapter options and constructor arguments, split by name."""
    from zooport.adapters.registration import _adapt, make_adapter
    from zooport.adapters.wrappers import adapter_api, apply_wrappers

    adapter = adapter_api(wrappers, api)  # the wrappers are checked before the id
    return _adapt(apply_wrappers, make_adapter(resolve_id(id), adapter, kwargs), wrappers, api=api)


# As in gymnasium.wrappers, the names below (with gymnasium and pettingzoo) load on first use.
_LAZY = {"adapters.wrappers": ("WrapperSpec", "has_wrapper")}
__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY)
__all__ = ["WrapperSpec", "has_wrapper", "make", "__version__"]
__all__ += _errors.__all__
