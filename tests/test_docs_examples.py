"""The documentation site's pages are true to the code and name the tests that back them.

- Every ```python block of a page runs, the page's blocks in order in one namespace (as a
  reader would paste them); training budgets shrink, as in tests/test_readme.py. A block
  that shows a file through a snippet include (``--8<--``) is that file, run by its own test.
  A page whose blocks import a package this venv does not have (skrl, tianshou, AgileRL live
  in .venv-consumers) is skipped, naming the package; so is a page that shows an API newer
  than this venv's (the floor venv runs the oldest supported versions). ```py blocks are
  shown, not run (a Unity build, a Ray cluster).
- Every page ends with a "Tested by" section whose test files exist, and every test
  function a page names exists.
- Every link from the README into docs/ reaches a page, and an anchor a heading of it.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_hooks" not in p.parts)
#: The page that only introduces the generated reference has nothing to back.
UNBACKED = {DOCS / "reference" / "index.md"}

_PYTHON_BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```", flags=re.S | re.M)
_SNIPPET = re.compile(r"^\s*--8<--", flags=re.M)
_BUDGET = re.compile(r"\.learn\(\s*[0-9_]+\s*\)")
#: Warnings a page's code may raise (the suite makes every other warning an error), with why.
ALLOWED_WARNINGS = {
    # TorchRL 0.14's PettingZooWrapper warns on every construction unless PettingZoo is
    # exactly 1.24.3; the recipe lists it among TorchRL's quirks.
    "recipes/torchrl.md": [("PettingZoo in TorchRL is tested using version", UserWarning)],
}


#: Pages that show an API of a newer release than zooport's floor (pyproject's lower bounds).
NEWER_THAN_FLOOR = {
    "quickstart.md": ("pettingzoo", "1.27"),  # pettingzoo.make, PettingZoo's own registry
    "guides/gymnasium-and-sb3.md": ("gymnasium", "1.1"),  # gymnasium.vector.AutoresetMode
}


def _too_old(page_name: str) -> str | None:
    """Why this venv cannot run the page, or None."""
    if page_name not in NEWER_THAN_FLOOR:
        return None
    package, needed = NEWER_THAN_FLOOR[page_name]
    installed = importlib.metadata.version(package)
    if Version(installed) < Version(needed):
        return f"{page_name} shows {package} >= {needed}'s API; this venv has {installed}"
    return None


def _name(page: Path) -> str:
    return page.relative_to(DOCS).as_posix()


def python_blocks(text: str) -> list[str]:
    """A page's runnable blocks, with their training budgets cut to a smoke run."""
    blocks = [b for b in _PYTHON_BLOCK.findall(text) if not _SNIPPET.search(b)]
    # The pages train for real; these tests check the code runs, not that it learns
    # (the examples and consumer tests check the learning).
    return [_BUDGET.sub(".learn(64)", b) for b in blocks]


def missing_packages(blocks: list[str]) -> list[str]:
    """Top-level packages the blocks import that this venv cannot import."""
    names = set()
    for block in blocks:
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.Import):
                names.update(alias.name.partition(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.partition(".")[0])
    return sorted(n for n in names if importlib.util.find_spec(n) is None)


def _slug(heading: str) -> str:
    """The anchor Python-Markdown's toc extension gives a heading (its default slugify)."""
    text = re.sub(r"[`*]", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


PAGES_WITH_CODE = [p for p in PAGES if python_blocks(p.read_text())]


def test_the_docs_have_pages_and_examples():
    assert len(PAGES) >= 20
    assert len(PAGES_WITH_CODE) >= 12


@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=_name)
def test_page_examples_run(page: Path):
    blocks = python_blocks(page.read_text())
    codes = [compile(block, str(page), "exec") for block in blocks]  # valid Python, at least
    missing = missing_packages(blocks)
    if missing:
        pytest.skip(f"{_name(page)} needs {missing}, installed in another venv")
    if reason := _too_old(_name(page)):
        pytest.skip(reason)
    namespace: dict = {"__name__": f"docs_{page.stem.replace('-', '_')}"}
    with warnings.catch_warnings():
        for message, category in ALLOWED_WARNINGS.get(_name(page), []):
            warnings.filterwarnings("ignore", message, category)
        for code in codes:
            exec(code, namespace)  # noqa: S102 - our own docs
    if page.name == "batched-env.md":
        _drift_steps(namespace["Drift"])


def _drift_steps(drift_class) -> None:
    """The guide's ``Drift`` keeps its agents through 50 raw BaseEnv steps (restarts)."""
    drift = drift_class(n_agents=4, seed=0)
    drift.reset()
    spec = drift.behavior_specs["Drift"].action_spec
    rng = np.random.default_rng(0)
    for _ in range(50):
        decision, _ = drift.get_steps("Drift")
        drift.set_actions("Drift", spec.random_action(len(decision), rng))
        drift.step()
    decision, _ = drift.get_steps("Drift")
    assert sorted(decision.agent_id.tolist()) == [0, 1, 2, 3]


@pytest.mark.parametrize("page", [p for p in PAGES if p not in UNBACKED], ids=_name)
def test_page_names_the_tests_that_back_it(page: Path):
    text = page.read_text()
    assert "\n## Tested by\n" in text, f"{_name(page)} has no 'Tested by' section"
    section = text.split("\n## Tested by\n", 1)[1]
    files = set(re.findall(r"`(tests/[\w/.-]+\.py)`", section))
    folders = set(re.findall(r"`(tests/[\w/-]+/)`", section))
    assert files or folders, f"{_name(page)}'s 'Tested by' names no test file"
    missing = sorted(f for f in files | folders if not (ROOT / f).exists())
    assert not missing, f"{_name(page)} names test files that do not exist: {missing}"


def test_test_functions_the_docs_name_exist():
    named = set()
    for page in PAGES:
        named.update(re.findall(r"`(test_\w+)`", page.read_text()))
    defined = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        defined.update(re.findall(r"^def (test_\w+)", path.read_text(), flags=re.M))
    assert named, "the docs name no test function"
    assert not sorted(named - defined), f"no such test: {sorted(named - defined)}"


#: How the README and the reliability guide state the bad-input matrix's size
#: (tests/test_bad_inputs.py checks the README's figures against the matrix).
_MATRIX_SIZE = re.compile(
    r"(\d+) cases over (\d+) public entry\s+points.*?(\d+) kinds of bad input.*?plus (\d+)\s+"
    r"command-line cases",
    flags=re.S,
)


def test_the_reliability_guide_states_the_matrix_size_the_readme_does():
    readme = _MATRIX_SIZE.search((ROOT / "README.md").read_text())
    guide = _MATRIX_SIZE.search((DOCS / "guides" / "reliability.md").read_text())
    assert readme is not None and guide is not None
    assert guide.groups() == readme.groups()


def _readme_links() -> list[tuple[str, str]]:
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\((docs/[^)#\s]+)(?:#([^)\s]+))?\)", readme)
    return [(path, anchor) for path, anchor in links]


def test_readme_links_into_the_docs():
    assert len({path for path, _ in _readme_links()}) >= 8


@pytest.mark.parametrize("path, anchor", _readme_links())
def test_readme_link_reaches_a_page_and_heading(path: str, anchor: str):
    page = ROOT / path
    assert page.is_file(), f"README links to {path}, which does not exist"
    if anchor:
        assert anchor in anchors(page), f"{path} has no heading with the anchor #{anchor}"
