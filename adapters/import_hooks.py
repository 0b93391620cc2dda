"""Run a function once a module is imported, without importing it first.

Functions:
    when_imported: calls ``callback()`` at once where the module is already imported, else
        right after its first import completes (whoever imports it).

``import zooport`` registers zooport's environments with Gymnasium and PettingZoo this way:
registering needs those libraries, and importing them would cost ``import zooport`` (and
``import zooport.envs``, whose parent package is ``zooport``) a third of a second. Whichever
comes first, ``import gymnasium`` or ``import zooport``, ``gym.make("zooport/Basic-v0")``
works after both.

The hook is a finder at the front of ``sys.meta_path`` that answers for the awaited module
names only: it finds the module's spec with the finders behind it and wraps its loader, so
that the callbacks run when the module's code has run. The module keeps its real loader
(``__loader__`` and ``__spec__.loader``), and the finder leaves ``sys.meta_path`` once
nothing is awaited. A callback that raises is reported as a warning: it never breaks the
import it follows.
"""

from __future__ import annotations

import importlib.abc
import sys
import threading
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

__all__ = ["when_imported"]

_lock = threading.Lock()


def when_imported(name: str, callback: Callable[[], Any]) -> None:
    """Calls ``callback()`` once the module ``name`` is imported (at once if it is).

    Example:
        >>> calls = []
        >>> when_imported("json", lambda: calls.append("json"))  # imported long ago
        >>> calls
        ['json']
    """
    if name in sys.modules:
        _run(name, [callback])
        return
    with _lock:
        finder = next((f for f in sys.meta_path if isinstance(f, _AfterImport)), None)
        if finder is None:
            finder = _AfterImport()
            sys.meta_path.insert(0, finder)
        finder.waiting.setdefault(name, []).append(callback)


def _run(name: str, callbacks: list[Callable[[], Any]]) -> None:
    for callback in callbacks:
        try:
            callback()
        except Exception as error:  # noqa: BLE001 - never break the user's import
            warnings.warn(
                f"zooport: a hook run after importing {name} failed: "
                f"{type(error).__name__}: {error}",
                RuntimeWarning,
                stacklevel=2,
            )


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds the awaited modules through the other finders and wraps their loaders."""

    def __init__(self) -> None:
        self.waiting: dict[str, list[Callable[[], Any]]] = {}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in self.waiting:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec  # nothing to wrap (a namespace package); the callbacks keep waiting
        with _lock:
            callbacks = self.waiting.pop(fullname, [])
            if not self.waiting and self in sys.meta_path:
                sys.meta_path.remove(self)
        spec.loader = _RunAfter(loader, fullname, callbacks)
        return spec


class _RunAfter(importlib.abc.Loader):
    """A loader that runs the module with its own loader, then the callbacks."""

    def __init__(self, loader: Any, name: str, callbacks: list[Callable[[], Any]]) -> None:
        self.loader = loader
        self.name = name
        self.callbacks = callbacks

    def create_module(self, spec: Any) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        # The module keeps its real loader (importlib.resources, reload and pickle read it).
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        _run(self.name, self.callbacks)
