"""The upstream checkers, run with their warnings held to an allow-list.

A warning fails the suite (pyproject's ``filterwarnings = error``) unless a test allows it
by pattern, with the reason beside the pattern where the pattern is declared.

Functions:
    run_allowing: runs a checker; every warning it gives must match an allowed pattern.
    run_parallel_api_test: PettingZoo's ``parallel_api_test``, no warning allowed unless told.
    check_gym: Gymnasium's ``check_env``, allowing :data:`GYM_CHECK_ALLOWED`.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["GYM_CHECK_ALLOWED", "check_gym", "run_allowing", "run_parallel_api_test"]


def run_allowing(
    allowed: Iterable[str], check: Callable[..., Any], *args: Any, **kwargs: Any
) -> set[str]:
    """Runs ``check(*args, **kwargs)`` recording every warning; one that matches none of the
    ``allowed`` regexes (``re.search``) fails the test. Returns the patterns that matched a
    warning (so a test can tell that its allow-list is not stale)."""
    allowed = list(allowed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check(*args, **kwargs)
    messages = [str(w.message) for w in caught]
    unexpected = sorted({m for m in messages if not any(re.search(a, m) for a in allowed)})
    assert not unexpected, f"unexpected warnings: {unexpected}"
    return {a for a in allowed if any(re.search(a, m) for m in messages)}


def run_parallel_api_test(env: Any, num_cycles: int = 40, allowed: Iterable[str] = ()) -> None:
    """PettingZoo's parallel_api_test; a warning matching none of ``allowed`` fails."""
    from pettingzoo.test import parallel_api_test

    run_allowing(allowed, parallel_api_test, env, num_cycles=num_cycles)


#: Warnings Gymnasium's check_env may give on zooport-built envs, with the reason each is fine.
GYM_CHECK_ALLOWED = {
    "is different from the unwrapped version": "check_env warns on every wrapped env, and the "
    "wrapper is what is being checked",
    "infinity": "vector observations have no bounds in ML-Agents' spec: Box(-inf, inf)",
}


def check_gym(env: Any, allowed: Mapping[str, str] = GYM_CHECK_ALLOWED) -> None:
    """Gymnasium's check_env; a warning matching none of ``allowed`` (pattern -> reason) fails."""
    from gymnasium.utils.env_checker import check_env

    run_allowing(allowed, check_env, env, skip_render_check=True)
