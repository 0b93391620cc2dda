""":class:`zooport.envs.builtin.tag.Tag`: PettingZoo's env() and parallel_env()."""

from zooport.adapters.registration import entry_points

env, parallel_env = entry_points("Tag", __name__)
raw_env = env
