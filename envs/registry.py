"""An offline registry of environments, in the shape of ML-Agents' ``mlagents_envs.registry``.

Classes:
    ZooportEnvRegistry: a ``Mapping[str, BaseRegistryEntry]`` with ``register``,
        ``register_from_yaml``, ``unregister``, ``clear`` and ``make``.
    UnknownEnvironmentError: the ``RegistryError`` (and ``KeyError``) raised for an unknown id.
    BaseRegistryEntry, LocalRegistryEntry, RemoteRegistryEntry: the entries (defined in
        :mod:`zooport.envs.registry_entries`; registry files are read by
        :mod:`zooport.envs.registry_manifest`).

Functions:
    builtin_entries: fresh entries for the built-in environments.

``default_registry`` holds the built-in environments (``zooport.envs.builtin.BUILTINS``:
``"Basic"``, ``"BallBalance"``, ``"GridWorld"``, ``"Tag"``, ``"Collector"``, ``"Soccer"``),
each under its class name. Their modules are imported only when an entry's ``make`` is
called or one of its class-derived attributes (``expected_reward``, ``max_episode_steps``,
``description``) is read. Nothing in this module touches the network.

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
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from zooport.envs.builtin import BUILTINS
from zooport.envs.capabilities import keyword_parameters
from zooport.envs.registry_entries import (
    BASE_ENV_MEMBERS,
    BaseRegistryEntry,
    LocalRegistryEntry,
    RemoteRegistryEntry,
)
from zooport.envs.registry_manifest import load_manifest
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
    "keyword_parameters",
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
        entries = load_manifest(path_str)
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


def builtin_entries() -> list[LocalRegistryEntry]:
    """Fresh entries for the built-in environments; nothing is imported."""
    return [
        LocalRegistryEntry(name, f"zooport.envs.builtin.{module}:{name}")
        for name, module in BUILTINS.items()
    ]


#: The registry the built-in environments are registered in.
default_registry = ZooportEnvRegistry(builtin_entries())
