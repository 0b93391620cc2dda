"""The simulation's end of the side channels, for environments that run in-process.

Classes:
    SimulationSideChannels: reads what the user's channels send and answers through them.

A Unity environment reads side-channel bytes on its C# side. An in-process environment has
no C# side, so it holds a :class:`SimulationSideChannels` and calls :meth:`exchange` on every
reset and step: the user's channels are then driven through exactly the bytes they would
exchange with Unity, and a channel that works here works against Unity unchanged.
"""

from __future__ import annotations

import bisect
import itertools
import math
import uuid
from collections.abc import Callable, Iterable
from enum import IntEnum

import numpy as np

from zooport.envs.arguments import check_seed
from zooport.errors import SideChannelError

from ._common import (
    SideChannelCommunicationError,
    SideChannelTypeError,
    check_float32,
    encode_ascii,
)
from .engine_configuration_channel import (
    ENGINE_CONFIGURATION_CHANNEL_ID,
    EngineConfig,
    EngineConfigurationChannel,
)
from .environment_parameters_channel import (
    ENVIRONMENT_PARAMETERS_CHANNEL_ID,
    EnvironmentParametersChannel,
)
from .float_properties_channel import FLOAT_PROPERTIES_CHANNEL_ID, FloatPropertiesChannel
from .incoming_message import IncomingMessage
from .outgoing_message import OutgoingMessage
from .side_channel import SideChannel
from .side_channel_manager import SideChannelManager, _append_frame, _parse_frames
from .stats_side_channel import STATS_SIDE_CHANNEL_ID, StatsAggregationMethod

__all__ = ["SimulationSideChannels"]

_Config = EngineConfigurationChannel.ConfigurationType
_DataType = EnvironmentParametersChannel.EnvironmentDataTypes
_SamplerType = EnvironmentParametersChannel.SamplerTypes
# By int code: the codes arrive as the int32 of a message.
_INT_SETTINGS: dict[int, str] = {
    _Config.QUALITY_LEVEL: "quality_level",
    _Config.TARGET_FRAME_RATE: "target_frame_rate",
    _Config.CAPTURE_FRAME_RATE: "capture_frame_rate",
}


class SimulationSideChannels:
    """Plays the simulation's part of ML-Agents' built-in side channels.

    On each :meth:`exchange` it takes the bytes the user's channels queued and reads them as
    Unity would: engine configuration messages update :attr:`engine_config`, environment
    parameter messages set a float or a seeded sampler per key (read with
    :meth:`get_parameter`), float property messages update :attr:`float_properties`. Messages
    for any other channel (raw bytes, custom channels) are kept in
    :attr:`unhandled_messages` until the next exchange. Then it delivers what the simulation
    queued since the last exchange (:meth:`record_stat`, :meth:`set_float_property`,
    :meth:`queue_message`) to the user's channels, framed as Unity frames it.

    Call :meth:`exchange` at the start of each reset and step so that settings take effect
    at once; a statistic recorded while simulating then reaches the user at the next call
    (call it again after simulating to deliver it in the same step, as Unity does).

    Args:
        user_channels: the user's side channels, as they would be passed to
            ``UnityEnvironment``; their ids must be distinct.
        seed: ``None`` to seed each sampler from its message's seed alone, as Unity does;
            an int >= 0 to mix it in, so that simulations given the same messages draw
            different but reproducible values.

    Attributes:
        engine_config: the current engine settings; starts as ``EngineConfig.default_config()``.
        float_properties: the float properties either end has set.
        unhandled_messages: ``(channel_id, payload)`` pairs of the last exchange that no
            built-in channel handles.

    Example:
        >>> from zooport.envs.side_channel import (
        ...     EngineConfigurationChannel, EnvironmentParametersChannel, StatsSideChannel)
        >>> engine, params, stats = (
        ...     EngineConfigurationChannel(), EnvironmentParametersChannel(), StatsSideChannel())
        >>> sim = SimulationSideChannels([engine, params, stats])
        >>> engine.set_configuration_parameters(time_scale=5.0)
        >>> params.set_float_parameter("gravity", -9.5)
        >>> sim.record_stat("reward", 1.0)
        >>> sim.exchange()
        >>> sim.engine_config.time_scale, sim.get_parameter("gravity", default=0.0)
        (5.0, -9.5)
        >>> stats.get_and_reset_stats()
        {'reward': [(1.0, <StatsAggregationMethod.AVERAGE: 0>)]}
    """

    def __init__(
        self, user_channels: Iterable[SideChannel] | None = None, seed: int | None = None
    ) -> None:
        channels = SideChannelManager._get_side_channels_dict(user_channels)
        self._manager = SideChannelManager(channels.values())
        self._side_channels = tuple(channels.values())
        self._seed = check_seed(seed, type(self).__name__)

        self.engine_config: EngineConfig = EngineConfig.default_config()
        self.float_properties: dict[str, float] = {}
        self.unhandled_messages: list[tuple[uuid.UUID, bytes]] = []
        self._parameters: dict[str, float | Callable[[], float]] = {}
        self._outgoing = bytearray()
        self._user_channel_ids = frozenset(channels)

        # A FloatPropertiesChannel may use a custom id; the simulation then answers on it too.
        self._float_property_ids = {FLOAT_PROPERTIES_CHANNEL_ID} | {
            channel_id
            for channel_id, channel in channels.items()
            if isinstance(channel, FloatPropertiesChannel)
        }
        self._handlers: dict[uuid.UUID, Callable[[IncomingMessage], None]] = {
            ENGINE_CONFIGURATION_CHANNEL_ID: self._on_engine_configuration,
            ENVIRONMENT_PARAMETERS_CHANNEL_ID: self._on_environment_parameter,
        }
        self._handlers.update(dict.fromkeys(self._float_property_ids, self._on_float_property))

    @property
    def side_channels(self) -> tuple[SideChannel, ...]:
        """The user's side channels, in the order given."""
        return self._side_channels

    def exchange(self) -> None:
        """Apply what the user's channels queued, then deliver what the simulation queued.

        Raises:
            SideChannelError: if a message for a built-in channel is malformed or uses an
                unknown type code. Messages before it have been applied.
        """
        self.unhandled_messages = []
        incoming = self._manager.generate_side_channel_messages()
        if incoming:
            for channel_id, payload in _parse_frames(incoming):
                handler = self._handlers.get(channel_id)
                if handler is None:
                    self.unhandled_messages.append((channel_id, payload))
                else:
                    handler(IncomingMessage(payload))
        if self._outgoing:
            outgoing, self._outgoing = self._outgoing, bytearray()
            self._manager.process_side_channel_message(outgoing)

    def get_parameter(self, key: str, default: float) -> float:
        """Return environment parameter ``key``, as Unity's ``GetWithDefault`` does.

        Args:
            key: the parameter's name.
            default: returned if the user has not set ``key``.

        Returns:
            The value the user set, a fresh sample from the sampler the user set (the
            sequence restarts whenever the sampler is sent again), or ``default``.
        """
        entry = self._parameters.get(key, default)
        return entry() if callable(entry) else entry

    def record_stat(
        self,
        key: str,
        value: float,
        aggregation: StatsAggregationMethod = StatsAggregationMethod.AVERAGE,
    ) -> None:
        """Queue a statistic for the user's ``StatsSideChannel`` (dropped if there is none).

        Args:
            key: the statistic's name (ASCII).
            value: its value, sent as float32.
            aggregation: how the trainer combines the values of this key.
        """
        if not isinstance(aggregation, StatsAggregationMethod):
            raise SideChannelTypeError(
                f"record_stat aggregation: expected a StatsAggregationMethod "
                f"({', '.join(m.name for m in StatsAggregationMethod)}), "
                f"got {type(aggregation).__name__} {aggregation!r}"
            )
        encode_ascii(key, "record_stat key")
        msg = OutgoingMessage()
        msg.write_string(key)
        msg.write_float32(check_float32(value, "record_stat value"))
        msg.write_int32(aggregation.value)
        self.queue_message(STATS_SIDE_CHANNEL_ID, msg)

    def set_float_property(self, key: str, value: float) -> None:
        """Set a float property on the simulation's side and send it to the user's
        ``FloatPropertiesChannel``, as Unity's ``SetProperty`` does.
        """
        encode_ascii(key, "set_float_property key")
        number = check_float32(value, "set_float_property value")
        msg = OutgoingMessage()
        msg.write_string(key)
        msg.write_float32(number)
        for channel_id in self._float_property_ids:
            self.queue_message(channel_id, msg)
        # Stored as the float32 the user's end will read, so both ends agree.
        self.float_properties[key] = float(np.float32(number))

    def queue_message(self, channel_id: uuid.UUID, msg: OutgoingMessage) -> None:
        """Queue ``msg`` for the user's channel ``channel_id`` until the next exchange.

        A message for a channel id the user did not register is dropped: with no Unity
        version to disagree with, it can only mean the user chose not to listen.
        """
        if not isinstance(channel_id, uuid.UUID):
            raise SideChannelTypeError(
                f"queue_message channel_id: expected a uuid.UUID, got {type(channel_id).__name__}"
            )
        if not isinstance(msg, OutgoingMessage):
            raise SideChannelTypeError(
                f"queue_message msg: expected an OutgoingMessage, got {type(msg).__name__}"
            )
        if channel_id in self._user_channel_ids:
            _append_frame(self._outgoing, channel_id, msg.buffer)

    def _on_engine_configuration(self, msg: IncomingMessage) -> None:
        code = msg.read_int32()
        if code == _Config.SCREEN_RESOLUTION:
            width, height = msg.read_int32(), msg.read_int32()
            self.engine_config = self.engine_config._replace(width=width, height=height)
        elif code == _Config.TIME_SCALE:
            # Kept as sent: Unity would also clamp it to >= 1 (<= 100 in the editor).
            self.engine_config = self.engine_config._replace(time_scale=msg.read_float32())
        elif code in _INT_SETTINGS:
            self.engine_config = self.engine_config._replace(
                **{_INT_SETTINGS[code]: msg.read_int32()}
            )
        else:
            raise SideChannelCommunicationError(
                f"engine configuration message: unknown configuration type {code}, "
                f"expected one of {_describe(_Config)}"
            )

    def _on_environment_parameter(self, msg: IncomingMessage) -> None:
        key = msg.read_string()
        data_type = msg.read_int32()
        if data_type == _DataType.FLOAT:
            self._parameters[key] = msg.read_float32()
        elif data_type == _DataType.SAMPLER:
            seed = msg.read_int32()
            self._parameters[key] = self._make_sampler(key, seed, msg)
        else:
            raise SideChannelError(
                f"environment parameter {key!r}: unknown data type {data_type}, "
                f"expected one of {_describe(_DataType)}"
            )

    def _on_float_property(self, msg: IncomingMessage) -> None:
        key = msg.read_string()
        self.float_properties[key] = msg.read_float32()

    def _make_sampler(self, key: str, seed: int, msg: IncomingMessage) -> Callable[[], float]:
        sampler_type = msg.read_int32()
        # int32 seeds may be negative; their two's complement keeps distinct seeds distinct.
        entropy = seed & 0xFFFFFFFF if self._seed is None else [seed & 0xFFFFFFFF, self._seed]
        rng = np.random.default_rng(entropy)
        if sampler_type == _SamplerType.UNIFORM:
            low, high = msg.read_float32(), msg.read_float32()
            ok = math.isfinite(low) and math.isfinite(high) and low <= high
            _require(ok, key, "uniform", "finite min <= max", (low, high))
            return _UniformSampler(rng, low, high)
        if sampler_type == _SamplerType.GAUSSIAN:
            mean, st_dev = msg.read_float32(), msg.read_float32()
            ok = math.isfinite(mean) and math.isfinite(st_dev) and st_dev >= 0
            _require(ok, key, "gaussian", "a finite mean and st_dev >= 0", (mean, st_dev))
            return _GaussianSampler(rng, mean, st_dev)
        if sampler_type == _SamplerType.MULTIRANGEUNIFORM:
            return _MultiRangeUniformSampler(rng, key, msg.read_float32_list())
        raise SideChannelError(
            f"environment parameter {key!r}: unknown sampler type {sampler_type}, "
            f"expected one of {_describe(_SamplerType)}"
        )


class _UniformSampler:
    """Uniform on [low, high), the way Unity's sampler computes it."""

    def __init__(self, rng: np.random.Generator, low: float, high: float) -> None:
        self.rng, self.low, self.high = rng, low, high

    def __call__(self) -> float:
        return self.low + self.rng.random() * (self.high - self.low)


class _GaussianSampler:
    """Normal with the given mean and standard deviation."""

    def __init__(self, rng: np.random.Generator, mean: float, st_dev: float) -> None:
        self.rng, self.mean, self.st_dev = rng, mean, st_dev

    def __call__(self) -> float:
        return float(self.rng.normal(self.mean, self.st_dev))


class _MultiRangeUniformSampler:
    """Uniform on a union of intervals: one draw, mapped onto the widths laid end to end,
    so each interval is chosen with probability proportional to its width."""

    def __init__(self, rng: np.random.Generator, key: str, flat: list[float]) -> None:
        sampler = "multi-range uniform"
        pairs_ok = len(flat) % 2 == 0 and all(map(math.isfinite, flat))
        _require(pairs_ok, key, sampler, "finite (min, max) pairs", flat)
        self.lows, self.highs = flat[0::2], flat[1::2]
        widths = [high - low for low, high in zip(self.lows, self.highs, strict=True)]
        widths_ok = min(widths, default=-1.0) >= 0 and sum(widths) > 0
        _require(widths_ok, key, sampler, "min <= max in each pair, a positive total width", flat)
        self.rng = rng
        self.ends = list(itertools.accumulate(widths))
        self.starts = [0.0, *self.ends[:-1]]

    def __call__(self) -> float:
        position = self.rng.random() * self.ends[-1]
        index = min(bisect.bisect_right(self.ends, position), len(self.ends) - 1)
        return min(self.lows[index] + (position - self.starts[index]), self.highs[index])


def _require(ok: bool, key: str, sampler: str, expected: str, got: object) -> None:
    if not ok:
        raise SideChannelError(
            f"environment parameter {key!r}: {sampler} sampler expects {expected}, got {got}"
        )


def _describe(codes: type[IntEnum]) -> str:
    return ", ".join(f"{code.value} ({code.name})" for code in codes)
