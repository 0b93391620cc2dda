"""``workers=K`` wherever an environment is built by name: ``gym.make_vec``, ``zooport.make``,
``zooport train`` and ``zooport bench``: a CorePool behind the same adapters."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import zooport
from zooport.adapters import BehaviorVectorEnv, PettingZooAECEnv, PettingZooParallelEnv
from zooport.adapters.registration import make_vector_env
from zooport.cli import main
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.core_pool import CorePool
from zooport.envs.side_channel import StatsSideChannel
from zooport.errors import ArgumentError, ArgumentTypeError


def test_make_vec_shares_the_agents_out_over_the_workers():
    stats = StatsSideChannel()
    envs = gym.make_vec("zooport/BallBalance-v0", num_envs=5, workers=2, seed=3,
                        side_channels=[stats])  # fmt: skip
    try:
        assert isinstance(envs, BehaviorVectorEnv) and envs.num_envs == 5
        pool = envs.core
        assert isinstance(pool, CorePool) and pool.num_cores == 2
        assert pool.side_channels == [stats]  # the pool relays them to every core
        # 3 agents in core 0 and 2 in core 1, as in-process cores of those sizes with the
        # registration's episode cap (200) and seeds 3 and 4
        cores = [BallBalance(n_agents=3, seed=3, max_steps=200),
                 BallBalance(n_agents=2, seed=4, max_steps=200)]  # fmt: skip
        assert [pool.core_of(int(a))[0] for a in envs.agent_ids] == [0, 1, 0, 1, 0]
        obs, _ = envs.reset(seed=7)
        for i, core in enumerate(cores):
            core.reset(seed=7 + i)
        for slot, agent in enumerate(envs.agent_ids.tolist()):
            index, own = pool.core_of(agent)
            decision = cores[index].get_steps("BallBalance")[0]
            np.testing.assert_array_equal(obs[slot], decision[own].obs[0])
    finally:
        envs.close()
    assert pool.closed


def test_zooport_make_builds_a_pool_behind_every_multi_agent_api():
    env = zooport.make("Tag", workers=2, seed=0, n_runners=1, n_taggers=1)
    try:
        assert isinstance(env, PettingZooParallelEnv) and isinstance(env.core, CorePool)
        assert env.possible_agents == ["runner_0", "runner_1", "tagger_2", "tagger_3"]
    finally:
        env.close()
    env = zooport.make("Tag", api="aec", workers=2, pool_options={"mode": "async"})
    try:
        assert isinstance(env, PettingZooAECEnv) and env.core.mode == "async"
    finally:
        env.close()
    env = zooport.make("BallBalance", api="vector", num_envs=4, workers=2)
    try:
        assert env.num_envs == 4 and env.core.num_cores == 2
    finally:
        env.close()


def test_bad_worker_counts_are_named():
    with pytest.raises(ArgumentError, match="single-agent GymEnv cannot serve"):
        zooport.make("Basic", api="gym", workers=2)
    with pytest.raises(ArgumentError, match=r"workers <= num_envs \(2\), actually: 3"):
        make_vector_env(num_envs=2, env_id="BallBalance", workers=3)
    with pytest.raises(ArgumentError, match="Expect workers >= 1, actually: 0"):
        make_vector_env(num_envs=2, env_id="BallBalance", workers=0)
    with pytest.raises(ArgumentTypeError, match="Expect workers to be an int, actually: str '2'"):
        zooport.make("Tag", workers="2")


def test_zooport_train_with_workers(capsys):
    code = main(["--plain", "train", "Basic", "--steps", "32", "--workers", "2", "--no-progress",
                 "--kwargs", '{"n_agents": 1, "max_steps": 3}'])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    cells = out.splitlines()[1].split()
    assert cells[:4] == ["Basic", "vector", "PPO", "32"]


def test_zooport_bench_with_workers_runs_the_pool_benchmark(capsys):
    code = main(["--plain", "bench", "--workers", "2", "--quick", "--n", "2"])
    out, err = capsys.readouterr()
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("| N per core | 1proc | CorePool | CorePool (workers only) |")
    assert lines[2].startswith("| 2 | ") and "pool/1proc" in lines[0]
    assert any(line.startswith("| 2 | ") and "x |" in line for line in lines[4:])  # async table
    assert any("pool K=1 (in a worker) costs" in line for line in lines)
    assert "K=2; agent-steps/s (wall clock)" in out
    code = main(["--plain", "bench", "--workers", "2", "--envs", "Trivial"])
    assert code == 2
    assert "--envs and --routes belong to the adapter benchmark" in capsys.readouterr().err
