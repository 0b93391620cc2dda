"""zooport.cli: the ``zooport`` command line and the programs it runs.

Modules:
    app: the argument parser and :func:`main` (the ``zooport`` console script).
    common: what every program shares (tables, progress bars, GIFs, random actions and
        rollouts, ``UsageError``); it imports no other module of this package.
    targets: what the programs work on (a registry id, ``module:attr`` or a file).
    describe: ``zooport list`` and ``zooport info``.
    play: ``zooport play``, random or a trained model's actions through one adapter.
    training: ``zooport train`` (SB3 PPO through the vector or the PettingZoo route).
    saved_model: a trained model on disk (SB3's zip, with what rebuilds its environment).
    demo: ``make demo`` (``python -m zooport.demo``).
    bench: ``zooport bench``, the adapter benchmark.

The command line sits on top of everything else: nothing outside this package imports it,
and importing this package imports none of its modules (``main`` and ``build_parser``
load :mod:`zooport.cli.app` on first use).
"""

from __future__ import annotations

from typing import Any

__all__ = ["main", "build_parser"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from zooport.cli import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
