"""Tests of the trainers zooport's users bring: rl-zoo3, skrl, tianshou and AgileRL.

They run in their own venv (``.venv-consumers``, built by ``make test-consumers``; pins and
why in ``requirements.txt`` beside this file). In a venv without a trainer its test module is
not collected, so the main suite never imports them. Budgets are short: each test checks
what the trainer received and produced (shapes, rewards against zooport's own, a saved model
reloaded and evaluated), and the recipes in ``docs/recipes/`` state what a full run reaches.
"""

from __future__ import annotations

import importlib.util

import pytest

#: Each test module and the package it needs.
NEEDS = {
    "test_rl_zoo3.py": "rl_zoo3",
    "test_skrl.py": "skrl",
    "test_tianshou.py": "tianshou",
    "test_agilerl.py": "agilerl",
}

collect_ignore = [name for name, pkg in NEEDS.items() if importlib.util.find_spec(pkg) is None]


@pytest.fixture(autouse=True)
def one_torch_thread():
    """One torch thread per process while a test here runs.

    Two cores are shared by the trainer, its env workers and whatever else runs: more
    threads only oversubscribe them for networks this small.
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
