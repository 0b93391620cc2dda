"""What the command line works on: a registry id, ``module:attr`` (the working directory first on
``sys.path``, as uvicorn does) or ``path/to/file.py:attr`` (its directory joins ``sys.path``)."""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zooport.checks import one_line
from zooport.cli.common import UsageError
from zooport.envs.capabilities import accepts_keyword, keyword_parameters
from zooport.envs.registry import BASE_ENV_MEMBERS, LocalRegistryEntry, default_registry
from zooport.errors import RegistryError, ZooportError, a_type

_MODULE_ATTR = re.compile(r"^(?P<module>[A-Za-z_][\w.]*):(?P<attr>[A-Za-z_][\w.]*)$")
_FILE_ATTR = re.compile(r"^(?P<file>.+\.py):(?P<attr>[A-Za-z_][\w.]*)$")


@contextlib.contextmanager
def as_usage(prefix: str) -> Iterator[None]:
    try:
        yield
    except UsageError:
        raise
    except (ZooportError, TypeError, ValueError) as exc:
        raise UsageError(f"{prefix}: {one_line(exc)}") from None


@dataclass
class Target:
    """An environment the CLI works on: its name as given, a factory and its registry entry."""

    name: str
    factory: Callable[..., Any]
    entry: Any = None
    kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def expected_reward(self) -> float | None:
        if self.entry is not None:
            with contextlib.suppress(Exception):
                return self.entry.expected_reward
            return None
        value = getattr(getattr(self.factory, "func", self.factory), "expected_reward", None)
        return float(value) if isinstance(value, (int, float)) else None

    @property
    def gym_preset(self) -> dict[str, Any] | None:
        """A registry built-in's single-agent ``gym.make`` keywords, else None."""
        from zooport.adapters.registration import builtin_envs

        cls = builtin_envs().get(self.name)
        return None if self.entry is None or cls is None else dict(cls.declaration.gym_kwargs)

    def make(
        self, seed: int | None = None, workers: int | None = None, side_channels: Any = None,
        **extra: Any,
    ) -> Any:  # fmt: skip
        """A fresh environment, or ``workers`` copies in a CorePool (copy ``i``: ``seed + i``)."""
        seed = seed if seed is not None and accepts_keyword(self.factory, "seed") else None
        if workers is not None:
            from zooport.envs.core_pool import CorePool

            seeds = [{} if seed is None else {"seed": seed + i} for i in range(workers)]
            factories = [functools.partial(self.factory, **extra, **s) for s in seeds]
            try:
                return CorePool(factories, side_channels=side_channels)
            except ZooportError as exc:
                raise UsageError(f"--workers {workers}: {exc}") from None
        if seed is not None:
            extra["seed"] = seed
        if side_channels is not None and accepts_keyword(self.factory, "side_channels"):
            extra["side_channels"] = side_channels
        with as_usage(f"making {self.name} failed"):
            env = self.factory(**extra)
        missing = [member for member in BASE_ENV_MEMBERS if not hasattr(env, member)]
        if missing:
            raise UsageError(
                f"{self.name}: expected a factory returning a BaseEnv, got "
                f"{a_type(env)} (it has no {', '.join(missing)})"
            )
        return env


def parse_kwargs(text: str | None) -> dict[str, Any]:
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


def resolve_target(spec: str, kwargs: Mapping[str, Any] | None = None) -> Target:
    """``spec`` as a :class:`Target`; ``kwargs`` are checked against the factory's signature."""
    kwargs, entry, defaults = dict(kwargs or {}), None, {}
    if ":" in spec:
        factory = _load_factory(spec)
    else:
        try:
            entry = default_registry[spec]
            loaded = entry.load() if isinstance(entry, LocalRegistryEntry) else None
        except RegistryError as exc:
            raise UsageError(str(exc)) from None
        if not isinstance(entry, LocalRegistryEntry) or loaded is None:  # its make() takes them
            return Target(spec, functools.partial(entry.make, **kwargs), entry, kwargs)
        factory, defaults = loaded, entry.kwargs
    accepted = keyword_parameters(factory)
    unknown = sorted(k for k in kwargs if accepted is not None and k not in accepted)
    if unknown:
        raise UsageError(f"{spec} takes no keyword {unknown}; it takes {sorted(accepted or ())}")
    return Target(spec, functools.partial(factory, **{**defaults, **kwargs}), entry, kwargs)


def _load_factory(spec: str) -> Callable[..., Any]:
    match = _FILE_ATTR.match(spec) or _MODULE_ATTR.match(spec)
    if match is None:
        raise UsageError(
            "expected a registry id, 'package.module:factory' or 'path/to/file.py:factory', "
            f"got {spec!r}"
        )
    path = Path(match["file"]) if "file" in match.groupdict() else None
    if path is None:
        name, directory = match["module"], os.getcwd()
    elif not path.is_file():
        raise UsageError(f"expected an existing Python file in {spec!r}, got {str(path)!r}")
    elif not path.stem.isidentifier():
        raise UsageError(
            f"expected a file whose name is a Python module name in {spec!r}, got {path.name!r}"
        )
    else:  # imported by name from its directory, which must give this very file
        name, directory = path.stem, str(path.resolve().parent)
    # "" on sys.path is not the directory: it follows the working directory, which a worker
    # process may not share.
    if not any(_same_file(entry, directory) for entry in sys.path if entry):
        sys.path.insert(0, directory)
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        raise UsageError(
            f"cannot import {name!r} (from {spec!r}, looked in the working directory "
            f"{os.getcwd()!r} first): {exc}"
        ) from None
    except Exception as exc:  # the user's module raised while importing
        raise UsageError(f"importing {name!r} failed: {one_line(exc)}") from None
    if path is not None and not _same_file(getattr(module, "__file__", None), path):
        # Imported before from elsewhere, or a built-in or frozen module of that name.
        raise UsageError(
            f"{spec}: a module named {path.stem!r} is already imported from "
            f"{getattr(module, '__file__', None) or 'the interpreter'}; rename {path.name}"
        )
    try:
        obj = functools.reduce(getattr, match["attr"].split("."), module)
    except AttributeError:
        raise UsageError(f"module {module.__name__!r} has no attribute {match['attr']!r}") from None
    if not callable(obj):
        raise UsageError(f"{spec} is {a_type(obj)}, not a callable returning a BaseEnv")
    return obj


def _same_file(a: str | os.PathLike[str] | None, b: str | os.PathLike[str]) -> bool:
    with contextlib.suppress(OSError):
        return a is not None and os.path.samefile(a, b)
    return False
