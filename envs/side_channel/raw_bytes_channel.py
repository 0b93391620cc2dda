"""Opaque bytes exchanged with the simulation on a channel id of your choice."""

from __future__ import annotations

import uuid

from .side_channel import IncomingMessage, OutgoingMessage, SideChannel

__all__ = ["RawBytesChannel"]


class RawBytesChannel(SideChannel):
    """Sends and receives whole messages as raw bytes, on the channel id both ends agree on."""

    def __init__(self, channel_id: uuid.UUID) -> None:
        super().__init__(channel_id)
        self._received_messages: list[bytearray] = []

    def on_message_received(self, msg: IncomingMessage) -> None:
        self._received_messages.append(msg.get_raw_bytes())

    def get_and_clear_received_messages(self) -> list[bytearray]:
        """The messages received since the last call, oldest first."""
        received, self._received_messages = self._received_messages, []
        return received

    def send_raw_data(self, data: bytes | bytearray | memoryview) -> None:
        """Queue a copy of ``data`` as one message."""
        msg = OutgoingMessage()
        msg.set_raw_bytes(data)
        self.queue_message_to_send(msg)
