"""A griffe extension: zooport's docstrings as mkdocstrings renders them best.

zooport's docstrings are written for ``help()`` and doctest (tests/test_doctests.py runs
them); two of their conventions need translating for the site, without touching a source
file:

- ``Example:`` opens the doctest, as Gymnasium writes it; griffe's Google parser knows only
  ``Examples:`` as code and would render the ``>>>`` lines as prose.
- Sphinx roles (``:class:`~zooport.envs.CorePool```, ``:func:``, ``:mod:``...) become
  links where the target has a page on the site, otherwise inline code.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:\s*$", flags=re.M)
# ``:role:`~path` ``, ``:role:`path` `` or ``:role:`title <path>` ``; a path may be broken
# over two lines of the docstring.
_ROLE = re.compile(
    r":(?:class|func|meth|mod|attr|data|exc|obj):`(~?)([\w.\s]+?)\s*(?:<([\w.\s]+)>)?`"
)


class ZooportDocstrings(griffe.Extension):
    """Rewrites docstrings once the whole ``zooport`` package is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.path != "zooport":
            return
        for obj in _walk(pkg):
            docstring = obj.docstring
            if docstring is None:
                continue
            text = _EXAMPLE.sub(r"\1Examples:", docstring.value)
            docstring.value = _ROLE.sub(functools.partial(_reference, pkg, obj), text)


def _walk(obj: griffe.Object):
    yield obj
    for member in obj.members.values():
        if not member.is_alias and member.parent is obj:
            yield from _walk(member)


def _reference(pkg: griffe.Module, where: griffe.Object, match: re.Match[str]) -> str:
    """A role as a cross-reference where its target is on the site, else as code."""
    short, text, explicit = match.groups()
    path = re.sub(r"\s+", "", explicit or text)
    if explicit:
        shown = " ".join(text.split())
    else:
        shown = path.rpartition(".")[2] if short else path
    target = _resolve(pkg, where, path)
    if target is None:
        return f"``{shown}``"
    return f"[`{shown}`][{target}]"


def _resolve(pkg: griffe.Module, where: griffe.Object, path: str) -> str | None:
    """The full path of a public, documented zooport object that ``path`` names, or None."""
    candidates = [path]
    if not path.startswith("zooport"):
        # Relative to the object's module and class, as Sphinx resolves a bare name.
        module = where if where.is_module else where.module
        candidates += [f"{where.path}.{path}", f"{module.path}.{path}"]
    for candidate in candidates:
        if not candidate.startswith("zooport."):
            continue
        try:
            target = pkg.modules_collection[candidate]
        except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            continue
        try:
            target = target.final_target if target.is_alias else target
        except (griffe.AliasResolutionError, griffe.CyclicAliasError):
            continue
        parts = target.path.split(".")
        if any(part.startswith("_") for part in parts[1:]):
            return None
        if target.is_module or target.docstring:
            return target.path
        return None
    return None
