"""The installed ``zooport`` console script as a user runs it, next to their own ``my_env.py``.

Every command runs in a subprocess through the console script in this interpreter's ``bin``
(what ``pip install`` puts on the PATH), with the working directory set to a temporary
directory that holds the user's module and no ``PYTHONPATH``: a console script does not
put the working directory on ``sys.path`` the way ``python -m`` does, which is what used to
make ``zooport check my_env:MyEnv`` fail there with "No module named 'my_env'".
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

SCRIPT = shutil.which("zooport", path=str(Path(sys.executable).parent))
pytestmark = pytest.mark.skipif(
    SCRIPT is None, reason="the zooport console script is not installed in this interpreter's bin"
)

#: A user's environment: each agent sees a one-hot cue and is paid for naming it.
MY_ENV = textwrap.dedent(
    """
    import numpy as np

    from zooport.envs import BatchedEnv, StepResult
    from zooport.envs.base_env import (
        ActionSpec, BehaviorSpec, DimensionProperty, ObservationSpec, ObservationType,
    )


    class Guess(BatchedEnv):
        expected_reward = 5.0

        def __init__(self, n_agents=2, **kwargs):
            super().__init__(**kwargs)
            cue = ObservationSpec((3,), (DimensionProperty.NONE,), ObservationType.DEFAULT, "cue")
            spec = BehaviorSpec([cue], ActionSpec.create_discrete((3,)))
            self._add_behavior("Guess", spec, n_agents, max_steps=5)
            self.cue = np.zeros(n_agents, np.int64)

        def _reset_agents(self, behavior, slots):
            self.cue[slots] = self.np_random.integers(0, 3, slots.size)

        def _step(self, actions):
            reward = (actions["Guess"].discrete[:, 0] == self.cue).astype(np.float32)
            self.cue = self.np_random.integers(0, 3, self.cue.size)
            return {"Guess": StepResult(reward, np.zeros(self.cue.size, bool))}

        def _observe(self, behavior, slots):
            return [np.eye(3, dtype=np.float32)[self.cue[slots]]]

        def _render(self):
            return np.full((8, 8, 3), 40 * self.cue[0], np.uint8)


    def make_guess(n_agents=2, seed=None):
        return Guess(n_agents=n_agents, seed=seed)
    """
)


def zooport(*argv: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """``zooport --plain *argv`` through the console script, in ``cwd``, no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [str(SCRIPT), "--plain", *argv], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip


def assert_one_line_error(done: subprocess.CompletedProcess, *fragments: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("zooport: error: ")
    for fragment in fragments:
        assert fragment in done.stderr, (fragment, done.stderr)


@pytest.fixture(scope="module")
def user_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with the user's ``my_env.py``, and a copy in ``envs/`` for file paths."""
    directory = tmp_path_factory.mktemp("user")
    (directory / "my_env.py").write_text(MY_ENV, encoding="utf-8")
    (directory / "envs").mkdir()
    (directory / "envs" / "guess_env.py").write_text(MY_ENV, encoding="utf-8")
    return directory


# ---------------------------------------------------------------------- ENV next to the user


def test_check_finds_the_module_in_the_working_directory(user_dir: Path) -> None:
    done = zooport("check", "my_env:Guess", "--only", "base_env", "parallel_api", "--steps",
                   "20", "--cycles", "5", cwd=user_dir)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "my_env:Guess: PASSED (3 passed, 0 failed, 0 skipped)"


def test_check_info_and_play_take_a_file_path(user_dir: Path) -> None:
    done = zooport("check", "envs/guess_env.py:make_guess", "--only", "base_env", "--steps",
                   "20", cwd=user_dir)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("envs/guess_env.py:make_guess: PASSED (2 passed")
    absolute = str(user_dir / "envs" / "guess_env.py") + ":Guess"
    done = zooport("info", absolute, "--kwargs", '{"n_agents": 3}', cwd=user_dir.parent)
    assert done.returncode == 0, done.stderr
    assert "class guess_env.Guess; expected reward 5" in done.stdout
    assert "Guess      3       action" in done.stdout
    done = zooport("play", "envs/guess_env.py:Guess", "--api", "parallel", "--steps", "10",
                   "--no-progress", cwd=user_dir)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("envs/guess_env.py:Guess via parallel: 10 steps, 20 agent-steps")


def test_factory_spec_mistakes_are_one_line_errors(user_dir: Path) -> None:
    assert_one_line_error(
        zooport("check", "nothere.py:Guess", cwd=user_dir),
        "expected an existing Python file in 'nothere.py:Guess', got 'nothere.py'",
    )
    assert_one_line_error(
        zooport("info", "my_env.py:Nope", cwd=user_dir), "module 'my_env' has no attribute 'Nope'"
    )
    assert_one_line_error(
        zooport("info", "no_such_module_xyz:make", cwd=user_dir),
        "cannot import 'no_such_module_xyz'", f"looked in the working directory {str(user_dir)!r}",
    )  # fmt: skip
    # A file whose name is a module zooport has already imported cannot be told apart.
    (user_dir / "json.py").write_text("def make():\n    return None\n", encoding="utf-8")
    try:
        assert_one_line_error(
            zooport("info", "json.py:make", cwd=user_dir),
            "a module named 'json' is already imported from",
            "rename json.py",
        )
    finally:
        (user_dir / "json.py").unlink()


# ---------------------------------------------------------------------- train --save, play --model


@pytest.fixture(scope="module")
def saved(user_dir: Path) -> Path:
    """``zooport train my_env:Guess --save model`` (``.zip`` added), 64 agent-steps."""
    done = zooport("train", "my_env:Guess", "--kwargs", '{"n_agents": 2}', "--steps", "64",
                   "--save", "model", "--no-progress", cwd=user_dir)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "saved the model to model.zip"
    return user_dir / "model.zip"


def test_train_save_writes_sb3_zip_with_what_rebuilds_the_env(saved: Path) -> None:
    from stable_baselines3 import PPO

    with zipfile.ZipFile(saved) as archive:
        info = json.loads(archive.read("zooport.json"))
    assert info == {
        "format": 1, "env": "my_env:Guess", "kwargs": {"n_agents": 2}, "api": "vector",
        "behavior": "Guess", "algorithm": "PPO", "seed": 0, "timesteps": 64,
        "zooport_version": info["zooport_version"],
    }  # fmt: skip
    model = PPO.load(saved, device="cpu")  # SB3 reads zooport's zip unchanged
    assert model.num_timesteps == 64 and model.observation_space.shape == (3,)


def test_play_model_runs_and_records_the_saved_policy(saved: Path, user_dir: Path) -> None:
    from PIL import Image

    done = zooport("play", "my_env:Guess", "--model", "model.zip", "--steps", "10", "--record",
                   "policy.gif", "--no-progress", cwd=user_dir)  # fmt: skip
    assert done.returncode == 0, done.stderr
    first, second, third = done.stdout.splitlines()
    # The route and the two agents it trained with (--kwargs) come from the saved model.
    assert first.startswith(
        "my_env:Guess via vector (PPO from model.zip, deterministic): 10 steps, 20 agent-steps"
    )
    assert second.startswith("episodes finished: 4; mean episode reward ")  # 5-step episodes
    assert third == "wrote 11 frames to policy.gif"
    with Image.open(user_dir / "policy.gif") as image:
        assert image.size == (8, 8)


def test_train_resume_continues_the_saved_model(saved: Path, user_dir: Path) -> None:
    done = zooport("train", "my_env:Guess", "--resume", "model.zip", "--steps", "32", "--save",
                   "more.zip", "--no-progress", cwd=user_dir)  # fmt: skip
    assert done.returncode == 0, done.stderr
    # SB3 counts on from the saved 64 agent-steps: 2 agents (the saved kwargs), 8 per rollout.
    assert done.stdout.splitlines()[1].split()[:4] == ["my_env:Guess", "vector", "PPO", "96"]
    with zipfile.ZipFile(user_dir / "more.zip") as archive:
        info = json.loads(archive.read("zooport.json"))
    assert (info["timesteps"], info["kwargs"]) == (96, {"n_agents": 2})


def test_saved_model_mistakes_are_one_line_errors(saved: Path, user_dir: Path) -> None:
    assert_one_line_error(
        zooport("train", "my_env:Guess", "--resume", "gone.zip", cwd=user_dir),
        "--resume: expected a model saved by `zooport train --save`, got 'gone.zip'",
    )
    assert_one_line_error(
        zooport("train", "my_env:Guess", "--save", "model.pt", cwd=user_dir),
        "--save: expected a file name ending in one of ['.zip'], got 'model.pt'",
    )
    assert_one_line_error(
        zooport("play", "my_env:Guess", "--model", "model.zip", "--api", "raw", cwd=user_dir),
        "--model acts through --api gym, vector, parallel or aec, got --api raw",
    )
    # Another environment: its observations are not the model's.
    assert_one_line_error(
        zooport("play", "Basic", "--model", "model.zip", "--steps", "2", cwd=user_dir),
        "--model: expected Basic through --api vector to give the model's observations",
    )
    assert_one_line_error(
        zooport("train", "Basic", "--resume", "model.zip", "--steps", "8", cwd=user_dir),
        "--resume",
        "Observation spaces do not match",
    )
    (user_dir / "plain.zip").write_bytes(saved.read_bytes())
    with zipfile.ZipFile(user_dir / "plain.zip") as source:
        members = {n: source.read(n) for n in source.namelist() if n != "zooport.json"}
    with zipfile.ZipFile(user_dir / "plain.zip", "w") as target:
        for name, data in members.items():
            target.writestr(name, data)
    assert_one_line_error(
        zooport("play", "my_env:Guess", "--model", "plain.zip", cwd=user_dir),
        "has no zooport.json: expected a model saved by `zooport train --save`",
    )
