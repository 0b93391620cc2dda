"""Where a wrapper may stand: the ``.env`` chain and the composition rules, in one leaf module.

Classes:
    WrapperOrderError: a wrapper list or chain that breaks a composition rule (a ``ValueError``).

Functions:
    inner_env: the env one layer inside ``env`` (its ``.env``, or PettingZoo's ``.aec_env``).
    wrapper_chain: ``env`` and every layer inside it, outermost first.
    check_rules: checks one wrapper class's ``requires``, ``forbids`` and ``unique`` rules
        against what is beneath it.
    check_placement: the same against the layers of an existing env (what a wrapper's
        constructor asks).

:mod:`~zooport.adapters.wrappers.base` (the wrappers' constructors) and
:mod:`~zooport.adapters.wrappers.composition` (the list validator) both ask this module, and it
imports neither: the rules are checked in one place and no import runs back up.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from zooport.errors import ZooportError

__all__ = [
    "WrapperOrderError",
    "inner_env",
    "wrapper_chain",
    "chain_classes",
    "check_rules",
    "check_placement",
]

#: How many layers a chain walk follows at most (a cycle of ``.env`` references ends there).
_MAX_DEPTH = 1000


class WrapperOrderError(ZooportError, ValueError):
    """A wrapper list breaks a composition rule; the message names the wrappers and the rule."""


def inner_env(env: Any) -> Any | None:
    """The env one layer inside ``env``: its ``.env``, or ``.aec_env`` for PettingZoo's
    ``aec_to_parallel`` wrapper (which SuperSuit's Parallel wrappers end in); None at the core.
    """
    inner = getattr(env, "env", None)
    return getattr(env, "aec_env", None) if inner is None else inner


def wrapper_chain(env: Any) -> Iterator[Any]:
    """``env``, then each layer inside it (see :func:`inner_env`), down to the core."""
    depth = 0
    while env is not None and depth < _MAX_DEPTH:
        yield env
        env = inner_env(env)
        depth += 1


def chain_classes(env: Any) -> list[type]:
    """The classes of ``env``'s layers, innermost first (the order of a wrapper list)."""
    return [type(layer) for layer in wrapper_chain(env)][::-1]


def check_rules(cls: type, where: str, below: Sequence[tuple[type, str]]) -> None:
    """Checks ``cls``'s ``requires``, ``forbids`` and ``unique`` against ``below``.

    Args:
        cls: a wrapper class (its rules are class attributes).
        where: how the messages name ``cls``'s place (``"wrappers[2]"``).
        below: ``(class, where)`` of everything beneath it, innermost first.

    Raises:
        WrapperOrderError: a rule is broken; the message names both wrappers and the rule.
    """
    requires: tuple[type, ...] = getattr(cls, "requires", ())
    forbids: tuple[type, ...] = getattr(cls, "forbids", ())
    for required in requires:
        if not any(issubclass(b, required) for b, _ in below):
            raise WrapperOrderError(
                f"{cls.__name__} ({where}) requires {required.__name__} beneath it "
                f"(earlier in the list; first = innermost), but there is none; rule: "
                f"{cls.__name__}.requires = {_names(requires)}"
            )
    for forbidden in forbids:
        for b, b_where in below:
            if issubclass(b, forbidden):
                raise WrapperOrderError(
                    f"{cls.__name__} ({where}) must not wrap {b.__name__} ({b_where}); rule: "
                    f"{cls.__name__}.forbids = {_names(forbids)}; put {cls.__name__} "
                    f"before {b.__name__}"
                )
    if getattr(cls, "unique", False):
        for b, b_where in below:
            if b is cls:
                raise WrapperOrderError(
                    f"{cls.__name__} appears twice ({b_where} and {where}); rule: "
                    f"{cls.__name__}.unique = True"
                )


def check_placement(cls: type, env: Any) -> None:
    """Checks ``cls``'s rules against the wrappers in ``env``'s ``.env`` chain (constructors).

    Raises:
        WrapperOrderError: a rule is broken.
    """
    below = [(b, "the wrapped env's chain") for b in chain_classes(env)]
    check_rules(cls, f"wrapping {env}", below)


def _names(classes: tuple[type, ...]) -> str:
    return "(" + ", ".join(c.__name__ for c in classes) + ("," if len(classes) == 1 else "") + ")"
