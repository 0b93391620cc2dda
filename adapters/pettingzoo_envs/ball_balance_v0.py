"""PettingZoo's ``env``, ``parallel_env`` and ``raw_env`` for ``zooport/ball_balance-v0``.

Keywords named like :class:`~zooport.adapters.options.PettingZooOptions` fields configure the
adapter; all others go to :class:`zooport.envs.builtin.ball_balance.BallBalance`. ``raw_env``
is ``env``: the AEC adapter needs no wrappers.
"""

from __future__ import annotations

from typing import Any

from zooport.adapters.registration import make_adapter

__all__ = ["env", "parallel_env", "raw_env"]


def env(**kwargs: Any) -> Any:
    """A new BallBalance as a PettingZoo AEC environment."""
    return make_adapter("BallBalance", "aec", {"name": "ball_balance_v0", **kwargs})


def parallel_env(**kwargs: Any) -> Any:
    """A new BallBalance as a PettingZoo Parallel environment."""
    return make_adapter("BallBalance", "parallel", {"name": "ball_balance_v0", **kwargs})


raw_env = env
