"""What the command line works on: a registry id, ``module:attr`` or ``path/to/file.py:attr``.
As with uvicorn's ``module:attr``, the working directory comes first on the module search path;
a file is imported by name from its directory, which joins the path so that worker processes
and pickles find it too."""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zooport.checks import one_line
from zooport.cli.common import UsageError
from zooport.envs.capabilities import accepts_keyword, keyword_parameters
from zooport.envs.registry import BASE_ENV_MEMBERS
from zooport.errors import ZooportError, a_type

_MODULE_ATTR = re.compile(r"^(?P<module>[A-Za-z_][\w.]*):(?P<attr>[A-Za-z_][\w.]*)$")
_FILE_ATTR = re.compile(r"^(?P<file>.+\.py):(?P<attr>[A-Za-z_][\w.]*)$")


@dataclass
class Target:
    """An environment the CLI works on: its name as given, a factory and its registry entry
    (None for a factory)."""

    name: str
    factory: Callable[..., Any]
    entry: Any = None
    kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def expected_reward(self) -> float | None:
        """The registry's expected reward, or the factory's ``expected_reward`` attribute."""
        if self.entry is not None:
            with contextlib.suppress(Exception):
                return self.entry.expected_reward
            return None
        value = getattr(getattr(self.factory, "func", self.factory), "expected_reward", None)
        return float(value) if isinstance(value, (int, float)) else None

    def make(self, **extra: Any) -> Any:
        """A fresh environment; a failure the user can fix is a :class:`UsageError`."""
        try:
            env = self.factory(**extra)
        except (ZooportError, TypeError, ValueError) as exc:
            raise UsageError(f"making {self.name} failed: {one_line(exc)}") from None
        missing = [member for member in BASE_ENV_MEMBERS if not hasattr(env, member)]
        if missing:
            raise UsageError(
                f"{self.name}: expected a factory returning a BaseEnv, got "
                f"{a_type(env)} (it has no {', '.join(missing)})"
            )
        return env

    def make_seeded(self, seed: int) -> Any:
        return self.make(seed=seed) if accepts_keyword(self.factory, "seed") else self.make()

    def pool(self, seed: int, workers: int, side_channels: Any = None) -> Any:
        """``workers`` copies of the core in a :class:`~zooport.envs.CorePool`, core ``i``
        seeded ``seed + i`` (``--workers`` of train and serve)."""
        from zooport.envs.core_pool import CorePool

        seeded = accepts_keyword(self.factory, "seed")
        factories = [
            functools.partial(self.factory, seed=seed + i) if seeded else self.factory
            for i in range(workers)
        ]
        try:
            return CorePool(factories, side_channels=side_channels)
        except ZooportError as exc:
            raise UsageError(f"--workers {workers}: {exc}") from None

    @property
    def gym_preset(self) -> dict[str, Any] | None:
        """A registry built-in's single-agent ``gym.make`` keywords."""
        if self.entry is None:
            return None
        from zooport.adapters.registration import BUILTIN_GYM_ENVS

        for builtin in BUILTIN_GYM_ENVS:
            if builtin.registry_id == self.name:
                return dict(builtin.kwargs)
        return None


def parse_kwargs(text: str | None) -> dict[str, Any]:
    """``--kwargs``: a JSON object, as a dict.

    Example:
        >>> parse_kwargs('{"n_agents": 4}')
        {'n_agents': 4}
    """
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"--kwargs is not valid JSON ({exc.msg} at column {exc.colno}): {text}"
        ) from None
    if not isinstance(value, dict):
        raise UsageError(f"--kwargs must be a JSON object like '{{\"n_agents\": 4}}', got {text}")
    return value


def _check_keywords(target: Callable[..., Any], kwargs: Mapping[str, Any], name: str) -> None:
    accepted = keyword_parameters(target)
    unknown = sorted(k for k in kwargs if accepted is not None and k not in accepted)
    if unknown:
        raise UsageError(f"{name} takes no keyword {unknown}; it takes {sorted(accepted or ())}")


def resolve_target(spec: str, kwargs: Mapping[str, Any] | None = None) -> Target:
    """A registry id, ``module:attr`` or ``path/to/file.py:attr`` as a :class:`Target`;
    ``kwargs`` are checked against the factory's signature.

    Example:
        >>> target = resolve_target("Basic", {"n_agents": 2})
        >>> target.make().n_agents, target.expected_reward
        (2, 0.9)
    """
    from zooport.envs.registry import LocalRegistryEntry, default_registry
    from zooport.errors import RegistryError

    kwargs = dict(kwargs or {})
    if ":" in spec:
        obj = _load_factory(spec)
        _check_keywords(obj, kwargs, spec)
        return Target(spec, functools.partial(obj, **kwargs), None, kwargs)
    try:
        entry = default_registry[spec]
        loaded = entry.load() if isinstance(entry, LocalRegistryEntry) else None
    except RegistryError as exc:
        raise UsageError(str(exc)) from None
    if isinstance(entry, LocalRegistryEntry) and loaded is not None:
        _check_keywords(loaded, kwargs, spec)
        factory = functools.partial(loaded, **{**entry.kwargs, **kwargs})
    else:
        factory = functools.partial(entry.make, **kwargs)
    return Target(spec, factory, entry, kwargs)


def _load_factory(spec: str) -> Callable[..., Any]:
    file_match = _FILE_ATTR.match(spec)
    if file_match is not None:
        module = _import_file(Path(file_match["file"]), spec)
        module_name, attr = module.__name__, file_match["attr"]
    else:
        match = _MODULE_ATTR.match(spec)
        if match is None:
            raise UsageError(
                "expected a registry id, 'package.module:factory' or 'path/to/file.py:factory', "
                f"got {spec!r}"
            )
        module_name, attr = match["module"], match["attr"]
        _on_path(os.getcwd())
        module = _import(module_name, spec)
    obj: Any = module
    try:
        for part in attr.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        raise UsageError(f"module {module_name!r} has no attribute {attr!r}") from None
    if not callable(obj):
        raise UsageError(f"{spec} is {a_type(obj)}, not a callable returning a BaseEnv")
    return obj


def _on_path(directory: str) -> None:
    """Puts ``directory`` first on the module search path unless it is on it by name ("" is
    not: it follows the working directory, which a worker process may not share)."""
    for entry in filter(None, sys.path):
        with contextlib.suppress(OSError):
            if os.path.samefile(entry, directory):
                return
    sys.path.insert(0, directory)


def _import(module_name: str, spec: str) -> Any:
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(
            f"cannot import {module_name!r} (from {spec!r}, looked in the working directory "
            f"{os.getcwd()!r} first): {exc}"
        ) from None
    except Exception as exc:  # the user's module raised while importing
        raise UsageError(f"importing {module_name!r} failed: {one_line(exc)}") from None


def _import_file(path: Path, spec: str) -> Any:
    if not path.is_file():
        raise UsageError(f"expected an existing Python file in {spec!r}, got {str(path)!r}")
    file = path.resolve()
    name = file.stem
    if not name.isidentifier():
        raise UsageError(
            f"expected a file whose name is a Python module name in {spec!r}, got {path.name!r}"
        )
    loaded = sys.modules.get(name)
    if loaded is not None and not _is_file_of(loaded, file):
        raise UsageError(
            f"{spec}: a module named {name!r} is already imported from "
            f"{getattr(loaded, '__file__', None) or 'the interpreter'}; rename {path.name}"
        )
    _on_path(str(file.parent))
    module = _import(name, spec)
    if not _is_file_of(module, file):
        # A module of that name earlier in the import system (a built-in, a frozen module).
        raise UsageError(
            f"{spec}: importing {name!r} gave {getattr(module, '__file__', None) or 'a built-in'}"
            f", not {str(file)!r}; rename {path.name}"
        )
    return module


def _is_file_of(module: Any, file: Path) -> bool:
    origin = getattr(module, "__file__", None)
    with contextlib.suppress(OSError):
        return origin is not None and Path(origin).resolve() == file
    return False
