"""The results and reports of both checkers, :func:`~zooport.envs.checker.check_base_env` and
:func:`~zooport.checks.run_checkers`, and the helpers both suites share."""

from __future__ import annotations

import contextlib
import enum
import os
import re
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from zooport.errors import ZooportError

__all__ = [
    "CHECKERS",
    "EXPLAINED_WARNINGS",
    "CheckerResult",
    "CheckStatus",
    "CheckResult",
    "CheckReport",
    "ConformanceError",
    "SuiteReport",
    "explain_warning",
    "one_line",
]

_R = TypeVar("_R", "CheckResult", "CheckerResult")
_MESSAGE_LIMIT = 300


class CheckStatus(str, enum.Enum):
    """The outcome of one check."""

    PASSED = "pass"
    FAILED = "fail"
    SKIPPED = "skip"


@dataclass(frozen=True)
class CheckResult:
    """One check of one behaviour, or of the whole environment (``behavior=None``)."""

    check: str
    behavior: str | None
    status: CheckStatus
    message: str = ""

    def __str__(self) -> str:
        where = "" if self.behavior is None else f" [{self.behavior}]"
        note = f": {self.message}" if self.message else ""
        return f"{self.status.value.upper()} {self.check}{where}{note}"


class _Report(Generic[_R]):
    results: list[_R]

    @property
    def passed(self) -> bool:
        """True when nothing failed (skipped checks do not count)."""
        return not self.failures

    @property
    def failures(self) -> list[_R]:
        return [r for r in self.results if r.status is CheckStatus.FAILED]

    def _title(self, name: str) -> str:
        return f"{name}: {'PASSED' if self.passed else 'FAILED'}"

    def format(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.format()


def _table(rows: Sequence[tuple[str, ...]], gaps: tuple[str, ...]) -> list[str]:
    """Rows as lines, each column but the last padded to its width and followed by its gap."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(gaps))]
    padded = [
        "".join(c.ljust(w) + g for c, w, g in zip(r, widths, gaps, strict=False)) for r in rows
    ]
    return [(line + row[-1]).rstrip() for line, row in zip(padded, rows, strict=True)]


@dataclass
class CheckReport(_Report[CheckResult]):
    """Every :class:`CheckResult` of one ``check_base_env`` run."""

    env_name: str
    results: list[CheckResult] = field(default_factory=list)

    def rows(self) -> list[tuple[str, str, str, str]]:
        """``(check, behaviour or '-', status, message)`` per result, for a table."""
        return [(r.check, r.behavior or "-", r.status.value, r.message) for r in self.results]

    def format(self) -> str:
        rows = [("check", "behavior", "status", "message"), *self.rows()]
        return "\n".join([self._title(self.env_name), *_table(rows, ("  ", "  ", "  "))])

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
    return next(
        (reason for pattern, reason in EXPLAINED_WARNINGS if re.match(pattern, message)), None
    )


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
        passed, failed, skipped = (sum(r.status is s for r in self.results) for s in CheckStatus)
        title = f"{self._title(self.name)} ({passed} passed, {failed} failed, {skipped} skipped)"
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
    frames = [] if message else traceback.extract_tb(error.__traceback__)
    if frames:
        last = frames[-1]
        source = f": {last.line}" if last.line else ""
        message = f"at {os.path.basename(last.filename)}:{last.lineno}{source}"
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 3] + "..."


def close_quietly(env: Any) -> None:
    """Closes ``env`` (None is nothing to close): a broken env failing to close hides nothing."""
    with contextlib.suppress(Exception):
        if env is not None:
            env.close()
