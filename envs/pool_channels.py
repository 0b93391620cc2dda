"""The side channels of a :class:`~zooport.envs.core_pool.CorePool`. A channel given to the pool
reaches every core (what it queues goes to each, what any core sends reaches it); one in
``core_side_channels[i]`` talks to core ``i`` only. Each core gets a relay channel per id that
forwards the raw bytes, so any channel works unchanged.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence

from zooport.envs.side_channel.incoming_message import IncomingMessage
from zooport.envs.side_channel.side_channel import SideChannel
from zooport.envs.side_channel.side_channel_manager import SideChannelManager, _parse_frames
from zooport.errors import ArgumentError

__all__ = ["PoolChannels"]


class PoolChannels:
    """The side channels of a pool of ``k`` cores, and what is queued for each core."""

    def __init__(
        self,
        side_channels: Sequence[SideChannel] | None,
        core_side_channels: Sequence[Sequence[SideChannel] | None] | None,
        k: int,
    ) -> None:
        as_dict = SideChannelManager._get_side_channels_dict
        shared = as_dict(side_channels)
        if core_side_channels is not None and (
            isinstance(core_side_channels, (str, bytes)) or len(core_side_channels) != k
        ):
            raise ArgumentError(
                f"Expect core_side_channels to be one list (or None) per core, {k} in all, "
                f"actually: {core_side_channels!r}"
            )
        per_core: list[dict[uuid.UUID, SideChannel]] = [
            as_dict(c) for c in (core_side_channels or [None] * k)
        ]
        self.shared = list(shared.values())
        self.own = [list(own.values()) for own in per_core]
        self.relay_ids = [list({**own, **shared}) for own in per_core]  # each core's relays
        self.any = bool(shared) or any(per_core)
        self._managers = [SideChannelManager(self.shared)] + [
            SideChannelManager(c) for c in self.own
        ]
        # What core i sends on an id goes to its own channel and to the pool's, if any.
        self._receivers = [
            {cid: [c for c in (own.get(cid), shared.get(cid)) if c is not None] for cid in ids}
            for own, ids in zip(per_core, self.relay_ids, strict=True)
        ]
        self._pending = [bytearray() for _ in range(k)]

    def gather(self) -> bool:
        """Adds what the pool's and each core's channels queued to each core's outbox; False
        when the pool has no channels."""
        if self.any:
            shared = self._managers[0].generate_side_channel_messages()
            for pending, manager in zip(self._pending, self._managers[1:], strict=True):
                pending += shared + manager.generate_side_channel_messages()
        return self.any

    def take(self, index: int) -> bytes:
        """Core ``index``'s outbox, emptied: the bytes to send with its next command."""
        data = bytes(self._pending[index])
        self._pending[index].clear()
        return data

    def deliver(self, incoming: Iterable[tuple[int, bytes]]) -> None:
        """Hands what each core sent (``(index, bytes)``) to the channels; every message is
        delivered, then the first error a channel raised is raised."""
        error: BaseException | None = None
        for index, data in incoming:
            for channel_id, payload in _parse_frames(data) if data else ():
                for channel in self._receivers[index][channel_id]:
                    try:
                        channel.on_message_received(IncomingMessage(payload))
                    except Exception as exc:
                        error = error or exc
        if error is not None:
            raise error
