"""``python benchmarks/run.py`` (``make bench``): the adapter benchmark, from a checkout.

A thin front: the harness, its routes, its cores and its report ship in the package
(:mod:`zooport.cli.bench`), so ``zooport bench`` runs them after a plain ``pip install``.
This script runs the same ``main`` with the same options (``--help``; method in README.md),
plus ``--profile ROUTE``: cProfile one route at the largest N of the first env instead.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time

from zooport.cli.bench.routes import ROUTE_NAMES, route_builders
from zooport.cli.bench.run import ENVS, main


def profile(argv: list[str]) -> int:
    """Prints where one route's step time goes (cProfile, by own time)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", choices=ROUTE_NAMES, required=True)
    parser.add_argument("--envs", nargs="+", choices=sorted(ENVS), default=list(ENVS))
    parser.add_argument("--n", type=int, nargs="+")
    parser.add_argument("--quick", action="store_true")
    args, _ = parser.parse_known_args(argv)
    env, route = ENVS[args.envs[0]], args.profile
    n = max(args.n or ([16] if args.quick else [1024]))
    if route not in env.routes:
        raise SystemExit(f"route {route!r} does not run on {env.name} (its routes: {env.routes})")
    built = route_builders(env, n, names=(route,))[0][1]()
    for i in range(20):
        built.step(i)
    profiler = cProfile.Profile()
    steps, begin, seconds = 0, time.perf_counter(), 1.0 if args.quick else 3.0
    profiler.enable()
    while time.perf_counter() - begin < seconds:
        built.step(steps)
        steps += 1
    profiler.disable()
    built.close()
    print(f"# {route} on {env.name}, N={n}: {steps} steps profiled")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    argv = sys.argv[1:]
    sys.exit(profile(argv) if any(a.startswith("--profile") for a in argv) else main(argv))
