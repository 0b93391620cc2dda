"""What ``run_checkers`` reports: one result per checker, and a report that prints.

Classes:
    CheckerResult: the outcome of one checker: pass, fail (with a one-line reason) or skip,
        plus the warnings it raised.
    SuiteReport: every :class:`CheckerResult` of one run; prints as a table.

Functions:
    explain_warning: why a warning is expected (ML-Agents' specs cause some by design).
    one_line: an exception as one line (type, message, and where a bare ``assert`` failed).

Import these from :mod:`zooport.checks`.
"""

from __future__ import annotations

import os
import re
import traceback
from dataclasses import dataclass, field

from zooport.envs.checker import CheckStatus

__all__ = [
    "CHECKERS",
    "EXPLAINED_WARNINGS",
    "CheckerResult",
    "SuiteReport",
    "explain_warning",
    "one_line",
]

#: Every checker, by short name, in report order, with the label printed in reports.
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
    """Why a warning is expected (see :data:`EXPLAINED_WARNINGS`), or None.

    Example:
        >>> explain_warning("Agent's minimum observation space value is -infinity.")[:18]
        "ML-Agents' Observa"
    """
    for pattern, reason in EXPLAINED_WARNINGS:
        if re.match(pattern, message):
            return reason
    return None


@dataclass(frozen=True)
class CheckerResult:
    """One checker's outcome.

    Attributes:
        checker: its short name, a key of :data:`CHECKERS`.
        status: pass, fail or skip.
        message: why it failed or was skipped, one line; empty when it passed.
        target: what it checked when not the whole environment (a behaviour name).
        warnings: the distinct warning messages it raised, in order.
        seconds: how long it ran.
        details: a longer account (``check_base_env``'s full table), or empty.
    """

    checker: str
    status: CheckStatus
    message: str = ""
    target: str | None = None
    warnings: tuple[str, ...] = ()
    seconds: float = 0.0
    details: str = ""

    @property
    def label(self) -> str:
        """The checker's printed name, with its target in brackets."""
        name = _LABELS.get(self.checker, self.checker)
        return name if self.target is None else f"{name} [{self.target}]"


@dataclass
class SuiteReport:
    """Every :class:`CheckerResult` of one :func:`run_checkers` run.

    Example:
        >>> report = SuiteReport("MyEnv", [CheckerResult("gym", CheckStatus.SKIPPED, "why")])
        >>> report.passed, report.rows()
        (True, [('gymnasium check_env', 'skip', '0', 'why')])
    """

    name: str
    results: list[CheckerResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when no checker failed (skipped ones do not count)."""
        return not self.failures

    @property
    def failures(self) -> list[CheckerResult]:
        """The failed checkers."""
        return [r for r in self.results if r.status is CheckStatus.FAILED]

    def rows(self) -> list[tuple[str, str, str, str]]:
        """``(checker, status, number of warnings, message)`` per checker, for a table."""
        return [(r.label, r.status.value, str(len(r.warnings)), r.message) for r in self.results]

    def format(self, *, show_warnings: bool = True) -> str:
        """The report as a plain-text table, then each checker's warnings.

        Example:
            >>> ok = CheckerResult("state", CheckStatus.PASSED, warnings=("w",))
            >>> print(SuiteReport("E", [ok]).format())
            E: PASSED (1 passed, 0 failed, 0 skipped)
            checker               status  warnings  message
            pettingzoo state_test pass    1
            warnings:
              pettingzoo state_test: w
        """
        counts = {s: sum(r.status is s for r in self.results) for s in CheckStatus}
        lines = [
            f"{self.name}: {'PASSED' if self.passed else 'FAILED'} "
            f"({counts[CheckStatus.PASSED]} passed, {counts[CheckStatus.FAILED]} failed, "
            f"{counts[CheckStatus.SKIPPED]} skipped)"
        ]
        rows = [("checker", "status", "warnings", "message"), *self.rows()]
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        for row in rows:
            cells = [cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)]
            lines.append(" ".join(cells[:1]) + " " + "  ".join([*cells[1:], row[3]]).rstrip())
        if show_warnings:
            lines += self.warning_lines()
        return "\n".join(lines)

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

    def __str__(self) -> str:
        return self.format()


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
