"""The benchmark's trivial core, for the scripts beside it (``from trivial_core import ...``).

It ships in the package as :mod:`zooport.cli.bench.trivial_core`; this module re-exports it.
"""

from __future__ import annotations

from zooport.cli.bench import trivial_core as _shipped
from zooport.cli.bench.trivial_core import *  # noqa: F403 - a shim: every public name, none listed again

__all__ = list(_shipped.__all__)
