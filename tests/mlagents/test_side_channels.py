"""zooport's side channels and mlagents_envs 0.28's exchange identical bytes, both ways.

A channel a user built with ``mlagents_envs.side_channel`` classes and the same channel
built with ``zooport.envs.side_channel`` produce the same framed bytes, decode each other's
bytes to the same values, and each works where the other is expected: mlagents channels in
a zooport ``BatchedEnv``, zooport channels in a real ``UnityEnvironment``.
"""

from __future__ import annotations

import struct
import types
import uuid

import numpy as np
import pytest
from mlagents_envs.side_channel.engine_configuration_channel import (
    EngineConfig as MLEngineConfig,
    EngineConfigurationChannel,
)
from mlagents_envs.side_channel.environment_parameters_channel import (
    EnvironmentParametersChannel,
)
from mlagents_envs.side_channel.float_properties_channel import FloatPropertiesChannel
from mlagents_envs.side_channel.incoming_message import IncomingMessage
from mlagents_envs.side_channel.outgoing_message import OutgoingMessage
from mlagents_envs.side_channel.raw_bytes_channel import RawBytesChannel
from mlagents_envs.side_channel.side_channel_manager import SideChannelManager as MLManager
from mlagents_envs.side_channel.stats_side_channel import StatsSideChannel as MLStats

from zooport.envs import side_channel as zp
from zooport.envs.base_env import (
    ActionSpec,
    BehaviorSpec,
)
from zooport.envs.batched_env import BatchedEnv, StepResult

from tests.mlagents.scripted_unity import ScriptedCommunicator
from tests.support.specs import obs_spec
from tests.support.wire import frame

#: mlagents_envs' classes under zooport's names (its package __init__ exports only a few).
ml = types.SimpleNamespace(
    **{
        cls.__name__: cls
        for cls in (
            EngineConfigurationChannel, EnvironmentParametersChannel, FloatPropertiesChannel,
            RawBytesChannel, IncomingMessage, OutgoingMessage,
        )
    }
)  # fmt: skip
RAW_ID = uuid.UUID("a1b2c3d4-0000-4000-8000-00000000beef")


def _pair(kind: str):
    if kind == "engine":
        return ml.EngineConfigurationChannel(), zp.EngineConfigurationChannel()
    if kind == "params":
        return ml.EnvironmentParametersChannel(), zp.EnvironmentParametersChannel()
    if kind == "floats":
        return ml.FloatPropertiesChannel(), zp.FloatPropertiesChannel()
    return ml.RawBytesChannel(RAW_ID), zp.RawBytesChannel(RAW_ID)


OUTGOING = {
    "engine-all": (
        "engine",
        lambda c: c.set_configuration_parameters(
            width=84,
            height=48,
            quality_level=2,
            time_scale=12.5,
            target_frame_rate=30,
            capture_frame_rate=25,
        ),
    ),
    "engine-time-scale": ("engine", lambda c: c.set_configuration_parameters(time_scale=0.1)),
    "params-float": ("params", lambda c: c.set_float_parameter("gravity", -9.81)),
    "params-uniform": ("params", lambda c: c.set_uniform_sampler_parameters("mass", 0.5, 2, 7)),
    "params-gaussian": ("params", lambda c: c.set_gaussian_sampler_parameters("len", 1, 0.25, 3)),
    "params-multirange": (
        "params",
        lambda c: c.set_multirangeuniform_sampler_parameters("w", [(0, 1), (2.5, 4)], 11),
    ),
    "floats": ("floats", lambda c: c.set_property("speed", 3.25)),
    "raw": ("raw", lambda c: c.send_raw_data(bytearray(b"\x00\x01hello\xff"))),
}


@pytest.mark.parametrize("case", list(OUTGOING))
def test_outgoing_bytes_are_identical_and_either_manager_frames_either_channel(case):
    kind, operation = OUTGOING[case]
    results = []
    for Manager in (MLManager, zp.SideChannelManager):
        for channel in _pair(kind):
            operation(channel)
            results.append(bytes(Manager([channel]).generate_side_channel_messages()))
    assert results[0]  # something was sent
    assert results == [results[0]] * 4, case


def test_engine_config_tuples_send_the_same_bytes():
    mlc, zpc = _pair("engine")
    mlc.set_configuration(MLEngineConfig(64, 64, 3, 5.0, 60, 30))
    zpc.set_configuration(zp.EngineConfig(64, 64, 3, 5.0, 60, 30))
    assert MLManager([mlc]).generate_side_channel_messages() == (
        zp.SideChannelManager([zpc]).generate_side_channel_messages()
    )


def test_messages_of_every_type_read_back_in_the_other_library():
    for Writer, Reader in (
        (ml.OutgoingMessage, zp.IncomingMessage),
        (zp.OutgoingMessage, ml.IncomingMessage),
    ):
        out = Writer()
        out.write_bool(True)
        out.write_int32(-123456)
        out.write_float32(2.5)
        out.write_float32_list([1.0, -0.5, 3.25])
        out.write_string("key-1 ~ASCII~")
        msg = Reader(bytearray(out.buffer))
        assert msg.read_bool() is True
        assert msg.read_int32() == -123456
        assert msg.read_float32() == 2.5
        assert msg.read_float32_list() == [1.0, -0.5, 3.25]
        assert msg.read_string() == "key-1 ~ASCII~"
        assert msg.read_int32(default_value=9) == 9  # past the end: the default
    assert ml.OutgoingMessage().buffer == zp.OutgoingMessage().buffer == b""


# ----------------------------------------------------------------------------- incoming


def _stats_frames() -> bytes:
    data = b""
    for key, value, method in (
        ("reward", 1.5, 0),
        ("reward", 2.0, 0),
        ("len", 7, 1),
        ("hits", 3, 2),
        ("h", 0.25, 3),
    ):
        out = ml.OutgoingMessage()
        out.write_string(key)
        out.write_float32(value)
        out.write_int32(method)
        data += frame(uuid.UUID("a1d8f7b7-cec8-50f9-b78b-d3e165a78520"), bytes(out.buffer))
    return data


def _stats_as_names(stats) -> dict:
    return {k: [(v, m.name) for v, m in values] for k, values in stats.items()}


def test_stats_from_unity_decode_the_same_in_both_libraries_and_managers():
    data = _stats_frames()
    decoded = []
    for Manager in (MLManager, zp.SideChannelManager):
        for channel in (MLStats(), zp.StatsSideChannel()):
            Manager([channel]).process_side_channel_message(bytearray(data))
            decoded.append(_stats_as_names(channel.get_and_reset_stats()))
    assert decoded[0] == {
        "reward": [(1.5, "AVERAGE"), (2.0, "AVERAGE")],
        "len": [(7.0, "MOST_RECENT")],
        "hits": [(3.0, "SUM")],
        "h": [(0.25, "HISTOGRAM")],
    }
    assert decoded == [decoded[0]] * 4


def test_float_properties_and_raw_bytes_from_unity_decode_the_same():
    out = ml.OutgoingMessage()
    out.write_string("speed")
    out.write_float32(4.5)
    floats_id = ml.FloatPropertiesChannel().channel_id
    data = frame(floats_id, bytes(out.buffer)) + frame(RAW_ID, b"payload")
    seen = []
    for Manager in (MLManager, zp.SideChannelManager):
        for floats, raw in (
            _pair("floats")[0:1] + _pair("raw")[0:1],
            _pair("floats")[1:] + _pair("raw")[1:],
        ):
            Manager([floats, raw]).process_side_channel_message(bytearray(data))
            seen.append(
                (
                    floats.get_property_dict_copy(),
                    [bytes(m) for m in raw.get_and_clear_received_messages()],
                )
            )
    assert seen == [({"speed": 4.5}, [b"payload"])] * 4


def test_errors_are_the_exception_mlagents_raises_in_each_case():
    """Where mlagents_envs raises UnityCommunicationException (a message on a send-only
    channel) or UnityEnvironmentException (a short frame, two channels with one id), zooport
    raises its class of the same name (also a SideChannelError)."""
    import mlagents_envs.exception as ml_exception

    from zooport.envs import exception as zp_exception

    short = RAW_ID.bytes_le + struct.pack("<i", 5) + b"abc"
    for lib, (exceptions, manager, incoming) in enumerate(
        [
            (ml_exception, MLManager, ml.IncomingMessage),
            (zp_exception, zp.SideChannelManager, zp.IncomingMessage),
        ]
    ):
        for kind in ("engine", "params"):
            with pytest.raises(exceptions.UnityCommunicationException):
                _pair(kind)[lib].on_message_received(incoming(struct.pack("<i", 1)))
        with pytest.raises(exceptions.UnityEnvironmentException):
            manager([_pair("raw")[lib]]).process_side_channel_message(short)
        with pytest.raises(exceptions.UnityEnvironmentException):
            manager([_pair("raw")[lib], _pair("raw")[lib]])


def test_managers_frame_several_channels_the_same_way():
    mls = [
        ml.EngineConfigurationChannel(),
        ml.RawBytesChannel(RAW_ID),
        ml.EnvironmentParametersChannel(),
    ]
    zps = [
        zp.EngineConfigurationChannel(),
        zp.RawBytesChannel(RAW_ID),
        zp.EnvironmentParametersChannel(),
    ]
    for engine, raw, params in (mls, zps):
        engine.set_configuration_parameters(time_scale=3.0, target_frame_rate=-1)
        raw.send_raw_data(bytearray(b"one"))
        raw.send_raw_data(bytearray(b"two"))
        params.set_float_parameter("k", 1.0)
    expected = MLManager(mls).generate_side_channel_messages()
    assert zp.SideChannelManager(zps).generate_side_channel_messages() == expected
    assert expected.count(RAW_ID.bytes_le) == 2


# ----------------------------------------------------------------------------- in an env


class ChannelEnv(BatchedEnv):
    """Reads engine config and environment parameters, reports a stat every step."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        obs = obs_spec((1,), "x")
        self._add_behavior("B", BehaviorSpec([obs], ActionSpec.create_discrete((2,))), 1)
        self.seen: list[tuple[float, ...]] = []

    def _reset_agents(self, behavior, slots):
        pass

    def _step(self, actions):
        self.seen.append(
            (
                self.engine_config.time_scale,
                self.environment_parameter("gravity", 0.0),
                self.environment_parameter("mass", -1.0),
                self.environment_parameter("len", -1.0),
                self.environment_parameter("w", -1.0),
            )
        )
        self.record_stat("steps", float(len(self.seen)))
        return {"B": StepResult(np.zeros(1, np.float32), np.zeros(1, bool))}

    def _observe(self, behavior, slots):
        return [np.zeros((slots.size, 1), np.float32)]


def test_a_users_channels_drive_a_zooport_env_the_same_from_either_library():
    seen = {}
    for library, lib in (("mlagents", ml), ("zooport", zp)):
        engine, params = lib.EngineConfigurationChannel(), lib.EnvironmentParametersChannel()
        stats = MLStats() if library == "mlagents" else zp.StatsSideChannel()
        env = ChannelEnv(side_channels=[engine, params, stats], seed=0)
        engine.set_configuration_parameters(time_scale=20.0)
        params.set_float_parameter("gravity", -9.5)
        params.set_uniform_sampler_parameters("mass", 0.5, 2.0, 7)
        params.set_gaussian_sampler_parameters("len", 1.0, 0.25, 3)
        params.set_multirangeuniform_sampler_parameters("w", [(0.0, 1.0), (2.5, 4.0)], 11)
        env.reset()
        for _ in range(3):
            env.step()
        assert _stats_as_names(stats.get_and_reset_stats()) == {
            "steps": [(1.0, "AVERAGE"), (2.0, "AVERAGE"), (3.0, "AVERAGE")]
        }, library
        assert {s[:2] for s in env.seen} == {(20.0, -9.5)}, library
        seen[library] = env.seen
    # The sampled values are the same whichever library's channel sent the samplers.
    assert seen["mlagents"] == seen["zooport"]
    mass = [s[2] for s in seen["zooport"]]
    assert len(set(mass)) == 3 and all(0.5 <= m < 2.0 for m in mass)


@pytest.mark.parametrize("library", ["mlagents", "zooport"])
def test_a_users_channels_reach_a_unity_environment_the_same_from_either_library(
    make_unity, library
):
    lib = ml if library == "mlagents" else zp
    engine, raw = lib.EngineConfigurationChannel(), lib.RawBytesChannel(RAW_ID)
    stats = MLStats() if library == "mlagents" else zp.StatsSideChannel()
    comm = ScriptedCommunicator(True, 2)
    unity = make_unity(comm, side_channels=[engine, raw, stats])
    engine.set_configuration_parameters(width=84, height=84, time_scale=7.0)
    raw.send_raw_data(bytearray(b"to unity"))
    comm.side_channel_out = _stats_frames() + frame(RAW_ID, b"from unity")
    unity.reset()
    sent = comm.side_channel_in[-1]
    expected = bytes(
        MLManager(
            [
                _configured(ml.EngineConfigurationChannel()),
                _queued(ml.RawBytesChannel(RAW_ID)),
            ]
        ).generate_side_channel_messages()
    )
    # Unity receives the user's frames, then those of the training-analytics channel that
    # UnityEnvironment 0.28 appends to the caller's side_channels list.
    assert sent.startswith(expected) and len(sent) > len(expected)
    assert _stats_as_names(stats.get_and_reset_stats())["reward"] == [
        (1.5, "AVERAGE"),
        (2.0, "AVERAGE"),
    ]
    assert [bytes(m) for m in raw.get_and_clear_received_messages()] == [b"from unity"]


def _configured(channel):
    channel.set_configuration_parameters(width=84, height=84, time_scale=7.0)
    return channel


def _queued(channel):
    channel.send_raw_data(bytearray(b"to unity"))
    return channel
