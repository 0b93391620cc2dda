"""The ``zooport`` command line and the programs it runs; importing this package imports none
of its modules (``main`` loads :mod:`zooport.cli.app`)."""

from zooport._lazy import lazy_attributes

__all__ = ["main", "build_parser"]
__getattr__, __dir__ = lazy_attributes(__name__, {"app": __all__})
