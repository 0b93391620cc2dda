"""PettingZoo entry points ``collector_v0`` for :class:`zooport.envs.builtin.collector.Collector`.

Functions:
    env: a new Collector as a PettingZoo AEC environment.
    parallel_env: a new Collector as a PettingZoo Parallel environment.
    raw_env: the same as ``env`` (the native AEC adapter needs no wrappers).

Keyword arguments configure the adapter when they are one of
:data:`~zooport.adapters.pettingzoo_envs._factory.ADAPTER_OPTIONS` (``render_mode``,
``max_cycles``, ``termination_mode``, ``action_masks``, ``mask_in_info``, ...; see
:class:`~zooport.adapters.pettingzoo_parallel.PettingZooCommon`); all others go to Collector
(``seed``, ``n_agents``, ``n_items``, ``min_items``, ``reach``, ``max_steps``).

Example:
    >>> from zooport.adapters.pettingzoo_envs import collector_v0
    >>> env = collector_v0.env(seed=0, n_agents=2)
    >>> env.reset(seed=0)
    >>> env.agent_selection, sorted(env.action_space("collector_0").spaces)
    ('collector_0', ['continuous', 'discrete'])
"""

from __future__ import annotations

from zooport.adapters.pettingzoo_envs._factory import entry_points

__all__ = ["env", "parallel_env", "raw_env"]

NAME = "collector_v0"

env, parallel_env, raw_env = entry_points(__name__, "Collector", NAME)
