"""How a newcomer installs zooport: the README's lines, its list of extras, every install
hint the code prints, and the lean install of ``make demo``."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from zooport.cli.common import install_hint
from zooport.errors import a_type, article

from tests.support.paths import REPO

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
EXTRAS = PYPROJECT["project"]["optional-dependencies"]
README = (REPO / "README.md").read_text()
#: Where the package's own code lives (what a pip install ships).
SOURCES = [p for d in ("zooport", "envs", "adapters") for p in (REPO / d).rglob("*.py")]


def _install_section() -> str:
    return README.split("## Install", 1)[1].split("\n## ", 1)[0]


def test_readme_installs_from_a_clone_torch_first_with_quoted_extras():
    lines = re.findall(r"^pip install .*$", _install_section(), flags=re.M)
    assert lines[0] == "pip install torch==2.13.0", lines
    assert lines[1] == 'pip install -e ".[sb3]"', lines
    # Brackets and >= unquoted break in zsh (a glob) and in every shell (a redirection).
    for line in re.findall(r"pip install [^`\n]*", README):
        for argument in line.split()[2:]:
            assert not re.search(r"[\[\]<>]", argument) or argument[0] in "\"'", line
    assert "pip install zooport" not in README  # not on PyPI


def test_readme_lists_every_extra_and_what_it_brings():
    section = _install_section()
    for extra, packages in EXTRAS.items():
        row = next((r for r in section.splitlines() if r.startswith(f"| `{extra}` |")), None)
        assert row is not None, f"the README's list of extras has no row for {extra!r}"
        for requirement in packages:
            name = re.split(r"[<>=\[; ]", requirement)[0]
            if name != "zooport":
                assert name in row, (extra, name, row)


def test_every_install_hint_in_the_package_works_in_any_shell():
    hints = []
    for path in SOURCES:
        for line in path.read_text().splitlines():
            if "pip install" in line:
                hints.append((path.relative_to(REPO), line))
    assert hints
    for path, line in hints:
        assert "pip install zooport" not in line, (path, line)  # not on PyPI
        command = line.split("pip install", 1)[1]
        for argument in re.findall(r"\S+", re.split(r"[`),]", command)[0]):
            if re.search(r"[\[\]<>]", argument):
                assert argument.lstrip("(`'\\")[:1] in "\"'", (path, line)


@pytest.mark.parametrize("extra", ["sb3", "train", "plots"])
def test_an_extras_hint_names_its_packages_quoted(extra):
    if install_hint("sb3").startswith("pip install -e"):
        pytest.skip("zooport is not installed in this interpreter (its metadata is missing)")
    hint = install_hint(extra)
    assert hint.startswith("pip install ")
    for requirement in EXTRAS[extra]:
        assert f'"{requirement}"' in hint, hint


def test_the_unity_extra_has_the_pins_the_mlagents_venv_proves():
    pins = (REPO / "tests" / "mlagents" / "requirements.txt").read_text()
    for requirement in ("mlagents-envs==0.28.0", "protobuf==3.20.3"):
        assert requirement in EXTRAS["unity"] and requirement in pins


def test_articles_in_messages():
    assert [a_type(v) for v in (3, [], None, 1.5, object())] == [
        "an int", "a list", "a NoneType", "a float", "an object",
    ]  # fmt: skip
    assert [article(w) for w in ("8-byte", "11x11", "5x5", "int64", "Unity build")] == [
        "an 8-byte", "an 11x11", "a 5x5", "an int64", "a Unity build",
    ]  # fmt: skip
    # No message builds "a <type name>" by hand: a_type and article pick the article.
    for path in SOURCES:
        text = path.read_text()
        assert not re.search(r"\ba \{type\([^)]*\)\.__name__\}", text), path


def test_make_demo_installs_only_what_the_demo_needs(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("no make")
    done = subprocess.run(
        ["make", "-n", "--no-print-directory", "demo", f"VENV={tmp_path / 'venv'}"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    installs = [
        line.split(" pip install ", 1)[1]
        for line in done.stdout.splitlines()
        if " pip install " in line
    ]
    assert installs == ["--upgrade pip", "torch==2.13.0", '-e ".[train,plots]"'], installs
    assert done.stdout.splitlines()[-1].endswith("-m zooport.demo")
