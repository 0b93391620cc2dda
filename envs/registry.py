"""An offline registry of environments in the shape of ML-Agents' ``mlagents_envs.registry``:
``default_registry`` holds the built-ins under their class names, imported only when used, and
registry files (local YAML) add more. Nothing here touches the network."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from zooport.envs.builtin import BUILTINS
from zooport.envs.registry_entries import (
    BASE_ENV_MEMBERS,
    LOCAL_KEYS,
    REMOTE_KEYS,
    URL_KEYS,
    BaseRegistryEntry,
    LocalRegistryEntry,
    RemoteRegistryEntry,
)
from zooport.errors import RegistryError

if TYPE_CHECKING:
    from zooport.envs.base_env import BaseEnv

__all__ = [
    "BaseRegistryEntry",
    "LocalRegistryEntry",
    "RemoteRegistryEntry",
    "ZooportEnvRegistry",
    "UnityEnvRegistry",
    "UnknownEnvironmentError",
    "builtin_entries",
    "default_registry",
    "BASE_ENV_MEMBERS",
]


class UnknownEnvironmentError(RegistryError, KeyError):
    """An identifier the registry does not hold; also a ``KeyError``, as in ML-Agents."""

    def __str__(self) -> str:
        # KeyError's str() is the repr of its argument; keep the message readable.
        return str(self.args[0]) if self.args else ""


class ZooportEnvRegistry(Mapping[str, BaseRegistryEntry]):
    """A mapping from identifier to :class:`BaseRegistryEntry`.

    Args:
        entries: entries to register at once (an identifier given twice is an error).

    Example:
        >>> registry = ZooportEnvRegistry()
        >>> registry.register(LocalRegistryEntry("Counter", "collections:Counter"))
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
        """Adds ``entry`` under its identifier; one already there is an error unless
        ``overwrite``."""
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
        """Registers every environment a local YAML file lists, all checked first; returns
        their identifiers, in file order.

        The file lists environments under ``environments:``, each ``- <id>: {fields}``: an
        ``entry_point`` (``"module:attr"``) with ``expected_reward``, ``description``,
        ``max_episode_steps`` and ``kwargs`` makes a :class:`LocalRegistryEntry`; ML-Agents'
        ``linux_url``/``darwin_url``/``win_url`` (with ``expected_reward``, ``description``,
        ``additional_args``) a :class:`RemoteRegistryEntry`.

        Raises:
            RegistryError: a url, an unreadable file, a malformed item, or an identifier
                already registered (unless ``overwrite``); it names the file and the item.
        """
        path_str = os.fspath(path)
        if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", str(path_str)):
            raise RegistryError(
                f"{path_str}: register_from_yaml reads local files only; download the "
                f"manifest yourself and pass its path"
            )
        entries = _read_registry_file(str(path_str))
        ids = [e.identifier for e in entries]
        clash = [i for i in ids if i in self._entries]
        if clash and not overwrite:
            raise RegistryError(
                f"{path_str}: environments {clash} are already registered; pass "
                f"overwrite=True to replace them"
            )
        self._entries.update(zip(ids, entries, strict=True))
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
        """``registry[identifier].make(**kwargs)``."""
        return self[identifier].make(**kwargs)

    def __getitem__(self, identifier: str) -> BaseRegistryEntry:
        try:
            return self._entries[identifier]
        except (KeyError, TypeError):
            pass
        known = list(self._entries)
        close = isinstance(identifier, str) and difflib.get_close_matches(identifier, known, n=3)
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


class UnityEnvRegistry(ZooportEnvRegistry):
    """ML-Agents' name for the registry (``mlagents_envs.registry.UnityEnvRegistry``); as
    there, registering an identifier again replaces its entry.

    Example:
        >>> registry = UnityEnvRegistry()
        >>> registry.register(LocalRegistryEntry("Sum", "builtins:sum"))
        >>> registry.register(LocalRegistryEntry("Sum", "builtins:max"))
        >>> registry["Sum"].entry_point
        'builtins:max'
    """

    def register(self, entry: BaseRegistryEntry, *, overwrite: bool = True) -> None:
        """Adds ``entry`` under its identifier, replacing one already there."""
        super().register(entry, overwrite=overwrite)


def _read_registry_file(path: str) -> list[BaseRegistryEntry]:
    """The entries a registry file lists; every problem is a RegistryError naming ``path``."""
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
    entries: dict[str, BaseRegistryEntry] = {}
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
            if is_local and not isinstance(fields["entry_point"], str):
                raise RegistryError(
                    f"entry_point must be a 'module:attr' str, got {fields['entry_point']!r}"
                )
            entries[identifier] = (
                LocalRegistryEntry(identifier, **fields)
                if is_local
                else RemoteRegistryEntry(identifier, **{k: fields.get(k) for k in REMOTE_KEYS})
            )
        except RegistryError as exc:
            raise RegistryError(f"{where}: {exc}") from None
    return list(entries.values())


def builtin_entries() -> list[LocalRegistryEntry]:
    """Fresh entries for the built-in environments; nothing is imported."""
    return [
        LocalRegistryEntry(name, f"zooport.envs.builtin.{module}:{name}")
        for name, module in BUILTINS.items()
    ]


#: The registry the built-in environments are registered in.
default_registry = ZooportEnvRegistry(builtin_entries())
