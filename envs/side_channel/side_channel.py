"""The base class of every side channel, and of the channels that only send."""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod

from ._common import SideChannelCommunicationError, SideChannelTypeError, override
from .incoming_message import IncomingMessage
from .outgoing_message import OutgoingMessage

__all__ = ["SideChannel", "SendOnlySideChannel"]


class SideChannel(ABC):
    """A message stream between Python and the simulation, addressed by a UUID (the one the
    simulation's end uses). As in ML-Agents, subclasses queue messages with
    :meth:`queue_message_to_send` and receive them in :meth:`on_message_received`; a
    ``SideChannelManager`` sends the queue, and empties it, at the next reset or step.

    Example:
        >>> class EchoChannel(SideChannel):
        ...     def on_message_received(self, msg):
        ...         print(msg.read_string())
        >>> channel = EchoChannel(uuid.UUID(int=1))
        >>> msg = OutgoingMessage()
        >>> msg.write_string("hi")
        >>> channel.queue_message_to_send(msg)
        >>> channel.message_queue
        [b'\\x02\\x00\\x00\\x00hi']
    """

    def __init__(self, channel_id: uuid.UUID) -> None:
        if not isinstance(channel_id, uuid.UUID):
            raise SideChannelTypeError(
                f"{type(self).__name__} channel_id: expected a uuid.UUID, "
                f"got {type(channel_id).__name__} {channel_id!r}"
            )
        self._channel_id = channel_id
        self.message_queue: list[bytes] = []  # payloads waiting to be sent, oldest first

    @property
    def channel_id(self) -> uuid.UUID:
        """The UUID both ends of the channel address its messages with."""
        return self._channel_id

    def queue_message_to_send(self, msg: OutgoingMessage) -> None:
        """Queue a copy of ``msg``'s bytes to be sent at the next reset or step."""
        if not isinstance(msg, OutgoingMessage):
            raise SideChannelTypeError(
                f"{type(self).__name__}.queue_message_to_send: expected an OutgoingMessage, "
                f"got {type(msg).__name__}"
            )
        self.message_queue.append(msg.buffer)

    @abstractmethod
    def on_message_received(self, msg: IncomingMessage) -> None:
        """Handle one message from the simulation; may be called several times per step."""


class SendOnlySideChannel(SideChannel):
    """A channel whose messages only go to the simulation: one received is an error."""

    @override
    def on_message_received(self, msg: IncomingMessage) -> None:
        raise SideChannelCommunicationError(
            f"{type(self).__name__} received a {len(msg.buffer)}-byte message from the "
            f"simulation; this channel only sends"
        )
