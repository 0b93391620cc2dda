"""Every applicable upstream checker on one ``BaseEnv`` factory, each isolated from the others.

Classes:
    CheckerResult: the outcome of one checker: pass, fail (with a one-line reason) or skip,
        plus the warnings it raised.
    SuiteReport: every :class:`CheckerResult` of one run; prints as a table.

Functions:
    run_checkers: runs zooport's ``check_base_env``, Gymnasium's and SB3's ``check_env`` (on
        :class:`~zooport.adapters.gym_env.GymEnv`, where a behaviour can be single-agent) and
        PettingZoo's ``parallel_api_test``, ``api_test``, ``seed_test``,
        ``parallel_seed_test``, ``max_cycles_test``, ``render_test`` and ``state_test`` (on
        the PettingZoo adapters) on environments made by a factory.
    single_agent_plan: how a factory's environment can be served by ``GymEnv``.
    one_line: an exception as one line (type, message, and where a bare ``assert`` failed).

This is what ``zooport check`` runs. It never lets an environment's exception escape: each
checker runs in its own ``try``/``except`` and a crash is that checker's failure, with its
message. Warnings are recorded per checker (by default they do not fail it; with
``warnings_as_errors=True`` they do). Everything a checker prints is swallowed. With a
``timeout``, a checker still running after that many seconds is interrupted and fails (on
POSIX, from the main thread: the limit is a ``SIGALRM`` timer; elsewhere there is none).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import io
import os
import re
import signal
import threading
import time
import traceback
import types
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from zooport.envs.arguments import check_seed
from zooport.envs.checker import CheckStatus
from zooport.envs.registry import BASE_ENV_MEMBERS
from zooport.errors import ArgumentError

__all__ = [
    "CHECKERS",
    "CheckerResult",
    "SuiteReport",
    "SingleAgentPlan",
    "run_checkers",
    "single_agent_plan",
    "one_line",
    "accepts_keyword",
    "agent_counts",
    "explain_warning",
    "EXPLAINED_WARNINGS",
    "MAX_TIMEOUT",
]

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
_ANSI = re.compile(r"\x1b\[[0-9;]*m")

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
    """Why a warning is expected (see :data:`EXPLAINED_WARNINGS`), or None.

    Example:
        >>> explain_warning("Agent's minimum observation space value is -infinity.")[:18]
        "ML-Agents' Observa"
    """
    for pattern, reason in EXPLAINED_WARNINGS:
        if re.match(pattern, message):
            return reason
    return None


@dataclass(frozen=True)
class CheckerResult:
    """One checker's outcome.

    Attributes:
        checker: its short name, a key of :data:`CHECKERS`.
        status: pass, fail or skip.
        message: why it failed or was skipped, one line; empty when it passed.
        target: what it checked when not the whole environment (a behaviour name).
        warnings: the distinct warning messages it raised, in order.
        seconds: how long it ran.
        details: a longer account (``check_base_env``'s full table), or empty.
    """

    checker: str
    status: CheckStatus
    message: str = ""
    target: str | None = None
    warnings: tuple[str, ...] = ()
    seconds: float = 0.0
    details: str = ""

    @property
    def label(self) -> str:
        """The checker's printed name, with its target in brackets."""
        name = _LABELS.get(self.checker, self.checker)
        return name if self.target is None else f"{name} [{self.target}]"


@dataclass
class SuiteReport:
    """Every :class:`CheckerResult` of one :func:`run_checkers` run.

    Example:
        >>> report = SuiteReport("MyEnv", [CheckerResult("gym", CheckStatus.SKIPPED, "why")])
        >>> report.passed, report.rows()
        (True, [('gymnasium check_env', 'skip', '0', 'why')])
    """

    name: str
    results: list[CheckerResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when no checker failed (skipped ones do not count)."""
        return not self.failures

    @property
    def failures(self) -> list[CheckerResult]:
        """The failed checkers."""
        return [r for r in self.results if r.status is CheckStatus.FAILED]

    def rows(self) -> list[tuple[str, str, str, str]]:
        """``(checker, status, number of warnings, message)`` per checker, for a table."""
        return [(r.label, r.status.value, str(len(r.warnings)), r.message) for r in self.results]

    def format(self, *, show_warnings: bool = True) -> str:
        """The report as a plain-text table, then each checker's warnings.

        Example:
            >>> ok = CheckerResult("state", CheckStatus.PASSED, warnings=("w",))
            >>> print(SuiteReport("E", [ok]).format())
            E: PASSED (1 passed, 0 failed, 0 skipped)
            checker               status  warnings  message
            pettingzoo state_test pass    1
            warnings:
              pettingzoo state_test: w
        """
        counts = {s: sum(r.status is s for r in self.results) for s in CheckStatus}
        lines = [
            f"{self.name}: {'PASSED' if self.passed else 'FAILED'} "
            f"({counts[CheckStatus.PASSED]} passed, {counts[CheckStatus.FAILED]} failed, "
            f"{counts[CheckStatus.SKIPPED]} skipped)"
        ]
        rows = [("checker", "status", "warnings", "message"), *self.rows()]
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        for row in rows:
            cells = [cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)]
            lines.append(" ".join(cells[:1]) + " " + "  ".join([*cells[1:], row[3]]).rstrip())
        if show_warnings:
            lines += self.warning_lines()
        return "\n".join(lines)

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

    def __str__(self) -> str:
        return self.format()


def one_line(error: BaseException) -> str:
    """``"<Type>: <message>"`` on one line; a bare ``assert`` names its file, line and source.

    Example:
        >>> one_line(ValueError("expected 3,\\n got 4"))
        'ValueError: expected 3, got 4'
    """
    message = " ".join(str(error).split())
    if not message:
        frames = traceback.extract_tb(error.__traceback__)
        if frames:
            last = frames[-1]
            source = f": {last.line}" if last.line else ""
            message = f"at {os.path.basename(last.filename)}:{last.lineno}{source}"
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    if len(text) > _MESSAGE_LIMIT:
        text = text[: _MESSAGE_LIMIT - 3] + "..."
    return text


# --------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class SingleAgentPlan:
    """How ``GymEnv`` can serve a factory's environment.

    Attributes:
        kwargs: extra factory keywords that make the served behaviours single-agent.
        behaviors: the behaviours ``GymEnv`` can serve (one agent each), in spec order.
        reason: why none can (empty when ``behaviors`` is not).
    """

    kwargs: Mapping[str, Any]
    behaviors: tuple[str, ...]
    reason: str = ""


def accepts_keyword(factory: Callable[..., Any], name: str) -> bool:
    """Whether ``factory`` takes the keyword ``name`` (a ``functools.partial`` is seen through)."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        p.name == name and p.kind is not inspect.Parameter.POSITIONAL_ONLY for p in parameters
    ) or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def agent_counts(factory: Callable[..., Any], seed: int = 0, **kwargs: Any) -> dict[str, int]:
    """The number of agents with a decision after a reset, per behaviour."""
    core = factory(**kwargs)
    try:
        _reset(core, seed)
        return {name: len(core.get_steps(name)[0]) for name in core.behavior_specs}
    finally:
        _close(core)


def single_agent_plan(
    factory: Callable[..., Any],
    *,
    seed: int = 0,
    preset: Mapping[str, Any] | None = None,
) -> SingleAgentPlan:
    """Which behaviours ``GymEnv`` can serve, and with which factory keywords.

    A behaviour with one agent after a reset qualifies as it is; otherwise, when the factory
    takes ``n_agents``, the behaviours with one agent under ``n_agents=1``.

    Args:
        factory: makes the environment; called (and the result closed) to count agents.
        seed: the reset seed for counting.
        preset: known single-agent keywords (e.g. a built-in's Gymnasium registration);
            a ``behavior_name`` in it names the one behaviour to serve.
    """
    if preset is not None:
        kwargs = {k: v for k, v in preset.items() if k != "behavior_name"}
        counts = agent_counts(factory, seed, **kwargs)
        named = preset.get("behavior_name")
        ones = [b for b, n in counts.items() if n == 1 and (named is None or b == named)]
        if ones:
            return SingleAgentPlan(kwargs, tuple(ones))
    counts = agent_counts(factory, seed)
    ones = [b for b, n in counts.items() if n == 1]
    if ones:
        return SingleAgentPlan({}, tuple(ones))
    if accepts_keyword(factory, "n_agents"):
        single = agent_counts(factory, seed, n_agents=1)
        ones = [b for b, n in single.items() if n == 1]
        if ones:
            return SingleAgentPlan({"n_agents": 1}, tuple(ones))
    listing = ", ".join(f"{b}: {n}" for b, n in counts.items())
    return SingleAgentPlan(
        {},
        (),
        f"no behaviour has exactly one agent ({listing}) and the factory takes no n_agents",
    )


# --------------------------------------------------------------------------- running


def _reset(core: Any, seed: int) -> None:
    if getattr(type(core), "seedable", False) is True:
        core.reset(seed=seed)
    else:
        core.reset()


def _close(env: Any) -> None:
    # A broken environment may also fail to close; that must not hide the real result.
    with contextlib.suppress(Exception):
        if env is not None:
            env.close()


def _seed_action_spaces(env: Any, seed: int) -> None:
    """Seeds each (shared, per behaviour) action space once, so sampled actions repeat."""
    seen: set[int] = set()
    for agent in env.possible_agents:
        space = env.action_space(agent)
        if id(space) not in seen:
            seen.add(id(space))
            space.seed(seed)


class CheckerTimeout(BaseException):
    """Raised inside a checker that ran out of time.

    A ``BaseException``, like ``KeyboardInterrupt``: the ``except Exception`` of a checker or
    an environment does not swallow it.
    """


#: The longest ``timeout`` (seconds): what ``signal.setitimer`` takes on every platform
#: (a 32-bit ``time_t``), about 68 years. Beyond it, ask for no limit (None; ``--timeout 0``).
MAX_TIMEOUT = 2**31 - 1


def _time_limit_supported() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def _time_limit(seconds: float | None):
    """Raises :class:`CheckerTimeout` in the block after ``seconds`` (None: no limit).

    The timer repeats every 0.1 s after it first fires, so a block that catches the first
    timeout with a bare ``except`` is interrupted again. Without ``signal.setitimer`` (Windows)
    or off the main thread the block runs without a limit.
    """
    if seconds is None or not _time_limit_supported():
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
        # A timeout may land on any line of this cleanup; it is then simply redone (every
        # step is idempotent), and once disarmed the handler raises no more.
        while True:
            try:
                armed[0] = False
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
                break
            except CheckerTimeout:
                continue


class _Runner:
    """Runs checkers one by one, each in its own try/except and warnings recorder."""

    def __init__(self, warnings_as_errors: bool, timeout: float | None = None) -> None:
        self.results: list[CheckerResult] = []
        self.warnings_as_errors = warnings_as_errors
        self.timeout = timeout

    def skip(self, checker: str, reason: str, target: str | None = None) -> None:
        self.results.append(CheckerResult(checker, CheckStatus.SKIPPED, reason, target))

    def run(
        self,
        checker: str,
        check: Callable[[], str | None],
        target: str | None = None,
    ) -> CheckerResult:
        """Runs ``check``; it returns None (pass), or a failure reason, or raises (fail)."""
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
            except Exception as exc:  # a checker crashing is that checker's failure
                status, message = CheckStatus.FAILED, one_line(exc)
            else:
                if isinstance(outcome, tuple):
                    outcome, details = outcome
                if outcome:
                    status, message = CheckStatus.FAILED, outcome
        seen = dict.fromkeys(_ANSI.sub("", " ".join(str(w.message).split())) for w in caught)
        warned = tuple(seen)
        unexplained = [w for w in warned if explain_warning(w) is None]
        if unexplained and self.warnings_as_errors and status is CheckStatus.PASSED:
            status = CheckStatus.FAILED
            message = f"{len(unexplained)} unexpected warning(s), first: {unexplained[0]}"
        result = CheckerResult(
            checker, status, message, target, warned, time.perf_counter() - began, details
        )
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
    """Runs every applicable checker on environments made by ``factory``.

    ``factory(**kwargs)`` must return a fresh ``BaseEnv`` on every call (the checkers each
    make their own, some several). Nothing it raises escapes: a factory that fails is the
    ``construct`` failure and every checker is skipped.

    Args:
        factory: makes an environment; keyword arguments are only passed to make it
            single-agent (``n_agents=1`` or the ``single_agent`` keywords).
        name: the environment's name in the report.
        only: the short names (keys of :data:`CHECKERS`) to run; None runs all.
        seed: seeds resets and sampled actions.
        steps: the number of steps of ``check_base_env``.
        cycles: ``num_cycles`` of PettingZoo's api and seed tests.
        single_agent: factory keywords that make a behaviour single-agent (plus an optional
            ``behavior_name``), e.g. a built-in's Gymnasium registration; None finds out.
        warnings_as_errors: a checker that raises a warning not in
            :data:`EXPLAINED_WARNINGS` fails.
        timeout: seconds after which a checker (and the factory's first call) is
            interrupted and fails; None waits as long as it takes. Needs POSIX and the main
            thread (see the module docstring).

    Returns:
        The report; ``report.passed`` is False when any checker failed.

    Raises:
        ArgumentError: ``only`` names an unknown checker, ``timeout`` is not in
            (0, :data:`MAX_TIMEOUT`], or ``seed`` is not an int >= 0.

    Example:
        >>> from zooport.envs.builtin.basic import Basic
        >>> report = run_checkers(Basic, name="Basic", only=["base_env", "state"], steps=20,
        ...                       cycles=5)
        >>> [(r.checker, r.status.value) for r in report.results]
        [('construct', 'pass'), ('base_env', 'pass'), ('state', 'pass')]
    """
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
    wanted = [c for c in CHECKERS if c in selected]
    runner = _Runner(warnings_as_errors, timeout)
    report = SuiteReport(name, runner.results)

    def construct() -> str | None:
        core = factory()
        try:
            missing = [m for m in BASE_ENV_MEMBERS if not hasattr(core, m)]
            if missing:
                return (
                    f"expected the factory to return a BaseEnv, got an object of type "
                    f"{type(core).__name__} without {missing}"
                )
            return None
        finally:
            _close(core)

    if runner.run("construct", construct).status is CheckStatus.FAILED:
        for checker in wanted:
            runner.skip(checker, "the factory did not make an environment (see construct)")
        return report

    for checker in wanted:
        if checker == "base_env":
            runner.run(checker, functools.partial(_check_base_env, factory, seed, steps))
        elif checker == "gym" or (checker == "sb3" and "gym" not in wanted):
            # One probe of the agent counts serves both single-agent checkers.
            _run_single_agent(runner, factory, seed, single_agent, wanted)
        elif checker == "sb3":
            continue  # already run with "gym"
        else:
            _run_pettingzoo(runner, checker, factory, seed, cycles)
    return report


def _check_base_env(factory: Callable[..., Any], seed: int, steps: int) -> tuple[str | None, str]:
    from zooport.envs.checker import check_base_env

    core = factory()
    try:
        report = check_base_env(core, steps=steps, seed=seed, make_env=factory, strict=False)
    finally:
        _close(core)
    failures = report.failures
    if not failures:
        return None, report.format()
    first = failures[0]
    more = f" (+{len(failures) - 1} more failed checks)" if len(failures) > 1 else ""
    return " ".join(f"{first.message}{more}".split()), report.format()


def _run_single_agent(
    runner: _Runner,
    factory: Callable[..., Any],
    seed: int,
    preset: Mapping[str, Any] | None,
    wanted: Sequence[str],
) -> None:
    kinds = [c for c in ("gym", "sb3") if c in wanted]
    sb3_check = None
    if "sb3" in kinds:
        try:
            from stable_baselines3.common.env_checker import check_env as sb3_check
        except ImportError:
            runner.skip("sb3", "stable-baselines3 is not installed (pip install zooport[sb3])")
            kinds.remove("sb3")
    if not kinds:
        return
    plan: list[SingleAgentPlan] = []

    def find_plan() -> None:
        plan.append(single_agent_plan(factory, seed=seed, preset=preset))

    probe = runner.run("single_agent_probe", find_plan)
    runner.results.remove(probe)  # only reported when it fails
    if probe.status is CheckStatus.FAILED:
        for kind in kinds:
            runner.results.append(
                CheckerResult(
                    kind,
                    CheckStatus.FAILED,
                    f"counting agents failed: {probe.message}",
                    warnings=probe.warnings,
                )  # fmt: skip
            )
        return
    found = plan[0]
    if not found.behaviors:
        for kind in kinds:
            runner.skip(kind, f"not single-agent: {found.reason}")
        return
    for kind in kinds:
        for behavior in found.behaviors:
            check = _gym_check if kind == "gym" else functools.partial(_sb3_check, sb3_check)
            options = ", ".join(f"{k}={v!r}" for k, v in found.kwargs.items())
            runner.run(
                kind,
                functools.partial(check, factory, dict(found.kwargs), behavior, seed),
                target=f"{behavior}, {options}" if options else behavior,
            )


def _gym_env(factory: Callable[..., Any], kwargs: dict[str, Any], behavior: str, render: bool):
    from zooport.adapters.gym_env import GymEnv

    core = factory(**kwargs)
    try:
        env = GymEnv(core, behavior)
    except BaseException:
        _close(core)
        raise
    if render and "rgb_array" in env.metadata.get("render_modes", []):
        env.close()
        core = factory(**kwargs)
        try:
            env = GymEnv(core, behavior, render_mode="rgb_array")
        except BaseException:
            _close(core)
            raise
    return env


def _gym_check(factory: Callable[..., Any], kwargs: dict, behavior: str, seed: int) -> None:
    from gymnasium.utils.env_checker import check_env

    env = _gym_env(factory, kwargs, behavior, render=True)
    try:
        env.action_space.seed(seed)
        check_env(env, skip_render_check=env.render_mode is None)
    finally:
        _close(env)


def _sb3_check(sb3_check, factory: Callable[..., Any], kwargs: dict, behavior: str, seed: int):
    env = _gym_env(factory, kwargs, behavior, render=False)
    try:
        env.action_space.seed(seed)
        sb3_check(env, warn=True)
    finally:
        _close(env)


def _core_renders(factory: Callable[..., Any]) -> bool:
    from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv

    env = PettingZooParallelEnv(factory())
    try:
        return "rgb_array" in env.metadata.get("render_modes", [])
    finally:
        _close(env)


def _run_pettingzoo(
    runner: _Runner, checker: str, factory: Callable[..., Any], seed: int, cycles: int
) -> None:
    from zooport.adapters.pettingzoo_aec import PettingZooAECEnv
    from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv

    def make(kind: type, render_mode: str | None = None, **options: Any) -> Any:
        core = factory()
        try:
            env = kind(core, render_mode=render_mode, **options)
            _seed_action_spaces(env, seed)
        except BaseException:
            _close(core)
            raise
        return env

    aec = functools.partial(make, PettingZooAECEnv)
    parallel = functools.partial(make, PettingZooParallelEnv)

    def run_closing(test: Callable[..., Any], *envs: Any, **kwargs: Any) -> None:
        try:
            test(*envs, **kwargs)
        finally:
            for env in envs:
                _close(env)

    from pettingzoo import test as pz

    if checker == "parallel_api":
        runner.run(
            checker, lambda: run_closing(pz.parallel_api_test, parallel(), num_cycles=cycles)
        )
    elif checker == "aec_api":
        runner.run(checker, lambda: run_closing(pz.api_test, aec(), num_cycles=cycles))
    elif checker == "seed":
        runner.run(checker, lambda: pz.seed_test(aec, num_cycles=cycles))
    elif checker == "parallel_seed":
        runner.run(checker, lambda: pz.parallel_seed_test(parallel, num_cycles=cycles))
    elif checker == "max_cycles":
        module = types.SimpleNamespace(env=aec, parallel_env=parallel)
        runner.run(checker, lambda: pz.max_cycles_test(module))
    elif checker == "render":
        renders: list[bool] = []
        probe = runner.run(checker, lambda: renders.append(_core_renders(factory)))
        if probe.status is CheckStatus.FAILED:
            return
        runner.results.remove(probe)
        if not renders[0]:
            runner.skip(checker, "the environment does not render rgb_array pictures")
            return

        def env_fn(render_mode: str | None = None) -> Any:
            # render_test builds a "human" env only to read metadata["render_modes"]; the
            # adapters render rgb_array only and reject "human" at construction.
            return aec(render_mode=None if render_mode == "human" else render_mode)

        runner.run(checker, lambda: pz.render_test(env_fn))
    elif checker == "state":
        runner.run(checker, lambda: run_closing(pz.state_test, aec(), parallel()))
