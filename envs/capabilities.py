"""What a factory or a core supports, each question answered in one place.

Functions:
    signature_parameters: a callable's parameters by name, or None when its signature
        cannot be read (a builtin, some extension types).
    keyword_parameters: the keywords a callable takes; None when it takes any (``**kwargs``)
        or its signature cannot be read.
    accepts_keyword: whether a callable certainly takes one keyword.
    is_seedable: whether a core's class declares ``seedable = True`` (``BatchedEnv`` does).
    reset_seeded: resets a core, with the seed when it is seedable.

The two keyword questions differ on purpose where the signature says nothing: checking a
user's keywords must not reject what it cannot see (:func:`keyword_parameters` gives None),
while deciding whether to pass ``seed=`` must not pass what may be refused
(:func:`accepts_keyword` gives False). Seedability is read from the class, so an object that
answers every attribute (a ``Mock``) is not taken for seedable.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "signature_parameters",
    "keyword_parameters",
    "accepts_keyword",
    "is_seedable",
    "reset_seeded",
]

_KEYWORD_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def signature_parameters(target: Callable[..., Any]) -> Mapping[str, inspect.Parameter] | None:
    """``target``'s parameters by name (a ``functools.partial`` is seen through), or None.

    Example:
        >>> list(signature_parameters(lambda a, *, b=1: None))
        ['a', 'b']
        >>> signature_parameters(print) is None or "sep" in signature_parameters(print)
        True
    """
    try:
        return inspect.signature(target).parameters
    except (TypeError, ValueError):
        return None


def keyword_parameters(target: Callable[..., Any] | None) -> set[str] | None:
    """The keyword parameters of ``target``; None when it takes any (or is unknown).

    Example:
        >>> from zooport.envs.builtin.basic import Basic
        >>> sorted(keyword_parameters(Basic))[:3]
        ['max_steps', 'n_agents', 'reorder_agents']
        >>> keyword_parameters(lambda **kwargs: None) is None
        True
    """
    if target is None:
        return None
    parameters = signature_parameters(target)
    if parameters is None:
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return None
    return {name for name, p in parameters.items() if p.kind in _KEYWORD_KINDS}


def accepts_keyword(target: Callable[..., Any], name: str) -> bool:
    """Whether ``target`` takes the keyword ``name`` (False when its signature is unknown).

    Example:
        >>> import functools
        >>> accepts_keyword(functools.partial(lambda n, seed=None: None, 3), "seed")
        True
        >>> accepts_keyword(lambda seed, /: None, "seed")
        False
    """
    parameters = signature_parameters(target)
    if parameters is None:
        return False
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return True
    found = parameters.get(name)
    return found is not None and found.kind in _KEYWORD_KINDS


def is_seedable(core: Any) -> bool:
    """Whether ``core``'s class declares ``seedable = True``, so ``reset(seed=...)`` works.

    Example:
        >>> from zooport.envs.builtin.basic import Basic
        >>> is_seedable(Basic()), is_seedable(object())
        (True, False)
    """
    return getattr(type(core), "seedable", False) is True


def reset_seeded(core: Any, seed: int | None) -> bool:
    """Resets ``core``, with ``seed`` when it is seedable; returns whether the seed was used.

    Example:
        >>> from zooport.envs.builtin.basic import Basic
        >>> reset_seeded(Basic(), 3), reset_seeded(Basic(), None)
        (True, False)
    """
    if seed is not None and is_seedable(core):
        core.reset(seed=seed)
        return True
    core.reset()
    return False
