"""ML-Agents' side-channel frames: a 16-byte ``UUID.bytes_le`` id, an int32 length, the payload."""

from __future__ import annotations

import struct
import uuid
import warnings
from collections.abc import Iterable

from .side_channel import (
    IncomingMessage,
    SideChannel,
    SideChannelEnvironmentError,
    check_bytes,
    wrong_type,
)

__all__ = ["SideChannelManager"]

_LENGTH = struct.Struct("<i")
_HEADER_SIZE = 16 + _LENGTH.size


def _parse_frames(data: bytes | bytearray | memoryview) -> list[tuple[uuid.UUID, bytes]]:
    """``(channel_id, payload)`` of every frame in ``data``, all checked before any is used."""
    data = check_bytes(data, "side-channel data")  # also makes any memoryview readable
    total, offset = len(data), 0
    frames: list[tuple[uuid.UUID, bytes]] = []
    while offset < total:
        where = f"side-channel frame at offset {offset}"
        if total - offset < _HEADER_SIZE:
            raise SideChannelEnvironmentError(
                f"{where}: truncated header, needs {_HEADER_SIZE} bytes (16-byte channel id + "
                f"int32 length), {total - offset} remain (data is {total} bytes)"
            )
        channel_id = uuid.UUID(bytes_le=data[offset : offset + 16])
        (length,) = _LENGTH.unpack_from(data, offset + 16)
        start = offset + _HEADER_SIZE
        if length < 0:
            raise SideChannelEnvironmentError(
                f"{where} for channel {channel_id}: expected a payload length >= 0, got {length}"
            )
        if length > total - start:
            raise SideChannelEnvironmentError(
                f"{where} for channel {channel_id}: declares a {length}-byte payload, "
                f"{total - start} bytes remain after its header (data is {total} bytes)"
            )
        frames.append((channel_id, data[start : start + length]))
        offset = start + length
    return frames


def _append_frame(result: bytearray, channel_id: uuid.UUID, payload: bytes | bytearray) -> None:
    result += channel_id.bytes_le + _LENGTH.pack(len(payload)) + payload


class SideChannelManager:
    """Routes messages between the simulation and channels (duck-typed: ``mlagents_envs``' too)."""

    def __init__(self, side_channels: Iterable[SideChannel] | None = None) -> None:
        self._side_channels_dict = self._get_side_channels_dict(side_channels)

    def process_side_channel_message(self, data: bytes | bytearray | memoryview) -> None:
        """Deliver each frame of ``data`` (all checked first) to its channel."""
        for channel_id, payload in _parse_frames(data):
            channel = self._side_channels_dict.get(channel_id)
            if channel is not None:
                channel.on_message_received(IncomingMessage(payload))
                continue
            registered = ", ".join(
                f"{type(c).__name__} {i}" for i, c in self._side_channels_dict.items()
            )
            warnings.warn(
                f"Unknown side channel data received: a {len(payload)}-byte message for "
                f"channel id {channel_id}, which no registered side channel has "
                f"(registered: {registered or 'none'}). The message is ignored.",
                stacklevel=2,
            )

    def generate_side_channel_messages(self) -> bytearray:
        """Frame and dequeue every queued message, channel by channel in registration order."""
        result = bytearray()
        for channel_id, channel in self._side_channels_dict.items():
            for payload in channel.message_queue:
                _append_frame(result, channel_id, payload)
            if channel.message_queue:
                channel.message_queue = []
        return result

    @staticmethod
    def _get_side_channels_dict(
        side_channels: Iterable[SideChannel] | None,
    ) -> dict[uuid.UUID, SideChannel]:
        if side_channels is None:
            return {}
        if isinstance(side_channels, (str, bytes)) or not isinstance(side_channels, Iterable):
            expected = "a list of side channels or None"
            raise wrong_type("side_channels", expected, side_channels, show=False)
        channels: dict[uuid.UUID, SideChannel] = {}
        for index, channel in enumerate(side_channels):
            channel_id = getattr(channel, "channel_id", None)
            if (
                not isinstance(channel_id, uuid.UUID)
                or not callable(getattr(channel, "on_message_received", None))
                or not isinstance(getattr(channel, "message_queue", None), list)
            ):
                expected = (
                    "a SideChannel (a uuid.UUID channel_id, a message_queue list and an "
                    "on_message_received method)"
                )
                raise wrong_type(f"side_channels[{index}]", expected, channel, show=False)
            if channel_id in channels:
                raise SideChannelEnvironmentError(
                    f"side_channels[{index}]: {type(channel).__name__} has channel id "
                    f"{channel_id}, already used by {type(channels[channel_id]).__name__}; "
                    f"each channel id may be registered once"
                )
            channels[channel_id] = channel
        return channels
