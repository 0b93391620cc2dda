"""What a callable's signature says it takes: the one place zooport reads signatures.

Functions:
    parameters_of: a callable's parameters, or None where its signature cannot be read.
    keyword_parameters: the names a callable takes by keyword (None: any, or unknown).
    takes_positional: whether a callable can be called with one positional argument.

Option splitters (a core's constructor versus an adapter's options), the registry's
keyword checks, the command line and the task adapters all ask these questions; a builtin
whose signature cannot be read is answered for, never an error.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["parameters_of", "keyword_parameters", "takes_positional"]

_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_POSITIONAL = (
    inspect.Parameter.POSITIONAL_ONLY,
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
    inspect.Parameter.VAR_POSITIONAL,
)


def parameters_of(function: Any) -> list[inspect.Parameter] | None:
    """``function``'s parameters, or None when its signature cannot be read (a builtin).

    Example:
        >>> [p.name for p in parameters_of(lambda state, *, reward=0: state)]
        ['state', 'reward']
        >>> parameters_of(max) is None
        True
    """
    try:
        return list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None


def keyword_parameters(target: Callable[..., Any] | None) -> set[str] | None:
    """The keyword parameters of ``target``; None when it takes any (or is unknown).

    Example:
        >>> from zooport.envs.builtin.basic import Basic
        >>> sorted(keyword_parameters(Basic))[:3]
        ['max_steps', 'n_agents', 'reorder_agents']
    """
    if target is None:
        return None
    parameters = parameters_of(target)
    if parameters is None or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return {p.name for p in parameters if p.kind in _KEYWORD}


def takes_positional(function: Any) -> bool:
    """True when ``function`` can be called with one positional argument.

    Example:
        >>> takes_positional(lambda mode: mode), takes_positional(lambda: None)
        (True, False)
    """
    parameters = parameters_of(function)
    return parameters is not None and any(p.kind in _POSITIONAL for p in parameters)
