"""PettingZoo's ``env``, ``parallel_env`` and ``raw_env`` for ``zooport/collector-v0``.

Keywords named like :class:`~zooport.adapters.options.PettingZooOptions` fields configure the
adapter; all others go to :class:`zooport.envs.builtin.collector.Collector`. ``raw_env`` is
``env``: the AEC adapter needs no wrappers.
"""

from __future__ import annotations

from typing import Any

from zooport.adapters.registration import make_adapter

__all__ = ["env", "parallel_env", "raw_env"]


def env(**kwargs: Any) -> Any:
    """A new Collector as a PettingZoo AEC environment."""
    return make_adapter("Collector", "aec", {"name": "collector_v0", **kwargs})


def parallel_env(**kwargs: Any) -> Any:
    """A new Collector as a PettingZoo Parallel environment."""
    return make_adapter("Collector", "parallel", {"name": "collector_v0", **kwargs})


raw_env = env
