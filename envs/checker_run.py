"""One run of :func:`~zooport.envs.checker.check_base_env`: a reset and N random steps, each
batch validated against its behaviour's spec and fingerprinted for the determinism check.
"""

from __future__ import annotations

import hashlib
from typing import Any, TypeGuard

import numpy as np

from zooport.envs.actions import ActionTuple, random_actions
from zooport.envs.capabilities import reset_core
from zooport.errors import a_type

__all__ = ["ENV_CHECKS", "BEHAVIOR_CHECKS", "CheckerRun", "describe"]

ENV_CHECKS = ("reset", "behavior_specs", "step")
BEHAVIOR_CHECKS = (
    "behavior_spec", "steps_format", "agent_ids", "action_masks", "empty_batches",
    "random_actions",
)  # fmt: skip


def describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def _is_int(value: Any) -> TypeGuard[int | np.integer]:
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


def _check_field(
    state: _BehaviorState,
    check: str,
    label: str,
    array: Any,
    shape: tuple,
    dtype: Any,
    note: str = "",
) -> bool:
    """Checks one array of a batch: shape, then dtype, then finite; False for a wrong shape."""
    if not isinstance(array, np.ndarray) or array.shape != shape:
        state.fail(check, f"{label}: expected shape {shape}{note}, got {_shape_of(array)}")
        return False
    if dtype is int:
        if not np.issubdtype(array.dtype, np.integer):
            state.fail(check, f"{label}: expected an int dtype, got {array.dtype}")
    elif array.dtype != dtype:
        state.fail(check, f"{label}: expected dtype {np.dtype(dtype)}, got {array.dtype}")
    elif dtype is np.float32 and not np.all(np.isfinite(array)):
        state.fail(check, f"{label}: expected finite values, got {array[~np.isfinite(array)][0]}")
    return True


class CheckerRun:
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
            for name in names:
                self.behaviors[name] = _BehaviorState(name, specs[name])
        except Exception as error:
            self.env_failures["behavior_specs"] = (
                f"behavior_specs: reading behavior_specs raised {describe(error)}"
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
                    describe(error)
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
                state.fail("steps_format", f"step {t}: get_steps() raised {describe(error)}")
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
                    "steps_format", f"step {t}: could not read the batches: {describe(error)}"
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
        length: int | str
        try:
            length = len(steps)
        except Exception as error:
            length = f"len() raising {describe(error)}"
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
                ok = (
                    _check_field(state, check, f"{where}.obs[{i}]", array, shape, np.float32, note)
                    and ok
                )
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
            ok = _check_field(state, check, f"{where}.{name}", array, (n,), dtype) and ok
        if kind == "DecisionSteps":
            ok = self._check_masks(state, where, steps.action_mask, ids) and ok
        return ok

    def _check_masks(self, state: _BehaviorState, where: str, masks: Any, ids: np.ndarray) -> bool:
        n, branches, where = ids.shape[0], state.branches, f"{where}.action_mask"
        if masks is None:
            return True
        is_list = isinstance(masks, (list, tuple))
        if not branches:
            if is_list and len(masks) == 0:
                return True
            got = _shape_of(masks)
            state.fail(
                "action_masks",
                f"{where}: the spec has no discrete branches, expected None, got {got}",
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
        action = random_actions(state.spec.action_spec, n, self.rng, masks)
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
                f"it raised {describe(error)}",
            )

    # ------------------------------------------------------------------ results

    def results(self) -> list[tuple[str, str | None, str, str]]:
        """``(check, behaviour or None, "pass"/"fail"/"skip", message)`` per check."""
        results: list[tuple[str, str | None, str, str]] = []
        stopped_at = None
        for check in ENV_CHECKS:
            if check in self.env_failures:
                results.append((check, None, "fail", self.env_failures[check]))
                stopped_at = check
            elif stopped_at is not None:
                results.append((check, None, "skip", f"{stopped_at} failed"))
            else:
                note = {"behavior_specs": f"{len(self.behaviors)} behavior(s): "
                        f"{list(self.behaviors)}", "step": f"{self.steps} step(s)"}  # fmt: skip
                results.append((check, None, "pass", note.get(check, "")))
        for state in self.behaviors.values():
            results += [
                (check, state.name, *self._outcome(state, check)) for check in BEHAVIOR_CHECKS
            ]
        return results

    def _outcome(self, state: _BehaviorState, check: str) -> tuple[str, str]:
        if check in state.first:
            more = state.count[check] - 1
            return "fail", state.first[check] + (f" (and {more} more)" if more else "")
        if not state.usable and check != "behavior_spec":
            return "skip", "behavior_spec failed"
        if check == "action_masks" and not state.branches:
            return "skip", "no discrete branches"
        if check == "action_masks" and not state.masks_seen:
            return "pass", "no masks provided"
        if check == "empty_batches" and not state.empty_seen:
            return "skip", "no empty batch occurred"
        if check == "random_actions" and not state.actions_set:
            return "skip", "no step taken" if not self.steps else "no batch could be acted on"
        return "pass", ""


def _shape_of(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"shape {value.shape} dtype {value.dtype}"
    return a_type(value)
