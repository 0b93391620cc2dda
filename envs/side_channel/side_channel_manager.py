"""Framing side-channel messages to and from the simulation.

Classes:
    SideChannelManager: splits incoming bytes into per-channel messages and frames outgoing ones.

The wire format is ML-Agents': a concatenation of frames, each a 16-byte channel id
(``uuid.UUID.bytes_le``, the byte order of C#'s ``Guid.ToByteArray``), a little-endian int32
payload length, and the payload.
"""

from __future__ import annotations

import struct
import uuid
import warnings
from collections.abc import Iterable

from ._common import SideChannelEnvironmentError, SideChannelTypeError
from .incoming_message import IncomingMessage
from .side_channel import SideChannel

__all__ = ["SideChannelManager"]

_LENGTH = struct.Struct("<i")
_ID_SIZE = 16
_HEADER_SIZE = _ID_SIZE + _LENGTH.size


def _parse_frames(data: bytes | bytearray | memoryview) -> list[tuple[uuid.UUID, bytes]]:
    """Split ``data`` into ``(channel_id, payload)`` pairs, checking every frame first."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise SideChannelTypeError(
            f"side-channel data: expected bytes, bytearray or memoryview, got {type(data).__name__}"
        )
    view = memoryview(data)
    if view.ndim != 1 or view.itemsize != 1 or not view.c_contiguous:
        view = memoryview(view.tobytes())
    total = len(view)
    frames: list[tuple[uuid.UUID, bytes]] = []
    offset = 0
    while offset < total:
        remaining = total - offset
        if remaining < _HEADER_SIZE:
            raise SideChannelEnvironmentError(
                f"side-channel frame at offset {offset}: truncated header, needs "
                f"{_HEADER_SIZE} bytes (16-byte channel id + int32 length), {remaining} remain "
                f"(data is {total} bytes)"
            )
        channel_id = uuid.UUID(bytes_le=bytes(view[offset : offset + _ID_SIZE]))
        (length,) = _LENGTH.unpack_from(view, offset + _ID_SIZE)
        if length < 0:
            raise SideChannelEnvironmentError(
                f"side-channel frame at offset {offset} for channel {channel_id}: "
                f"expected a payload length >= 0, got {length}"
            )
        start = offset + _HEADER_SIZE
        if length > total - start:
            raise SideChannelEnvironmentError(
                f"side-channel frame at offset {offset} for channel {channel_id}: declares a "
                f"{length}-byte payload, {total - start} bytes remain after its header "
                f"(data is {total} bytes)"
            )
        frames.append((channel_id, bytes(view[start : start + length])))
        offset = start + length
    return frames


def _append_frame(result: bytearray, channel_id: uuid.UUID, payload: bytes) -> None:
    """Append one framed message to ``result``."""
    result += channel_id.bytes_le
    result += _LENGTH.pack(len(payload))
    result += payload


class SideChannelManager:
    """Routes side-channel messages between a set of channels and the simulation.

    Incoming data is checked frame by frame before any channel sees it, so malformed data
    (a truncated header, a negative length, a payload running past the end) raises
    :class:`~zooport.errors.SideChannelError` naming the offset, and no channel receives half
    of it. A message for a channel id that is not registered is skipped with a warning, as
    ML-Agents logs one.

    Args:
        side_channels: the channels to route; their ids must be distinct. ``None`` for none.

    Example:
        >>> import uuid
        >>> from zooport.envs.side_channel import RawBytesChannel
        >>> channel = RawBytesChannel(uuid.UUID(int=1))
        >>> manager = SideChannelManager([channel])
        >>> channel.send_raw_data(b"ping")
        >>> data = manager.generate_side_channel_messages()
        >>> len(data)  # 16-byte channel id + int32 length + 4-byte payload
        24
        >>> channel.message_queue  # sent, so no longer queued
        []
        >>> manager.process_side_channel_message(data)  # as if the simulation echoed it
        >>> channel.get_and_clear_received_messages()
        [bytearray(b'ping')]
    """

    def __init__(self, side_channels: Iterable[SideChannel] | None = None) -> None:
        self._side_channels_dict = self._get_side_channels_dict(side_channels)

    def process_side_channel_message(self, data: bytes | bytearray | memoryview) -> None:
        """Deliver each framed message in ``data`` to its channel's ``on_message_received``.

        Args:
            data: the concatenated frames the simulation sent.

        Raises:
            SideChannelError: if ``data`` is not a well-formed sequence of frames; then no
                channel has received anything.
        """
        for channel_id, payload in _parse_frames(data):
            channel = self._side_channels_dict.get(channel_id)
            if channel is None:
                warnings.warn(
                    f"Unknown side channel data received: a {len(payload)}-byte message for "
                    f"channel id {channel_id}, which no registered side channel has "
                    f"(registered: {self._describe_channels()}). The message is ignored.",
                    stacklevel=2,
                )
                continue
            channel.on_message_received(IncomingMessage(payload))

    def generate_side_channel_messages(self) -> bytearray:
        """Frame every queued message of every channel, in registration order, and empty the
        queues.

        Returns:
            The bytes to send to the simulation (empty if nothing was queued).
        """
        result = bytearray()
        for channel_id, channel in self._side_channels_dict.items():
            if channel.message_queue:
                for payload in channel.message_queue:
                    _append_frame(result, channel_id, payload)
                channel.message_queue = []
        return result

    @staticmethod
    def _get_side_channels_dict(
        side_channels: Iterable[SideChannel] | None,
    ) -> dict[uuid.UUID, SideChannel]:
        """Map channel id to channel, rejecting non-channels and duplicate ids."""
        if side_channels is None:
            return {}
        if isinstance(side_channels, (SideChannel, str, bytes)) or not isinstance(
            side_channels, Iterable
        ):
            raise SideChannelTypeError(
                f"side_channels: expected a list of side channels or None, "
                f"got {type(side_channels).__name__}"
            )
        channels: dict[uuid.UUID, SideChannel] = {}
        for index, channel in enumerate(side_channels):
            # Duck-typed, so a channel written against mlagents_envs' base class works too.
            channel_id = getattr(channel, "channel_id", None)
            if (
                not isinstance(channel_id, uuid.UUID)
                or not callable(getattr(channel, "on_message_received", None))
                or not isinstance(getattr(channel, "message_queue", None), list)
            ):
                raise SideChannelTypeError(
                    f"side_channels[{index}]: expected a SideChannel (a uuid.UUID channel_id, "
                    f"a message_queue list and an on_message_received method), "
                    f"got {type(channel).__name__}"
                )
            if channel_id in channels:
                raise SideChannelEnvironmentError(
                    f"side_channels[{index}]: {type(channel).__name__} has channel id "
                    f"{channel_id}, already used by {type(channels[channel_id]).__name__}; "
                    f"each channel id may be registered once"
                )
            channels[channel_id] = channel
        return channels

    def _describe_channels(self) -> str:
        if not self._side_channels_dict:
            return "none"
        return ", ".join(
            f"{type(channel).__name__} {channel_id}"
            for channel_id, channel in self._side_channels_dict.items()
        )
