"""A soak run: millions of agent-steps per route, flat memory, and every reward accounted for.

Run ``python benchmarks/soak.py`` (``make soak``): three routes run one after the other in
this process, each for a budget of agent-steps:

- ``vector``: ``BehaviorVectorEnv`` over ``BallBalance`` (1024 agents; episodes end by
  falling and by the step limit, agents restart in the same step), >= 10^7 agent-steps;
- ``parallel``: ``PettingZooParallelEnv`` over ``Tag`` with runners spawning every 2 steps,
  tagged runners leaving for good, taggers deciding every second step, episodes cut at
  ``max_cycles``, >= 2x10^6 agent-steps (agents that acted);
- ``aec``: ``PettingZooAECEnv`` over the same ``Tag``, >= 2x10^6 turns.

For each route it reports the agent-steps (agents that acted; AEC: turns with an action), the
adapter's steps (AEC: turns), the agents' episodes that ended and the adapter's resets, the
process's resident memory (RSS) at the start, at the end and the largest seen (sampled about
200 times), and a per-agent ledger (one entry per episode and agent, settled and cleared at
each episode's end so that it does not grow the memory it measures): what the core paid,
recorded at the core (every reward it reported in its DecisionSteps and TerminalSteps, per
episode and agent id), against what the adapter reported (the vector adapter's per-slot
rewards, the Parallel adapter's reward dicts, the AEC adapter's ``last()`` rewards at each of
the agent's turns). The two must be exactly equal: the same float32 values summed in the
same order. The run exits 1 when a ledger does not balance; memory is reported, not judged.
It is not a CI gate; ``--quick`` (seconds) is what the smoke test runs.

Options:
    --quick: 1/500 of the budgets.
    --scale X: multiply the budgets by X (e.g. 0.1 for a shorter run).
    --json PATH: also write the results (and the machine) as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import machine_info  # noqa: E402

from zooport.adapters import (  # noqa: E402
    BehaviorVectorEnv,
    PettingZooAECEnv,
    PettingZooParallelEnv,
)
from zooport.envs.builtin import BallBalance, Tag  # noqa: E402

#: Agent-steps per route of a full run.
BUDGETS = {"vector": 10_000_000, "parallel": 2_000_000, "aec": 2_000_000}
_PAGE = os.sysconf("SC_PAGE_SIZE")
_SAMPLES = 200


def rss_bytes() -> int:
    """The resident set size of this process now."""
    with open("/proc/self/statm", encoding="ascii") as stream:
        return int(stream.read().split()[1]) * _PAGE


# ---------------------------------------------------------------------- the core's ledger


class Ledger:
    """The rewards of the current episode per agent id, summed in float64 in arrival order."""

    def __init__(self) -> None:
        self.totals: defaultdict[int, float] = defaultdict(float)

    def add(self, ids: Any, rewards: Any) -> None:
        totals = self.totals
        ids, rewards = np.asarray(ids).tolist(), np.asarray(rewards).tolist()
        for agent, reward in zip(ids, rewards, strict=True):
            totals[agent] += reward


@dataclass
class Audit:
    """The two ledgers compared episode by episode (then cleared: memory stays flat)."""

    entries: int = 0
    mismatched: int = 0
    max_difference: float = 0.0

    def settle(self, core: Ledger, adapter: Ledger) -> None:
        """Compares one episode's ledgers and clears them; an agent missing on one side
        counts as 0 there, and agents neither paid nor reported anything are not counted."""
        for agent in set(core.totals) | set(adapter.totals):
            paid, reported = core.totals.get(agent, 0.0), adapter.totals.get(agent, 0.0)
            if paid or reported:
                self.entries += 1
                if paid != reported:
                    self.mismatched += 1
                    self.max_difference = max(self.max_difference, abs(paid - reported))
        core.totals.clear()
        adapter.totals.clear()


def recording(core_class: type) -> type:
    """A subclass of a built-in core that records every reward it reports, at the core.

    After each ``step`` (and ``reset``) it reads its own DecisionSteps and TerminalSteps,
    as any consumer would, and books their rewards to the agent ids: what the core paid.
    The soak settles and clears its ledger before each reset of the adapter.
    """

    class Recording(core_class):  # type: ignore[misc, valid-type]
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.ledger = Ledger()

        def reset(self, seed: int | None = None) -> None:
            super().reset(seed)
            self._book()

        def step(self) -> None:
            super().step()
            self._book()

        def _book(self) -> None:
            for name in self.behavior_specs:
                decision, terminal = self.get_steps(name)
                if len(terminal):
                    self.ledger.add(terminal.agent_id, terminal.reward)
                if len(decision):
                    self.ledger.add(decision.agent_id, decision.reward)

    Recording.__name__ = Recording.__qualname__ = f"Recording{core_class.__name__}"
    return Recording


# ---------------------------------------------------------------------- routes


@dataclass
class SoakResult:
    """One route's soak."""

    route: str
    env: str
    agent_steps: int = 0
    adapter_steps: int = 0
    agent_episodes: int = 0
    resets: int = 0
    seconds: float = 0.0
    rss_start: int = 0
    rss_end: int = 0
    rss_max: int = 0
    audit: Audit = field(default_factory=Audit)
    samples: list[int] = field(default_factory=list)

    @property
    def balanced(self) -> bool:
        return self.audit.mismatched == 0


class Sampler:
    """Samples RSS about every ``budget / _SAMPLES`` agent-steps."""

    def __init__(self, result: SoakResult, budget: int) -> None:
        self.result = result
        self.every = max(1, budget // _SAMPLES)
        self.next = self.every
        result.rss_start = result.rss_max = rss_bytes()

    def tick(self, agent_steps: int) -> None:
        if agent_steps >= self.next:
            self.next += self.every
            rss = rss_bytes()
            self.result.samples.append(rss)
            self.result.rss_max = max(self.result.rss_max, rss)


def soak_vector(budget: int, seed: int = 0) -> SoakResult:
    """BehaviorVectorEnv over BallBalance: ids are fixed, slot i holds the i-th id."""
    n = 1024
    core = recording(BallBalance)(n_agents=n, seed=seed, max_steps=300)
    env = BehaviorVectorEnv(core)
    result = SoakResult("vector (BehaviorVectorEnv)", f"BallBalance, {n} agents")
    rng = np.random.default_rng(seed)
    actions = [rng.uniform(-1, 1, (n, 2)).astype(np.float32) for _ in range(64)]
    reported = np.zeros(n, np.float64)
    env.reset(seed=seed)
    result.resets = 1
    ids = env.agent_ids
    sampler = Sampler(result, budget)
    began = time.perf_counter()
    done = 0
    while done < budget:
        _, reward, terminated, truncated, _ = env.step(actions[result.adapter_steps % 64])
        reported += reward  # float32 widened, summed in the core's order
        result.agent_episodes += int(np.count_nonzero(terminated | truncated))
        result.adapter_steps += 1
        done += n
        sampler.tick(done)
    adapter = Ledger()
    adapter.add(ids, reported)
    return _finish(result, core.ledger, adapter, env, began, done)


def _tag_soak(adapter_class: type, seed: int, budget: int) -> tuple[Any, ...]:
    """``(core, env, result, rng, moves, adapter ledger, sampler)`` of a Tag soak through a
    PettingZoo adapter class: the same core, moves and bookkeeping for both routes."""
    core = _tag(seed)
    env = adapter_class(core, max_cycles=400)
    name = adapter_class.__name__
    route = "parallel" if "Parallel" in name else "aec"
    result = SoakResult(f"{route} ({name})", "Tag, 32 agents + spawning")
    rng = np.random.default_rng(seed)
    moves = rng.integers(0, 5, 4096).tolist()
    return core, env, result, rng, moves, Ledger(), Sampler(result, budget)


def _tag(seed: int) -> Any:
    return recording(Tag)(
        seed=seed,
        n_runners=24,
        n_taggers=8,
        spawn_every=2,
        max_spawned=24,
        restart_tagged=False,  # an agent that leaves never comes back in the episode
        max_steps=0,
        tag_radius=0.05,
    )


def _names_to_ids(env: Any) -> Callable[[str], int]:
    cache: dict[str, int] = {}

    def agent_id(name: str) -> int:
        try:
            return cache[name]
        except KeyError:
            value = cache[name] = env.agent_key(name).agent_id
            return value

    return agent_id


def soak_parallel(budget: int, seed: int = 0) -> SoakResult:
    """PettingZooParallelEnv over Tag with spawning; every step's reward dict is booked."""
    core, env, result, rng, moves, adapter, sampler = _tag_soak(PettingZooParallelEnv, seed, budget)
    began = time.perf_counter()
    done = 0
    while done < budget:
        result.audit.settle(core.ledger, adapter)  # the episode that ended (none at first)
        env.reset(seed=int(rng.integers(2**31)))
        agent_id = _names_to_ids(env)
        result.resets += 1
        while env.agents and done < budget:
            agents = env.agents
            k = result.adapter_steps % 4000
            actions = dict(zip(agents, moves[k : k + len(agents)], strict=False))
            if len(actions) < len(agents):
                actions.update(dict.fromkeys(agents[len(actions) :], 0))
            _, rewards, terminations, truncations, _ = env.step(actions)
            for name, reward in rewards.items():
                adapter.totals[agent_id(name)] += reward
            result.agent_episodes += sum(terminations.values()) + sum(truncations.values())
            result.adapter_steps += 1
            done += len(actions)
            sampler.tick(done)
    # The last episode may be cut by the budget: its booked rewards are the same on both
    # sides (the core books what it reported, the adapter what it handed out, step by step).
    return _finish(result, core.ledger, adapter, env, began, done)


def soak_aec(budget: int, seed: int = 0) -> SoakResult:
    """PettingZooAECEnv over Tag with spawning; each turn's ``last()`` reward is booked."""
    core, env, result, rng, moves, adapter, sampler = _tag_soak(PettingZooAECEnv, seed, budget)
    began = time.perf_counter()
    done = 0
    turn = 0
    while done < budget:
        result.audit.settle(core.ledger, adapter)
        env.reset(seed=int(rng.integers(2**31)))
        agent_id = _names_to_ids(env)
        result.resets += 1
        # Every agent, live or finished, gets its turns until the episode is over; the
        # reward last() gives at a turn is what it earned since its previous turn.
        while env.agents:
            agent = env.agent_selection
            _, reward, terminated, truncated, _ = env.last()
            adapter.totals[agent_id(agent)] += reward
            if terminated or truncated:
                env.step(None)
                result.agent_episodes += 1
            else:
                env.step(moves[turn % 4096])
                done += 1
            turn += 1
            sampler.tick(done)
        result.adapter_steps = turn
    return _finish(result, core.ledger, adapter, env, began, done)


def _finish(
    result: SoakResult, core: Ledger, adapter: Ledger, env: Any, began: float, done: int
) -> SoakResult:
    """Stops the clock, settles the ledgers, samples memory a last time, closes ``env``."""
    result.seconds = time.perf_counter() - began
    result.agent_steps = done
    result.rss_end = rss_bytes()
    result.rss_max = max(result.rss_max, result.rss_end)
    result.audit.settle(core, adapter)
    env.close()
    return result


ROUTES: dict[str, Callable[[int], SoakResult]] = {
    "vector": soak_vector,
    "parallel": soak_parallel,
    "aec": soak_aec,
}


# ---------------------------------------------------------------------- report


def _mib(value: int) -> str:
    return f"{value / 2**20:.1f}"


def markdown(results: list[SoakResult]) -> str:
    """The results as a markdown table."""
    lines = [
        "| route | env | agent-steps | adapter steps | agent episodes ended | resets | seconds "
        "| RSS start MiB | RSS end MiB | RSS max MiB | ledger entries | ledger balances |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        audit = r.audit
        verdict = (
            "exactly ✓"
            if r.balanced
            else (f"✗ {audit.mismatched} differ (largest {audit.max_difference:.3g})")
        )
        lines.append(
            f"| {r.route} | {r.env} | {r.agent_steps:,} | {r.adapter_steps:,} | "
            f"{r.agent_episodes:,} | {r.resets:,} | {r.seconds:.0f} | {_mib(r.rss_start)} | "
            f"{_mib(r.rss_end)} | "
            f"{_mib(r.rss_max)} | {audit.entries:,} | {verdict} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1/500 of the budgets")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the budgets")
    parser.add_argument("--routes", nargs="+", choices=list(ROUTES), default=list(ROUTES))
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if args.scale <= 0:
        parser.error(f"--scale must be positive, got {args.scale}")
    scale = args.scale / (500 if args.quick else 1)
    machine = machine_info()
    print(
        f"# zooport soak on {machine['processor']} ({machine['cpus']} CPUs), Python "
        f"{machine['python']}, numpy {machine['numpy']}",
        file=sys.stderr,
    )
    began = time.perf_counter()
    results = []
    for name in args.routes:
        budget = max(1, int(BUDGETS[name] * scale))
        print(f"  {name}: {budget:,} agent-steps ...", file=sys.stderr, flush=True)
        results.append(ROUTES[name](budget))
    elapsed = time.perf_counter() - began
    end_load = machine_info()["load_average_1min"]
    print(markdown(results))
    start_load = machine["load_average_1min"]
    load = "" if start_load is None else f"; 1-min load {start_load:.1f} -> {end_load:.1f}"
    print(
        f"\n{elapsed:.0f} s in one process on {machine['processor']}, {machine['cpus']} "
        f"CPUs, Python {machine['python']}{load}; peak RSS of the process "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f} MiB"
    )
    if args.json:
        payload = {
            "machine": {**machine, "load_average_1min_end": end_load},
            "elapsed_seconds": elapsed,
            "results": [{**asdict(r), "balanced": r.balanced} for r in results],
        }
        with open(args.json, "w", encoding="utf-8") as stream:
            json.dump(payload, stream, indent=2)
    return 0 if all(r.balanced for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
