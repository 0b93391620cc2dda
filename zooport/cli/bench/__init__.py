"""zooport.cli.bench: the adapter benchmark that ``zooport bench`` runs (``make bench``).

Modules:
    harness: timing in the style of PufferLib and EnvPool (pre-sampled actions, warm-up,
        interleaved runs, medians).
    routes: every route a benchmark compares (the raw core, zooport's adapters, the peers).
    trivial_core: a core whose step costs almost nothing, so the plumbing is measured.
    run: the cases, the report (markdown tables, JSON) and ``main``.

It ships in the package so ``zooport bench`` works after a plain ``pip install``;
``benchmarks/run.py`` in a checkout is a thin front to :func:`zooport.cli.bench.run.main`.
"""
