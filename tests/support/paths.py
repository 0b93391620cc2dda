"""Where the checkout's files are, and loading its scripts as modules, for the tests.

Constants:
    REPO: the checkout's root; EXAMPLES, BENCHMARKS: its ``examples/`` and ``benchmarks/``.

Functions:
    load_script: a script file (an example, a benchmark) executed as a module.
    importable: a module written from source into a directory put on ``sys.path``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

__all__ = ["REPO", "EXAMPLES", "BENCHMARKS", "importable", "load_script"]

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
BENCHMARKS = REPO / "benchmarks"


def load_script(path: Path, name: str, *, keep: bool = False) -> ModuleType:
    """Executes the script at ``path`` as a module called ``name`` and returns it.

    The module is in ``sys.modules`` while it runs (dataclasses look their module up
    there); with ``keep=False`` it leaves afterwards, so that cloudpickle (Ray) ships what
    it defines by value, as it does for a script run as ``__main__``. As ``python script.py``
    does, the script's directory is first on ``sys.path`` while it runs (the examples import
    their ``example_support`` package from there).
    """
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"expected a Python script, got {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
        if not keep:
            del sys.modules[name]
    return module


@contextlib.contextmanager
def importable(directory: Path, module: str, source: str) -> Iterator[Path]:
    """Writes ``source`` as ``directory/<module>.py`` and puts ``directory`` first on
    ``sys.path`` until the context ends (then the module is forgotten); yields ``directory``
    (a subprocess takes it as its ``PYTHONPATH``)."""
    (directory / f"{module}.py").write_text(source)
    sys.path.insert(0, str(directory))
    try:
        yield directory
    finally:
        sys.path.remove(str(directory))
        sys.modules.pop(module, None)
