"""Builds the PettingZoo entry points of a built-in core: kwargs split between core and adapter.

Functions:
    split_kwargs: separates the adapter's options from the core's constructor arguments.
    make_aec: a core built from kwargs, wrapped in the AEC adapter.
    make_parallel: the same, wrapped in the Parallel adapter.
"""

from __future__ import annotations

import importlib
from typing import Any

from zooport.adapters.pettingzoo_aec import PettingZooAECEnv
from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv

__all__ = ["ADAPTER_OPTIONS", "split_kwargs", "make_aec", "make_parallel"]

#: Keyword arguments that configure the adapter; every other one goes to the core.
ADAPTER_OPTIONS = frozenset(
    {
        "render_mode",
        "termination_mode",
        "max_cycles",
        "action_masks",
        "mask_in_info",
        "default_action",
        "agent_name",
        "uint8_visual",
        "flatten_branched",
        "allow_multiple_obs",
        "name",
    }
)


def split_kwargs(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(core_kwargs, adapter_kwargs)`` from one dict of keyword arguments.

    Example:
        >>> split_kwargs({"seed": 0, "max_cycles": 5})
        ({'seed': 0}, {'max_cycles': 5})
    """
    core = {k: v for k, v in kwargs.items() if k not in ADAPTER_OPTIONS}
    adapter = {k: v for k, v in kwargs.items() if k in ADAPTER_OPTIONS}
    return core, adapter


def _core(core_path: str, kwargs: dict[str, Any]) -> Any:
    module, _, attr = core_path.partition(":")
    return getattr(importlib.import_module(module), attr)(**kwargs)


def make_aec(core_path: str, name: str, kwargs: dict[str, Any]) -> PettingZooAECEnv:
    """``PettingZooAECEnv(core_class(**core_kwargs), name=name, **adapter_kwargs)``."""
    core_kwargs, adapter_kwargs = split_kwargs(kwargs)
    adapter_kwargs.setdefault("name", name)
    return PettingZooAECEnv(_core(core_path, core_kwargs), **adapter_kwargs)


def make_parallel(core_path: str, name: str, kwargs: dict[str, Any]) -> PettingZooParallelEnv:
    """``PettingZooParallelEnv(core_class(**core_kwargs), name=name, **adapter_kwargs)``."""
    core_kwargs, adapter_kwargs = split_kwargs(kwargs)
    adapter_kwargs.setdefault("name", name)
    return PettingZooParallelEnv(_core(core_path, core_kwargs), **adapter_kwargs)
