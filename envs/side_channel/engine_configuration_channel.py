"""The engine's resolution, quality, time scale and frame rates: a code, then the values."""

from __future__ import annotations

import struct
import uuid
from enum import IntEnum
from typing import NamedTuple

from zooport.errors import SideChannelError

from .side_channel import SendOnlySideChannel, check_float32, check_int32, wrong_type

__all__ = ["ENGINE_CONFIGURATION_CHANNEL_ID", "EngineConfig", "EngineConfigurationChannel"]

ENGINE_CONFIGURATION_CHANNEL_ID = uuid.UUID("e951342c-4f7e-11ea-b238-784f4387d1f7")
#: The ``EngineConfig`` fields each ``ConfigurationType`` code carries, read by both ends.
ENGINE_SETTINGS: dict[int, tuple[str, ...]] = {
    0: ("width", "height"),
    1: ("quality_level",),
    2: ("time_scale",),
    3: ("target_frame_rate",),
    4: ("capture_frame_rate",),
}


class EngineConfig(NamedTuple):
    """Engine settings (``None`` leaves one unchanged); ``width`` and ``height`` go together."""

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
    """Sends engine settings to the simulation."""

    class ConfigurationType(IntEnum):
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
        """Queue one message per setting that is not ``None`` (nothing if any is wrong)."""
        if (width is None) != (height is None):
            raise SideChannelError(
                f"set_configuration_parameters: expected width and height both set or both "
                f"None, got width={width!r}, height={height!r}"
            )
        values = EngineConfig(
            width, height, quality_level, time_scale, target_frame_rate, capture_frame_rate
        )._asdict()
        messages = []  # every value is checked before anything is queued
        for code, names in ENGINE_SETTINGS.items():
            if values[names[0]] is None:
                continue
            as_float = code == self.ConfigurationType.TIME_SCALE
            check, kind = (check_float32, "f") if as_float else (check_int32, "i")
            checked = [check(values[n], f"set_configuration_parameters {n}") for n in names]
            messages.append(struct.pack(f"<i{len(names)}{kind}", code, *checked))
        self.message_queue += messages

    def set_configuration(self, config: EngineConfig) -> None:
        """Queue the settings of ``config``."""
        if not isinstance(config, EngineConfig):
            raise wrong_type("set_configuration", "an EngineConfig", config, show=False)
        self.set_configuration_parameters(**config._asdict())
