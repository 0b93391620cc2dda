"""ML-Agents' exception names in ``zooport.envs.exception``, and zooport's errors under them.

Code written against ``mlagents_envs.exception`` ports by an import and keeps catching what
zooport raises: a bad action is a ``UnityActionException``, a side-channel error a
``UnitySideChannelException``, observations that disagree with their spec a
``UnityObservationException``, use after ``close()`` a ``UnityEnvironmentException``, and
every ``ZooportError`` a ``UnityException``; each stays the ZooportError and the built-in
exception it was. The hierarchy is compared with ML-Agents' own in
``tests/mlagents/test_unity_scenes.py``.
"""

from __future__ import annotations

import ast
import copy
import pickle
import struct
import uuid
from pathlib import Path

import numpy as np
import pytest

import zooport
from zooport.adapters import GymEnv, PettingZooParallelEnv
from zooport.envs import exception
from zooport.envs.base_env import ActionTuple
from zooport.envs.builtin.basic import Basic
from zooport.envs.builtin.tag import Tag
from zooport.envs.side_channel import (
    EngineConfigurationChannel,
    EnvironmentParametersChannel,
    IncomingMessage,
    RawBytesChannel,
    SideChannelManager,
    SimulationSideChannels,
)
from zooport.errors import (
    ObservationError,
    SideChannelError,
    SpecError,
    UnknownAgentError,
    ZooportError,
)

from tests.support.errors import ERRORS

#: ML-Agents 0.28's ``mlagents_envs.exception``: the root, then the names derived from it alone.
ROOT = "UnityException"
CHILDREN = """UnityActionException UnityCommunicationException UnityCommunicatorStoppedException
    UnityEnvironmentException UnityObservationException UnityPolicyException
    UnitySideChannelException UnityTimeOutException UnityWorkerInUseException""".split()


def test_the_module_has_mlagents_names_and_hierarchy():
    assert sorted(exception.__all__) == sorted([ROOT, *CHILDREN])
    root = getattr(exception, ROOT)
    assert root.__bases__ == (Exception,)
    for name in CHILDREN:
        assert getattr(exception, name).__bases__ == (root,), name


# zooport error -> (ML-Agents name it is caught as, built-in exception it stays)
MAPPING = [(error, name, builtin) for error, (name, builtin) in ERRORS.items()]


@pytest.mark.parametrize(
    ("error", "name", "builtin"), MAPPING, ids=lambda v: getattr(v, "__name__", v)
)
def test_zooport_errors_are_caught_under_the_mlagents_name(error, name, builtin):
    assert issubclass(error, ZooportError)
    assert issubclass(error, getattr(exception, name))
    assert issubclass(error, exception.UnityException)
    assert issubclass(error, builtin)
    assert issubclass(ObservationError, SpecError)
    raised = error("message") if error is not UnknownAgentError else error("agent 3")
    restored = pickle.loads(pickle.dumps(raised))
    assert type(restored) is error and str(restored) == str(raised)


def test_what_adapters_raise_is_caught_under_the_mlagents_names():
    env = GymEnv(Basic())
    env.reset(seed=0)
    with pytest.raises(exception.UnityActionException, match="Discrete"):
        env.step(np.zeros(4))
    core = Basic()
    core.reset()
    with pytest.raises(exception.UnityActionException, match=r"takes values in \[0, 2\]"):
        core.set_actions("Basic", ActionTuple(discrete=np.array([[5]], np.int32)))
    with pytest.raises(exception.UnityActionException, match="no behavior 'Nope'"):
        core.get_steps("Nope")
    env.close()
    with pytest.raises(exception.UnityEnvironmentException, match=r"after close\(\)"):
        env.reset()
    par = PettingZooParallelEnv(Tag(seed=0))
    with pytest.raises(exception.UnityException, match=r"call reset\(\) before step\(\)"):
        par.step({})
    with pytest.raises(exception.UnitySideChannelException, match="cannot read int32"):
        IncomingMessage(b"\x01").read_int32()


def test_side_channel_errors_are_also_the_mlagents_class_each_case_raises_there():
    """mlagents_envs raises UnityCommunicationException for a message on a send-only channel
    (engine_configuration_channel.py, environment_parameters_channel.py), and
    UnityEnvironmentException for a frame shorter than its header or its declared length, or
    two channels with one id (side_channel_manager.py)."""
    communication = exception.UnityCommunicationException
    for channel in (EngineConfigurationChannel(), EnvironmentParametersChannel()):
        with pytest.raises(communication, match="only sends") as caught:
            channel.on_message_received(IncomingMessage(struct.pack("<if", 2, 1.0)))
        assert isinstance(caught.value, SideChannelError)
    engine = EngineConfigurationChannel()
    simulation = SimulationSideChannels([engine])
    engine.message_queue.append(struct.pack("<i", 9))  # no such configuration type
    with pytest.raises(communication, match="unknown configuration type 9"):
        simulation.exchange()

    channel_id = uuid.UUID(int=5)
    manager = SideChannelManager([RawBytesChannel(channel_id)])
    short = channel_id.bytes_le + struct.pack("<i", 5) + b"abc"
    for data, match in [(short, "declares a 5-byte payload"), (b"\x01" * 7, "truncated")]:
        with pytest.raises(exception.UnityEnvironmentException, match=match) as caught:
            manager.process_side_channel_message(data)
        assert isinstance(caught.value, SideChannelError)
    with pytest.raises(exception.UnityEnvironmentException, match="already used"):
        SideChannelManager([RawBytesChannel(channel_id), RawBytesChannel(channel_id)])


def test_worker_in_use_is_built_from_the_worker_id():
    error = exception.UnityWorkerInUseException(3)
    assert str(error).startswith("Couldn't start socket communication because worker number 3 ")
    assert error.worker_id == 3
    for other in (pickle.loads(pickle.dumps(error)), copy.copy(error)):
        assert type(other) is type(error) and str(other) == str(error)


def test_errors_module_is_the_ground_floor():
    """zooport.errors defines the Unity names itself: it imports no other zooport module."""
    tree = ast.parse(Path(zooport.errors.__file__).read_text())
    imported = [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]
    assert not [m for m in imported if m and m.split(".")[0] == "zooport"], imported
    assert exception.UnityActionException is zooport.errors.UnityActionException
