"""ML-Agents' module path of :class:`OutgoingMessage`, which lives in ``side_channel``."""

from zooport.envs.side_channel.side_channel import OutgoingMessage as OutgoingMessage
