"""rl-zoo3 trains, replays and records zooport's registered envs from its command line.

Each command runs as a user types it (``python -m rl_zoo3.train ...`` in a subprocess, from a
scratch directory), with the hyperparameter file of docs/recipes/rl_zoo3_ppo.yml. Basic
trains on that file's whole budget (20,000 steps, seconds) and ``rl_zoo3.enjoy`` checks the
expected reward; the other routes use short budgets.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

CONF = Path(__file__).resolve().parents[2] / "docs" / "recipes" / "rl_zoo3_ppo.yml"
TIMEOUT = 600


def _run(tmp: Path, *argv: str) -> str:
    # One torch thread: on two shared cores SB3's small networks train 5x slower with more.
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, *argv], cwd=tmp, env=env, capture_output=True, text=True,
        timeout=TIMEOUT,
    )  # fmt: skip
    assert done.returncode == 0, (
        f"{argv}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n" + (done.stderr[-3000:])
    )
    return done.stdout


def _train(tmp: Path, env: str, *extra: str) -> Path:
    _run(
        tmp, "-m", "rl_zoo3.train", "--algo", "ppo", "--env", env, "--gym-packages", "zooport",
        "-conf", str(CONF), "--seed", "0", "--log-folder", "logs", "--eval-freq", "-1",
        "--verbose", "0", *extra,
    )  # fmt: skip
    runs = sorted((tmp / "logs" / "ppo").glob(env.replace("/", "-") + "_*"))
    assert len(runs) == 1, runs
    return runs[0]


@pytest.fixture(scope="module")
def basic_run(tmp_path_factory) -> tuple[Path, Path]:
    """Basic trained on the file's budget with 2 envs instead of its 4 (``-params``)."""
    tmp = tmp_path_factory.mktemp("rl_zoo3")
    return tmp, _train(tmp, "zooport/Basic-v0", "-params", "n_envs:2")


def test_train_reads_the_hyperparameter_file_and_the_params_override(basic_run):
    _, run = basic_run
    assert (run / "zooport-Basic-v0.zip").is_file()
    saved = yaml.load((run / "zooport-Basic-v0" / "config.yml").read_text(), yaml.UnsafeLoader)
    saved = dict(saved)
    expected = yaml.safe_load(CONF.read_text())["zooport/Basic-v0"]
    assert saved["n_envs"] == 2  # -params n_envs:2
    assert {k: saved[k] for k in expected if k != "n_envs"} == {
        k: v for k, v in expected.items() if k != "n_envs"
    }


def test_enjoy_replays_the_saved_model_at_the_expected_reward(basic_run):
    tmp, _ = basic_run
    out = _run(
        tmp, "-m", "rl_zoo3.enjoy", "--algo", "ppo", "--env", "zooport/Basic-v0",
        "--gym-packages", "zooport", "-f", "logs", "--exp-id", "1", "-n", "300",
        "--no-render", "--deterministic", "--seed", "1",
    )  # fmt: skip
    episodes = [float(r) for r in re.findall(r"Episode Reward: (-?[\d.]+)", out)]
    # Seven steps right to the large goal: 6 * -0.01 + 0.99 = 0.93 (expected reward 0.9).
    assert len(episodes) >= 10 and set(episodes) == {0.93}, out[-2000:]


def test_record_video_through_a_launcher_that_imports_zooport(basic_run):
    # rl_zoo3.record_video has no --gym-packages: the recipe's launcher imports zooport (which
    # registers the ids) and runs the module as its command line would.
    tmp, _ = basic_run
    launcher = (
        "import runpy, zooport; runpy.run_module('rl_zoo3.record_video', run_name='__main__')"
    )
    _run(
        tmp, "-c", launcher, "--algo", "ppo", "--env", "zooport/Basic-v0", "-f", "logs",
        "--exp-id", "1", "-n", "40", "-o", "videos",
    )  # fmt: skip
    videos = list((tmp / "videos").glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 1_000


def test_multi_input_policy_for_the_dict_observation_of_gridworld(tmp_path):
    run = _train(
        tmp_path, "zooport/GridWorld-v0", "-n", "256",
        "-params", "n_envs:2", "n_steps:64", "batch_size:64", "n_epochs:1",
    )  # fmt: skip
    from stable_baselines3 import PPO
    from stable_baselines3.common.policies import MultiInputActorCriticPolicy

    model = PPO.load(run / "zooport-GridWorld-v0.zip", device="cpu")
    assert isinstance(model.policy, MultiInputActorCriticPolicy)
    assert set(model.observation_space.spaces) == {"camera", "goal"}
    assert model.num_timesteps >= 256
