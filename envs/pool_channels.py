"""The side channels of a :class:`~zooport.envs.core_pool.CorePool`. A channel given to the pool
reaches every core (what it queues goes to each, what any core sends reaches it); one in
``core_side_channels[i]`` talks to core ``i`` only. Each core is built with one relay channel
per channel id (:class:`~zooport.envs.pool_worker.RelayChannel`) that forwards the raw bytes,
so any channel works unchanged.
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
    """The side channels of a pool of ``k`` cores, and what is queued for each core.

    Example:
        >>> from zooport.envs.side_channel import EnvironmentParametersChannel
        >>> shared = EnvironmentParametersChannel()
        >>> channels = PoolChannels([shared], None, 2)
        >>> channels.relay_ids[1] == [shared.channel_id]
        True
        >>> shared.set_float_parameter("gravity", 9.0)
        >>> channels.gather()
        >>> channels.take(0) == channels.take(1) != b""  # the same bytes for each core
        True
        >>> channels.take(0)  # taken once
        b''
    """

    def __init__(
        self,
        side_channels: Sequence[SideChannel] | None,
        core_side_channels: Sequence[Sequence[SideChannel] | None] | None,
        k: int,
    ) -> None:
        shared = SideChannelManager._get_side_channels_dict(side_channels)
        if core_side_channels is None:
            per_core: list[dict[uuid.UUID, SideChannel]] = [{} for _ in range(k)]
        else:
            if isinstance(core_side_channels, (str, bytes)) or len(core_side_channels) != k:
                raise ArgumentError(
                    f"Expect core_side_channels to be one list (or None) per core, {k} in all, "
                    f"actually: {core_side_channels!r}"
                )
            per_core = [SideChannelManager._get_side_channels_dict(c) for c in core_side_channels]
        self.shared = list(shared.values())
        self.own = [list(own.values()) for own in per_core]
        # The ids each core gets a relay for (the pool's and its own).
        self.relay_ids = [list({**own, **shared}) for own in per_core]
        self.any = bool(shared) or any(per_core)
        self._shared_manager = SideChannelManager(self.shared)
        self._core_managers = [SideChannelManager(c) for c in self.own]
        # What core i sends on an id goes to its own channel and to the pool's, if any.
        self._receivers = [
            {cid: [c for c in (own.get(cid), shared.get(cid)) if c is not None]
             for cid in {**own, **shared}}
            for own in per_core
        ]  # fmt: skip
        self._pending = [bytearray() for _ in range(k)]

    def gather(self) -> None:
        """Adds what the pool's and each core's channels queued to each core's outbox."""
        if not self.any:
            return
        shared = self._shared_manager.generate_side_channel_messages()
        for pending, manager in zip(self._pending, self._core_managers, strict=True):
            pending += shared
            pending += manager.generate_side_channel_messages()

    def take(self, index: int) -> bytes:
        """Core ``index``'s outbox, emptied: the bytes to send with its next command."""
        pending = self._pending[index]
        if not pending:
            return b""
        data = bytes(pending)
        pending.clear()
        return data

    def deliver(self, incoming: Iterable[tuple[int, bytes]]) -> None:
        """Hands what each core sent (``(index, bytes)``) to the channels; every message is
        delivered, then the first error a channel raised is raised."""
        error: BaseException | None = None
        for index, data in incoming:
            if not data:
                continue
            receivers = self._receivers[index]
            for channel_id, payload in _parse_frames(data):
                for channel in receivers[channel_id]:
                    try:
                        channel.on_message_received(IncomingMessage(payload))
                    except Exception as exc:
                        error = error or exc
        if error is not None:
            raise error
