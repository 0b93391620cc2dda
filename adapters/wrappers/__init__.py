"""Wrappers for any PettingZoo Parallel env, and ``apply_wrappers`` (see the wrappers guide)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec

from zooport.adapters.registration import APIS
from zooport.errors import ArgumentTypeError

from .action import ActionGrid, DiscretizeActions, GymDiscretizeActions, VectorDiscretizeActions
from .base import (
    AgentSelector,
    ParallelWrapper,
    Teams,
    WrapperOrderError,
    expect,
    get_wrapper,
    has_wrapper,
)
from .communication import (
    ExtraCommunicationDelays,
    Message,
    MessageBus,
    MessageChannel,
    MessageFilter,
    NoCommunication,
    RandomMessageDropout,
    RestrictedCommunicationRange,
    send_messages,
)
from .observation import (
    CentralisedObservation,
    EntitySlots,
    GymRescaleObservations,
    RescaleObservations,
    SharedVisibility,
    VectorRescaleObservations,
)
from .reward import IndividualDone, RewardShaping, StepData, TeamReward, TerminationPolicy
from .team import FoldAgents, RandomPolicy, SingleAgentView

__all__ = [
    "ParallelWrapper",
    "WrapperSpec",
    "WrapperOrderError",
    "apply_wrappers",
    "has_wrapper",
    "get_wrapper",
    "AgentSelector",
    "Teams",
    "FoldAgents",
    "SingleAgentView",
    "RandomPolicy",
    "RewardShaping",
    "StepData",
    "TeamReward",
    "ActionGrid",
    "DiscretizeActions",
    "GymDiscretizeActions",
    "VectorDiscretizeActions",
    "RescaleObservations",
    "GymRescaleObservations",
    "VectorRescaleObservations",
    "CentralisedObservation",
    "EntitySlots",
    "SharedVisibility",
    "TerminationPolicy",
    "IndividualDone",
    "Message",
    "MessageBus",
    "MessageChannel",
    "MessageFilter",
    "RandomMessageDropout",
    "RestrictedCommunicationRange",
    "NoCommunication",
    "ExtraCommunicationDelays",
    "send_messages",
]

_KIND_NAMES = {
    "parallel": "a PettingZoo Parallel env",
    "aec": "a PettingZoo AEC env",
    "gym": "a single-agent gymnasium.Env",
    "vector": "a gymnasium VectorEnv",
}


class WrapperSpec:
    """A wrapper and its arguments: ``WrapperSpec(cls, *args)(env)`` is ``cls(env, *args)``."""

    def __init__(self, wrapper: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
        wanted = "a wrapper class or a callable env -> env"
        expect(callable(wrapper), "WrapperSpec's wrapper", wanted, wrapper, ArgumentTypeError)
        self.wrapper, self.args, self.kwargs = wrapper, args, kwargs

    def __call__(self, env: Any) -> Any:
        return self.wrapper(env, *self.args, **self.kwargs)

    def __repr__(self) -> str:
        name = getattr(self.wrapper, "__name__", repr(self.wrapper))
        keywords = [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"WrapperSpec({', '.join([name, *map(repr, self.args), *keywords])})"


def _decompose(item: Any) -> tuple[Any, tuple, dict]:
    if isinstance(item, WrapperSpec):
        built, args, kwargs = _decompose(item.wrapper)
        return built, args + item.args, {**kwargs, **item.kwargs}
    if isinstance(item, functools.partial):
        built, args, kwargs = _decompose(item.func)
        return built, args + item.args, {**kwargs, **item.keywords}
    return item, (), {}


def _ours(item: Any) -> type | None:
    built = _decompose(item)[0]  # the zooport wrapper class ``item`` builds, else None
    ours = isinstance(built, type) and issubclass(built, (ParallelWrapper, SingleAgentView))
    return built if ours else None


def adapter_api(wrappers: Sequence[Any], api: str) -> str:
    """The adapter's API: ``api``, but ``"parallel"`` for ``api="aec"`` with zooport wrappers."""
    expect(isinstance(api, str) and api in APIS, "api", f"one of {list(APIS)}", api)
    ok = isinstance(wrappers, Sequence) and not isinstance(wrappers, (str, bytes))
    wanted = "a list of wrapper classes, WrapperSpecs or callables"
    expect(ok, "wrappers", wanted, wrappers, ArgumentTypeError)
    return "parallel" if api == "aec" and any(map(_ours, wrappers)) else api


def apply_wrappers(env: Any, wrappers: Sequence[Any], *, api: str = "parallel") -> Any:
    """``env`` (an ``api`` adapter) wrapped by ``wrappers``, first = innermost."""
    kind = adapter_api(wrappers, api)
    if kind != api and not isinstance(env, ParallelEnv):
        raise ArgumentTypeError(
            f"apply_wrappers(api='aec') with zooport wrappers needs the Parallel adapter "
            f"(converted after them), actually: {type(env).__name__}"
        )
    for index, item in enumerate(wrappers):
        where = f"wrappers[{index}]"
        if not callable(item):
            raise ArgumentTypeError(
                f"{where}: expect a wrapper class, a WrapperSpec or a callable env -> env, "
                f"actually: {item!r}"
            )
        if _ours(item) is None and kind == "parallel" and api == "aec":
            env, kind = parallel_to_aec(env), "aec"
        env = _placed(item, kind, api, where)(env)
        kind = "gym" if isinstance(env, SingleAgentView) else kind
    return parallel_to_aec(env) if kind == "parallel" and api == "aec" else env


def _placed(item: Any, kind: str, api: str, where: str) -> Any:
    # ``item`` as it wraps an env of ``kind`` (a zooport wrapper: its form for that kind)
    built, args, kwargs = _decompose(item)
    cls = _ours(built)
    if cls is None:  # a Gymnasium wrapper class must find the kind it wraps
        for base, expected in ((gym.Wrapper, "gym"), (gym.vector.VectorWrapper, "vector")):
            if isinstance(built, type) and issubclass(built, base) and kind != expected:
                raise WrapperOrderError(
                    f"{built.__name__} ({where}) wraps {_KIND_NAMES[expected]}, but there the env "
                    f"is {_KIND_NAMES[kind]} (api={api!r})"
                )
        return item
    if issubclass(cls, SingleAgentView) and api != "parallel":
        raise WrapperOrderError(
            f"{cls.__name__} ({where}) turns a Parallel env into a single-agent gymnasium.Env, "
            f"which api={api!r} does not give; use api='parallel'"
        )
    if kind == "parallel":
        return item
    forms: dict[str, type] = getattr(cls, "forms", {})
    if kind in forms:
        return WrapperSpec(forms[kind], *args, **kwargs)
    if api == "aec":
        raise WrapperOrderError(
            f"{cls.__name__} ({where}) wraps PettingZoo Parallel envs, but for api='aec' the "
            "zooport wrappers must come before every other item: they wrap the Parallel "
            "adapter, which is then converted with parallel_to_aec"
        )
    has = f"it has forms for {list(forms)}" if forms else "it only makes sense for several agents"
    raise WrapperOrderError(
        f"{cls.__name__} ({where}) wraps PettingZoo Parallel envs, but there the env is "
        f"{_KIND_NAMES[kind]} (api={api!r}) and {has}; use api='parallel'"
        + (" (and SingleAgentView last for a gymnasium.Env)" if kind == "gym" else "")
    )
