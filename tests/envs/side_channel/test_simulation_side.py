"""SimulationSideChannels: the simulation's end, driven only through the channels' bytes."""

from __future__ import annotations

import copy
import pickle
import struct
import uuid
import warnings

import numpy as np
import pytest

from zooport.envs.side_channel import (
    EngineConfig,
    EngineConfigurationChannel,
    EnvironmentParametersChannel,
    FloatPropertiesChannel,
    IncomingMessage,
    OutgoingMessage,
    RawBytesChannel,
    SideChannel,
    SideChannelTypeError,
    SimulationSideChannels,
    StatsAggregationMethod,
    StatsSideChannel,
)
from zooport.errors import ArgumentError, ArgumentTypeError, SideChannelError

from tests.support.wire import ENGINE_ID, PARAMS_ID, string


class ForgedChannel(SideChannel):
    """Sends hand-made payloads under any channel id, as a buggy custom channel could."""

    def on_message_received(self, msg: IncomingMessage) -> None:
        pass

    def send(self, payload: bytes) -> None:
        msg = OutgoingMessage()
        msg.set_raw_bytes(payload)
        self.queue_message_to_send(msg)


def draw(sim: SimulationSideChannels, key: str, n: int) -> np.ndarray:
    return np.array([sim.get_parameter(key, default=np.nan) for _ in range(n)])


# ------------------------------------------------------------------ engine configuration


def test_engine_config_starts_at_defaults_and_follows_the_user():
    engine = EngineConfigurationChannel()
    sim = SimulationSideChannels([engine])
    assert sim.engine_config == EngineConfig.default_config()
    engine.set_configuration_parameters(width=320, height=240, time_scale=0.5)
    sim.exchange()
    assert sim.engine_config == EngineConfig(320, 240, 1, 0.5, -1, 60)
    assert engine.message_queue == []
    engine.set_configuration(EngineConfig(None, None, 4, None, 30, 25))
    sim.exchange()
    assert sim.engine_config == EngineConfig(320, 240, 4, 0.5, 30, 25)


def test_engine_config_unknown_type_is_an_error():
    forged = ForgedChannel(ENGINE_ID)
    sim = SimulationSideChannels([forged])
    forged.send(struct.pack("<ii", 9, 1))
    with pytest.raises(SideChannelError, match="unknown configuration type 9, expected one of 0"):
        sim.exchange()


def test_engine_config_truncated_message_is_an_error():
    forged = ForgedChannel(ENGINE_ID)
    sim = SimulationSideChannels([forged])
    forged.send(struct.pack("<ii", 0, 100))  # screen resolution without its height
    with pytest.raises(SideChannelError, match="cannot read int32 at offset 8"):
        sim.exchange()


# ------------------------------------------------------------------ environment parameters


def test_float_parameter_reaches_the_simulation_as_float32():
    params = EnvironmentParametersChannel()
    sim = SimulationSideChannels([params])
    assert sim.get_parameter("gravity", default=-1.0) == -1.0
    params.set_float_parameter("gravity", 0.1)
    sim.exchange()
    assert sim.get_parameter("gravity", default=-1.0) == float(np.float32(0.1))
    assert sim.get_parameter("other", default=3.0) == 3.0


def _send_samplers(params: EnvironmentParametersChannel, seed: int) -> None:
    params.set_uniform_sampler_parameters("uniform", -1.0, 3.0, seed=seed)
    params.set_gaussian_sampler_parameters("gaussian", mean=10.0, st_dev=2.0, seed=seed)
    params.set_multirangeuniform_sampler_parameters("multi", [(0.0, 1.0), (10.0, 13.0)], seed=seed)


@pytest.mark.parametrize("key", ["uniform", "gaussian", "multi"])
def test_identical_sampler_messages_give_identical_sequences(key):
    draws = []
    for _ in range(2):
        params = EnvironmentParametersChannel()
        sim = SimulationSideChannels([params])
        _send_samplers(params, seed=42)
        sim.exchange()
        draws.append(draw(sim, key, 50))
    np.testing.assert_array_equal(draws[0], draws[1])
    assert len(np.unique(draws[0])) == 50  # a sampler, not a constant


@pytest.mark.parametrize("key", ["uniform", "gaussian", "multi"])
def test_resending_a_sampler_restarts_its_sequence_and_seeds_differ(key):
    params = EnvironmentParametersChannel()
    sim = SimulationSideChannels([params])
    _send_samplers(params, seed=7)
    sim.exchange()
    first = draw(sim, key, 20)
    _send_samplers(params, seed=7)
    sim.exchange()
    np.testing.assert_array_equal(draw(sim, key, 20), first)
    _send_samplers(params, seed=-7)  # negative int32 seeds are valid on the wire
    sim.exchange()
    assert not np.array_equal(draw(sim, key, 20), first)


@pytest.mark.parametrize("key", ["uniform", "gaussian", "multi"])
def test_simulation_seed_is_mixed_in_reproducibly(key):
    def sequence(sim_seed):
        params = EnvironmentParametersChannel()
        sim = SimulationSideChannels([params], seed=sim_seed)
        _send_samplers(params, seed=3)
        sim.exchange()
        return draw(sim, key, 20)

    np.testing.assert_array_equal(sequence(1), sequence(1))
    assert not np.array_equal(sequence(1), sequence(2))
    assert not np.array_equal(sequence(1), sequence(None))


def test_sampler_distributions():
    params = EnvironmentParametersChannel()
    sim = SimulationSideChannels([params])
    _send_samplers(params, seed=0)
    sim.exchange()
    n = 4000

    uniform = draw(sim, "uniform", n)
    assert uniform.min() >= -1.0 and uniform.max() < 3.0
    assert abs(uniform.mean() - 1.0) < 0.1  # sd of the mean ~ 0.018

    gaussian = draw(sim, "gaussian", n)
    assert abs(gaussian.mean() - 10.0) < 0.15 and abs(gaussian.std() - 2.0) < 0.15

    multi = draw(sim, "multi", n)
    in_first = (multi >= 0.0) & (multi <= 1.0)
    in_second = (multi >= 10.0) & (multi <= 13.0)
    assert np.all(in_first | in_second)
    # An interval is chosen in proportion to its width: 1 and 3, so 25% and 75%.
    assert abs(in_first.mean() - 0.25) < 0.03
    # Uniform within each interval.
    assert abs(multi[in_second].mean() - 11.5) < 0.1


def test_multi_range_skips_zero_width_intervals():
    params = EnvironmentParametersChannel()
    sim = SimulationSideChannels([params])
    params.set_multirangeuniform_sampler_parameters("k", [(5.0, 5.0), (1.0, 2.0)], seed=1)
    sim.exchange()
    values = draw(sim, "k", 500)
    assert values.min() >= 1.0 and values.max() <= 2.0


@pytest.mark.parametrize(
    ("payload", "match"),
    [
        (string("k") + struct.pack("<i", 5), "unknown data type 5, expected one of 0 .FLOAT."),
        (string("k") + struct.pack("<iii", 1, 0, 9), "unknown sampler type 9"),
        (string("k") + struct.pack("<iiiff", 1, 0, 0, 2.0, 1.0), "uniform sampler expects"),
        (string("k") + struct.pack("<iiiff", 1, 0, 1, 0.0, -1.0), "st_dev >= 0"),
        (string("k") + struct.pack("<iiii3f", 1, 0, 2, 3, 0, 1, 2), r"\(min, max\) pairs"),
        (string("k") + struct.pack("<iiii", 1, 0, 2, 0), "positive total width"),
        (string("k") + struct.pack("<ii", 1, 0), "cannot read int32 at offset 13"),
    ],
)
def test_malformed_parameter_messages_are_errors(payload, match):
    forged = ForgedChannel(PARAMS_ID)
    sim = SimulationSideChannels([forged])
    forged.send(payload)
    with pytest.raises(SideChannelError, match=match):
        sim.exchange()
    assert sim.get_parameter("k", default=-1.0) == -1.0


# ------------------------------------------------------------------ float properties


def test_float_properties_flow_both_ways():
    props = FloatPropertiesChannel()
    sim = SimulationSideChannels([props])
    props.set_property("speed", 2.5)
    sim.exchange()
    assert sim.float_properties == {"speed": 2.5}
    sim.set_float_property("score", 0.1)
    assert props.get_property("score") is None  # delivered at the next exchange
    sim.exchange()
    assert props.get_property("score") == float(np.float32(0.1))
    assert sim.float_properties["score"] == props.get_property("score")
    assert props.get_property("speed") == 2.5


def test_float_properties_on_a_custom_channel_id():
    props = FloatPropertiesChannel(uuid.UUID(int=77))
    sim = SimulationSideChannels([props])
    props.set_property("a", 1.0)
    sim.set_float_property("b", 2.0)
    sim.exchange()
    assert sim.float_properties == {"a": 1.0, "b": 2.0}
    assert props.get_property_dict_copy() == {"a": 1.0, "b": 2.0}


# ------------------------------------------------------------------ stats


@pytest.mark.parametrize("aggregation", list(StatsAggregationMethod))
def test_stats_reach_the_users_channel_with_their_aggregation(aggregation):
    stats = StatsSideChannel()
    sim = SimulationSideChannels([stats])
    sim.record_stat("episode/length", 12.0, aggregation)
    sim.record_stat("episode/length", 13.0, aggregation)
    assert stats.get_and_reset_stats() == {}  # nothing before the exchange
    sim.exchange()
    assert stats.get_and_reset_stats() == {
        "episode/length": [(12.0, aggregation), (13.0, aggregation)]
    }
    sim.exchange()
    assert stats.get_and_reset_stats() == {}  # delivered once


def test_stats_bytes_are_unitys():
    received = []

    class Spy(StatsSideChannel):
        def on_message_received(self, msg):
            received.append(bytes(msg.get_raw_bytes()))
            super().on_message_received(msg)

    sim = SimulationSideChannels([Spy()])
    sim.record_stat("r", 1.5, StatsAggregationMethod.SUM)
    sim.exchange()
    assert received == [string("r") + struct.pack("<fi", 1.5, 2)]


def test_stats_without_a_stats_channel_are_dropped_silently():
    sim = SimulationSideChannels([])
    sim.record_stat("r", 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.exchange()


def test_record_stat_validates_its_arguments():
    sim = SimulationSideChannels([StatsSideChannel()])
    with pytest.raises(SideChannelTypeError, match="expected a StatsAggregationMethod .*got int"):
        sim.record_stat("r", 1.0, 1)
    with pytest.raises(SideChannelError, match="record_stat key: expected an ASCII"):
        sim.record_stat("r\u00e9", 1.0)
    with pytest.raises(SideChannelTypeError, match="record_stat value: expected a real"):
        sim.record_stat("r", "1")


# ------------------------------------------------------------------ other channels


def test_raw_bytes_are_kept_for_one_exchange_and_answers_delivered():
    raw = RawBytesChannel(uuid.UUID(int=5))
    sim = SimulationSideChannels([raw])
    raw.send_raw_data(b"ping")
    sim.exchange()
    assert sim.unhandled_messages == [(raw.channel_id, b"ping")]
    reply = OutgoingMessage()
    reply.set_raw_bytes(b"pong")
    sim.queue_message(raw.channel_id, reply)
    sim.exchange()
    assert sim.unhandled_messages == []
    assert raw.get_and_clear_received_messages() == [bytearray(b"pong")]


def test_queue_message_to_an_unregistered_channel_is_dropped():
    raw = RawBytesChannel(uuid.UUID(int=5))
    sim = SimulationSideChannels([raw])
    msg = OutgoingMessage()
    msg.write_int32(1)
    sim.queue_message(uuid.UUID(int=6), msg)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.exchange()
    assert raw.get_and_clear_received_messages() == []
    with pytest.raises(SideChannelTypeError, match="expected a uuid.UUID"):
        sim.queue_message("id", msg)


def test_construction_checks_channels_and_seed():
    assert SimulationSideChannels().side_channels == ()
    stats = StatsSideChannel()
    assert SimulationSideChannels([stats]).side_channels == (stats,)
    with pytest.raises(SideChannelError, match="already used by StatsSideChannel"):
        SimulationSideChannels([stats, StatsSideChannel()])
    # The seed is checked as every seed is (zooport.envs.arguments.check_seed).
    with pytest.raises(ArgumentError, match="seed to be None or an int >= 0, got -1"):
        SimulationSideChannels(seed=-1)
    with pytest.raises(ArgumentTypeError, match="seed to be None or an int >= 0, got float"):
        SimulationSideChannels(seed=1.5)


def test_all_channels_together_in_one_exchange():
    engine, params = EngineConfigurationChannel(), EnvironmentParametersChannel()
    props, stats = FloatPropertiesChannel(), StatsSideChannel()
    sim = SimulationSideChannels([engine, params, props, stats], seed=0)
    engine.set_configuration_parameters(time_scale=3.0)
    params.set_float_parameter("p", 4.0)
    props.set_property("q", 5.0)
    sim.record_stat("s", 6.0, StatsAggregationMethod.MOST_RECENT)
    sim.exchange()
    assert sim.engine_config.time_scale == 3.0
    assert sim.get_parameter("p", 0.0) == 4.0
    assert sim.float_properties == {"q": 5.0}
    assert stats.get_and_reset_stats() == {"s": [(6.0, StatsAggregationMethod.MOST_RECENT)]}
    assert sim.unhandled_messages == []


@pytest.mark.parametrize("copier", [copy.deepcopy, lambda sim: pickle.loads(pickle.dumps(sim))])
def test_copies_continue_every_sampler_independently(copier):
    params = EnvironmentParametersChannel()
    sim = SimulationSideChannels([params], seed=5)
    _send_samplers(params, seed=11)
    sim.exchange()
    draw(sim, "multi", 3)
    clone = copier(sim)
    for key in ("uniform", "gaussian", "multi"):
        np.testing.assert_array_equal(draw(clone, key, 10), draw(sim, key, 10))
