"""The ``zooport`` command line; importing this package loads none of its modules."""

from zooport._lazy import lazy_attributes

__all__ = ["main", "build_parser"]
__getattr__, __dir__ = lazy_attributes(__name__, {"app": __all__})
