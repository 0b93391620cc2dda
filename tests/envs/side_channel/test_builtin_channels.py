"""ML-Agents' built-in side channels: channel ids, type codes and golden message bytes.

Every expected payload is written out with ``struct.pack`` from the layout ML-Agents'
``mlagents_envs.side_channel`` modules (and the C# side that reads them) use.
"""

from __future__ import annotations

import struct
import uuid

import pytest

from zooport.envs.side_channel import (
    EngineConfig,
    EngineConfigurationChannel,
    EnvironmentParametersChannel,
    FloatPropertiesChannel,
    IncomingMessage,
    RawBytesChannel,
    SideChannelManager,
    SideChannelTypeError,
    StatsAggregationMethod,
    StatsSideChannel,
)
from zooport.errors import SideChannelError

from tests.support.wire import ENGINE_ID, PARAMS_ID, PROPS_ID, STATS_ID, frame, string


def test_channel_ids_are_ml_agents():
    assert EngineConfigurationChannel().channel_id == ENGINE_ID
    assert EnvironmentParametersChannel().channel_id == PARAMS_ID
    assert FloatPropertiesChannel().channel_id == PROPS_ID
    assert StatsSideChannel().channel_id == STATS_ID
    assert STATS_ID == uuid.uuid5(uuid.NAMESPACE_URL, "com.unity.ml-agents/StatsSideChannel")


def test_type_codes_are_ml_agents():
    kind = EngineConfigurationChannel.ConfigurationType
    assert [kind.SCREEN_RESOLUTION, kind.QUALITY_LEVEL, kind.TIME_SCALE] == [0, 1, 2]
    assert [kind.TARGET_FRAME_RATE, kind.CAPTURE_FRAME_RATE] == [3, 4]
    data = EnvironmentParametersChannel.EnvironmentDataTypes
    assert (data.FLOAT, data.SAMPLER) == (0, 1)
    sampler = EnvironmentParametersChannel.SamplerTypes
    assert (sampler.UNIFORM, sampler.GAUSSIAN, sampler.MULTIRANGEUNIFORM) == (0, 1, 2)
    assert [m.value for m in StatsAggregationMethod] == [0, 1, 2, 3]
    assert [m.name for m in StatsAggregationMethod] == [
        "AVERAGE",
        "MOST_RECENT",
        "SUM",
        "HISTOGRAM",
    ]


# ------------------------------------------------------------------ engine configuration


def test_engine_time_scale_golden_frame():
    channel = EngineConfigurationChannel()
    channel.set_configuration_parameters(time_scale=20)
    data = SideChannelManager([channel]).generate_side_channel_messages()
    assert data == frame(ENGINE_ID, struct.pack("<if", 2, 20.0))
    assert data.hex() == "2c3451e97e4fea11b238784f4387d1f708000000020000000000a041"


def test_engine_every_setting_is_its_own_message_in_ml_agents_order():
    channel = EngineConfigurationChannel()
    channel.set_configuration_parameters(
        width=640,
        height=480,
        quality_level=3,
        time_scale=1.5,
        target_frame_rate=30,
        capture_frame_rate=50,
    )
    assert channel.message_queue == [
        struct.pack("<iii", 0, 640, 480),
        struct.pack("<ii", 1, 3),
        struct.pack("<if", 2, 1.5),
        struct.pack("<ii", 3, 30),
        struct.pack("<ii", 4, 50),
    ]


def test_engine_set_configuration_sends_the_default_config():
    assert EngineConfig.default_config() == EngineConfig(80, 80, 1, 20.0, -1, 60)
    channel = EngineConfigurationChannel()
    channel.set_configuration(EngineConfig.default_config())
    assert channel.message_queue == [
        struct.pack("<iii", 0, 80, 80),
        struct.pack("<ii", 1, 1),
        struct.pack("<if", 2, 20.0),
        struct.pack("<ii", 3, -1),
        struct.pack("<ii", 4, 60),
    ]


def test_engine_none_settings_are_not_sent():
    channel = EngineConfigurationChannel()
    channel.set_configuration(EngineConfig(None, None, None, None, None, 25))
    channel.set_configuration_parameters()
    assert channel.message_queue == [struct.pack("<ii", 4, 25)]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"width": 10}, SideChannelError, "width and height both set or both None"),
        ({"height": 10, "time_scale": 2.0}, SideChannelError, "got width=None, height=10"),
        ({"quality_level": 2.5}, SideChannelTypeError, "quality_level: expected an int"),
        ({"time_scale": 2.0, "capture_frame_rate": 2**31}, SideChannelError, "capture_frame"),
        ({"time_scale": "fast"}, SideChannelTypeError, "time_scale: expected a real number"),
    ],
)
def test_engine_bad_settings_queue_nothing(kwargs, error, match):
    channel = EngineConfigurationChannel()
    with pytest.raises(error, match=match):
        channel.set_configuration_parameters(**kwargs)
    assert channel.message_queue == []


def test_engine_set_configuration_requires_an_engine_config():
    with pytest.raises(SideChannelTypeError, match="expected an EngineConfig, got tuple"):
        EngineConfigurationChannel().set_configuration((80, 80, 1, 20.0, -1, 60))


@pytest.mark.parametrize("channel_type", [EngineConfigurationChannel, EnvironmentParametersChannel])
def test_send_only_channels_reject_incoming_messages(channel_type):
    with pytest.raises(SideChannelError, match="received a 3-byte message .* only sends"):
        channel_type().on_message_received(IncomingMessage(b"abc"))


# ------------------------------------------------------------------ environment parameters


def test_float_parameter_golden_payload():
    channel = EnvironmentParametersChannel()
    channel.set_float_parameter("gravity", -9.81)
    assert channel.message_queue == [string("gravity") + struct.pack("<if", 0, -9.81)]


def test_sampler_golden_payloads():
    channel = EnvironmentParametersChannel()
    channel.set_uniform_sampler_parameters("mass", 1.0, 2.0, seed=7)
    channel.set_gaussian_sampler_parameters("size", mean=3.0, st_dev=0.5, seed=-4)
    channel.set_multirangeuniform_sampler_parameters("wind", [(1.0, 2.0), (5.0, 7.5)], seed=0)
    assert channel.message_queue == [
        string("mass") + struct.pack("<iiiff", 1, 7, 0, 1.0, 2.0),
        string("size") + struct.pack("<iiiff", 1, -4, 1, 3.0, 0.5),
        string("wind") + struct.pack("<iiii4f", 1, 0, 2, 4, 1.0, 2.0, 5.0, 7.5),
    ]


@pytest.mark.parametrize(
    ("method", "args", "error", "match"),
    [
        ("set_float_parameter", ("k\u00e9y", 1.0), SideChannelError, "key: expected an ASCII"),
        ("set_float_parameter", (3, 1.0), SideChannelTypeError, "key: expected a str"),
        ("set_float_parameter", ("k", "1"), SideChannelTypeError, "value: expected a real"),
        ("set_uniform_sampler_parameters", ("k", 2.0, 1.0, 0), SideChannelError, "min_value <="),
        (
            "set_uniform_sampler_parameters",
            ("k", float("nan"), 1.0, 0),
            SideChannelError,
            "min_value: expected a finite number, got nan",
        ),
        ("set_uniform_sampler_parameters", ("k", 0.0, 1.0, 2**31), SideChannelError, "seed"),
        ("set_uniform_sampler_parameters", ("k", 0.0, 1.0, 1.5), SideChannelTypeError, "seed"),
        ("set_gaussian_sampler_parameters", ("k", 0.0, -1.0, 0), SideChannelError, "st_dev >= 0"),
        (
            "set_multirangeuniform_sampler_parameters",
            ("k", [], 0),
            SideChannelError,
            "at least one interval and a positive total width, got 0 intervals",
        ),
        (
            "set_multirangeuniform_sampler_parameters",
            ("k", [(1.0, 1.0)], 0),
            SideChannelError,
            "positive total width",
        ),
        (
            "set_multirangeuniform_sampler_parameters",
            ("k", [(0.0, 1.0), (3.0, 2.0)], 0),
            SideChannelError,
            r"intervals\[1\]: expected min <= max, got \(3.0, 2.0\)",
        ),
        (
            "set_multirangeuniform_sampler_parameters",
            ("k", [(0.0, 1.0, 2.0)], 0),
            SideChannelTypeError,
            r"intervals\[0\]: expected a \(min, max\) pair",
        ),
        (
            "set_multirangeuniform_sampler_parameters",
            ("k", 5, 0),
            SideChannelTypeError,
            "expected an iterable of",
        ),
    ],
)
def test_bad_parameters_queue_nothing(method, args, error, match):
    channel = EnvironmentParametersChannel()
    with pytest.raises(error, match=match):
        getattr(channel, method)(*args)
    assert channel.message_queue == []


# ------------------------------------------------------------------ float properties


def test_float_properties_send_golden_payload_and_keep_local_copy():
    channel = FloatPropertiesChannel()
    channel.set_property("g", 2.0)
    assert channel.message_queue == [string("g") + struct.pack("<f", 2.0)]
    assert channel.get_property("g") == 2.0
    assert channel.get_property("missing") is None
    assert channel.list_properties() == ["g"]


def test_float_properties_receive_from_the_simulation():
    channel = FloatPropertiesChannel()
    channel.on_message_received(IncomingMessage(string("wind") + struct.pack("<f", -1.25)))
    assert channel.get_property("wind") == -1.25
    copy = channel.get_property_dict_copy()
    copy["wind"] = 0.0
    assert channel.get_property_dict_copy() == {"wind": -1.25}


def test_float_properties_custom_channel_id():
    custom = uuid.UUID(int=12345)
    assert FloatPropertiesChannel(custom).channel_id == custom
    assert FloatPropertiesChannel(channel_id=None).channel_id == PROPS_ID


def test_float_properties_bad_input():
    channel = FloatPropertiesChannel()
    with pytest.raises(SideChannelTypeError, match="set_property value: expected a real"):
        channel.set_property("k", None)
    with pytest.raises(SideChannelTypeError, match="get_property key: expected a str"):
        channel.get_property(1)
    assert channel.message_queue == [] and channel.list_properties() == []
    with pytest.raises(SideChannelError, match="cannot read float32 at offset 5"):
        channel.on_message_received(IncomingMessage(string("k")))


# ------------------------------------------------------------------ stats


def test_stats_receive_every_aggregation_in_order():
    channel = StatsSideChannel()
    for key, value, code in [("a", 1.0, 0), ("a", 2.0, 1), ("b", 3.0, 2), ("a", 4.0, 3)]:
        channel.on_message_received(IncomingMessage(string(key) + struct.pack("<fi", value, code)))
    stats = channel.get_and_reset_stats()
    assert stats == {
        "a": [
            (1.0, StatsAggregationMethod.AVERAGE),
            (2.0, StatsAggregationMethod.MOST_RECENT),
            (4.0, StatsAggregationMethod.HISTOGRAM),
        ],
        "b": [(3.0, StatsAggregationMethod.SUM)],
    }
    assert type(stats) is dict
    assert channel.get_and_reset_stats() == {}


def test_stats_without_aggregation_default_to_average():
    channel = StatsSideChannel()
    channel.on_message_received(IncomingMessage(string("old") + struct.pack("<f", 5.0)))
    assert channel.get_and_reset_stats() == {"old": [(5.0, StatsAggregationMethod.AVERAGE)]}


def test_stats_unknown_aggregation_is_a_side_channel_error():
    channel = StatsSideChannel()
    with pytest.raises(SideChannelError, match=r"aggregation code 9, expected one of 0 \(AVERAGE"):
        channel.on_message_received(IncomingMessage(string("k") + struct.pack("<fi", 1.0, 9)))
    assert channel.get_and_reset_stats() == {}


# ------------------------------------------------------------------ raw bytes


def test_raw_bytes_send_and_receive():
    channel = RawBytesChannel(uuid.UUID(int=3))
    channel.send_raw_data(bytearray(b"\x00\xff"))
    assert channel.message_queue == [b"\x00\xff"]
    channel.on_message_received(IncomingMessage(b"one"))
    channel.on_message_received(IncomingMessage(b""))
    assert channel.get_and_clear_received_messages() == [bytearray(b"one"), bytearray()]
    assert channel.get_and_clear_received_messages() == []
