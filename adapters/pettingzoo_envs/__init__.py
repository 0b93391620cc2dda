"""PettingZoo-style entry points for zooport's built-in multi-agent environments.

Modules:
    ball_balance_v0: BallBalance (one behaviour, continuous actions).
    collector_v0: Collector (hybrid actions, a variable-size observation).
    grid_world_v0: GridWorld (action masks, a visual observation and a goal signal).
    soccer_v0: Soccer (one behaviour in two teams, group rewards, a global state).
    tag_v0: Tag (two behaviours, decision periods, restarts, spawning, a global state).

Each module exposes ``env(**kwargs)`` (AEC), ``parallel_env(**kwargs)`` and ``raw_env``, as
PettingZoo's own environment modules do, so PettingZoo's and SuperSuit's tools accept it.

Functions:
    register_pettingzoo_envs: registers every module in PettingZoo's registry as
        ``zooport/<name>-v0`` (AEC and Parallel), where the installed PettingZoo has one.
        Importing this package calls it.
"""

from __future__ import annotations

import importlib

__all__ = ["ENV_MODULES", "register_pettingzoo_envs"]

#: The entry-point modules, by their PettingZoo name.
ENV_MODULES = ("ball_balance_v0", "collector_v0", "grid_world_v0", "soccer_v0", "tag_v0")


def register_pettingzoo_envs() -> list[str]:
    """Registers the entry points as ``zooport/<name>-v0``; returns the ids now registered.

    Does nothing (returns ``[]``) where the installed PettingZoo has no registry (before
    1.25); registering twice leaves the registry unchanged.

    Example:
        >>> import pettingzoo
        >>> ids = register_pettingzoo_envs()
        >>> "zooport/tag-v0" in ids
        True
        >>> env = pettingzoo.make("parallel", "zooport/tag-v0", seed=0, max_cycles=3)
        >>> env.max_cycles
        3
    """
    try:
        pettingzoo = importlib.import_module("pettingzoo")
        register = pettingzoo.register
        registries = {"aec": pettingzoo.aec_registry, "parallel": pettingzoo.parallel_registry}
    except (ImportError, AttributeError):
        return []
    ids = []
    for module in ENV_MODULES:
        env_id = "zooport/" + module.replace("_v0", "-v0")
        for kind, attr in (("aec", "env"), ("parallel", "parallel_env")):
            if env_id not in registries[kind]:
                register(kind, env_id, entry_point=f"{__name__}.{module}:{attr}")
        ids.append(env_id)
    return ids


register_pettingzoo_envs()
