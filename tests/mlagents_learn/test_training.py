"""``mlagents-learn`` 1.1.0 trains built-ins that ``zooport serve`` serves, in both modes.

- PPO on BallBalance, launched as an executable (``--env``) twice (``--num-envs 2``), reaches
  the demo's target (the core's ``expected_reward``, 18); the step it did is printed.
- Every other built-in's config trains a few updates and exports its models (GridWorld's
  camera goes out channel first, as a Unity build sends it).
- MA-POCA with self-play on Soccer, in Editor mode (no ``--env``: the test starts
  ``zooport serve``, which retries until the trainer listens on 5004), runs a few thousand
  steps and reports its ELO.

Each run stops with SIGINT once it has what the test needs, as Ctrl-C does: ML-Agents then
exports the model, through the launcher's ``dynamo=False``.
"""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from tests.mlagents_learn.runs import (
    CONFIGS,
    Server,
    Summary,
    first,
    learn,
    scalars,
    write_launcher,
    zooport_python,
)

#: --base-port of the --env run: its workers listen on 5410 and 5411.
BASE_PORT = 5410
BALL_AGENTS = 32


def _expected_reward(cls: str) -> float:
    """The built-in's ``expected_reward``, read from zooport in its own venv."""
    module, name = cls.split(":")
    code = f"from {module} import {name}; print({name}.expected_reward)"
    return float(subprocess.run([zooport_python(), "-c", code], check=True,
                                capture_output=True, text=True).stdout)  # fmt: skip


def test_ppo_on_ball_balance_reaches_the_demo_target(tmp_path):
    target = _expected_reward("zooport.envs.builtin.ball_balance:BallBalance")
    assert target == 18.0
    launcher = write_launcher(tmp_path / "ball_balance", "BallBalance")

    def reached(summary: Summary) -> bool:
        return summary.reward is not None and summary.reward >= target

    # --env-args comes last: everything after it reaches the executable, after -logFile.
    run = learn(
        "ball_balance.yaml", tmp_path, "ppo", f"--env={launcher}", "--num-envs=2",
        f"--base-port={BASE_PORT}", "--env-args", "--kwargs", json.dumps({"n_agents": BALL_AGENTS}),
        stop=reached,
    )  # fmt: skip
    assert run.returncode == 0, run.output
    hit = first(run.summaries, target)
    assert hit is not None, f"mean reward never reached {target}:\n{run.output}"
    print(f"\nBallBalance: mean reward {hit.reward} >= {target} at step {hit.step} "
          f"({run.seconds:.0f} s for the whole run)")  # fmt: skip
    # The model was exported (torch.onnx.export with dynamo=False, the launcher's patch).
    assert (run.results / "BallBalance.onnx").is_file()
    # Two servers, each launched with its port and log file, each with its --env-args.
    logs = [run.results / "run_logs" / f"Player-{w}.log" for w in (0, 1)]
    for worker, log in enumerate(logs):
        text = log.read_text()
        assert f"localhost:{BASE_PORT + worker}" in text, text
        assert "zooport serve: BallBalance (1 core" in text, text
    # TensorBoard: the trainer's reward and the core's own statistics (StatsSideChannel).
    events = run.results / "BallBalance"
    rewards = scalars(events, "Environment/Cumulative Reward")
    assert rewards[-1][1] >= target, rewards
    assert scalars(events, "BallBalance/EpisodeReward"), "the core's statistics are missing"


def test_poca_self_play_on_soccer_reports_elo(tmp_path):
    config = yaml.safe_load((CONFIGS / "soccer.yaml").read_text())
    soccer = config["behaviors"]["Soccer"]
    assert soccer["trainer_type"] == "poca" and "self_play" in soccer
    # The example's settings, with summaries often enough to see a few in a short run, and
    # every game against a past snapshot: a game against the current policy moves both
    # ratings by the same amount, its own (GhostController.compute_elo_rating_changes), so
    # ELO stays 1200.0 until then.
    soccer.update(summary_freq=1000, max_steps=20_000)
    soccer["self_play"].update(save_steps=1000, swap_steps=500, play_against_latest_model_ratio=0)
    (tmp_path / "soccer.yaml").write_text(yaml.safe_dump(config))

    def enough(summary: Summary) -> bool:
        return summary.elo is not None and summary.step >= 3000

    server = Server(
        "Soccer", "--kwargs", json.dumps({"individual_rewards": False}), "--seed", "3",
        log=tmp_path / "serve.log",
    )  # fmt: skip
    try:
        run = learn(str(tmp_path / "soccer.yaml"), tmp_path, "poca", stop=enough)
    finally:
        code = server.stop()
    assert run.returncode == 0, run.output
    assert code == 0 and "the trainer closed after" in server.output(), server.output()
    # Both teams are one behaviour, "Soccer", trained against its own past versions.
    assert {s.behavior for s in run.summaries} == {"Soccer"}
    elos = [s for s in run.summaries if s.elo is not None]
    assert elos, f"no ELO in any summary:\n{run.output}"
    groups = [s.group_reward for s in run.summaries if s.group_reward is not None]
    assert groups, "no group reward: POCA did not see a whole team finish"
    final = run.status()["Soccer"]["elo"]
    curve = scalars(run.results / "Soccer", "Self-play/ELO")
    assert curve and curve[-1][1] == pytest.approx(elos[-1].elo, abs=1e-3)
    print(f"\nSoccer (POCA + self-play), {run.summaries[-1].step} steps: ELO per summary "
          f"{[(s.step, s.elo) for s in elos]}; training_status.json: {final:.3f}")  # fmt: skip


#: The other built-ins' configs, each with the server it was written for (its header's line).
SMOKE = [
    ("basic.yaml", "Basic", {"n_agents": 16}),
    ("grid_world.yaml", "GridWorld", {"n_agents": 16}),
    ("collector.yaml", "Collector", {"n_agents": 16}),
    ("tag.yaml", "Tag", {}),
]


@pytest.mark.parametrize(
    ("config", "env", "kwargs"),
    SMOKE,
    ids=[s[1] for s in SMOKE],
)
def test_every_other_config_trains_and_exports(tmp_path, config, env, kwargs):
    """A few updates of each: camera and goal-signal observations (GridWorld), hybrid actions
    and a variable-length observation (Collector), two behaviours with decision periods and
    a POCA group (Tag) reach the trainer, which trains and exports a model per behaviour."""
    settings = yaml.safe_load((CONFIGS / config).read_text())
    for behavior in settings["behaviors"].values():
        behavior["hyperparameters"].update(buffer_size=256, batch_size=64)
        behavior.update(max_steps=600, summary_freq=300)
    (tmp_path / config).write_text(yaml.safe_dump(settings))
    launcher = write_launcher(tmp_path / "serve", env, "--kwargs", json.dumps(kwargs))
    port = BASE_PORT + 10 + 2 * [s[0] for s in SMOKE].index(config)
    run = learn(str(tmp_path / config), tmp_path, "smoke", f"--env={launcher}",
                f"--base-port={port}")  # fmt: skip
    assert run.returncode == 0, run.output
    for behavior in settings["behaviors"]:
        assert (run.results / f"{behavior}.onnx").is_file(), run.output
