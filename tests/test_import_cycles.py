"""No module of zooport imports one that imports it back (DESIGN.md, "Layers").

Every ``.py`` file of ``zooport``, ``zooport.envs`` and ``zooport.adapters`` is parsed with
``ast`` (nothing is imported) and each ``import``/``from ... import`` becomes an edge to the
zooport module it names: ``from zooport.cli import common`` to ``zooport.cli.common``,
``from zooport.checks import one_line`` to ``zooport.checks``, relative imports resolved.

How imports count:

- Module-level imports (the module body, and ``if``/``try``/``with``/class bodies in it) run
  when the module is imported; a cycle among them can break an import outright. None may
  form a cycle.
- Lazy imports (inside a function) run later, so a cycle through one never fails at import
  time, but it is still a layering cycle: the lower module reaches back up (the command
  line's ``cli -> demo -> cli`` and ``play -> demo -> play`` were all lazy). They count
  too, except the cycles listed in :data:`KNOWN_LAZY_CYCLES`, which another change
  removes; an entry that no longer exists fails the test, so the list cannot go stale.
- ``if TYPE_CHECKING:`` blocks never run and do not count.
- Importing ``a.b.c`` runs the ``__init__`` of ``a`` and ``a.b`` first, but that is not an
  edge to them: a package's ``__init__`` importing its own submodules (to re-export them)
  is how packages work, and counting parents would make every such package a cycle.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path

import zooport
import zooport.adapters
import zooport.envs

#: Lazy-import cycles inside ``zooport.adapters`` still to be removed.
KNOWN_LAZY_CYCLES: frozenset[frozenset[str]] = frozenset()


def package_modules(roots: Mapping[str, Path]) -> dict[str, Path]:
    """``{module name: file}`` of every ``.py`` under each package root, by its real name."""
    modules: dict[str, Path] = {}
    for package, directory in roots.items():
        for file in sorted(directory.rglob("*.py")):
            parts = list(file.relative_to(directory).with_suffix("").parts)
            if "__pycache__" in parts:
                continue
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join([package, *parts])
            modules.setdefault(name, file)  # a subpackage mapped elsewhere keeps its own root
    return modules


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST, lazy: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import under ``node``, with whether it runs only when a function is called."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, lazy
        elif isinstance(child, ast.If) and _is_type_checking(child):
            yield from (item for stmt in child.orelse for item in _imports_of(stmt, lazy))
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from _imports(child, True)
        else:
            yield from _imports(child, lazy)


def _imports_of(stmt: ast.stmt, lazy: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        yield stmt, lazy
    else:
        yield from _imports(stmt, lazy)


def import_edges(modules: Mapping[str, Path]) -> dict[str, dict[str, bool]]:
    """``{module: {imported module: whether every import of it is lazy}}``."""

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, dict[str, bool]] = {}
    for name, file in modules.items():
        tree = ast.parse(file.read_text(encoding="utf-8"), str(file))
        package = name if file.name == "__init__.py" else name.rpartition(".")[0]
        out: dict[str, bool] = {}
        for node, lazy in _imports(tree, False):
            if isinstance(node, ast.Import):
                targets = [owner(alias.name) for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    base = f"{anchor}.{base}" if base else anchor
                # "from a import b": the submodule a.b if there is one, else a's attribute b.
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else owner(base)
                    for alias in node.names
                ]
            for target in targets:
                if target is not None and target != name:
                    out[target] = out.get(target, True) and lazy
        edges[name] = out
    return edges


def cycles(
    edges: Mapping[str, Mapping[str, bool]], *, module_level_only: bool
) -> dict[frozenset[str], list[str]]:
    """The strongly connected components of more than one module, each with one cycle
    through it (``[a, b, ..., a]``) for the failure message."""
    graph = {
        name: sorted(t for t, lazy in out.items() if not (module_level_only and lazy))
        for name, out in edges.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: dict[frozenset[str], list[str]] = {}

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found[frozenset(component)] = _cycle_path(graph, set(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _cycle_path(graph: Mapping[str, list[str]], component: set[str]) -> list[str]:
    """One cycle through the component, ``[a, b, ..., a]``, for the failure message."""
    start = min(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in graph[node]:
            if target == start:
                return [*paths[node], start]
            if target in component and target not in paths:
                paths[target] = [*paths[node], target]
                queue.append(target)
    return sorted(component)  # pragma: no cover - a component always has a cycle


def _zooport_roots() -> dict[str, Path]:
    return {
        "zooport": Path(zooport.__path__[0]),
        "zooport.envs": Path(zooport.envs.__path__[0]),
        "zooport.adapters": Path(zooport.adapters.__path__[0]),
    }


def _format(found: Mapping[frozenset[str], list[str]]) -> str:
    return "\n".join(
        f"{' -> '.join(path)} (modules in the cycle: {sorted(component)})"
        for component, path in found.items()
    )


# ---------------------------------------------------------------------- the package


def test_no_import_cycle_at_module_level() -> None:
    found = cycles(import_edges(package_modules(_zooport_roots())), module_level_only=True)
    assert not found, f"module-level import cycles:\n{_format(found)}"


def test_no_import_cycle_through_lazy_imports_but_the_known_ones() -> None:
    found = cycles(import_edges(package_modules(_zooport_roots())), module_level_only=False)
    new = {c: path for c, path in found.items() if c not in KNOWN_LAZY_CYCLES}
    assert not new, f"import cycles (lazy imports included):\n{_format(new)}"
    gone = KNOWN_LAZY_CYCLES - found.keys()
    assert not gone, f"no longer a cycle, remove it from KNOWN_LAZY_CYCLES: {sorted(gone)}"


def test_every_module_is_walked() -> None:
    modules = package_modules(_zooport_roots())
    for name in ("zooport", "zooport.cli.app", "zooport.cli.common", "zooport.checks",
                 "zooport.envs.base_env", "zooport.adapters.gym_env"):  # fmt: skip
        assert name in modules
    assert not any(name.startswith(("zooport.envs.adapters", "zooport.adapters.envs"))
                   for name in modules)  # fmt: skip


def test_the_programs_common_module_is_a_leaf() -> None:
    """``zooport.cli.common`` imports no other module of the command line's package."""
    edges = import_edges(package_modules(_zooport_roots()))["zooport.cli.common"]
    assert not [t for t in edges if t.startswith("zooport.cli")]
    assert not [t for t in edges if t.startswith("zooport.adapters")]


# ---------------------------------------------------------------------- the detector


def _package(tmp_path: Path, files: Mapping[str, str]) -> dict[str, Path]:
    root = tmp_path / "pkg"
    for relative, source in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")
    return package_modules({"pkg": root})


def test_detector_finds_module_level_and_lazy_cycles(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "__init__.py": "from pkg import a\n",  # a package importing its child: no cycle
            "a.py": "from pkg.b import thing\n",
            "b.py": "from . import c\nthing = 1\n",
            "c.py": "import pkg.a\n",  # a -> b -> c -> a at module level
            "low.py": "def f():\n    from pkg.high import x\n",  # lazy, reaching up
            "high.py": "from pkg import low\nx = 1\n",
            "typed.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.d\n",
            "d.py": "import pkg.typed\n",
        },
    )
    edges = import_edges(modules)
    assert edges["pkg"] == {"pkg.a": False}
    assert edges["pkg.low"] == {"pkg.high": True}
    assert "pkg.d" not in edges["pkg.typed"]
    assert cycles(edges, module_level_only=True) == {
        frozenset({"pkg.a", "pkg.b", "pkg.c"}): ["pkg.a", "pkg.b", "pkg.c", "pkg.a"]
    }
    found = cycles(edges, module_level_only=False)
    assert found.keys() == {
        frozenset({"pkg.a", "pkg.b", "pkg.c"}),
        frozenset({"pkg.high", "pkg.low"}),
    }


def test_detector_resolves_relative_and_attribute_imports(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "__init__.py": "",
            "sub/__init__.py": "from .inner import name\n",
            "sub/inner.py": "from .. import top\nfrom ..sub import other\nname = 1\n",
            "sub/other.py": "",
            "top.py": "from pkg.sub.inner import name\n",
        },
    )
    edges = import_edges(modules)
    assert edges["pkg.sub"] == {"pkg.sub.inner": False}
    assert edges["pkg.sub.inner"] == {"pkg.top": False, "pkg.sub.other": False}
    assert list(cycles(edges, module_level_only=True).values()) == [
        ["pkg.sub.inner", "pkg.top", "pkg.sub.inner"]
    ]
