"""A conformance checker for any :class:`~zooport.envs.base_env.BaseEnv`.

Classes:
    CheckStatus: the outcome of one check (``pass``, ``fail``, ``skip``).
    CheckResult: one check of one behaviour (or of the whole environment), with a reason.
    CheckReport: every result of a run; prints as a table, ``raise_if_failed()``.
    ConformanceError: raised when a check fails (a ``ZooportError`` and an ``AssertionError``).

Functions:
    check_base_env: resets and steps an environment with random (mask-respecting) actions and
        checks every batch it returns against the behaviour's spec.

The checker works by duck typing on any environment with ML-Agents' current API: a zooport
:class:`~zooport.envs.batched_env.BatchedEnv`, a real ``mlagents_envs`` ``UnityEnvironment``
or a user's own ``BaseEnv``. It resets and steps the environment it is given and leaves it
open. The checks, in report order:

- ``reset``, ``behavior_specs``, ``step``: these calls return without raising, and the
  environment has at least one behaviour.
- ``behavior_spec``: observation shapes are tuples of positive ints with one dimension
  property per dimension; the action spec has a non-negative continuous size and positive
  discrete branches.
- ``steps_format``: each DecisionSteps/TerminalSteps has one float32 ``(n, *shape)`` array
  per observation spec, float32 ``(n,)`` rewards and group rewards, int ``(n,)`` agent and
  group ids, a bool ``(n,)`` ``interrupted``; rewards and observations are finite.
- ``agent_ids``: ids are unique within a batch; an id in TerminalSteps was seen in an
  earlier DecisionSteps (an id in both batches of one step is a restart and is allowed).
- ``action_masks``: ``None`` or one ``(n, branch_size)`` bool array per branch, never with
  every action of a branch masked.
- ``empty_batches``: batches of zero agents have the shapes above with ``n = 0`` and
  ``set_actions`` accepts an empty action.
- ``random_actions``: uniform random actions that respect the masks are accepted by
  ``set_actions`` and by ``set_action_for_agent`` (one agent at a time), on alternate steps.
- ``determinism``: two runs with the same seed and the same actions give identical arrays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zooport.envs.base_env import BaseEnv
from zooport.envs.capabilities import is_seedable
from zooport.envs.checker_report import (
    CHECKS,
    CheckReport,
    CheckResult,
    CheckStatus,
    ConformanceError,
)
from zooport.envs.checker_run import CheckerRun, describe
from zooport.errors import ArgumentError

__all__ = [
    "CHECKS",
    "CheckStatus",
    "CheckResult",
    "CheckReport",
    "ConformanceError",
    "check_base_env",
]


def check_base_env(
    env: BaseEnv,
    *,
    steps: int = 200,
    seed: int = 0,
    check_determinism: bool | None = None,
    make_env: Callable[[], BaseEnv] | None = None,
    strict: bool = True,
) -> CheckReport:
    """Checks that ``env`` follows the ``BaseEnv`` contract; see the module docstring.

    The environment is reset (with ``seed`` when it declares ``seedable``, as
    ``BatchedEnv`` does), then stepped ``steps`` times with random actions drawn from
    ``numpy.random.default_rng(seed)``. It is left open.

    Args:
        env: the environment to check.
        steps: the number of steps to take.
        seed: seeds the environment (if seedable) and the random actions.
        check_determinism: compare two runs with the same seed. ``None``: when ``make_env``
            is given or ``env`` is seedable. Without ``make_env`` the second run is ``env``
            itself, reset again.
        make_env: a factory of fresh instances; the determinism check then compares two of
            them (and closes them).
        strict: raise :class:`ConformanceError` when a check fails; otherwise just return.

    Returns:
        The report, one :class:`CheckResult` per check and behaviour.

    Raises:
        ConformanceError: ``strict`` and a check failed.

    Example:
        >>> import numpy as np
        >>> from zooport.envs.batched_env import BatchedEnv, StepResult
        >>> from zooport.envs.base_env import ActionSpec, BehaviorSpec, ObservationSpec
        >>> class Coin(BatchedEnv):
        ...     def __init__(self, **kw):
        ...         super().__init__(**kw)
        ...         obs = ObservationSpec.vector(1, "coin")
        ...         spec = BehaviorSpec([obs], ActionSpec.create_discrete((2,)))
        ...         self._add_behavior("Coin", spec, 3)
        ...         self.coin = np.zeros(3, np.float32)
        ...     def _reset_agents(self, behavior, slots):
        ...         self.coin[slots] = self.np_random.integers(0, 2, slots.size)
        ...     def _step(self, actions):
        ...         reward = (actions["Coin"].discrete[:, 0] == self.coin).astype(np.float32)
        ...         return {"Coin": StepResult(reward, np.ones(3, bool))}
        ...     def _observe(self, behavior, slots):
        ...         return [self.coin[slots, None]]
        >>> report = check_base_env(Coin(), steps=20)
        >>> report.passed, len(report.results)
        (True, 10)
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ArgumentError(f"Expect steps to be a non-negative int, actually: {steps!r}")
    report = CheckReport(type(env).__name__)
    run = CheckerRun(env, steps, seed)
    run.execute()
    report.results.extend(run.results())
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
    if make_env is None:
        if not first.completed:
            return CheckResult(
                "determinism", None, CheckStatus.SKIPPED, "the first run did not complete"
            )
        runs = [first]
        envs: list[Any] = [env]
    else:
        envs = []
        runs = []
    try:
        while len(runs) < 2:
            if make_env is not None:
                try:
                    envs.append(make_env())
                except Exception as error:
                    return CheckResult(
                        "determinism", None, CheckStatus.FAILED,
                        f"determinism: make_env() raised {describe(error)}",
                    )  # fmt: skip
            run = CheckerRun(envs[-1], steps, seed)
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
        if make_env is not None:
            for made in envs:
                try:
                    made.close()
                except Exception:  # closing is best effort
                    pass
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
