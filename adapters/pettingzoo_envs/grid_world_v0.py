""":class:`zooport.envs.builtin.grid_world.GridWorld`: PettingZoo's env() and parallel_env()."""

from zooport.adapters.registration import entry_points

env, parallel_env = entry_points("GridWorld", __name__)
raw_env = env
