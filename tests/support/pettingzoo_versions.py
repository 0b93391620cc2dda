"""What the installed PettingZoo's test utilities can do, for tests that also run on the floor.

pyproject promises ``pettingzoo>=1.24``; ``make test-floor`` runs the suite on 1.24.0, whose
checkers and example envs are older than the ones most tests are written against.

Constants and functions:
    PETTINGZOO: the installed version as a tuple of ints.
    DICT_OBS_API_TEST: why ``api_test`` cannot check a Dict observation before 1.25.0, or
        None where it can.
    STUCK_EXAMPLE_AEC_ENV: why ``generated_agents_env_v0`` cannot be played before 1.25.0,
        or None where it can.
    HAS_REGISTRY: whether ``pettingzoo.make`` exists (1.27.0 and later).
    AgentSelector: PettingZoo's turn order helper (``agent_selector`` before 1.25.0).
    parallel_seed_test: PettingZoo's ``parallel_seed_test`` with ``num_cycles`` where it
        takes one (1.24.2 and later; before, it runs its own 500 cycles).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

import pettingzoo
from pettingzoo.test import parallel_seed_test as _parallel_seed_test

__all__ = [
    "PETTINGZOO",
    "DICT_OBS_API_TEST",
    "STUCK_EXAMPLE_AEC_ENV",
    "HAS_REGISTRY",
    "AgentSelector",
    "parallel_seed_test",
]

PETTINGZOO = tuple(int(part) for part in pettingzoo.__version__.split(".")[:3])

DICT_OBS_API_TEST = (
    f"PettingZoo {pettingzoo.__version__}'s api_test reads obs['observation'].dtype of every "
    "Dict observation (fixed in 1.25.0): it fails on a Dict without that key or whose "
    "'observation' is itself a Dict"
    if PETTINGZOO < (1, 25, 0)
    else None
)

STUCK_EXAMPLE_AEC_ENV = (
    f"PettingZoo {pettingzoo.__version__}'s generated_agents_env_v0 never moves agent_selection "
    "on (fixed in 1.25.0): the same agent acts forever and agent_iter() never ends"
    if PETTINGZOO < (1, 25, 0)
    else None
)

HAS_REGISTRY = hasattr(pettingzoo, "make")

_selector_module = importlib.import_module("pettingzoo.utils.agent_selector")
AgentSelector = getattr(_selector_module, "AgentSelector", None) or _selector_module.agent_selector


def parallel_seed_test(parallel_env_fn: Callable[[], Any], num_cycles: int) -> None:
    """``pettingzoo.test.parallel_seed_test``, passing ``num_cycles`` where it is accepted."""
    if "num_cycles" in inspect.signature(_parallel_seed_test).parameters:
        _parallel_seed_test(parallel_env_fn, num_cycles=num_cycles)
    else:
        _parallel_seed_test(parallel_env_fn)
