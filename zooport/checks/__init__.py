"""zooport.checks: every applicable upstream checker on one ``BaseEnv`` factory, isolated.

Classes:
    CheckerResult: the outcome of one checker: pass, fail (with a one-line reason) or skip,
        plus the warnings it raised.
    SuiteReport: every :class:`CheckerResult` of one run; prints as a table.
    SingleAgentPlan: how ``GymEnv`` can serve a factory's environment.

Functions:
    run_checkers: runs zooport's ``check_base_env``, Gymnasium's and SB3's ``check_env`` (on
        ``GymEnv``, where a behaviour can be single-agent) and PettingZoo's
        ``parallel_api_test``, ``api_test``, ``seed_test``, ``parallel_seed_test``,
        ``max_cycles_test``, ``render_test`` and ``state_test`` (on the PettingZoo adapters)
        on environments made by a factory.
    single_agent_plan, agent_counts: which behaviours ``GymEnv`` can serve, and how.
    explain_warning: why a warning is expected (see :data:`EXPLAINED_WARNINGS`).
    one_line: an exception as one line (type, message, and where a bare ``assert`` failed).

This is what ``zooport check`` runs. Its modules, by concern: ``suite`` (``run_checkers``
and each checker), ``report`` (results, the report, explained warnings), ``isolation``
(each checker in its own ``try``/``except``, warnings recorder and time limit) and
``single_agent`` (the plan). ``accepts_keyword`` is importable from here as before; it
lives in :mod:`zooport.envs.capabilities`.
"""

from __future__ import annotations

from zooport.checks.isolation import MAX_TIMEOUT, CheckerTimeout
from zooport.checks.report import (
    CHECKERS,
    EXPLAINED_WARNINGS,
    CheckerResult,
    SuiteReport,
    explain_warning,
    one_line,
)
from zooport.checks.single_agent import SingleAgentPlan, agent_counts, single_agent_plan
from zooport.checks.suite import run_checkers
from zooport.envs.capabilities import accepts_keyword

__all__ = [
    "CHECKERS",
    "CheckerResult",
    "CheckerTimeout",
    "SuiteReport",
    "SingleAgentPlan",
    "run_checkers",
    "single_agent_plan",
    "one_line",
    "accepts_keyword",
    "agent_counts",
    "explain_warning",
    "EXPLAINED_WARNINGS",
    "MAX_TIMEOUT",
]
