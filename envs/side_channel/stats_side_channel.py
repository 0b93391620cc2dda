"""Statistics the simulation reports: a string key, a float32 value, an int32 aggregation."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Mapping
from enum import Enum

from .side_channel import IncomingMessage, SideChannel, known_code

__all__ = [
    "STATS_SIDE_CHANNEL_ID", "StatsAggregationMethod", "StatList", "EnvironmentStats",
    "StatsSideChannel",
]  # fmt: skip

# uuid.uuid5(uuid.NAMESPACE_URL, "com.unity.ml-agents/StatsSideChannel"), as on both ends.
STATS_SIDE_CHANNEL_ID = uuid.UUID("a1d8f7b7-cec8-50f9-b78b-d3e165a78520")


class StatsAggregationMethod(Enum):
    """How a summary period combines one key's values."""

    AVERAGE = 0
    MOST_RECENT = 1
    SUM = 2
    HISTOGRAM = 3


StatList = list[tuple[float, StatsAggregationMethod]]
EnvironmentStats = Mapping[str, StatList]


class StatsSideChannel(SideChannel):
    """Collects ``(value, aggregation)`` pairs per key as the simulation sends them."""

    def __init__(self) -> None:
        super().__init__(STATS_SIDE_CHANNEL_ID)
        self.stats: defaultdict[str, StatList] = defaultdict(list)

    def on_message_received(self, msg: IncomingMessage) -> None:
        key = msg.read_string()
        value = msg.read_float32()
        # A simulation too old to send the aggregation means AVERAGE, as in ML-Agents.
        code = msg.read_int32(default_value=StatsAggregationMethod.AVERAGE.value)
        what = f"StatsSideChannel: statistic {key!r} has aggregation code"
        aggregation = known_code(what, StatsAggregationMethod, code)  # before the key exists
        self.stats[key].append((value, aggregation))

    def get_and_reset_stats(self) -> EnvironmentStats:
        """The ``(value, aggregation)`` pairs received per key since the last call, in order."""
        stats, self.stats = dict(self.stats), defaultdict(list)
        return stats
