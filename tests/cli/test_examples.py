"""Every script in examples/ runs in its short mode (``ZOOPORT_EXAMPLE_SHORT=1``) and exits 0.

Examples are found by globbing, so a new one is covered the day it lands. Each runs as a user
would run it: ``python examples/<name>.py`` in a subprocess, from the repository root.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import EXAMPLES, REPO

SCRIPTS = sorted(EXAMPLES.glob("*.py"))
#: Examples that need what this venv does not have, with the reason.
NEEDS_OTHER_VENV = {
    "rllib_tag.py": "needs ray[rllib], which lives in its own venv (.venv-rllib)",
}
TIMEOUT = 300


def test_examples_are_found():
    names = {p.name for p in SCRIPTS}
    assert {"own_batched_env.py", "maskable_ppo_gridworld.py", "unity_build.py"} <= names


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_example_declares_its_short_mode(path: Path):
    source = path.read_text()
    # The shared command line (example_support.sb3.parse_arguments) reads it for its users.
    support = (EXAMPLES / "example_support/sb3.py").read_text()
    shared = "parse_arguments" in source and _reads_short_mode(support)
    assert _reads_short_mode(source) or shared, (
        f"{path.name} does not read ZOOPORT_EXAMPLE_SHORT, so CI would run it in full"
    )
    assert source.startswith('"""'), f"{path.name} has no module docstring"


def _reads_short_mode(source: str) -> bool:
    return '"ZOOPORT_EXAMPLE_SHORT"' in source or "'ZOOPORT_EXAMPLE_SHORT'" in source


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_example_runs_in_short_mode(path: Path):
    if path.name in NEEDS_OTHER_VENV:
        pytest.skip(NEEDS_OTHER_VENV[path.name])
    env = {**os.environ, "ZOOPORT_EXAMPLE_SHORT": "1", "PYTHONUNBUFFERED": "1"}
    done = subprocess.run(
        [sys.executable, str(path)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, (
        f"{path.name} exited {done.returncode}\n--- stdout\n{done.stdout[-3000:]}"
        f"\n--- stderr\n{done.stderr[-3000:]}"
    )
    assert done.stdout.strip(), f"{path.name} printed nothing"
