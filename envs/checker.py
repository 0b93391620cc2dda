"""``check_base_env`` steps any ML-Agents-style ``BaseEnv`` with random actions that respect its
masks, checks every batch against its spec and that two runs with one seed agree."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np

from zooport.envs._batch_checks import BehaviorChecks, describe, shape_of, spec_problems
from zooport.envs.actions import ActionTuple, random_actions
from zooport.envs.base_env import BaseEnv
from zooport.envs.capabilities import is_seedable, reset_core
from zooport.envs.check_report import (
    CHECKERS,
    EXPLAINED_WARNINGS,
    CheckerResult,
    CheckReport,
    CheckResult,
    CheckStatus,
    ConformanceError,
    SuiteReport,
    close_quietly,
    explain_warning,
    one_line,
)
from zooport.errors import ArgumentError

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

_ENV_CHECKS = ("reset", "behavior_specs", "step")
_BEHAVIOR_CHECKS = (
    "behavior_spec", "steps_format", "agent_ids", "action_masks", "empty_batches",
    "random_actions",
)  # fmt: skip
#: Every check, in report order.
CHECKS: tuple[str, ...] = (*_ENV_CHECKS, *_BEHAVIOR_CHECKS, "determinism")


def _fingerprint(array: Any) -> str:
    """What two runs must agree on: shape, dtype, the first values and a hash of them all."""
    if not isinstance(array, np.ndarray):
        return repr(array)[:60]
    data = np.ascontiguousarray(array)
    content = hashlib.blake2b(data.tobytes(), digest_size=16).hexdigest()[:8]
    return f"shape {data.shape} {data.dtype} starting {data.ravel()[:6].tolist()} (hash {content})"


class _Run:
    """One reset and ``steps`` random steps; validates the batches and fingerprints them."""

    def __init__(self, env: Any, steps: int, seed: int) -> None:
        self.env = env
        self.steps = steps
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.env_failures: dict[str, str] = {}
        self.behaviors: dict[str, BehaviorChecks] = {}
        self.trace: list[tuple[int, str, str, str]] = []
        self.completed = False
        self._execute()

    def _execute(self) -> None:
        try:
            reset_core(self.env, self.seed)
        except Exception as error:  # any failure of the env is reported
            self.env_failures["reset"] = f"reset: reset() raised {describe(error)}"
            return
        try:
            specs = self.env.behavior_specs
            names = list(specs)
            bad = [n for n in names if not isinstance(n, str)]
            if not names or bad:
                problem = f"non-str names {bad!r}" if bad else "none"
                self.env_failures["behavior_specs"] = (
                    f"behavior_specs: expected a mapping of at least one behaviour name (str) "
                    f"to BehaviorSpec, got {problem}"
                )
                return
            self.behaviors = {name: BehaviorChecks(name, specs[name]) for name in names}
        except Exception as error:
            self.env_failures["behavior_specs"] = (
                f"behavior_specs: reading behavior_specs raised {describe(error)}"
            )
            return
        for state in self.behaviors.values():
            problems = spec_problems(state.spec)
            if problems:
                state.fail("behavior_spec", "; ".join(problems))
                state.broken = True
            else:
                state.branches = tuple(int(b) for b in state.spec.action_spec.discrete_branches)
        self._observe(0)
        for t in range(1, self.steps + 1):
            for state in self.behaviors.values():
                if state.decision is not None:
                    self._act(state, t)
            try:
                self.env.step()
            except Exception as error:
                self.env_failures["step"] = (
                    f"step: step() {t} of {self.steps} raised {describe(error)}"
                )
                return
            self._observe(t)
        self.completed = True

    def _observe(self, t: int) -> None:
        for state in self.behaviors.values():
            state.decision = None
            if state.broken:
                continue
            state.broken = True  # until the batches prove usable
            try:
                result = self.env.get_steps(state.name)
            except Exception as error:
                state.fail("steps_format", f"step {t}: get_steps() raised {describe(error)}")
                continue
            if not isinstance(result, tuple) or len(result) != 2:
                state.fail(
                    "steps_format",
                    f"step {t}: expected get_steps() to return (DecisionSteps, TerminalSteps), "
                    f"got {shape_of(result)}",
                )
                continue
            decision, terminal = result
            try:
                ok = state.check_steps(t, decision, "DecisionSteps")
                if state.check_steps(t, terminal, "TerminalSteps") and ok:
                    self._accept(state, t, decision, terminal)
            except Exception as error:  # a malformed batch the checks missed
                state.fail(
                    "steps_format", f"step {t}: could not read the batches: {describe(error)}"
                )

    def _accept(self, state: BehaviorChecks, t: int, decision: Any, terminal: Any) -> None:
        """Checks the ids of two well-formed batches, fingerprints them and acts on them next."""
        state.check_ids(t, decision, terminal)
        for kind, steps in (("decision", decision), ("terminal", terminal)):
            arrays = [(f"obs[{i}]", array) for i, array in enumerate(steps.obs)]
            last = "interrupted" if kind == "terminal" else "action_mask"
            for name in ("reward", "agent_id", "group_id", "group_reward", last):
                value = getattr(steps, name)
                if name == "action_mask" and value is not None:
                    arrays += [(f"action_mask[{b}]", mask) for b, mask in enumerate(value)]
                else:
                    arrays.append((name, value))
            self.trace += [(t, state.name, f"{kind}.{x}", _fingerprint(a)) for x, a in arrays]
        state.decision, state.broken = decision, False

    def _act(self, state: BehaviorChecks, t: int) -> None:
        decision = state.decision
        n = len(decision.agent_id)
        masks = decision.action_mask if state.branches else None
        action = random_actions(state.spec.action_spec, n, self.rng, masks)
        by_agent = t % 2 == 0 and n > 0
        try:
            if by_agent:
                for row, agent_id in enumerate(decision.agent_id.tolist()):
                    one = ActionTuple(
                        action.continuous[row : row + 1], action.discrete[row : row + 1]
                    )
                    self.env.set_action_for_agent(state.name, agent_id, one)
            else:
                self.env.set_actions(state.name, action)
            state.actions_set += 1
        except Exception as error:
            state.fail(
                "empty_batches" if n == 0 else "random_actions",
                f"step {t}: expected {'set_action_for_agent' if by_agent else 'set_actions'} to "
                f"accept a valid random action for {n} agents (continuous "
                f"{action.continuous.shape}, discrete {action.discrete.tolist()}), it raised "
                f"{describe(error)}",
            )

    def results(self) -> list[CheckResult]:
        """One result per environment check, then per behaviour and behaviour check."""
        results: list[CheckResult] = []
        stopped_at = None
        notes = {
            "behavior_specs": f"{len(self.behaviors)} behavior(s): {list(self.behaviors)}",
            "step": f"{self.steps} step(s)",
        }
        for check in _ENV_CHECKS:
            if check in self.env_failures:
                stopped_at = check
                status, message = CheckStatus.FAILED, self.env_failures[check]
            elif stopped_at is not None:
                status, message = CheckStatus.SKIPPED, f"{stopped_at} failed"
            else:
                status, message = CheckStatus.PASSED, notes.get(check, "")
            results.append(CheckResult(check, None, status, message))
        for state in self.behaviors.values():
            for check in _BEHAVIOR_CHECKS:
                results.append(CheckResult(check, state.name, *state.outcome(check, self.steps)))
        return results


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
    that respect its masks (``set_actions``, and ``set_action_for_agent`` on alternate steps)
    and left open. Each batch is checked against its spec: shapes, dtypes, finite values, ids
    unique and decided before they end, masks never all masked (:data:`CHECKS`). Last,
    ``determinism``: two runs with ``seed`` (``None``: when ``make_env`` is given or ``env`` is
    seedable) of two fresh ``make_env()`` instances, or of ``env`` reset again, must agree.
    ``strict``: raise :class:`ConformanceError` when a check fails.

    Example:
        >>> from zooport.envs.builtin.basic import Basic
        >>> report = check_base_env(Basic(), steps=20)
        >>> report.passed, len(report.results)
        (True, 10)
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ArgumentError(f"Expect steps to be a non-negative int, actually: {steps!r}")
    run = _Run(env, steps, seed)
    report = CheckReport(type(env).__name__, run.results())
    report.results.append(_check_determinism(env, run, check_determinism, make_env))
    if strict:
        report.raise_if_failed()
    return report


def _check_determinism(
    env: Any, first: _Run, requested: bool | None, make_env: Callable[[], BaseEnv] | None
) -> CheckResult:
    def result(status: CheckStatus, message: str, behavior: str | None = None) -> CheckResult:
        return CheckResult("determinism", behavior, status, message)

    if not (requested if requested is not None else make_env is not None or is_seedable(env)):
        reason = "disabled" if requested is False else "env is not seedable and no make_env given"
        return result(CheckStatus.SKIPPED, reason)
    if make_env is None and not first.completed:
        return result(CheckStatus.SKIPPED, "the first run did not complete")
    runs = [first] if make_env is None else []
    while len(runs) < 2:
        try:
            core = env if make_env is None else make_env()
        except Exception as error:
            return result(CheckStatus.FAILED, f"determinism: make_env() raised {describe(error)}")
        try:
            run = _Run(core, first.steps, first.seed)
        finally:
            if core is not env:
                close_quietly(core)
        if not run.completed:
            failed = [*run.env_failures.values()]  # only an env failure stops a run
            return result(
                CheckStatus.FAILED, f"determinism: run {len(runs) + 1} did not complete: {failed}"
            )
        runs.append(run)
    a, b, seed = runs[0].trace, runs[1].trace, first.seed
    for left, right in zip(a, b, strict=False):
        if left != right:
            t, name, what, was = left
            if right[:3] != left[:3]:
                detail = f"run 1 produced {left[:3]} where run 2 produced {right[:3]}"
            else:
                detail = f"expected {was} (run 1), got {right[3]} (run 2)"
            return result(
                CheckStatus.FAILED,
                f"determinism: behavior {name!r}, step {t}, {what} differs between two runs "
                f"with seed {seed}: {detail}",
                name,
            )
    if len(a) != len(b):
        return result(
            CheckStatus.FAILED,
            f"determinism: expected the same number of arrays in both runs with seed {seed}, "
            f"got {len(a)} and {len(b)}",
        )
    return result(CheckStatus.PASSED, f"{len(a)} arrays identical in two runs")
