"""``python benchmarks/run.py`` (``make bench``): the adapter benchmark, from a checkout.

A thin front: the harness, its routes, its cores and its report ship in the package
(:mod:`zooport.cli.bench`), so ``zooport bench`` runs them after a plain ``pip install``.
This script runs the same ``main`` with the same options (``--help``; method in README.md).
"""

from __future__ import annotations

import sys

from zooport.cli.bench.run import main

if __name__ == "__main__":
    sys.exit(main())
