"""PettingZoo entry points ``soccer_v0`` for :class:`zooport.envs.builtin.soccer.Soccer`.

Functions:
    env: a new Soccer as a PettingZoo AEC environment.
    parallel_env: a new Soccer as a PettingZoo Parallel environment.
    raw_env: the same as ``env`` (the native AEC adapter needs no wrappers).

Keyword arguments configure the adapter when they are one of
:data:`~zooport.adapters.pettingzoo_envs._factory.ADAPTER_OPTIONS` (``render_mode``,
``max_cycles``, ``termination_mode``, ``agent_name``, ...; see
:class:`~zooport.adapters.pettingzoo_parallel.PettingZooCommon`); all others go to Soccer
(``seed``, ``team_size``, ``individual_rewards``, ``max_steps``).

The two teams are one behaviour name, ``Soccer?team=0`` and ``Soccer?team=1``; the team joins
the agent-name prefix (``soccer_team0_<id>``, ``soccer_team1_<id>``), and
``agent_name="mlagents"`` gives ML-Agents' names (``Soccer?team=1?agent_id=<id>``).

Example:
    >>> from zooport.adapters.pettingzoo_envs import soccer_v0
    >>> env = soccer_v0.parallel_env(seed=0)
    >>> observations, infos = env.reset(seed=0)
    >>> str(env), env.agents
    ('soccer_v0', ['soccer_team0_0', 'soccer_team0_1', 'soccer_team1_2', 'soccer_team1_3'])
    >>> infos["soccer_team1_3"]
    {'decided': True, 'group_id': 2, 'group_reward': 0.0}
    >>> soccer_v0.env(seed=0, team_size=1, agent_name="mlagents").possible_agents
    ['Soccer?team=0?agent_id=0', 'Soccer?team=1?agent_id=1']
"""

from __future__ import annotations

from zooport.adapters.pettingzoo_envs._factory import entry_points

__all__ = ["env", "parallel_env", "raw_env"]

NAME = "soccer_v0"

env, parallel_env, raw_env = entry_points(__name__, "Soccer", NAME)
