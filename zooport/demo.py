"""``python -m zooport.demo`` (``make demo``): the demo, which lives in :mod:`zooport.cli.demo`.

The command-line programs live in :mod:`zooport.cli`; this module keeps the demo's short
name working and re-exports its public names.
"""

from __future__ import annotations

from zooport.cli.demo import (
    RUNS,
    DemoResult,
    DemoRun,
    camera_cnn,
    format_results,
    main,
    random_table,
    record_policy,
    run_demo,
)

__all__ = [
    "RUNS",
    "DemoRun",
    "DemoResult",
    "camera_cnn",
    "format_results",
    "main",
    "random_table",
    "record_policy",
    "run_demo",
]

if __name__ == "__main__":
    raise SystemExit(main())
