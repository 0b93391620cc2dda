"""Tests of the conformance checker ``zooport.envs.checker``.

``GoodEnv`` is a hand-written (not BatchedEnv) BaseEnv that follows the contract and refuses
masked actions, so it only passes if the checker's random actions respect the masks. Each
broken variant below corrupts one thing; the checker must report that check as failed, with
the behaviour, the expected and the actual value in the message, and never crash.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

from zooport import ActionError, UnknownAgentError, UnknownBehaviorError, ZooportError
from zooport.envs.base_env import (
    ActionSpec,
    BaseEnv,
    BehaviorMapping,
    BehaviorSpec,
    DecisionSteps,
    ObservationSpec,
    ObservationType,
    TerminalSteps,
)
from zooport.envs.batched_env import BatchedEnv, StepResult
from zooport.envs.checker import (
    CHECKS,
    CheckReport,
    CheckResult,
    CheckStatus,
    ConformanceError,
    check_base_env,
)
from zooport.envs.registry import default_registry

from tests.support.specs import obs_spec

RUNNER = "Runner?team=0"
SLEEPER = "Sleeper"
STEPS = 20


class GoodEnv(BaseEnv):
    """Runner: 4 agents (ids 10-13), two observations, hybrid actions with masks; one agent
    ends every 5 steps and restarts at once. Sleeper: one agent (id 20) that decides every
    third step, so its DecisionSteps are often empty."""

    def __init__(self) -> None:
        self.t = 0
        self.closed = False
        hybrid = ActionSpec.create_hybrid(1, (3, 2))
        self.specs = {
            RUNNER: BehaviorSpec([obs_spec((3,)), obs_spec((2, 2))], hybrid),
            SLEEPER: BehaviorSpec([obs_spec((2,))], ActionSpec.create_continuous(2)),
        }
        self.batches: dict[str, tuple] = {}

    @property
    def behavior_specs(self):
        return BehaviorMapping(dict(self.specs))

    def reset(self) -> None:
        self.t = 0
        self._publish()

    def step(self) -> None:
        self.t += 1
        self._publish()

    def close(self) -> None:
        self.closed = True

    def _publish(self) -> None:
        t = self.t
        ids = np.arange(10, 14, dtype=np.int32)
        mask0 = np.zeros((4, 3), bool)
        mask0[ids % 2 == 0, 2] = True
        decision = DecisionSteps(
            [
                (np.full((4, 3), t) + ids[:, None]).astype(np.float32),
                np.zeros((4, 2, 2), np.float32),
            ],
            np.full(4, 0.1 * t, np.float32),
            ids,
            [mask0, np.zeros((4, 2), bool)],
            np.zeros(4, np.int32),
            np.zeros(4, np.float32),
        )
        terminal = TerminalSteps.empty(self.specs[RUNNER])
        if t and t % 5 == 0:
            terminal = TerminalSteps(
                [np.ones((1, 3), np.float32), np.ones((1, 2, 2), np.float32)],
                np.ones(1, np.float32),
                np.array([t % 10 == 0]),
                np.array([10 + (t // 5) % 4], np.int32),
                np.zeros(1, np.int32),
                np.zeros(1, np.float32),
            )
        runner = self.corrupt(RUNNER, decision, terminal)
        sleeper_decision = DecisionSteps.empty(self.specs[SLEEPER])
        if t % 3 == 0:
            sleeper_decision = DecisionSteps(
                [np.full((1, 2), t, np.float32)],
                np.ones(1, np.float32),
                np.array([20], np.int32),
                None,
                np.zeros(1, np.int32),
                np.zeros(1, np.float32),
            )
        sleeper = self.corrupt(SLEEPER, sleeper_decision, TerminalSteps.empty(self.specs[SLEEPER]))
        self.batches = {RUNNER: runner, SLEEPER: sleeper}

    def corrupt(self, name, decision, terminal):
        """Broken variants override this to damage one batch."""
        return decision, terminal

    def get_steps(self, behavior_name):
        if behavior_name not in self.batches:
            raise UnknownBehaviorError(behavior_name)
        return self.batches[behavior_name]

    def _check(self, name, action, n, rows):
        action = self.specs[name].action_spec._validate_action(action, n, name)
        masks = self.batches[name][0].action_mask
        if masks is not None:
            for branch, mask in enumerate(masks):
                if mask[rows, action.discrete[:, branch]].any():
                    raise ActionError(f"{name}: a masked action was chosen")

    def set_actions(self, behavior_name, action) -> None:
        n = len(self.batches[behavior_name][0])
        self._check(behavior_name, action, n, np.arange(n))

    def set_action_for_agent(self, behavior_name, agent_id, action) -> None:
        decision = self.batches[behavior_name][0]
        if agent_id not in decision:
            raise UnknownAgentError(agent_id)
        self._check(behavior_name, action, 1, [decision.agent_id_to_index[agent_id]])


def statuses(report: CheckReport, behavior: str | None = None) -> dict[str, str]:
    return {
        r.check: r.status.value
        for r in report.results
        if behavior is None or r.behavior in (behavior, None)
    }


def failure(report: CheckReport, check: str, behavior: str | None = None) -> str:
    found = [r for r in report.failures if r.check == check and r.behavior == behavior]
    assert found, f"{check} did not fail:\n{report}"
    return found[0].message


# --------------------------------------------------------------------------- good envs


def test_good_env_passes_every_check():
    env = GoodEnv()
    report = check_base_env(env, steps=STEPS)
    assert report.passed, report
    assert report.env_name == "GoodEnv"
    assert statuses(report, RUNNER) == {
        "reset": "pass", "behavior_specs": "pass", "step": "pass", "behavior_spec": "pass",
        "steps_format": "pass", "agent_ids": "pass", "action_masks": "pass",
        "empty_batches": "pass", "random_actions": "pass",
        "determinism": "skip",  # not seedable and no make_env
    }  # fmt: skip
    assert statuses(report, SLEEPER)["action_masks"] == "skip"  # no discrete branches
    assert env.t == STEPS and not env.closed  # the env is stepped and left open
    # One result per environment check and per behaviour check of each behaviour.
    assert len(report.results) == 3 + 2 * 6 + 1
    assert {r.check for r in report.results} == set(CHECKS)


def test_determinism_on_request_and_with_a_factory():
    report = check_base_env(GoodEnv(), steps=STEPS, check_determinism=True)
    result = report.results[-1]
    assert result.check == "determinism" and result.status is CheckStatus.PASSED
    made: list[GoodEnv] = []

    def factory():
        made.append(GoodEnv())
        return made[-1]

    report = check_base_env(GoodEnv(), steps=STEPS, make_env=factory)
    assert report.results[-1].status is CheckStatus.PASSED
    assert len(made) == 2 and all(env.closed for env in made)


class Walkers(BatchedEnv):
    """Seeded random walk with masks; agents end at a random time and restart."""

    def __init__(self, n: int = 6, global_rng: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        spec = BehaviorSpec([obs_spec((2,))], ActionSpec.create_discrete((3,)))
        self._add_behavior("Walker", spec, n, decision_period=2)
        self.n = n
        self.pos = np.zeros(n, np.float32)
        self.global_rng = global_rng

    def _reset_agents(self, behavior, slots):
        if self.global_rng:  # the bug under test: not seeded by reset(seed=...)
            self.pos[slots] = np.random.randint(-3, 4, slots.size)
        else:
            self.pos[slots] = self.np_random.integers(-3, 4, slots.size)

    def _step(self, actions):
        self.pos += actions["Walker"].discrete[:, 0] - 1
        done = np.abs(self.pos) >= 4
        return {"Walker": StepResult(-np.abs(self.pos), done)}

    def _observe(self, behavior, slots):
        return [np.stack([self.pos[slots], np.sign(self.pos[slots])], axis=1)]

    def _action_mask(self, behavior, slots):
        # Moving left (action 0) is forbidden at the left edge.
        return [np.stack([self.pos[slots] <= -3, np.zeros(slots.size, bool),
                          np.zeros(slots.size, bool)], axis=1)]  # fmt: skip


@pytest.mark.parametrize("reorder", [False, True])
def test_batched_env_passes_with_determinism(reorder):
    report = check_base_env(Walkers(seed=1, reorder_agents=reorder), steps=60)
    assert report.passed, report
    determinism = report.results[-1]
    assert determinism.status is CheckStatus.PASSED
    assert "identical" in determinism.message


def test_non_deterministic_env_fails_determinism():
    report = check_base_env(Walkers(seed=1, global_rng=True), steps=10, strict=False)
    message = failure(report, "determinism", "Walker")
    assert "behavior 'Walker', step 0, decision.obs[0] differs" in message
    assert "expected shape (6, 2) float32" in message and "got shape (6, 2)" in message
    # Every other check still passes.
    assert [r.check for r in report.failures] == ["determinism"]


def test_factory_with_different_seeds_fails_determinism():
    seeds = iter([1, 2])
    report = check_base_env(
        Walkers(seed=0), steps=10, make_env=lambda: Walkers(seed=next(seeds)), strict=False
    )
    # reset(seed=0) is applied to both: identical after all.
    assert report.results[-1].status is CheckStatus.PASSED
    counter = iter([3, 4])
    report = check_base_env(
        Walkers(seed=0),
        steps=10,
        make_env=lambda: Walkers(n=next(counter), seed=0),
        check_determinism=True,
        strict=False,
    )
    assert "differs between two runs with seed 0" in failure(report, "determinism", "Walker")


def test_determinism_can_be_disabled():
    report = check_base_env(Walkers(seed=1, global_rng=True), steps=5, check_determinism=False)
    assert report.results[-1] == CheckResult("determinism", None, CheckStatus.SKIPPED, "disabled")


def test_make_env_that_raises_is_reported():
    def factory():
        raise OSError("no display")

    report = check_base_env(GoodEnv(), steps=3, make_env=factory, strict=False)
    assert "make_env() raised OSError: no display" in failure(report, "determinism")


# --------------------------------------------------------------------------- duck typing

UnitySpec = namedtuple("UnitySpec", ["observation_specs", "action_spec"])
UnityObs = namedtuple("UnityObs", ["shape", "dimension_property", "observation_type", "name"])
UnityActionSpec = namedtuple("UnityActionSpec", ["continuous_size", "discrete_branches"])


class UnityBatch:
    """A steps batch of another library's making: attributes and ``__len__`` only."""

    def __init__(self, n, **fields):
        self.__dict__.update(fields)
        self.agent_id = np.arange(n, dtype=np.int32)
        self.obs = [np.zeros((n, 4), np.float32)]
        self.reward = np.zeros(n, np.float32)
        self.group_id = np.zeros(n, np.int32)
        self.group_reward = np.zeros(n, np.float32)

    def __len__(self):
        return len(self.agent_id)


class UnityLike:
    """Not a zooport BaseEnv and no zooport spec types: only ML-Agents' attribute names."""

    def __init__(self):
        self.given = []

    behavior_specs = {"Crawler": UnitySpec([UnityObs((4,), (1,), 0, "v")], UnityActionSpec(2, ()))}

    def reset(self):
        pass

    def step(self):
        pass

    def get_steps(self, name):
        return UnityBatch(2, action_mask=None), UnityBatch(0, interrupted=np.zeros(0, bool))

    def set_actions(self, name, action):
        assert action.continuous.shape == (2, 2)
        self.given.append(action.continuous.copy())

    def set_action_for_agent(self, name, agent_id, action):
        assert action.continuous.shape == (1, 2)
        self.given.append(action.continuous.copy())


def test_duck_typed_env_from_another_library():
    env = UnityLike()
    report = check_base_env(env, steps=4)  # type: ignore[arg-type]
    assert report.passed, report
    assert len(env.given) == 2 + 2 * 2  # set_actions twice, set_action_for_agent 2 x 2
    assert all(np.abs(a).max() <= 1 for a in env.given)


# --------------------------------------------------------------------------- broken envs


class Float64Obs(GoodEnv):
    def corrupt(self, name, decision, terminal):
        if name == RUNNER:
            decision.obs[0] = decision.obs[0].astype(np.float64)
        return decision, terminal


class DuplicateIds(GoodEnv):
    def corrupt(self, name, decision, terminal):
        if name == RUNNER:
            decision.agent_id = np.array([10, 11, 11, 13], np.int32)
        return decision, terminal


class WrongMaskShape(GoodEnv):
    def corrupt(self, name, decision, terminal):
        if name == RUNNER:
            decision.action_mask[0] = np.zeros((4, 4), bool)
        return decision, terminal


class AllMasked(GoodEnv):
    def corrupt(self, name, decision, terminal):
        if name == RUNNER:
            decision.action_mask[1][1] = True  # agent 11: both choices of branch 1
        return decision, terminal


class MaskForContinuous(GoodEnv):
    def corrupt(self, name, decision, terminal):
        if name == SLEEPER:
            decision.action_mask = [np.zeros((len(decision), 2), bool)]
        return decision, terminal


class StepRaises(GoodEnv):
    def step(self):
        if self.t == 3:
            raise RuntimeError("boom")
        super().step()


class GetStepsReturnsNone(GoodEnv):
    def get_steps(self, behavior_name):
        return None if behavior_name == RUNNER else super().get_steps(behavior_name)


class GetStepsRaises(GoodEnv):
    def get_steps(self, behavior_name):
        if behavior_name == SLEEPER and self.t == 4:
            raise IndexError("index 3 is out of bounds")
        return super().get_steps(behavior_name)


class UnseenTerminal(GoodEnv):
    def corrupt(self, name, decision, terminal):
        if name == RUNNER and len(terminal):
            terminal.agent_id = np.array([99], np.int32)
        return decision, terminal


class MissingObs(GoodEnv):
    def corrupt(self, name, decision, terminal):
        if name == RUNNER:
            decision.obs = decision.obs[:1]
        return decision, terminal


class RewardColumn(GoodEnv):
    def corrupt(self, name, decision, terminal):
        if name == RUNNER:
            decision.reward = decision.reward[:, None]
        return decision, terminal


class NanReward(GoodEnv):
    def corrupt(self, name, decision, terminal):
        if name == RUNNER and self.t == 2:
            decision.reward[1] = np.nan
        return decision, terminal


class IntInterrupted(GoodEnv):
    def corrupt(self, name, decision, terminal):
        if name == RUNNER:
            terminal.interrupted = terminal.interrupted.astype(np.int64)
        return decision, terminal


class EmptyBatchWrongShape(GoodEnv):
    def corrupt(self, name, decision, terminal):
        if name == SLEEPER and len(decision) == 0:
            decision.obs = [np.zeros((0,), np.float32)]
        return decision, terminal


class RejectsSetActions(GoodEnv):
    def set_actions(self, behavior_name, action):
        raise ActionError(f"{behavior_name}: refused")


class ResetRaises(GoodEnv):
    def reset(self):
        raise OSError("cannot start")


class NoBehaviors(GoodEnv):
    @property
    def behavior_specs(self):
        return BehaviorMapping({})


class BadSpecs(GoodEnv):
    def __init__(self):
        super().__init__()
        bad_shape = obs_spec((0, 3), "zero")
        bad_props = ObservationSpec((3,), (), ObservationType.DEFAULT, "props")
        self.specs[SLEEPER] = BehaviorSpec([bad_shape, bad_props], ActionSpec(2, (0,)))


BROKEN = [
    (Float64Obs, "steps_format", RUNNER,
     ["step 0, DecisionSteps.obs[0]", "expected dtype float32, got float64"]),
    (DuplicateIds, "agent_ids", RUNNER,
     ["expected unique ids, got [11] more than once in [10, 11, 11, 13]"]),
    (WrongMaskShape, "action_masks", RUNNER,
     ["action_mask[0]: expected shape (4, 3) (n_agents, branch size)", "got shape (4, 4)"]),
    (AllMasked, "action_masks", RUNNER,
     ["action_mask[1]", "expected at least one available action", "agent ids [11]"]),
    (MaskForContinuous, "action_masks", SLEEPER, ["no discrete branches, expected None"]),
    (StepRaises, "step", None, ["step() 4 of 20 raised RuntimeError: boom"]),
    (GetStepsReturnsNone, "steps_format", RUNNER,
     ["step 0: expected get_steps() to return (DecisionSteps, TerminalSteps), got a NoneType"]),
    (GetStepsRaises, "steps_format", SLEEPER,
     ["step 4: get_steps() raised IndexError: index 3 is out of bounds"]),
    (UnseenTerminal, "agent_ids", RUNNER,
     ["step 5, TerminalSteps.agent_id", "got never-seen ids [99]"]),
    (MissingObs, "steps_format", RUNNER,
     ["expected a list of 2 arrays (one per observation spec), got 1 arrays"]),
    (RewardColumn, "steps_format", RUNNER,
     ["DecisionSteps.reward: expected shape (4,), got shape (4, 1)"]),
    (NanReward, "steps_format", RUNNER,
     ["step 2, DecisionSteps.reward: expected finite values, got nan"]),
    (IntInterrupted, "steps_format", RUNNER,
     ["TerminalSteps.interrupted: expected dtype bool, got int64"]),
    (EmptyBatchWrongShape, "empty_batches", SLEEPER,
     ["step 1, DecisionSteps.obs[0]: expected shape (0, 2)", "got shape (0,)"]),
    (RejectsSetActions, "random_actions", RUNNER,
     ["expected set_actions to accept a valid random action for 4 agents",
      "ActionError: Runner?team=0: refused"]),
    (ResetRaises, "reset", None, ["reset() raised OSError: cannot start"]),
    (NoBehaviors, "behavior_specs", None, ["at least one behaviour", "got none"]),
    (BadSpecs, "behavior_spec", SLEEPER,
     ["observation_specs[0].shape: expected a tuple of positive ints, got (0, 3)",
      "observation_specs[1].dimension_property: expected a tuple of 1", "got 0",
      "action_spec.discrete_branches: expected a tuple of positive ints, got (0,)"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("env_class", "check", "behavior", "fragments"), BROKEN, ids=[b[0].__name__ for b in BROKEN]
)
def test_broken_env_is_reported_not_crashed(env_class, check, behavior, fragments):
    report = check_base_env(env_class(), steps=STEPS, strict=False)
    assert not report.passed
    message = failure(report, check, behavior)
    assert message.startswith(f"{check}: ")
    if behavior is not None:
        assert f"behavior {behavior!r}" in message
    for fragment in fragments:
        assert fragment in message, message
    # The same failure raises in strict mode, with the report attached.
    with pytest.raises(ConformanceError) as info:
        check_base_env(env_class(), steps=STEPS)
    assert isinstance(info.value, ZooportError) and isinstance(info.value, AssertionError)
    assert info.value.report.rows() == report.rows()
    assert message in str(info.value)


def test_broken_behavior_does_not_hide_the_other():
    report = check_base_env(BadSpecs(), steps=STEPS, strict=False)
    assert statuses(report, SLEEPER)["steps_format"] == "skip"
    assert all(r.status is not CheckStatus.FAILED for r in report.results if r.behavior == RUNNER)
    assert [r.check for r in report.failures] == ["behavior_spec"]


def test_failures_stop_later_env_checks_and_count_repeats():
    report = check_base_env(ResetRaises(), steps=STEPS, strict=False)
    assert statuses(report) == {
        "reset": "fail", "behavior_specs": "skip", "step": "skip", "determinism": "skip",
    }  # fmt: skip
    # The first failure is reported with the number of repeats (steps 0..STEPS).
    report = check_base_env(Float64Obs(), steps=STEPS, strict=False)
    assert failure(report, "steps_format", RUNNER).endswith(f"float64 (and {STEPS} more)")
    # 21 duplicate batches, and at step 10 agent 12 (never listed) terminates.
    report = check_base_env(DuplicateIds(), steps=STEPS, strict=False)
    assert failure(report, "agent_ids", RUNNER).endswith(f"(and {STEPS + 1} more)")
    # A batch of the wrong shape cannot be used further: reported once, then dropped.
    report = check_base_env(MissingObs(), steps=STEPS, strict=False)
    assert "more)" not in failure(report, "steps_format", RUNNER)
    assert statuses(report, RUNNER)["random_actions"] == "skip"


# --------------------------------------------------------------------------- report


def test_report_table_and_rows():
    report = check_base_env(AllMasked(), steps=STEPS, strict=False)
    text = str(report)
    lines = text.splitlines()
    assert lines[0] == "AllMasked: FAILED"
    assert lines[1].split() == ["check", "behavior", "status", "message"]
    assert len(lines) == 2 + len(report.results)
    row = next(r for r in report.rows() if r[0] == "action_masks" and r[1] == RUNNER)
    assert row[2] == "fail" and "agent ids [11]" in row[3]
    assert str(report.failures[0]).startswith("FAIL action_masks [Runner?team=0]: ")
    assert check_base_env(GoodEnv(), steps=2).format().startswith("GoodEnv: PASSED")


def test_zero_steps_and_bad_arguments():
    report = check_base_env(GoodEnv(), steps=0)
    assert statuses(report, RUNNER)["random_actions"] == "skip"
    for steps in (-1, 2.5, True):
        with pytest.raises(ValueError, match="steps"):
            check_base_env(GoodEnv(), steps=steps)


# --------------------------------------------------------------------------- built-ins


@pytest.mark.parametrize("identifier", list(default_registry))
def test_builtin_envs_pass(identifier):
    env = default_registry.make(identifier)
    try:
        report = check_base_env(env, steps=100)
    finally:
        env.close()
    assert report.passed
    behaviors = {r.behavior for r in report.results} - {None}
    assert len(report.results) == 4 + 6 * len(behaviors) and len(CHECKS) == 10
    assert report.results[-1].status is CheckStatus.PASSED  # seedable: determinism ran
