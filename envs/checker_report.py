"""What ``check_base_env`` reports: one result per check and behaviour.

Classes:
    CheckStatus: the outcome of one check (``pass``, ``fail``, ``skip``).
    CheckResult: one check of one behaviour (or of the whole environment), with a reason.
    CheckReport: every result of a run; prints as a table, ``raise_if_failed()``.
    ConformanceError: raised when a check fails (a ``ZooportError`` and an ``AssertionError``).

Import these from :mod:`zooport.envs.checker`, which runs the checks.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from zooport.errors import ZooportError

__all__ = [
    "CHECKS",
    "ENV_CHECKS",
    "BEHAVIOR_CHECKS",
    "CheckStatus",
    "CheckResult",
    "CheckReport",
    "ConformanceError",
]

ENV_CHECKS = ("reset", "behavior_specs", "step")
BEHAVIOR_CHECKS = (
    "behavior_spec", "steps_format", "agent_ids", "action_masks", "empty_batches",
    "random_actions",
)  # fmt: skip
#: Every check, in report order.
CHECKS: tuple[str, ...] = (*ENV_CHECKS, *BEHAVIOR_CHECKS, "determinism")


class CheckStatus(str, enum.Enum):
    """The outcome of one check."""

    PASSED = "pass"
    FAILED = "fail"
    SKIPPED = "skip"


@dataclass(frozen=True)
class CheckResult:
    """One check, of one behaviour or (``behavior=None``) of the whole environment.

    Attributes:
        check: the check's name, one of :data:`CHECKS`.
        behavior: the behaviour checked, or None for an environment-wide check.
        status: pass, fail or skip.
        message: why it failed or was skipped (expected vs actual), or a short note.
    """

    check: str
    behavior: str | None
    status: CheckStatus
    message: str = ""

    def __str__(self) -> str:
        where = "" if self.behavior is None else f" [{self.behavior}]"
        note = f": {self.message}" if self.message else ""
        return f"{self.status.value.upper()} {self.check}{where}{note}"


@dataclass
class CheckReport:
    """Every :class:`CheckResult` of one :func:`check_base_env` run.

    Example:
        >>> report = CheckReport("MyEnv", [CheckResult("reset", None, CheckStatus.PASSED)])
        >>> report.passed, report.rows()
        (True, [('reset', '-', 'pass', '')])
    """

    env_name: str
    results: list[CheckResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when no check failed (skipped checks do not count)."""
        return not self.failures

    @property
    def failures(self) -> list[CheckResult]:
        """The failed checks."""
        return [r for r in self.results if r.status is CheckStatus.FAILED]

    def rows(self) -> list[tuple[str, str, str, str]]:
        """``(check, behaviour or '-', status, message)`` per result, for a table."""
        return [(r.check, r.behavior or "-", r.status.value, r.message) for r in self.results]

    def format(self) -> str:
        """The report as a plain-text table."""
        rows = [("check", "behavior", "status", "message"), *self.rows()]
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        lines = [f"{self.env_name}: {'PASSED' if self.passed else 'FAILED'}"]
        for row in rows:
            cells = [cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)]
            lines.append("  ".join([*cells, row[3]]).rstrip())
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()

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
