"""The built-in numpy environments; together they exercise every feature of the BaseEnv API.

Classes (imported on first use; :data:`BUILTINS` lists them):
    Basic: one agent, one discrete branch, a vector observation.
    BallBalance: many agents, continuous actions, termination and interruption, side channels.
    GridWorld: discrete actions with masks, a visual observation plus a goal signal.
    Tag: two behaviours, decision periods, same-step restarts, groups, spawning agents.
    Collector: hybrid actions and a variable-size observation.
    Soccer: one behaviour in two teams, group rewards, every agent ending together.

Each class declares how zooport registers it (``declaration``, an
:class:`~zooport.envs.declaration.EnvDeclaration`), its ``expected_reward`` and its
``max_episode_steps``; the registry knows it by its class name.
"""

from __future__ import annotations

from zooport._lazy import lazy_attributes

__all__ = ["Basic", "BallBalance", "GridWorld", "Tag", "Collector", "Soccer", "BUILTINS"]

#: The built-in environments, in registry order: class name (= registry identifier) ->
#: the module of this package that defines it.
BUILTINS = {
    "Basic": "basic",
    "BallBalance": "ball_balance",
    "GridWorld": "grid_world",
    "Tag": "tag",
    "Collector": "collector",
    "Soccer": "soccer",
}


# A lazy import table: a registry listing the built-ins imports none of them.
__getattr__, __dir__ = lazy_attributes(
    __name__, {name: f"{__name__}.{module}" for name, module in BUILTINS.items()}
)
