"""What the built-ins share: motion, nearest entities, clipped drawing ((row, col) from the top)."""

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from zooport.envs.side_channel.side_channel import SideChannel

Color = tuple[int, int, int]
SideChannels = Sequence[SideChannel] | None  # every built-in's side_channels parameter


def fill_rects(
    image: np.ndarray, top: ArrayLike, left: ArrayLike, height: ArrayLike, width: ArrayLike,
    color: Color,
) -> None:  # fmt: skip
    """Fills rectangles ``[top, top + height) x [left, left + width)`` of ``image`` in place."""
    for box in np.broadcast(top, left, np.add(top, height), np.add(left, width)):
        # Pixel p lies in [a, b) exactly when ceil(a) <= p < ceil(b).
        row0, col0, row1, col1 = (max(math.ceil(edge), 0) for edge in box)
        image[row0:row1, col0:col1] = color


def fill_circles(
    image: np.ndarray, center_row: ArrayLike, center_col: ArrayLike, radius: ArrayLike, color: Color
) -> None:
    """Fills discs in ``image`` in place: the pixels whose centres lie within them."""
    for cy, cx, r in np.broadcast(center_row, center_col, radius):
        # Only the pixels of the disc's bounding box, clipped to the image, are tested.
        top, left = max(math.floor(cy - r), 0), max(math.floor(cx - r), 0)
        rows = np.arange(top, min(math.ceil(cy + r), image.shape[0]))[:, None] + 0.5
        cols = np.arange(left, min(math.ceil(cx + r), image.shape[1])) + 0.5
        inside = (rows - cy) ** 2 + (cols - cx) ** 2 <= r**2
        image[top : top + len(rows), left : left + len(cols)][inside] = color


def fill_arena_discs(
    image: np.ndarray, xy: np.ndarray, size: int, radius: float, color: Color,
    top: np.ndarray | float = 0.0,
) -> None:  # fmt: skip
    """Fills discs at arena points ``xy`` (the arena [-1, 1]^2 is ``size`` pixels wide)."""
    rows = top + (1.0 - xy[:, 1]) * size / 2
    fill_circles(image, rows, (xy[:, 0] + 1.0) * size / 2, radius * size / 2, color)


def tile(
    images: np.ndarray, columns: int | None = None, pad: int = 2, pad_color: Color = (64, 64, 64)
) -> np.ndarray:
    """Lays out an (n, H, W, 3) batch row by row on ``columns`` (``ceil(sqrt(n))``), padded."""
    n, h, w, _ = images.shape
    columns = max(1, min(int(np.ceil(np.sqrt(n))) if columns is None else columns, n))
    rows = -(-n // columns)
    out = np.full((rows * (pad + h) + pad, columns * (pad + w) + pad, 3), pad_color, np.uint8)
    for i, image in enumerate(images):
        row, col = divmod(i, columns)
        top, left = pad + row * (pad + h), pad + col * (pad + w)
        out[top : top + h, left : left + w] = image
    return out


def damped_move(
    pos: np.ndarray, vel: np.ndarray, accel: np.ndarray, damping: float, limit: float | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The new (position, velocity): damped, accelerated, stopped dead at ``+-limit``."""
    vel = damping * vel + accel
    pos = pos + vel
    clipped = np.clip(pos, -limit, limit)
    return clipped, np.where(clipped != pos, 0.0, vel)


def nearest_first(rel: np.ndarray, present: np.ndarray, k: int) -> np.ndarray:
    """(n, k, 3): per row the ``k`` nearest present entities of ``rel`` as (dx, dy, 1), then 0s."""
    n, m = present.shape
    if m < k:  # fewer entities than observed: pad with absent ones
        present = np.concatenate([present, np.zeros((n, k - m), bool)], axis=1)
        rel = np.concatenate([rel, np.zeros((n, k - m, 2), rel.dtype)], axis=1)
    gap = np.where(present, np.linalg.norm(rel, axis=-1), np.inf)
    order = np.argsort(gap, axis=1, kind="stable")[:, :k]
    present = np.take_along_axis(present, order, axis=1)
    rel = np.take_along_axis(rel, order[..., None], axis=1) * present[..., None]
    return np.concatenate([rel, present[..., None]], axis=-1)
