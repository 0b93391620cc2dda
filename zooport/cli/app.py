"""The ``zooport`` command line, each command's handler; a mistake the user can fix prints one line
and exits 2. ``list`` and ``info`` find what an environment is by making and running it."""

from __future__ import annotations

import argparse
import contextlib
import functools
import math
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any

from zooport import __version__
from zooport.checks import CHECKERS, MAX_TIMEOUT, one_line, run_checkers, single_agent_plan
from zooport.cli import training
from zooport.cli.common import Output, UsageError, cell, check_output_path, require, rollout
from zooport.cli.play import APIS, check_play_api, play
from zooport.cli.targets import Target, parse_kwargs, resolve_target
from zooport.cli.training import ModelInfo, load_model, read_model_info, save_model, save_path
from zooport.envs.base_env import BaseEnvLike
from zooport.envs.batched_env import BatchedEnv
from zooport.envs.capabilities import accepts_keyword, reset_core
from zooport.envs.registry import default_registry

__all__ = ["main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]  # raises, never exits
        command = self.prog.partition(" ")[2]
        raise UsageError(f"{command}: {message}" if command else message)


def _int_at_least(minimum: int, what: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {what}, got {value}")
        return value

    return parse


_positive = _int_at_least(1, "a positive int")
_seed = _int_at_least(0, "a seed (an int >= 0)")
_Argument = tuple[tuple[str, ...], dict[str, Any]]


def _arg(*names: str, **options: Any) -> _Argument:
    return names, options


_ENV = [
    _arg("env", metavar="ENV",
         help="a registry id, package.module:factory or path/to/file.py:factory"),
    _arg("--kwargs", metavar="JSON", help="keyword arguments of the factory"),
]  # fmt: skip
_SEED = _arg("--seed", type=_seed, default=0)


def _route(apis: Sequence[str], api: str, steps: int, what: str, behavior: str) -> list[_Argument]:
    return [
        *_ENV, _SEED, _arg("--api", choices=apis, help=api),
        _arg("--steps", type=_positive, default=steps, help=f"{what} ({steps})"),
        _arg("--behavior", help=behavior),
        _arg("--no-progress", action="store_true", help="no progress bar"),
    ]  # fmt: skip


def _brief_action(spec: Any) -> str:
    continuous, branches = spec.continuous_size, tuple(spec.discrete_branches)
    if continuous and branches:
        return f"hybrid(continuous={continuous}, discrete={branches})"
    if branches:
        return f"discrete{branches}" if len(branches) > 1 else f"discrete({branches[0]})"
    return f"continuous({continuous})"


def _agents(n: int) -> str:
    return f"{n} agent" if n == 1 else f"{n} agents"


def _first_steps(core: BaseEnvLike) -> dict[str, tuple[Any, Any]]:
    reset_core(core, 0)
    return {b: (spec, core.get_steps(b)[0]) for b, spec in core.behavior_specs.items()}


def _cmd_list(args: argparse.Namespace, out: Output) -> int:
    rows = []
    for identifier in default_registry:
        entry = default_registry[identifier]
        try:
            core = resolve_target(identifier).make(seed=0)
        except Exception as exc:  # a remote or broken entry still gets its row
            rows.append([identifier, f"({one_line(exc)[:60]})", "-", "-", "-", "-"])
            continue
        try:
            first = _first_steps(core)
        finally:
            core.close()
        specs = [spec for spec, _ in first.values()]
        rows.append([
            identifier,
            "; ".join(f"{b} x{len(decisions)}" for b, (_, decisions) in first.items()),
            "; ".join(_brief_action(s.action_spec) for s in specs),
            "; ".join(" + ".join("x".join(map(str, o.shape)) for o in s.observation_specs)
                      for s in specs),
            cell(entry.expected_reward), cell(getattr(entry, "max_episode_steps", None), ""),
        ])  # fmt: skip
    out.table(["env", "behaviours x agents", "actions", "observations", "expected reward",
               "max steps"], rows)  # fmt: skip
    return 0


def _noting(seen: dict[str, None], method: Any, key: str, *args: Any, **kwargs: Any) -> Any:
    seen[key] = None
    return method(key, *args, **kwargs)


def _cmd_info(args: argparse.Namespace, out: Output) -> int:
    from zooport.adapters.core_access import render_core

    target = resolve_target(args.env, parse_kwargs(args.kwargs))
    core = target.make()
    try:
        first = _first_steps(core)
        renders = False
        with contextlib.suppress(Exception):
            renders = render_core(core) is not None
        steps: Any = getattr(target.entry, "max_episode_steps", None)
        if not steps and isinstance(core, BatchedEnv):
            # A BatchedEnv's own limit per behaviour (max_steps=, _add_behavior(max_steps=)).
            limits = {b: s.max_steps for b, s in core._behaviors.items()}
            steps = next(iter(limits.values()), 0)
            if len(set(limits.values())) > 1:
                steps = ", ".join(f"{b}: {n or '-'}" for b, n in limits.items())
        core_type, steps = type(core), steps or getattr(type(core), "max_episode_steps", None)
        # The side-channel keys a BatchedEnv asks for and records in 300 random steps (after
        # the first steps: this steps the core).
        channels = [["-", "-", "not a BatchedEnv: only its own side_channels are known"]]
        if isinstance(core, BatchedEnv):
            params: dict[str, None] = {}  # the keys in the order seen
            stats: dict[str, None] = {}
            for method, seen in (("environment_parameter", params), ("record_stat", stats)):
                setattr(core, method, functools.partial(_noting, seen, getattr(core, method)))
            rollout(core, 300, seed=0)
            channels = [
                ["EngineConfigurationChannel", "reads",
                 "engine settings, kept in env.engine_config"],
                ["EnvironmentParametersChannel", "reads",
                 ", ".join(params) or "no parameter seen in a 300-step random run"],
                ["FloatPropertiesChannel", "reads/sends", "properties either end sets"],
                ["StatsSideChannel", "sends",
                 ", ".join(stats) or "no statistic seen in a 300-step run"],
            ]  # fmt: skip
    finally:
        core.close()
    # The class's own docstring: a subclass without one is not described by its base's.
    entry = target.entry
    description = entry.description if entry is not None else core_type.__dict__.get("__doc__")
    summary = plain_text(description.strip().splitlines()[0]) if description else "(no docstring)"
    print(f"{target.name}: {summary}")
    print(
        f"class {core_type.__module__}.{core_type.__qualname__}; expected reward "
        f"{cell(target.expected_reward)}; max episode steps {steps or '-'}; "
        f"renders rgb_array: {'yes' if renders else 'no'}"
    )
    rows = []
    for b, (spec, decisions) in first.items():
        mask = "no mask" if decisions.action_mask is None else "masked"
        rows.append([b, str(len(decisions)), "action", _brief_action(spec.action_spec), "-",
                     mask, "-"])  # fmt: skip
        for obs in spec.observation_specs:
            props = ", ".join(
                getattr(p, "name", str(p)) or str(int(p)) for p in obs.dimension_property
            )
            rows.append(["", "", "observation", obs.name, str(tuple(obs.shape)),
                         obs.observation_type.name, props])  # fmt: skip
    counts = {b: len(decisions) for b, (_, decisions) in first.items()}
    plan = single_agent_plan(target.factory, preset=target.gym_preset)
    how = ", ".join(f"{k}={v!r}" for k, v in plan.kwargs.items())
    gym = ["yes", ", ".join(plan.behaviors) + (f" with {how}" if how else "")]
    several = "; pick a behaviour (--behavior)" if len(first) > 1 else ""
    hybrid = [b for b, (s, _) in first.items() if s.action_spec.continuous_size
              and s.action_spec.discrete_size]  # fmt: skip
    adapters = [
        ["raw", "BaseEnv", "yes", ", ".join(f"{b}: {_agents(n)}" for b, n in counts.items())],
        ["gym", "GymEnv", *(gym if plan.behaviors else ["no", plan.reason])],
        ["vector", "BehaviorVectorEnv, SB3VecEnv", "yes", f"one slot per agent{several}"],
        ["parallel", "PettingZooParallelEnv", "yes", _agents(sum(counts.values()))],
        ["aec", "PettingZooAECEnv", "yes", "agents act in turn, the core steps once a cycle"],
        ["train", "SB3 PPO / MaskablePPO", "no" if hybrid else "yes",
         f"hybrid actions in {hybrid}: SB3 has no hybrid policy" if hybrid
         else "--api vector or parallel"],
    ]  # fmt: skip
    tables = (
        ("Behaviour specs", ["behaviour", "agents", "kind", "name / spec", "shape", "type",
                             "dimension props"], rows),
        ("Side channels", ["side channel", "direction", "keys"], channels),
        ("Adapters", ["api", "adapter", "applies", "note"], adapters),
    )  # fmt: skip
    for title, headers, table in tables:
        print()
        out.table(headers, table, title=title)
    return 0


def plain_text(rst: str) -> str:
    """reStructuredText's inline markup as plain text."""
    text = re.sub(r":[\w:.-]+:`~[^`]*?([^.`]+)`", r"\1", rst)  # :class:`~a.b.C` -> C
    text = re.sub(r":[\w:.-]+:`([^`]+)`", r"\1", text)  # :func:`a.b` -> a.b
    return re.sub(r"``?([^`]+)``?", r"\1", text)  # ``x`` and `x` -> x


def _resolve(
    args: argparse.Namespace, path: str | None, option: str, default_api: str
) -> tuple[Target, ModelInfo, str, str | None, bool]:
    # api and behaviour as given, else as the model trained; no progress bar in pipes and logs
    info = ModelInfo(args.env, api=default_api) if path is None else read_model_info(path, option)
    given = None if args.kwargs is None else parse_kwargs(args.kwargs)
    kwargs, api, behavior = info.options_for(args.env, given, args.api, args.behavior)
    progress = not args.no_progress and sys.stderr.isatty()
    return resolve_target(args.env, kwargs), info, api, behavior, progress


def _cmd_play(args: argparse.Namespace, out: Output) -> int:
    target, info, api, behavior, progress = _resolve(args, args.model, "--model", "raw")
    check_play_api(api, with_model=args.model is not None)  # before the model loads
    model = None if args.model is None else load_model(args.model, info)
    stats = play(target, api=api, steps=args.steps, seed=args.seed, behavior=behavior,
                 record=args.record, progress=progress, model=model)  # fmt: skip
    policy = f" ({stats.policy} from {args.model}, deterministic)" if args.model else ""
    rewards = stats.episode_rewards
    summary = (f"mean episode reward {stats.mean_episode_reward:.3f} (min {min(rewards):.3f}, "
               f"max {max(rewards):.3f})" if rewards else "no episode finished")  # fmt: skip
    print(
        f"{stats.env} via {stats.api}{policy}: {stats.steps} steps, {stats.agent_steps} agent-steps"
        f" in {stats.seconds:.2f} s ({stats.agent_steps_per_second:,.0f} agent-steps/s)\n"
        f"episodes finished: {stats.episodes}; {summary}; expected reward (trained): "
        f"{cell(target.expected_reward)}"
    )
    if args.record:
        print(f"wrote {stats.frames} frames to {args.record}")
    return 0


def _cmd_check(args: argparse.Namespace, out: Output) -> int:
    unknown = [c for c in args.only or () if c not in CHECKERS]
    if unknown:
        raise UsageError(f"--only takes checker names among {list(CHECKERS)}, got {unknown}")
    if not 0 <= args.timeout <= MAX_TIMEOUT:  # past MAX_TIMEOUT the platform's timer overflows
        raise UsageError(
            f"--timeout takes seconds >= 0 and <= {MAX_TIMEOUT} (0: no limit), got {args.timeout}"
        )
    target = resolve_target(args.env, parse_kwargs(args.kwargs))
    report = run_checkers(
        target.factory, name=target.name, only=args.only, seed=args.seed, steps=args.steps,
        cycles=args.cycles, single_agent=target.gym_preset, warnings_as_errors=args.strict,
        timeout=args.timeout or None,
    )  # fmt: skip
    if out.console is None:
        print(report.format(show_warnings=args.verbose))
    else:
        out.table(["checker", "status", "warnings", "message"], report.rows(),
                  title=report.format(show_warnings=False).splitlines()[0])  # fmt: skip
        for line in report.warning_lines() if args.verbose else ():
            print(line)
    for result in report.results if args.verbose else ():
        if result.details:
            print(f"\n{result.label}:\n{result.details}")
    return 0 if report.passed else 1


def _cmd_bench(args: argparse.Namespace, out: Output) -> int:
    if args.json:
        check_output_path(args.json, "--json")
    from zooport.cli.bench import pool, run

    if args.workers is not None and (args.envs or args.routes):
        raise UsageError("--envs and --routes belong to the adapter benchmark, not --workers")
    for option, known in (("envs", run.ENVS), ("routes", run.ROUTE_NAMES)):
        bad = [c for c in getattr(args, option) or () if c not in known]
        if bad:
            raise UsageError(f"--{option} takes names among {sorted(known)}, got {bad}")
    # Checked here, the same options are the benchmark's own: it takes them as given.
    return (run if args.workers is None else pool).main(args.argv[args.argv.index("bench") + 1 :])


def _cmd_train(args: argparse.Namespace, out: Output) -> int:
    # Every output path and the model to resume are checked before the run starts.
    if args.plot:  # matplotlib itself first: an imported submodule hides a blocked matplotlib
        require("matplotlib", "plots", "--plot")
        canvas = require("matplotlib.backend_bases", "plots", "--plot").FigureCanvasBase
        check_output_path(args.plot, "--plot", [f".{k}" for k in canvas.get_supported_filetypes()])
    save = None if args.save is None else save_path(args.save)
    target, _, api, behavior, progress = _resolve(args, args.resume, "--resume", "vector")
    result = training.train(
        target, api=api, steps=args.steps, seed=args.seed, behavior=behavior, progress=progress,
        eval_episodes=args.eval_episodes, resume=args.resume, workers=args.workers,
    )  # fmt: skip
    mean = result.mean_episode_reward
    out.table(
        ["env", "api", "algorithm", "steps", "seconds", "agent-steps/s", "mean episode reward",
         "expected reward", "verdict"],
        [[result.env, result.api, result.algorithm, str(result.timesteps), f"{result.seconds:.1f}",
          f"{result.agent_steps_per_second:,.0f}",
          "none finished" if math.isnan(mean) else f"{mean:.3f}", cell(result.expected_reward),
          result.verdict]],
    )  # fmt: skip
    if math.isnan(mean):
        print(f"no episode finished in {result.timesteps} agent-steps: train for more --steps")
    if result.shared:
        print(
            f"{', '.join(result.shared)} trained under one shared policy, so the mean mixes "
            f"their episodes; {target.name}'s expected reward is one behaviour's against a "
            "random opponent, so it is no threshold here"
        )
    if args.plot:
        training.plot_curve(result, args.plot)
        print(f"wrote the learning curve to {args.plot}")
    if save is not None:
        saved = ModelInfo(target.name, target.kwargs, result.api, result.behavior,
                          result.algorithm, args.seed, result.timesteps, __version__)  # fmt: skip
        print(f"saved the model to {save_model(result.model, save, saved)}")
    return 0


def _cmd_serve(args: argparse.Namespace, out: Output) -> int:
    # Worker w (--mlagents-port 5005 + w, wrapping mod 65536) seeds its cores seed + w * K + i.
    require("grpc", "mlagents", "zooport serve")
    if not args.timeout > 0:
        raise UsageError(f"--timeout takes seconds > 0, got {args.timeout}")
    from zooport.adapters import mlagents_serve as ms

    port = args.mlagents_port or args.port or ms.EDITOR_PORT
    worker = (port - ms.BASE_PORT) % 65536 if args.mlagents_port else 0
    k = args.workers or 1
    seed = args.seed + worker * k
    target = resolve_target(args.env, parse_kwargs(args.kwargs))
    relays = ms.relay_channels()
    relayed = k > 1 or accepts_keyword(target.factory, "side_channels")
    with contextlib.ExitStack() as stack:
        if args.logFile:
            log = stack.enter_context(open(args.logFile, "a", buffering=1))
            stack.enter_context(contextlib.redirect_stderr(log))
        core = target.make(seed=seed, workers=k if k > 1 else None, side_channels=relays)
        stack.callback(core.close)
        print(f"zooport serve: {target.name} ({k} core{'s' * (k > 1)}, seed {seed}) for "
              f"mlagents-learn on localhost:{port}", file=sys.stderr, flush=True)  # fmt: skip
        try:
            served = ms.serve_mlagents(
                core, port=port, side_channels=relays if relayed else (), timeout=args.timeout,
                wait=args.timeout if args.mlagents_port else None, name=target.name,
            )  # fmt: skip
        except Exception as exc:  # also into -logFile: mlagents-learn hides the stderr
            print(f"zooport: {one_line(exc)}", file=sys.stderr)
            raise
        print(f"zooport serve: the trainer closed after {served} steps", file=sys.stderr)
    return 0


#: The subcommands, in the order ``--help`` lists them: name -> (help, handler, arguments).
_COMMANDS: dict[str, tuple[str, Callable[[argparse.Namespace, Output], int], list[_Argument]]] = {
    "list": ("registered environments and their specs", _cmd_list, []),
    "info": ("behaviour specs, side channels and adapters of ENV", _cmd_info, _ENV),
    "play": ("random mask-respecting actions, or a trained model's, through an adapter",
             _cmd_play, [
        *_route(APIS, "the adapter (default raw; with --model its training route)", 1000,
                "adapter steps", "the behaviour for --api gym/vector"),
        _arg("--model", metavar="PATH",
             help="a model saved by `zooport train --save` acts instead"),
        _arg("--record", metavar="GIF", help="write an animated GIF of the frames"),
    ]),
    "check": ("run every applicable checker on ENV", _cmd_check, [
        *_ENV, _SEED,
        _arg("--only", nargs="+", metavar="NAME", help="checkers to run (default all)"),
        _arg("--steps", type=_positive, default=200, help="check_base_env steps (200)"),
        _arg("--cycles", type=_positive, default=100, help="PettingZoo num_cycles (100)"),
        _arg("--strict", action="store_true", help="a checker that warns fails"),
        _arg("--timeout", type=float, default=600.0, metavar="SECONDS",
             help="a checker still running after this long fails (600; 0 = no limit)"),
        _arg("-v", "--verbose", action="store_true", help="list warnings and details"),
    ]),
    "bench": ("the adapter benchmark table (zooport.cli.bench)", _cmd_bench, [
        _arg("--quick", action="store_true", help="seconds, for CI"),
        _arg("--json", metavar="PATH", help="also write the results as JSON"),
        _arg("--n", type=_positive, nargs="+", help="agent counts"),
        _arg("--envs", nargs="+", metavar="NAME", help="benchmark environments"),
        _arg("--routes", nargs="+", metavar="NAME", help="routes to measure"),
        _arg("--workers", type=_positive, metavar="K",
             help="instead: the CorePool benchmark with K cores"),
    ]),
    "train": ("SB3 PPO (MaskablePPO with masks) on ENV", _cmd_train, [
        *_route(training.TRAIN_APIS, "the route (default vector; with --resume its own)", 100_000,
                "agent-steps", "the behaviour to train (--api vector)"),
        _arg("--plot", metavar="PNG", help="write the learning curve (matplotlib)"),
        _arg("--save", metavar="PATH",
             help="write the trained model (SB3's zip; .zip if no suffix)"),
        _arg("--resume", metavar="PATH", help="train a model saved with --save for --steps more"),
        _arg("--eval-episodes", type=_int_at_least(0, "an int >= 0"), default=0,
             help="deterministic evaluation episodes after training"),
        _arg("--workers", type=_positive, metavar="K",
             help="K copies of the core stepped in parallel (a CorePool)"),
    ]),
    "serve": ("play the Unity side of ML-Agents' protocol: mlagents-learn trains ENV",
              _cmd_serve, [
        *_ENV,
        _arg("--workers", type=_positive, metavar="K", help="K cores (a CorePool)"),
        _arg("--port", type=int, help="the trainer's port (default 5004, Editor mode)"),
        _arg("--seed", type=_seed, default=0, help="seed of worker 0's first core (0)"),
        _arg("--timeout", type=float, default=300.0, metavar="SECONDS",
             help="the trainer may take this long to answer a step (300)"),
        # What mlagents-learn --env=PATH passes to PATH; its --env-args come after them.
        _arg("--mlagents-port", type=int, metavar="PORT", help="set by mlagents-learn"),
        _arg("-logFile", metavar="PATH", help="set by mlagents-learn: messages go there"),
        _arg("-nographics", "-batchmode", action="store_true", help="ignored"),
    ]),
}  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser("zooport", description="One batched multi-agent simulation, every RL library.")
    parser.add_argument("--plain", action="store_true", help="plain-text tables, never rich")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (help_, run, arguments) in _COMMANDS.items():
        command = commands.add_parser(name, help=help_)
        for names, options in arguments:
            command.add_argument(*names, **options)
        command.set_defaults(run=run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        args = build_parser().parse_args(argv)
        args.argv = argv
        return int(args.run(args, Output(args.plain)))
    except KeyboardInterrupt:
        print("zooport: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`zooport list | head -1`)
        with contextlib.suppress(OSError, ValueError):
            # Python flushes stdout at exit; point it at devnull so that is silent too.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, as a shell reports it
    except SystemExit as exc:  # --help, or a benchmark that exits
        return exc.code if isinstance(exc.code, int) else 0
    except Exception as exc:
        if debug:
            raise
        if isinstance(exc, UsageError):
            print(f"zooport: error: {exc}", file=sys.stderr)
            return 2
        print(f"zooport: {one_line(exc)} (run with --debug for the traceback)", file=sys.stderr)
        return 1
