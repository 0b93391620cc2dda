"""Array code that several built-ins share: damped motion in a box, nearest-first entities."""

from __future__ import annotations

import numpy as np


def damped_move(
    pos: np.ndarray, vel: np.ndarray, accel: np.ndarray, damping: float, limit: float | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The new (position, velocity): damped, accelerated, stopped dead at ``+-limit``."""
    vel = damping * vel + accel
    pos = pos + vel
    clipped = np.clip(pos, -limit, limit)
    return clipped, np.where(clipped != pos, 0.0, vel)


def nearest_first(rel: np.ndarray, present: np.ndarray, k: int) -> np.ndarray:
    """(n, k, 3): per row the ``k`` nearest present entities of the (n, m, 2) ``rel``,
    nearest first, as (dx, dy, 1); then rows of zeros."""
    n, m = present.shape
    if m < k:  # fewer entities than observed: pad with absent ones
        present = np.concatenate([present, np.zeros((n, k - m), bool)], axis=1)
        rel = np.concatenate([rel, np.zeros((n, k - m, 2), rel.dtype)], axis=1)
    gap = np.where(present, np.linalg.norm(rel, axis=-1), np.inf)
    order = np.argsort(gap, axis=1, kind="stable")[:, :k]
    present = np.take_along_axis(present, order, axis=1)
    rel = np.take_along_axis(rel, order[..., None], axis=1) * present[..., None]
    return np.concatenate([rel, present[..., None]], axis=-1)
