"""Float properties either end can set: each message a string key then a float32 value."""

from __future__ import annotations

import uuid

from .side_channel import IncomingMessage, SideChannel, key_message, wrong_type

__all__ = ["FLOAT_PROPERTIES_CHANNEL_ID", "FloatPropertiesChannel"]

FLOAT_PROPERTIES_CHANNEL_ID = uuid.UUID("60ccf7d0-4f7e-11ea-b238-784f4387d1f7")


class FloatPropertiesChannel(SideChannel):
    """Float properties kept in step with the simulation (``channel_id`` None: ML-Agents')."""

    def __init__(self, channel_id: uuid.UUID | None = None) -> None:
        super().__init__(FLOAT_PROPERTIES_CHANNEL_ID if channel_id is None else channel_id)
        self._float_properties: dict[str, float] = {}

    def on_message_received(self, msg: IncomingMessage) -> None:
        key = msg.read_string()
        self._float_properties[key] = msg.read_float32()

    def set_property(self, key: str, value: float) -> None:
        """Set property ``key`` locally, as given, and send it as float32."""
        self.queue_message_to_send(key_message("set_property", key, "f", value))
        self._float_properties[key] = float(value)

    def get_property(self, key: str) -> float | None:
        """Property ``key``, or ``None`` if neither end has set it."""
        if not isinstance(key, str):
            raise wrong_type("get_property key", "a str", key)
        return self._float_properties.get(key)

    def list_properties(self) -> list[str]:
        return list(self._float_properties)

    def get_property_dict_copy(self) -> dict[str, float]:
        return dict(self._float_properties)
