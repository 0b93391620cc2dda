"""RLlib (Ray 2.60) samples from a CorePool: the RLlib route consumes the pool unchanged.

Each EnvRunner process builds a PettingZoo Parallel adapter over a two-core pool of ``Tag``
(whose workers the EnvRunner starts), so RLlib sees the agents of both cores as one
multi-agent env; PPO trains one policy per behaviour on them, as on a single core.
"""

from __future__ import annotations

import functools

import pytest
import ray

from tests.support.paths import EXAMPLES, load_script

EXAMPLE = EXAMPLES / "rllib_tag.py"


# Not left in sys.modules: Ray ships what it defines to the EnvRunners by value.
example = load_script(EXAMPLE, "rllib_tag_for_pool")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False)
    yield
    ray.shutdown()


def test_ppo_samples_from_a_pool_of_two_cores(local_ray):
    from ray.tune.registry import register_env

    def make_pooled_env(env_config):
        # Defined here, so Ray ships it by value; the pool's factories are partials of an
        # importable class, which the pool's own workers load by reference.
        from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        from zooport.envs.builtin import Tag
        from zooport.envs.core_pool import CorePool

        make = functools.partial(Tag, max_steps=40, restart_tagged=False)
        return example.TagEnv(PettingZooParallelEnv(CorePool([make, make])))

    register_env("zooport_tag_pool", make_pooled_env)
    config = example.build_config(short=True, num_env_runners=1, seed=0).environment(
        "zooport_tag_pool"
    )
    algo = config.build_algo()
    try:
        rows = [example.summarize(algo.train()) for _ in range(example.SHORT["iterations"])]
    finally:
        algo.stop()
    assert rows[-1]["env_steps"] == 2 * example.SHORT["batch"]
    for module in ("runner", "tagger"):
        assert rows[-1][f"{module}_steps_trained"] > 0, module
    # Six runners and four taggers per episode: a runner's return is at least -1 each, a
    # tagger pays at most 0.01 a step for 40 steps; returns are sums over a policy's agents.
    assert -6.0 - 1e-6 <= rows[-1]["runner_return"] <= 6 * 0.4 + 1e-6
    assert rows[-1]["tagger_return"] >= -4 * 0.4 - 1e-6
