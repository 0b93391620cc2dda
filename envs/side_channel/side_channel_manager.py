"""ML-Agents' side-channel frames (``UUID.bytes_le``, int32 length, payload) and both their ends."""

from __future__ import annotations

import bisect
import itertools
import struct
import uuid
import warnings
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

import numpy as np

from zooport.envs.arguments import check_seed

from . import engine_configuration_channel as engine, environment_parameters_channel as params
from .float_properties_channel import FLOAT_PROPERTIES_CHANNEL_ID, FloatPropertiesChannel
from .side_channel import (
    IncomingMessage,
    OutgoingMessage,
    SideChannel,
    SideChannelCommunicationError,
    SideChannelEnvironmentError,
    check_bytes,
    key_message,
    known_code,
    wrong_type,
)
from .stats_side_channel import STATS_SIDE_CHANNEL_ID, StatsAggregationMethod

__all__ = ["SideChannelManager", "SimulationSideChannels"]

_LENGTH = struct.Struct("<i")
_HEADER_SIZE = 16 + _LENGTH.size


def _parse_frames(data: bytes | bytearray | memoryview) -> list[tuple[uuid.UUID, bytes]]:
    """``(channel_id, payload)`` of every frame in ``data``, all checked before any is used."""
    data = check_bytes(data, "side-channel data")  # also makes any memoryview readable
    total, offset = len(data), 0
    frames: list[tuple[uuid.UUID, bytes]] = []
    while offset < total:
        where = f"side-channel frame at offset {offset}"
        if total - offset < _HEADER_SIZE:
            raise SideChannelEnvironmentError(
                f"{where}: truncated header, needs {_HEADER_SIZE} bytes (16-byte channel id + "
                f"int32 length), {total - offset} remain (data is {total} bytes)"
            )
        channel_id = uuid.UUID(bytes_le=data[offset : offset + 16])
        (length,) = _LENGTH.unpack_from(data, offset + 16)
        start = offset + _HEADER_SIZE
        if length < 0:
            raise SideChannelEnvironmentError(
                f"{where} for channel {channel_id}: expected a payload length >= 0, got {length}"
            )
        if length > total - start:
            raise SideChannelEnvironmentError(
                f"{where} for channel {channel_id}: declares a {length}-byte payload, "
                f"{total - start} bytes remain after its header (data is {total} bytes)"
            )
        frames.append((channel_id, data[start : start + length]))
        offset = start + length
    return frames


def _append_frame(result: bytearray, channel_id: uuid.UUID, payload: bytes | bytearray) -> None:
    result += channel_id.bytes_le + _LENGTH.pack(len(payload)) + payload


class SideChannelManager:
    """Routes messages between the simulation and channels (duck-typed: ``mlagents_envs``' too)."""

    def __init__(self, side_channels: Iterable[SideChannel] | None = None) -> None:
        self._side_channels_dict = self._get_side_channels_dict(side_channels)

    def process_side_channel_message(self, data: bytes | bytearray | memoryview) -> None:
        """Deliver each frame of ``data`` (all checked first) to its channel."""
        for channel_id, payload in _parse_frames(data):
            channel = self._side_channels_dict.get(channel_id)
            if channel is not None:
                channel.on_message_received(IncomingMessage(payload))
                continue
            registered = ", ".join(
                f"{type(c).__name__} {i}" for i, c in self._side_channels_dict.items()
            )
            warnings.warn(
                f"Unknown side channel data received: a {len(payload)}-byte message for "
                f"channel id {channel_id}, which no registered side channel has "
                f"(registered: {registered or 'none'}). The message is ignored.",
                stacklevel=2,
            )

    def generate_side_channel_messages(self) -> bytearray:
        """Frame and dequeue every queued message, channel by channel in registration order."""
        result = bytearray()
        for channel_id, channel in self._side_channels_dict.items():
            for payload in channel.message_queue:
                _append_frame(result, channel_id, payload)
            channel.message_queue = []
        return result

    @staticmethod
    def _get_side_channels_dict(
        side_channels: Iterable[SideChannel] | None,
    ) -> dict[uuid.UUID, SideChannel]:
        if side_channels is None:
            return {}
        if isinstance(side_channels, (str, bytes)) or not isinstance(side_channels, Iterable):
            expected = "a list of side channels or None"
            raise wrong_type("side_channels", expected, side_channels, show=False)
        channels: dict[uuid.UUID, SideChannel] = {}
        for index, channel in enumerate(side_channels):
            channel_id = getattr(channel, "channel_id", None)
            if (
                not isinstance(channel_id, uuid.UUID)
                or not callable(getattr(channel, "on_message_received", None))
                or not isinstance(getattr(channel, "message_queue", None), list)
            ):
                expected = "a SideChannel (UUID channel_id, message_queue, on_message_received)"
                raise wrong_type(f"side_channels[{index}]", expected, channel, show=False)
            if channel_id in channels:
                raise SideChannelEnvironmentError(
                    f"side_channels[{index}]: {type(channel).__name__} has channel id "
                    f"{channel_id}, already used by {type(channels[channel_id]).__name__}; "
                    f"each channel id may be registered once"
                )
            channels[channel_id] = channel
        return channels


_Config = engine.EngineConfigurationChannel.ConfigurationType
_Data = params.EnvironmentParametersChannel.EnvironmentDataTypes
_Sampler = params.EnvironmentParametersChannel.SamplerTypes


class SimulationSideChannels:
    """The simulation's part of the built-in channels. ``seed``: None seeds each sampler from its
    message alone, as Unity; an int >= 0 is mixed in (different, reproducible draws)."""

    def __init__(
        self, user_channels: Iterable[SideChannel] | None = None, seed: int | None = None
    ) -> None:
        self._manager = SideChannelManager(user_channels)
        self._channels = self._manager._side_channels_dict
        self._seed = check_seed(seed, type(self).__name__)
        self.engine_config = engine.EngineConfig.default_config()
        properties = FloatPropertiesChannel()  # reads the messages as the user's end does
        self.float_properties: dict[str, float] = properties._float_properties
        # Messages for channels the simulation does not play, until the next exchange.
        self.unhandled_messages: list[tuple[uuid.UUID, bytes]] = []
        self._parameters: dict[str, float | Callable[[], float]] = {}
        self._outgoing = bytearray()
        # A FloatPropertiesChannel may use its own id; the simulation then answers on it too.
        self._float_property_ids = {FLOAT_PROPERTIES_CHANNEL_ID} | {
            i for i, c in self._channels.items() if isinstance(c, FloatPropertiesChannel)
        }
        self._handlers: dict[uuid.UUID, Callable[[IncomingMessage], None]] = {
            engine.ENGINE_CONFIGURATION_CHANNEL_ID: self._on_engine_configuration,
            params.ENVIRONMENT_PARAMETERS_CHANNEL_ID: self._on_environment_parameter,
            **dict.fromkeys(self._float_property_ids, properties.on_message_received),
        }

    @property
    def side_channels(self) -> tuple[SideChannel, ...]:
        """The user's side channels, in the order given."""
        return tuple(self._channels.values())

    def exchange(self) -> None:
        """Apply what the user's channels queued, as Unity would, then deliver what was queued."""
        self.unhandled_messages = []
        incoming = self._manager.generate_side_channel_messages()
        for channel_id, payload in _parse_frames(incoming) if incoming else ():  # most steps: none
            handler = self._handlers.get(channel_id)
            if handler is None:
                self.unhandled_messages.append((channel_id, payload))
            else:
                handler(IncomingMessage(payload))
        if self._outgoing:
            outgoing, self._outgoing = self._outgoing, bytearray()
            self._manager.process_side_channel_message(outgoing)

    def get_parameter(self, key: str, default: float) -> float:
        """Parameter ``key`` as Unity's ``GetWithDefault``: its value, a new sample, or default."""
        entry = self._parameters.get(key, default)
        return float(entry()) if callable(entry) else entry

    def record_stat(
        self,
        key: str,
        value: float,
        aggregation: StatsAggregationMethod = StatsAggregationMethod.AVERAGE,
    ) -> None:
        """Queue a statistic for the user's ``StatsSideChannel`` (dropped if there is none)."""
        if not isinstance(aggregation, StatsAggregationMethod):
            names = ", ".join(m.name for m in StatsAggregationMethod)
            expected = f"a StatsAggregationMethod ({names})"
            raise wrong_type("record_stat aggregation", expected, aggregation)
        msg = key_message("record_stat", key, "fi", value, aggregation.value)
        self.queue_message(STATS_SIDE_CHANNEL_ID, msg)

    def set_float_property(self, key: str, value: float) -> None:
        """Set a float property and send it to the user's ``FloatPropertiesChannel``, as Unity."""
        msg = key_message("set_float_property", key, "f", value)
        for channel_id in self._float_property_ids:
            self.queue_message(channel_id, msg)
        # Stored as the float32 the user's end reads, so both ends agree.
        self.float_properties[key] = float(np.float32(value))

    def queue_message(self, channel_id: uuid.UUID, msg: OutgoingMessage) -> None:
        """Queue ``msg`` for the user's channel ``channel_id`` (dropped if it is not registered)."""
        if not isinstance(channel_id, uuid.UUID):
            raise wrong_type("queue_message channel_id", "a uuid.UUID", channel_id, show=False)
        if not isinstance(msg, OutgoingMessage):
            raise wrong_type("queue_message msg", "an OutgoingMessage", msg, show=False)
        if channel_id in self._channels:
            _append_frame(self._outgoing, channel_id, msg.buffer)

    def _on_engine_configuration(self, msg: IncomingMessage) -> None:
        what = "engine configuration message: unknown configuration type"
        code = known_code(what, _Config, msg.read_int32(), SideChannelCommunicationError)
        # A time scale is kept as sent: Unity would also clamp it to >= 1 (<= 100 in the editor).
        read = msg.read_float32 if code == _Config.TIME_SCALE else msg.read_int32
        values: dict[str, Any] = {name: read() for name in engine.ENGINE_SETTINGS[code]}
        self.engine_config = self.engine_config._replace(**values)

    def _on_environment_parameter(self, msg: IncomingMessage) -> None:
        key = msg.read_string()
        where = f"environment parameter {key!r}"
        if known_code(f"{where}: unknown data type", _Data, msg.read_int32()) == _Data.FLOAT:
            self._parameters[key] = msg.read_float32()
            return
        seed = msg.read_int32()
        sampler = known_code(f"{where}: unknown sampler type", _Sampler, msg.read_int32())
        multi = sampler == _Sampler.MULTIRANGEUNIFORM
        values = msg.read_float32_list() if multi else [msg.read_float32(), msg.read_float32()]
        params.check_sampler(where, sampler, values)
        # int32 seeds may be negative; their two's complement keeps distinct seeds distinct.
        entropy = seed & 0xFFFFFFFF if self._seed is None else [seed & 0xFFFFFFFF, self._seed]
        # Not partial(rng.normal): copy.deepcopy keeps a bound method of an older numpy's
        # Generator as it is, so a copy's sampler would draw from the original's generator.
        self._parameters[key] = partial(_sample, np.random.default_rng(entropy), sampler, values)


def _sample(rng: np.random.Generator, sampler: int, values: list[float]) -> float:
    """One draw as Unity's samplers make it; a uniform one lays its intervals end to end."""
    if sampler == _Sampler.GAUSSIAN:
        return float(rng.normal(values[0], values[1]))
    lows, highs = values[0::2], values[1::2]
    ends = list(itertools.accumulate(h - lo for lo, h in zip(lows, highs, strict=True)))
    position = rng.random() * ends[-1]
    index = min(bisect.bisect_right(ends, position), len(ends) - 1)
    start = ends[index - 1] if index else 0.0
    return min(lows[index] + (position - start), highs[index])
