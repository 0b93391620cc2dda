"""Building blocks of behaviour specs, for tests that write their own cores.

Functions:
    obs_spec: an observation spec of a shape with no dimension properties (a plain vector,
        matrix or image), ``ObservationType.DEFAULT`` unless told.
"""

from __future__ import annotations

from zooport.envs.base_env import DimensionProperty, ObservationSpec, ObservationType

__all__ = ["obs_spec"]


def obs_spec(
    shape: tuple[int, ...], name: str = "obs", kind: ObservationType = ObservationType.DEFAULT
) -> ObservationSpec:
    """An observation spec of ``shape`` whose every dimension is ``DimensionProperty.NONE``."""
    return ObservationSpec(tuple(shape), (DimensionProperty.NONE,) * len(shape), kind, name)
