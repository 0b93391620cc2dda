"""PettingZoo entry points ``ball_balance_v0`` for the built-in BallBalance core.

Functions:
    env: a new BallBalance as a PettingZoo AEC environment.
    parallel_env: a new BallBalance as a PettingZoo Parallel environment.
    raw_env: the same as ``env`` (the native AEC adapter needs no wrappers).

Keyword arguments configure the adapter when they are one of
:data:`~zooport.adapters.pettingzoo_envs._factory.ADAPTER_OPTIONS` (``render_mode``,
``max_cycles``, ``termination_mode``, ``action_masks``, ``mask_in_info``, ...; see
:class:`~zooport.adapters.pettingzoo_parallel.PettingZooCommon`); all others go to BallBalance
(``seed``, ``n_agents``, ``max_steps``, ``mass``, ``gravity``, ``scale``).

Example:
    >>> import numpy as np
    >>> from zooport.adapters.pettingzoo_envs import ball_balance_v0
    >>> env = ball_balance_v0.parallel_env(seed=0, n_agents=3)
    >>> observations, infos = env.reset(seed=0)
    >>> env.action_space("ballbalance_0")
    Box(-1.0, 1.0, (2,), float32)
    >>> _, rewards, _, _, _ = env.step({a: np.zeros(2, np.float32) for a in env.agents})
    >>> {agent: round(reward, 3) for agent, reward in rewards.items()}
    {'ballbalance_0': 0.1, 'ballbalance_1': 0.1, 'ballbalance_2': 0.1}
"""

from __future__ import annotations

from zooport.adapters.pettingzoo_envs._factory import entry_points

__all__ = ["env", "parallel_env", "raw_env"]

NAME = "ball_balance_v0"

env, parallel_env, raw_env = entry_points(__name__, "BallBalance", NAME)
