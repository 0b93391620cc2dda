"""The benchmark's routes, for the scripts beside it (``from routes import ...``).

They ship in the package as :mod:`zooport.cli.bench.routes` (add a route there); this module
re-exports them.
"""

from __future__ import annotations

from zooport.cli.bench import routes as _shipped
from zooport.cli.bench.routes import *  # noqa: F403 - a shim: every public name, none listed again

__all__ = list(_shipped.__all__)
