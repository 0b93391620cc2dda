"""PettingZoo entry points ``grid_world_v0`` for :class:`zooport.envs.builtin.grid_world.GridWorld`.

Functions:
    env: a new GridWorld as a PettingZoo AEC environment.
    parallel_env: a new GridWorld as a PettingZoo Parallel environment.
    raw_env: the same as ``env`` (the native AEC adapter needs no wrappers).

Keyword arguments configure the adapter when they are one of
:data:`~zooport.adapters.pettingzoo_envs._factory.ADAPTER_OPTIONS` (``render_mode``,
``max_cycles``, ``termination_mode``, ``action_masks``, ``mask_in_info``, ...; see
:class:`~zooport.adapters.pettingzoo_parallel.PettingZooCommon`); all others go to GridWorld
(``seed``, ``n_agents``, ``grid_size``, ``n_walls``, ``max_steps``).

Example:
    >>> from zooport.adapters.pettingzoo_envs import grid_world_v0
    >>> env = grid_world_v0.parallel_env(seed=0, n_agents=2)
    >>> observations, infos = env.reset(seed=0)
    >>> sorted(observations["gridworld_0"]), observations["gridworld_0"]["action_mask"].dtype
    (['action_mask', 'observation'], dtype('int8'))
    >>> sorted(observations["gridworld_0"]["observation"])
    ['camera', 'goal']
"""

from __future__ import annotations

from zooport.adapters.pettingzoo_envs._factory import entry_points

__all__ = ["env", "parallel_env", "raw_env"]

NAME = "grid_world_v0"

env, parallel_env, raw_env = entry_points(__name__, "GridWorld", NAME)
