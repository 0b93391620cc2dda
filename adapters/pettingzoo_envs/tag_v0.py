"""PettingZoo entry points ``tag_v0`` for :class:`zooport.envs.builtin.tag.Tag`.

Functions:
    env: a new Tag as a PettingZoo AEC environment.
    parallel_env: a new Tag as a PettingZoo Parallel environment.
    raw_env: the same as ``env`` (the native AEC adapter needs no wrappers).

Keyword arguments configure the adapter when they are one of
:data:`~zooport.adapters.pettingzoo_envs._factory.ADAPTER_OPTIONS` (``render_mode``,
``max_cycles``, ``termination_mode``, ``action_masks``, ``mask_in_info``, ...; see
:class:`~zooport.adapters.pettingzoo_parallel.PettingZooCommon`); all others go to Tag
(``seed``, ``n_runners``, ``n_taggers``, ``spawn_every``, ``restart_tagged``, decision
periods, ``max_steps``).

Example:
    >>> from zooport.adapters.pettingzoo_envs import tag_v0
    >>> env = tag_v0.parallel_env(seed=0, spawn_every=2, termination_mode="any")
    >>> observations, infos = env.reset(seed=0)
    >>> str(env), env.agents
    ('tag_v0', ['runner_0', 'runner_1', 'runner_2', 'tagger_3', 'tagger_4'])
    >>> _ = env.step({agent: 0 for agent in env.agents})
    >>> _ = env.step({agent: 0 for agent in env.agents})
    >>> env.agents[-1]  # a runner spawned in the second step
    'runner_5'
"""

from __future__ import annotations

from zooport.adapters.pettingzoo_envs._factory import entry_points

__all__ = ["env", "parallel_env", "raw_env"]

NAME = "tag_v0"

env, parallel_env, raw_env = entry_points(__name__, "Tag", NAME)
