"""Environment parameters: a string key, then a float32 value or a seeded sampler's arguments."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable, Mapping, Sequence
from enum import IntEnum

from zooport.errors import SideChannelError

from .side_channel import (
    SendOnlySideChannel,
    SideChannelTypeError,
    check_float32,
    check_int32,
    key_message,
    wrong_type,
)

__all__ = ["ENVIRONMENT_PARAMETERS_CHANNEL_ID", "EnvironmentParametersChannel"]

ENVIRONMENT_PARAMETERS_CHANNEL_ID = uuid.UUID("534c891e-810f-11ea-a9d0-822485860400")


class EnvironmentParametersChannel(SendOnlySideChannel):
    """Sends parameters the simulation reads at reset: a float, or a seeded sampler to draw."""

    class EnvironmentDataTypes(IntEnum):
        FLOAT = 0
        SAMPLER = 1

    class SamplerTypes(IntEnum):
        UNIFORM = 0
        GAUSSIAN = 1
        MULTIRANGEUNIFORM = 2

    def __init__(self) -> None:
        super().__init__(ENVIRONMENT_PARAMETERS_CHANNEL_ID)

    def set_float_parameter(self, key: str, value: float) -> None:
        """Set parameter ``key`` (ASCII) to ``value`` (sent as float32)."""
        float_type = self.EnvironmentDataTypes.FLOAT
        self.queue_message_to_send(key_message("set_float_parameter", key, "if", float_type, value))

    def set_uniform_sampler_parameters(
        self, key: str, min_value: float, max_value: float, seed: int
    ) -> None:
        """Make ``key`` a seeded uniform sample of ``[min_value, max_value)``."""
        values = {"min_value": min_value, "max_value": max_value}
        self._send_sampler(key, seed, self.SamplerTypes.UNIFORM, values)

    def set_gaussian_sampler_parameters(
        self, key: str, mean: float, st_dev: float, seed: int
    ) -> None:
        """Make ``key`` a seeded sample of a normal distribution."""
        values = {"mean": mean, "st_dev": st_dev}
        self._send_sampler(key, seed, self.SamplerTypes.GAUSSIAN, values)

    def set_multirangeuniform_sampler_parameters(
        self, key: str, intervals: Iterable[tuple[float, float]], seed: int
    ) -> None:
        """Make ``key`` a seeded uniform sample of a union of ``(min, max)`` intervals."""
        where = "set_multirangeuniform_sampler_parameters"
        if isinstance(intervals, (str, bytes)) or not isinstance(intervals, Iterable):
            expected = "an iterable of (min, max) pairs"
            raise wrong_type(f"{where} intervals", expected, intervals, show=False)
        values: dict[str, object] = {}
        for index, interval in enumerate(intervals):
            try:
                values[f"intervals[{index}] min"], values[f"intervals[{index}] max"] = interval
            except (TypeError, ValueError):
                raise SideChannelTypeError(
                    f"{where} intervals[{index}]: expected a (min, max) pair, got {interval!r}"
                ) from None
        self._send_sampler(key, seed, self.SamplerTypes.MULTIRANGEUNIFORM, values)

    def _send_sampler(
        self, key: str, seed: int, sampler: SamplerTypes, named: Mapping[str, object]
    ) -> None:
        where = f"set_{sampler.name.lower()}_sampler_parameters"  # the public method's name
        values = [check_float32(v, f"{where} {name}", finite=True) for name, v in named.items()]
        check_sampler(where, sampler, values)
        header = (self.EnvironmentDataTypes.SAMPLER, check_int32(seed, f"{where} seed"), sampler)
        if sampler == self.SamplerTypes.MULTIRANGEUNIFORM:  # a counted list, not two floats
            msg = key_message(where, key, "iiil", *header, values)
        else:
            msg = key_message(where, key, "iiiff", *header, *values)
        self.queue_message_to_send(msg)


def check_sampler(where: str, sampler: int, values: Sequence[float]) -> None:
    """Raise unless ``values`` make a sampler (both ends check: a message may come from others)."""
    pairs = list(zip(values[0::2], values[1::2], strict=False))
    multi = sampler == EnvironmentParametersChannel.SamplerTypes.MULTIRANGEUNIFORM
    for index, (low, high) in enumerate(pairs if multi else []):
        if low > high:
            raise SideChannelError(
                f"{where} intervals[{index}]: expected min <= max, got {(low, high)}"
            )
    finite = all(map(math.isfinite, values))
    width = sum(high - low for low, high in pairs)
    name = "multi-range uniform" if multi else "uniform"
    if sampler == EnvironmentParametersChannel.SamplerTypes.GAUSSIAN:
        name, expected, ok = "gaussian", "a finite mean and st_dev >= 0", finite and values[1] >= 0
    elif not multi:
        expected, ok = "finite min_value <= max_value", finite and width >= 0
    elif not (finite and len(values) % 2 == 0):
        expected, ok = "finite (min, max) pairs", False
    else:
        expected, ok = "at least one interval and a positive total width", width > 0
    if not ok:
        got = f"{len(pairs)} intervals {values}" if multi else values
        raise SideChannelError(f"{where}: {name} sampler expects {expected}, got {got}")
