"""Seeding a core: the one rule for whether a core takes ``reset(seed=...)``, and the reset.

Functions:
    is_seedable: whether a core can be reseeded from Python (its class declares
        ``seedable = True``, as ``BatchedEnv`` does).
    reset_core: resets a core, reseeded where it is seedable; says whether the seed reached it.

A Unity build cannot be reseeded from Python (it takes its seed at launch); a zooport
``BatchedEnv`` can. Adapters, the checker and the command line all reset a core this way, so
they agree on which cores a seed reaches.
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["is_seedable", "reset_core"]

_warned: set[type] = set()


def is_seedable(core: Any) -> bool:
    """True when ``core``'s class declares ``seedable = True`` (``reset(seed=...)`` works).

    Example:
        >>> from zooport.envs.builtin.basic import Basic
        >>> is_seedable(Basic()), is_seedable(object())
        (True, False)
    """
    return getattr(type(core), "seedable", False) is True


def reset_core(core: Any, seed: int | None = None, *, warn: bool = False) -> bool:
    """Resets ``core``; with a seed, reseeds it first where it is seedable.

    Args:
        core: any BaseEnv.
        seed: None, or an int >= 0 (checked by the caller).
        warn: where the core cannot be seeded, warn once per core type that the seed did not
            reach it (what the adapters do: a run the user asked to seed will not repeat).

    Returns:
        True when the seed reached the core.

    Example:
        >>> from zooport.envs.builtin.basic import Basic
        >>> reset_core(Basic(), 3), reset_core(Basic())
        (True, False)
    """
    if seed is not None and is_seedable(core):
        core.reset(seed=int(seed))
        return True
    core.reset()
    if seed is not None and warn and type(core) not in _warned:
        _warned.add(type(core))
        warnings.warn(
            f"{type(core).__name__} cannot be reseeded from Python (it has no "
            f"`seedable = True` reset(seed=...)); reset(seed={seed}) seeded only the adapter's "
            "own random number generators, so trajectories may differ between runs",
            stacklevel=3,
        )
    return False
