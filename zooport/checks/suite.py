"""Every applicable upstream checker on one ``BaseEnv`` factory, each isolated from the others.

Functions:
    run_checkers: runs zooport's ``check_base_env``, Gymnasium's and SB3's ``check_env`` (on
        :class:`~zooport.adapters.gym_env.GymEnv`, where a behaviour can be single-agent) and
        PettingZoo's ``parallel_api_test``, ``api_test``, ``seed_test``,
        ``parallel_seed_test``, ``max_cycles_test``, ``render_test`` and ``state_test`` (on
        the PettingZoo adapters) on environments made by a factory.

This is what ``zooport check`` runs (import it from :mod:`zooport.checks`). It never lets
an environment's exception escape: each checker runs in its own ``try``/``except`` and a
crash is that checker's failure, with its message. Warnings are recorded per checker (by
default they do not fail it; with ``warnings_as_errors=True`` they do). Everything a checker
prints is swallowed. With a ``timeout``, a checker still running after that many seconds is
interrupted and fails (see :mod:`zooport.checks.isolation`).
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from zooport.checks.isolation import MAX_TIMEOUT, Runner, close_quietly
from zooport.checks.report import CHECKERS, CheckerResult, SuiteReport
from zooport.checks.single_agent import SingleAgentPlan, single_agent_plan
from zooport.envs.arguments import check_seed
from zooport.envs.checker import CheckStatus
from zooport.envs.registry import BASE_ENV_MEMBERS
from zooport.errors import ArgumentError

__all__ = ["run_checkers"]


def _seed_action_spaces(env: Any, seed: int) -> None:
    """Seeds each (shared, per behaviour) action space once, so sampled actions repeat."""
    seen: set[int] = set()
    for agent in env.possible_agents:
        space = env.action_space(agent)
        if id(space) not in seen:
            seen.add(id(space))
            space.seed(seed)


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
    runner = Runner(warnings_as_errors, timeout)
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
            close_quietly(core)

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
        close_quietly(core)
    failures = report.failures
    if not failures:
        return None, report.format()
    first = failures[0]
    more = f" (+{len(failures) - 1} more failed checks)" if len(failures) > 1 else ""
    return " ".join(f"{first.message}{more}".split()), report.format()


def _run_single_agent(
    runner: Runner,
    factory: Callable[..., Any],
    seed: int,
    preset: Mapping[str, Any] | None,
    wanted: Sequence[str],
) -> None:
    kinds = [c for c in ("gym", "sb3") if c in wanted]
    sb3_check: Callable[..., Any] | None = None
    if "sb3" in kinds:
        try:
            from stable_baselines3.common.env_checker import check_env

            sb3_check = check_env
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
        close_quietly(core)
        raise
    if render and "rgb_array" in env.metadata.get("render_modes", []):
        env.close()
        core = factory(**kwargs)
        try:
            env = GymEnv(core, behavior, render_mode="rgb_array")
        except BaseException:
            close_quietly(core)
            raise
    return env


def _gym_check(factory: Callable[..., Any], kwargs: dict, behavior: str, seed: int) -> None:
    from gymnasium.utils.env_checker import check_env

    env = _gym_env(factory, kwargs, behavior, render=True)
    try:
        env.action_space.seed(seed)
        check_env(env, skip_render_check=env.render_mode is None)
    finally:
        close_quietly(env)


def _sb3_check(sb3_check, factory: Callable[..., Any], kwargs: dict, behavior: str, seed: int):
    env = _gym_env(factory, kwargs, behavior, render=False)
    try:
        env.action_space.seed(seed)
        sb3_check(env, warn=True)
    finally:
        close_quietly(env)


def _core_renders(factory: Callable[..., Any]) -> bool:
    from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv

    env = PettingZooParallelEnv(factory())
    try:
        return "rgb_array" in env.metadata.get("render_modes", [])
    finally:
        close_quietly(env)


def _run_pettingzoo(
    runner: Runner, checker: str, factory: Callable[..., Any], seed: int, cycles: int
) -> None:
    from zooport.adapters.pettingzoo_aec import PettingZooAECEnv
    from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv

    def make(kind: type, render_mode: str | None = None, **options: Any) -> Any:
        core = factory()
        try:
            env = kind(core, render_mode=render_mode, **options)
            _seed_action_spaces(env, seed)
        except BaseException:
            close_quietly(core)
            raise
        return env

    aec = functools.partial(make, PettingZooAECEnv)
    parallel = functools.partial(make, PettingZooParallelEnv)

    def run_closing(test: Callable[..., Any], *envs: Any, **kwargs: Any) -> None:
        try:
            test(*envs, **kwargs)
        finally:
            for env in envs:
                close_quietly(env)

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
        # PettingZoo < 1.24.2 (pyproject allows 1.24.0) has no num_cycles here; it then
        # runs its own fixed number of cycles.
        accepts_cycles = "num_cycles" in inspect.signature(pz.parallel_seed_test).parameters
        kwargs = {"num_cycles": cycles} if accepts_cycles else {}
        runner.run(checker, lambda: pz.parallel_seed_test(parallel, **kwargs))
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
