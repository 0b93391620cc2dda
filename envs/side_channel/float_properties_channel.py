"""Float properties either end can set: each message a string key then a float32 value."""

from __future__ import annotations

import uuid

from ._common import SideChannelTypeError, check_float32, encode_ascii, override
from .incoming_message import IncomingMessage
from .outgoing_message import OutgoingMessage
from .side_channel import SideChannel

__all__ = ["FLOAT_PROPERTIES_CHANNEL_ID", "FloatPropertiesChannel"]

#: The default channel id of ML-Agents' float properties channel, on both ends.
FLOAT_PROPERTIES_CHANNEL_ID = uuid.UUID("60ccf7d0-4f7e-11ea-b238-784f4387d1f7")


class FloatPropertiesChannel(SideChannel):
    """A dictionary of float properties kept in step with the simulation: :meth:`set_property`
    updates the local copy and sends the pair, a pair the simulation sends updates it on
    arrival. ``channel_id``: ``None`` for ML-Agents' default.

    Example:
        >>> channel = FloatPropertiesChannel()
        >>> channel.set_property("gravity", -9.81)
        >>> channel.get_property("gravity")
        -9.81
        >>> channel.list_properties()
        ['gravity']
        >>> channel.get_property("wind") is None
        True
    """

    def __init__(self, channel_id: uuid.UUID | None = None) -> None:
        super().__init__(FLOAT_PROPERTIES_CHANNEL_ID if channel_id is None else channel_id)
        self._float_properties: dict[str, float] = {}

    @override
    def on_message_received(self, msg: IncomingMessage) -> None:
        """Store the ``(key, value)`` pair the simulation sent."""
        key = msg.read_string()
        value = msg.read_float32()
        self._float_properties[key] = value

    def set_property(self, key: str, value: float) -> None:
        """Set property ``key`` (ASCII) locally, as given, and send it as float32."""
        encode_ascii(key, "set_property key")
        number = check_float32(value, "set_property value")
        msg = OutgoingMessage()
        msg.write_string(key)
        msg.write_float32(number)
        self.queue_message_to_send(msg)
        self._float_properties[key] = number

    def get_property(self, key: str) -> float | None:
        """Return property ``key``, or ``None`` if neither end has set it."""
        if not isinstance(key, str):
            raise SideChannelTypeError(
                f"get_property key: expected a str, got {type(key).__name__} {key!r}"
            )
        return self._float_properties.get(key)

    def list_properties(self) -> list[str]:
        """Return the names of all properties set so far, by either end."""
        return list(self._float_properties)

    def get_property_dict_copy(self) -> dict[str, float]:
        """Return a copy of all properties set so far."""
        return dict(self._float_properties)
