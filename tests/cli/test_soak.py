"""The soak benchmark (``benchmarks/soak.py``): its quick mode runs, its ledgers can fail.

No timing or memory figure is asserted (the soak is not a CI gate); what is asserted is that
the quick run covers every route and balances, that the core-side ledger books exactly what
the core reported, and that an adapter losing one reward makes the ledger fail.
"""

from __future__ import annotations

import json
import subprocess
import sys
from types import ModuleType

import numpy as np
import pytest

from zooport.adapters import PettingZooParallelEnv
from zooport.envs.base_env import ActionTuple

from tests.support.branches import BEHAVIOR, Branches
from tests.support.paths import BENCHMARKS, load_script


@pytest.fixture(scope="module")
def soak() -> ModuleType:
    return load_script(BENCHMARKS / "soak.py", "zooport_benchmarks_soak", keep=True)


def test_quick_soak_runs_every_route_and_every_ledger_balances(tmp_path):
    out = tmp_path / "soak.json"
    command = [sys.executable, str(BENCHMARKS / "soak.py"), "--quick", "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| vector (BehaviorVectorEnv) |" in done.stdout and "exactly ✓" in done.stdout
    results = {r["route"].split()[0]: r for r in json.loads(out.read_text())["results"]}
    assert set(results) == {"vector", "parallel", "aec"}
    for route, budget in (("vector", 10_000_000), ("parallel", 2_000_000), ("aec", 2_000_000)):
        r = results[route]
        assert r["balanced"] and r["audit"]["mismatched"] == 0
        assert r["agent_steps"] >= budget // 500
        assert r["audit"]["entries"] > 0 and r["agent_episodes"] > 0
        assert 0 < r["rss_start"] <= r["rss_max"] and r["rss_end"] <= r["rss_max"]
    # Tag spawns runners: more agents were paid than the 32 at reset.
    assert results["parallel"]["audit"]["entries"] > 32


def test_the_core_ledger_books_what_the_core_reports(soak):
    core = soak.recording(Branches)(n_agents=2, episode_length=2, seed=0)
    core.reset()
    for a0, a1 in [(1, 2), (2, 3), (0, 1)]:
        core.set_actions(BEHAVIOR, ActionTuple(discrete=np.array([[a0, a1], [0, 0]], np.int32)))
        core.step()
    # Agent 0 earns a0 + 10 * a1 each step: 21, then 32 (its episode ends; restarted with the
    # same id, its decision that step pays 0), then 10. Agent 1 earns nothing.
    assert dict(core.ledger.totals) == {0: 63.0, 1: 0.0}


def test_a_route_that_loses_one_reward_does_not_balance(soak, monkeypatch):
    class Lossy(PettingZooParallelEnv):
        dropped = False

        def step(self, actions):
            result = super().step(actions)
            rewards = result[1]
            if not Lossy.dropped and any(rewards.values()):
                agent = next(a for a, r in rewards.items() if r)
                rewards[agent] = 0.0  # the kind of loss the ledger exists to catch
                Lossy.dropped = True
            return result

    monkeypatch.setattr(soak, "PettingZooParallelEnv", Lossy)
    result = soak.soak_parallel(2_000)
    assert Lossy.dropped and not result.balanced and result.audit.mismatched == 1
    assert "✗ 1 differ" in soak.markdown([result])
