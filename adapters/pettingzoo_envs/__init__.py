"""PettingZoo-style entry points for zooport's built-in multi-agent environments.

Modules (generated when this package is imported, one per built-in whose declaration names
one, :attr:`~zooport.envs.declaration.EnvDeclaration.pettingzoo_name`):
    ball_balance_v0, collector_v0, grid_world_v0, soccer_v0, tag_v0.

Each module exposes ``env(**kwargs)`` (AEC), ``parallel_env(**kwargs)`` and ``raw_env``, as
PettingZoo's own environment modules do, so PettingZoo's and SuperSuit's tools accept it;
``import zooport.adapters.pettingzoo_envs.tag_v0`` and pickled references to its functions
work as for a module file. Keyword arguments named like
:class:`~zooport.adapters.options.PettingZooOptions` fields configure the adapter; all
others go to the environment's constructor. ``zooport.adapters.registration`` registers
them with PettingZoo as ``zooport/<name>-v0``.

Constants:
    ENV_MODULES: the modules' names, in registry order.
"""

from __future__ import annotations

import inspect
import sys
import textwrap
import types

from zooport.adapters.options import PettingZooOptions
from zooport.adapters.registration import (
    builtin_envs,
    pettingzoo_entry_points,
    register_pettingzoo_envs,
)
from zooport.envs.capabilities import keyword_parameters
from zooport.envs.declaration import DeclaredEnvClass

__all__ = ["ENV_MODULES", "register_pettingzoo_envs"]

_DOC = """PettingZoo entry points ``{name}`` for :class:`{path}`.

{summary}

Functions:
    env: a new {env_id} as a PettingZoo AEC environment.
    parallel_env: a new {env_id} as a PettingZoo Parallel environment.
    raw_env: the same as ``env`` (the native AEC adapter needs no wrappers).

{keywords}

Example:
    >>> from zooport.adapters.pettingzoo_envs import {name}
    >>> env = {name}.parallel_env(seed=0)
    >>> observations, infos = env.reset(seed=0)
    >>> str(env), list(observations) == env.agents == env.possible_agents
    ('{name}', True)
    >>> {name}.env(seed=0).metadata["name"]
    '{name}'
"""


def _module(env_id: str, cls: DeclaredEnvClass, name: str) -> types.ModuleType:
    """The entry-point module ``name`` of one built-in, generated from its declaration."""
    qualified = f"{__name__}.{name}"
    summary = (inspect.getdoc(cls) or "").split("\n\n")[0]
    keywords = (
        "Keyword arguments configure the adapter when they are one of "
        ":class:`~zooport.adapters.options.PettingZooOptions` ("
        + ", ".join(f"``{n}``" for n in PettingZooOptions.names())
        + f"); all others go to {env_id} ("
        + ", ".join(f"``{n}``" for n in sorted(keyword_parameters(cls) or ()))
        + ")."
    )
    doc = _DOC.format(
        name=name,
        path=f"{cls.__module__}.{cls.__qualname__}",
        summary=summary,
        env_id=env_id,
        keywords=textwrap.fill(keywords, width=92, break_on_hyphens=False),
    )
    module = types.ModuleType(qualified, doc)
    module.__package__ = __name__
    # A module built at run time: its names are set as attributes.
    entry_points = pettingzoo_entry_points(qualified, env_id, name)
    for attr, value in zip(("env", "parallel_env", "raw_env"), entry_points, strict=True):
        setattr(module, attr, value)
    module.__all__ = ["env", "parallel_env", "raw_env"]  # type: ignore[attr-defined]  # set at run time
    return module


def _generate() -> tuple[str, ...]:
    names = []
    package = sys.modules[__name__]
    for env_id, cls in builtin_envs().items():
        name = cls.declaration.pettingzoo_name
        if name is None:
            continue
        module = _module(env_id, cls, name)
        short = module.__name__.rpartition(".")[2]
        # In sys.modules, ``import zooport.adapters.pettingzoo_envs.<name>`` finds it.
        sys.modules.setdefault(module.__name__, module)
        setattr(package, short, sys.modules[module.__name__])
        names.append(short)
    return tuple(names)


#: The entry-point modules, by their PettingZoo name (registry order).
ENV_MODULES = _generate()
