"""The entries of a registry, in the shape of ML-Agents' ``mlagents_envs.registry``: an
environment made in this process, or a Unity binary by url (downloaded and launched by
``mlagents_envs`` only when asked)."""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from zooport.envs.capabilities import keyword_parameters
from zooport.errors import ArgumentTypeError, RegistryError, a_type

if TYPE_CHECKING:
    from zooport.envs.base_env import BaseEnv

__all__ = ["BaseRegistryEntry", "LocalRegistryEntry", "RemoteRegistryEntry", "BASE_ENV_MEMBERS"]

#: A ``"package.module:attr"`` entry point.
ENTRY_POINT = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
#: What an object needs to be taken for a ``BaseEnv`` (ML-Agents 0.25 and later).
BASE_ENV_MEMBERS = ("behavior_specs", "reset", "step", "get_steps", "set_actions", "close")
#: The fields of a local and of a remote entry (as a registry file spells them).
LOCAL_KEYS = ("entry_point", "expected_reward", "description", "max_episode_steps", "kwargs")
REMOTE_KEYS = (
    "expected_reward", "description", "linux_url", "darwin_url", "win_url", "additional_args",
)  # fmt: skip
URL_KEYS = ("linux_url", "darwin_url", "win_url")


class BaseRegistryEntry(ABC):
    """One environment of a registry: its unique ``identifier``, the ``expected_reward`` (mean
    episode reward) at which its task counts as solved, and a ``description``."""

    def __init__(
        self, identifier: str, expected_reward: float | None, description: str | None
    ) -> None:
        if not isinstance(identifier, str) or not identifier.strip():
            raise RegistryError(
                f"Expected a registry identifier to be a non-empty str, actually: {identifier!r}"
            )
        where = f"registry entry {identifier!r}"
        if expected_reward is not None and (
            isinstance(expected_reward, bool) or not isinstance(expected_reward, (int, float))
        ):
            raise RegistryError(
                f"{where}: expected_reward must be a number, got {expected_reward!r}"
            )
        if description is not None and not isinstance(description, str):
            raise RegistryError(
                f"{where}: description must be a str, got {type(description).__name__}"
            )
        self._identifier = identifier
        self._expected_reward = None if expected_reward is None else float(expected_reward)
        self._description = description

    @property
    def identifier(self) -> str:
        """The unique name of the entry."""
        return self._identifier

    @property
    def expected_reward(self) -> float | None:
        """The mean episode reward at which the task counts as solved, if known."""
        return self._expected_reward

    @property
    def description(self) -> str | None:
        """A human-readable description of the environment, if any."""
        return self._description

    @abstractmethod
    def make(self, **kwargs: Any) -> BaseEnv:
        """Creates the environment; ``kwargs`` go to its constructor."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._identifier!r})"


class LocalRegistryEntry(BaseRegistryEntry):
    """An environment made in this process by a callable (usually a ``BaseEnv`` class).

    Args:
        identifier: the unique name of the environment in a registry.
        entry_point: the callable, or ``"package.module:attr"`` naming it, imported on first
            use, never at construction.
        expected_reward: ``None``: the entry point's ``expected_reward`` attribute, if any.
        description: ``None``: the entry point's own docstring (not an inherited one).
        max_episode_steps: the episode length adapters cut episodes at (``make`` does not
            pass it on); ``None``: the entry point's ``max_episode_steps`` attribute, if any.
        kwargs: default keyword arguments of ``make``; those given to ``make`` win.

    Example:
        >>> entry = LocalRegistryEntry("Sum", "builtins:sum", expected_reward=6)
        >>> entry.expected_reward, entry.entry_point
        (6.0, 'builtins:sum')
    """

    def __init__(
        self,
        identifier: str,
        entry_point: str | Callable[..., BaseEnv],
        expected_reward: float | None = None,
        description: str | None = None,
        max_episode_steps: int | None = None,
        kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(identifier, expected_reward, description)
        where = f"registry entry {identifier!r}"
        if isinstance(entry_point, str):
            if not ENTRY_POINT.match(entry_point):
                raise RegistryError(
                    f"{where}: expected entry_point of the form 'package.module:attr', "
                    f"got {entry_point!r}"
                )
            self._target: Callable[..., Any] | None = None
        elif callable(entry_point):
            self._target = entry_point
        else:
            raise RegistryError(
                f"{where}: expected entry_point to be a callable or a 'module:attr' str, "
                f"got {type(entry_point).__name__}"
            )
        self._entry_point = entry_point
        if max_episode_steps is not None and (
            isinstance(max_episode_steps, bool)
            or not isinstance(max_episode_steps, int)
            or max_episode_steps < 1
        ):
            raise RegistryError(
                f"{where}: max_episode_steps must be a positive int, got {max_episode_steps!r}"
            )
        self._max_episode_steps = max_episode_steps
        if kwargs is not None and not (
            isinstance(kwargs, Mapping) and all(isinstance(k, str) for k in kwargs)
        ):
            raise RegistryError(f"{where}: kwargs must be a mapping with str keys, got {kwargs!r}")
        self._kwargs = dict(kwargs or {})

    @property
    def entry_point(self) -> str | Callable[..., BaseEnv]:
        """The callable or ``"module:attr"`` string this entry makes environments with."""
        return self._entry_point

    @property
    def kwargs(self) -> dict[str, Any]:
        """A copy of the default keyword arguments of ``make``."""
        return dict(self._kwargs)

    @property
    def expected_reward(self) -> float | None:
        return self._declared_or_loaded(self._expected_reward, "expected_reward", float)

    @property
    def description(self) -> str | None:
        if self._description is None:
            # The entry point's own docstring: inspect.getdoc would inherit a base class's.
            doc = getattr(self.load(), "__doc__", None)
            return inspect.cleandoc(doc) if isinstance(doc, str) and doc.strip() else None
        return self._description

    @property
    def max_episode_steps(self) -> int | None:
        """The episode length adapters cut episodes at, if any."""
        return self._declared_or_loaded(self._max_episode_steps, "max_episode_steps", int)

    def _declared_or_loaded(self, declared: Any, attribute: str, convert: Any) -> Any:
        """The value the entry declared, else the entry point's attribute (converted), or None."""
        if declared is not None:
            return declared
        value = getattr(self.load(), attribute, None)
        return None if value is None else convert(value)

    def load(self) -> Callable[..., BaseEnv]:
        """The entry point, imported on the first call (a ``RegistryError`` if it cannot be)."""
        if self._target is None:
            # No target yet: the entry point is the "module:attr" str (checked when built).
            module_name, _, attr_path = str(self._entry_point).partition(":")
            where = f"registry entry {self._identifier!r}"
            try:
                target: Any = importlib.import_module(module_name)
            except ImportError as exc:
                raise RegistryError(
                    f"{where}: cannot import module {module_name!r} of entry point "
                    f"{self._entry_point!r}: {exc}"
                ) from exc
            for attr in attr_path.split("."):
                try:
                    target = getattr(target, attr)
                except AttributeError:
                    raise RegistryError(
                        f"{where}: {module_name!r} has no attribute {attr_path!r} "
                        f"(entry point {self._entry_point!r})"
                    ) from None
            if not callable(target):
                raise RegistryError(
                    f"{where}: entry point {self._entry_point!r} is {a_type(target)}, not a "
                    "callable"
                )
            self._target = target
        return self._target

    def make(self, **kwargs: Any) -> BaseEnv:
        """Calls the entry point with the entry's default kwargs updated by ``kwargs``.

        Raises:
            RegistryError: the entry point cannot be imported, or returned no ``BaseEnv``.
            ArgumentTypeError: a keyword the entry point does not take (all are listed).
        """
        target = self.load()
        accepted = keyword_parameters(target)
        unknown = [k for k in kwargs if accepted is not None and k not in accepted]
        if unknown:
            raise ArgumentTypeError(
                f"{getattr(target, '__qualname__', self._identifier)}() got an unexpected "
                f"keyword argument {unknown[0]!r} (registry entry {self._identifier!r}: "
                f"unknown keyword arguments {unknown}; it takes {sorted(accepted or ())})"
            )
        env = target(**{**self._kwargs, **kwargs})
        missing = [m for m in BASE_ENV_MEMBERS if not hasattr(type(env), m)]
        if missing:
            raise RegistryError(
                f"registry entry {self._identifier!r}: expected the entry point to return a "
                f"BaseEnv, got {a_type(env)} without {missing}"
            )
        return env

    def __repr__(self) -> str:
        target = self._entry_point
        shown = target if isinstance(target, str) else getattr(target, "__qualname__", target)
        return f"LocalRegistryEntry({self._identifier!r}, entry_point={shown!r})"


class RemoteRegistryEntry(BaseRegistryEntry):
    """An ML-Agents Unity binary published as one zip per platform (``linux_url``,
    ``darwin_url``, ``win_url``), with ML-Agents' arguments: ``additional_args`` always
    passed to the binary, and ``tmp_dir``, the folder the build is downloaded into instead of
    ``mlagents_envs``' cache.

    zooport neither downloads nor launches it: ``make(allow_download=True)`` hands the entry
    to ``mlagents_envs``, which downloads the build for this platform and starts a
    ``UnityEnvironment``; without that opt-in, ``make`` refuses.

    Example:
        >>> entry = RemoteRegistryEntry("3DBall", 100, None, None, None, None)
        >>> entry.make()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        zooport.errors.RegistryError: registry entry '3DBall' is a remote Unity binary; ...
    """

    def __init__(
        self,
        identifier: str,
        expected_reward: float | None,
        description: str | None,
        linux_url: str | None,
        darwin_url: str | None,
        win_url: str | None,
        additional_args: list[str] | None = None,
        tmp_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(identifier, expected_reward, description)
        where = f"registry entry {identifier!r}"
        if tmp_dir is not None and not isinstance(tmp_dir, (str, os.PathLike)):
            raise RegistryError(f"{where}: tmp_dir must be a path or None, got {tmp_dir!r}")
        self._tmp_dir = None if tmp_dir is None else os.fspath(tmp_dir)
        for key, url in zip(URL_KEYS, (linux_url, darwin_url, win_url), strict=True):
            if url is not None and not isinstance(url, str):
                raise RegistryError(f"{where}: {key} must be a str or None, got {url!r}")
        if additional_args is not None and not (
            isinstance(additional_args, (list, tuple))
            and all(isinstance(a, str) for a in additional_args)
        ):
            raise RegistryError(
                f"{where}: additional_args must be a list of str, got {additional_args!r}"
            )
        self.linux_url, self.darwin_url, self.win_url = linux_url, darwin_url, win_url
        self._additional_args = None if additional_args is None else list(additional_args)

    @property
    def additional_args(self) -> list[str] | None:
        """Command-line arguments always passed to the Unity binary."""
        return None if self._additional_args is None else list(self._additional_args)

    @property
    def tmp_dir(self) -> str | None:
        """The folder the build is downloaded into, or None for ``mlagents_envs``' cache."""
        return self._tmp_dir

    @property
    def url(self) -> str | None:
        """The url of the build for the running platform, or None."""
        url: str | None = getattr(self, f"{_platform_key()}_url", None)
        return url

    def make(self, *, allow_download: bool = False, **kwargs: Any) -> BaseEnv:
        """Has ``mlagents_envs`` download and launch the build (``kwargs`` go to its
        ``UnityEnvironment``), only with ``allow_download=True``.

        Raises:
            RegistryError: no opt-in, no build for this platform, or no ``mlagents_envs``.
        """
        where = f"registry entry {self._identifier!r}"
        if allow_download is not True:
            raise RegistryError(
                f"{where} is a remote Unity binary; zooport does not download it unless "
                f"asked. Call make(allow_download=True) to have mlagents_envs download and "
                f"launch it, or launch a local build with "
                f"mlagents_envs.environment.UnityEnvironment(file_name=...)"
            )
        url = self.url
        if url is None:
            available = [k for k in URL_KEYS if getattr(self, k) is not None]
            raise RegistryError(
                f"{where} has no build for this platform ({sys.platform!r}: expected "
                f"{_platform_key()}_url); it has {available or 'no url at all'}"
            )
        try:
            from mlagents_envs.registry.remote_registry_entry import (
                RemoteRegistryEntry as _MLAgentsRemoteEntry,
            )
        except ImportError as exc:
            raise RegistryError(
                f"{where}: launching a Unity binary needs mlagents_envs "
                f'(pip install "mlagents-envs==0.28.0" "protobuf==3.20.3" "numpy>=2", Python <= '
                f"3.11), which could not be imported: {exc}"
            ) from exc
        # Only what was given: older mlagents_envs take neither keyword.
        extra: dict[str, Any] = {}
        if self._additional_args is not None:
            extra["additional_args"] = self.additional_args
        if self._tmp_dir is not None:
            extra["tmp_dir"] = self._tmp_dir
        entry = _MLAgentsRemoteEntry(
            self._identifier,
            self._expected_reward,
            self._description,
            self.linux_url,
            self.darwin_url,
            self.win_url,
            **extra,
        )
        return entry.make(**kwargs)


def _platform_key() -> str:
    if sys.platform.startswith("linux"):
        return "linux"
    if sys.platform == "darwin":
        return "darwin"
    if sys.platform in ("win32", "cygwin"):
        return "win"
    return sys.platform
