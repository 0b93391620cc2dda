"""CorePool over real ``mlagents_envs`` 0.28 UnityEnvironments, one per worker process.

``CorePool.unity`` builds each instance in its worker with its own ``worker_id``;
``ScriptedUnityEnvironment`` is a real UnityEnvironment whose communicator (ML-Agents'
MockCommunicator, scripted) shows which ``worker_id`` and port it was made for, and echoes
one side channel. The "build" is a shell script that records the command line each instance
launches it with (as Unity would be launched: its port, ``-nographics``). The reference is the
same scripted instances built in this process.
"""

from __future__ import annotations

import numpy as np
import pytest

from zooport.adapters import BehaviorVectorEnv, PettingZooParallelEnv
from zooport.envs.base_env import ActionTuple
from zooport.envs.core_pool import CorePool
from zooport.envs.side_channel import RawBytesChannel
from zooport.errors import CorePoolError

from tests.mlagents.scripted_unity import (
    BRAIN,
    ECHO_CHANNEL_ID,
    ScriptedUnityEnvironment,
)

BASE_PORT = 5005  # UnityEnvironment's base port for a build


@pytest.fixture
def build(tmp_path):
    """A stand-in for a Unity build: records its command line and exits."""
    script = tmp_path / "Scripted.x86_64"
    script.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "launches.txt"}\n')
    script.chmod(0o755)
    return tmp_path / "Scripted"


def _unity_pool(build, **options):
    return CorePool.unity(
        str(build), instances=2, worker_id=3, environment_class=ScriptedUnityEnvironment,
        **options,
    )  # fmt: skip


@pytest.fixture
def reference(build):
    """The two instances the pool should hold, built here with the same worker ids."""
    built = [
        ScriptedUnityEnvironment(file_name=str(build), worker_id=worker_id, seed=worker_id - 3)
        for worker_id in (3, 4)
    ]
    yield built
    for env in built:
        env.close()


@pytest.mark.parametrize("local_core", [True, False])
def test_unity_instances_in_lockstep_with_their_own_worker_ids(build, reference, local_core):
    pool = _unity_pool(build, local_core=local_core)
    rng = np.random.default_rng(0)
    try:
        assert not pool.seedable  # a Unity build cannot be reseeded from Python
        with pytest.raises(CorePoolError, match="cannot be seeded"):
            pool.reset(seed=0)
        pool.reset()
        for env in reference:
            env.reset()
        spec = pool.behavior_specs[BRAIN]
        assert spec.action_spec.discrete_branches == (3, 2)
        for _ in range(12):
            decision, terminal = pool.get_steps(BRAIN)
            parts = [env.get_steps(BRAIN) for env in reference]
            expected_ids = np.concatenate(
                [p[0].agent_id.astype(np.int64) * 2 + i for i, p in enumerate(parts)]
            )
            np.testing.assert_array_equal(decision.agent_id, expected_ids)
            for j in range(2):
                np.testing.assert_array_equal(
                    decision.obs[j], np.concatenate([p[0].obs[j] for p in parts])
                )
                np.testing.assert_array_equal(
                    terminal.obs[j], np.concatenate([p[1].obs[j] for p in parts])
                )
            np.testing.assert_array_equal(
                decision.reward, np.concatenate([p[0].reward for p in parts])
            )
            np.testing.assert_array_equal(
                terminal.interrupted, np.concatenate([p[1].interrupted for p in parts])
            )
            for b in range(2):
                np.testing.assert_array_equal(
                    decision.action_mask[b], np.concatenate([p[0].action_mask[b] for p in parts])
                )
            action = spec.action_spec.random_action(len(decision), rng)
            pool.set_actions(BRAIN, action)
            start = 0
            for env, part in zip(reference, parts, strict=True):
                n = len(part[0])
                env.set_actions(BRAIN, ActionTuple(discrete=action.discrete[start : start + n]))
                start += n
            pool.step()
            for env in reference:
                env.step()
        # each instance was made for its own worker id and port
        decision, _ = pool.get_steps(BRAIN)
        for pool_id, marker in zip(decision.agent_id, decision.obs[1][:, 1], strict=True):
            core, own = pool.core_of(int(pool_id))
            worker_id = 3 + core
            assert 5 + 10 * worker_id <= own < 5 + 10 * worker_id + 3
            assert marker == BASE_PORT + worker_id
    finally:
        pool.close()
    launches = (build.parent / "launches.txt").read_text().splitlines()
    # the two reference instances (without -nographics), then the pool's two
    assert sorted(launches[2:]) == [
        f"-nographics -batchmode --mlagents-port {BASE_PORT + worker_id}" for worker_id in (3, 4)
    ]


def test_a_pool_channel_reaches_every_instance_and_hears_them_all(build):
    echo = RawBytesChannel(ECHO_CHANNEL_ID)
    pool = _unity_pool(build, side_channels=[echo])
    try:
        pool.reset()
        echo.send_raw_data(b"ping")
        pool.step()
        assert echo.get_and_clear_received_messages() == [bytearray(b"ping")] * 2
    finally:
        pool.close()


def test_adapters_over_unity_instances(build):
    pool = _unity_pool(build, mode="async")
    envs = BehaviorVectorEnv(pool)
    try:
        assert envs.num_envs == 6
        with pytest.warns(UserWarning, match="cannot be reseeded"):
            envs.reset(seed=0)
        for _ in range(5):
            envs.step(envs.action_space.sample())
        parallel = PettingZooParallelEnv(pool)
        parallel.reset()
        assert len(parallel.agents) == 6
        for _ in range(5):
            if not parallel.agents:
                break
            parallel.step({a: parallel.action_space(a).sample() for a in parallel.agents})
    finally:
        envs.close()
