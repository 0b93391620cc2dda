"""Refusing re-entrant calls, and steps after one that failed once it had changed state, until
a ``reset()``: ``with guard.call("step"): check arguments; guard.committed = True; work``."""

from __future__ import annotations

from typing import Any

from zooport.errors import EnvNotResetError, ReentrantCallError

__all__ = ["StepGuard"]


class StepGuard:
    """The ``running`` call (``"step"``, ``"reset"`` or None) of the env ``owner``, its
    ``failure`` (why steps are refused), ``completed`` calls and the wrapper ``layer`` running."""

    __slots__ = ("owner", "running", "committed", "failure", "completed", "layer")

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.running: str | None = None
        self.committed = False
        self.failure: str | None = None
        self.completed = 0
        self.layer: Any = None

    def enter(self, call: str, committed: bool = False) -> StepGuard:
        """Marks ``call`` (``"step"`` or ``"reset"``) running, or raises why it may not run."""
        if self.running is not None:
            raise ReentrantCallError(
                f"{self.owner}.{call}() was called while its {self.running}() was running "
                "(from a callback, a hook, a policy or another thread); an env is neither "
                "re-entrant nor thread-safe: call it from one place, one call at a time"
            )
        if self.failure is not None and call == "step":
            raise EnvNotResetError(
                f"{self.owner}: the last {self.failure}; what that call reported (rewards, "
                "episode ends) is lost, so the env refuses to step until reset()"
            )
        self.running = call
        self.committed = committed
        return self

    call = enter

    def resetting(self) -> StepGuard:  # a reset is committed from its first line
        return self.enter("reset", committed=True)

    def exit(self) -> None:
        """The running step completed."""
        self.running = None
        self.completed += 1

    def __enter__(self) -> StepGuard:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, _: Any
    ) -> None:
        if error is not None:
            self.abort(error)
        else:
            if self.running == "reset":
                self.failure = None  # a completed reset makes the env healthy again
            self.exit()

    def abort(self, error: BaseException) -> None:
        """The running call raised ``error``; after a committed one the env needs a reset."""
        if self.committed:
            self.failure = f"{self.running} raised {type(error).__name__}: {error}"
        self.running = None

    def __reduce__(self) -> tuple[Any, ...]:
        # A copy taken from inside a running call (a callback) must not stay "running".
        slots = {"failure": self.failure, "completed": self.completed}
        return StepGuard, (self.owner,), (None, slots)

    def __repr__(self) -> str:
        state = self.failure or (f"running {self.running}" if self.running else "healthy")
        return f"StepGuard({self.owner!r}, {state}, completed={self.completed})"
