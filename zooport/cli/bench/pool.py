"""``zooport bench --workers K`` (``make bench-pool``): CorePool's K cores in parallel against
one process, the process vectorisers, ML-Agents-style pipes and PufferLib, on CostlyCore, with
the CorePool issue's targets (``benchmarks/README.md`` says what each column measures)."""

from __future__ import annotations

import functools
import sys
import time

from zooport.cli.bench import harness
from zooport.cli.bench.harness import (
    Budget,
    Measurement,
    marked,
    measure_case,
    rate_text,
    ratio_text,
)
from zooport.cli.bench.routes import EnvCase, costly, route_builders, trivial
from zooport.cli.common import markdown_table


def _mark(value: float | None, target: float) -> str:
    return "-" if value is None else marked(ratio_text(value), target, value >= target)


def _over(rates: dict[str, float | None], a: str, b: str) -> float | None:
    top, bottom = rates[a], rates[b]
    return top / bottom if top and bottom else None


#: The scaling table's route columns, then its ratio columns.
COLUMNS = ("1proc", "CorePool", "CorePool (workers only)", "vec(CorePool)", "AsyncVectorEnv",
           "SubprocVecEnv", "ML-Agents-style")  # fmt: skip
RATIOS = ("pool/1proc", "efficiency", "vec/Async", "vec/Subproc", "pool/ML-Agents",
          "ML-Agents ceiling")  # fmt: skip
SLOW = ("sync, one core 4x slower", "async, one core 4x slower")
OVERHEAD = ("pool K=1 (in this process)", "pool K=1 (in a worker)")
PUFFER = ("1proc", "CorePool", "vec(CorePool)", "PufferLib")
#: The cores of the PufferLib comparison: CPU microseconds per agent and step.
PUFFER_COSTS = (7.0, 1.0)
#: pool/ML-Agents the issue asks for (marked in the table, and said out of reach below it).
ML_AGENTS_TARGET = 2


def report(results: list[Measurement], k: int) -> str:
    """The markdown tables and lines of one run with K cores."""
    by = {(m.env, m.n, m.route): m.agent_steps_per_s for m in results}
    counts = sorted({m.n for m in results if m.env == "scaling"})
    rows, notes = [], []
    for n in counts:
        rates = {c: by.get(("scaling", n, c)) for c in COLUMNS}
        ratio = functools.partial(_over, rates)
        scaling = ratio("CorePool", "1proc")
        # pool/ML-Agents of a pool that took one core's step (1proc's over K), adding nothing.
        pipes = ratio("1proc", "ML-Agents-style")
        ceiling = None if pipes is None else k * pipes
        target = 1.7 if k == 2 else 0.85 * k
        rows.append([
            str(n), *(rate_text(rates[c]) for c in COLUMNS), _mark(scaling, target),
            "-" if scaling is None else f"{scaling / k:.0%}",
            _mark(ratio("vec(CorePool)", "AsyncVectorEnv"), 20),
            _mark(ratio("vec(CorePool)", "SubprocVecEnv"), 20),
            _mark(ratio("CorePool", "ML-Agents-style"), ML_AGENTS_TARGET),
            "-" if ceiling is None else f"{ceiling:.2f}x",
        ])  # fmt: skip
        one, pooled = rates["1proc"], rates["CorePool"]
        if one and pooled and k >= 2:
            # One core's step, and what the pool adds per further core, from this run.
            step = n / one
            added = max((k * n / pooled - step) / (k - 1), 0.0)
            model = ", ".join(
                f"K={c}: {c * step / (step + (c - 1) * added):.1f}x" for c in (4, 8, 16)
            )
            notes.append(
                f"N={n}: a core's step takes {step * 1e6:.0f} us and the pool adds "
                f"{added * 1e6:.0f} us per further core; with a CPU per core, "
                f"K * step / (step + (K - 1) * added) predicts {model}"
            )
            if ceiling is not None and ceiling < ML_AGENTS_TARGET:
                notes.append(
                    f"N={n}: the ML-Agents-style route takes {ceiling * step * 1e6:.0f} us a "
                    f"step and one core {step * 1e6:.0f} us: a pool that added nothing to its "
                    f"cores' steps would be {ceiling:.2f}x as fast, so {ML_AGENTS_TARGET}x is out "
                    "of reach in this run"
                )
    lines = markdown_table(["N per core", *COLUMNS, *RATIOS], rows)
    slow = [m for m in results if m.env == "slow core"]
    if slow:
        rows = []
        for n in sorted({m.n for m in slow}):
            sync, asynchronous = (by.get(("slow core", n, route)) for route in SLOW)
            gain = f"{asynchronous / sync:.2f}x" if sync and asynchronous else "-"
            rows.append([str(n), rate_text(sync), rate_text(asynchronous), gain])
        lines += ["", *markdown_table(["N per core", *SLOW, "async/sync"], rows)]
    puffer_rows = [m for m in results if m.env.startswith("puffer")]
    if puffer_rows:
        rows = []
        for env in dict.fromkeys(m.env for m in puffer_rows):
            for n in sorted({m.n for m in puffer_rows if m.env == env}):
                rates = {c: by.get((env, n, c)) for c in PUFFER}
                pairs = (("CorePool", "1proc"), ("vec(CorePool)", "1proc"),
                         ("vec(CorePool)", "PufferLib"), ("CorePool", "PufferLib"))  # fmt: skip
                cells = [rate_text(rates[c]) for c in PUFFER]
                gains = [_over(rates, a, b) for a, b in pairs]
                cells += ["-" if g is None else f"{g:.2f}x" for g in gains]
                rows.append([env.removeprefix("puffer "), str(n), *cells])
        header = ["core", "N per core", *PUFFER, "pool/1proc", "vec/1proc", "vec(pool)/puffer",
                  "pool/puffer"]  # fmt: skip
        lines += ["", *markdown_table(header, rows)]
        skipped = {m.note for m in puffer_rows if m.route == "PufferLib" and m.note}
        notes += [f"PufferLib route {note}" for note in sorted(skipped)]
    alone = by.get(("overhead", 64, "Trivial"))
    for route in OVERHEAD:
        rate = by.get(("overhead", 64, route))
        if alone and rate:
            cost = (64 / rate - 64 / alone) * 1e6
            notes.append(
                f"{route} costs {cost:.1f} us per step more than the trivial core alone at "
                f"N=64 ({64 / alone * 1e6:.1f} us a step) (target <= 30 us: "
                f"{'✓' if cost <= 30 else '✗'})"
            )
    return "\n".join([*lines, "", *(f"- {note}" for note in notes)])


def main(argv: list[str] | None = None) -> int:
    parser = harness.arguments(__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="K, cores in the pool (2)")
    parser.add_argument("--peer-envs", type=int, default=8, help="one-agent envs of the peers")
    args = parser.parse_args(argv)
    k = args.workers
    if k < 1:
        parser.error(f"--workers takes a positive int, got {k}")
    counts = args.n or ([4] if args.quick else [64, 1024])
    budget = (
        Budget(warmup_steps=3, warmup_seconds=0.05, runs=3, seconds_per_run=0.02, min_steps=2)
        if args.quick
        else Budget(warmup_steps=20, warmup_seconds=1.0, runs=5, seconds_per_run=0.5)
    )
    peers = 2 if args.quick else args.peer_envs
    cases = [(EnvCase("scaling", "Costly", costly, COLUMNS, workers=k, peers=peers), counts)]
    for cost in PUFFER_COSTS:
        make = functools.partial(costly, us_per_agent=cost, terminate=False)
        cases.append((EnvCase(f"puffer {cost:g} us", "Costly", make, PUFFER, workers=k), counts))
    if k >= 2:
        cases.append((EnvCase("slow core", "Costly", costly, SLOW, workers=k), counts[:1]))
    endless = functools.partial(trivial, terminate=False)
    cases.append((EnvCase("overhead", "Trivial", endless, ("Trivial", *OVERHEAD)), [64]))
    machine = harness.machine_info()
    began = time.perf_counter()
    results: list[Measurement] = []
    for case, ns in cases:
        for n in ns:
            results += measure_case(case.name, n, route_builders(case, n), budget, harness.log)
    elapsed = time.perf_counter() - began
    print(report(results, k))
    payload = {"workers": k, "results": [vars(m) for m in results]}
    load = harness.finish(machine, args.json, payload)
    print(f"\nK={k}; agent-steps/s (wall clock), median of {budget.runs} interleaved runs; "
          f"{elapsed:.0f} s on {machine['processor']}, {machine['cpus']} CPUs, "
          f"Python {machine['python']}{load}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
