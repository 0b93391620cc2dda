"""``zooport bench`` after a plain (non-editable) ``pip install``, away from any checkout.

The package is built from a copy of the sources and installed into a scratch venv whose own
site-packages holds nothing but that install; the dependencies come from this interpreter's
site-packages, layered in by a ``.pth`` file as this repository's venvs layer theirs (a plain
path line: no ``.pth`` of theirs runs, so an editable zooport there stays invisible). Nothing
is downloaded (``--no-index``, no build isolation: the build backend is the one installed).
The console script of that install then runs the quick benchmark in an empty directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from tests.support.paths import REPO

#: What a source distribution of zooport holds (pyproject's package-dir and readme).
SOURCES = ("pyproject.toml", "README.md", "zooport", "envs", "adapters")


def _dependency_layers() -> list[str]:
    """The site-packages the scratch venv borrows: this interpreter's, its own last."""
    own = Path(sysconfig.get_paths()["purelib"]).resolve()
    layers = [p for p in sys.path if p.endswith("site-packages") and Path(p).resolve() != own]
    return layers or [str(own)]


def _run(command: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scratch venv's ``bin`` with zooport installed from a copy of the sources."""
    base = tmp_path_factory.mktemp("plain_install")
    source = base / "source"
    source.mkdir()
    for name in SOURCES:
        origin = REPO / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(origin, source / name)
    environment = base / "venv"
    venv.EnvBuilder(with_pip=False).create(environment)
    python = environment / "bin" / "python"
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                   cwd=base).stdout.strip()  # fmt: skip
    Path(purelib, "zz_layers.pth").write_text("\n".join(_dependency_layers()) + "\n")
    probe = _run([str(python), "-c", "import pip, setuptools"], cwd=base)
    if probe.returncode != 0:
        pytest.skip(f"no pip/setuptools to build with offline: {probe.stderr.strip()[-200:]}")
    done = _run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--no-build-isolation",
         "--ignore-installed", "--disable-pip-version-check", "--quiet", str(source)],
        cwd=base,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return environment / "bin"


def test_the_install_is_a_plain_one_outside_the_checkout(installed: Path, tmp_path: Path) -> None:
    done = _run([str(installed / "python"), "-c", "import zooport; print(zooport.__file__)"],
                cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    location = Path(done.stdout.strip()).resolve()
    assert installed.parent.resolve() in location.parents
    assert REPO not in location.parents
    assert not (installed.parent / "lib").joinpath("benchmarks").exists()


def test_bench_runs_after_a_plain_install(installed: Path, tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    done = _run(
        [str(installed / "zooport"), "--plain", "bench", "--quick", "--n", "1", "--envs",
         "Trivial", "--routes", "raw", "BehaviorVectorEnv", "--json", str(out)],
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("| env | N | raw | BehaviorVectorEnv |")
    results = json.loads(out.read_text(encoding="utf-8"))["results"]
    assert [(r["env"], r["n"], r["route"]) for r in results] == [
        ("Trivial", 1, "raw"), ("Trivial", 1, "BehaviorVectorEnv"),
    ]  # fmt: skip
    assert all(r["agent_steps_per_s"] > 0 for r in results)
