"""``python benchmarks/pool.py`` (``make bench-pool``): the CorePool benchmark, from a checkout.

A thin front: the benchmark, its routes and its costly core ship in the package
(:mod:`zooport.cli.bench.pool`), so ``zooport bench --workers K`` runs them after a plain
``pip install``. Same ``main``, same options (``--help``; method in README.md).
"""

from __future__ import annotations

import sys

from zooport.cli.bench.pool import main

if __name__ == "__main__":
    sys.exit(main())
