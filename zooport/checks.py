"""``run_checkers``, what ``zooport check`` runs: ``check_base_env`` and every upstream checker
that applies, each in its own ``try``, warnings recorder and time limit."""

from __future__ import annotations

import contextlib
import functools
import io
import re
import signal
import threading
import time
import types
import warnings
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from zooport.envs.arguments import check_seed
from zooport.envs.capabilities import accepts_keyword, keyword_parameters, reset_core
from zooport.envs.checker import (
    CHECKERS,
    EXPLAINED_WARNINGS,
    CheckerResult,
    CheckResult,
    CheckStatus,
    SuiteReport,
    check_base_env,
    closing,
    explain_warning,
    one_line,
)
from zooport.envs.registry import BASE_ENV_MEMBERS
from zooport.errors import ArgumentError

__all__ = [
    "CHECKERS", "CheckerResult", "CheckerTimeout", "SuiteReport", "SingleAgentPlan",
    "run_checkers", "single_agent_plan", "one_line", "accepts_keyword", "agent_counts",
    "explain_warning", "EXPLAINED_WARNINGS", "MAX_TIMEOUT",
]  # fmt: skip

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: The longest ``timeout`` (s) ``signal.setitimer`` takes everywhere (a 32-bit ``time_t``).
MAX_TIMEOUT = 2**31 - 1


class CheckerTimeout(BaseException):
    """A checker ran out of time (not an ``Exception``, which a checker could swallow)."""


class _Skipped(Exception):  # a checker that finds it does not apply: its reason
    pass


@contextlib.contextmanager
def _time_limit(seconds: float | None) -> Iterator[None]:
    # CheckerTimeout after ``seconds``, then every 0.1 s (past a bare ``except``); main thread only.
    main = threading.current_thread() is threading.main_thread()
    if seconds is None or not hasattr(signal, "setitimer") or not main:
        yield
        return
    armed = [True]

    def expire(signum: int, frame: Any) -> None:
        if armed[0]:
            raise CheckerTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.1)
    try:
        yield
    finally:
        # A timeout landing in this cleanup redoes it (each step is idempotent) until disarmed.
        while True:
            try:
                armed[0] = False
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
                break
            except CheckerTimeout:
                continue


@dataclass(frozen=True)
class SingleAgentPlan:
    """The ``behaviors`` with one agent under factory keywords ``kwargs``, or why none has."""

    kwargs: Mapping[str, Any]
    behaviors: tuple[str, ...]
    reason: str = ""


def agent_counts(factory: Callable[..., Any], seed: int = 0, **kwargs: Any) -> dict[str, int]:
    """The number of agents with a decision after a reset, per behaviour."""
    with closing(factory(**kwargs)) as core:
        reset_core(core, seed)
        return {name: len(core.get_steps(name)[0]) for name in core.behavior_specs}


def single_agent_plan(
    factory: Callable[..., Any],
    *,
    seed: int = 0,
    preset: Mapping[str, Any] | None = None,
) -> SingleAgentPlan:
    """The behaviours with one agent, under ``preset`` (Gymnasium keywords), as made, or with
    ``n_agents=1``: those ``GymEnv`` can serve."""
    tries: list[tuple[Mapping[str, Any], Any]] = [({}, None)]
    if preset is not None:
        named = {k: v for k, v in preset.items() if k != "behavior_name"}
        tries.insert(0, (named, preset.get("behavior_name")))
    takes, one = "the factory takes no n_agents", {"n_agents": 1}
    if accepts_keyword(factory, "n_agents"):
        tries.append((one, None))
    for kwargs, named in tries:
        try:
            counts = agent_counts(factory, seed, **kwargs)
        except TypeError as error:
            if kwargs is not one or keyword_parameters(factory) is not None:
                raise  # preset keywords, or n_agents as a named parameter: a real failure
            # A **kwargs factory (a BatchedEnv subclass passing them on) may refuse it.
            takes = (
                f"the factory does not take n_agents=1 ({one_line(error)}); to serve one "
                f"behaviour with GymEnv, give the factory keywords that leave it one agent "
                f"(--kwargs JSON on the command line)"
            )
            break
        ones = tuple(b for b, n in counts.items() if n == 1 and named in (None, b))
        if ones:
            return SingleAgentPlan(kwargs, ones)
        if not kwargs:
            listing = ", ".join(f"{b}: {n}" for b, n in counts.items())
    return SingleAgentPlan({}, (), f"no behaviour has exactly one agent ({listing}) and {takes}")


@dataclass
class _Suite:
    factory: Callable[..., Any]
    seed: int
    steps: int
    cycles: int
    preset: Mapping[str, Any] | None
    warnings_as_errors: bool
    timeout: float | None
    results: list[CheckResult] = field(default_factory=list)
    plan: tuple[SingleAgentPlan | None, CheckerResult] | None = None  # and its probe's result

    def skip(self, checker: str, reason: str) -> None:
        self.results.append(CheckerResult(checker, CheckStatus.SKIPPED, reason))

    def run(
        self, checker: str, check: Callable[[], Any], target: str | None = None
    ) -> CheckerResult:
        """Runs ``check``: it fails by raising or returning a reason, or ``(reason, details)``."""
        status, message, details = CheckStatus.PASSED, "", ""
        began = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with _time_limit(self.timeout), contextlib.redirect_stdout(io.StringIO()):
                    outcome = check()
            except CheckerTimeout:
                status = CheckStatus.FAILED
                message = f"did not finish within the time limit of {self.timeout:g} s"
            except _Skipped as skip:
                status, message = CheckStatus.SKIPPED, str(skip)
            except Exception as exc:  # a checker crashing is that checker's failure
                status, message = CheckStatus.FAILED, one_line(exc)
            else:
                if isinstance(outcome, tuple):
                    outcome, details = outcome
                if outcome:
                    status, message = CheckStatus.FAILED, outcome
        warned = tuple(
            dict.fromkeys(_ANSI.sub("", " ".join(str(w.message).split())) for w in caught)
        )
        unexplained = [w for w in warned if explain_warning(w) is None]
        if unexplained and self.warnings_as_errors and status is CheckStatus.PASSED:
            status = CheckStatus.FAILED
            message = f"{len(unexplained)} unexpected warning(s), first: {unexplained[0]}"
        seconds = time.perf_counter() - began
        result = CheckerResult(checker, status, message, target, warned, seconds, details)
        self.results.append(result)
        return result


def run_checkers(
    factory: Callable[..., Any],
    *,
    name: str = "environment",
    only: Collection[str] | None = None,
    seed: int = 0,
    steps: int = 200,
    cycles: int = 100,
    single_agent: Mapping[str, Any] | None = None,
    warnings_as_errors: bool = False,
    timeout: float | None = None,
) -> SuiteReport:
    """Runs every applicable checker (``only``: those of :data:`CHECKERS`) on envs from
    ``factory``; one that raises, outlasts ``timeout`` or (``warnings_as_errors``) warns fails."""
    selected = list(CHECKERS) if only is None else list(only)
    unknown = [c for c in selected if c not in CHECKERS]
    if unknown:
        raise ArgumentError(f"Expected checker names among {list(CHECKERS)}, actually: {unknown}")
    if timeout is not None and not 0 < timeout <= MAX_TIMEOUT:
        raise ArgumentError(
            f"Expected timeout to be None or seconds > 0 and <= {MAX_TIMEOUT}, actually: "
            f"{timeout!r}"
        )
    seed = check_seed(seed, "run_checkers")
    suite = _Suite(factory, seed, steps, cycles, single_agent, warnings_as_errors, timeout)
    wanted = [c for c in CHECKERS if c in selected]
    if suite.run("construct", functools.partial(_construct, factory)).status is CheckStatus.FAILED:
        for checker in wanted:
            suite.skip(checker, "the factory did not make an environment (see construct)")
    else:
        kinds = {"base_env": _base_env, "gym": _single_agent, "sb3": _single_agent}
        for checker in wanted:  # the rest are PettingZoo's tests
            kinds.get(checker, _pettingzoo)(suite, checker)
    return SuiteReport(name, suite.results)


def _construct(factory: Callable[..., Any]) -> str | None:
    with closing(factory()) as core:
        missing = [m for m in BASE_ENV_MEMBERS if not hasattr(core, m)]
    got = f"got an object of type {type(core).__name__} without {missing}"
    return f"expected the factory to return a BaseEnv, {got}" if missing else None


def _base_env(suite: _Suite, checker: str) -> None:
    def check() -> tuple[str | None, str]:
        with closing(suite.factory()) as core:
            report = check_base_env(
                core, steps=suite.steps, seed=suite.seed, make_env=suite.factory, strict=False
            )
        failures = report.failures
        more = f" (+{len(failures) - 1} more failed checks)" if len(failures) > 1 else ""
        message = " ".join(f"{failures[0].message}{more}".split()) if failures else None
        return message, report.format()

    suite.run(checker, check)


def _single_agent(suite: _Suite, checker: str) -> None:
    if checker == "sb3":
        try:
            import stable_baselines3.common.env_checker  # noqa: F401
        except ImportError:
            hint = 'pip install "stable-baselines3>=2.3"'
            suite.skip(checker, f"stable-baselines3 is not installed ({hint})")
            return
    if suite.plan is None:  # one probe of the agent counts, unreported, serves both checkers
        plans: list[Any] = [None]
        make = functools.partial(single_agent_plan, suite.factory, seed=suite.seed)
        probe = suite.run("single_agent_probe", lambda: plans.append(make(preset=suite.preset)))
        suite.results.remove(probe)
        suite.plan = plans[-1], probe
    plan, probe = suite.plan
    if plan is None or probe.status is CheckStatus.FAILED:
        message = f"counting agents failed: {probe.message}"
        suite.results.append(CheckerResult(checker, probe.status, message, warnings=probe.warnings))
        return
    if not plan.behaviors:
        suite.skip(checker, f"not single-agent: {plan.reason}")
    options = ", ".join(f"{k}={v!r}" for k, v in plan.kwargs.items())
    for behavior in plan.behaviors:
        check = functools.partial(_check_env, checker, suite, dict(plan.kwargs), behavior)
        suite.run(checker, check, target=f"{behavior}, {options}" if options else behavior)


def _check_env(checker: str, suite: _Suite, kwargs: dict, behavior: str) -> None:
    from zooport.adapters.gym_env import GymEnv
    from zooport.adapters.registration import _adapt

    env = _adapt(GymEnv, suite.factory(**kwargs), behavior)
    if checker == "gym" and "rgb_array" in env.metadata.get("render_modes", []):
        env.close()  # Gymnasium's check renders: made again, rendering
        env = _adapt(GymEnv, suite.factory(**kwargs), behavior, render_mode="rgb_array")
    with closing(env):
        env.action_space.seed(suite.seed)
        if checker == "gym":
            from gymnasium.utils.env_checker import check_env

            check_env(env, skip_render_check=env.render_mode is None)
        else:
            from stable_baselines3.common.env_checker import check_env as sb3_check

            sb3_check(env, warn=True)


def _pettingzoo(suite: _Suite, checker: str) -> None:
    from pettingzoo import test as pz

    from zooport.adapters import PettingZooAECEnv, PettingZooParallelEnv
    from zooport.adapters.registration import _adapt

    made = contextlib.ExitStack()  # every env made, closed when the checker ends

    def make(kind: type, render_mode: str | None = None, **options: Any) -> Any:
        # render_test makes a "human" env only to read its render_modes; the adapters refuse it.
        mode = None if render_mode == "human" else render_mode
        env = _adapt(kind, suite.factory(), render_mode=mode, **options)
        made.enter_context(closing(env))
        for space in {id(s): s for s in map(env.action_space, env.possible_agents)}.values():
            space.seed(suite.seed)  # one per behaviour: seeded once, so samples repeat
        return env

    def render() -> None:  # only where the adapters render pictures
        with closing(parallel()) as env:  # before render_test: a core may allow one instance only
            modes = env.metadata.get("render_modes") or []
        if "rgb_array" not in modes:
            raise _Skipped("the environment does not render rgb_array pictures")
        pz.render_test(aec)

    aec = functools.partial(make, PettingZooAECEnv)
    parallel = functools.partial(make, PettingZooParallelEnv)

    cycles = {"num_cycles": suite.cycles}
    # PettingZoo < 1.24.2 (pyproject allows 1.24.0) has no num_cycles in parallel_seed_test.
    seed_cycles = cycles if accepts_keyword(pz.parallel_seed_test, "num_cycles") else {}
    tests: dict[str, Callable[[], Any]] = {
        "parallel_api": lambda: pz.parallel_api_test(parallel(), **cycles),
        "aec_api": lambda: pz.api_test(aec(), **cycles),
        "seed": lambda: pz.seed_test(aec, **cycles),
        "parallel_seed": lambda: pz.parallel_seed_test(parallel, **seed_cycles),
        "max_cycles": lambda: pz.max_cycles_test(
            types.SimpleNamespace(env=aec, parallel_env=parallel)
        ),
        "render": render,
        "state": lambda: pz.state_test(aec(), parallel()),
    }
    with made:
        suite.run(checker, tests[checker])
