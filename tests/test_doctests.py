"""Runs the doctest ``Example:`` of every zooport module, imported under its real name."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil

import pytest

import zooport

#: Modules that import an optional package at their top, and that package: skipped without it.
OPTIONAL = {
    "zooport.cli.bench.pool_puffer": "pufferlib",
    "zooport.adapters._mlagents_wire_pb2": "grpc",
}


def _module_names() -> list[str]:
    names = ["zooport"]
    for info in pkgutil.walk_packages(zooport.__path__[:1], prefix="zooport."):
        names.append(info.name)
    for sub in ("zooport.envs", "zooport.adapters"):
        package = importlib.import_module(sub)
        names.append(sub)
        names += [i.name for i in pkgutil.walk_packages(package.__path__, prefix=f"{sub}.")]
    # __main__ runs the command line when imported; it has no examples.
    return sorted(
        n
        for n in set(names)
        if not n.endswith(".__main__")
        and (n not in OPTIONAL or importlib.util.find_spec(OPTIONAL[n]) is not None)
    )


@pytest.mark.parametrize("name", _module_names())
def test_module_doctests(name: str) -> None:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(module, name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} doctest example(s) failed in {name}"


def test_doctests_exist() -> None:
    """The public API carries runnable examples; losing them all is a regression."""
    finder = doctest.DocTestFinder(exclude_empty=True)
    count = sum(
        len(t.examples)
        for name in _module_names()
        for t in finder.find(importlib.import_module(name), name)
    )
    assert count >= 20
