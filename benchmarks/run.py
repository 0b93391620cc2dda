"""Benchmarks zooport's vector adapters against the raw core and the peer routes.

Run ``python benchmarks/run.py`` (``make bench``): for N in {1, 64, 1024} agents on
BallBalance and on a trivial core, every route of :mod:`routes` is measured in this one
process (pre-sampled actions, warm-up, interleaved runs, medians) and reported as
agent-steps/s and as ratios, as a markdown table on stdout and as JSON with ``--json``.

Options:
    --quick: seconds, for CI (N in {1, 64}, short runs); numbers are only indicative.
    --json PATH: also write every measurement (runs, steps, machine) to PATH.
    --n N [N ...], --envs NAME [NAME ...], --routes NAME [NAME ...]: a subset.
    --clock cpu: time with this process's CPU time instead of wall time (steadier when
        other jobs load the machine; every route runs in this one process).
    --profile ROUTE: cProfile one route (at the largest N of the first env) and print where
        its step time goes, instead of the table.

Targets (issue 4; benchmarks, never CI gates): BehaviorVectorEnv >= 0.8x raw at N=64 and
>= 0.9x at N=1024, >= 30x / 100x SyncVectorEnv at N=64 / 1024; SB3VecEnv >= 0.6x raw at N=64
and >= 25x DummyVecEnv.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import Budget, Measurement, machine_info, measure_case  # noqa: E402
from routes import ROUTE_NAMES, EnvCase, route_builders  # noqa: E402
from trivial_core import TrivialCore  # noqa: E402

from zooport.envs.builtin.ball_balance import BallBalance  # noqa: E402

ENVS = {
    "BallBalance": EnvCase(
        "BallBalance", "BallBalance", lambda n, seed: BallBalance(n_agents=n, seed=seed)
    ),
    "Trivial": EnvCase("Trivial", "Trivial", lambda n, seed: TrivialCore(n_agents=n, seed=seed)),
}

#: (column, numerator route, denominator route, target at N=64, target at N=1024).
RATIOS = (
    ("vec/raw", "BehaviorVectorEnv", "raw", 0.8, 0.9),
    ("sb3/raw", "SB3VecEnv", "raw", 0.6, None),
    ("vec/Sync", "BehaviorVectorEnv", "SyncVectorEnv", 30.0, 100.0),
    ("sb3/Dummy", "SB3VecEnv", "DummyVecEnv", 25.0, 25.0),
)


def _rate(value: float | None) -> str:
    if value is None:
        return "-"
    for unit, scale in (("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.{1 if value < 10 * scale else 0}f}{unit}"
    return f"{value:.0f}"


def ratios(results: list[Measurement]) -> dict[tuple[str, int], dict[str, float | None]]:
    """Per (env, N): each ratio of :data:`RATIOS`, None where a route is missing."""
    table: dict[tuple[str, int], dict[str, float | None]] = {}
    by_key = {(m.env, m.n, m.route): m.agent_steps_per_s for m in results}
    for env, n in dict.fromkeys((m.env, m.n) for m in results):
        row: dict[str, float | None] = {}
        for column, top, bottom, _, _ in RATIOS:
            a, b = by_key.get((env, n, top)), by_key.get((env, n, bottom))
            row[column] = a / b if a and b else None
        table[(env, n)] = row
    return table


def markdown(results: list[Measurement], routes: tuple[str, ...]) -> str:
    """The report: agent-steps/s per route, then the ratios (target and whether it is met)."""
    shown = [r for r in routes if any(m.route == r and m.agent_steps_per_s for m in results)]
    header = ["env", "N", *shown, *(c for c, *_ in RATIOS)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    by_key = {(m.env, m.n, m.route): m for m in results}
    for (env, n), row in ratios(results).items():
        cells = [env, str(n)]
        cells += [_rate(getattr(by_key.get((env, n, r)), "agent_steps_per_s", None)) for r in shown]
        for column, _, _, target64, target1024 in RATIOS:
            value = row[column]
            target = {64: target64, 1024: target1024}.get(n)
            text = "-" if value is None else f"{value:.2f}x" if value < 10 else f"{value:.0f}x"
            if value is not None and target is not None:
                text += f" ({target:g} {'✓' if value >= target else '✗'})"
            cells.append(text)
        lines.append("| " + " | ".join(cells) + " |")
    skipped = sorted({f"{m.route}: {m.note}" for m in results if m.note})
    if skipped:
        lines.append("")
        lines += [f"- {s}" for s in skipped]
    return "\n".join(lines)


def profile(env: EnvCase, n: int, route: str, seconds: float) -> None:
    """Prints where one route's step time goes (cProfile, by own time)."""
    import cProfile
    import pstats

    built = dict(route_builders(env, n, names=(route,)))[route]()
    for i in range(20):
        built.step(i)
    profiler = cProfile.Profile()
    steps, begin = 0, time.perf_counter()
    profiler.enable()
    while time.perf_counter() - begin < seconds:
        built.step(steps)
        steps += 1
    profiler.disable()
    built.close()
    print(f"# {route} on {env.name}, N={n}: {steps} steps profiled")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="seconds, for CI")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--n", type=int, nargs="+", help="agent counts (default 1 64 1024)")
    parser.add_argument("--envs", nargs="+", choices=sorted(ENVS), help="default: all")
    parser.add_argument("--routes", nargs="+", choices=ROUTE_NAMES, help="default: all")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--profile", choices=ROUTE_NAMES, help="profile one route instead")
    args = parser.parse_args(argv)

    counts = args.n or ([1, 16] if args.quick else [1, 64, 1024])
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    envs = [ENVS[name] for name in (args.envs or ENVS)]
    routes = tuple(args.routes or ROUTE_NAMES)
    if args.profile:
        profile(envs[0], max(counts), args.profile, 1.0 if args.quick else 3.0)
        return 0
    budget = (
        Budget(warmup_steps=4, warmup_seconds=0.05, runs=3, seconds_per_run=0.01, min_steps=2)
        if args.quick
        else Budget()
    )
    machine = machine_info()
    print(f"# zooport vector benchmark on {machine['processor']} ({machine['cpus']} CPUs), "
          f"Python {machine['python']}, numpy {machine['numpy']}, "
          f"gymnasium {machine['gymnasium']}", file=sys.stderr)
    began = time.perf_counter()
    results: list[Measurement] = []
    for env in envs:
        for n in counts:
            results += measure_case(
                env.name, n, route_builders(env, n, names=routes), budget,
                log=lambda line: print(line, file=sys.stderr, flush=True), clock=clock,
            )  # fmt: skip
    elapsed = time.perf_counter() - began
    print(markdown(results, routes))
    print(f"\nagent-steps/s ({args.clock} clock), median of {budget.runs} interleaved runs; "
          f"{elapsed:.0f} s in one process on {machine['processor']}, "
          f"{machine['cpus']} CPUs, Python {machine['python']}.")
    if args.json:
        payload: dict[str, Any] = {
            "machine": machine,
            "clock": args.clock,
            "budget": dataclasses.asdict(budget),
            "elapsed_seconds": elapsed,
            "results": [vars(m) for m in results],
            "ratios": [
                {"env": env, "n": n, **row} for (env, n), row in ratios(results).items()
            ],
        }
        with open(args.json, "w", encoding="utf-8") as stream:
            json.dump(payload, stream, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
