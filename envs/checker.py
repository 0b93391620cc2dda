"""``check_base_env`` steps any ML-Agents-style ``BaseEnv`` with random actions that respect its
masks, checks every batch against its spec and that two runs with one seed agree; its results
and reports are in :mod:`zooport.envs.check_report`."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import numpy as np

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
from zooport.errors import ArgumentError, a_type

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


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def _shape_of(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"shape {value.shape} dtype {value.dtype}"
    return a_type(value)


def _is_int(value: Any) -> TypeGuard[int | np.integer]:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _spec_problems(spec: Any) -> list[str]:
    """What is wrong with a BehaviorSpec; empty when it is usable."""
    obs_specs = getattr(spec, "observation_specs", None)
    action_spec = getattr(spec, "action_spec", None)
    if not isinstance(obs_specs, (list, tuple)) or action_spec is None:
        return [
            f"expected a BehaviorSpec with an observation_specs list and an action_spec "
            f"(ML-Agents >= 2.0 API), got {spec!r}"
        ]
    problems: list[str] = []
    for i, obs in enumerate(obs_specs):
        where = f"observation_specs[{i}]"
        shape = getattr(obs, "shape", None)
        if not isinstance(shape, tuple) or not all(_is_int(d) and d > 0 for d in shape):
            problems.append(f"{where}.shape: expected a tuple of positive ints, got {shape!r}")
            continue
        props = getattr(obs, "dimension_property", None)
        if not isinstance(props, tuple) or len(props) != len(shape):
            got = len(props) if isinstance(props, tuple) else repr(props)
            problems.append(
                f"{where}.dimension_property: expected a tuple of {len(shape)} (one per "
                f"dimension of shape {shape}), got {got}"
            )
        elif not all(isinstance(p, int) for p in props):
            problems.append(
                f"{where}.dimension_property: expected DimensionProperty values, got {props!r}"
            )
        if not hasattr(obs, "observation_type"):
            problems.append(f"{where}: expected an observation_type, got none")
        name = getattr(obs, "name", None)
        if not isinstance(name, str):
            problems.append(f"{where}.name: expected a str, got {name!r}")
    continuous = getattr(action_spec, "continuous_size", None)
    if not _is_int(continuous) or continuous < 0:
        problems.append(f"action_spec.continuous_size: expected an int >= 0, got {continuous!r}")
    branches = getattr(action_spec, "discrete_branches", None)
    if not isinstance(branches, tuple) or not all(_is_int(b) and b > 0 for b in branches):
        problems.append(
            f"action_spec.discrete_branches: expected a tuple of positive ints, got {branches!r}"
        )
    return problems


def _fingerprint(array: Any) -> str:
    """What two runs must agree on: shape, dtype, the first values and a hash of them all."""
    if not isinstance(array, np.ndarray):
        return repr(array)[:60]
    data = np.ascontiguousarray(array)
    content = hashlib.blake2b(data.tobytes(), digest_size=16).hexdigest()[:8]
    return f"shape {data.shape} {data.dtype} starting {data.ravel()[:6].tolist()} (hash {content})"


@dataclass
class _Behavior:
    """What one run learns about one behaviour: its failures per check, the ids seen."""

    name: str
    spec: Any
    branches: tuple[int, ...] = ()
    failures: dict[str, list[str]] = field(default_factory=dict)
    seen: set[int] = field(default_factory=set)
    empty_seen: int = 0
    actions_set: int = 0
    masks_seen: bool = False
    broken: bool = False  # a bad spec, or get_steps raised or returned garbage: stop asking
    decision: Any = None

    def fail(self, check: str, detail: str) -> None:
        self.failures.setdefault(check, []).append(f"{check}: behavior {self.name!r}, {detail}")

    def check_field(
        self, check: str, label: str, array: Any, shape: tuple, dtype: Any, note: str = ""
    ) -> bool:
        """One array of a batch: shape, then dtype, then finite; False for a wrong shape."""
        if not isinstance(array, np.ndarray) or array.shape != shape:
            self.fail(check, f"{label}: expected shape {shape}{note}, got {_shape_of(array)}")
            return False
        if dtype is int:
            if not np.issubdtype(array.dtype, np.integer):
                self.fail(check, f"{label}: expected an int dtype, got {array.dtype}")
        elif array.dtype != dtype:
            self.fail(check, f"{label}: expected dtype {np.dtype(dtype)}, got {array.dtype}")
        elif dtype is np.float32 and not np.all(np.isfinite(array)):
            bad = array[~np.isfinite(array)][0]
            self.fail(check, f"{label}: expected finite values, got {bad}")
        return True

    def outcome(self, check: str, steps: int) -> tuple[CheckStatus, str]:
        if check in self.failures:
            first, *more = self.failures[check]
            return CheckStatus.FAILED, first + (f" (and {len(more)} more)" if more else "")
        if "behavior_spec" in self.failures:
            return CheckStatus.SKIPPED, "behavior_spec failed"
        if check == "action_masks" and not self.branches:
            return CheckStatus.SKIPPED, "no discrete branches"
        if check == "action_masks" and not self.masks_seen:
            return CheckStatus.PASSED, "no masks provided"
        if check == "empty_batches" and not self.empty_seen:
            return CheckStatus.SKIPPED, "no empty batch occurred"
        if check == "random_actions" and not self.actions_set:
            return CheckStatus.SKIPPED, "no batch could be acted on" if steps else "no step taken"
        return CheckStatus.PASSED, ""


class _Run:
    """One reset and ``steps`` random steps; validates the batches and fingerprints them."""

    def __init__(self, env: Any, steps: int, seed: int) -> None:
        self.env = env
        self.steps = steps
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.env_failures: dict[str, str] = {}
        self.behaviors: dict[str, _Behavior] = {}
        self.trace: list[tuple[int, str, str, str]] = []
        self.completed = False
        self._execute()

    def _execute(self) -> None:
        try:
            reset_core(self.env, self.seed)
        except Exception as error:  # any failure of the env is reported
            self.env_failures["reset"] = f"reset: reset() raised {_describe(error)}"
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
            self.behaviors = {name: _Behavior(name, specs[name]) for name in names}
        except Exception as error:
            self.env_failures["behavior_specs"] = (
                f"behavior_specs: reading behavior_specs raised {_describe(error)}"
            )
            return
        for state in self.behaviors.values():
            problems = _spec_problems(state.spec)
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
                    f"step: step() {t} of {self.steps} raised {_describe(error)}"
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
                state.fail("steps_format", f"step {t}: get_steps() raised {_describe(error)}")
                continue
            if not isinstance(result, tuple) or len(result) != 2:
                state.fail(
                    "steps_format",
                    f"step {t}: expected get_steps() to return (DecisionSteps, TerminalSteps), "
                    f"got {_shape_of(result)}",
                )
                continue
            decision, terminal = result
            try:
                ok = self._check_steps(state, t, decision, "DecisionSteps")
                if self._check_steps(state, t, terminal, "TerminalSteps") and ok:
                    self._accept(state, t, decision, terminal)
            except Exception as error:  # a malformed batch the checks missed
                state.fail(
                    "steps_format", f"step {t}: could not read the batches: {_describe(error)}"
                )

    def _check_steps(self, state: _Behavior, t: int, steps: Any, kind: str) -> bool:
        """Checks one batch's fields; False when it is too malformed to use further."""
        where = f"step {t}, {kind}"
        attrs = ["obs", "reward", "agent_id", "group_id", "group_reward"]
        attrs.append("action_mask" if kind == "DecisionSteps" else "interrupted")
        missing = [a for a in attrs if not hasattr(steps, a)]
        if missing:
            state.fail(
                "steps_format",
                f"{where}: expected attributes {attrs}, missing {missing} "
                f"on {type(steps).__name__}",
            )
            return False
        ids = steps.agent_id
        if not isinstance(ids, np.ndarray) or ids.ndim != 1:
            state.fail(
                "steps_format", f"{where}.agent_id: expected a 1-D int array, got {_shape_of(ids)}"
            )
            return False
        n = ids.shape[0]
        check = "empty_batches" if n == 0 else "steps_format"
        state.empty_seen += n == 0
        ok = np.issubdtype(ids.dtype, np.integer)
        if not ok:
            state.fail(check, f"{where}.agent_id: expected an int dtype, got {ids.dtype}")
        length: int | str
        try:
            length = len(steps)
        except Exception as error:
            length = f"len() raising {_describe(error)}"
        if length != n:
            state.fail(check, f"{where}: expected len() == {n} (agents), got {length}")
        obs, n_obs = steps.obs, len(state.spec.observation_specs)
        if not isinstance(obs, (list, tuple)) or len(obs) != n_obs:
            got = f"{len(obs)} arrays" if isinstance(obs, (list, tuple)) else _shape_of(obs)
            state.fail(
                check,
                f"{where}.obs: expected a list of {n_obs} arrays (one per observation "
                f"spec), got {got}",
            )
            ok = False
        else:
            for i, (array, spec) in enumerate(zip(obs, state.spec.observation_specs, strict=True)):
                shape, note = (n, *spec.shape), " (n_agents, *spec.shape)"
                label = f"{where}.obs[{i}]"
                ok = state.check_field(check, label, array, shape, np.float32, note) and ok
        group = steps.group_id
        if isinstance(group, (list, tuple)) and all(
            isinstance(g, (int, np.integer)) for g in group
        ):
            # mlagents_envs (0.28) itself hands group ids out as a list of ints: accepted.
            group = np.asarray(group, dtype=np.int64).reshape(len(group))
        fields: list[tuple[str, Any, Any]] = [
            ("reward", steps.reward, np.float32),
            ("group_reward", steps.group_reward, np.float32),
            ("group_id", group, int),
        ]
        if kind == "TerminalSteps":
            fields.append(("interrupted", steps.interrupted, np.bool_))
        for name, array, dtype in fields:
            ok = state.check_field(check, f"{where}.{name}", array, (n,), dtype) and ok
        if kind == "DecisionSteps":
            ok = self._check_masks(state, f"{where}.action_mask", steps.action_mask, ids) and ok
        return bool(ok)

    def _check_masks(self, state: _Behavior, where: str, masks: Any, ids: np.ndarray) -> bool:
        n, branches = ids.shape[0], state.branches
        is_list = isinstance(masks, (list, tuple))
        if masks is None or (not branches and is_list and len(masks) == 0):
            return True
        if not branches:
            state.fail(
                "action_masks",
                f"{where}: the spec has no discrete branches, expected None, got "
                f"{_shape_of(masks)}",
            )
            return False
        state.masks_seen = True
        if not is_list or len(masks) != len(branches):
            got = f"{len(masks)} arrays" if is_list else _shape_of(masks)
            state.fail(
                "action_masks",
                f"{where}: expected a list of {len(branches)} arrays "
                f"(one per branch {branches}), got {got}",
            )
            return False
        for b, (mask, size) in enumerate(zip(masks, branches, strict=True)):
            label, note = f"{where}[{b}]", " (n_agents, branch size)"
            if not state.check_field("action_masks", label, mask, (n, size), np.bool_, note):
                return False
            full = np.flatnonzero(np.all(mask, axis=1)) if n and size else np.zeros(0, int)
            if full.size:
                state.fail(
                    "action_masks",
                    f"{where}[{b}]: expected at least one available "
                    f"action per agent, got every action masked for agent ids "
                    f"{ids[full[:5]].tolist()}",
                )
        return True

    def _accept(self, state: _Behavior, t: int, decision: Any, terminal: Any) -> None:
        """Checks the ids of two well-formed batches, fingerprints them and acts on them next."""
        for kind, steps in (("DecisionSteps", decision), ("TerminalSteps", terminal)):
            ids = steps.agent_id
            unique, counts = np.unique(ids, return_counts=True)
            if unique.size != ids.size:
                state.fail(
                    "agent_ids",
                    f"step {t}, {kind}.agent_id: expected unique ids, got "
                    f"{unique[counts > 1].tolist()} more than once in {ids.tolist()}",
                )
        unseen = [i for i in terminal.agent_id.tolist() if i not in state.seen]
        if unseen:
            state.fail(
                "agent_ids",
                f"step {t}, TerminalSteps.agent_id: expected ids that requested a decision "
                f"before, got never-seen ids {unseen}",
            )
        state.seen.update(decision.agent_id.tolist())
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

    def _act(self, state: _Behavior, t: int) -> None:
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
                f"{_describe(error)}",
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
            return result(CheckStatus.FAILED, f"determinism: make_env() raised {_describe(error)}")
        try:
            run = _Run(core, first.steps, first.seed)
        finally:
            if core is not env:
                close_quietly(core)
        if not run.completed:
            failures = [*run.env_failures.values()]
            failures += [m[0] for s in run.behaviors.values() for m in s.failures.values()]
            return result(
                CheckStatus.FAILED,
                f"determinism: run {len(runs) + 1} did not complete: {failures[:1]}",
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
