"""Fixtures for the tests that run a real ``mlagents_envs`` UnityEnvironment (no Unity binary).

These tests run only in the separate virtual environment built by ``make test-mlagents``
(``mlagents-envs==0.28.0``, ``protobuf==3.20.3``, numpy >= 2; pins in ``requirements.txt``
beside this file). Where ``mlagents_envs`` cannot be imported (the main venv), this directory
is not collected: its test modules are not imported and nothing is reported.

Fixtures:
    make_unity: ``make_unity(communicator, side_channels=None)`` builds a real
        ``UnityEnvironment`` over the communicator (see ``scripted_unity.py``) and closes
        every environment it built at the end of the test.
"""

from __future__ import annotations

import importlib.util

import pytest

if importlib.util.find_spec("mlagents_envs") is None:
    # The main venv: this directory belongs to `make test-mlagents`.
    collect_ignore_glob = ["test_*.py", "scripted_unity.py", "legacy_envs.py"]
else:
    from tests.mlagents.scripted_unity import UnityEnvironment, build_unity

    @pytest.fixture
    def make_unity():
        """``make_unity(communicator, side_channels=None)``; closes every env it built."""
        built: list[UnityEnvironment] = []

        def make(communicator, side_channels=None) -> UnityEnvironment:
            env = build_unity(communicator, side_channels)
            built.append(env)
            return env

        yield make
        for env in built:
            if env._loaded:
                env.close()
