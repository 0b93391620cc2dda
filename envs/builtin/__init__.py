"""The built-in numpy environments; together they exercise every feature of the BaseEnv API.

Classes:
    Basic: one agent, one discrete branch, a vector observation.
    BallBalance: many agents, continuous actions, termination and interruption, side channels.
    GridWorld: discrete actions with masks, a visual observation plus a goal signal.
    Tag: two behaviours, decision periods, same-step restarts, groups, spawning agents.
    Collector: hybrid actions and a variable-size observation.
    Soccer: one behaviour in two teams, group rewards, every agent ending together.
"""

from __future__ import annotations

from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.builtin.basic import Basic
from zooport.envs.builtin.collector import Collector
from zooport.envs.builtin.grid_world import GridWorld
from zooport.envs.builtin.soccer import Soccer
from zooport.envs.builtin.tag import Tag

__all__ = ["Basic", "BallBalance", "GridWorld", "Tag", "Collector", "Soccer"]
