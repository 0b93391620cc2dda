"""The package layout promised by the design: zooport, zooport.envs, zooport.adapters."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

ROOT = Path(__file__).resolve().parents[1]


def _declared_packages() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return config["tool"]["setuptools"]["packages"]


def test_every_package_directory_is_declared() -> None:
    """A new subpackage that pyproject.toml does not list would be missing from a wheel."""
    found = set()
    for top, mapped in (
        ("zooport", "zooport"),
        ("envs", "zooport.envs"),
        ("adapters", "zooport.adapters"),
    ):
        for dirpath, _, files in os.walk(ROOT / top):
            if "__init__.py" in files and "__pycache__" not in dirpath:
                rel = Path(dirpath).relative_to(ROOT / top)
                found.add(".".join([mapped, *rel.parts]) if rel.parts else mapped)
    assert found == set(_declared_packages())


def test_import_from_outside_the_checkout(tmp_path: Path) -> None:
    code = (
        "import zooport, zooport.envs, zooport.adapters, sys;"
        "assert 'envs' not in sys.modules and 'adapters' not in sys.modules;"
        "print(zooport.envs.__name__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "zooport.envs"


def test_a_wheel_ships_the_py_typed_markers(tmp_path: Path) -> None:
    """PEP 561: without py.typed a user's type checker ignores zooport's annotations."""
    build = (
        "import sys; from setuptools import build_meta;print(build_meta.build_wheel(sys.argv[1]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", build, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    wheel = tmp_path / out.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    for package in ("zooport", "zooport/envs", "zooport/adapters"):
        assert f"{package}/py.typed" in names, package
        assert f"{package}/__init__.py" in names, package
