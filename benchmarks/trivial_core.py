"""The benchmark's trivial core, for the scripts beside it (``from trivial_core import ...``).

It ships in the package as :mod:`zooport.cli.bench.trivial_core`; this module re-exports it.
"""

from __future__ import annotations

from zooport.cli.bench.trivial_core import TrivialCore

__all__ = ["TrivialCore"]
