"""Setting the simulation engine's resolution, quality, time scale and frame rates.

Classes:
    EngineConfig: the six engine settings, each optional.
    EngineConfigurationChannel: sends engine settings to the simulation (send-only).

Each setting travels as its own message: an int32 ``ConfigurationType`` code, then the value
(``SCREEN_RESOLUTION``: int32 width, int32 height; ``TIME_SCALE``: float32; the others: int32).
"""

from __future__ import annotations

import uuid
from enum import IntEnum
from typing import NamedTuple

from zooport.errors import SideChannelError

from ._common import SideChannelTypeError, check_float32, check_int32
from .outgoing_message import OutgoingMessage
from .side_channel import SendOnlySideChannel

__all__ = ["ENGINE_CONFIGURATION_CHANNEL_ID", "EngineConfig", "EngineConfigurationChannel"]

#: The channel id of ML-Agents' engine configuration channel, on both ends.
ENGINE_CONFIGURATION_CHANNEL_ID = uuid.UUID("e951342c-4f7e-11ea-b238-784f4387d1f7")


class EngineConfig(NamedTuple):
    """Engine settings; ``None`` leaves a setting unchanged.

    Attributes:
        width: screen width in pixels (set together with ``height``).
        height: screen height in pixels (set together with ``width``).
        quality_level: the engine's quality level index.
        time_scale: how much faster than real time simulated time runs.
        target_frame_rate: the frame rate to aim for; -1 for the platform default.
        capture_frame_rate: treat frames as this far apart, whatever the real frame rate.
    """

    width: int | None
    height: int | None
    quality_level: int | None
    time_scale: float | None
    target_frame_rate: int | None
    capture_frame_rate: int | None

    @staticmethod
    def default_config() -> EngineConfig:
        """ML-Agents' defaults: 80x80, quality 1, time scale 20, frame rate -1, capture 60."""
        return EngineConfig(80, 80, 1, 20.0, -1, 60)


class EngineConfigurationChannel(SendOnlySideChannel):
    """Sends engine settings to the simulation.

    Python never receives on this channel; a message from the simulation raises
    :class:`~zooport.errors.SideChannelError`.

    Example:
        >>> channel = EngineConfigurationChannel()
        >>> channel.set_configuration_parameters(time_scale=20.0)
        >>> channel.message_queue  # TIME_SCALE (2) then 20.0 as float32
        [b'\\x02\\x00\\x00\\x00\\x00\\x00\\xa0A']
    """

    class ConfigurationType(IntEnum):
        """The int32 code that opens each engine configuration message."""

        SCREEN_RESOLUTION = 0
        QUALITY_LEVEL = 1
        TIME_SCALE = 2
        TARGET_FRAME_RATE = 3
        CAPTURE_FRAME_RATE = 4

    def __init__(self) -> None:
        super().__init__(ENGINE_CONFIGURATION_CHANNEL_ID)

    def set_configuration_parameters(
        self,
        width: int | None = None,
        height: int | None = None,
        quality_level: int | None = None,
        time_scale: float | None = None,
        target_frame_rate: int | None = None,
        capture_frame_rate: int | None = None,
    ) -> None:
        """Queue one message per setting that is not ``None``.

        Args:
            width: screen width; must be given together with ``height``.
            height: screen height; must be given together with ``width``.
            quality_level: the engine's quality level index.
            time_scale: simulated time per real time; Unity clamps it to at least 1.
            target_frame_rate: the frame rate to aim for; -1 for the platform default.
            capture_frame_rate: treat frames as this far apart, whatever the real frame rate.

        Raises:
            SideChannelError: if only one of ``width`` and ``height`` is given, or a value does
                not fit its wire type. Nothing is queued then.
        """
        if (width is None) != (height is None):
            raise SideChannelError(
                f"set_configuration_parameters: expected width and height both set or both "
                f"None, got width={width!r}, height={height!r}"
            )
        # Check every value first so that a bad one queues nothing and is named in the error.
        ints = {
            "width": width,
            "height": height,
            "quality_level": quality_level,
            "target_frame_rate": target_frame_rate,
            "capture_frame_rate": capture_frame_rate,
        }
        for name, value in ints.items():
            if value is not None:
                check_int32(value, f"set_configuration_parameters {name}")
        if time_scale is not None:
            check_float32(time_scale, "set_configuration_parameters time_scale")

        kind = self.ConfigurationType
        messages = []
        if width is not None and height is not None:
            messages.append(_message(kind.SCREEN_RESOLUTION, width, height))
        if quality_level is not None:
            messages.append(_message(kind.QUALITY_LEVEL, quality_level))
        if time_scale is not None:
            msg = OutgoingMessage()
            msg.write_int32(kind.TIME_SCALE)
            msg.write_float32(time_scale)
            messages.append(msg)
        if target_frame_rate is not None:
            messages.append(_message(kind.TARGET_FRAME_RATE, target_frame_rate))
        if capture_frame_rate is not None:
            messages.append(_message(kind.CAPTURE_FRAME_RATE, capture_frame_rate))
        for msg in messages:
            self.queue_message_to_send(msg)

    def set_configuration(self, config: EngineConfig) -> None:
        """Queue the settings of ``config`` (see :meth:`set_configuration_parameters`)."""
        if not isinstance(config, EngineConfig):
            raise SideChannelTypeError(
                f"set_configuration: expected an EngineConfig, got {type(config).__name__}"
            )
        self.set_configuration_parameters(**config._asdict())


def _message(kind: int, *values: int) -> OutgoingMessage:
    msg = OutgoingMessage()
    msg.write_int32(kind)
    for value in values:
        msg.write_int32(value)
    return msg
