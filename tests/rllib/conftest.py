"""Tests that run only in the RLlib venv (``.venv-rllib``, see requirements.txt here).

Run them as ``.venv-rllib/bin/pytest tests/rllib --confcutdir=tests/rllib``. In any venv
without Ray they are not collected, so the main suite never imports them.
"""

from __future__ import annotations

import importlib.util
import os

# Ray sends anonymous usage statistics over the network unless told not to; tests never
# touch the network.
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

if importlib.util.find_spec("ray") is None:
    collect_ignore_glob = ["test_*.py"]
