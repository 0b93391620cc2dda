"""ML-Agents' side-channel wire format, written out by hand for the side-channel tests.

Expected bytes are built with ``struct.pack`` from ML-Agents' layout (little-endian), never
with zooport's own code.

Constants:
    ENGINE_ID, PARAMS_ID, PROPS_ID, STATS_ID: the channel ids of ML-Agents' engine
        configuration, environment parameters, float properties and stats channels.

Functions:
    string: a string as a message carries it (int32 length, ASCII bytes).
    frame: one frame as Unity's SideChannelManager writes it (``uuid.bytes_le``, int32
        length, payload).
"""

from __future__ import annotations

import struct
import uuid

__all__ = ["ENGINE_ID", "PARAMS_ID", "PROPS_ID", "STATS_ID", "frame", "string"]

ENGINE_ID = uuid.UUID("e951342c-4f7e-11ea-b238-784f4387d1f7")
PARAMS_ID = uuid.UUID("534c891e-810f-11ea-a9d0-822485860400")
PROPS_ID = uuid.UUID("60ccf7d0-4f7e-11ea-b238-784f4387d1f7")
STATS_ID = uuid.UUID("a1d8f7b7-cec8-50f9-b78b-d3e165a78520")


def string(s: str) -> bytes:
    """``s`` as a message carries it: its length (int32) and its ASCII bytes."""
    return struct.pack(f"<i{len(s)}s", len(s), s.encode("ascii"))


def frame(channel_id: uuid.UUID, payload: bytes) -> bytes:
    """One frame: the channel id (``uuid.bytes_le``), the payload's length, the payload."""
    return channel_id.bytes_le + struct.pack("<i", len(payload)) + payload
