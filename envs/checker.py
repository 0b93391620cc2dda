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

import enum
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zooport.envs.base_env import ActionTuple, BaseEnv
from zooport.errors import ArgumentError, ZooportError

__all__ = [
    "CHECKS",
    "CheckStatus",
    "CheckResult",
    "CheckReport",
    "ConformanceError",
    "check_base_env",
]

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
        >>> from zooport.envs.batched_env import BatchedEnv, StepResult
        >>> from zooport.envs.base_env import ActionSpec, BehaviorSpec, ObservationSpec
        >>> from zooport.envs.base_env import DimensionProperty, ObservationType
        >>> class Coin(BatchedEnv):
        ...     def __init__(self, **kw):
        ...         super().__init__(**kw)
        ...         obs = ObservationSpec((1,), (DimensionProperty.NONE,),
        ...                               ObservationType.DEFAULT, "coin")
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
    run = _Run(env, steps, seed)
    run.execute()
    report.results.extend(run.results())
    report.results.append(_check_determinism(env, run, steps, seed, check_determinism, make_env))
    if strict:
        report.raise_if_failed()
    return report


# --------------------------------------------------------------------------- helpers


def _is_seedable(env: Any) -> bool:
    return getattr(type(env), "seedable", False) is True


def _reset(env: Any, seed: int) -> None:
    if _is_seedable(env):
        env.reset(seed=seed)
    else:
        env.reset()


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _spec_problems(spec: Any) -> list[str]:
    """What is wrong with a BehaviorSpec; empty when it is usable."""
    problems: list[str] = []
    obs_specs = getattr(spec, "observation_specs", None)
    action_spec = getattr(spec, "action_spec", None)
    if not isinstance(obs_specs, (list, tuple)) or action_spec is None:
        return [
            f"expected a BehaviorSpec with an observation_specs list and an action_spec "
            f"(ML-Agents >= 2.0 API), got {spec!r}"
        ]
    for i, obs in enumerate(obs_specs):
        shape = getattr(obs, "shape", None)
        if not isinstance(shape, tuple) or not all(_is_int(d) and d > 0 for d in shape):
            problems.append(
                f"observation_specs[{i}].shape: expected a tuple of positive ints, got {shape!r}"
            )
            continue
        props = getattr(obs, "dimension_property", None)
        if not isinstance(props, tuple) or len(props) != len(shape):
            got = len(props) if isinstance(props, tuple) else repr(props)
            problems.append(
                f"observation_specs[{i}].dimension_property: expected a tuple of "
                f"{len(shape)} (one per dimension of shape {shape}), got {got}"
            )
        elif not all(isinstance(p, int) for p in props):
            problems.append(
                f"observation_specs[{i}].dimension_property: expected DimensionProperty "
                f"values, got {props!r}"
            )
        if not hasattr(obs, "observation_type"):
            problems.append(f"observation_specs[{i}]: expected an observation_type, got none")
        name = getattr(obs, "name", None)
        if not isinstance(name, str):
            problems.append(f"observation_specs[{i}].name: expected a str, got {name!r}")
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
    preview = data.ravel()[:6].tolist()
    return (data.shape, str(data.dtype), content, preview)


class _BehaviorState:
    """What the run learns about one behaviour: first failure per check, ids seen."""

    def __init__(self, name: str, spec: Any) -> None:
        self.name = name
        self.spec = spec
        self.usable = False
        self.branches: tuple[int, ...] = ()
        self.continuous = 0
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
        if check not in self.first:
            self.first[check] = f"{check}: behavior {self.name!r}, {detail}"


class _Run:
    """One reset and ``steps`` steps; validates the batches and fingerprints them."""

    def __init__(self, env: Any, steps: int, seed: int) -> None:
        self.env = env
        self.steps = steps
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.env_failures: dict[str, str] = {}
        self.behaviors: dict[str, _BehaviorState] = {}
        self.trace: list[tuple[int, str, str, tuple[Any, ...]]] = []
        self.completed = False

    # ------------------------------------------------------------------ the loop

    def execute(self) -> None:
        try:
            _reset(self.env, self.seed)
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
            for name in names:
                self.behaviors[name] = _BehaviorState(name, specs[name])
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
                state.continuous = int(state.spec.action_spec.continuous_size)
                state.n_obs = len(state.spec.observation_specs)
        self._observe_all(0)
        for t in range(1, self.steps + 1):
            for state in self.behaviors.values():
                if state.usable and not state.broken and state.decision is not None:
                    self._act(state, state.decision, t)
            try:
                self.env.step()
            except Exception as error:
                self.env_failures["step"] = f"step: step() {t} of {self.steps} raised " + (
                    _describe(error)
                )
                return
            self._observe_all(t)
        self.completed = True

    def _observe_all(self, t: int) -> None:
        for state in self.behaviors.values():
            state.decision = None
            if not state.usable or state.broken:
                continue
            try:
                result = self.env.get_steps(state.name)
            except Exception as error:
                state.fail("steps_format", f"step {t}: get_steps() raised {_describe(error)}")
                state.broken = True
                continue
            if not isinstance(result, tuple) or len(result) != 2:
                state.fail(
                    "steps_format",
                    f"step {t}: expected get_steps() to return (DecisionSteps, TerminalSteps), "
                    f"got {_shape_of(result)}",
                )
                state.broken = True
                continue
            decision, terminal = result
            try:
                ok = self._check_steps(state, t, decision, "DecisionSteps")
                ok = self._check_steps(state, t, terminal, "TerminalSteps") and ok
                if ok:
                    self._check_ids(state, t, decision, terminal)
                    self._record(state, t, decision, terminal)
                    state.decision = decision
                else:
                    state.broken = True
            except Exception as error:  # a malformed batch the checks missed
                state.fail(
                    "steps_format", f"step {t}: could not read the batches: {_describe(error)}"
                )
                state.broken = True

    # ------------------------------------------------------------------ batch checks

    def _check_steps(self, state: _BehaviorState, t: int, steps: Any, kind: str) -> bool:
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
                "steps_format",
                f"{where}.agent_id: expected a 1-D int array, got {_shape_of(ids)}",
            )
            return False
        n = ids.shape[0]
        check = "empty_batches" if n == 0 else "steps_format"
        if n == 0:
            state.empty_seen += 1
        ok = True
        if not np.issubdtype(ids.dtype, np.integer):
            state.fail(check, f"{where}.agent_id: expected an int dtype, got {ids.dtype}")
            ok = False
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
                expected = (n, *spec.shape)
                if not isinstance(array, np.ndarray) or array.shape != expected:
                    state.fail(
                        check,
                        f"{where}.obs[{i}]: expected shape {expected} (n_agents, *spec.shape), "
                        f"got {_shape_of(array)}",
                    )
                    ok = False
                elif array.dtype != np.float32:
                    state.fail(
                        check, f"{where}.obs[{i}]: expected dtype float32, got {array.dtype}"
                    )
                elif not np.all(np.isfinite(array)):
                    state.fail(check, f"{where}.obs[{i}]: expected finite values, got NaN/inf")
        floats = [("reward", steps.reward), ("group_reward", steps.group_reward)]
        for field_name, array in floats:
            if not isinstance(array, np.ndarray) or array.shape != (n,):
                state.fail(
                    check, f"{where}.{field_name}: expected shape ({n},), got {_shape_of(array)}"
                )
                ok = False
            elif array.dtype != np.float32:
                state.fail(
                    check, f"{where}.{field_name}: expected dtype float32, got {array.dtype}"
                )
            elif not np.all(np.isfinite(array)):
                bad = array[~np.isfinite(array)][0]
                state.fail(check, f"{where}.{field_name}: expected finite values, got {bad}")
        group = steps.group_id
        ints = (int, np.integer)
        if isinstance(group, (list, tuple)) and all(isinstance(g, ints) for g in group):
            # mlagents_envs (0.28) itself hands group ids out as a list of ints: accepted.
            group = np.asarray(group, dtype=np.int64).reshape(len(group))
        if not isinstance(group, np.ndarray) or group.shape != (n,):
            state.fail(check, f"{where}.group_id: expected shape ({n},), got {_shape_of(group)}")
            ok = False
        elif not np.issubdtype(group.dtype, np.integer):
            state.fail(check, f"{where}.group_id: expected an int dtype, got {group.dtype}")
        if kind == "TerminalSteps":
            flags = steps.interrupted
            if not isinstance(flags, np.ndarray) or flags.shape != (n,):
                state.fail(
                    check, f"{where}.interrupted: expected shape ({n},), got {_shape_of(flags)}"
                )
                ok = False
            elif flags.dtype != np.bool_:
                state.fail(check, f"{where}.interrupted: expected dtype bool, got {flags.dtype}")
        else:
            ok = self._check_masks(state, where, steps.action_mask, ids) and ok
        return ok

    def _check_masks(self, state: _BehaviorState, where: str, masks: Any, ids: np.ndarray) -> bool:
        n = ids.shape[0]
        if masks is None:
            return True
        branches = state.branches
        if not branches:
            if isinstance(masks, (list, tuple)) and len(masks) == 0:
                return True
            state.fail(
                "action_masks",
                f"{where}.action_mask: the spec has no discrete branches, expected None, "
                f"got {_shape_of(masks)}",
            )
            return False
        state.masks_seen = True
        if not isinstance(masks, (list, tuple)) or len(masks) != len(branches):
            got = f"{len(masks)} arrays" if isinstance(masks, (list, tuple)) else _shape_of(masks)
            state.fail(
                "action_masks",
                f"{where}.action_mask: expected a list of {len(branches)} arrays (one per "
                f"branch {branches}), got {got}",
            )
            return False
        for b, (mask, size) in enumerate(zip(masks, branches, strict=True)):
            if not isinstance(mask, np.ndarray) or mask.shape != (n, size):
                state.fail(
                    "action_masks",
                    f"{where}.action_mask[{b}]: expected shape ({n}, {size}) (n_agents, "
                    f"branch size), got {_shape_of(mask)}",
                )
                return False
            if mask.dtype != np.bool_:
                state.fail(
                    "action_masks",
                    f"{where}.action_mask[{b}]: expected dtype bool, got {mask.dtype}",
                )
            full = np.flatnonzero(np.all(mask, axis=1)) if n and size else np.zeros(0, int)
            if full.size:
                state.fail(
                    "action_masks",
                    f"{where}.action_mask[{b}]: expected at least one available action per "
                    f"agent, got every action masked for agent ids "
                    f"{ids[full[:5]].tolist()}",
                )
        return True

    def _check_ids(self, state: _BehaviorState, t: int, decision: Any, terminal: Any) -> None:
        for kind, steps in (("DecisionSteps", decision), ("TerminalSteps", terminal)):
            ids = steps.agent_id
            unique, counts = np.unique(ids, return_counts=True)
            if unique.size != ids.size:
                state.fail(
                    "agent_ids",
                    f"step {t}, {kind}.agent_id: expected unique ids, got "
                    f"{unique[counts > 1].tolist()} more than once in {ids.tolist()}",
                )
        terminal_ids = terminal.agent_id.tolist()
        unseen = [i for i in terminal_ids if i not in state.seen]
        if unseen:
            state.fail(
                "agent_ids",
                f"step {t}, TerminalSteps.agent_id: expected ids that requested a decision "
                f"before, got never-seen ids {unseen}",
            )
        state.seen.update(decision.agent_id.tolist())

    def _record(self, state: _BehaviorState, t: int, decision: Any, terminal: Any) -> None:
        trace, name = self.trace, state.name
        for kind, steps in (("decision", decision), ("terminal", terminal)):
            for i, array in enumerate(steps.obs):
                trace.append((t, name, f"{kind}.obs[{i}]", _digest(array)))
            fields = ["reward", "agent_id", "group_id", "group_reward"]
            fields.append("interrupted" if kind == "terminal" else "action_mask")
            for field_name in fields:
                value = getattr(steps, field_name)
                if field_name == "action_mask" and value is not None:
                    for b, mask in enumerate(value):
                        trace.append((t, name, f"{kind}.action_mask[{b}]", _digest(mask)))
                else:
                    trace.append((t, name, f"{kind}.{field_name}", _digest(value)))

    # ------------------------------------------------------------------ actions

    def _act(self, state: _BehaviorState, decision: Any, t: int) -> None:
        n = len(decision.agent_id)
        masks = decision.action_mask if state.branches else None
        action = _random_action(state.continuous, state.branches, n, masks, self.rng)
        check = "empty_batches" if n == 0 else "random_actions"
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
            method = "set_action_for_agent" if by_agent else "set_actions"
            state.fail(
                check,
                f"step {t}: expected {method} to accept a valid random action for {n} agents "
                f"(continuous {action.continuous.shape}, discrete {action.discrete.tolist()}), "
                f"it raised {_describe(error)}",
            )

    # ------------------------------------------------------------------ results

    def results(self) -> list[CheckResult]:
        results: list[CheckResult] = []
        stopped_at = None
        for check in _ENV_CHECKS:
            if check in self.env_failures:
                results.append(
                    CheckResult(check, None, CheckStatus.FAILED, self.env_failures[check])
                )
                stopped_at = check
            elif stopped_at is not None:
                results.append(
                    CheckResult(check, None, CheckStatus.SKIPPED, f"{stopped_at} failed")
                )
            else:
                results.append(CheckResult(check, None, CheckStatus.PASSED, self._note(check)))
        for state in self.behaviors.values():
            for check in _BEHAVIOR_CHECKS:
                results.append(self._behavior_result(state, check))
        return results

    def _note(self, check: str) -> str:
        if check == "behavior_specs":
            return f"{len(self.behaviors)} behavior(s): {list(self.behaviors)}"
        if check == "step":
            return f"{self.steps} step(s)"
        return ""

    def _behavior_result(self, state: _BehaviorState, check: str) -> CheckResult:
        if check in state.first:
            more = state.count[check] - 1
            message = state.first[check] + (f" (and {more} more)" if more else "")
            return CheckResult(check, state.name, CheckStatus.FAILED, message)
        if not state.usable and check != "behavior_spec":
            return CheckResult(check, state.name, CheckStatus.SKIPPED, "behavior_spec failed")
        if check == "action_masks":
            if not state.branches:
                return CheckResult(check, state.name, CheckStatus.SKIPPED, "no discrete branches")
            if not state.masks_seen:
                return CheckResult(check, state.name, CheckStatus.PASSED, "no masks provided")
        if check == "empty_batches" and not state.empty_seen:
            return CheckResult(check, state.name, CheckStatus.SKIPPED, "no empty batch occurred")
        if check == "random_actions" and not state.actions_set:
            reason = "no step taken" if not self.steps else "no batch could be acted on"
            return CheckResult(check, state.name, CheckStatus.SKIPPED, reason)
        return CheckResult(check, state.name, CheckStatus.PASSED)


def _shape_of(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"shape {value.shape} dtype {value.dtype}"
    return f"a {type(value).__name__}"


def _random_action(
    continuous: int,
    branches: tuple[int, ...],
    n: int,
    masks: list[np.ndarray] | None,
    rng: np.random.Generator,
) -> ActionTuple:
    """Uniform actions, as ``ActionSpec.random_action``, drawing only unmasked choices."""
    cont = rng.uniform(-1.0, 1.0, size=(n, continuous)).astype(np.float32)
    discrete = np.zeros((n, len(branches)), dtype=np.int32)
    for b, size in enumerate(branches):
        scores = rng.random((n, size))
        if masks is not None:
            # A masked choice can never win; an all-masked row (reported) falls back to 0.
            scores = np.where(np.asarray(masks[b], dtype=bool), -1.0, scores)
        discrete[:, b] = np.argmax(scores, axis=1)
    return ActionTuple(continuous=cont, discrete=discrete)


def _check_determinism(
    env: Any,
    first: _Run,
    steps: int,
    seed: int,
    requested: bool | None,
    make_env: Callable[[], BaseEnv] | None,
) -> CheckResult:
    enabled = requested if requested is not None else (make_env is not None or _is_seedable(env))
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
                        f"determinism: make_env() raised {_describe(error)}",
                    )  # fmt: skip
            run = _Run(envs[-1], steps, seed)
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
