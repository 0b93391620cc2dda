"""Refusing re-entrant calls and steps after a failed one, for cores, adapters and wrappers.

Classes:
    StepGuard: one env's running flag, its count of completed steps and the error that
        interrupted its last step or reset.

An env is neither re-entrant nor thread-safe. Two things go silently wrong without a guard:

- re-entry: ``step``/``reset`` called while another ``step``/``reset`` of the same env runs
  (from a side-channel callback, a core hook, a wrapper's policy, or a second thread) steps
  the simulation twice over one set of buffers: rewards are counted twice or lost;
- a step interrupted by an exception (a hook, a side channel or a wrapper raising after the
  simulation moved): what that step reported (rewards, episode ends) never reaches the
  caller, and a caller that catches the exception and steps on loses it silently.

:class:`StepGuard` turns both into errors: a re-entrant call raises
:class:`~zooport.errors.ReentrantCallError`, and after an interrupted step (or reset) every
``step`` raises :class:`~zooport.errors.EnvNotResetError` naming the original error until a
``reset()`` succeeds. It costs a few attribute writes per call, nothing per agent.

The pattern every guarded ``step`` follows (``reset`` the same; a reset whose every line may
change state can use ``with guard.resetting():``)::

    with guard.call("step"):     # re-entry or an earlier failure raises here
        check the arguments      # raising here changes nothing: the env stays usable
        guard.committed = True   # from here on an exception loses data
        do the work
    # leaving the block normally completes the call (exit, or reset_done for a reset);
    # leaving it by an exception aborts it, which poisons the env only when committed

A call that must do more than abort when it fails (a pool marks itself broken) spells the
same steps out with :meth:`StepGuard.enter`, :meth:`StepGuard.abort` and
:meth:`StepGuard.exit` / :meth:`StepGuard.reset_done`.
"""

from __future__ import annotations

from typing import Any

from zooport.errors import EnvNotResetError, ReentrantCallError

__all__ = ["StepGuard"]


class StepGuard:
    """The running flag and failure state of one env; see the module docstring.

    Args:
        owner: the env's name for messages (``"BatchedEnv"``, ``"BehaviorVectorEnv"``, ...).

    Attributes:
        running: ``"step"`` or ``"reset"`` while one runs, else None.
        committed: True once the running call has started changing state.
        failure: what interrupted the last step or reset (``"step raised KeyError: ..."``),
            None when the env is healthy.
        completed: steps and resets completed since the env was built (a wrapper chain
            compares it before and after its call to learn whether the env beneath moved).
        layer: for the wrappers of one chain (which share a guard), the one whose code runs.

    Example:
        >>> guard = StepGuard("Demo")
        >>> guard.enter("step"); guard.committed = True
        >>> guard.abort(KeyError("boom")); guard.failure
        "step raised KeyError: 'boom'"
        >>> guard.enter("step")
        Traceback (most recent call last):
        ...
        zooport.errors.EnvNotResetError: Demo: the last step raised KeyError: 'boom'; what ...
    """

    __slots__ = ("owner", "running", "committed", "failure", "completed", "layer")

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.running: str | None = None
        self.committed = False
        self.failure: str | None = None
        self.completed = 0
        self.layer: Any = None

    def enter(self, call: str) -> None:
        """Marks ``call`` (``"step"`` or ``"reset"``) running.

        Raises:
            ReentrantCallError: a step or reset of this env is already running.
            EnvNotResetError: ``call`` is ``"step"`` and the last step or reset failed.
        """
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
        self.committed = False

    def exit(self) -> None:
        """The running step completed."""
        self.running = None
        self.completed += 1

    def reset_done(self) -> None:
        """The running reset completed: the env is healthy again."""
        self.running = None
        self.failure = None
        self.completed += 1

    def call(self, call: str) -> StepGuard:
        """Enters ``call`` for a ``with`` block (see the module docstring).

        Example:
            >>> guard = StepGuard("Demo")
            >>> with guard.call("step"):
            ...     guard.committed = True
            >>> guard.completed
            1
            >>> try:
            ...     with guard.call("step"):
            ...         guard.committed = True
            ...         raise KeyError("boom")
            ... except KeyError:
            ...     guard.failure
            "step raised KeyError: 'boom'"
        """
        self.enter(call)
        return self

    def resetting(self) -> StepGuard:
        """A reset, committed from its first line: ``with guard.resetting(): ...``.

        Example:
            >>> guard = StepGuard("Demo")
            >>> with guard.resetting():
            ...     guard.running
            'reset'
            >>> guard.running, guard.completed
            (None, 1)
        """
        self.enter("reset")
        self.committed = True
        return self

    def __enter__(self) -> StepGuard:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, _: Any
    ) -> None:
        if error is not None:
            self.abort(error)
        elif self.running == "reset":
            self.reset_done()
        else:
            self.exit()

    def abort(self, error: BaseException) -> None:
        """The running call raised ``error``; after a committed one the env needs a reset."""
        if self.committed:
            self.failure = f"{self.running} raised {type(error).__name__}: {error}"
        self.running = None

    def __getstate__(self) -> dict[str, Any]:
        # A copy taken from inside a running call (a callback) must not stay "running".
        return {"owner": self.owner, "failure": self.failure, "completed": self.completed}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.owner = state["owner"]
        self.failure = state["failure"]
        self.completed = state["completed"]
        self.running = None
        self.committed = False
        self.layer = None

    def __repr__(self) -> str:
        state = self.failure or (f"running {self.running}" if self.running else "healthy")
        return f"StepGuard({self.owner!r}, {state}, completed={self.completed})"
