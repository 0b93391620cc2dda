"""The README's Python blocks run as written, so the README stays true to the code."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    # The README trains for real; the test checks the code runs, not that it learns, so
    # the training budget shrinks (examples/sb3_gym_make.py checks the learning).
    return [re.sub(r"\.learn\(\s*[0-9_]+\s*\)", ".learn(64)", b) for b in blocks]


def test_readme_has_python_examples():
    assert len(_python_blocks()) >= 1


def test_readme_python_blocks_run():
    namespace: dict = {"__name__": "readme"}
    for block in _python_blocks():
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - our own README
