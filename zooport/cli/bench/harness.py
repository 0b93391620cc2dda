"""Timing in the style of PufferLib and EnvPool (pre-sampled actions, a warm-up that calibrates
the run length, interleaved runs so that load hits every route alike, medians) for both reports."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import importlib.metadata
import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = [
    "Route", "RouteUnavailable", "Measurement", "Budget", "Column", "measure_case", "over", "rates",
    "machine_info", "rate_text", "log", "arguments", "run",
]  # fmt: skip


class RouteUnavailable(Exception):
    """A route that cannot be measured in this installation; the message says why."""


@dataclass
class Route:
    """A prepared way to step ``n`` agents: ``step(i)`` steps with the i-th action batch."""

    n: int
    step: Callable[[int], Any]
    close: Callable[[], Any] = lambda: None
    counts_agents: bool = False  # step(i) returns how many agents it stepped


@dataclass
class Measurement:
    """One route at one agent count."""

    env: str
    n: int
    route: str
    agent_steps_per_s: float | None
    runs: list[float] = field(default_factory=list)
    steps_per_run: int = 0
    note: str = ""


@dataclass(frozen=True)
class Budget:
    """How long to measure: a warm-up calibrates each of ``runs`` runs to ``seconds_per_run``."""

    warmup_steps: int = 20
    warmup_seconds: float = 0.5
    runs: int = 5
    seconds_per_run: float = 0.25
    min_steps: int = 3
    max_steps: int = 20_000


def _time(route: Route, steps: int, start: int, clock: Callable[[], float]) -> tuple[float, int]:
    step, agents = route.step, 0
    begin = clock()
    if route.counts_agents:
        for i in range(start, start + steps):
            agents += step(i)
    else:
        for i in range(start, start + steps):
            step(i)
    return clock() - begin, agents if route.counts_agents else route.n * steps


def measure_case(
    env: str,
    n: int,
    builders: Sequence[tuple[str, Callable[[], Route]]],
    budget: Budget,
    log: Callable[[str], Any] = print,
    clock: Callable[[], float] = time.perf_counter,
) -> list[Measurement]:
    """Measures every route of one (env, n) case; one that cannot run here carries why."""
    routes: list[tuple[Route, Measurement]] = []
    results: list[Measurement] = []
    for name, build in builders:
        try:
            route = build()
        except (RouteUnavailable, ImportError) as exc:
            results.append(Measurement(env, n, name, None, note=f"skipped: {exc}"))
            log(f"  {env} N={n} {name}: skipped ({exc})")
            continue
        # Warm-up (capped in time: a peer route at N=1024 takes ~0.1 s a step), which also
        # calibrates how many steps make a run of the wanted duration.
        _time(route, 1, 0, clock)
        spent, done = 0.0, 0
        while done < budget.warmup_steps and spent < budget.warmup_seconds:
            spent += _time(route, 1, done, clock)[0]
            done += 1
        wanted = math.ceil(budget.seconds_per_run / max(spent / done, 1e-9))
        steps = min(max(wanted, budget.min_steps), budget.max_steps)
        results.append(Measurement(env, n, name, None, steps_per_run=steps))
        routes.append((route, results[-1]))
    try:
        for run in range(budget.runs):
            for route, m in routes:
                gc.collect()
                elapsed, agent_steps = _time(route, m.steps_per_run, run * m.steps_per_run, clock)
                m.runs.append(agent_steps / elapsed)
    finally:
        for route, _ in routes:
            route.close()
    for _, m in routes:
        m.agent_steps_per_s = statistics.median(m.runs)
        log(f"  {env} N={n} {m.route}: {m.agent_steps_per_s:,.0f} agent-steps/s")
    return results


def rates(results: Sequence[Measurement]) -> dict[tuple[str, int], dict[str, float]]:
    """Per (env, N) in measuring order: ``{route: agent-steps/s}`` of the routes measured."""
    table: dict[tuple[str, int], dict[str, float]] = {}
    for m in results:
        row = table.setdefault((m.env, m.n), {})
        if m.agent_steps_per_s:
            row[m.route] = m.agent_steps_per_s
    return table


def over(a: str, b: str, scale: float = 1.0) -> Callable[[dict[str, float]], float]:
    """``scale`` times route ``a``'s rate over route ``b``'s, for a :class:`Column`."""
    return lambda rates: scale * rates[a] / rates[b]


class Column(NamedTuple):
    """A column computed from one row's ``{route: agent-steps/s}``, with its target at the N that
    ``targets`` names (None: every N); ``unit``: "x", ".2fx", "%" or "us" (a cost, at most)."""

    column: str
    value: Callable[[dict[str, float]], float]
    targets: dict[int | None, float | None] = {}
    unit: str = "x"

    def of(self, row: dict[str, float]) -> float | None:
        try:
            return self.value(row)
        except KeyError:
            return None

    def cell(self, value: float | None, n: int) -> str:
        """``value`` as text, with its target at ``n`` and whether it is met."""
        if value is None:
            return "-"
        ratio = "{:.2f}x" if value < 10 else "{:.0f}x"
        units = {"x": ratio, ".2fx": "{:.2f}x", "us": "{:.2f}", "%": "{:.0%}"}
        text = units[self.unit].format(value)
        target = self.targets.get(n, self.targets.get(None))
        if target is None:
            return text
        met = value <= target if self.unit == "us" else value >= target
        return f"{text} ({target:g} {'✓' if met else '✗'})"


def log(line: str) -> None:
    """A progress line on stderr (the tables go to stdout), read when called (capture swaps it)."""
    print(line, file=sys.stderr, flush=True)


def arguments(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="seconds, for CI")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--n", type=int, nargs="+", help="agent counts")
    return parser


def run(
    args: argparse.Namespace,
    budget: Budget,
    cases: Sequence[tuple[str, int, Sequence[tuple[str, Callable[[], Route]]]]],
    report: Callable[[list[Measurement]], tuple[str, dict[str, Any]]],
    announce: str = "",
    clock: str = "wall",
    prefix: str = "",
    where: str = "",
) -> int:
    """Measures each ``(env, n, builders)`` case (first logging what that takes if ``announce``
    names the command), prints ``report``'s text and the closing line, and writes the run, with
    ``report``'s values first, as JSON to ``--json`` (if given)."""
    machine, began = machine_info(), time.perf_counter()
    if announce:
        total = sum(len(builders) for *_, builders in cases)
        seconds = total * (budget.warmup_seconds + budget.runs * budget.seconds_per_run)
        log(
            f"{announce}: {total} case{'' if total == 1 else 's'} (env x agents x route), at "
            f"least {seconds:.0f} s of measuring plus building each case's cores; the table "
            f"comes at the end. On {machine['processor']} ({machine['cpus']} CPUs), Python "
            f"{machine['python']}, numpy {machine['numpy']}, gymnasium {machine['gymnasium']}"
        )
    timer = time.process_time if clock == "cpu" else time.perf_counter
    results = [
        m for env, n, builders in cases for m in measure_case(env, n, builders, budget, log, timer)
    ]
    text, payload = report(results)
    print(text)
    start = machine["load_average_1min"]
    end = machine["load_average_1min_end"] = machine_info()["load_average_1min"]
    elapsed = time.perf_counter() - began
    if args.json:
        payload.update(clock=clock, budget=dataclasses.asdict(budget), elapsed_seconds=elapsed)
        payload["results"] = [vars(m) for m in results]
        with open(args.json, "w", encoding="utf-8") as stream:
            json.dump({"machine": machine, **payload}, stream, indent=2)
    load = "" if start is None or end is None else f"; 1-min load {start:.1f} -> {end:.1f}"
    print(
        f"\n{prefix}agent-steps/s ({clock} clock), median of {budget.runs} interleaved runs; "
        f"{elapsed:.0f} s{where} on {machine['processor']}, {machine['cpus']} CPUs, "
        f"Python {machine['python']}{load}"
    )
    return 0


def machine_info() -> dict[str, Any]:
    """What the numbers were measured on."""
    processor = platform.processor() or platform.machine()
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo", encoding="utf-8") as stream:
            names = [line.split(":", 1)[1] for line in stream if line.startswith("model name")]
        processor = names[0].strip() if names else processor
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": processor,
        "cpus": os.cpu_count(),
    }
    for package in ("numpy", "gymnasium", "stable_baselines3"):
        info[package] = None
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            info[package] = importlib.metadata.version(package)
    info["load_average_1min"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return info


def rate_text(value: float | None) -> str:
    """Agent-steps/s for a table: ``1.2M``, ``850k``, ``-`` when not measured."""
    if not value:
        return "-"
    for unit, scale in (("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.{1 if value < 10 * scale else 0}f}{unit}"
    return f"{value:.0f}"
