"""zooport.checks: every upstream checker on a factory, isolated, on good and broken envs."""

from __future__ import annotations

import importlib
import inspect
import re
import signal
import sys
import textwrap
import time
import warnings

import pytest

from zooport.checks import (
    CHECKERS,
    CheckerResult,
    SuiteReport,
    explain_warning,
    one_line,
    run_checkers,
    single_agent_plan,
)
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.builtin.basic import Basic
from zooport.envs.builtin.tag import Tag
from zooport.envs.checker import CheckResult, CheckStatus

from tests.support.paths import REPO, importable

PASS, FAIL, SKIP = CheckStatus.PASSED, CheckStatus.FAILED, CheckStatus.SKIPPED

#: A module of environments, good and deliberately broken, importable by name.
ENVS_SOURCE = textwrap.dedent(
    '''
    import time
    import warnings

    import numpy as np

    from zooport.envs.base_env import (
        ActionSpec, BaseEnv, BehaviorMapping, BehaviorSpec, DecisionSteps,
        DimensionProperty, ObservationSpec, ObservationType, TerminalSteps,
    )
    from zooport.envs.batched_env import BatchedEnv, StepResult

    OBS = ObservationSpec((2,), (DimensionProperty.NONE,), ObservationType.DEFAULT, "x")


    class Good(BatchedEnv):
        """Agents count to 10; no rendering."""

        def __init__(self, n_agents=2, **kw):
            super().__init__(**kw)
            self.n = n_agents
            spec = BehaviorSpec([OBS], ActionSpec.create_discrete((3,)))
            self._add_behavior("B", spec, n_agents)
            self.t = np.zeros(n_agents, np.float32)

        def _reset_agents(self, behavior, slots):
            self.t[slots] = 0

        def _step(self, actions):
            self.t += 1
            return {"B": StepResult(np.ones(self.n, np.float32), self.t >= 10)}

        def _observe(self, behavior, slots):
            return [np.stack([self.t[slots], np.zeros(slots.size, np.float32)], 1)]


    class TwoTeams(BatchedEnv):
        """Two teams of two that take only the base's keywords (**kwargs, like the guide's)."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            spec = BehaviorSpec([OBS], ActionSpec.create_discrete((3,)))
            for team in (0, 1):
                self._add_behavior(f"T?team={team}", spec, 2)

        def _reset_agents(self, behavior, slots):
            pass

        def _step(self, actions):
            zero = StepResult(np.zeros(2, np.float32), np.zeros(2, bool))
            return {name: zero for name in actions}

        def _observe(self, behavior, slots):
            return [np.zeros((slots.size, 2), np.float32)]


    class WrongDtype(Good):
        def _observe(self, behavior, slots):
            return [np.zeros((slots.size, 2), np.float64)]


    class StepRaises(Good):
        def _step(self, actions):
            raise RuntimeError("boom: the physics exploded")


    class HangsInStep(Good):
        """A step that never returns, and swallows every Exception on the way."""

        def _step(self, actions):
            while True:
                try:
                    time.sleep(0.02)
                except Exception:
                    pass


    class Warns(Good):
        def _on_reset(self):
            warnings.warn("custom warning from reset", UserWarning, stacklevel=2)


    class DuplicateIds(BaseEnv):
        SPEC = BehaviorSpec([OBS], ActionSpec.create_discrete((2,)))

        @property
        def behavior_specs(self):
            return BehaviorMapping({"B": self.SPEC})

        def reset(self):
            pass

        def step(self):
            pass

        def close(self):
            pass

        def get_steps(self, behavior_name):
            decision = DecisionSteps(
                [np.zeros((2, 2), np.float32)], np.zeros(2, np.float32),
                np.array([7, 7], np.int32), None, np.zeros(2, np.int32), np.zeros(2, np.float32),
            )
            return decision, TerminalSteps.empty(self.SPEC)

        def set_actions(self, behavior_name, action):
            pass

        def set_action_for_agent(self, behavior_name, agent_id, action):
            pass


    def not_an_env():
        return 42


    def factory_raises():
        raise ValueError("cannot build this")


    def bare_assert():
        assert 1 + 1 == 3
    '''
)


@pytest.fixture(scope="module")
def envs(tmp_path_factory):
    """The module above, imported as ``zooport_test_checks_envs``."""
    directory = tmp_path_factory.mktemp("checks_envs")
    with importable(directory, "zooport_test_checks_envs", ENVS_SOURCE):
        yield importlib.import_module("zooport_test_checks_envs")


def statuses(report: SuiteReport) -> dict[str, CheckStatus]:
    return {r.checker: r.status for r in report.results}


FAST = {"steps": 30, "cycles": 10}


# ---------------------------------------------------------------------- good environments


def test_good_env_passes_every_checker_and_skips_render_with_the_reason(envs, capsys):
    report = run_checkers(envs.Good, name="Good", **FAST)
    assert report.passed
    expected = {c: PASS for c in ("construct", *CHECKERS)}
    expected["render"] = SKIP
    assert statuses(report) == expected
    render = next(r for r in report.results if r.checker == "render")
    assert render.message == "the environment does not render rgb_array pictures"
    # Good has 2 agents and takes n_agents: GymEnv serves it with n_agents=1.
    gym = next(r for r in report.results if r.checker == "gym")
    assert gym.target == "B, n_agents=1" and gym.label == "gymnasium check_env [B, n_agents=1]"
    # PettingZoo's tests print progress; none of it reaches the user's stdout.
    assert capsys.readouterr().out == ""


def test_builtin_with_gym_preset_and_render_test():
    preset = {"n_runners": 1, "n_taggers": 1, "behavior_name": "Runner?team=0"}
    report = run_checkers(Tag, name="Tag", only=["gym", "render"], single_agent=preset, **FAST)
    assert [(r.checker, r.status, r.target) for r in report.results] == [
        ("construct", PASS, None),
        ("gym", PASS, "Runner?team=0, n_runners=1, n_taggers=1"),
        ("render", PASS, None),
    ]


def test_only_selects_checkers_in_report_order_and_rejects_unknown_names():
    report = run_checkers(Basic, only=["state", "base_env"], **FAST)
    assert [r.checker for r in report.results] == ["construct", "base_env", "state"]
    assert report.passed and {r.status for r in report.results} == {PASS}
    with pytest.raises(ValueError, match=r"Expected checker names among .* \['nope'\]"):
        run_checkers(Basic, only=["nope"])


def test_missing_sb3_is_a_skip_with_the_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "stable_baselines3.common.env_checker", None)
    report = run_checkers(Basic, only=["sb3"], **FAST)
    (sb3,) = [r for r in report.results if r.checker == "sb3"]
    assert sb3.status is SKIP and 'pip install "stable-baselines3>=2.3"' in sb3.message


# ---------------------------------------------------------------------- broken environments


def test_wrong_observation_dtype_fails_check_base_env_with_expected_vs_actual(envs):
    report = run_checkers(envs.WrongDtype, **FAST)
    assert not report.passed
    assert [r.checker for r in report.failures] == ["base_env"]
    message = report.failures[0].message
    assert "expected dtype float32, got float64" in message and "\n" not in message
    # The full check_base_env table is kept for --verbose.
    assert "steps_format" in report.failures[0].details


def test_step_that_raises_fails_every_checker_that_steps_without_crashing(envs):
    report = run_checkers(envs.StepRaises, **FAST)
    failed = {r.checker for r in report.failures}
    assert failed == set(CHECKERS) - {"render"}
    for result in report.failures:
        assert "boom: the physics exploded" in result.message, result


def test_a_checker_that_hangs_fails_at_the_time_limit_and_the_rest_still_run(envs):
    handler = signal.getsignal(signal.SIGALRM)
    began = time.perf_counter()
    report = run_checkers(
        envs.HangsInStep, only=["base_env", "parallel_api", "render"], timeout=0.3, **FAST
    )
    assert time.perf_counter() - began < 10
    assert statuses(report) == {
        "construct": PASS, "base_env": FAIL, "parallel_api": FAIL, "render": SKIP
    }  # fmt: skip
    for result in report.failures:
        assert result.message == "did not finish within the time limit of 0.3 s", result
        assert 0.3 <= result.seconds < 3
    # The timer is off and the previous handler is back.
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is handler
    # A good environment is not affected by a limit it stays within.
    assert run_checkers(envs.Good, only=["base_env"], timeout=60, **FAST).passed
    with pytest.raises(ValueError, match="timeout to be None or seconds > 0"):
        run_checkers(envs.Good, only=["base_env"], timeout=0)


def test_duplicate_agent_ids_are_reported(envs):
    report = run_checkers(envs.DuplicateIds, **FAST)
    base = next(r for r in report.results if r.checker == "base_env")
    assert base.status is FAIL
    assert "expected unique ids, got [7] more than once in [7, 7]" in base.message
    # Two agents and no n_agents keyword: no single-agent checker applies.
    gym = next(r for r in report.results if r.checker == "gym")
    assert gym.status is SKIP and "(B: 2)" in gym.message


def test_a_kwargs_factory_of_two_teams_skips_the_single_agent_checkers_saying_what_to_pass(envs):
    # **kwargs may not take n_agents: BatchedEnv.__init__ refuses it. Not a failure.
    report = run_checkers(envs.TwoTeams, name="TwoTeams", only=["base_env", "gym", "sb3"], **FAST)
    assert report.passed, report.format()
    assert statuses(report) == {"construct": PASS, "base_env": PASS, "gym": SKIP, "sb3": SKIP}
    for result in report.results[2:]:
        assert result.message == (
            "not single-agent: no behaviour has exactly one agent (T?team=0: 2, T?team=1: 2) "
            "and the factory does not take n_agents=1 (TypeError: BatchedEnv.__init__() got an "
            "unexpected keyword argument 'n_agents'); to serve one behaviour with GymEnv, give "
            "the factory keywords that leave it one agent (--kwargs JSON on the command line)"
        )


def test_the_guides_two_team_core_passes_zooport_check(tmp_path, capsys):
    from zooport.cli.app import main

    guide = (REPO / "docs" / "guides" / "batched-env.md").read_text()
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", guide, re.S) if "class Pitch" in b]
    (tmp_path / "my_env.py").write_text(block)
    code = main(["--plain", "check", f"{tmp_path / 'my_env.py'}:Pitch", "--steps", "50",
                 "--cycles", "20"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "PASSED (8 passed, 0 failed, 3 skipped)" in out.splitlines()[0]
    assert "Pusher?team=0: 2, Pusher?team=1: 2" in out


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        ("not_an_env", "expected the factory to return a BaseEnv, got an object of type int"),
        ("factory_raises", "ValueError: cannot build this"),
    ],
)
def test_a_factory_that_fails_is_the_construct_failure_and_skips_the_rest(envs, factory, message):
    report = run_checkers(getattr(envs, factory), **FAST)
    construct, *rest = report.results
    assert construct.status is FAIL and message in construct.message
    assert [r.checker for r in rest] == list(CHECKERS)
    assert all(r.status is SKIP for r in rest)


def test_warnings_are_recorded_and_fail_only_when_strict_and_unexplained(envs):
    relaxed = run_checkers(envs.Warns, only=["base_env", "gym"], **FAST)
    assert relaxed.passed
    base = next(r for r in relaxed.results if r.checker == "base_env")
    assert base.warnings == ("custom warning from reset",)
    strict = run_checkers(envs.Warns, only=["base_env", "gym"], warnings_as_errors=True, **FAST)
    assert {r.checker for r in strict.failures} == {"base_env", "gym"}
    assert all("custom warning from reset" in r.message for r in strict.failures)
    # Good's gym check warns only about Box(-inf, inf) bounds, which ML-Agents' specs explain.
    good = run_checkers(envs.Good, only=["gym"], warnings_as_errors=True, **FAST)
    assert good.passed and any(r.warnings for r in good.results)


def test_explain_warning():
    assert explain_warning("A Box observation space maximum value is infinity. Too high.")
    assert explain_warning("Environment's minimum state space value is -infinity.")
    assert explain_warning("something else entirely") is None


# ---------------------------------------------------------------------- single-agent plans


def test_single_agent_plan():
    basic = single_agent_plan(Basic)
    assert (dict(basic.kwargs), basic.behaviors) == ({}, ("Basic",))
    ball = single_agent_plan(BallBalance)
    assert (dict(ball.kwargs), ball.behaviors) == ({"n_agents": 1}, ("BallBalance",))
    tag = single_agent_plan(Tag)
    assert tag.behaviors == ()
    assert tag.reason == (
        "no behaviour has exactly one agent (Runner?team=0: 3, Tagger?team=1: 2) and the "
        "factory takes no n_agents"
    )
    preset = single_agent_plan(Tag, preset={"n_runners": 1, "n_taggers": 1})
    assert preset.behaviors == ("Runner?team=0", "Tagger?team=1")


# ---------------------------------------------------------------------- formatting


def test_one_line_joins_lines_and_locates_a_bare_assert(envs):
    assert one_line(RuntimeError("a\n  b")) == "RuntimeError: a b"
    assert one_line(ValueError("expected 3,\n got 4")) == "ValueError: expected 3, got 4"
    # A bare assert (as in PettingZoo's tests) has no message: say where it failed.
    with pytest.raises(AssertionError) as caught:
        envs.bare_assert()
    lineno = inspect.getsourcelines(envs.bare_assert)[1] + 1
    assert one_line(caught.value) == (
        f"AssertionError: at zooport_test_checks_envs.py:{lineno}: assert 1 + 1 == 3"
    )
    assert one_line(ValueError("x" * 1000)).endswith("...")
    assert len(one_line(ValueError("x" * 1000))) == 300


def test_report_format_is_a_stable_table():
    report = SuiteReport(
        "Env",
        [
            CheckerResult("construct", PASS),
            CheckerResult("base_env", FAIL, "step: boom"),
            CheckerResult(
                "gym",
                SKIP,
                "not single-agent",
                warnings=("w1", "A Box observation space minimum value is -infinity."),
            ),
        ],
    )
    assert not report.passed and [r.checker for r in report.failures] == ["base_env"]
    # One result type for both checkers: a checker's result is a CheckResult.
    failed = report.failures[0]
    assert isinstance(failed, CheckResult) and (failed.check, failed.behavior) == ("base_env", None)
    assert str(failed) == "FAIL zooport check_base_env: step: boom"
    assert report.format() == "\n".join(
        [
            "Env: FAILED (1 passed, 1 failed, 1 skipped)",
            "checker                 status  warnings  message",
            "construct (the factory) pass    0",
            "zooport check_base_env  fail    0         step: boom",
            "gymnasium check_env     skip    2         not single-agent",
            "warnings:",
            "  gymnasium check_env: w1",
            "  gymnasium check_env: A Box observation space minimum value is -infinity. "
            "[expected: ML-Agents' ObservationSpec has no bounds, so vector observations are "
            "Box(-inf, inf)]",
        ]
    )


def test_warnings_filter_is_restored():
    # Each checker records warnings in its own catch_warnings; pytest's "error" filter is back.
    run_checkers(Basic, only=["state"], **FAST)
    with pytest.raises(UserWarning):
        warnings.warn("still an error", UserWarning, stacklevel=1)


def _tracked(live: list, one_at_a_time: bool = False) -> type:
    """A Basic that is in ``live`` from construction to close (the second of two live at
    once fails to build where ``one_at_a_time``)."""

    class Tracked(Basic):
        def __init__(self, **kwargs):
            if one_at_a_time and live:
                raise RuntimeError("only one at a time")
            super().__init__(**kwargs)
            live.append(self)

        def close(self):
            if self in live:
                live.remove(self)
            super().close()

    return Tracked


def test_a_checker_whose_second_env_fails_to_build_still_closes_the_first():
    live: list = []
    report = run_checkers(_tracked(live, one_at_a_time=True), only=["state"], **FAST)
    assert not report.passed
    assert live == []


def test_every_env_a_checker_makes_is_closed_even_those_pettingzoos_tests_make():
    live: list = []
    report = run_checkers(_tracked(live), **FAST)
    assert report.passed, report.format()
    assert live == []
