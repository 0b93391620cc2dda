"""Tests that run only in mlagents-learn's venv (``.venv-mlagents-learn``, see
requirements.txt here): ``make test-mlagents-learn`` runs them as
``.venv-mlagents-learn/bin/pytest tests/mlagents_learn --confcutdir=tests/mlagents_learn`` with
``ZOOPORT_SERVE_PYTHON`` naming the main venv's python, which runs ``zooport serve``. In any venv
without mlagents they are not collected, so the main suite never imports them.
"""

from __future__ import annotations

import importlib.util

if importlib.util.find_spec("mlagents") is None:
    collect_ignore_glob = ["test_*.py", "runs.py"]
