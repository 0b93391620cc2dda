"""``check_base_env`` steps any ML-Agents-style ``BaseEnv`` with random actions that respect its
masks, checks every batch against its spec and that two runs with one seed agree; the results
and reports of it and of :func:`zooport.checks.run_checkers` live here."""

from __future__ import annotations

import contextlib
import enum
import hashlib
import os
import re
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeGuard, TypeVar

import numpy as np

from zooport.envs.actions import ActionTuple, random_actions
from zooport.envs.base_env import BaseEnv
from zooport.envs.capabilities import is_seedable, reset_core
from zooport.errors import ArgumentError, ZooportError, a_type

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

_R = TypeVar("_R", "CheckResult", "CheckerResult")  # a result of either checker
_ENV_CHECKS = ("reset", "behavior_specs", "step")
_BEHAVIOR_CHECKS = (
    "behavior_spec", "steps_format", "agent_ids", "action_masks", "empty_batches",
    "random_actions",
)  # fmt: skip
#: Every check, in report order.
CHECKS: tuple[str, ...] = (*_ENV_CHECKS, *_BEHAVIOR_CHECKS, "determinism")


class CheckStatus(str, enum.Enum):
    """The outcome of one check."""

    PASSED = "pass"
    FAILED = "fail"
    SKIPPED = "skip"


@dataclass(frozen=True)
class CheckResult:
    """One check (one of :data:`CHECKS`) of one behaviour, or of the whole environment
    (``behavior=None``), and why it failed or was skipped."""

    check: str
    behavior: str | None
    status: CheckStatus
    message: str = ""

    def __str__(self) -> str:
        where = "" if self.behavior is None else f" [{self.behavior}]"
        note = f": {self.message}" if self.message else ""
        return f"{self.status.value.upper()} {self.check}{where}{note}"


class _Report(Generic[_R]):  # what both reports share
    results: list[_R]

    @property
    def passed(self) -> bool:
        """True when nothing failed (skipped checks do not count)."""
        return not self.failures

    @property
    def failures(self) -> list[_R]:
        return [r for r in self.results if r.status is CheckStatus.FAILED]

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
    """Every :class:`CheckResult` of one :func:`check_base_env` run."""

    env_name: str
    results: list[CheckResult] = field(default_factory=list)

    def rows(self) -> list[tuple[str, str, str, str]]:
        """``(check, behaviour or '-', status, message)`` per result, for a table."""
        return [(r.check, r.behavior or "-", r.status.value, r.message) for r in self.results]

    def format(self) -> str:
        rows = [("check", "behavior", "status", "message"), *self.rows()]
        title = f"{self.env_name}: {'PASSED' if self.passed else 'FAILED'}"
        return "\n".join([title, *_table(rows, ("  ", "  ", "  "))])

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
        counts = [sum(r.status is s for r in self.results) for s in CheckStatus]
        title = (
            f"{self.name}: {'PASSED' if self.passed else 'FAILED'} ({counts[0]} passed, "
            f"{counts[1]} failed, {counts[2]} skipped)"
        )
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


def _digest(array: Any) -> tuple[Any, ...]:
    """A compact fingerprint of an array: shape, dtype, content hash and the first values."""
    if not isinstance(array, np.ndarray):
        return ("not an array", repr(array)[:60])
    data = np.ascontiguousarray(array)
    content = hashlib.blake2b(data.tobytes(), digest_size=16).hexdigest()
    return (data.shape, str(data.dtype), content, data.ravel()[:6].tolist())


class _Behavior:
    """What one run learns about one behaviour: the first failure per check, the ids seen."""

    def __init__(self, name: str, spec: Any) -> None:
        self.name = name
        self.spec = spec
        self.usable = False
        self.branches: tuple[int, ...] = ()
        self.n_obs = 0
        self.first: dict[str, str] = {}
        self.count: dict[str, int] = {}
        self.seen: set[int] = set()
        self.empty_seen = 0
        self.actions_set = 0
        self.masks_seen = False
        self.broken = False  # get_steps raised or returned garbage: stop asking
        self.decision: Any = None

    def fail(self, check: str, detail: str) -> None:
        self.count[check] = self.count.get(check, 0) + 1
        self.first.setdefault(check, f"{check}: behavior {self.name!r}, {detail}")

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
        if check in self.first:
            more = self.count[check] - 1
            return CheckStatus.FAILED, self.first[check] + (f" (and {more} more)" if more else "")
        if not self.usable and check != "behavior_spec":
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
        self.trace: list[tuple[int, str, str, tuple[Any, ...]]] = []
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
            else:
                state.usable = True
                state.branches = tuple(int(b) for b in state.spec.action_spec.discrete_branches)
                state.n_obs = len(state.spec.observation_specs)
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
            if not state.usable or state.broken:
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
                    self._check_ids(state, t, decision, terminal)
                    self._record(state, t, decision, terminal)
                    state.decision, state.broken = decision, False
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
        obs = steps.obs
        if not isinstance(obs, (list, tuple)) or len(obs) != state.n_obs:
            got = f"{len(obs)} arrays" if isinstance(obs, (list, tuple)) else _shape_of(obs)
            state.fail(
                check,
                f"{where}.obs: expected a list of {state.n_obs} arrays (one per observation "
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
            if not isinstance(mask, np.ndarray) or mask.shape != (n, size):
                state.fail(
                    "action_masks",
                    f"{where}[{b}]: expected shape ({n}, {size}) "
                    f"(n_agents, branch size), got {_shape_of(mask)}",
                )
                return False
            if mask.dtype != np.bool_:
                state.fail("action_masks", f"{where}[{b}]: expected dtype bool, got {mask.dtype}")
            full = np.flatnonzero(np.all(mask, axis=1)) if n and size else np.zeros(0, int)
            if full.size:
                state.fail(
                    "action_masks",
                    f"{where}[{b}]: expected at least one available "
                    f"action per agent, got every action masked for agent ids "
                    f"{ids[full[:5]].tolist()}",
                )
        return True

    def _check_ids(self, state: _Behavior, t: int, decision: Any, terminal: Any) -> None:
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

    def _record(self, state: _Behavior, t: int, decision: Any, terminal: Any) -> None:
        for kind, steps in (("decision", decision), ("terminal", terminal)):
            arrays = [(f"obs[{i}]", array) for i, array in enumerate(steps.obs)]
            last = "interrupted" if kind == "terminal" else "action_mask"
            for name in ("reward", "agent_id", "group_id", "group_reward", last):
                value = getattr(steps, name)
                if name == "action_mask" and value is not None:
                    arrays += [(f"action_mask[{b}]", mask) for b, mask in enumerate(value)]
                else:
                    arrays.append((name, value))
            self.trace += [(t, state.name, f"{kind}.{label}", _digest(a)) for label, a in arrays]

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
                        continuous=action.continuous[row : row + 1],
                        discrete=action.discrete[row : row + 1],
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
    runs, made = ([first] if make_env is None else []), []
    try:
        while len(runs) < 2:
            if make_env is not None:
                try:
                    made.append(make_env())
                except Exception as error:
                    return result(
                        CheckStatus.FAILED, f"determinism: make_env() raised {_describe(error)}"
                    )
            run = _Run(made[-1] if made else env, first.steps, first.seed)
            if not run.completed:
                failures = [*run.env_failures.values()]
                failures += [m for s in run.behaviors.values() for m in s.first.values()]
                return result(
                    CheckStatus.FAILED,
                    f"determinism: run {len(runs) + 1} did not complete: {failures[:1]}",
                )
            runs.append(run)
    finally:
        for fresh in made:
            close_quietly(fresh)
    a, b, seed = runs[0].trace, runs[1].trace, first.seed
    for left, right in zip(a, b, strict=False):
        if left != right:
            if right[:3] != left[:3]:
                detail = f"run 1 produced {left[:3]} where run 2 produced {right[:3]}"
            else:
                detail = (
                    f"expected {_fingerprint(left[3])} (run 1), got {_fingerprint(right[3])} "
                    f"(run 2)"
                )
            t, name, what = left[:3]
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


def _fingerprint(digest: tuple[Any, ...]) -> str:
    if len(digest) != 4:
        return str(digest[1])
    shape, dtype, content, preview = digest
    return f"shape {shape} {dtype} starting {preview} (hash {content[:8]})"
