"""The base class of every side channel.

Classes:
    SideChannel: a UUID-addressed, two-way message stream between Python and the simulation.
    SendOnlySideChannel: a side channel that only sends (engine configuration, environment
        parameters): a message from the simulation is an error.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod

from ._common import SideChannelCommunicationError, SideChannelTypeError, override
from .incoming_message import IncomingMessage
from .outgoing_message import OutgoingMessage

__all__ = ["SideChannel", "SendOnlySideChannel"]


class SideChannel(ABC):
    """A message stream between Python and the simulation, addressed by a UUID.

    Subclasses queue outgoing messages with :meth:`queue_message_to_send` and receive
    incoming ones in :meth:`on_message_received`. A
    :class:`~zooport.envs.side_channel.SideChannelManager` sends the queue at the next reset
    or step and empties it. The API is ML-Agents', so a custom channel ports by changing its
    imports; the UUID must match the one the simulation's end of the channel uses.

    Args:
        channel_id: the channel's identifier.

    Attributes:
        message_queue: payloads waiting to be sent, oldest first.

    Example:
        >>> import uuid
        >>> class EchoChannel(SideChannel):
        ...     def __init__(self):
        ...         super().__init__(uuid.UUID("b3d5c9a0-0000-4000-8000-000000000001"))
        ...         self.received = []
        ...     def on_message_received(self, msg):
        ...         self.received.append(msg.read_string())
        >>> channel = EchoChannel()
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
        self.message_queue: list[bytes] = []

    @property
    def channel_id(self) -> uuid.UUID:
        """The UUID both ends of the channel use to address its messages."""
        return self._channel_id

    def queue_message_to_send(self, msg: OutgoingMessage) -> None:
        """Queue ``msg`` to be sent at the next reset or step.

        The message's bytes are copied, so writing to ``msg`` afterwards does not change what
        is sent.
        """
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
    """A side channel whose messages only flow from Python to the simulation.

    Subclasses queue messages; one received from the simulation raises
    :class:`~zooport.errors.SideChannelError` naming the channel (ML-Agents' send-only
    channels would misread it).
    """

    @override
    def on_message_received(self, msg: IncomingMessage) -> None:
        """Raise: this channel only sends."""
        raise SideChannelCommunicationError(
            f"{type(self).__name__} received a {len(msg.buffer)}-byte message from the "
            f"simulation; this channel only sends"
        )
