"""Composing wrappers: specs, the central order validator, and finding a wrapper in a chain.

Classes:
    WrapperSpec: a wrapper with its arguments, applied later as ``spec(env)``.
    WrapperOrderError: a wrapper list that breaks a composition rule (a ``ValueError``; from
        :mod:`~zooport.adapters.wrappers.placement`, re-exported).

Functions:
    validate_wrappers: checks a wrapper list against every wrapper's ``requires``, ``forbids``
        and ``unique`` rules and against the kind of env each one receives.
    apply_wrappers: validates, then applies a wrapper list to an env (first = innermost).
    wrapper_class: the class a wrapper item constructs, when it can be known.
    has_wrapper, get_wrapper: walk the explicit ``.env`` chain of an env (through PettingZoo's
        ``aec_to_parallel`` wrapper by its ``.aec_env``, so SuperSuit layers are no wall).

Rules live on the wrapper classes (``requires``, ``forbids``, ``unique``; see
:class:`~zooport.adapters.wrappers.base.ParallelWrapper`) and are checked in one function,
:func:`~zooport.adapters.wrappers.placement.check_rules` (a wrapper list here, a wrapper's
constructor against the chain it wraps), so a wrapper never asserts on its neighbours. A
wrapper list reads inside out: ``wrappers[0]`` wraps the adapter, ``wrappers[1]`` wraps that,
and so on; "beneath" means earlier.

Env kinds: ``"parallel"`` (PettingZoo Parallel), ``"aec"``, ``"gym"`` (one ``gymnasium.Env``)
and ``"vector"`` (``gymnasium.vector.VectorEnv``). A zooport Parallel wrapper applied where the
env is a ``"gym"`` or ``"vector"`` env uses its form for that kind (``cls.forms``) or is
rejected. ``SingleAgentView`` turns a ``"parallel"`` env into a ``"gym"`` one. For
``api="aec"`` the zooport Parallel wrappers come first; they wrap the Parallel adapter, which
is then converted with ``pettingzoo.utils.parallel_to_aec`` before any further item.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeGuard

import gymnasium as gym
from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec

from zooport.adapters.registration import APIS
from zooport.adapters.wrappers.base import ParallelWrapper
from zooport.adapters.wrappers.placement import (
    WrapperOrderError,
    chain_classes,
    check_placement,
    check_rules,
    wrapper_chain,
)
from zooport.errors import ArgumentError, ArgumentTypeError

__all__ = [
    "WrapperSpec",
    "WrapperOrderError",
    "KINDS",
    "validate_wrappers",
    "apply_wrappers",
    "check_placement",
    "is_parallel_wrapper",
    "wrapper_class",
    "has_wrapper",
    "get_wrapper",
]

#: The env kinds a wrapper list can start from: the adapters ``zooport.make`` builds.
KINDS = APIS
_KIND_NAMES = {
    "parallel": "a PettingZoo Parallel env",
    "aec": "a PettingZoo AEC env",
    "gym": "a single-agent gymnasium.Env",
    "vector": "a gymnasium VectorEnv",
}


class WrapperSpec:
    """A wrapper and its arguments: ``WrapperSpec(cls, *args, **kwargs)(env)`` is ``cls(env, ...)``.

    Args:
        wrapper: a wrapper class or any callable ``env -> env``.
        *args: passed after the env.
        **kwargs: passed after the env, by keyword.

    Raises:
        ArgumentTypeError: ``wrapper`` is not callable.

    Example:
        >>> from zooport.adapters.wrappers.episode import TerminationPolicy
        >>> spec = WrapperSpec(TerminationPolicy, "any")
        >>> spec
        WrapperSpec(TerminationPolicy, 'any')
        >>> wrapper_class(spec) is TerminationPolicy
        True
    """

    __slots__ = ("wrapper", "args", "kwargs")

    def __init__(self, wrapper: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
        if not callable(wrapper):
            raise ArgumentTypeError(
                f"Expect WrapperSpec's wrapper to be a wrapper class or a callable env -> env, "
                f"actually: {wrapper!r}"
            )
        self.wrapper = wrapper
        self.args = args
        self.kwargs = kwargs

    def __call__(self, env: Any) -> Any:
        return self.wrapper(env, *self.args, **self.kwargs)

    def __repr__(self) -> str:
        parts = [getattr(self.wrapper, "__name__", repr(self.wrapper))]
        parts += [repr(a) for a in self.args]
        parts += [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"WrapperSpec({', '.join(parts)})"


def _decompose(item: Any) -> tuple[type | None, tuple, dict]:
    """(class, args, kwargs) of a wrapper item; class None when it cannot be known."""
    if isinstance(item, WrapperSpec):
        cls, args, kwargs = _decompose(item.wrapper)
        return cls, args + item.args, {**kwargs, **item.kwargs}
    if isinstance(item, functools.partial):
        cls, args, kwargs = _decompose(item.func)
        return cls, args + item.args, {**kwargs, **item.keywords}
    if isinstance(item, type):
        return item, (), {}
    return None, (), {}


def wrapper_class(item: Any) -> type | None:
    """The class a wrapper item (class, ``WrapperSpec``, ``functools.partial``) constructs.

    Example:
        >>> import functools
        >>> from zooport.adapters.wrappers.episode import TerminationPolicy
        >>> wrapper_class(functools.partial(TerminationPolicy, "all")).__name__
        'TerminationPolicy'
        >>> wrapper_class(lambda env: env) is None
        True
    """
    return _decompose(item)[0]


def is_parallel_wrapper(item: Any) -> bool:
    """True for a zooport wrapper item: its class wraps Parallel envs (``accepts``).

    Example:
        >>> from zooport.adapters.wrappers.episode import TerminationPolicy
        >>> is_parallel_wrapper(WrapperSpec(TerminationPolicy, "any")), is_parallel_wrapper(len)
        (True, False)
    """
    cls = wrapper_class(item)
    if not isinstance(cls, type):
        return False
    return issubclass(cls, ParallelWrapper) or getattr(cls, "accepts", None) == "parallel"


def _is_zooport(cls: type | None) -> TypeGuard[type]:
    return is_parallel_wrapper(cls)


def _plan(
    wrappers: Sequence[Any], api: str, beneath: Sequence[type]
) -> list[tuple[Callable[[Any], Any], bool]]:
    """Checks every rule; returns ``(factory, convert_to_aec_first)`` per item."""
    if not isinstance(api, str) or api not in KINDS:
        raise ArgumentError(f"Expect api to be one of {list(KINDS)}, actually: {api!r}")
    if isinstance(wrappers, (str, bytes)) or not isinstance(wrappers, Sequence):
        raise ArgumentTypeError(
            f"Expect wrappers to be a list of wrapper classes, WrapperSpecs or callables, "
            f"actually: {wrappers!r}"
        )
    kind = api
    if api == "aec" and any(is_parallel_wrapper(item) for item in wrappers):
        kind = "parallel"  # zooport wrappers wrap the Parallel adapter, converted after them
    below: list[tuple[type, str]] = [(cls, "the env given") for cls in beneath]
    plan: list[tuple[Callable[[Any], Any], bool]] = []
    for index, item in enumerate(wrappers):
        where = f"wrappers[{index}]"
        if not callable(item):
            raise ArgumentTypeError(
                f"{where}: expect a wrapper class, a WrapperSpec or a callable env -> env, "
                f"actually: {item!r}"
            )
        cls, args, kwargs = _decompose(item)
        convert = False
        if api == "aec" and kind == "parallel" and not _is_zooport(cls):
            kind, convert = "aec", True
        factory: Callable[[Any], Any] = item
        if _is_zooport(cls):
            produces = getattr(cls, "produces", "parallel")
            if produces != "parallel" and api != "parallel":
                raise WrapperOrderError(
                    f"{cls.__name__} ({where}) turns a Parallel env into {_KIND_NAMES[produces]}"
                    f", which api={api!r} does not give; use api='parallel'"
                )
            factory = _factory_for(cls, args, kwargs, item, kind, api, where)
            check_rules(cls, where, below)
            kind = getattr(cls, "produces", "parallel") if kind == "parallel" else kind
        elif cls is not None:
            _check_foreign(cls, kind, api, where)
        if cls is not None:
            below.append((cls, where))
        plan.append((factory, convert))
    if api == "aec" and kind == "parallel" and plan:
        plan.append((_identity, True))
    return plan


def _identity(env: Any) -> Any:
    return env


def _factory_for(
    cls: type, args: tuple, kwargs: dict, item: Any, kind: str, api: str, where: str
) -> Callable[[Any], Any]:
    if kind == "parallel":
        return item
    # A duck-typed wrapper (accepts = "parallel") may declare no forms: then it has none.
    forms_of: Mapping[str, Callable[..., Any]] = getattr(cls, "forms", {})
    form = forms_of.get(kind)
    if form is None:
        if api == "aec":
            raise WrapperOrderError(
                f"{cls.__name__} ({where}) wraps PettingZoo Parallel envs, but for api='aec' "
                "the zooport wrappers must come before every other item: they wrap the "
                "Parallel adapter, which is then converted with parallel_to_aec"
            )
        forms = [k for k in ("gym", "vector") if k in forms_of]
        has = f"it has forms for {forms}" if forms else "it only makes sense for several agents"
        raise WrapperOrderError(
            f"{cls.__name__} ({where}) wraps PettingZoo Parallel envs, but there the env is "
            f"{_KIND_NAMES[kind]} (api={api!r}) and {has}; use api='parallel'"
            + (" (and SingleAgentView last for a gymnasium.Env)" if kind == "gym" else "")
        )
    return functools.partial(_apply_form, form, args, kwargs)


def _apply_form(form: Callable[..., Any], args: tuple, kwargs: dict[str, Any], env: Any) -> Any:
    # A module-level function in a partial (not a lambda): the factory pickles.
    return form(env, *args, **kwargs)


def _check_foreign(cls: type, kind: str, api: str, where: str) -> None:
    expected = None
    if issubclass(cls, gym.Wrapper):
        expected = "gym"
    elif issubclass(cls, gym.vector.VectorWrapper):
        expected = "vector"
    if expected is not None and kind != expected:
        raise WrapperOrderError(
            f"{cls.__name__} ({where}) wraps {_KIND_NAMES[expected]}, but there the env is "
            f"{_KIND_NAMES[kind]} (api={api!r})"
        )


def validate_wrappers(wrappers: Sequence[Any], *, api: str = "parallel", env: Any = None) -> None:
    """Checks a wrapper list (first = innermost) against every composition rule.

    Rules: a wrapper's ``requires`` (one of these classes beneath it), ``forbids`` (none of
    these beneath it) and ``unique`` (not twice); and each wrapper must fit the kind of env
    it receives (see the module docstring). Items whose class cannot be known (plain
    callables) are applied as given and checked by nobody.

    Args:
        wrappers: wrapper classes, :class:`WrapperSpec` s or callables.
        api: the kind of env the first wrapper receives: ``"parallel"``, ``"aec"``,
            ``"gym"`` or ``"vector"``.
        env: an env the list will wrap: wrappers already in its ``.env`` chain count as
            beneath.

    Raises:
        WrapperOrderError: a rule is broken; the message names both wrappers and the rule.
        ArgumentTypeError: an item is not callable.
        ArgumentError: ``api`` is not a known kind.

    Example:
        >>> from zooport.adapters.wrappers.channels import MessageFilter
        >>> from zooport.adapters.wrappers.communication import MessageBus
        >>> validate_wrappers([MessageBus, WrapperSpec(MessageFilter, bool)])
        >>> validate_wrappers([WrapperSpec(MessageFilter, bool), MessageBus])
        Traceback (most recent call last):
        ...
        zooport.adapters.wrappers.placement.WrapperOrderError: MessageFilter (wrappers[0])
        requires MessageBus beneath it ... rule: MessageFilter.requires = (MessageBus,)
    """
    _plan(wrappers, api, chain_classes(env) if env is not None else [])


def apply_wrappers(env: Any, wrappers: Sequence[Any], *, api: str = "parallel") -> Any:
    """Validates ``wrappers`` (see :func:`validate_wrappers`) and applies them to ``env``.

    ``wrappers[0]`` wraps ``env``; each next item wraps the result. For ``api="aec"``,
    ``env`` must be a Parallel env when the list holds zooport wrappers: it is converted with
    ``parallel_to_aec`` after them (see the module docstring); otherwise an AEC env.

    Raises:
        WrapperOrderError, ArgumentTypeError, ArgumentError: see :func:`validate_wrappers`.

    Example:
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.adapters.wrappers.episode import TerminationPolicy
        >>> from zooport.envs.builtin.tag import Tag
        >>> env = apply_wrappers(PettingZooParallelEnv(Tag(seed=0)), [TerminationPolicy])
        >>> str(env)
        'TerminationPolicy<zooport_tag>'
    """
    plan = _plan(wrappers, api, chain_classes(env))
    if api == "aec" and any(is_parallel_wrapper(item) for item in wrappers):
        if not isinstance(env, ParallelEnv):
            raise ArgumentTypeError(
                f"apply_wrappers(api='aec') with zooport wrappers needs the Parallel adapter "
                f"(converted after them), actually: {type(env).__name__}"
            )
    for factory, convert in plan:
        if convert:
            env = parallel_to_aec(env)
        env = factory(env)
    return env


def get_wrapper(env: Any, cls: type) -> Any | None:
    """The outermost wrapper in ``env``'s ``.env`` chain that is a ``cls`` (or its form), or None.

    Example:
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.adapters.wrappers.episode import TerminationPolicy
        >>> from zooport.envs.builtin.tag import Tag
        >>> inner = TerminationPolicy(PettingZooParallelEnv(Tag(seed=0)), "any")
        >>> get_wrapper(ParallelWrapper(inner), TerminationPolicy) is inner
        True
    """
    for layer in wrapper_chain(env):
        if isinstance(layer, cls):
            return layer
        form_of = getattr(type(layer), "form_of", None)
        if isinstance(form_of, type) and issubclass(form_of, cls):
            return layer
    return None


def has_wrapper(env: Any, cls: type) -> bool:
    """True when ``cls`` (or its gym/vector form) is in ``env``'s explicit ``.env`` chain.

    Example:
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.adapters.wrappers.episode import TerminationPolicy
        >>> from zooport.envs.builtin.tag import Tag
        >>> env = TerminationPolicy(PettingZooParallelEnv(Tag(seed=0)), "any")
        >>> has_wrapper(env, TerminationPolicy), has_wrapper(env.env, TerminationPolicy)
        (True, False)
    """
    return get_wrapper(env, cls) is not None
