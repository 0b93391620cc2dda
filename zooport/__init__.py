"""zooport: one batched multi-agent simulation, every RL library. Importing it registers the
built-ins with Gymnasium (``zooport/<Name>-v0``) and PettingZoo (``zooport/<name>-v0``) once
each is imported; it imports neither itself and never touches the network."""

from __future__ import annotations

import importlib as _importlib
import os as _os
import sys as _sys

from zooport import errors as _errors
from zooport.errors import *  # noqa: F403  (every zooport error, as zooport.<Name>)

# ruff: noqa: F405  (__path__ and the lazy names in __all__ are no star-imported names)

# In a source checkout (which shadows an installed zooport), envs/ and adapters/ are subpackages.
_checkout = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if _os.path.isfile(_os.path.join(_checkout, "envs", "base_env.py")) and _checkout not in __path__:
    __path__.append(_checkout)

__version__ = "0.1.0"

if _errors.TYPE_CHECKING:  # False: importing typing would cost `import zooport` 13 ms
    from collections.abc import Callable as _Callable, Iterable as _Iterable, Mapping as _Mapping
    from typing import Any as _Any


def _lazy_attributes(
    package: str, modules: _Mapping[str, _Iterable[str]]
) -> tuple[_Callable[[str], _Any], _Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose ``modules``' names load on first use,
    as in ``gymnasium.wrappers``."""
    table = {name: f"{package}.{module}" for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> _Any:
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(_importlib.import_module(table[name]), name)
        setattr(_sys.modules[package], name, value)  # found directly from now on
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(_sys.modules[package]), *table})

    return __getattr__, __dir__


_WAITING = {"gymnasium": "register_builtin_envs", "pettingzoo": "register_pettingzoo_envs"}


class _RegisterAfterImport:
    # Registers zooport's environments right after gymnasium's (pettingzoo's) module ran, by
    # wrapping its loader's exec_module: importing gymnasium here would cost a third of a second,
    # and torchrl calls find_spec("gymnasium") long before, or instead of, importing it.

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

# As in gymnasium.wrappers, the names below (with gymnasium and pettingzoo) load on first use.
_LAZY = {"adapters.wrappers": ("WrapperSpec", "has_wrapper"), "make_env": ("make",)}
__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY)
__all__ = ["WrapperSpec", "has_wrapper", "make", "__version__"]
__all__ += _errors.__all__
