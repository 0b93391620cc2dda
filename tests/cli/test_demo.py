"""``python -m zooport.demo``: the quick main job end to end, the random table, the reward gate,
and the training helpers the demo relies on (truncation marks, evaluation, early stop)."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from zooport.cli import demo
from zooport.cli.common import rollout
from zooport.cli.demo import DemoResult, main
from zooport.cli.play import play
from zooport.cli.targets import resolve_target
from zooport.cli.training import TrainResult, evaluate_parallel, train
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.builtin.grid_world import GridWorld
from zooport.envs.registry import default_registry

pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")
pytest.importorskip("supersuit")


# ---------------------------------------------------------------------- the main job, quick


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    done = subprocess.run(
        [sys.executable, "-m", "zooport.demo", "--quick", "--out", str(out), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    return done, out


def test_quick_demo_exits_0_and_prints_the_table(quick_run):
    done, out = quick_run
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("[1/2] BallBalance: training through SB3VecEnv, 12 agents")
    assert lines[1] == "    trained the whole budget: 1,536 agent-steps"  # --quick: no stop
    assert lines[2].startswith("[2/2] GridWorld: training through PettingZooParallelEnv")
    header = next(i for i, line in enumerate(lines) if line.startswith("env "))
    assert lines[header].split("  ")[0] == "env"
    for column in ("adapter", "steps", "wall s", "agent-steps/s", "mean episode reward (eval)"):
        assert column in lines[header]
    ball, grid = (re.split(r"\s{2,}", lines[header + i]) for i in (1, 2))
    # Quick budgets: 2 rollouts of 64 steps x 12 agents, and of 32 steps x 16 agents.
    assert ball[:5] == ["BallBalance", "SB3VecEnv", "PPO", "12", "1,536"]
    assert grid[:5] == [
        "GridWorld", "PettingZooParallelEnv x16 + SuperSuit", "MaskablePPO", "16", "1,024",
    ]  # fmt: skip
    assert ball[-1] == grid[-1] == "below"
    assert "--quick: tiny budgets, so the rewards are not checked" in done.stdout


def test_quick_demo_writes_the_plot_gifs_and_results(quick_run):
    from PIL import Image

    done, out = quick_run
    assert done.returncode == 0, done.stderr
    with Image.open(out / "learning_curves.png") as image:
        assert image.size == (1400, 400)  # one 700x400 panel per run
    sizes = {}
    for env, n in (("BallBalance", 12), ("GridWorld", 16)):
        core = default_registry.make(env, n_agents=n, seed=0)
        core.reset()
        height, width, _ = core.render().shape
        core.close()
        sizes[env] = (width, height)
    results = json.loads((out / "results.json").read_text())
    assert results["quick"] is True
    runs = {r["env"]: r for r in results["runs"]}
    assert (runs["BallBalance"]["steps"], runs["GridWorld"]["steps"]) == (1536, 1024)
    assert runs["BallBalance"]["expected_reward"] == BallBalance.expected_reward
    assert runs["GridWorld"]["expected_reward"] == GridWorld.expected_reward
    # 20 rollout steps: every 2nd frame plus the first for BallBalance, every frame for GridWorld.
    assert (runs["BallBalance"]["gif_frames"], runs["GridWorld"]["gif_frames"]) == (11, 21)
    for env, run in runs.items():
        with Image.open(out / run["gif"]) as gif:
            # Pillow merges identical consecutive frames (a ball at rest) into one.
            assert 1 < gif.n_frames <= run["gif_frames"] and gif.size == sizes[env]
        # BallBalance returns lie in [-1, 20]; GridWorld's in [-1.5, 1] (50-step cap).
        low, high = (-1.0, 20.0) if env == "BallBalance" else (-1.5, 1.0)
        assert low <= run["mean_episode_reward"] <= high
        assert run["eval_episodes"] >= 4


# ---------------------------------------------------------------------- random table, gate


def test_random_table_matches_rollouts(capsys):
    # 120 steps: Basic's episodes are cut at 100, so at least one finishes whatever the
    # random actions (an episode in the table is then compared, not only zeros).
    assert main(["--random", "--steps", "120", "--seed", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| environment | behaviours | agents | steps |")
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in lines[2:]}
    assert list(rows) == list(default_registry)
    expected = rollout(default_registry.make("Basic", seed=3), 120, seed=3)
    basic = rows["Basic"]
    assert basic[2:4] == [str(expected.agents), "120"]
    assert int(basic[5]) == expected.episodes > 0
    assert float(basic[6]) == pytest.approx(expected.mean_episode_reward, abs=5e-4)


def _fake(monkeypatch, rewards):
    def run_demo(out, *, quick, seed, progress):
        results = []
        for (env, expected), reward in zip(
            [("BallBalance", 18.0), ("GridWorld", 0.75)], rewards, strict=True
        ):
            run = next(r for r in demo.RUNS if r.env == env)
            result = TrainResult(env, run.api, "PPO", 100, 1.0, reward, expected, [], [])
            results.append(DemoResult(run, 12, result, Path(out) / f"{env}.gif", 3))
        return results

    monkeypatch.setattr(demo, "run_demo", run_demo)


def test_full_demo_exits_1_when_a_run_misses_its_target(monkeypatch, capsys, tmp_path):
    _fake(monkeypatch, [19.0, 0.5])
    assert main(["--out", str(tmp_path), "--no-progress"]) == 1
    captured = capsys.readouterr()
    assert "below the expected reward: GridWorld" in captured.err
    assert main(["--quick", "--out", str(tmp_path), "--no-progress"]) == 0  # no gate
    _fake(monkeypatch, [18.0, 0.75])
    assert main(["--out", str(tmp_path), "--no-progress"]) == 0


def test_demo_rejects_quick_with_random():
    with pytest.raises(SystemExit) as error:
        main(["--quick", "--random"])
    assert error.value.code == 2


# ---------------------------------------------------------------------- training helpers


class _Stay:
    """A "model" that always stays (GridWorld action 0); it never reaches a goal."""

    def predict(self, obs, deterministic=True, action_masks=None):
        assert action_masks is not None and action_masks.shape[1] == 5
        return np.zeros(len(obs["goal"]), dtype=np.int64), None


def test_evaluate_parallel_plays_whole_episodes_per_agent():
    returns = evaluate_parallel(_Stay(), GridWorld(n_agents=4, seed=0), episodes=5, seed=0)
    # "all": every agent plays its whole 50-step episode; two PettingZoo episodes of 4 agents.
    assert len(returns) == 8
    assert returns == pytest.approx([-0.5] * 8, abs=1e-5)


def test_parallel_route_marks_truncated_agents_for_bootstrapping():
    from zooport.cli.training import _training_env

    venv, masked, _ = _training_env(
        resolve_target("GridWorld", {"n_agents": 4}), "parallel", None, 0
    )
    assert masked
    venv.reset()
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(300):
        masks = np.stack(venv.env_method("action_masks"))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        _, reward, done, infos = venv.step(actions)
        if done.any():
            # termination_mode="any": the first to reach a goal (reward +-1) ends everyone's
            # episode; the others are truncated and PPO must bootstrap them.
            assert done.all()
            finished = np.isin(np.round(reward, 2), [1.0, -1.0])
            truncated = [bool(i.get("TimeLimit.truncated", False)) for i in infos]
            assert truncated == (~finished).tolist() or all(truncated)  # or the 50-step cap
            assert all(i.get("terminal_observation") is not None for i in infos)
            ended += 1
    venv.close()
    assert ended >= 5


def test_train_stops_after_the_rollout_that_reached_stop_reward():
    target = resolve_target("Basic", {"n_agents": 2, "max_steps": 3})
    result = train(
        target, steps=10_000, progress=False, window=1, stop_reward=-100.0,
        ppo_kwargs={"n_steps": 8, "batch_size": 16, "n_epochs": 1},
    )  # fmt: skip
    # First rollout: 8 steps x 2 agents; the first step of the next one (2 agents) stops it.
    assert result.timesteps == 18 and len(result.curve) == 1


def test_train_stops_once_the_running_mean_held_stop_reward_for_hold_rollouts():
    target = resolve_target("Basic", {"n_agents": 2, "max_steps": 3})
    result = train(
        target, steps=10_000, progress=False, window=1, stop_reward=-100.0, hold=3,
        ppo_kwargs={"n_steps": 8, "batch_size": 16, "n_epochs": 1},
    )  # fmt: skip
    # Three rollouts of 8 steps x 2 agents held it; the next step (2 agents) stops training.
    assert result.timesteps == result.stopped_at == 3 * 16 + 2 and len(result.curve) == 3
    whole = train(target, steps=32, progress=False, window=1, stop_reward=100.0,
                  ppo_kwargs={"n_steps": 8, "batch_size": 16, "n_epochs": 1})  # fmt: skip
    assert (whole.timesteps, whole.stopped_at) == (32, None)


def test_every_demo_run_stops_once_it_holds_its_target_and_says_where():
    # GridWorld trained its whole 450k-step budget, though it held its target from ~200k.
    assert all(run.stop_at_expected and run.hold >= 3 for run in demo.RUNS)
    run = demo.RUNS[1]
    result = TrainResult("GridWorld", "parallel", "MaskablePPO", 215_042, 90.0, 0.8, 0.75, [], [])
    assert demo._stop_line(result, run.steps, run.hold) == (
        "trained the whole budget: 215,042 agent-steps"
    )
    result.stopped_at = 215_042
    assert demo._stop_line(result, run.steps, run.hold) == (
        "stopped at agent-step 215,042 of 450,560: the mean of the last 100 training episodes "
        "held the expected reward (0.75) for 5 rollouts"
    )


def test_train_parallel_copies_and_evaluation():
    target = resolve_target("GridWorld", {"n_agents": 1, "max_steps": 5})
    result = train(
        target, api="parallel", steps=96, copies=3, eval_episodes=6, progress=False,
        ppo_kwargs={"n_steps": 16, "batch_size": 48, "n_epochs": 1},
    )  # fmt: skip
    assert result.model.get_env().num_envs == 3
    assert (result.timesteps, result.eval_episodes) == (96, 6)
    assert -0.05 - 1e-6 <= result.mean_episode_reward <= 1.0
    with pytest.raises(Exception, match="copies must be 1"):
        train(target, api="vector", steps=8, copies=2, progress=False)


def test_camera_cnn_keeps_the_board_size():
    import torch

    from zooport.adapters.sb3_vec_env import SB3VecEnv

    venv = SB3VecEnv(GridWorld(n_agents=3, seed=0))
    extractor = demo.camera_cnn()(venv.observation_space)
    obs = {k: torch.as_tensor(v) for k, v in venv.reset().items()}
    venv.close()
    features = extractor(obs)
    # Two 3x3 convolutions with padding 1: 5x5 cells x 32 channels per agent.
    assert features.shape == (3, 32 * 5 * 5) == (3, extractor.features_dim)
    assert demo.camera_cnn() is demo.camera_cnn()  # built once


def test_plot_curve_draws_one_panel_per_result(tmp_path):
    from PIL import Image

    from zooport.cli.training import plot_curve

    results = [
        TrainResult("A", "vector", "PPO", 10, 1.0, 0.5, 1.0, [(5, 0.2), (10, 0.5)], [0.2], [5]),
        TrainResult("B", "parallel", "PPO", 10, 1.0, math.nan, None, [], []),
    ]
    plot_curve(results, tmp_path / "two.png")
    plot_curve(results[0], tmp_path / "one.png")
    with Image.open(tmp_path / "two.png") as two, Image.open(tmp_path / "one.png") as one:
        assert (two.size, one.size) == ((1400, 400), (700, 400))


@pytest.mark.parametrize("argv", [["--random", "--seed", "-1"], ["--random", "--steps", "0"]])
def test_demo_rejects_a_negative_seed_or_no_steps_before_it_starts(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert "--steps must be positive and --seed >= 0" in capsys.readouterr().err


def test_train_evaluates_the_parallel_route_on_eval_target():
    target = resolve_target("GridWorld", {"n_agents": 1, "max_steps": 5})
    result = train(
        target, api="parallel", steps=16, eval_episodes=6, progress=False, deterministic=False,
        eval_target=resolve_target("GridWorld", {"n_agents": 4, "max_steps": 5}),
        ppo_kwargs={"n_steps": 16, "batch_size": 16, "n_epochs": 1},
    )  # fmt: skip
    # Whole PettingZoo episodes of the 4-agent board: two of them give 8 returns (1 agent: 6).
    assert result.eval_episodes == 8


def test_play_records_a_models_gif_every_few_steps(tmp_path):
    from PIL import Image

    from zooport.adapters.vector_env import BehaviorVectorEnv

    target, model = resolve_target("GridWorld", {"n_agents": 2}), _Stay()
    env = BehaviorVectorEnv(target.make())
    model.observation_space, model.action_space = (
        env.single_observation_space,
        env.single_action_space,
    )
    env.close()
    stats = play(target, api="vector", steps=6, record=tmp_path / "a.gif", progress=False,
                 model=model, every=3, fps=5)  # fmt: skip
    assert (stats.frames, stats.policy) == (3, "_Stay")  # the first frame, then steps 3 and 6
    with Image.open(tmp_path / "a.gif") as gif:
        # fps=5: 200 ms a frame; Pillow merges the three identical frames of a model that stays.
        assert (gif.n_frames, gif.info["duration"]) == (1, 600)
