"""The ``zooport`` command line: list, inspect, play, check, benchmark and train environments.

Functions:
    main: the entry point (``zooport = "zooport.cli:main"``; also ``python -m zooport.cli``).
    build_parser: the argument parser with its six subcommands.
    format_table: a plain-text table.

This module holds the argument parsing, the output and one ``_cmd_*`` function per
subcommand. What they work on is in :mod:`zooport.targets` (``UsageError``, ``Target``,
``resolve_target``, ``parse_kwargs``, re-exported here); what ``play`` and ``train`` run is in
:mod:`zooport.play` and :mod:`zooport.training`, whose optional dependencies (SB3, torch,
matplotlib, Pillow) are imported only when a run needs them.

Subcommands (``zooport <command> --help`` for each)::

    zooport list
    zooport info ENV [--kwargs JSON]
    zooport play ENV [--api raw|gym|vector|parallel|aec] [--steps N] [--seed S]
                     [--behavior NAME] [--record out.gif] [--kwargs JSON]
    zooport check ENV|module:factory [--kwargs JSON] [--only NAME ...] [--strict]
                      [--timeout SECONDS]
    zooport bench [--quick] [--json PATH] [--n N ...] [--envs NAME ...] [--routes NAME ...]
                  [--workers K]
    zooport train ENV [--api vector|parallel] [--steps N] [--seed S] [--plot out.png]
                      [--workers K]

Errors a user can cause print one line to stderr and exit with status 2; ``check`` exits 1
when a checker failed. Tables use ``rich`` when it is installed and stdout is a terminal,
plain text otherwise (or with ``--plain``).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from zooport.checks import MAX_TIMEOUT, one_line
from zooport.play import APIS, play
from zooport.targets import (
    Target,
    UsageError,
    check_output_path,
    parse_kwargs,
    require,
    reset_core,
    resolve_target,
)
from zooport.training import TRAIN_APIS, plot_curve, train

__all__ = [
    "main",
    "build_parser",
    "format_table",
    "UsageError",
    "Target",
    "resolve_target",
    "parse_kwargs",
]


# --------------------------------------------------------------------------- output


class _Output:
    """Prints tables as plain text (stable, for tests and pipes) or with rich."""

    def __init__(self, plain: bool) -> None:
        self.console = None
        if not plain and sys.stdout.isatty():
            with contextlib.suppress(ImportError):
                from rich.console import Console

                self.console = Console()

    def line(self, text: str = "") -> None:
        print(text)

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "") -> None:
        cells = [[str(c) for c in row] for row in rows]
        if self.console is not None:
            from rich.table import Table

            table = Table(*headers, title=title or None)
            for row in cells:
                table.add_row(*row)
            self.console.print(table)
            return
        if title:
            print(title)
        print(format_table(headers, cells))


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table: columns padded to their widest cell, two spaces apart.

    Example:
        >>> print(format_table(["env", "agents"], [["Basic", "1"], ["Tag", "5"]]))
        env    agents
        Basic  1
        Tag    5
    """
    table = [list(headers), *[list(r) for r in rows]]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in table
    )


def _show_progress(args: argparse.Namespace) -> bool:
    """A progress bar unless ``--no-progress`` or stderr is not a terminal (pipes, CI logs)."""
    return not args.no_progress and sys.stderr.isatty()


# --------------------------------------------------------------------------- descriptions


def _brief_action(spec: Any) -> str:
    continuous, branches = spec.continuous_size, tuple(spec.discrete_branches)
    if continuous and branches:
        return f"hybrid(continuous={continuous}, discrete={branches})"
    if branches:
        return f"discrete{branches}" if len(branches) > 1 else f"discrete({branches[0]})"
    return f"continuous({continuous})"


def _brief_obs(spec: Any) -> str:
    return " + ".join("x".join(str(d) for d in o.shape) for o in spec.observation_specs)


def _agent_counts(core: Any) -> dict[str, int]:
    return {name: len(core.get_steps(name)[0]) for name in core.behavior_specs}


def _cmd_list(args: argparse.Namespace, out: _Output) -> int:
    from zooport.envs.registry import default_registry

    rows = []
    for identifier in default_registry:
        entry = default_registry[identifier]
        try:
            core = resolve_target(identifier).make_seeded(0)
        except Exception as exc:  # a remote or broken entry still gets its row
            rows.append([identifier, f"({one_line(exc)[:60]})", "-", "-", "-", "-"])
            continue
        try:
            reset_core(core, 0)
            counts = _agent_counts(core)
            specs = core.behavior_specs
            behaviours = "; ".join(f"{b} x{n}" for b, n in counts.items())
            actions = "; ".join(_brief_action(s.action_spec) for s in specs.values())
            observations = "; ".join(_brief_obs(s) for s in specs.values())
        finally:
            core.close()
        expected = entry.expected_reward
        steps = getattr(entry, "max_episode_steps", None)
        rows.append([
            identifier, behaviours, actions, observations,
            "-" if expected is None else f"{expected:g}", "-" if steps is None else str(steps),
        ])  # fmt: skip
    out.table(
        ["env", "behaviours x agents", "actions", "observations", "expected reward", "max steps"],
        rows,
    )
    return 0


def _side_channel_use(target: Target, core_type: type) -> list[list[str]]:
    """What a BatchedEnv reads and sends through side channels.

    A class may declare ``side_channel_use = {"parameters": [...], "stats": [...]}``;
    otherwise the keys are found by running a fresh instance for 300 random steps and
    recording its ``environment_parameter`` and ``record_stat`` calls.
    """
    from zooport.envs.batched_env import BatchedEnv

    if not issubclass(core_type, BatchedEnv):
        return [["-", "-", "not a BatchedEnv: only its own side_channels are known"]]
    declared = getattr(core_type, "side_channel_use", None)
    params: dict[str, None] = {}
    stats: dict[str, None] = {}
    if isinstance(declared, Mapping):
        params.update(dict.fromkeys(declared.get("parameters", ())))
        stats.update(dict.fromkeys(declared.get("stats", ())))
    else:
        # Record the keys the environment asks for and reports during a short random run.
        from zooport.demo import rollout

        core = target.make_seeded(0)
        read, record = core.environment_parameter, core.record_stat

        def environment_parameter(key: str, default: float) -> float:
            params[key] = None
            return read(key, default)

        def record_stat(key: str, value: float, *rest: Any, **kw: Any) -> None:
            stats[key] = None
            record(key, value, *rest, **kw)

        core.environment_parameter, core.record_stat = environment_parameter, record_stat
        try:
            rollout(core, 300, seed=0)
        finally:
            core.close()
    return [
        ["EngineConfigurationChannel", "reads", "engine settings, kept in env.engine_config"],
        ["EnvironmentParametersChannel", "reads",
         ", ".join(params) or "no parameter seen in a 300-step random run"],
        ["FloatPropertiesChannel", "reads/sends", "properties either end sets"],
        ["StatsSideChannel", "sends", ", ".join(stats) or "no statistic seen in a 300-step run"],
    ]  # fmt: skip


def _adapter_rows(target: Target, counts: Mapping[str, int], specs: Mapping[str, Any]) -> list:
    from zooport.checks import single_agent_plan

    plan = single_agent_plan(target.factory, preset=target.gym_preset)
    if plan.behaviors:
        how = ", ".join(f"{k}={v!r}" for k, v in plan.kwargs.items())
        gym = ["gym", "GymEnv", "yes", ", ".join(plan.behaviors) + (f" with {how}" if how else "")]
    else:
        gym = ["gym", "GymEnv", "no", plan.reason]
    several = len(specs) > 1
    vector_note = "one slot per agent" + ("; pick a behaviour (--behavior)" if several else "")
    hybrid = [
        b for b, s in specs.items() if s.action_spec.continuous_size and s.action_spec.discrete_size
    ]
    return [
        ["raw", "BaseEnv", "yes", ", ".join(f"{b}: {_agents(n)}" for b, n in counts.items())],
        gym,
        ["vector", "BehaviorVectorEnv, SB3VecEnv", "yes", vector_note],
        ["parallel", "PettingZooParallelEnv", "yes", _agents(sum(counts.values()))],
        ["aec", "PettingZooAECEnv", "yes", "agents act in turn, the core steps once a cycle"],
        ["train", "SB3 PPO / MaskablePPO", "no" if hybrid else "yes",
         f"hybrid actions in {hybrid}: SB3 has no hybrid policy" if hybrid
         else "--api vector or parallel"],
    ]  # fmt: skip


def _agents(n: int) -> str:
    return f"{n} agent" if n == 1 else f"{n} agents"


def _cmd_info(args: argparse.Namespace, out: _Output) -> int:
    target = resolve_target(args.env, parse_kwargs(args.kwargs))
    core = target.make()
    try:
        reset_core(core, 0)
        specs = dict(core.behavior_specs)
        counts = _agent_counts(core)
        masks = {b: core.get_steps(b)[0].action_mask is not None for b in specs}
        renders = _renders(core)
        core_type = type(core)
    finally:
        core.close()
    entry = target.entry
    description = (entry.description if entry is not None else inspect.getdoc(core_type)) or ""
    out.line(f"{target.name}: {description.strip().splitlines()[0] if description else ''}")
    expected = target.expected_reward
    steps = getattr(entry, "max_episode_steps", None) or getattr(
        core_type, "max_episode_steps", None
    )
    out.line(
        f"class {core_type.__module__}.{core_type.__qualname__}; expected reward "
        f"{'-' if expected is None else f'{expected:g}'}; max episode steps {steps or '-'}; "
        f"renders rgb_array: {'yes' if renders else 'no'}"
    )
    rows = []
    for b, spec in specs.items():
        a = spec.action_spec
        rows.append([b, str(counts[b]), "action", _brief_action(a), "-",
                     "masked" if masks[b] else "no mask", "-"])  # fmt: skip
        for obs in spec.observation_specs:
            props = ", ".join(
                getattr(p, "name", str(p)) or str(int(p)) for p in obs.dimension_property
            )
            rows.append(["", "", "observation", obs.name, str(tuple(obs.shape)),
                         obs.observation_type.name, props])  # fmt: skip
    out.line()
    headers = ["behaviour", "agents", "kind", "name / spec", "shape", "type", "dimension props"]
    out.table(headers, rows, title="Behaviour specs")
    out.line()
    out.table(["side channel", "direction", "keys"], _side_channel_use(target, core_type),
              title="Side channels")  # fmt: skip
    out.line()
    out.table(["api", "adapter", "applies", "note"], _adapter_rows(target, counts, specs),
              title="Adapters")  # fmt: skip
    return 0


def _renders(core: Any) -> bool:
    from zooport.adapters.core_access import render_core

    with contextlib.suppress(Exception):
        return render_core(core) is not None
    return False


# --------------------------------------------------------------------------- play


def _cmd_play(args: argparse.Namespace, out: _Output) -> int:
    target = resolve_target(args.env, parse_kwargs(args.kwargs))
    stats = play(
        target, api=args.api, steps=args.steps, seed=args.seed, behavior=args.behavior,
        record=args.record, progress=_show_progress(args),
    )  # fmt: skip
    rate = stats.agent_steps / stats.seconds if stats.seconds > 0 else float("inf")
    out.line(
        f"{stats.env} via {stats.api}: {stats.steps} steps, {stats.agent_steps} agent-steps in "
        f"{stats.seconds:.2f} s ({rate:,.0f} agent-steps/s)"
    )
    expected = target.expected_reward
    rewards = stats.episode_rewards
    summary = (
        f"mean episode reward {stats.mean_episode_reward:.3f} "
        f"(min {min(rewards):.3f}, max {max(rewards):.3f})"
        if rewards
        else "no episode finished"
    )
    out.line(
        f"episodes finished: {stats.episodes}; {summary}; expected reward (trained): "
        f"{'-' if expected is None else f'{expected:g}'}"
    )
    if args.record:
        out.line(f"wrote {stats.frames} frames to {args.record}")
    return 0


# --------------------------------------------------------------------------- check


def _cmd_check(args: argparse.Namespace, out: _Output) -> int:
    from zooport.checks import CHECKERS, run_checkers

    unknown = [c for c in args.only or () if c not in CHECKERS]
    if unknown:
        raise UsageError(f"--only takes checker names among {list(CHECKERS)}, got {unknown}")
    if args.steps < 1 or args.cycles < 1:
        raise UsageError(f"--steps and --cycles must be positive, got {args.steps}, {args.cycles}")
    if not 0 <= args.timeout <= MAX_TIMEOUT:
        # Beyond MAX_TIMEOUT the platform's timer overflows; inf and nan are no durations.
        raise UsageError(
            f"--timeout takes seconds >= 0 and <= {MAX_TIMEOUT} (0: no limit), got {args.timeout}"
        )
    target = resolve_target(args.env, parse_kwargs(args.kwargs))
    report = run_checkers(
        target.factory, name=target.name, only=args.only, seed=args.seed, steps=args.steps,
        cycles=args.cycles, single_agent=target.gym_preset, warnings_as_errors=args.strict,
        timeout=args.timeout or None,
    )  # fmt: skip
    if out.console is not None:
        out.table(["checker", "status", "warnings", "message"], report.rows(),
                  title=report.format(show_warnings=False).splitlines()[0])  # fmt: skip
        if args.verbose:
            for line in report.warning_lines():
                out.line(line)
    else:
        out.line(report.format(show_warnings=args.verbose))
    if args.verbose:
        for result in report.results:
            if result.details:
                out.line(f"\n{result.label}:\n{result.details}")
    return 0 if report.passed else 1


# --------------------------------------------------------------------------- bench


def bench_script_candidates() -> list[Path]:
    """Where ``benchmarks/run.py`` may be: next to the package (a checkout), then the cwd."""
    checkout = Path(__file__).resolve().parent.parent
    return [checkout / "benchmarks" / "run.py", Path.cwd() / "benchmarks" / "run.py"]


def _cmd_bench(args: argparse.Namespace, out: _Output) -> int:
    import runpy

    if args.workers is not None:
        return _bench_pool(args)
    script = next((p for p in bench_script_candidates() if p.is_file()), None)
    if script is None:
        raise UsageError(
            "zooport bench runs the repository's benchmarks/run.py, which is not here "
            f"(looked in {[str(p) for p in bench_script_candidates()]}); run it from a checkout"
        )
    namespace = runpy.run_path(str(script), run_name="zooport_bench")
    for option, known in (
        ("envs", namespace.get("ENVS")),
        ("routes", namespace.get("ROUTE_NAMES")),
    ):
        chosen = getattr(args, option) or []
        bad = [c for c in chosen if known is not None and c not in known]
        if bad:
            raise UsageError(f"--{option} takes names among {sorted(known)}, got {bad}")
    if args.n is not None and any(n < 1 for n in args.n):
        raise UsageError(f"--n takes positive agent counts, got {args.n}")
    if args.json:
        check_output_path(args.json, "--json")
    argv = ["--quick"] if args.quick else []
    if args.json:
        argv += ["--json", args.json]
    for option in ("n", "envs", "routes"):
        values = getattr(args, option)
        if values:
            argv += [f"--{option}", *map(str, values)]
    return int(namespace["main"](argv) or 0)


def _bench_pool(args: argparse.Namespace) -> int:
    """``zooport bench --workers K``: benchmarks/pool.py, next to benchmarks/run.py."""
    import runpy

    scripts = [p.with_name("pool.py") for p in bench_script_candidates()]
    script = next((p for p in scripts if p.is_file()), None)
    if script is None:
        raise UsageError(
            "zooport bench --workers runs the repository's benchmarks/pool.py, which is not "
            f"here (looked in {[str(p) for p in scripts]}); run it from a checkout"
        )
    if args.envs or args.routes:
        raise UsageError("--envs and --routes belong to the adapter benchmark, not --workers")
    argv = ["--workers", str(args.workers), *(["--quick"] if args.quick else [])]
    if args.json:
        argv += ["--json", args.json]
    if args.n:
        argv += ["--n", *map(str, args.n)]
    namespace = runpy.run_path(str(script), run_name="zooport_bench_pool")
    return int(namespace["main"](argv) or 0)


# --------------------------------------------------------------------------- train


def _cmd_train(args: argparse.Namespace, out: _Output) -> int:
    if args.plot:
        require("matplotlib", "plots", "--plot")
        # Found now, not after the training run.
        check_output_path(args.plot, "--plot", _plot_suffixes())
    target = resolve_target(args.env, parse_kwargs(args.kwargs))
    result = train(
        target, api=args.api, steps=args.steps, seed=args.seed, behavior=args.behavior,
        progress=_show_progress(args), eval_episodes=args.eval_episodes, workers=args.workers,
    )  # fmt: skip
    expected = "-" if result.expected_reward is None else f"{result.expected_reward:g}"
    verdict = {True: "reached", False: "below", None: "no target"}[result.solved]
    out.table(
        ["env", "api", "algorithm", "steps", "seconds", "agent-steps/s", "mean episode reward",
         "expected reward", "verdict"],
        [[result.env, result.api, result.algorithm, str(result.timesteps), f"{result.seconds:.1f}",
          f"{result.agent_steps_per_second:,.0f}", f"{result.mean_episode_reward:.3f}", expected,
          verdict]],
    )  # fmt: skip
    if args.plot:
        plot_curve(result, args.plot)
        out.line(f"wrote the learning curve to {args.plot}")
    return 0


def _plot_suffixes() -> list[str]:
    """The file suffixes matplotlib writes (``.png``, ``.svg``, ``.pdf``, ...)."""
    from matplotlib.backend_bases import FigureCanvasBase

    return [f".{kind}" for kind in FigureCanvasBase.get_supported_filetypes()]


# --------------------------------------------------------------------------- main


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        command = self.prog.partition(" ")[2]
        raise UsageError(f"{command}: {message}" if command else message)


def _int_at_least(minimum: int, what: str) -> Any:
    """An argparse type: an int >= ``minimum``, else a one-line error naming ``what``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {what}, got {value}")
        return value

    parse.__name__ = what  # argparse names the type in some messages
    return parse


_positive = _int_at_least(1, "a positive int")
_count = _int_at_least(0, "an int >= 0")
_seed = _int_at_least(0, "a seed (an int >= 0)")


def build_parser() -> argparse.ArgumentParser:
    """The ``zooport`` argument parser with its six subcommands."""
    parser = _Parser(
        prog="zooport",
        description="One batched multi-agent simulation, every RL library.",
    )
    parser.add_argument("--plain", action="store_true", help="plain-text tables, never rich")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    commands.add_parser("list", help="registered environments and their specs")

    info = commands.add_parser("info", help="behaviour specs, side channels and adapters of ENV")
    info.add_argument("env", metavar="ENV", help="a registry id or module:factory")
    info.add_argument("--kwargs", metavar="JSON", help="keyword arguments of the factory")

    play_ = commands.add_parser("play", help="random mask-respecting actions through an adapter")
    play_.add_argument("env", metavar="ENV", help="a registry id or module:factory")
    play_.add_argument("--api", choices=APIS, default="raw", help="the adapter (default raw)")
    play_.add_argument("--steps", type=_positive, default=1000, help="adapter steps (1000)")
    play_.add_argument("--seed", type=_seed, default=0)
    play_.add_argument("--behavior", help="the behaviour for --api gym/vector")
    play_.add_argument("--record", metavar="GIF", help="write an animated GIF of the frames")
    play_.add_argument("--kwargs", metavar="JSON", help="keyword arguments of the factory")
    play_.add_argument("--no-progress", action="store_true", help="no progress bar")

    check = commands.add_parser("check", help="run every applicable checker on ENV")
    check.add_argument("env", metavar="ENV", help="a registry id or module:factory")
    check.add_argument("--kwargs", metavar="JSON", help="keyword arguments of the factory")
    check.add_argument("--only", nargs="+", metavar="NAME", help="checkers to run (default all)")
    check.add_argument("--seed", type=_seed, default=0)
    check.add_argument("--steps", type=int, default=200, help="check_base_env steps (200)")
    check.add_argument("--cycles", type=int, default=100, help="PettingZoo num_cycles (100)")
    check.add_argument("--strict", action="store_true", help="a checker that warns fails")
    check.add_argument(
        "--timeout", type=float, default=600.0, metavar="SECONDS",
        help="a checker still running after this long fails (600; 0 = no limit)",
    )  # fmt: skip
    check.add_argument("-v", "--verbose", action="store_true", help="list warnings and details")

    bench = commands.add_parser("bench", help="the adapter benchmark table (benchmarks/run.py)")
    bench.add_argument("--quick", action="store_true", help="seconds, for CI")
    bench.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    bench.add_argument("--n", type=int, nargs="+", help="agent counts")
    bench.add_argument("--envs", nargs="+", metavar="NAME", help="benchmark environments")
    bench.add_argument("--routes", nargs="+", metavar="NAME", help="routes to measure")
    bench.add_argument("--workers", type=_positive, metavar="K",
                       help="instead: the CorePool benchmark with K cores (benchmarks/pool.py)")

    train_ = commands.add_parser("train", help="SB3 PPO (MaskablePPO with masks) on ENV")
    train_.add_argument("env", metavar="ENV", help="a registry id or module:factory")
    train_.add_argument("--api", choices=TRAIN_APIS, default="vector")
    train_.add_argument("--steps", type=_positive, default=100_000, help="agent-steps (100000)")
    train_.add_argument("--seed", type=_seed, default=0)
    train_.add_argument("--behavior", help="the behaviour to train (--api vector)")
    train_.add_argument("--plot", metavar="PNG", help="write the learning curve (matplotlib)")
    train_.add_argument("--eval-episodes", type=_count, default=0,
                        help="deterministic evaluation episodes after training")  # fmt: skip
    train_.add_argument("--kwargs", metavar="JSON", help="keyword arguments of the factory")
    train_.add_argument("--workers", type=_positive, metavar="K",
                        help="K copies of the core stepped in parallel (a CorePool)")
    train_.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


_COMMANDS = {
    "list": _cmd_list,
    "info": _cmd_info,
    "play": _cmd_play,
    "check": _cmd_check,
    "bench": _cmd_bench,
    "train": _cmd_train,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the ``zooport`` command line; returns the exit status.

    Example:
        >>> main(["--plain", "info", "NoSuchEnv"])
        2
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        args = build_parser().parse_args(argv)
        return _COMMANDS[args.command](args, _Output(args.plain))
    except UsageError as exc:
        if debug:
            raise
        print(f"zooport: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("zooport: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`zooport list | head -1`)
        with contextlib.suppress(OSError, ValueError):
            # Python flushes stdout at exit; point it at devnull so that is silent too.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, as a shell reports it
    except SystemExit as exc:  # --help, or a benchmark script that exits
        return exc.code if isinstance(exc.code, int) else 0
    except Exception as exc:
        if debug:
            raise
        print(f"zooport: {one_line(exc)} (run with --debug for the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
