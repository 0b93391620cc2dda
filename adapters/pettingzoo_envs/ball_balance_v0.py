""":class:`zooport.envs.builtin.ball_balance.BallBalance`: PettingZoo's env() and parallel_env()."""

from zooport.adapters.registration import entry_points

env, parallel_env = entry_points("BallBalance", __name__)
raw_env = env
