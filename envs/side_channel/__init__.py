"""Side channels: messages between Python and the simulation beside observations and actions.

Classes:
    IncomingMessage, OutgoingMessage: read and write one message's little-endian payload.
    SideChannel: the base class of every channel, addressed by a UUID.
    SideChannelManager: frames and routes the messages of a set of channels.
    EngineConfig, EngineConfigurationChannel: engine resolution, quality, time scale, frame rates.
    EnvironmentParametersChannel: environment parameters, fixed or sampled.
    FloatPropertiesChannel: a string-to-float dictionary either end can set.
    StatsAggregationMethod, StatsSideChannel: statistics the simulation reports.
    RawBytesChannel: opaque bytes on a channel id of your choice.
    SimulationSideChannels: the simulation's end, for in-process environments.
    SideChannelTypeError: a side-channel value of the wrong type.

The names, channel ids and wire format are those of ML-Agents' ``mlagents_envs.side_channel``,
byte for byte, so a channel written for ML-Agents works here by changing its imports, and the
same channel talks to a Unity build or to an in-process zooport environment.
"""

from __future__ import annotations

from ._common import (
    SideChannelCommunicationError,
    SideChannelEnvironmentError,
    SideChannelTypeError,
)
from .engine_configuration_channel import EngineConfig, EngineConfigurationChannel
from .environment_parameters_channel import EnvironmentParametersChannel
from .float_properties_channel import FloatPropertiesChannel
from .incoming_message import IncomingMessage
from .outgoing_message import OutgoingMessage
from .raw_bytes_channel import RawBytesChannel
from .side_channel import SideChannel
from .side_channel_manager import SideChannelManager
from .simulation_side import SimulationSideChannels
from .stats_side_channel import StatsAggregationMethod, StatsSideChannel

__all__ = [
    "IncomingMessage",
    "OutgoingMessage",
    "SideChannel",
    "SideChannelManager",
    "EngineConfig",
    "EngineConfigurationChannel",
    "EnvironmentParametersChannel",
    "FloatPropertiesChannel",
    "StatsAggregationMethod",
    "StatsSideChannel",
    "RawBytesChannel",
    "SimulationSideChannels",
    "SideChannelTypeError",
    "SideChannelCommunicationError",
    "SideChannelEnvironmentError",
]
