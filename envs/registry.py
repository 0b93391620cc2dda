"""An offline registry of environments, in the shape of ML-Agents' ``mlagents_envs.registry``.

Classes:
    BaseRegistryEntry: the abstract entry: ``identifier``, ``expected_reward``,
        ``description``, ``make(**kwargs) -> BaseEnv``.
    LocalRegistryEntry: an environment made by a Python callable or a lazily imported
        ``"module:attr"`` entry point.
    RemoteRegistryEntry: an ML-Agents Unity binary listed by url; it is only downloaded and
        launched (by ``mlagents_envs``) when ``make(allow_download=True)`` asks for it.
    ZooportEnvRegistry: a ``Mapping[str, BaseRegistryEntry]`` with ``register``,
        ``register_from_yaml``, ``unregister``, ``clear`` and ``make``.
    UnknownEnvironmentError: the ``RegistryError`` (and ``KeyError``) raised for an unknown id.

``default_registry`` holds the built-in environments under ``"Basic"``, ``"BallBalance"``,
``"GridWorld"``, ``"Tag"``, ``"Collector"`` and ``"Soccer"``. Their modules are imported only
when an entry's ``make`` is called or one of its class-derived attributes
(``expected_reward``, ``max_episode_steps``, ``description``) is read. Nothing in this
module touches the network.

A registry file (YAML, local) lists environments under a top-level ``environments:`` key;
an item with an ``entry_point`` becomes a :class:`LocalRegistryEntry`, an item with
ML-Agents' ``linux_url``/``darwin_url``/``win_url`` a :class:`RemoteRegistryEntry`:

.. code-block:: yaml

    environments:
      - MyEnv:
          entry_point: "my_package.my_module:MyEnv"
          expected_reward: 0.9
          description: Agents learn to do something.
          max_episode_steps: 500
          kwargs: {n_agents: 4}
      - 3DBall:
          expected_reward: 100
          linux_url: https://example.org/3DBall_linux.zip
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import os
import re
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from zooport.envs.capabilities import keyword_parameters
from zooport.errors import ArgumentTypeError, RegistryError

if TYPE_CHECKING:
    from zooport.envs.base_env import BaseEnv

__all__ = [
    "BaseRegistryEntry",
    "LocalRegistryEntry",
    "RemoteRegistryEntry",
    "ZooportEnvRegistry",
    "UnknownEnvironmentError",
    "builtin_entries",
    "default_registry",
    "keyword_parameters",
]

_ENTRY_POINT = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
#: What an object needs to be taken for a ``BaseEnv`` (ML-Agents 0.25 and later).
BASE_ENV_MEMBERS = ("behavior_specs", "reset", "step", "get_steps", "set_actions", "close")
_LOCAL_KEYS = ("entry_point", "expected_reward", "description", "max_episode_steps", "kwargs")
_REMOTE_KEYS = (
    "expected_reward", "description", "linux_url", "darwin_url", "win_url", "additional_args",
)  # fmt: skip
_URL_KEYS = ("linux_url", "darwin_url", "win_url")

#: The built-in environments: identifier -> entry point.
_BUILTINS = {
    "Basic": "zooport.envs.builtin.basic:Basic",
    "BallBalance": "zooport.envs.builtin.ball_balance:BallBalance",
    "GridWorld": "zooport.envs.builtin.grid_world:GridWorld",
    "Tag": "zooport.envs.builtin.tag:Tag",
    "Collector": "zooport.envs.builtin.collector:Collector",
    "Soccer": "zooport.envs.builtin.soccer:Soccer",
}


class UnknownEnvironmentError(RegistryError, KeyError):
    """An identifier the registry does not hold; also a ``KeyError``, as in ML-Agents."""

    def __str__(self) -> str:
        # KeyError's str() is the repr of its argument; keep the message readable.
        return str(self.args[0]) if self.args else ""


def _check_identifier(identifier: Any) -> str:
    if not isinstance(identifier, str) or not identifier.strip():
        raise RegistryError(
            f"Expected a registry identifier to be a non-empty str, actually: {identifier!r}"
        )
    return identifier


def _check_expected_reward(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RegistryError(f"{where}: expected_reward must be a number, got {value!r}")
    return float(value)


def _check_description(value: Any, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise RegistryError(f"{where}: description must be a str, got {type(value).__name__}")
    return value


class BaseRegistryEntry(ABC):
    """One environment of a registry.

    Args:
        identifier: the unique name of the environment in a registry.
        expected_reward: the mean episode reward at which the task counts as solved.
        description: a human-readable description of the environment.
    """

    def __init__(
        self, identifier: str, expected_reward: float | None, description: str | None
    ) -> None:
        self._identifier = _check_identifier(identifier)
        where = f"registry entry {identifier!r}"
        self._expected_reward = _check_expected_reward(expected_reward, where)
        self._description = _check_description(description, where)

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
        entry_point: the callable, or ``"package.module:attr"`` naming it; a string is
            imported on first use, never at construction.
        expected_reward: the mean episode reward at which the task counts as solved.
            ``None``: the entry point's ``expected_reward`` attribute, if it has one.
        description: ``None``: the entry point's own docstring (not an inherited one).
        max_episode_steps: the episode length adapters cut episodes at (metadata; ``make``
            does not pass it on). ``None``: the entry point's ``max_episode_steps`` attribute.
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
            if not _ENTRY_POINT.match(entry_point):
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
        if self._expected_reward is None:
            value = getattr(self.load(), "expected_reward", None)
            return None if value is None else float(value)
        return self._expected_reward

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
        if self._max_episode_steps is None:
            value = getattr(self.load(), "max_episode_steps", None)
            return None if value is None else int(value)
        return self._max_episode_steps

    def load(self) -> Callable[..., BaseEnv]:
        """The entry point, imported on the first call.

        Raises:
            RegistryError: the module or the attribute cannot be imported.
        """
        if self._target is None:
            module_name, _, attr_path = self._entry_point.partition(":")
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
                    f"{where}: entry point {self._entry_point!r} is a "
                    f"{type(target).__name__}, not a callable"
                )
            self._target = target
        return self._target

    def make(self, **kwargs: Any) -> BaseEnv:
        """Calls the entry point with the entry's default kwargs updated by ``kwargs``.

        Raises:
            RegistryError: the entry point cannot be imported, or it returned an object
                without the ``BaseEnv`` methods.
            ArgumentTypeError: a keyword the entry point does not take (the message lists
                those it takes).
        """
        target = self.load()
        accepted = keyword_parameters(target)
        unknown = [k for k in kwargs if accepted is not None and k not in accepted]
        if unknown:
            raise ArgumentTypeError(
                f"registry entry {self._identifier!r}: unknown keyword arguments {unknown}; "
                f"it takes {sorted(accepted)}"
            )
        env = target(**{**self._kwargs, **kwargs})
        missing = [m for m in BASE_ENV_MEMBERS if not hasattr(type(env), m)]
        if missing:
            raise RegistryError(
                f"registry entry {self._identifier!r}: expected the entry point to return a "
                f"BaseEnv, got a {type(env).__name__} without {missing}"
            )
        return env

    def __repr__(self) -> str:
        target = self._entry_point
        shown = target if isinstance(target, str) else getattr(target, "__qualname__", target)
        return f"LocalRegistryEntry({self._identifier!r}, entry_point={shown!r})"


class RemoteRegistryEntry(BaseRegistryEntry):
    """An ML-Agents Unity binary published as one zip per platform.

    zooport neither downloads nor launches Unity binaries itself. ``make`` refuses unless
    called with ``allow_download=True``; then it hands the entry to ``mlagents_envs``
    (which must be installed), which downloads the zip for this platform into its cache and
    starts a ``UnityEnvironment``. Nothing happens at construction or registration.

    Args:
        identifier: the unique name of the environment in a registry.
        expected_reward: the mean episode reward at which the task counts as solved.
        description: a human-readable description of the environment.
        linux_url, darwin_url, win_url: the zip of the build for each platform, or None.
        additional_args: command-line arguments always passed to the Unity binary.

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
    ) -> None:
        super().__init__(identifier, expected_reward, description)
        where = f"registry entry {identifier!r}"
        for key, url in zip(_URL_KEYS, (linux_url, darwin_url, win_url), strict=True):
            if url is not None and not isinstance(url, str):
                raise RegistryError(f"{where}: {key} must be a str or None, got {url!r}")
        if additional_args is not None and not (
            isinstance(additional_args, (list, tuple))
            and all(isinstance(a, str) for a in additional_args)
        ):
            raise RegistryError(
                f"{where}: additional_args must be a list of str, got {additional_args!r}"
            )
        self._urls = {"linux": linux_url, "darwin": darwin_url, "win": win_url}
        self._additional_args = None if additional_args is None else list(additional_args)

    @property
    def linux_url(self) -> str | None:
        """The zip of the Linux build."""
        return self._urls["linux"]

    @property
    def darwin_url(self) -> str | None:
        """The zip of the macOS build."""
        return self._urls["darwin"]

    @property
    def win_url(self) -> str | None:
        """The zip of the Windows build."""
        return self._urls["win"]

    @property
    def additional_args(self) -> list[str] | None:
        """Command-line arguments always passed to the Unity binary."""
        return None if self._additional_args is None else list(self._additional_args)

    @property
    def url(self) -> str | None:
        """The url of the build for the running platform, or None."""
        return self._urls.get(_platform_key())

    def make(self, *, allow_download: bool = False, **kwargs: Any) -> BaseEnv:
        """Downloads (through ``mlagents_envs``) and launches the Unity build; opt-in.

        Args:
            allow_download: must be True: the build is fetched from the entry's url.
            **kwargs: passed to ``mlagents_envs.environment.UnityEnvironment``.

        Raises:
            RegistryError: ``allow_download`` is not True, the entry has no build for this
                platform, or ``mlagents_envs`` is not installed.
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
            available = [f"{k}_url" for k, v in self._urls.items() if v is not None]
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
                f"(pip install mlagents-envs), which could not be imported: {exc}"
            ) from exc
        extra = {} if self._additional_args is None else {"additional_args": self.additional_args}
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


class ZooportEnvRegistry(Mapping[str, BaseRegistryEntry]):
    """A mapping from identifier to :class:`BaseRegistryEntry`.

    Args:
        entries: entries to register at once (an identifier given twice is an error).

    Example:
        >>> registry = ZooportEnvRegistry()
        >>> registry.register(LocalRegistryEntry("Counter", "collections:Counter"))
        >>> list(registry)
        ['Counter']
        >>> registry["Countr"]  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        zooport.envs.registry.UnknownEnvironmentError: ... did you mean ['Counter']? ...
    """

    def __init__(self, entries: Iterable[BaseRegistryEntry] = ()) -> None:
        self._entries: dict[str, BaseRegistryEntry] = {}
        for entry in entries:
            self.register(entry)

    def register(self, entry: BaseRegistryEntry, *, overwrite: bool = False) -> None:
        """Adds ``entry`` under its identifier.

        Raises:
            RegistryError: the identifier is already registered and ``overwrite`` is False.
        """
        if not isinstance(entry, BaseRegistryEntry):
            raise RegistryError(f"Expected a BaseRegistryEntry, actually: {type(entry).__name__}")
        if entry.identifier in self._entries and not overwrite:
            raise RegistryError(
                f"an environment {entry.identifier!r} is already registered "
                f"({self._entries[entry.identifier]!r}); pass overwrite=True to replace it"
            )
        self._entries[entry.identifier] = entry

    def register_from_yaml(
        self, path: str | os.PathLike[str], *, overwrite: bool = False
    ) -> list[str]:
        """Registers every environment listed in a local YAML file; see the module docstring.

        The file is read and checked completely before anything is registered.

        Returns:
            The identifiers registered, in file order.

        Raises:
            RegistryError: the path is a url, the file cannot be read or parsed, an item is
                malformed, or an identifier is a duplicate (and ``overwrite`` is False).
        """
        path_str = os.fspath(path)
        if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", str(path_str)):
            raise RegistryError(
                f"{path_str}: register_from_yaml reads local files only; download the "
                f"manifest yourself and pass its path"
            )
        entries = _load_manifest(path_str)
        ids = [e.identifier for e in entries]
        if not overwrite:
            clash = [i for i in ids if i in self._entries]
            if clash:
                raise RegistryError(
                    f"{path_str}: environments {clash} are already registered; pass "
                    f"overwrite=True to replace them"
                )
        for entry in entries:
            self._entries[entry.identifier] = entry
        return ids

    def unregister(self, identifier: str) -> BaseRegistryEntry:
        """Removes and returns the entry ``identifier``."""
        entry = self[identifier]
        del self._entries[identifier]
        return entry

    def clear(self) -> None:
        """Removes every entry."""
        self._entries.clear()

    def make(self, identifier: str, **kwargs: Any) -> BaseEnv:
        """Shorthand for ``registry[identifier].make(**kwargs)``."""
        return self[identifier].make(**kwargs)

    def __getitem__(self, identifier: str) -> BaseRegistryEntry:
        try:
            return self._entries[identifier]
        except (KeyError, TypeError):
            pass
        known = list(self._entries)
        close = (
            difflib.get_close_matches(identifier, known, n=3) if isinstance(identifier, str) else []
        )
        hint = f"; did you mean {close}?" if close else ";"
        raise UnknownEnvironmentError(
            f"no environment {identifier!r} in the registry{hint} registered: {known}"
        )

    def __contains__(self, identifier: object) -> bool:
        try:
            return identifier in self._entries
        except TypeError:
            return False

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __repr__(self) -> str:
        return f"ZooportEnvRegistry({list(self._entries)!r})"


def _load_manifest(path: str) -> list[BaseRegistryEntry]:
    """Parses and checks a registry file; every problem is a RegistryError naming ``path``."""
    import yaml

    try:
        with open(path, encoding="utf-8") as stream:
            data = yaml.safe_load(stream)
    except OSError as exc:
        raise RegistryError(f"{path}: cannot read the registry file: {exc}") from exc
    except yaml.YAMLError as exc:
        raise RegistryError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict) or "environments" not in data:
        got = type(data).__name__ if not isinstance(data, dict) else f"keys {list(data)}"
        raise RegistryError(
            f"{path}: expected a mapping with a top-level 'environments:' list, got {got}"
        )
    extra = [k for k in data if k != "environments"]
    if extra:
        raise RegistryError(f"{path}: unknown top-level keys {extra}; expected only 'environments'")
    items = data["environments"]
    if not isinstance(items, list):
        raise RegistryError(f"{path}: 'environments' must be a list, got {type(items).__name__}")
    entries: list[BaseRegistryEntry] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        where = f"{path}: environments[{index}]"
        if not isinstance(item, dict) or len(item) != 1:
            raise RegistryError(
                f"{where}: expected a mapping with exactly one key, the identifier "
                f"({{<id>: {{entry_point: ...}}}}), got {item!r}"
            )
        ((identifier, fields),) = item.items()
        if not isinstance(identifier, str) or not identifier.strip():
            raise RegistryError(f"{where}: expected a non-empty str identifier, got {identifier!r}")
        where = f"{where} ({identifier!r})"
        if identifier in seen:
            raise RegistryError(f"{where}: the identifier appears twice in the file")
        seen.add(identifier)
        if fields is None:
            fields = {}
        if not isinstance(fields, dict):
            raise RegistryError(f"{where}: expected a mapping of fields, got {fields!r}")
        is_local = "entry_point" in fields
        is_remote = any(k in fields for k in _URL_KEYS)
        if is_local == is_remote:
            raise RegistryError(
                f"{where}: expected either an 'entry_point' (a Python environment) or "
                f"{list(_URL_KEYS)} (an ML-Agents binary), got keys {list(fields)}"
            )
        allowed = _LOCAL_KEYS if is_local else _REMOTE_KEYS
        unknown = [k for k in fields if k not in allowed]
        if unknown:
            raise RegistryError(f"{where}: unknown keys {unknown}; allowed: {list(allowed)}")
        try:
            if is_local:
                entry_point = fields["entry_point"]
                if not isinstance(entry_point, str):
                    raise RegistryError(
                        f"entry_point must be a 'module:attr' str, got {entry_point!r}"
                    )
                entry: BaseRegistryEntry = LocalRegistryEntry(identifier, **fields)
            else:
                args = {k: fields.get(k) for k in _REMOTE_KEYS}
                entry = RemoteRegistryEntry(identifier, **args)
        except RegistryError as exc:
            raise RegistryError(f"{where}: {exc}") from None
        entries.append(entry)
    return entries


def builtin_entries() -> list[LocalRegistryEntry]:
    """Fresh entries for the built-in environments; nothing is imported."""
    return [LocalRegistryEntry(identifier, target) for identifier, target in _BUILTINS.items()]


#: The registry the built-in environments are registered in.
default_registry = ZooportEnvRegistry(builtin_entries())

