"""What ``mlagents-learn --env=PATH --num-envs N`` does to the servers it launches.

It builds one ``UnityEnvironment(file_name=PATH, worker_id=i, base_port=B, seed=s + i)`` per
worker (``mlagents.trainers.learn.create_environment_factory``), which runs PATH with
``--mlagents-port B + i``. The tests build the same environments, so no training is needed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.mlagents_learn.runs import write_launcher

# protobuf 3.20's pure-Python descriptors warn (DeprecationWarning) when mlagents_envs'
# generated *_pb2 modules are imported; pytest turns warnings into errors.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from mlagents_envs.environment import UnityEnvironment

# UnityEnvironment compares communication versions with distutils' LooseVersion.
pytestmark = pytest.mark.filterwarnings("ignore:distutils Version classes are deprecated")


def _first_observations(launcher, base_port: int, workers: int = 2) -> list[np.ndarray]:
    envs = []
    try:
        for worker in range(workers):
            envs.append(
                UnityEnvironment(
                    file_name=str(launcher),
                    worker_id=worker,
                    base_port=base_port,
                    seed=7 + worker,
                    no_graphics=True,
                    timeout_wait=120,
                )  # fmt: skip
            )
        observations = []
        for env in envs:
            env.reset()
            observations.append(env.get_steps("BallBalance")[0].obs[0])
        return observations
    finally:
        for env in envs:
            env.close()


def test_launched_workers_differ_from_the_default_base_port_up(tmp_path):
    launcher = write_launcher(tmp_path / "serve", "BallBalance", "--kwargs", '{"n_agents": 4}')
    first, second = _first_observations(launcher, base_port=5430)
    assert first.shape == second.shape == (4, 8)
    assert not np.array_equal(first, second)


def test_launched_workers_differ_below_the_default_base_port(tmp_path):
    launcher = write_launcher(tmp_path / "serve", "BallBalance", "--kwargs", '{"n_agents": 4}')
    first, second = _first_observations(launcher, base_port=4930)
    assert not np.array_equal(first, second)
