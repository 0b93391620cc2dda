"""An offline registry in the shape of ML-Agents' ``mlagents_envs.registry``: the built-ins, local
YAML files, and remote Unity binaries handed to ``mlagents_envs`` on request, never downloaded."""

from __future__ import annotations

import contextlib
import difflib
import inspect
import os
import pkgutil
import re
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from zooport.envs.builtin import BUILTINS
from zooport.envs.capabilities import keyword_parameters
from zooport.errors import ArgumentTypeError, RegistryError, UnknownAgentError, a_type

if TYPE_CHECKING:
    from zooport.envs.base_env import BaseEnv

__all__ = [
    "BaseRegistryEntry", "LocalRegistryEntry", "RemoteRegistryEntry", "ZooportEnvRegistry",
    "UnityEnvRegistry", "UnknownEnvironmentError", "builtin_entries", "default_registry",
    "BASE_ENV_MEMBERS",
]  # fmt: skip

ENTRY_POINT = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
BASE_ENV_MEMBERS = ("behavior_specs", "reset", "step", "get_steps", "set_actions", "close")
URL_KEYS = ("linux_url", "darwin_url", "win_url")
LOCAL_KEYS = ("entry_point", "expected_reward", "description", "max_episode_steps", "kwargs")
REMOTE_KEYS = ("expected_reward", "description", *URL_KEYS, "additional_args")
#: What each field of an entry must be, when not None: (in words, types, further test).
_FIELDS: dict[str, tuple[str, Any, Callable[[Any], bool] | None]] = {
    "expected_reward": ("a number", (int, float), None),
    "description": ("a str", str, None),
    "max_episode_steps": ("a positive int", int, lambda v: v >= 1),
    "kwargs": ("a mapping with str keys", Mapping, lambda v: all(isinstance(k, str) for k in v)),
    "tmp_dir": ("a path or None", (str, os.PathLike), None),
    **dict.fromkeys(URL_KEYS, ("a str or None", str, None)),
    "additional_args": (
        "a list of str",
        (list, tuple),
        lambda v: all(isinstance(a, str) for a in v),
    ),
}


def check_keywords(
    target: Callable[..., Any] | None, names: Iterable[str], where: str, takes: str = "it takes {}"
) -> None:
    """Refuses ``names`` that ``target`` does not take (None: any), in Python's words (TorchRL)."""
    accepted = keyword_parameters(target)
    unknown = [name for name in names if accepted is not None and name not in accepted]
    if unknown:
        raise ArgumentTypeError(
            f"{getattr(target, '__qualname__', type(target).__name__)}() got an unexpected "
            f"keyword argument {unknown[0]!r} ({where}: unknown keyword arguments {unknown}; "
            f"{takes.format(sorted(accepted or ()))})"
        )


def _check_fields(where: str, **values: Any) -> None:
    for name, value in values.items():
        what, types, test = _FIELDS[name]
        bad = isinstance(value, bool) or not isinstance(value, types) or test and not test(value)
        if value is not None and bad:
            raise RegistryError(f"{where}: {name} must be {what}, got {value!r}")


class BaseRegistryEntry(ABC):
    """One environment of a registry; ``expected_reward``: the mean episode reward of solved."""

    def __init__(
        self, identifier: str, expected_reward: float | None, description: str | None
    ) -> None:
        if not isinstance(identifier, str) or not identifier.strip():
            raise RegistryError(f"expected a non-empty str identifier, got {identifier!r}")
        self._where = f"registry entry {identifier!r}"  # how the messages name the entry
        _check_fields(self._where, expected_reward=expected_reward, description=description)
        self._identifier = identifier
        self._expected_reward = None if expected_reward is None else float(expected_reward)
        self._description = description

    identifier = property(attrgetter("_identifier"))
    expected_reward = property(attrgetter("_expected_reward"))
    description = property(attrgetter("_description"))

    @abstractmethod
    def make(self, **kwargs: Any) -> BaseEnv:
        """Creates the environment; ``kwargs`` go to its constructor."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._identifier!r})"


class LocalRegistryEntry(BaseRegistryEntry):
    """An environment made in this process by a callable or its ``"module:attr"``; fields left
    None are the entry point's (``description``: its docstring); ``kwargs``: ``make``'s defaults."""

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
        if not callable(entry_point) and not (
            isinstance(entry_point, str) and ENTRY_POINT.match(entry_point)
        ):
            raise RegistryError(
                f"{self._where}: entry_point must be a 'module:attr' str or a callable, "
                f"got {entry_point!r}"
            )
        self._entry_point = entry_point
        self._target = None if isinstance(entry_point, str) else entry_point
        _check_fields(self._where, max_episode_steps=max_episode_steps, kwargs=kwargs)
        self._max_episode_steps = max_episode_steps
        self._kwargs = dict(kwargs or {})

    entry_point = property(attrgetter("_entry_point"))

    @property
    def kwargs(self) -> dict[str, Any]:  # a copy
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
        return self._declared_or_loaded(self._max_episode_steps, "max_episode_steps", int)

    def _declared_or_loaded(self, declared: Any, attribute: str, convert: Any) -> Any:
        value = declared if declared is not None else getattr(self.load(), attribute, None)
        return None if value is None else convert(value)

    def load(self) -> Callable[..., BaseEnv]:
        """The entry point, imported on the first call (a ``RegistryError`` if it cannot be)."""
        if self._target is None:  # the entry point is a "module:attr" str, checked when built
            module_name, _, attr_path = str(self._entry_point).partition(":")
            try:
                target = pkgutil.resolve_name(str(self._entry_point))
            except ImportError as exc:
                raise RegistryError(
                    f"{self._where}: cannot import module {module_name!r} of entry point "
                    f"{self._entry_point!r}: {exc}"
                ) from exc
            except AttributeError:
                raise RegistryError(
                    f"{self._where}: {module_name!r} has no attribute {attr_path!r} "
                    f"(entry point {self._entry_point!r})"
                ) from None
            if not callable(target):
                raise RegistryError(
                    f"{self._where}: entry point {self._entry_point!r} is {a_type(target)}, not a "
                    "callable"
                )
            self._target = target
        return self._target

    def make(self, **kwargs: Any) -> BaseEnv:
        """Calls the entry point with the entry's default kwargs updated by ``kwargs``."""
        target = self.load()
        check_keywords(target, kwargs, self._where)
        env = target(**{**self._kwargs, **kwargs})
        missing = [m for m in BASE_ENV_MEMBERS if not hasattr(type(env), m)]
        if missing:
            raise RegistryError(
                f"{self._where}: expected the entry point to return a "
                f"BaseEnv, got {a_type(env)} without {missing}"
            )
        return env

    def __repr__(self) -> str:
        target = self._entry_point
        shown = target if isinstance(target, str) else getattr(target, "__qualname__", target)
        return f"LocalRegistryEntry({self._identifier!r}, entry_point={shown!r})"


class RemoteRegistryEntry(BaseRegistryEntry):
    """An ML-Agents Unity binary; ``make(allow_download=True)`` hands it to ``mlagents_envs``."""

    def __init__(
        self,
        identifier: str,
        expected_reward: float | None = None,
        description: str | None = None,
        linux_url: str | None = None,
        darwin_url: str | None = None,
        win_url: str | None = None,
        additional_args: list[str] | None = None,
        tmp_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(identifier, expected_reward, description)
        urls = {"linux_url": linux_url, "darwin_url": darwin_url, "win_url": win_url}
        _check_fields(self._where, tmp_dir=tmp_dir, **urls, additional_args=additional_args)
        self.tmp_dir = None if tmp_dir is None else os.fspath(tmp_dir)
        self.linux_url, self.darwin_url, self.win_url = linux_url, darwin_url, win_url
        self._additional_args = None if additional_args is None else list(additional_args)

    @property
    def additional_args(self) -> list[str] | None:
        return None if self._additional_args is None else list(self._additional_args)

    @property
    def url(self) -> str | None:
        """The url of the build for the running platform, or None."""
        return getattr(self, f"{_platform_key()}_url", None)

    def make(self, *, allow_download: bool = False, **kwargs: Any) -> BaseEnv:
        """Has ``mlagents_envs`` download and launch the build, only with ``allow_download``."""
        if allow_download is not True:
            raise RegistryError(
                f"{self._where} is a remote Unity binary; zooport does not download it unless "
                f"asked. Call make(allow_download=True) to have mlagents_envs download and "
                f"launch it, or launch a local build with "
                f"mlagents_envs.environment.UnityEnvironment(file_name=...)"
            )
        if self.url is None:
            available = [k for k in URL_KEYS if getattr(self, k) is not None]
            raise RegistryError(
                f"{self._where} has no build for this platform ({sys.platform!r}: expected "
                f"{_platform_key()}_url); it has {available or 'no url at all'}"
            )
        try:
            from mlagents_envs.registry.remote_registry_entry import (
                RemoteRegistryEntry as _MLAgentsRemoteEntry,
            )
        except ImportError as exc:
            raise RegistryError(
                f"{self._where}: launching a Unity binary needs mlagents_envs "
                f'(pip install "mlagents-envs==0.28.0" "protobuf==3.20.3" "numpy>=2", Python <= '
                f"3.11), which could not be imported: {exc}"
            ) from exc
        # Only what was given: older mlagents_envs take neither keyword.
        extra = {"additional_args": self.additional_args, "tmp_dir": self.tmp_dir}
        return _MLAgentsRemoteEntry(
            self._identifier, self._expected_reward, self._description,
            self.linux_url, self.darwin_url, self.win_url,
            **{k: v for k, v in extra.items() if v is not None},
        ).make(**kwargs)  # fmt: skip


def _platform_key() -> str:
    key = "linux" if sys.platform.startswith("linux") else sys.platform
    return {"win32": "win", "cygwin": "win"}.get(key, key)


class UnknownEnvironmentError(RegistryError, KeyError):
    """An identifier the registry does not hold; also a ``KeyError``, as in ML-Agents."""

    __str__ = UnknownAgentError.__str__  # the message unquoted, not KeyError's repr


class ZooportEnvRegistry(Mapping[str, BaseRegistryEntry]):
    """A mapping from identifier to :class:`BaseRegistryEntry`."""

    def __init__(self, entries: Iterable[BaseRegistryEntry] = ()) -> None:
        self._entries: dict[str, BaseRegistryEntry] = {}
        for entry in entries:
            self.register(entry)

    def register(self, entry: BaseRegistryEntry, *, overwrite: bool = False) -> None:
        """Adds ``entry``; an identifier already there is an error unless ``overwrite``."""
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
        """Registers every environment a local YAML file lists; returns their identifiers."""
        path = str(os.fspath(path))
        if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", path):
            raise RegistryError(
                f"{path}: register_from_yaml reads local files only; download the "
                f"manifest yourself and pass its path"
            )
        import yaml

        try:
            with open(path, encoding="utf-8") as stream:
                data = yaml.safe_load(stream)
        except OSError as exc:
            raise RegistryError(f"{path}: cannot read the registry file: {exc}") from exc
        except yaml.YAMLError as exc:
            raise RegistryError(f"{path}: not valid YAML: {exc}") from exc
        keys = list(data) if isinstance(data, dict) else None
        if keys != ["environments"]:
            extra = [k for k in keys or () if k != "environments"]
            got = type(data).__name__ if keys is None else f"keys {keys}"
            got += f"; unknown top-level keys {extra}" if extra else ""
            raise RegistryError(
                f"{path}: expected a mapping with a top-level 'environments:' list, got {got}"
            )
        if not isinstance(items := data["environments"], list):
            got = type(items).__name__
            raise RegistryError(f"{path}: 'environments' must be a list, got {got}")
        entries: dict[str, BaseRegistryEntry] = {}
        for index, item in enumerate(items):
            where = f"{path}: environments[{index}]"
            if not isinstance(item, dict) or len(item) != 1:
                raise RegistryError(
                    f"{where}: expected a mapping with exactly one key, the identifier "
                    f"({{<id>: {{entry_point: ...}}}}), got {item!r}"
                )
            ((identifier, fields),) = item.items()
            where = f"{where} ({identifier!r})"
            if identifier in entries:
                raise RegistryError(f"{where}: the identifier appears twice in the file")
            fields = {} if fields is None else fields
            if not isinstance(fields, dict):
                raise RegistryError(f"{where}: expected a mapping of fields, got {fields!r}")
            is_local = "entry_point" in fields
            if is_local == any(k in fields for k in URL_KEYS):
                raise RegistryError(
                    f"{where}: expected either an 'entry_point' (a Python environment) or "
                    f"{list(URL_KEYS)} (an ML-Agents binary), got keys {list(fields)}"
                )
            allowed = LOCAL_KEYS if is_local else REMOTE_KEYS
            unknown = [k for k in fields if k not in allowed]
            if unknown:
                raise RegistryError(f"{where}: unknown keys {unknown}; allowed: {list(allowed)}")
            try:
                kind = LocalRegistryEntry if is_local else RemoteRegistryEntry
                entries[identifier] = kind(identifier, **fields)
            except RegistryError as exc:
                raise RegistryError(f"{where}: {exc}") from None
        clash = [i for i in entries if i in self._entries]
        if clash and not overwrite:
            raise RegistryError(
                f"{path}: environments {clash} are already registered; pass "
                f"overwrite=True to replace them"
            )
        self._entries.update(entries)
        return list(entries)

    def unregister(self, identifier: str) -> BaseRegistryEntry:
        self[identifier]  # an UnknownEnvironmentError where it is missing
        return self._entries.pop(identifier)

    def clear(self) -> None:
        self._entries.clear()

    def make(self, identifier: str, **kwargs: Any) -> BaseEnv:
        return self[identifier].make(**kwargs)

    def __getitem__(self, identifier: str) -> BaseRegistryEntry:
        with contextlib.suppress(KeyError, TypeError):  # TypeError: unhashable
            return self._entries[identifier]
        known = list(self._entries)
        close = isinstance(identifier, str) and difflib.get_close_matches(identifier, known, n=3)
        hint = f"; did you mean {close}?" if close else ";"
        raise UnknownEnvironmentError(
            f"no environment {identifier!r} in the registry{hint} registered: {known}"
        )

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __repr__(self) -> str:
        return f"ZooportEnvRegistry({list(self._entries)!r})"


class UnityEnvRegistry(ZooportEnvRegistry):
    """ML-Agents' ``UnityEnvRegistry``: registering an identifier again replaces its entry."""

    def register(self, entry: BaseRegistryEntry, *, overwrite: bool = True) -> None:
        super().register(entry, overwrite=overwrite)


def builtin_entries() -> list[LocalRegistryEntry]:
    """Fresh entries for the built-in environments (importing none)."""
    return [
        LocalRegistryEntry(name, f"zooport.envs.builtin.{module}:{name}")
        for name, module in BUILTINS.items()
    ]


default_registry = ZooportEnvRegistry(builtin_entries())
