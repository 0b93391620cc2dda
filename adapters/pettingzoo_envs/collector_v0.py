""":class:`zooport.envs.builtin.collector.Collector`: PettingZoo's env() and parallel_env()."""

from zooport.adapters.registration import entry_points

env, parallel_env = entry_points("Collector", __name__)
raw_env = env
