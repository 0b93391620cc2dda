"""The test suite's own layout: it mirrors the package, and helpers live in support modules.

- Each directory of tests mirrors a directory of the package (``tests/envs/side_channel``
  tests ``zooport.envs.side_channel``, ``tests/cli`` tests ``zooport.cli``, ...), apart from
  ``support`` and the suites of the separate venvs.
- Every directory of tests is a package, so two test modules may share a file name and
  everything is imported by its full name (``tests.support.probes``).
- No test module imports another test module, and nothing is imported by a bare name that
  only ``sys.path`` tricks would find: a helper two test modules need lives in
  ``tests/support`` (or beside the separate venv's tests that use it) and defines no tests.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.paths import REPO

TESTS = REPO / "tests"
#: Directories of tests that mirror no package directory: the shared helpers, and the suites
#: of the separate venvs (built by the Makefile; see each one's conftest.py).
OWN = {"support", "mlagents", "mlagents_learn", "rllib", "consumers", "benchmarl", "floor"}
#: Where each top-level package directory of the checkout installs.
PACKAGE_DIRS = {"envs": REPO / "envs", "adapters": REPO / "adapters"}

MODULES = sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)
LOCAL_NAMES = {p.stem for p in MODULES} - {"__init__", "conftest"}


def _imported(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in ``path``, relative imports as ``.name``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, "." * node.level + (node.module or "")))
    return found


def _test_directories() -> list[Path]:
    return sorted(
        d
        for d in TESTS.rglob("*")
        if d.is_dir() and "__pycache__" not in d.parts and d.relative_to(TESTS).parts[0] not in OWN
    )


@pytest.mark.parametrize("directory", _test_directories(), ids=lambda d: str(d.relative_to(TESTS)))
def test_each_directory_of_tests_mirrors_one_of_the_package(directory):
    top, *rest = directory.relative_to(TESTS).parts
    package = PACKAGE_DIRS.get(top, REPO / "zooport" / top).joinpath(*rest)
    assert (package / "__init__.py").is_file(), (
        f"tests/{directory.relative_to(TESTS)} mirrors no package"
    )


def test_every_directory_of_tests_is_a_package():
    directories = {p.parent for p in MODULES}
    assert [str(d) for d in sorted(directories) if not (d / "__init__.py").is_file()] == []


def test_no_test_module_imports_another_or_a_module_by_a_bare_name():
    wrong = []
    for path in MODULES:
        for line, module in _imported(path):
            first = module.split(".")[0]
            last = module.rsplit(".", 1)[-1]
            if module.startswith(".") or first in LOCAL_NAMES or last.startswith("test_"):
                wrong.append(f"{path.relative_to(REPO)}:{line} imports {module}")
    assert wrong == []


def test_support_modules_define_no_tests():
    tests = [
        f"{path.relative_to(REPO)}:{node.lineno} {node.name}"
        for path in MODULES
        if not path.name.startswith(("test_", "conftest"))
        for node in ast.parse(path.read_text()).body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test")
    ]
    assert tests == []
