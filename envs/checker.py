"""``check_base_env``, the conformance check of any ML-Agents-style ``BaseEnv`` (its run is in
``_checker_run``), and the result and report types ``zooport.checks.run_checkers`` shares."""

from __future__ import annotations

import contextlib
import enum
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, ClassVar

from zooport.envs._checker_run import Behavior, Run, one_line
from zooport.envs.arguments import check_int
from zooport.envs.base_env import BaseEnv
from zooport.envs.capabilities import is_seedable
from zooport.errors import ZooportError

__all__ = [
    "CHECKERS", "CHECKS", "EXPLAINED_WARNINGS", "CheckerResult", "CheckStatus", "CheckResult",
    "CheckReport", "ConformanceError", "SuiteReport", "check_base_env", "explain_warning",
    "one_line",
]  # fmt: skip

_ENV_CHECKS = ("reset", "behavior_specs", "step")
_BEHAVIOR_CHECKS = (
    "behavior_spec", "steps_format", "agent_ids", "action_masks", "empty_batches",
    "random_actions",
)  # fmt: skip
CHECKS: tuple[str, ...] = (*_ENV_CHECKS, *_BEHAVIOR_CHECKS, "determinism")

#: Every checker of :func:`~zooport.checks.run_checkers` in report order, with its label.
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

#: Warnings ML-Agents' specs cause by design (regex, reason): no failure as warnings_as_errors.
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


class CheckStatus(str, enum.Enum):
    """The outcome of one check."""

    PASSED = "pass"
    FAILED = "fail"
    SKIPPED = "skip"


@dataclass(frozen=True)
class CheckResult:
    """One check of one behaviour (None: of the environment), or one checker of ``run_checkers``."""

    check: str
    behavior: str | None
    status: CheckStatus
    message: str = ""
    warnings: tuple[str, ...] = ()
    seconds: float = 0.0
    details: str = ""

    checker = property(attrgetter("check"))  # the names of run_checkers' results
    target = property(attrgetter("behavior"))

    @property
    def label(self) -> str:
        name = _LABELS.get(self.check, self.check)
        return name if self.behavior is None else f"{name} [{self.behavior}]"

    def __str__(self) -> str:
        note = f": {self.message}" if self.message else ""
        return f"{self.status.value.upper()} {self.label}{note}"


class CheckerResult(CheckResult):
    """A :class:`CheckResult` in ``run_checkers``' argument order."""

    def __init__(
        self,
        checker: str,
        status: CheckStatus,
        message: str = "",
        target: str | None = None,
        warnings: tuple[str, ...] = (),
        seconds: float = 0.0,
        details: str = "",
    ) -> None:
        super().__init__(checker, target, status, message, warnings, seconds, details)


@dataclass
class CheckReport:
    """Every :class:`CheckResult` of one ``check_base_env`` run."""

    env_name: str
    results: list[CheckResult] = field(default_factory=list)
    _columns: ClassVar[tuple[str, ...]] = ("check", "behavior", "status", "message")

    @property
    def passed(self) -> bool:
        """True when nothing failed (skipped checks do not count)."""
        return not self.failures

    @property
    def failures(self) -> list[Any]:
        return [r for r in self.results if r.status is CheckStatus.FAILED]

    def rows(self) -> list[tuple[str, ...]]:
        return [(r.check, r.behavior or "-", r.status.value, r.message) for r in self.results]

    def _title(self) -> str:
        return f"{self.env_name}: {'PASSED' if self.passed else 'FAILED'}"

    def format(self, *, show_warnings: bool = True) -> str:
        """The report as a plain-text table, then (``show_warnings``) the warnings."""
        rows, gaps = [self._columns, *self.rows()], (" ", "  ", "  ")
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        lines = [self._title()]
        for row in rows:
            cells = [c.ljust(w) + g for c, w, g in zip(row, widths, gaps, strict=False)]
            lines.append(("".join(cells) + row[3]).rstrip())
        return "\n".join(lines + self.warning_lines() if show_warnings else lines)

    def warning_lines(self) -> list[str]:
        """``"warnings:"`` then one line per warning (with why where expected), or nothing."""
        lines = []
        for result in self.results:
            for message in result.warnings:
                reason = explain_warning(message)
                note = f" [expected: {reason}]" if reason else ""
                lines.append(f"  {result.label}: {message}{note}")
        return ["warnings:", *lines] if lines else []

    def __str__(self) -> str:
        return self.format()


class SuiteReport(CheckReport):
    """Every :class:`CheckerResult` of one :func:`~zooport.checks.run_checkers` run."""

    _columns = ("checker", "status", "warnings", "message")
    name = property(attrgetter("env_name"))

    def rows(self) -> list[tuple[str, ...]]:
        return [(r.label, r.status.value, str(len(r.warnings)), r.message) for r in self.results]

    def _title(self) -> str:
        passed, failed, skipped = (sum(r.status is s for r in self.results) for s in CheckStatus)
        verdict = "PASSED" if self.passed else "FAILED"
        return f"{self.name}: {verdict} ({passed} passed, {failed} failed, {skipped} skipped)"


class ConformanceError(ZooportError, AssertionError):
    """An environment failed a conformance check; ``report`` holds every result."""

    def __init__(self, message: str, report: CheckReport | None = None) -> None:
        super().__init__(message)
        self.report = report


@contextlib.contextmanager
def closing(env: Any) -> Iterator[Any]:
    """``env``, closed when the block ends; a ``close()`` that raises is ignored."""
    try:
        yield env
    finally:
        with contextlib.suppress(Exception):
            env.close()


def _verdict(state: Behavior, check: str, steps: int) -> tuple[CheckStatus, str]:
    if check in state.failures:
        first, *more = state.failures[check]
        return CheckStatus.FAILED, first + (f" (and {len(more)} more)" if more else "")
    if "behavior_spec" in state.failures:
        return CheckStatus.SKIPPED, "behavior_spec failed"
    if check == "action_masks" and not state.branches:
        return CheckStatus.SKIPPED, "no discrete branches"
    if check == "action_masks" and not state.masks_seen:
        return CheckStatus.PASSED, "no masks provided"
    if check == "empty_batches" and not state.empty_seen:
        return CheckStatus.SKIPPED, "no empty batch occurred"
    if check == "random_actions" and not state.actions_set:
        return CheckStatus.SKIPPED, "no batch could be acted on" if steps else "no step taken"
    return CheckStatus.PASSED, ""


def check_base_env(
    env: BaseEnv,
    *,
    steps: int = 200,
    seed: int = 0,
    check_determinism: bool | None = None,
    make_env: Callable[[], BaseEnv] | None = None,
    strict: bool = True,
) -> CheckReport:
    """Checks ``env`` against the ``BaseEnv`` contract (:data:`CHECKS`) over ``steps`` random
    steps; determinism (None: with ``make_env`` or if seedable); ``strict``: raise failures."""
    run = Run(env, check_int(steps, "steps"), seed)
    report = CheckReport(type(env).__name__)
    behaviors = f"{len(run.behaviors)} behavior(s): {list(run.behaviors)}"
    notes = {"behavior_specs": behaviors, "step": f"{steps} step(s)"}
    stopped_at = None
    for check in _ENV_CHECKS:  # a check that fails stops the later ones
        if check in run.env_failures:
            stopped_at = check
            outcome = CheckStatus.FAILED, run.env_failures[check]
        elif stopped_at is not None:
            outcome = CheckStatus.SKIPPED, f"{stopped_at} failed"
        else:
            outcome = CheckStatus.PASSED, notes.get(check, "")
        report.results.append(CheckResult(check, None, *outcome))
    for state in run.behaviors.values():
        for check in _BEHAVIOR_CHECKS:
            report.results.append(CheckResult(check, state.name, *_verdict(state, check, steps)))
    report.results.append(
        CheckResult("determinism", *_determinism(env, run, check_determinism, make_env))
    )
    failures = report.failures
    if strict and failures:
        listing = "\n".join(f"  - {f.message}" for f in failures)
        raise ConformanceError(
            f"{report.env_name} failed {len(failures)} conformance check(s):\n{listing}",
            report=report,
        )
    return report


def _determinism(
    env: Any, first: Run, requested: bool | None, make_env: Callable[[], BaseEnv] | None
) -> tuple[str | None, CheckStatus, str]:
    if not (requested if requested is not None else make_env is not None or is_seedable(env)):
        reason = "disabled" if requested is False else "env is not seedable and no make_env given"
        return None, CheckStatus.SKIPPED, reason
    if make_env is None and not first.completed:
        return None, CheckStatus.SKIPPED, "the first run did not complete"
    runs = [first] if make_env is None else []
    while len(runs) < 2:
        try:
            core = contextlib.nullcontext(env) if make_env is None else closing(make_env())
        except Exception as error:
            return None, CheckStatus.FAILED, f"determinism: make_env() raised {one_line(error)}"
        with core as made:
            runs.append(Run(made, first.steps, first.seed))
        if not runs[-1].completed:  # only an env failure stops a run
            failed = f"run {len(runs)} did not complete: {[*runs[-1].env_failures.values()]}"
            return None, CheckStatus.FAILED, f"determinism: {failed}"
    a, b, seed = runs[0].trace, runs[1].trace, first.seed
    for (t, name, what, was), right in zip(a, b, strict=False):
        if (t, name, what) != right[:3]:
            detail = f"run 1 produced {(t, name, what)} where run 2 produced {right[:3]}"
        elif was != right[3]:
            detail = f"expected {was} (run 1), got {right[3]} (run 2)"
        else:
            continue
        message = f"{what} differs between two runs with seed {seed}: {detail}"
        return name, CheckStatus.FAILED, f"determinism: behavior {name!r}, step {t}, {message}"
    if len(a) != len(b):
        counts = f"{len(a)} and {len(b)}"
        message = f"expected the same number of arrays in both runs with seed {seed}, got {counts}"
        return None, CheckStatus.FAILED, f"determinism: {message}"
    return None, CheckStatus.PASSED, f"{len(a)} arrays identical in two runs"
