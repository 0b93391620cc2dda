"""The benchmark's routes, for the scripts beside it (``from routes import ...``).

They ship in the package as :mod:`zooport.cli.bench.routes` (add a route there); this module
re-exports them.
"""

from __future__ import annotations

from zooport.cli.bench.routes import (
    ACTION_BATCHES,
    MULTI_AGENT_ROUTES,
    ROUTE_NAMES,
    VECTOR_ROUTES,
    EnvCase,
    route_builders,
)

__all__ = [
    "ACTION_BATCHES",
    "MULTI_AGENT_ROUTES",
    "ROUTE_NAMES",
    "VECTOR_ROUTES",
    "EnvCase",
    "route_builders",
]
