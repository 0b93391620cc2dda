"""Tests of BenchMARL's stack (BenchMARL 1.5.2, torchrl 0.11) on zooport's envs.

They run in their own venv (``.venv-benchmarl``, built by ``make test-benchmarl``; pins and
why in ``requirements.txt`` beside this file): BenchMARL cannot be installed beside the main
venv's torchrl 0.14. In a venv without BenchMARL nothing here is collected.
"""

from __future__ import annotations

import importlib.util

collect_ignore = [] if importlib.util.find_spec("benchmarl") else ["test_benchmarl.py"]
