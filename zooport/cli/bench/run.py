"""``zooport bench`` (``make bench``): the adapters' routes on BallBalance and the trivial cores,
in one process, as agent-steps/s, ratios and costs against targets (``benchmarks/README.md``)."""

from __future__ import annotations

import sys
from collections.abc import Collection, Sequence
from typing import Any

from zooport.cli.bench import harness, routes
from zooport.cli.bench.harness import Budget, Column, Measurement, over, rate_text
from zooport.cli.bench.routes import MULTI_AGENT_ROUTES, ROUTE_NAMES, VECTOR_ROUTES, EnvCase
from zooport.cli.common import markdown_table
from zooport.envs.builtin.ball_balance import BallBalance

ENVS = {
    case.name: case
    for case in (
        EnvCase("BallBalance", "BallBalance", lambda n, s: BallBalance(n_agents=n, seed=s)),
        EnvCase("Trivial", "Trivial", routes.trivial),
        EnvCase("TrivialEndless", "Trivial", routes.endless, MULTI_AGENT_ROUTES, True),
    )
}

#: The vector table's ratios, with their targets at N=64 and N=1024.
RATIOS = (
    Column("vec/raw", over("BehaviorVectorEnv", "raw"), {64: 0.8, 1024: 0.9}),
    Column("sb3/raw", over("SB3VecEnv", "raw"), {64: 0.6}),
    Column("vec/Sync", over("BehaviorVectorEnv", "SyncVectorEnv"), {64: 30.0, 1024: 100.0}),
    Column("sb3/Dummy", over("SB3VecEnv", "DummyVecEnv"), {64: 25.0, 1024: 25.0}),
)
#: The multi-agent table's costs (µs, at most their targets; benchmarks/README.md says what
#: each measures) and ratio, computed only where every agent acts every step (elsewhere the
#: multi-agent routes count only live agents).
DERIVED = (
    Column(
        "Parallel +µs/agent-step",
        lambda r: 1e6 / r["PettingZoo"] - 1e6 / r["raw"],
        {64: 0.4, 1024: 0.4},
        "us",
    ),
    Column("floor µs/agent-step", lambda r: 1e6 / r["PettingZoo floor"], {}, "us"),
    Column("AEC µs/turn", lambda r: 1e6 / r["AEC"], {64: 1.5, 1024: 1.5}, "us"),
    Column("AEC/parallel_to_aec", over("AEC", "parallel_to_aec"), {64: 5.0, 1024: 5.0}),
)
QUICK = Budget(warmup_steps=4, warmup_seconds=0.05, runs=3, seconds_per_run=0.01, min_steps=2)


def _values(
    results: list[Measurement], columns: Sequence[Column], envs: Collection[str] | None = None
) -> list[dict[str, Any]]:
    return [
        {"env": env, "n": n}
        | {c.column: c.of(row) if envs is None or env in envs else None for c in columns}
        for (env, n), row in harness.rates(results).items()
    ]


def _table(
    results: list[Measurement],
    routes: Sequence[str],
    columns: Sequence[Column],
    envs: Collection[str] | None = None,
) -> list[str]:
    table = harness.rates(results)
    values = {(v["env"], v["n"]): v for v in _values(results, columns, envs)}
    shown = [r for r in routes if any(r in row for row in table.values())]
    counted = [r for r in shown if r != "raw"] or shown
    keys = [key for key, row in table.items() if any(r in row for r in counted)]
    kept = [c for c in columns if any(values[key][c.column] is not None for key in keys)]
    rows = [
        [env, str(n), *(rate_text(table[env, n].get(r)) for r in shown)]
        + [c.cell(values[env, n][c.column], n) for c in kept]
        for env, n in keys
    ]
    return markdown_table(["env", "N", *shown, *(c.column for c in kept)], rows) if keys else []


def markdown(
    results: list[Measurement], routes: Sequence[str], every_agent_acts: Collection[str] = ()
) -> str:
    """The vector table, then the multi-agent table (each where it has routes), and notes."""
    measured = {m.route for m in results if m.agent_steps_per_s} - {"raw"}
    vector = [r for r in routes if r in VECTOR_ROUTES]
    multi = [r for r in routes if r in MULTI_AGENT_ROUTES]
    if measured & set(multi) and not measured & set(vector):
        vector = []  # raw has its column in the multi-agent table
    lines, notes = _table(results, vector, RATIOS), []
    if measured & set(multi):
        lines += [""] if lines else []
        lines += _table(results, multi, DERIVED, every_agent_acts)
        notes.append(
            "Multi-agent table: the agents that acted per s (an agent that finished is out "
            "until the episode ends); for AEC and parallel_to_aec, turns per s."
        )
        if every_agent_acts:
            notes[-1] += (
                " The µs columns (lower is better) and AEC/parallel_to_aec are computed on "
                f"{', '.join(every_agent_acts)}, where every agent acts every step."
            )
    if any(m.n in (64, 1024) for m in results):
        notes.append(
            "At N=64 and N=1024 a ratio or cost is followed by its target and ✓ (met) or "
            "✗ (missed)."
        )
    notes += sorted({f"{m.route}: {m.note}" for m in results if m.note})
    return "\n".join(lines + ["", *(f"- {note}" for note in notes)] if notes else lines)


def main(argv: list[str] | None = None) -> int:
    parser = harness.arguments(__doc__.split("\n\n")[0])
    parser.add_argument("--envs", nargs="+", choices=sorted(ENVS), help="default: all")
    parser.add_argument("--routes", nargs="+", choices=ROUTE_NAMES, help="default: all")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = parser.parse_args(argv)
    envs = [ENVS[name] for name in (args.envs or ENVS)]
    names = tuple(args.routes or ROUTE_NAMES)
    counts = args.n or ([1, 16] if args.quick else [1, 64, 1024])
    cases = [
        (env.name, n, routes.route_builders(env, n, names=names)) for env in envs for n in counts
    ]
    endless = [env.name for env in envs if env.every_agent_acts]

    def report(results: list[Measurement]) -> tuple[str, dict[str, Any]]:
        ratios, multi_agent = _values(results, RATIOS), _values(results, DERIVED, endless)
        return markdown(results, names, endless), {"ratios": ratios, "multi_agent": multi_agent}

    budget = QUICK if args.quick else Budget()
    return harness.run(
        args, budget, cases, report, "zooport bench", args.clock, where=" in one process"
    )


if __name__ == "__main__":
    sys.exit(main())
