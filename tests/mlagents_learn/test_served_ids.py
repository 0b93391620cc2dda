"""Agent and group ids of ``zooport serve`` as ML-Agents' own ``UnityEnvironment`` (1.1.0)
reads them.

- A Unity scene's agent ids are unique in the scene, across behaviours; the core's are too
  (Soccer's team 1 has ids 2 and 3), and the trainer should see the core's.
- A Unity scene with several training areas gives each area's team its own group id
  (``SimpleMultiAgentGroup`` ids are unique in the scene), and MA-POCA treats the agents of
  one group id as one team: their group reward is shared and the group's episode ends when
  all of them are done. K pooled Soccer cores are K pitches, so team 0 must arrive as K
  groups.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.mlagents_learn.runs import Server

# protobuf 3.20's pure-Python descriptors warn (DeprecationWarning) when mlagents_envs'
# generated *_pb2 modules are imported; pytest turns warnings into errors.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from mlagents_envs.environment import UnityEnvironment

PORT = 5321
IDS_PORT = 5322
# UnityEnvironment compares communication versions with distutils' LooseVersion.
pytestmark = pytest.mark.filterwarnings("ignore:distutils Version classes are deprecated")


def test_agent_ids_are_the_cores_across_behaviours(tmp_path):
    server = Server("Soccer", "--port", str(IDS_PORT), log=tmp_path / "serve.log")
    env = UnityEnvironment(file_name=None, base_port=IDS_PORT, timeout_wait=120)
    try:
        env.reset()
        ids = [env.get_steps(f"Soccer?team={t}")[0].agent_id.tolist() for t in (0, 1)]
    finally:
        env.close()
        server.stop()
    assert ids == [[0, 1], [2, 3]]  # the raw core's (envs/builtin/soccer.py's doctest)


def test_each_pooled_pitch_is_its_own_group(tmp_path):
    server = Server("Soccer", "--workers", "2", "--port", str(PORT), log=tmp_path / "serve.log")
    env = UnityEnvironment(file_name=None, base_port=PORT, timeout_wait=120)
    try:
        env.reset()
        teams = [env.get_steps(f"Soccer?team={t}")[0] for t in (0, 1)]
    finally:
        env.close()
        server.stop()
    ids = [np.unique(steps.group_id).tolist() for steps in teams]
    # Two pitches, two teams: four groups of two players, no id shared between them.
    assert [len(steps) for steps in teams] == [4, 4]
    assert len(set(ids[0]) | set(ids[1])) == 4, f"group ids per team: {ids}"
    for steps in teams:
        assert sorted(np.bincount(steps.group_id)[np.unique(steps.group_id)]) == [2, 2]
