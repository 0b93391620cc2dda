"""What the ``zooport`` command line, :mod:`zooport.play` and :mod:`zooport.training` work on.

Classes:
    UsageError: a mistake the user can fix (unknown environment, bad option or JSON, a
        missing optional dependency); the CLI prints it as one line and exits 2.
    Target: an environment to work on: its name, a factory and its registry entry.

Functions:
    resolve_target: a registry identifier or ``module:attr`` (plus keyword arguments) as a
        :class:`Target`.
    parse_kwargs: ``--kwargs`` JSON as a dict.
    require: import an optional dependency, or raise a :class:`UsageError` naming its extra.
    reset_core: reset a core, seeded when its class declares ``seedable``.
    check_output_path: a file a run will write at its end, checked before the run starts.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import os
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zooport.checks import one_line
from zooport.envs.registry import BASE_ENV_MEMBERS, keyword_parameters
from zooport.envs.seeding import reset_core
from zooport.errors import ZooportError

__all__ = [
    "UsageError",
    "Target",
    "resolve_target",
    "parse_kwargs",
    "require",
    "reset_core",
    "check_output_path",
]

_ENTRY_POINT = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class UsageError(ZooportError):
    """A mistake the user can fix; the CLI prints it as one line and exits 2."""


def require(module: str, extra: str, purpose: str) -> Any:
    """Imports ``module``, or raises a :class:`UsageError` that names the extra to install.

    Example:
        >>> require("json", "core", "reading JSON").__name__
        'json'
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".")[0]
        raise UsageError(
            f"{purpose} needs {package}; install it with `pip install zooport[{extra}]`"
        ) from None


def check_output_path(
    path: str | os.PathLike[str], option: str, suffixes: Collection[str] | None = None
) -> Path:
    """``path`` as a file the run can write when it ends; checked before the run starts.

    Args:
        path: where the run will write.
        option: the command-line option that gave it, for the message (``"--plot"``).
        suffixes: the file suffixes the writer understands (lower case, with the dot); None
            for any.

    Raises:
        UsageError: the path is a directory, its directory does not exist or cannot be
            written, the file exists and cannot be written, or its suffix is not one of
            ``suffixes``.

    Example:
        >>> check_output_path("/no/such/directory/curve.png", "--plot")
        Traceback (most recent call last):
        ...
        zooport.targets.UsageError: --plot: expected a file in an existing directory, got ...
    """
    file = Path(path)
    if file.is_dir():
        raise UsageError(f"{option}: expected a file name, got the directory {str(path)!r}")
    if suffixes is not None and file.suffix.lower() not in suffixes:
        raise UsageError(
            f"{option}: expected a file name ending in one of {sorted(suffixes)}, got {str(path)!r}"
        )
    directory = file.parent
    if not directory.is_dir():
        raise UsageError(
            f"{option}: expected a file in an existing directory, got {str(path)!r} "
            f"({str(directory)!r} does not exist)"
        )
    if not os.access(directory, os.W_OK | os.X_OK) or (
        file.exists() and not os.access(file, os.W_OK)
    ):
        raise UsageError(f"{option}: expected a file that can be written, got {str(path)!r}")
    return file


@dataclass
class Target:
    """An environment the CLI works on.

    Attributes:
        name: the registry identifier or the ``module:attr`` string.
        factory: makes a fresh environment; keywords update the user's ``--kwargs``.
        entry: the registry entry, or None for a ``module:attr`` factory.
        kwargs: the user's keyword arguments.
    """

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
        """A fresh environment; a failure the user can fix becomes a :class:`UsageError`.

        That includes a factory that returns something other than a ``BaseEnv``
        (``os:getcwd``).
        """
        try:
            env = self.factory(**extra)
        except (ZooportError, TypeError, ValueError) as exc:
            raise UsageError(f"making {self.name} failed: {one_line(exc)}") from None
        missing = [member for member in BASE_ENV_MEMBERS if not hasattr(env, member)]
        if missing:
            raise UsageError(
                f"{self.name}: expected a factory returning a BaseEnv, got a "
                f"{type(env).__name__} (it has no {', '.join(missing)})"
            )
        return env

    def make_seeded(self, seed: int) -> Any:
        """A fresh environment, given ``seed=`` when its factory takes that keyword."""
        from zooport.checks import accepts_keyword

        return self.make(seed=seed) if accepts_keyword(self.factory, "seed") else self.make()

    @property
    def gym_preset(self) -> dict[str, Any] | None:
        """The built-in's single-agent ``gym.make`` keywords, for a registry built-in."""
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
        raise UsageError(f"{name} takes no keyword {unknown}; it takes {sorted(accepted)}")


def resolve_target(spec: str, kwargs: Mapping[str, Any] | None = None) -> Target:
    """A registry identifier or a ``module:attr`` factory, with its keyword arguments.

    Raises:
        UsageError: an unknown identifier (with close matches), a factory that cannot be
            imported, or keywords the factory does not take.

    Example:
        >>> target = resolve_target("Basic", {"n_agents": 2})
        >>> target.make().n_agents, target.expected_reward
        (2, 0.9)
    """
    from zooport.envs.registry import LocalRegistryEntry, default_registry
    from zooport.errors import RegistryError

    kwargs = dict(kwargs or {})
    if ":" in spec:
        if not _ENTRY_POINT.match(spec):
            raise UsageError(f"expected a registry id or 'package.module:factory', got {spec!r}")
        module_name, _, attr = spec.partition(":")
        try:
            obj: Any = importlib.import_module(module_name)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except ImportError as exc:
            raise UsageError(f"cannot import {module_name!r} (from {spec!r}): {exc}") from None
        except AttributeError:
            raise UsageError(f"module {module_name!r} has no attribute {attr!r}") from None
        except Exception as exc:  # the user's module raised while importing
            raise UsageError(f"importing {module_name!r} failed: {one_line(exc)}") from None
        if not callable(obj):
            raise UsageError(
                f"{spec} is a {type(obj).__name__}, not a callable returning a BaseEnv"
            )
        _check_keywords(obj, kwargs, spec)
        return Target(spec, functools.partial(obj, **kwargs), None, kwargs)
    try:
        entry = default_registry[spec]
    except RegistryError as exc:
        raise UsageError(str(exc)) from None
    if isinstance(entry, LocalRegistryEntry):
        try:
            loaded = entry.load()
        except RegistryError as exc:
            raise UsageError(str(exc)) from None
        _check_keywords(loaded, kwargs, spec)
        factory = functools.partial(loaded, **{**entry.kwargs, **kwargs})
    else:
        factory = functools.partial(entry.make, **kwargs)
    return Target(spec, factory, entry, kwargs)
