"""PettingZoo's ``env``, ``parallel_env`` and ``raw_env`` (``env``) for
``zooport/soccer-v0``: keywords go to the adapter or to
:class:`zooport.envs.builtin.soccer.Soccer` by name."""

from __future__ import annotations

from typing import Any

from zooport.adapters.registration import make_adapter


def env(**kwargs: Any) -> Any:
    """A new Soccer as a PettingZoo AEC environment."""
    return make_adapter("Soccer", "aec", {"name": "soccer_v0", **kwargs})


def parallel_env(**kwargs: Any) -> Any:
    """A new Soccer as a PettingZoo Parallel environment."""
    return make_adapter("Soccer", "parallel", {"name": "soccer_v0", **kwargs})


raw_env = env
