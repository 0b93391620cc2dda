"""The built-ins' PettingZoo environment modules (``tag_v0``, ...), as PettingZoo's own are."""

from __future__ import annotations

from zooport.adapters.pettingzoo_envs import (
    ball_balance_v0 as ball_balance_v0,
    collector_v0 as collector_v0,
    grid_world_v0 as grid_world_v0,
    soccer_v0 as soccer_v0,
    tag_v0 as tag_v0,
)
from zooport.adapters.registration import register_pettingzoo_envs

__all__ = ["ENV_MODULES", "register_pettingzoo_envs"]

#: The modules, in registry order (each built-in's declaration names its own).
ENV_MODULES = ("ball_balance_v0", "grid_world_v0", "tag_v0", "collector_v0", "soccer_v0")
