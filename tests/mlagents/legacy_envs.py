"""Envs built from the real classes of older mlagents_envs releases, for the compat tests.

``make test-mlagents`` downloads the wheels of mlagents-envs 0.16.1, 0.19.0, 0.22.0, 0.23.0
and 0.24.0 (no dependencies) into ``<venv>/legacy-wheels`` (or ``$ZOOPORT_LEGACY_WHEELS``).
:func:`base_env_module` loads a release's ``mlagents_envs/base_env.py`` under a private
module name; :func:`make_legacy_env` writes a small env with its ``BehaviorSpec``,
``DecisionSteps``, ``TerminalSteps`` and ``BaseEnv`` ABC (so the env has exactly the abstract
methods of that release), validating actions with that release's own code.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

__all__ = ["WHEELS", "VERSIONS", "NAME", "base_env_module", "make_legacy_env"]

WHEELS = Path(os.environ.get("ZOOPORT_LEGACY_WHEELS", Path(sys.prefix) / "legacy-wheels"))
VERSIONS = ["0.16.1", "0.19.0", "0.22.0", "0.23.0", "0.24.0"]
NAME = "Legacy"


def base_env_module(version: str):
    """That release's ``mlagents_envs/base_env.py``, loaded from its wheel (skips if absent)."""
    wheel = WHEELS / f"mlagents_envs-{version}-py3-none-any.whl"
    if not wheel.is_file():
        pytest.skip(f"{wheel} is missing; `make test-mlagents` downloads it")
    module_name = f"_legacy_mlagents_envs_{version.replace('.', '_')}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    with zipfile.ZipFile(wheel) as archive:
        source = archive.read("mlagents_envs/base_env.py").decode()
    spec = importlib.util.spec_from_loader(module_name, loader=None)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    exec(compile(source, str(wheel / "mlagents_envs/base_env.py"), "exec"), module.__dict__)
    return module


def make_legacy_env(mod, discrete: bool):
    """An env in the API of base_env module ``mod``: two agents (ids 3, 4) counting steps."""

    if hasattr(mod, "ObservationSpec"):  # 0.24
        dims = (mod.DimensionProperty.NONE,)
        obs_specs = [mod.ObservationSpec((3,), dims, mod.ObservationType.DEFAULT)]  # no name
        spec_args = (obs_specs,)
    else:
        spec_args = ([(3,)],)
    if hasattr(mod, "ActionSpec"):  # 0.22+
        action_spec = mod.ActionSpec(0, (3, 2)) if discrete else mod.ActionSpec(2, ())
        spec = mod.BehaviorSpec(*spec_args, action_spec)
    else:
        action_type = mod.ActionType.DISCRETE if discrete else mod.ActionType.CONTINUOUS
        spec = mod.BehaviorSpec(*spec_args, action_type, (3, 2) if discrete else 2)
    terminal_field = (
        "interrupted"
        if "interrupted" in mod.TerminalSteps.__init__.__code__.co_varnames
        else "max_step"
    )

    class LegacyEnv(mod.BaseEnv):
        def __init__(self):
            self.ids = np.array([4, 3], np.int32)  # rows in descending id order
            self.received = []

        if "get_behavior_names" in mod.BaseEnv.__abstractmethods__:  # 0.16

            def get_behavior_names(self):
                return [NAME]

            def get_behavior_spec(self, behavior_name):
                return spec

        else:

            @property
            def behavior_specs(self):
                return mod.BehaviorMapping({NAME: spec})

        def reset(self):
            self.t = np.zeros(2, np.int64)
            self.last = np.zeros(2, np.float32)
            self._publish(np.zeros(0, np.intp), None)

        def step(self):
            self.t += 1
            reward = (0.5 * self.t + self.last).astype(np.float32)
            done = np.flatnonzero(self.t >= 3)
            terminal = None
            if done.size:
                terminal = (self._obs(done), reward[done], self.ids[done] == 3)
                self.t[done] = 0
            decision_reward = reward.copy()
            decision_reward[done] = 0
            self._publish(done, terminal, decision_reward)

        def _obs(self, rows):
            return [np.stack([self.t[rows], self.ids[rows], self.last[rows]], 1).astype(np.float32)]

        def _publish(self, done, terminal, reward=None):
            rows = np.arange(2)
            reward = np.zeros(2, np.float32) if reward is None else reward
            mask = (
                [np.zeros((2, 3), bool), np.array([[False, True], [False, False]])]
                if discrete
                else None
            )
            self.decision = mod.DecisionSteps(self._obs(rows), reward, self.ids, mask)
            if terminal is None:
                self.terminal = mod.TerminalSteps.empty(spec)
            else:
                obs, t_reward, flag = terminal
                self.terminal = mod.TerminalSteps(
                    obs=obs, reward=t_reward, agent_id=self.ids[done], **{terminal_field: flag}
                )

        def get_steps(self, behavior_name):
            return self.decision, self.terminal

        def set_actions(self, behavior_name, action):
            self.received.append(action)
            if hasattr(spec, "action_spec"):
                # That release's own validation (shape and dtype checks).
                action = spec.action_spec._validate_action(action, 2, behavior_name)
                part = (
                    action
                    if isinstance(action, np.ndarray)
                    else (action.discrete if discrete else action.continuous)
                )
            else:  # 0.16-0.21's UnityEnvironment.set_actions checks
                assert action.shape == (2, spec.action_size) and action.dtype == (
                    np.int32 if discrete else np.float32
                )
                part = action
            self.last = part.sum(axis=1).astype(np.float32)

        def set_action_for_agent(self, behavior_name, agent_id, action):
            raise AssertionError("zooport builds set_action_for_agent on set_actions")

        def close(self):
            pass

    return LegacyEnv()
