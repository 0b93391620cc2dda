"""``check_base_env`` steps any ML-Agents-style ``BaseEnv`` with random actions that respect its
masks, checks every batch against its spec and that two runs with one seed agree; the results
and reports of it and of :func:`zooport.checks.run_checkers` live here."""

from __future__ import annotations

import contextlib
import enum
import os
import re
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from zooport.envs.base_env import BaseEnv
from zooport.envs.capabilities import is_seedable
from zooport.envs.checker_run import BEHAVIOR_CHECKS, ENV_CHECKS, CheckerRun, describe
from zooport.errors import ArgumentError, ZooportError

__all__ = [
    "CHECKERS",
    "CHECKS",
    "EXPLAINED_WARNINGS",
    "CheckerResult",
    "CheckStatus",
    "CheckResult",
    "CheckReport",
    "ConformanceError",
    "SuiteReport",
    "check_base_env",
    "explain_warning",
    "one_line",
]

_R = TypeVar("_R", "CheckResult", "CheckerResult")  # a result of either checker

#: Every check, in report order.
CHECKS: tuple[str, ...] = (*ENV_CHECKS, *BEHAVIOR_CHECKS, "determinism")


class CheckStatus(str, enum.Enum):
    """The outcome of one check."""

    PASSED = "pass"
    FAILED = "fail"
    SKIPPED = "skip"


@dataclass(frozen=True)
class CheckResult:
    """One check (one of :data:`CHECKS`) of one behaviour, or of the whole environment
    (``behavior=None``), and why it failed or was skipped."""

    check: str
    behavior: str | None
    status: CheckStatus
    message: str = ""

    def __str__(self) -> str:
        where = "" if self.behavior is None else f" [{self.behavior}]"
        note = f": {self.message}" if self.message else ""
        return f"{self.status.value.upper()} {self.check}{where}{note}"


class _Report(Generic[_R]):  # what both reports share
    results: list[_R]

    @property
    def passed(self) -> bool:
        """True when nothing failed (skipped checks do not count)."""
        return not self.failures

    @property
    def failures(self) -> list[_R]:
        return [r for r in self.results if r.status is CheckStatus.FAILED]

    def format(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.format()


def _table(rows: Sequence[tuple[str, ...]], gaps: tuple[str, ...]) -> list[str]:
    """Rows as lines, each column but the last padded to its width and followed by its gap."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(gaps))]
    return [
        "".join(c.ljust(w) + g for c, w, g in zip(row, widths, gaps, strict=False))
        .__add__(row[-1])
        .rstrip()
        for row in rows
    ]


@dataclass
class CheckReport(_Report[CheckResult]):
    """Every :class:`CheckResult` of one :func:`check_base_env` run."""

    env_name: str
    results: list[CheckResult] = field(default_factory=list)

    def rows(self) -> list[tuple[str, str, str, str]]:
        """``(check, behaviour or '-', status, message)`` per result, for a table."""
        return [(r.check, r.behavior or "-", r.status.value, r.message) for r in self.results]

    def format(self) -> str:
        rows = [("check", "behavior", "status", "message"), *self.rows()]
        title = f"{self.env_name}: {'PASSED' if self.passed else 'FAILED'}"
        return "\n".join([title, *_table(rows, ("  ", "  ", "  "))])

    def raise_if_failed(self) -> None:
        """Raises :class:`ConformanceError` listing every failed check, if any failed."""
        failures = self.failures
        if failures:
            listing = "\n".join(f"  - {f.message}" for f in failures)
            raise ConformanceError(
                f"{self.env_name} failed {len(failures)} conformance check(s):\n{listing}",
                report=self,
            )


class ConformanceError(ZooportError, AssertionError):
    """An environment failed a conformance check; ``report`` holds every result."""

    def __init__(self, message: str, report: CheckReport | None = None) -> None:
        super().__init__(message)
        self.report = report


#: Every checker, by short name, in report order, with the label printed in reports.
CHECKERS: dict[str, str] = {
    "base_env": "zooport check_base_env",
    "gym": "gymnasium check_env",
    "sb3": "sb3 check_env",
    "parallel_api": "pettingzoo parallel_api_test",
    "aec_api": "pettingzoo api_test",
    "seed": "pettingzoo seed_test",
    "parallel_seed": "pettingzoo parallel_seed_test",
    "max_cycles": "pettingzoo max_cycles_test",
    "render": "pettingzoo render_test",
    "state": "pettingzoo state_test",
}

_LABELS = {**CHECKERS, "construct": "construct (the factory)"}
_MESSAGE_LIMIT = 300

#: Warnings that ML-Agents' specs cause by design: (message regex, reason). They are
#: reported with the reason and do not fail a checker under ``warnings_as_errors``.
EXPLAINED_WARNINGS: tuple[tuple[str, str], ...] = (
    (
        r"(WARN: )?(A Box observation space|Agent's|Environment's) (minimum|maximum) "
        r"(observation |state )?(space )?value is -?infinity",
        "ML-Agents' ObservationSpec has no bounds, so vector observations are Box(-inf, inf)",
    ),
    (
        r"(WARN: )?Not able to test alternative render modes due to the environment not "
        r"having a spec",
        "the adapter is checked directly, not through gym.make",
    ),
    (
        r"Observation is not a NumPy array|Observation space for each agent probably should be",
        "several observations, or an action mask, make a Dict observation by design",
    ),
    (
        r"Action space for each agent probably should be|The action space is not based off a "
        r"numpy array",
        "hybrid actions are a Dict(continuous, discrete) by design",
    ),
)


def explain_warning(message: str) -> str | None:
    """Why a warning is expected (see :data:`EXPLAINED_WARNINGS`), or None."""
    for pattern, reason in EXPLAINED_WARNINGS:
        if re.match(pattern, message):
            return reason
    return None


@dataclass(frozen=True)
class CheckerResult:
    """One checker's outcome: ``checker`` is a key of :data:`CHECKERS`, ``target`` the
    behaviour it checked (None: the environment), ``warnings`` the distinct warnings it
    raised, ``details`` a longer account (``check_base_env``'s table)."""

    checker: str
    status: CheckStatus
    message: str = ""
    target: str | None = None
    warnings: tuple[str, ...] = ()
    seconds: float = 0.0
    details: str = ""

    @property
    def label(self) -> str:
        name = _LABELS.get(self.checker, self.checker)
        return name if self.target is None else f"{name} [{self.target}]"


@dataclass
class SuiteReport(_Report[CheckerResult]):
    """Every :class:`CheckerResult` of one :func:`~zooport.checks.run_checkers` run.

    Example:
        >>> ok = CheckerResult("state", CheckStatus.PASSED, warnings=("w",))
        >>> print(SuiteReport("E", [ok]).format())
        E: PASSED (1 passed, 0 failed, 0 skipped)
        checker               status  warnings  message
        pettingzoo state_test pass    1
        warnings:
          pettingzoo state_test: w
    """

    name: str
    results: list[CheckerResult] = field(default_factory=list)

    def rows(self) -> list[tuple[str, str, str, str]]:
        return [(r.label, r.status.value, str(len(r.warnings)), r.message) for r in self.results]

    def format(self, *, show_warnings: bool = True) -> str:
        """The report as a plain-text table, then (``show_warnings``) each checker's warnings."""
        counts = [sum(r.status is s for r in self.results) for s in CheckStatus]
        title = (
            f"{self.name}: {'PASSED' if self.passed else 'FAILED'} ({counts[0]} passed, "
            f"{counts[1]} failed, {counts[2]} skipped)"
        )
        rows = [("checker", "status", "warnings", "message"), *self.rows()]
        lines = [title, *_table(rows, (" ", "  ", "  "))]
        return "\n".join(lines + self.warning_lines() if show_warnings else lines)

    def warning_lines(self) -> list[str]:
        """``"warnings:"`` then one line per checker and warning (with the expected ones'
        reason); empty when no checker warned."""
        lines = []
        for result in self.results:
            for message in result.warnings:
                reason = explain_warning(message)
                note = f" [expected: {reason}]" if reason else ""
                lines.append(f"  {result.label}: {message}{note}")
        return ["warnings:", *lines] if lines else []


def one_line(error: BaseException) -> str:
    """``"<Type>: <message>"`` on one line; a bare ``assert`` names its file, line and source.

    Example:
        >>> one_line(ValueError("expected 3,\\n got 4"))
        'ValueError: expected 3, got 4'
    """
    message = " ".join(str(error).split())
    if not message:
        frames = traceback.extract_tb(error.__traceback__)
        if frames:
            last = frames[-1]
            source = f": {last.line}" if last.line else ""
            message = f"at {os.path.basename(last.filename)}:{last.lineno}{source}"
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    if len(text) > _MESSAGE_LIMIT:
        text = text[: _MESSAGE_LIMIT - 3] + "..."
    return text


def check_base_env(
    env: BaseEnv,
    *,
    steps: int = 200,
    seed: int = 0,
    check_determinism: bool | None = None,
    make_env: Callable[[], BaseEnv] | None = None,
    strict: bool = True,
) -> CheckReport:
    """Checks that ``env`` follows the ``BaseEnv`` contract, returning one result per check.

    ``env`` is reset (with ``seed`` if seedable), stepped ``steps`` times with random actions
    from ``numpy.random.default_rng(seed)`` and left open. The checks (:data:`CHECKS`):
    ``reset``, ``behavior_specs`` and ``step`` run, with at least one behaviour; per behaviour
    ``behavior_spec`` (positive int shapes, one dimension property per dimension, a valid
    action spec), ``steps_format`` (float32 ``(n, *shape)`` observations, float32 ``(n,)``
    rewards and group rewards, int ids, bool ``interrupted``, all finite), ``agent_ids``
    (unique in a batch; a terminal id decided before), ``action_masks`` (None or one
    ``(n, branch_size)`` bool array per branch, never all masked), ``empty_batches`` and
    ``random_actions`` (``set_actions`` and, on alternate steps, ``set_action_for_agent``);
    last ``determinism``: two runs with ``seed`` (``None``: when ``make_env`` is given or
    ``env`` is seedable) of two fresh ``make_env()`` instances, or of ``env`` reset again.
    ``strict``: raise :class:`ConformanceError` when a check fails.

    Example:
        >>> from zooport.envs.builtin.basic import Basic
        >>> report = check_base_env(Basic(), steps=20)
        >>> report.passed, len(report.results)
        (True, 10)
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ArgumentError(f"Expect steps to be a non-negative int, actually: {steps!r}")
    report = CheckReport(type(env).__name__)
    run = CheckerRun(env, steps, seed)
    run.execute()
    report.results += [CheckResult(c, b, CheckStatus(s), m) for c, b, s, m in run.results()]
    report.results.append(_check_determinism(env, run, steps, seed, check_determinism, make_env))
    if strict:
        report.raise_if_failed()
    return report


def _check_determinism(
    env: Any,
    first: CheckerRun,
    steps: int,
    seed: int,
    requested: bool | None,
    make_env: Callable[[], BaseEnv] | None,
) -> CheckResult:
    enabled = requested if requested is not None else (make_env is not None or is_seedable(env))
    if not enabled:
        reason = "disabled" if requested is False else "env is not seedable and no make_env given"
        return CheckResult("determinism", None, CheckStatus.SKIPPED, reason)
    if make_env is None and not first.completed:
        return CheckResult(
            "determinism", None, CheckStatus.SKIPPED, "the first run did not complete"
        )
    runs, made = ([first] if make_env is None else []), []
    try:
        while len(runs) < 2:
            if make_env is not None:
                try:
                    made.append(make_env())
                except Exception as error:
                    return CheckResult(
                        "determinism", None, CheckStatus.FAILED,
                        f"determinism: make_env() raised {describe(error)}",
                    )  # fmt: skip
            run = CheckerRun(made[-1] if made else env, steps, seed)
            run.execute()
            if not run.completed:
                failures = [*run.env_failures.values()]
                failures += [m for s in run.behaviors.values() for m in s.first.values()]
                return CheckResult(
                    "determinism", None, CheckStatus.FAILED,
                    f"determinism: run {len(runs) + 1} did not complete: {failures[:1]}",
                )  # fmt: skip
            runs.append(run)
    finally:
        for fresh in made:
            with contextlib.suppress(Exception):  # closing is best effort
                fresh.close()
    return _compare_traces(runs[0].trace, runs[1].trace, seed)


def _compare_traces(a: list, b: list, seed: int) -> CheckResult:
    for left, right in zip(a, b, strict=False):
        if left != right:
            t, name, what, expected = left
            if right[:3] != left[:3]:
                detail = f"run 1 produced {left[:3]} where run 2 produced {right[:3]}"
            else:
                detail = (
                    f"expected {_fingerprint(expected)} (run 1), got {_fingerprint(right[3])} "
                    f"(run 2)"
                )
            return CheckResult(
                "determinism", name, CheckStatus.FAILED,
                f"determinism: behavior {name!r}, step {t}, {what} differs between two runs "
                f"with seed {seed}: {detail}",
            )  # fmt: skip
    if len(a) != len(b):
        return CheckResult(
            "determinism", None, CheckStatus.FAILED,
            f"determinism: expected the same number of arrays in both runs with seed {seed}, "
            f"got {len(a)} and {len(b)}",
        )  # fmt: skip
    return CheckResult(
        "determinism", None, CheckStatus.PASSED, f"{len(a)} arrays identical in two runs"
    )


def _fingerprint(digest: tuple[Any, ...]) -> str:
    if len(digest) != 4:
        return str(digest[1])
    shape, dtype, content, preview = digest
    return f"shape {shape} {dtype} starting {preview} (hash {content[:8]})"
