"""The timing harness, for the scripts beside it (``from harness import ...``).

It ships in the package as :mod:`zooport.cli.bench.harness`; this module re-exports it.
"""

from __future__ import annotations

from zooport.cli.bench.harness import (
    Budget,
    Measurement,
    Route,
    RouteUnavailable,
    machine_info,
    measure_case,
)

__all__ = ["Route", "RouteUnavailable", "Measurement", "Budget", "measure_case", "machine_info"]
