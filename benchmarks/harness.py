"""The timing harness, for the scripts beside it (``from harness import ...``).

It ships in the package as :mod:`zooport.cli.bench.harness`; this module re-exports it.
"""

from __future__ import annotations

from zooport.cli.bench import harness as _shipped
from zooport.cli.bench.harness import *  # noqa: F403 - a shim: every public name, none listed again

__all__ = list(_shipped.__all__)
