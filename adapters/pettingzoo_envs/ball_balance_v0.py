"""PettingZoo's ``env``, ``parallel_env`` and ``raw_env`` (``env``) for
``zooport/ball_balance-v0``: keywords go to the adapter or to
:class:`zooport.envs.builtin.ball_balance.BallBalance` by name."""

from __future__ import annotations

from typing import Any

from zooport.adapters.registration import make_adapter


def env(**kwargs: Any) -> Any:
    """A new BallBalance as a PettingZoo AEC environment."""
    return make_adapter("BallBalance", "aec", {"name": "ball_balance_v0", **kwargs})


def parallel_env(**kwargs: Any) -> Any:
    """A new BallBalance as a PettingZoo Parallel environment."""
    return make_adapter("BallBalance", "parallel", {"name": "ball_balance_v0", **kwargs})


raw_env = env
