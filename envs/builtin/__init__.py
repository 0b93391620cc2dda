"""The built-in numpy environments, imported on first use; together they exercise every
feature of the BaseEnv API. The registry knows each by its class name (:data:`BUILTINS`)."""

from zooport._lazy import lazy_attributes

__all__ = ["Basic", "BallBalance", "GridWorld", "Tag", "Collector", "Soccer", "BUILTINS"]

#: Class name (the registry identifier) -> the module that defines it, in registry order.
BUILTINS = {
    "Basic": "basic", "BallBalance": "ball_balance", "GridWorld": "grid_world", "Tag": "tag",
    "Collector": "collector", "Soccer": "soccer",
}  # fmt: skip

__getattr__, __dir__ = lazy_attributes(__name__, {m: (n,) for n, m in BUILTINS.items()})
