"""ML-Agents' ``mlagents_envs.side_channel``: its names, channel ids and wire format, exactly."""

from __future__ import annotations

from .engine_configuration_channel import EngineConfig, EngineConfigurationChannel
from .environment_parameters_channel import EnvironmentParametersChannel
from .float_properties_channel import FloatPropertiesChannel
from .raw_bytes_channel import RawBytesChannel
from .side_channel import (
    IncomingMessage,
    OutgoingMessage,
    SideChannel,
    SideChannelCommunicationError,
    SideChannelEnvironmentError,
    SideChannelTypeError,
)
from .side_channel_manager import SideChannelManager, SimulationSideChannels
from .stats_side_channel import StatsAggregationMethod, StatsSideChannel

__all__ = [
    "IncomingMessage", "OutgoingMessage", "SideChannel", "SideChannelManager", "EngineConfig",
    "EngineConfigurationChannel", "EnvironmentParametersChannel", "FloatPropertiesChannel",
    "StatsAggregationMethod", "StatsSideChannel", "RawBytesChannel", "SimulationSideChannels",
    "SideChannelTypeError", "SideChannelCommunicationError", "SideChannelEnvironmentError",
]  # fmt: skip
