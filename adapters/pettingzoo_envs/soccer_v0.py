""":class:`zooport.envs.builtin.soccer.Soccer`: PettingZoo's env() and parallel_env()."""

from zooport.adapters.registration import entry_points

env, parallel_env = entry_points("Soccer", __name__)
raw_env = env
