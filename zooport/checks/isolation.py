"""Checkers run one by one, each isolated: nothing it raises, prints or warns escapes.

Classes:
    CheckerTimeout: raised inside a checker that ran out of time (a ``BaseException``).
    Runner: runs checkers, each in its own ``try``/``except``, warnings recorder and time
        limit, and collects their :class:`~zooport.checks.report.CheckerResult`.

Functions:
    close_quietly: closes an environment; a failure to close never hides a result.

With a ``timeout``, a checker still running after that many seconds is interrupted and
fails (on POSIX, from the main thread: the limit is a ``SIGALRM`` timer; elsewhere there is
none).
"""

from __future__ import annotations

import contextlib
import io
import re
import signal
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

from zooport.checks.report import CheckerResult, explain_warning, one_line
from zooport.envs.checker import CheckStatus

__all__ = ["MAX_TIMEOUT", "CheckerTimeout", "Runner", "close_quietly"]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def close_quietly(env: Any) -> None:
    """Closes ``env`` (None is nothing to close), ignoring what closing raises."""
    # A broken environment may also fail to close; that must not hide the real result.
    with contextlib.suppress(Exception):
        if env is not None:
            env.close()


class CheckerTimeout(BaseException):
    """Raised inside a checker that ran out of time.

    A ``BaseException``, like ``KeyboardInterrupt``: the ``except Exception`` of a checker or
    an environment does not swallow it.
    """


#: The longest ``timeout`` (seconds): what ``signal.setitimer`` takes on every platform
#: (a 32-bit ``time_t``), about 68 years. Beyond it, ask for no limit (None; ``--timeout 0``).
MAX_TIMEOUT = 2**31 - 1


def _time_limit_supported() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def _time_limit(seconds: float | None):
    """Raises :class:`CheckerTimeout` in the block after ``seconds`` (None: no limit).

    The timer repeats every 0.1 s after it first fires, so a block that catches the first
    timeout with a bare ``except`` is interrupted again. Without ``signal.setitimer`` (Windows)
    or off the main thread the block runs without a limit.
    """
    if seconds is None or not _time_limit_supported():
        yield
        return

    armed = [True]

    def expire(signum: int, frame: Any) -> None:
        if armed[0]:
            raise CheckerTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.1)
    try:
        yield
    finally:
        # A timeout may land on any line of this cleanup; it is then simply redone (every
        # step is idempotent), and once disarmed the handler raises no more.
        while True:
            try:
                armed[0] = False
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
                break
            except CheckerTimeout:
                continue


class Runner:
    """Runs checkers one by one, each in its own try/except and warnings recorder."""

    def __init__(self, warnings_as_errors: bool, timeout: float | None = None) -> None:
        self.results: list[CheckerResult] = []
        self.warnings_as_errors = warnings_as_errors
        self.timeout = timeout

    def skip(self, checker: str, reason: str, target: str | None = None) -> None:
        self.results.append(CheckerResult(checker, CheckStatus.SKIPPED, reason, target))

    def run(
        self,
        checker: str,
        check: Callable[[], str | None | tuple[str | None, str]],
        target: str | None = None,
    ) -> CheckerResult:
        """Runs ``check``; it returns None (pass), or a failure reason, or raises (fail).

        ``check`` may also return ``(outcome, details)``: the outcome as above, and details
        the report keeps beside it.
        """
        status, message, details = CheckStatus.PASSED, "", ""
        began = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with _time_limit(self.timeout), contextlib.redirect_stdout(io.StringIO()):
                    outcome = check()
            except CheckerTimeout:
                status = CheckStatus.FAILED
                message = f"did not finish within the time limit of {self.timeout:g} s"
            except Exception as exc:  # a checker crashing is that checker's failure
                status, message = CheckStatus.FAILED, one_line(exc)
            else:
                if isinstance(outcome, tuple):
                    outcome, details = outcome
                if outcome:
                    status, message = CheckStatus.FAILED, outcome
        seen = dict.fromkeys(_ANSI.sub("", " ".join(str(w.message).split())) for w in caught)
        warned = tuple(seen)
        unexplained = [w for w in warned if explain_warning(w) is None]
        if unexplained and self.warnings_as_errors and status is CheckStatus.PASSED:
            status = CheckStatus.FAILED
            message = f"{len(unexplained)} unexpected warning(s), first: {unexplained[0]}"
        result = CheckerResult(
            checker, status, message, target, warned, time.perf_counter() - began, details
        )
        self.results.append(result)
        return result
