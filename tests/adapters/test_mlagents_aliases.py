"""ML-Agents' names ``UnityParallelEnv`` and ``UnityAECEnv`` take its wrappers' ``seed=``.

ML-Agents' wrappers (``mlagents_envs.envs.unity_parallel_env``/``unity_aec_env``) are built
as ``UnityParallelEnv(env, seed=None)``; the seed seeds the agents' action spaces, so random
actions repeat from run to run. zooport's classes of those names take the same arguments.
"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from zooport.adapters import PettingZooAECEnv, PettingZooParallelEnv, UnityAECEnv, UnityParallelEnv
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.builtin.tag import Tag


def samples(env, agent, n=8):
    return [np.asarray(env.action_space(agent).sample()).tolist() for _ in range(n)]


@pytest.mark.parametrize("cls", [UnityParallelEnv, UnityAECEnv])
def test_seed_seeds_each_behaviours_action_space_as_documented(cls):
    positional = cls(Tag(seed=0), 5)
    keyword = cls(env=Tag(seed=0), seed=5)
    # Behaviour i in the core's order is seeded with seed + i: a Discrete(5) seeded by hand.
    for i, agent in enumerate(["runner_0", "tagger_3"]):
        reference = spaces.Discrete(5)
        reference.seed(5 + i)
        expected = [int(reference.sample()) for _ in range(8)]
        assert samples(positional, agent) == expected
        assert samples(keyword, agent) == expected
    # Two behaviours with equal spaces do not draw equal actions.
    a = cls(Tag(seed=0), seed=5)
    assert samples(a, "runner_0", 20) != samples(a, "tagger_3", 20)


@pytest.mark.parametrize("cls", [UnityParallelEnv, UnityAECEnv])
def test_seed_does_not_touch_the_core_and_options_pass_through(cls):
    seeded = cls(BallBalance(n_agents=2, seed=1), 7, max_cycles=3, termination_mode="any")
    plain = cls(BallBalance(n_agents=2, seed=1), max_cycles=3, termination_mode="any")
    assert seeded.max_cycles == 3 and str(seeded.termination_mode) == str(plain.termination_mode)
    base = PettingZooParallelEnv if cls is UnityParallelEnv else PettingZooAECEnv
    assert isinstance(seeded, base)
    # Reset without a seed: the core goes on from its own seed (1) in both, so the seed of
    # the action spaces (7) must not have reached it.
    first, again = seeded.reset(), plain.reset()
    if cls is UnityAECEnv:
        first = {a: seeded.observe(a) for a in seeded.agents}
        again = {a: plain.observe(a) for a in plain.agents}
    else:
        first, again = first[0], again[0]
    assert list(first) == list(again) == ["ballbalance_0", "ballbalance_1"]
    for agent in first:
        np.testing.assert_array_equal(first[agent], again[agent])
    # Box spaces are seeded too: identical draws from two equally seeded adapters.
    twin = cls(BallBalance(n_agents=2, seed=1), 7)
    assert samples(seeded, "ballbalance_0") == samples(twin, "ballbalance_0")


@pytest.mark.parametrize("seed", [-1, 1.5, "0", True])
def test_a_bad_seed_is_an_error_naming_it(seed):
    # The rule every seed follows (zooport.envs.arguments.check_seed), named by the caller.
    with pytest.raises(ValueError, match=r"UnityParallelEnv\(seed=...\): expected seed to be None"):
        UnityParallelEnv(Tag(seed=0), seed=seed)
