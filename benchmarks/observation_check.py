"""What checking observations against their spec costs per step, next to a whole adapter step.

``python benchmarks/observation_check.py [--quick]`` times, on ``TrivialEndless`` batches
(``TrivialCore(terminate=False)``: one (4,) observation, every agent deciding every step) for
N in {64, 1024}:

- ``check``: ``ObservationLayout.checked`` on the DecisionSteps and on the (empty)
  TerminalSteps of one step, which is what every adapter adds per step and behaviour;
- ``vector step`` and ``parallel step``: one whole ``BehaviorVectorEnv`` / ``PettingZooParallelEnv``
  step (core included) on the same core, for scale.

It prints microseconds per call (best of 5 timeit repeats, so that other processes' load
shows as little as possible) and the check as a share of each step. No number here gates CI.
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from trivial_core import TrivialCore  # noqa: E402

from zooport.adapters import BehaviorVectorEnv, PettingZooParallelEnv  # noqa: E402
from zooport.adapters.spaces import ObservationLayout  # noqa: E402


def _best(statement, number: int) -> float:
    """Microseconds per call, best of 5 repeats."""
    return min(timeit.repeat(statement, number=number, repeat=5)) / number * 1e6


def measure(n: int, number: int) -> dict[str, float]:
    core = TrivialCore(n_agents=n, seed=0, terminate=False)
    core.reset()
    decision, terminal = core.get_steps("Trivial")
    spec = core.behavior_specs["Trivial"]
    layout = ObservationLayout(spec.observation_specs, name="Trivial")

    def check() -> None:
        layout.checked(decision)
        layout.checked(terminal, terminal=True)

    vector = BehaviorVectorEnv(TrivialCore(n_agents=n, seed=0, terminate=False))
    vector.reset(seed=0)
    action = np.zeros((n, 2), np.float32)
    parallel = PettingZooParallelEnv(TrivialCore(n_agents=n, seed=0, terminate=False))
    parallel.reset(seed=0)
    actions = dict.fromkeys(parallel.agents, np.zeros(2, np.float32))
    steps = max(number // 50, 20)
    return {
        "check": _best(check, number),
        "vector step": _best(lambda: vector.step(action), steps),
        "parallel step": _best(lambda: parallel.step(actions), steps),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few calls (a smoke test)")
    args = parser.parse_args(argv)
    number = 200 if args.quick else 20_000
    print(
        "| N | check µs/step | vector step µs | check/vector | parallel step µs | check/parallel |"
    )
    print("|---|---|---|---|---|---|")
    for n in (64, 1024):
        t = measure(n, number)
        print(
            f"| {n} | {t['check']:.2f} | {t['vector step']:.1f} | "
            f"{t['check'] / t['vector step']:.1%} | {t['parallel step']:.1f} | "
            f"{t['check'] / t['parallel step']:.1%} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
