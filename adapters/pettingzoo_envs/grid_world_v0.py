"""PettingZoo's ``env``, ``parallel_env`` and ``raw_env`` (``env``) for
``zooport/grid_world-v0``: keywords go to the adapter or to
:class:`zooport.envs.builtin.grid_world.GridWorld` by name."""

from __future__ import annotations

from typing import Any

from zooport.adapters.registration import make_adapter


def env(**kwargs: Any) -> Any:
    """A new GridWorld as a PettingZoo AEC environment."""
    return make_adapter("GridWorld", "aec", {"name": "grid_world_v0", **kwargs})


def parallel_env(**kwargs: Any) -> Any:
    """A new GridWorld as a PettingZoo Parallel environment."""
    return make_adapter("GridWorld", "parallel", {"name": "grid_world_v0", **kwargs})


raw_env = env
