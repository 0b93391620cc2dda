"""What ``check_base_env`` asks of each behaviour: a usable spec, then batches whose arrays
match it, with unique ids and masks that leave an action. Every failure is kept, per check."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeGuard

import numpy as np

from zooport.envs.check_report import CheckStatus
from zooport.errors import a_type


def describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def shape_of(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"shape {value.shape} dtype {value.dtype}"
    return a_type(value)


def _is_int(value: Any) -> TypeGuard[int | np.integer]:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def spec_problems(spec: Any) -> list[str]:
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


@dataclass
class BehaviorChecks:
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
            self.fail(check, f"{label}: expected shape {shape}{note}, got {shape_of(array)}")
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

    def check_steps(self, t: int, steps: Any, kind: str) -> bool:
        """Checks one batch's fields; False when it is too malformed to use further."""
        where = f"step {t}, {kind}"
        attrs = ["obs", "reward", "agent_id", "group_id", "group_reward"]
        attrs.append("action_mask" if kind == "DecisionSteps" else "interrupted")
        missing = [a for a in attrs if not hasattr(steps, a)]
        if missing:
            self.fail(
                "steps_format",
                f"{where}: expected attributes {attrs}, missing {missing} "
                f"on {type(steps).__name__}",
            )
            return False
        ids = steps.agent_id
        if not isinstance(ids, np.ndarray) or ids.ndim != 1:
            self.fail(
                "steps_format", f"{where}.agent_id: expected a 1-D int array, got {shape_of(ids)}"
            )
            return False
        n = ids.shape[0]
        check = "empty_batches" if n == 0 else "steps_format"
        self.empty_seen += n == 0
        ok = np.issubdtype(ids.dtype, np.integer)
        if not ok:
            self.fail(check, f"{where}.agent_id: expected an int dtype, got {ids.dtype}")
        length: int | str
        try:
            length = len(steps)
        except Exception as error:
            length = f"len() raising {describe(error)}"
        if length != n:
            self.fail(check, f"{where}: expected len() == {n} (agents), got {length}")
        obs, n_obs = steps.obs, len(self.spec.observation_specs)
        if not isinstance(obs, (list, tuple)) or len(obs) != n_obs:
            got = f"{len(obs)} arrays" if isinstance(obs, (list, tuple)) else shape_of(obs)
            self.fail(
                check,
                f"{where}.obs: expected a list of {n_obs} arrays (one per observation "
                f"spec), got {got}",
            )
            ok = False
        else:
            for i, (array, spec) in enumerate(zip(obs, self.spec.observation_specs, strict=True)):
                shape, note = (n, *spec.shape), " (n_agents, *spec.shape)"
                label = f"{where}.obs[{i}]"
                ok = self.check_field(check, label, array, shape, np.float32, note) and ok
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
            ok = self.check_field(check, f"{where}.{name}", array, (n,), dtype) and ok
        if kind == "DecisionSteps":
            ok = self.check_masks(f"{where}.action_mask", steps.action_mask, ids) and ok
        return bool(ok)

    def check_masks(self, where: str, masks: Any, ids: np.ndarray) -> bool:
        n, branches = ids.shape[0], self.branches
        is_list = isinstance(masks, (list, tuple))
        if masks is None or (not branches and is_list and len(masks) == 0):
            return True
        if not branches:
            self.fail(
                "action_masks",
                f"{where}: the spec has no discrete branches, expected None, got {shape_of(masks)}",
            )
            return False
        self.masks_seen = True
        if not is_list or len(masks) != len(branches):
            got = f"{len(masks)} arrays" if is_list else shape_of(masks)
            self.fail(
                "action_masks",
                f"{where}: expected a list of {len(branches)} arrays "
                f"(one per branch {branches}), got {got}",
            )
            return False
        for b, (mask, size) in enumerate(zip(masks, branches, strict=True)):
            label, note = f"{where}[{b}]", " (n_agents, branch size)"
            if not self.check_field("action_masks", label, mask, (n, size), np.bool_, note):
                return False
            full = np.flatnonzero(np.all(mask, axis=1)) if n and size else np.zeros(0, int)
            if full.size:
                self.fail(
                    "action_masks",
                    f"{where}[{b}]: expected at least one available "
                    f"action per agent, got every action masked for agent ids "
                    f"{ids[full[:5]].tolist()}",
                )
        return True

    def check_ids(self, t: int, decision: Any, terminal: Any) -> None:
        for kind, steps in (("DecisionSteps", decision), ("TerminalSteps", terminal)):
            ids = steps.agent_id
            unique, counts = np.unique(ids, return_counts=True)
            if unique.size != ids.size:
                self.fail(
                    "agent_ids",
                    f"step {t}, {kind}.agent_id: expected unique ids, got "
                    f"{unique[counts > 1].tolist()} more than once in {ids.tolist()}",
                )
        unseen = [i for i in terminal.agent_id.tolist() if i not in self.seen]
        if unseen:
            self.fail(
                "agent_ids",
                f"step {t}, TerminalSteps.agent_id: expected ids that requested a decision "
                f"before, got never-seen ids {unseen}",
            )
        self.seen.update(decision.agent_id.tolist())

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
