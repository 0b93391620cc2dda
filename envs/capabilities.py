"""What a factory or a core supports (keywords, seeding, action masks), each answered once."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from zooport.envs.base_env import BaseEnvLike

__all__ = [
    "signature_parameters", "keyword_parameters", "accepts_keyword", "takes_positional",
    "is_seedable", "reset_core", "has_action_masks",
]  # fmt: skip

_KEYWORD_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)

_warned_unseedable: set[type] = set()


def signature_parameters(target: Callable[..., Any]) -> Mapping[str, inspect.Parameter] | None:
    """``target``'s parameters by name (a ``functools.partial`` is seen through), or None."""
    try:
        return inspect.signature(target).parameters
    except (TypeError, ValueError):
        return None


def keyword_parameters(target: Callable[..., Any] | None) -> set[str] | None:
    """The keyword parameters of ``target``; None when it takes any (or is unknown)."""
    parameters = None if target is None else signature_parameters(target)
    if parameters is None or any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return None
    return {name for name, p in parameters.items() if p.kind in _KEYWORD_KINDS}


def accepts_keyword(target: Callable[..., Any], name: str) -> bool:
    """Whether ``target`` takes the keyword ``name`` (False when its signature is unknown)."""
    parameters = signature_parameters(target) or {}
    kind = getattr(parameters.get(name), "kind", None)
    return kind in _KEYWORD_KINDS or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


def takes_positional(function: Callable[..., Any]) -> bool:
    """True when ``function`` can be called with one positional argument."""
    parameters = signature_parameters(function)
    # Kinds are ordered: positional-only, positional-or-keyword and *args come first.
    return parameters is not None and any(p.kind < p.KEYWORD_ONLY for p in parameters.values())


def is_seedable(core: BaseEnvLike) -> bool:
    """Whether ``core`` takes ``reset(seed=...)``: its ``seedable`` is True (not a Mock's)."""
    return getattr(core, "seedable", False) is True


def reset_core(core: BaseEnvLike, seed: int | None = None, *, warn: bool = False) -> bool:
    """Resets ``core``, reseeded where it is seedable; True when the seed reached it.
    ``warn`` warns once per core type that a seed could not reach (the run will not repeat)."""
    if seed is not None and is_seedable(core):
        core.reset(seed=int(seed))  # type: ignore[call-arg]  # is_seedable: it takes one
        return True
    core.reset()
    if seed is not None and warn and type(core) not in _warned_unseedable:
        _warned_unseedable.add(type(core))
        warnings.warn(
            f"{type(core).__name__} cannot be reseeded from Python (it has no "
            f"`seedable = True` reset(seed=...)); reset(seed={seed}) seeded only the adapter's "
            "own random number generators, so trajectories may differ between runs",
            stacklevel=3,
        )
    return False


def has_action_masks(core: BaseEnvLike) -> bool:
    """Whether ``core`` sends action masks: its ``has_action_masks`` flag, else True (Unity's)."""
    flag = getattr(core, "has_action_masks", None)
    return flag if isinstance(flag, bool) else True
