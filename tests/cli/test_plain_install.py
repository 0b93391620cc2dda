"""zooport installed as a newcomer installs it, used away from any checkout.

- ``zooport bench`` after a plain (non-editable) ``pip install``.
- The README's install lines, run as written in a copy of the sources (the "clone"), then,
  from another directory, the README's Python snippet and ``zooport check`` on the two-team
  core of the BatchedEnv guide, saved as a user's ``my_env.py`` (issue 22's "done when").

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
import re
import shlex
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


def _copy_sources(source: Path) -> None:
    source.mkdir()
    for name in SOURCES:
        origin = REPO / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(origin, source / name)


def _scratch_venv(base: Path) -> Path:
    """A venv whose own site-packages is empty, the dependencies layered in; its python."""
    environment = base / "venv"
    venv.EnvBuilder(with_pip=False).create(environment)
    python = environment / "bin" / "python"
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                   cwd=base).stdout.strip()  # fmt: skip
    Path(purelib, "zz_layers.pth").write_text("\n".join(_dependency_layers()) + "\n")
    probe = _run([str(python), "-c", "import pip, setuptools"], cwd=base)
    if probe.returncode != 0:
        pytest.skip(f"no pip/setuptools to build with offline: {probe.stderr.strip()[-200:]}")
    return python


#: pip's options that keep an install offline: what it needs is already in the layers.
OFFLINE = ["--no-index", "--no-build-isolation", "--disable-pip-version-check", "--quiet"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scratch venv's ``bin`` with zooport installed from a copy of the sources."""
    base = tmp_path_factory.mktemp("plain_install")
    source = base / "source"
    _copy_sources(source)
    python = _scratch_venv(base)
    done = _run(
        [str(python), "-m", "pip", "install", "--no-deps", "--ignore-installed", *OFFLINE,
         str(source)],
        cwd=base,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return python.parent


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


def _readme_install_lines() -> list[list[str]]:
    """The ``pip install`` lines of the README's Install section, split as a shell would."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S)
    assert block is not None, "the README's Install section has no bash block"
    lines = [shlex.split(line) for line in block.group(1).splitlines()]
    return [line for line in lines if line[:2] == ["pip", "install"]]


def _guide_block(page: str, marker: str) -> str:
    """The ```python block of a docs page that contains ``marker``."""
    text = (REPO / "docs" / page).read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    return next(b for b in blocks if marker in b)


@pytest.fixture(scope="module")
def readme_installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scratch venv's ``bin`` after the README's install lines, run in a copy of the sources."""
    base = tmp_path_factory.mktemp("readme_install")
    clone = base / "zooport"
    _copy_sources(clone)
    python = _scratch_venv(base)
    lines = _readme_install_lines()
    assert [line[2:] for line in lines] == [["torch==2.13.0"], ["-e", ".[sb3]"]]
    for line in lines:
        done = _run([str(python), "-m", *line, *OFFLINE], cwd=clone)
        assert done.returncode == 0, (line, done.stdout + done.stderr)
    return python.parent


def test_the_readme_install_then_its_snippet_and_check_on_a_two_team_core(
    readme_installed: Path, tmp_path: Path
) -> None:
    pytest.importorskip("stable_baselines3", reason="the README's snippet trains with SB3")
    # The snippet, from a directory that is not the clone; the budget cut as test_readme does.
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    snippet = re.findall(r"```python\n(.*?)```", readme, flags=re.S)[0]
    snippet = re.sub(r"\.learn\(\s*[0-9_]+\s*\)", ".learn(64)", snippet)
    snippet += "\nimport zooport\nprint(zooport.__file__)\n"
    done = _run([str(readme_installed / "python"), "-c", snippet], cwd=tmp_path, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    clone = readme_installed.parent.parent / "zooport"
    assert clone in Path(done.stdout.strip()).parents  # the editable install of the clone
    # The guide's two-team core, as a user's file, checked by the installed console script.
    (tmp_path / "my_env.py").write_text(_guide_block("guides/batched-env.md", "class Pitch"))
    done = _run([str(readme_installed / "zooport"), "--plain", "check", "my_env:Pitch"],
                cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("my_env:Pitch: PASSED"), done.stdout
