"""The benchmark harness (``zooport.cli.bench``): it runs every route and reports its measures.

A smoke test runs ``benchmarks/run.py --quick`` (the checkout's front to it) once, for N=2,
on the two trivial cores (which between them run every route), and checks the two markdown
tables and the JSON; the report's arithmetic (ratios, per-agent-step costs, target marks) is
checked on hand-made measurements. No timing is asserted: benchmarks never gate CI on
absolute times.
"""

from __future__ import annotations

import json
import subprocess
import sys
from types import ModuleType
from typing import Any

import pytest

from tests.support.paths import BENCHMARKS, load_script


def _load_run() -> ModuleType:
    # The harness ships in the package; benchmarks/run.py is a thin front to its main.
    from zooport.cli.bench import run

    return run


@pytest.fixture(scope="module")
def run() -> ModuleType:
    return _load_run()


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, dict[str, Any]]:
    """(stdout, stderr, JSON) of one quick run over every route."""
    out = tmp_path_factory.mktemp("bench") / "results.json"
    command = [
        sys.executable, str(BENCHMARKS / "run.py"), "--quick", "--n", "2",
        "--envs", "Trivial", "TrivialEndless", "--clock", "cpu", "--json", str(out),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr, json.loads(out.read_text(encoding="utf-8"))


def _table(text: str, route: str) -> list[list[str]]:
    """The rows (cells) of the markdown table whose first route after raw is ``route``."""
    lines = text.splitlines()
    header = f"| env | N | raw | {route} |"
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_quick_run_measures_every_route(run: ModuleType, quick: tuple[str, str, Any]) -> None:
    stdout, stderr, payload = quick
    assert "Warning" not in stderr
    measured = {(m["env"], m["route"]): m for m in payload["results"]}
    expected = {("Trivial", r) for r in run.ROUTE_NAMES} | {
        ("TrivialEndless", r) for r in run.MULTI_AGENT_ROUTES
    }
    assert set(measured) == expected
    for m in measured.values():
        assert m["n"] == 2
        assert m["note"] == ""
        assert len(m["runs"]) == 3  # the quick budget's interleaved runs
        assert m["agent_steps_per_s"] == sorted(m["runs"])[1]  # their median
        assert m["agent_steps_per_s"] > 0
    assert payload["machine"]["cpus"] >= 1 and payload["clock"] == "cpu"


def test_quick_run_prints_both_tables(run: ModuleType, quick: tuple[str, str, Any]) -> None:
    stdout, _, payload = quick
    vector = _table(stdout, "BehaviorVectorEnv")
    multi = _table(stdout, "PettingZoo")
    assert vector[0] == ["env", "N", *run.VECTOR_ROUTES, *(c for c, *_ in run.RATIOS)]
    assert multi[0] == ["env", "N", *run.MULTI_AGENT_ROUTES, *(d.column for d in run.DERIVED)]
    assert [row[:2] for row in vector[2:]] == [["Trivial", "2"]]
    assert [row[:2] for row in multi[2:]] == [["Trivial", "2"], ["TrivialEndless", "2"]]
    k = len(run.DERIVED)
    assert all(cell != "-" for cell in vector[2] + multi[2][:-k] + multi[3])
    # The per-agent-step costs exist only where every agent acts; no targets at N=2.
    assert multi[2][-k:] == ["-"] * k
    # The JSON and the table agree with the measured rates.
    costs = dict(zip((d.column for d in run.DERIVED), multi[3][-k:], strict=True))
    endless = {
        m["route"]: m["agent_steps_per_s"]
        for m in payload["results"]
        if m["env"] == "TrivialEndless"
    }
    row = next(r for r in payload["multi_agent"] if r["env"] == "TrivialEndless")
    assert row["AEC µs/turn"] == pytest.approx(1e6 / endless["AEC"])
    assert costs["AEC µs/turn"] == f"{1e6 / endless['AEC']:.2f}"
    assert row["AEC/parallel_to_aec"] == pytest.approx(endless["AEC"] / endless["parallel_to_aec"])
    floor = 1e6 / endless["PettingZoo floor"]
    assert row["floor µs/agent-step"] == pytest.approx(floor)
    assert costs["floor µs/agent-step"] == f"{floor:.2f}"


def _m(run: ModuleType, env: str, n: int, rates: dict[str, float]) -> list[Any]:
    return [run.Measurement(env, n, route, rate) for route, rate in rates.items()]


def test_report_arithmetic_and_target_marks(run: ModuleType) -> None:
    rates = {
        "raw": 1e6,
        "BehaviorVectorEnv": 8.5e5,
        "SyncVectorEnv": 1e4,
        "PettingZoo": 5e5,
        "AEC": 1e6,
        "parallel_to_aec": 1e5,
        "PettingZoo floor": 2.5e6,
    }
    results = _m(run, "Endless", 64, rates) + _m(run, "Dies", 64, rates)
    text = run.markdown(results, run.ROUTE_NAMES, every_agent_acts=["Endless"])
    vector = _table(text, "BehaviorVectorEnv")
    multi = _table(text, "PettingZoo")
    # vec/raw 0.85 >= 0.8, vec/Sync 85 >= 30; no SB3VecEnv measured: no column, no ratios.
    assert vector[0] == [
        "env", "N", "raw", "BehaviorVectorEnv", "SyncVectorEnv", "vec/raw", "vec/Sync"
    ]  # fmt: skip
    assert vector[2] == ["Endless", "64", "1.0M", "850k", "10k", "0.85x (0.8 ✓)", "85x (30 ✓)"]
    endless = dict(zip(multi[0], multi[2], strict=True))
    # (1/5e5 - 1/1e6) s = 1 µs added per agent-step > 0.4; 1 µs per turn <= 1.5; 10x >= 5.
    assert endless["Parallel +µs/agent-step"] == "1.00 (0.4 ✗)"
    assert endless["AEC µs/turn"] == "1.00 (1.5 ✓)"
    assert endless["AEC/parallel_to_aec"] == "10x (5 ✓)"
    # The floor (1e6 / 2.5e6 = 0.4 µs) has no target: printed without a mark.
    assert endless["floor µs/agent-step"] == "0.40"
    dies = dict(zip(multi[0], multi[3], strict=True))
    assert [dies[d.column] for d in run.DERIVED] == ["-"] * len(run.DERIVED)
    # Away from N=64/1024 the values print without a target.
    other = run.markdown(_m(run, "Endless", 16, rates), run.ROUTE_NAMES, ["Endless"])
    header, _, cells = _table(other, "PettingZoo")
    assert dict(zip(header, cells, strict=True))["AEC µs/turn"] == "1.00"


def test_trivial_core_terminates_unless_told_not_to() -> None:
    # The front the scripts in benchmarks/ import (``from trivial_core import TrivialCore``).
    TrivialCore = load_script(BENCHMARKS / "trivial_core.py", "trivial_core").TrivialCore
    import numpy as np

    from zooport.envs.base_env import ActionTuple

    ended = {}
    for terminate in (True, False):
        core = TrivialCore(n_agents=16, seed=0, terminate=terminate)
        core.reset()
        assert core.get_steps("Trivial")[0].obs[0].shape == (16, 4)
        ended[terminate] = 0
        for _ in range(100):
            core.set_actions("Trivial", ActionTuple(np.zeros((16, 2), np.float32)))
            core.step()
            ended[terminate] += len(core.get_steps("Trivial")[1])
        core.close()
    # 1600 agent-steps at probability 0.01: 16 expected; P(none) = 0.99**1600 ~ 1e-7.
    assert ended[True] > 0
    assert ended[False] == 0


def test_costly_core_burns_its_cpu_time_per_agent() -> None:
    import time

    from zooport.cli.bench.trivial_core import CostlyCore

    core = CostlyCore(n_agents=4, us_per_agent=10.0, seed=0)
    core.reset()
    assert core.get_steps("Costly")[0].obs[0].shape == (4, 8)
    began = time.thread_time()
    core.step()
    assert time.thread_time() - began >= 40e-6  # 4 agents x 10 us
    core.close()


def test_pool_report_arithmetic_ceiling_and_target_marks() -> None:
    from zooport.cli.bench.harness import Measurement
    from zooport.cli.bench.pool import report

    def scaling(n: int, rates: dict[str, float]) -> list[Measurement]:
        return [Measurement("scaling", n, route, rate) for route, rate in rates.items()]

    results = scaling(64, {
        "1proc": 1e5, "CorePool": 1.8e5, "CorePool (workers only)": 1.5e5, "vec(CorePool)": 1.6e5,
        "AsyncVectorEnv": 8e3, "SubprocVecEnv": 4e3, "ML-Agents-style": 9.5e4,
    }) + scaling(1024, {"1proc": 1e5, "CorePool": 1.9e5, "ML-Agents-style": 1.6e5})  # fmt: skip
    results += [
        Measurement("slow core", 64, "sync, one core 4x slower", 6e4),
        Measurement("slow core", 64, "async, one core 4x slower", 1.2e5),
        Measurement("overhead", 64, "Trivial", 64 / 20e-6),  # 20 us a step
        Measurement("overhead", 64, "pool K=1 (in this process)", 64 / 23e-6),
        Measurement("overhead", 64, "pool K=1 (in a worker)", 64 / 60e-6),
    ]
    text = report(results, 2)
    lines = text.splitlines()
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = {
        cells[0]: dict(zip(header, cells, strict=True))
        for cells in ([c.strip() for c in line.strip("|").split("|")] for line in lines[2:4])
    }
    # 1.8e5 / 1e5 = 1.80 >= 1.7, efficiency 90%; 1.6e5 / 8e3 = 20 >= 20, / 4e3 = 40;
    # 1.8e5 / 9.5e4 = 1.89 < 2; the ceiling 2 x 1e5 / 9.5e4 = 2.11.
    assert [rows["64"][c] for c in ("pool/1proc", "efficiency", "vec/Async", "vec/Subproc",
                                    "pool/ML-Agents", "ML-Agents ceiling")] == [
        "1.80x (1.7 ✓)", "90%", "20x (20 ✓)", "40x (20 ✓)", "1.89x (2 ✗)", "2.11x"
    ]  # fmt: skip
    # N=1024: 1.9e5 / 1.6e5 = 1.19; ceiling 2 x 1e5 / 1.6e5 = 1.25; routes not measured: "-".
    assert rows["1024"]["pool/ML-Agents"] == "1.19x (2 ✗)"
    assert rows["1024"]["ML-Agents ceiling"] == "1.25x"
    assert rows["1024"]["vec/Async"] == "-" and rows["1024"]["AsyncVectorEnv"] == "-"
    # A step of one core: 64 / 1e5 s = 640 us; the pool's 128 / 1.8e5 s = 711 us, so 71 us
    # added per further core; K=4: 4 x 640 / (640 + 3 x 71.1) = 3.0.
    assert "N=64: a core's step takes 640 us and the pool adds 71 us per further core" in text
    assert "K=4: 3.0x" in text
    # The out-of-reach line only where the ceiling is below 2: 2048 / 1.6e5 s = 12800 us a step.
    assert "N=64: the ML-Agents-style route" not in text
    assert (
        "N=1024: the ML-Agents-style route takes 12800 us a step and one core 10240 us: a pool "
        "that added nothing to its cores' steps would be 1.25x as fast, so 2x is out of reach"
    ) in text
    assert "| 64 | 60k | 120k | 2.00x |" in text
    assert (
        "pool K=1 (in this process) costs 3.0 us per step" in text
        and "(target <= 30 us: ✓)" in text
    )
    assert (
        "pool K=1 (in a worker) costs 40.0 us per step" in text and "(target <= 30 us: ✗)" in text
    )


def test_pool_report_puffer_table_and_its_skip_line() -> None:
    from zooport.cli.bench.harness import Measurement
    from zooport.cli.bench.pool import report

    rates = {"1proc": 1e5, "CorePool": 1.8e5, "vec(CorePool)": 1.5e5, "PufferLib": 2e5}
    results = [Measurement("puffer 1 us", 64, route, rate) for route, rate in rates.items()]
    results.append(Measurement("puffer 7 us", 64, "1proc", 1e5))
    results.append(Measurement("puffer 7 us", 64, "PufferLib", None, note="skipped: no puffer"))
    text = report(results, 2)
    # 1.8e5 / 1e5, 1.5e5 / 1e5, 1.5e5 / 2e5, 1.8e5 / 2e5; a route not measured: "-".
    assert "| 1 us | 64 | 100k | 180k | 150k | 200k | 1.80x | 1.50x | 0.75x | 0.90x |" in text
    assert "| 7 us | 64 | 100k | - | - | - | - | - | - | - |" in text
    assert "- PufferLib route skipped: no puffer" in text
