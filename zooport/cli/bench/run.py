"""Benchmarks zooport's adapters against the raw core and the peer routes.

Run ``zooport bench`` (or, from a checkout, ``python benchmarks/run.py``, ``make bench``):
for N in {1, 64, 1024} agents on BallBalance, on a trivial core and on a trivial core whose
episodes never end, every route of :mod:`~zooport.cli.bench.routes` that runs on the env is
measured in this one process (pre-sampled actions, warm-up, interleaved runs, medians) and
reported as agent-steps/s, ratios and per-agent-step costs, as two markdown tables on stdout
(vector routes; multi-agent routes) and as JSON with ``--json``.

Options:
    --quick: seconds, for CI (N in {1, 16}, short runs); numbers are only indicative.
    --json PATH: also write every measurement (runs, steps, machine) to PATH.
    --n N [N ...], --envs NAME [NAME ...], --routes NAME [NAME ...]: a subset.
    --clock cpu: time with this process's CPU time instead of wall time (steadier when
        other jobs load the machine; every route runs in this one process).
    --profile ROUTE: cProfile one route (at the largest N of the first env) and print where
        its step time goes, instead of the table; e.g. ``--envs TrivialEndless --n 64
        --profile AEC``.

Targets (benchmarks, never CI gates). Issue 4: BehaviorVectorEnv >= 0.8x raw at N=64 and
>= 0.9x at N=1024, >= 30x / 100x SyncVectorEnv at N=64 / 1024; SB3VecEnv >= 0.6x raw at N=64
and >= 25x DummyVecEnv. Issue 5, on TrivialEndless (every agent acts every step) at N=64 and
N=1024: the Parallel adapter adds <= 0.4 us per agent-step to the raw core; the AEC adapter
takes <= 1.5 us per turn (core step included) and is >= 5x faster per turn than PettingZoo's
``parallel_to_aec`` over the Parallel adapter.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from zooport.cli.bench.harness import Budget, Measurement, machine_info, measure_case
from zooport.cli.bench.routes import (
    MULTI_AGENT_ROUTES,
    ROUTE_NAMES,
    VECTOR_ROUTES,
    EnvCase,
    route_builders,
)
from zooport.cli.bench.trivial_core import TrivialCore
from zooport.envs.builtin.ball_balance import BallBalance

ENVS = {
    "BallBalance": EnvCase(
        "BallBalance", "BallBalance", lambda n, seed: BallBalance(n_agents=n, seed=seed)
    ),
    "Trivial": EnvCase("Trivial", "Trivial", lambda n, seed: TrivialCore(n_agents=n, seed=seed)),
    # No episode ends: every agent acts every step, so the multi-agent routes count all N
    # agents as raw does, and their per-agent-step costs are comparable to raw's.
    "TrivialEndless": EnvCase(
        "TrivialEndless",
        "Trivial",
        lambda n, seed: TrivialCore(n_agents=n, seed=seed, terminate=False),
        routes=MULTI_AGENT_ROUTES,
        every_agent_acts=True,
    ),
}

#: Vector table: (column, numerator route, denominator route, target at N=64, at N=1024);
#: a ratio meets its target when it is at least the target.
RATIOS = (
    ("vec/raw", "BehaviorVectorEnv", "raw", 0.8, 0.9),
    ("sb3/raw", "SB3VecEnv", "raw", 0.6, None),
    ("vec/Sync", "BehaviorVectorEnv", "SyncVectorEnv", 30.0, 100.0),
    ("sb3/Dummy", "SB3VecEnv", "DummyVecEnv", 25.0, 25.0),
)


@dataclass(frozen=True)
class Derived:
    """A multi-agent column computed from the rates of one (env, N) row.

    Attributes:
        column: the column name.
        value: ``value(rates)`` from ``{route: agent-steps/s}``; a KeyError (a route
            missing) gives no value.
        target: the target (issue 5), marked at the N of :data:`TARGET_NS`; None for a
            column that gives context (the floor) and has no target.
        at_most: the target is an upper bound (a cost) rather than a lower one (a ratio).
        unit: how the value prints: ``"us"`` or ``"x"``.
    """

    column: str
    value: Callable[[dict[str, float]], float]
    target: float | None
    at_most: bool
    unit: str

    def meets(self, value: float) -> bool:
        """Whether ``value`` meets the target (a column without one always does)."""
        if self.target is None:
            return True
        return value <= self.target if self.at_most else value >= self.target


#: Multi-agent table, computed on the envs where every agent acts every step
#: (``EnvCase.every_agent_acts``), with targets at N=64 and N=1024.
DERIVED = (
    # What the Parallel adapter adds to the core, per agent-step.
    Derived(
        "Parallel +µs/agent-step",
        lambda r: (1 / r["PettingZoo"] - 1 / r["raw"]) * 1e6,
        0.4,
        at_most=True,
        unit="us",
    ),
    # What PettingZoo's Parallel API costs any adapter per agent-step in Python (no core, no
    # bookkeeping; see routes.py): the floor under "Parallel +µs/agent-step" on this machine.
    Derived(
        "floor µs/agent-step",
        lambda r: 1e6 / r["PettingZoo floor"],
        None,
        at_most=True,
        unit="us",
    ),
    # A whole AEC turn (last() + step(), the core step included, spread over the cycle).
    Derived("AEC µs/turn", lambda r: 1e6 / r["AEC"], 1.5, at_most=True, unit="us"),
    Derived(
        "AEC/parallel_to_aec",
        lambda r: r["AEC"] / r["parallel_to_aec"],
        5.0,
        at_most=False,
        unit="x",
    ),
)

#: Agent counts at which the targets apply (as in issues 4 and 5: N=64 and N=1024).
TARGET_NS = (64, 1024)


def _rate(value: float | None) -> str:
    if value is None:
        return "-"
    for unit, scale in (("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.{1 if value < 10 * scale else 0}f}{unit}"
    return f"{value:.0f}"


def _ratio(value: float) -> str:
    return f"{value:.2f}x" if value < 10 else f"{value:.0f}x"


def _marked(text: str, target: float, met: bool) -> str:
    return f"{text} ({target:g} {'✓' if met else '✗'})"


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


def derived(
    results: list[Measurement], every_agent_acts: Collection[str]
) -> dict[tuple[str, int], dict[str, float | None]]:
    """Per (env, N): each column of :data:`DERIVED` on the envs in ``every_agent_acts``.

    Other envs get None: there the multi-agent routes count only live agents while raw
    counts all N, so a per-agent-step difference would mean nothing.
    """
    rates: dict[tuple[str, int], dict[str, float]] = {}
    for m in results:
        if m.agent_steps_per_s:
            rates.setdefault((m.env, m.n), {})[m.route] = m.agent_steps_per_s
    table: dict[tuple[str, int], dict[str, float | None]] = {}
    for env, n in dict.fromkeys((m.env, m.n) for m in results):
        row: dict[str, float | None] = {}
        for d in DERIVED:
            try:
                row[d.column] = d.value(rates[(env, n)]) if env in every_agent_acts else None
            except KeyError:
                row[d.column] = None
        table[(env, n)] = row
    return table


def _table(
    results: list[Measurement],
    routes: Sequence[str],
    extra: dict[tuple[str, int], dict[str, str]],
    extra_columns: Sequence[str],
) -> list[str]:
    """The markdown lines of a table of ``routes`` (those measured), then ``extra_columns``.

    Its rows are the (env, N) cases that measured one of its routes besides raw (or raw,
    when raw is all it has).
    """
    by_key = {(m.env, m.n, m.route): m.agent_steps_per_s for m in results}
    shown = [r for r in routes if any(m.route == r and m.agent_steps_per_s for m in results)]
    if not shown:
        return []
    counted = [r for r in shown if r != "raw"] or shown
    rows = [
        (env, n)
        for env, n in dict.fromkeys((m.env, m.n) for m in results)
        if any(by_key.get((env, n, r)) for r in counted)
    ]
    # A ratio or cost whose routes were not measured (not asked for, not installed) is left out.
    columns = [c for c in extra_columns if any(extra[key][c] != "-" for key in rows)]
    header = ["env", "N", *shown, *columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for env, n in rows:
        cells = [env, str(n), *(_rate(by_key.get((env, n, r))) for r in shown)]
        cells += [extra[(env, n)][c] for c in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def markdown(
    results: list[Measurement],
    routes: Sequence[str],
    every_agent_acts: Collection[str] = (),
) -> str:
    """The report: the vector table, then the multi-agent table (each where it has routes).

    Each gives agent-steps/s per route, then its ratios or per-agent-step costs, each marked
    at N=64 and N=1024 with its target and whether it is met. ``every_agent_acts`` names the
    envs the multi-agent costs are computed on. A run of raw alone gives the vector table.
    """
    cells: dict[tuple[str, int], dict[str, str]] = {}
    for key, row in ratios(results).items():
        for column, _, _, target64, target1024 in RATIOS:
            value = row[column]
            target = {64: target64, 1024: target1024}.get(key[1])
            if value is None:
                text = "-"
            elif target is None:
                text = _ratio(value)
            else:
                text = _marked(_ratio(value), target, value >= target)
            cells.setdefault(key, {})[column] = text
    for key, row in derived(results, every_agent_acts).items():
        for d in DERIVED:
            value = row[d.column]
            if value is None:
                text = "-"
            else:
                text = f"{value:.2f}" if d.unit == "us" else _ratio(value)
                if key[1] in TARGET_NS and d.target is not None:
                    text = _marked(text, d.target, d.meets(value))
            cells.setdefault(key, {})[d.column] = text
    measured = {m.route for m in results if m.agent_steps_per_s} - {"raw"}
    vector = [r for r in routes if r in VECTOR_ROUTES]
    multi = [r for r in routes if r in MULTI_AGENT_ROUTES]
    has_multi = bool(measured & set(multi))
    if has_multi and not measured & set(vector):
        vector = []  # raw has its column in the multi-agent table
    lines = _table(results, vector, cells, [c for c, *_ in RATIOS])
    if has_multi:
        lines += [""] if lines else []
        lines += _table(results, multi, cells, [d.column for d in DERIVED])
    notes = []
    if has_multi:
        notes.append(
            "Multi-agent table: the agents that acted per s (an agent that finished is out "
            "until the episode ends); for AEC and parallel_to_aec, turns per s."
            + (
                " The µs columns (lower is better) and AEC/parallel_to_aec are computed on "
                f"{', '.join(every_agent_acts)}, where every agent acts every step."
                if every_agent_acts
                else ""
            )
        )
    if any(m.n in TARGET_NS for m in results):
        notes.append(
            "At N=64 and N=1024 a ratio or cost is followed by its target and ✓ (met) or "
            "✗ (missed)."
        )
    notes += sorted({f"{m.route}: {m.note}" for m in results if m.note})
    if notes:
        lines.append("")
        lines += [f"- {note}" for note in notes]
    return "\n".join(lines)


def profile(env: EnvCase, n: int, route: str, seconds: float) -> None:
    """Prints where one route's step time goes (cProfile, by own time)."""
    import cProfile
    import pstats

    builders = dict(route_builders(env, n, names=(route,)))
    if route not in builders:
        raise SystemExit(f"route {route!r} does not run on {env.name} (its routes: {env.routes})")
    built = builders[route]()
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
    print(
        f"# zooport benchmark on {machine['processor']} ({machine['cpus']} CPUs), "
        f"Python {machine['python']}, numpy {machine['numpy']}, "
        f"gymnasium {machine['gymnasium']}",
        file=sys.stderr,
    )
    began = time.perf_counter()
    results: list[Measurement] = []
    for env in envs:
        for n in counts:
            results += measure_case(
                env.name, n, route_builders(env, n, names=routes), budget,
                log=lambda line: print(line, file=sys.stderr, flush=True), clock=clock,
            )  # fmt: skip
    elapsed = time.perf_counter() - began
    endless = [env.name for env in envs if env.every_agent_acts]
    print(markdown(results, routes, endless))
    start_load, end_load = machine["load_average_1min"], machine_info()["load_average_1min"]
    machine["load_average_1min_end"] = end_load
    load = (
        "."
        if start_load is None or end_load is None
        else f"; 1-min load average {start_load:.1f} at the start, {end_load:.1f} at the end."
    )
    print(
        f"\nagent-steps/s ({args.clock} clock), median of {budget.runs} interleaved runs; "
        f"{elapsed:.0f} s in one process on {machine['processor']}, "
        f"{machine['cpus']} CPUs, Python {machine['python']}{load}"
    )
    if args.json:
        payload: dict[str, Any] = {
            "machine": machine,
            "clock": args.clock,
            "budget": dataclasses.asdict(budget),
            "elapsed_seconds": elapsed,
            "results": [vars(m) for m in results],
            "ratios": [{"env": env, "n": n, **row} for (env, n), row in ratios(results).items()],
            "multi_agent": [
                {"env": env, "n": n, **row} for (env, n), row in derived(results, endless).items()
            ],
        }
        with open(args.json, "w", encoding="utf-8") as stream:
            json.dump(payload, stream, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
