"""Registry files: a local YAML list of environments, read and checked before registering.

Functions:
    load_manifest: the entries a registry file lists; every problem is a ``RegistryError``
        naming the file and the item.

The format is in :mod:`zooport.envs.registry`'s docstring. Nothing here touches the network.
"""

from __future__ import annotations

from zooport.envs.registry_entries import (
    LOCAL_KEYS,
    REMOTE_KEYS,
    URL_KEYS,
    BaseRegistryEntry,
    LocalRegistryEntry,
    RemoteRegistryEntry,
)
from zooport.errors import RegistryError

__all__ = ["load_manifest"]


def load_manifest(path: str) -> list[BaseRegistryEntry]:
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
        is_remote = any(k in fields for k in URL_KEYS)
        if is_local == is_remote:
            raise RegistryError(
                f"{where}: expected either an 'entry_point' (a Python environment) or "
                f"{list(URL_KEYS)} (an ML-Agents binary), got keys {list(fields)}"
            )
        allowed = LOCAL_KEYS if is_local else REMOTE_KEYS
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
                args = {k: fields.get(k) for k in REMOTE_KEYS}
                entry = RemoteRegistryEntry(identifier, **args)
        except RegistryError as exc:
            raise RegistryError(f"{where}: {exc}") from None
        entries.append(entry)
    return entries
