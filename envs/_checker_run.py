"""The run behind ``check_base_env``: one reset and random steps of a ``BaseEnv``, every batch
checked against its behaviour's spec (each failure kept, per check) and fingerprinted."""

from __future__ import annotations

import hashlib
import os
import traceback
from typing import Any, TypeGuard

import numpy as np

from zooport.envs.base_env import ActionTuple, random_actions
from zooport.envs.capabilities import reset_core
from zooport.errors import a_type


def one_line(error: BaseException) -> str:
    """``"<Type>: <message>"`` on one line; a bare ``assert`` names its file, line and source."""
    message = " ".join(str(error).split())
    frames = [] if message else traceback.extract_tb(error.__traceback__)
    if frames:
        source = f": {frames[-1].line}" if frames[-1].line else ""
        message = f"at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}{source}"
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def _shape_of(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"shape {value.shape} dtype {value.dtype}"
    return a_type(value)


def _is_int(value: Any) -> TypeGuard[int | np.integer]:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _spec_problems(spec: Any) -> list[str]:
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
        if not isinstance(getattr(obs, "name", None), str):
            problems.append(f"{where}.name: expected a str, got {getattr(obs, 'name', None)!r}")
    continuous = getattr(action_spec, "continuous_size", None)
    if not _is_int(continuous) or continuous < 0:
        problems.append(f"action_spec.continuous_size: expected an int >= 0, got {continuous!r}")
    branches = getattr(action_spec, "discrete_branches", None)
    if not isinstance(branches, tuple) or not all(_is_int(b) and b > 0 for b in branches):
        problems.append(
            f"action_spec.discrete_branches: expected a tuple of positive ints, got {branches!r}"
        )
    return problems


def _fingerprint(data: np.ndarray) -> str:
    """What two runs must agree on: shape, dtype, the first values and a hash of them all."""
    content = hashlib.blake2b(data.tobytes(), digest_size=16).hexdigest()[:8]
    return f"shape {data.shape} {data.dtype} starting {data.ravel()[:6].tolist()} (hash {content})"


class Behavior:
    """What one run learns about one behaviour: its failures per check, the ids seen."""

    def __init__(self, name: str, spec: Any) -> None:
        self.name, self.spec = name, spec
        self.failures: dict[str, list[str]] = {}
        self.seen: set[int] = set()
        self.empty_seen = self.actions_set = 0
        self.masks_seen = False
        self.decision: Any = None
        problems = _spec_problems(spec)
        if problems:
            self.fail("behavior_spec", "; ".join(problems))
        # A bad spec, or get_steps raising or returning garbage: stop asking.
        self.broken = bool(problems)
        branches = () if problems else spec.action_spec.discrete_branches
        self.branches = tuple(int(b) for b in branches)

    def fail(self, check: str, detail: str) -> None:
        self.failures.setdefault(check, []).append(f"{check}: behavior {self.name!r}, {detail}")

    def check_field(
        self, check: str, label: str, array: Any, shape: tuple, dtype: Any, note: str = ""
    ) -> bool:
        if not isinstance(array, np.ndarray) or array.shape != shape:
            self.fail(check, f"{label}: expected shape {shape}{note}, got {_shape_of(array)}")
            return False
        if dtype is int:
            if not np.issubdtype(array.dtype, np.integer):
                self.fail(check, f"{label}: expected an int dtype, got {array.dtype}")
        elif array.dtype != dtype:
            self.fail(check, f"{label}: expected dtype {np.dtype(dtype)}, got {array.dtype}")
        elif dtype is np.float32 and not np.all(np.isfinite(array)):
            self.fail(
                check, f"{label}: expected finite values, got {array[~np.isfinite(array)][0]}"
            )
        return True

    def check_steps(self, t: int, steps: Any, kind: str) -> list[tuple[str, Any]] | None:
        """Checks one batch: its arrays by name, or None when too malformed to use further."""
        where = f"step {t}, {kind}"
        last = "action_mask" if kind == "DecisionSteps" else "interrupted"
        attrs = ["obs", "reward", "agent_id", "group_id", "group_reward", last]
        missing = [a for a in attrs if not hasattr(steps, a)]
        ids = getattr(steps, "agent_id", None)
        if missing or not isinstance(ids, np.ndarray) or ids.ndim != 1:
            self.fail(
                "steps_format",
                f"{where}: expected attributes {attrs}, missing {missing} on {type(steps).__name__}"
                if missing
                else f"{where}.agent_id: expected a 1-D int array, got {_shape_of(ids)}",
            )
            return None
        n = ids.shape[0]
        check = "empty_batches" if n == 0 else "steps_format"
        self.empty_seen += n == 0
        ok = np.issubdtype(ids.dtype, np.integer)  # else check_ids cannot use them
        length: int | str
        try:
            length = len(steps)
        except Exception as error:
            length = f"len() raising {one_line(error)}"
        if length != n:
            self.fail(check, f"{where}: expected len() == {n} (agents), got {length}")
        obs, specs = steps.obs, self.spec.observation_specs
        if not self.check_list(check, f"{where}.obs", obs, len(specs), "observation spec"):
            ok, obs = False, []
        group = steps.group_id
        if isinstance(group, (list, tuple)) and all(
            isinstance(g, (int, np.integer)) for g in group
        ):
            # mlagents_envs (0.28) itself hands group ids out as a list of ints: accepted.
            group = np.asarray(group, dtype=np.int64).reshape(len(group))
        fields: list[tuple[str, Any, tuple, Any]] = [("agent_id", ids, (n,), int)]
        fields += [
            (f"obs[{i}]", array, (n, *spec.shape), np.float32)
            for i, (array, spec) in enumerate(zip(obs, specs, strict=False))
        ]
        fields += [
            ("reward", steps.reward, (n,), np.float32),
            ("group_reward", steps.group_reward, (n,), np.float32),
            ("group_id", group, (n,), int),
        ]
        if kind == "TerminalSteps":
            fields.append(("interrupted", steps.interrupted, (n,), np.bool_))
        for name, array, shape, dtype in fields:
            note = " (n_agents, *spec.shape)" if name.startswith("obs") else ""
            ok = self.check_field(check, f"{where}.{name}", array, shape, dtype, note) and ok
        masks = steps.action_mask if kind == "DecisionSteps" else None
        ok = self.check_masks(f"{where}.action_mask", masks, ids) and ok
        if not ok:
            return None
        unique, counts = np.unique(ids, return_counts=True)
        if unique.size != n:
            self.fail(
                "agent_ids",
                f"{where}.agent_id: expected unique ids, got {unique[counts > 1].tolist()} more "
                f"than once in {ids.tolist()}",
            )
        named = [(name, array) for name, array, _, _ in fields]
        named += [(f"action_mask[{b}]", mask) for b, mask in enumerate(masks or ())]
        prefix = kind.removesuffix("Steps").lower()
        return [(f"{prefix}.{name}", array) for name, array in named]

    def check_list(self, check: str, label: str, value: Any, n: int, what: str) -> bool:
        if isinstance(value, (list, tuple)) and len(value) == n:
            return True
        got = f"{len(value)} arrays" if isinstance(value, (list, tuple)) else _shape_of(value)
        self.fail(check, f"{label}: expected a list of {n} arrays (one per {what}), got {got}")
        return False

    def check_masks(self, where: str, masks: Any, ids: np.ndarray) -> bool:
        n, branches = ids.shape[0], self.branches
        if masks is None or (not branches and isinstance(masks, (list, tuple)) and not masks):
            return True
        if not branches:
            got = f"expected None, got {_shape_of(masks)}"
            self.fail("action_masks", f"{where}: the spec has no discrete branches, {got}")
            return False
        self.masks_seen = True
        if not self.check_list("action_masks", where, masks, len(branches), f"branch {branches}"):
            return False
        for b, (mask, size) in enumerate(zip(masks, branches, strict=True)):
            label, note = f"{where}[{b}]", " (n_agents, branch size)"
            if not self.check_field("action_masks", label, mask, (n, size), np.bool_, note):
                return False
            full = np.flatnonzero(np.all(mask, axis=1)) if n and size else np.zeros(0, int)
            if full.size:
                self.fail(
                    "action_masks",
                    f"{label}: expected at least one available action per agent, got every "
                    f"action masked for agent ids {ids[full[:5]].tolist()}",
                )
        return True


class Run:
    """One reset and ``steps`` random steps; validates the batches and fingerprints them."""

    def __init__(self, env: Any, steps: int, seed: int) -> None:
        self.env, self.steps, self.seed = env, steps, seed
        self.rng = np.random.default_rng(seed)
        self.env_failures: dict[str, str] = {}
        self.behaviors: dict[str, Behavior] = {}
        self.trace: list[tuple[int, str, str, str]] = []
        self.completed = self._run()

    def _run(self) -> bool:
        """False when a failure of the environment itself stopped the run."""
        try:
            reset_core(self.env, self.seed)
        except Exception as error:  # any failure of the env is reported
            return self._stop("reset", f"reset() raised {one_line(error)}")
        try:
            specs = self.env.behavior_specs
            names = list(specs)
            bad = [n for n in names if not isinstance(n, str)]
            if not names or bad:
                return self._stop(
                    "behavior_specs",
                    f"expected a mapping of at least one behaviour name (str) to BehaviorSpec, "
                    f"got {f'non-str names {bad!r}' if bad else 'none'}",
                )
            self.behaviors = {name: Behavior(name, specs[name]) for name in names}
        except Exception as error:
            return self._stop("behavior_specs", f"reading behavior_specs raised {one_line(error)}")
        self._observe(0)
        for t in range(1, self.steps + 1):
            for state in self.behaviors.values():
                if state.decision is not None:
                    self._act(state, t)
            try:
                self.env.step()
            except Exception as error:
                return self._stop("step", f"step() {t} of {self.steps} raised {one_line(error)}")
            self._observe(t)
        return True

    def _stop(self, check: str, detail: str) -> bool:
        self.env_failures[check] = f"{check}: {detail}"
        return False

    def _observe(self, t: int) -> None:
        for state in self.behaviors.values():
            state.decision = None
            if state.broken:
                continue
            state.broken = True  # until the batches prove usable
            try:
                result = self.env.get_steps(state.name)
            except Exception as error:
                state.fail("steps_format", f"step {t}: get_steps() raised {one_line(error)}")
                continue
            if not isinstance(result, tuple) or len(result) != 2:
                state.fail(
                    "steps_format",
                    f"step {t}: expected get_steps() to return (DecisionSteps, TerminalSteps), "
                    f"got {_shape_of(result)}",
                )
                continue
            try:
                arrays = state.check_steps(t, result[0], "DecisionSteps")
                terminal = state.check_steps(t, result[1], "TerminalSteps")
                if arrays is not None and terminal is not None:
                    unseen = [i for i in result[1].agent_id.tolist() if i not in state.seen]
                    if unseen:
                        state.fail(
                            "agent_ids",
                            f"step {t}, TerminalSteps.agent_id: expected ids that requested a "
                            f"decision before, got never-seen ids {unseen}",
                        )
                    state.seen.update(result[0].agent_id.tolist())
                    self.trace += [
                        (t, state.name, x, _fingerprint(a)) for x, a in arrays + terminal
                    ]
                    state.decision, state.broken = result[0], False
            except Exception as error:  # a malformed batch the checks missed
                state.fail(
                    "steps_format", f"step {t}: could not read the batches: {one_line(error)}"
                )

    def _act(self, state: Behavior, t: int) -> None:
        ids = state.decision.agent_id
        masks = state.decision.action_mask if state.branches else None
        action = random_actions(state.spec.action_spec, len(ids), self.rng, masks)
        by_agent = t % 2 == 0 and len(ids) > 0
        try:
            if by_agent:  # on alternate steps, one agent at a time
                for row, agent_id in enumerate(ids.tolist()):
                    one = ActionTuple(
                        action.continuous[row : row + 1], action.discrete[row : row + 1]
                    )
                    self.env.set_action_for_agent(state.name, agent_id, one)
            else:
                self.env.set_actions(state.name, action)
            state.actions_set += 1
        except Exception as error:
            state.fail(
                "empty_batches" if len(ids) == 0 else "random_actions",
                f"step {t}: expected {'set_action_for_agent' if by_agent else 'set_actions'} to "
                f"accept a valid random action for {len(ids)} agents (continuous "
                f"{action.continuous.shape}, discrete {action.discrete.tolist()}), it raised "
                f"{one_line(error)}",
            )
