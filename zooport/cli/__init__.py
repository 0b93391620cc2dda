"""The ``zooport`` command line and the programs it runs; nothing else imports it, and
importing this package imports none of its modules (``main`` loads :mod:`zooport.cli.app`)."""

from __future__ import annotations

from typing import Any

__all__ = ["main", "build_parser"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from zooport.cli import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
