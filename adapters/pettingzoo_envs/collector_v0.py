"""PettingZoo's ``env``, ``parallel_env`` and ``raw_env`` (``env``) for
``zooport/collector-v0``: keywords go to the adapter or to
:class:`zooport.envs.builtin.collector.Collector` by name."""

from __future__ import annotations

from typing import Any

from zooport.adapters.registration import make_adapter


def env(**kwargs: Any) -> Any:
    """A new Collector as a PettingZoo AEC environment."""
    return make_adapter("Collector", "aec", {"name": "collector_v0", **kwargs})


def parallel_env(**kwargs: Any) -> Any:
    """A new Collector as a PettingZoo Parallel environment."""
    return make_adapter("Collector", "parallel", {"name": "collector_v0", **kwargs})


raw_env = env
