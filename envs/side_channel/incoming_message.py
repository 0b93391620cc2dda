"""ML-Agents' module path of :class:`IncomingMessage`, which lives in ``side_channel``."""

from zooport.envs.side_channel.side_channel import IncomingMessage as IncomingMessage
