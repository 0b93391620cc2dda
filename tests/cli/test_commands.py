"""The ``zooport`` command line: every subcommand, in-process and through ``python -m``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from gymnasium import spaces

from zooport.cli.app import main
from zooport.cli.common import rollout, sample_action
from zooport.cli.play import play
from zooport.cli.targets import resolve_target
from zooport.cli.training import train
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.registry import default_registry

from tests.support.paths import importable

#: A user's module: a good env, one whose step raises, one with a wrong observation dtype,
#: one whose step never returns.
USER_MODULE = textwrap.dedent(
    """
    import time

    import numpy as np

    from zooport.envs.base_env import (
        ActionSpec, BehaviorSpec, DimensionProperty, ObservationSpec, ObservationType,
    )
    from zooport.envs.batched_env import BatchedEnv, StepResult

    OBS = ObservationSpec((2,), (DimensionProperty.NONE,), ObservationType.DEFAULT, "x")


    class Counter(BatchedEnv):
        def __init__(self, n_agents=2, limit=10, **kw):
            super().__init__(**kw)
            self.n, self.limit = n_agents, limit
            self._add_behavior("B", BehaviorSpec([OBS], ActionSpec.create_discrete((3,))), n_agents)
            self.t = np.zeros(n_agents, np.float32)

        def _reset_agents(self, behavior, slots):
            self.t[slots] = 0

        def _step(self, actions):
            self.t += 1
            return {"B": StepResult(np.ones(self.n, np.float32), self.t >= self.limit)}

        def _observe(self, behavior, slots):
            return [np.stack([self.t[slots], np.zeros(slots.size, np.float32)], 1)]


    class StepRaises(Counter):
        def _step(self, actions):
            raise RuntimeError("boom: the physics exploded")


    class WrongDtype(Counter):
        def _observe(self, behavior, slots):
            return [np.zeros((slots.size, 2), np.float64)]


    class HangsInStep(Counter):
        def _step(self, actions):
            while True:
                time.sleep(0.02)


    def make_counter(limit=10):
        return Counter(limit=limit)


    class Capped(Counter):
        'A counter whose episodes are cut at 50 steps.'

        def __init__(self, **kw):
            super().__init__(limit=1000, max_steps=50, **kw)
    """
)


@pytest.fixture(scope="module")
def user_module(tmp_path_factory):
    """The module above on sys.path (in-process) and as a PYTHONPATH (subprocesses)."""
    directory = tmp_path_factory.mktemp("cli_user")
    with importable(directory, "zooport_cli_user_envs", USER_MODULE):
        yield str(directory)


#: What a missing plotting package asks for: the [plots] extra's packages, quoted for zsh.
PLOTS_HINT = 'pip install "matplotlib>=3.7" "pillow>=9"'


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """``main(["--plain", *argv])``: (exit status, stdout, stderr)."""
    code = main(["--plain", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_module(*argv: str, pythonpath: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [pythonpath, env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "zooport.cli", *argv],
        capture_output=True, text=True, timeout=180, env=env,
    )  # fmt: skip


def assert_one_line_error(code: int, err: str, *fragments: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("zooport: error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


# ---------------------------------------------------------------------- list, info


def test_list_shows_every_registered_env_with_agents_spaces_and_rewards(capsys):
    code, out, _ = run(capsys, "list")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split("  ")[0] == "env" and "expected reward" in lines[0]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert list(rows) == list(default_registry)
    for identifier, line in rows.items():
        entry = default_registry[identifier]
        assert f"  {entry.expected_reward:g}  " in line and line.endswith(
            str(entry.max_episode_steps)
        )
    assert "Basic x1  " in rows["Basic"] and "discrete(3)" in rows["Basic"]
    assert "BallBalance x12" in rows["BallBalance"] and "continuous(2)" in rows["BallBalance"]
    assert "5x5x3 + 2" in rows["GridWorld"]
    assert "Runner?team=0 x3; Tagger?team=1 x2" in rows["Tag"]
    assert "hybrid(continuous=2, discrete=(2,))" in rows["Collector"]


def test_info_lists_specs_side_channels_and_adapters(capsys):
    code, out, _ = run(capsys, "info", "BallBalance", "--kwargs", '{"n_agents": 3}')
    assert code == 0
    assert out.startswith("BallBalance: Unity ML-Agents' 3DBall")
    assert "expected reward 18; max episode steps 200; renders rgb_array: yes" in out
    assert "BallBalance  3       action       continuous(2)" in out
    assert "observation  ball_state     (8,)   DEFAULT  NONE" in out
    # Found by running the env: the parameters it reads and the statistics it sends.
    assert "EnvironmentParametersChannel  reads        mass, gravity, scale" in out
    stats = "BallBalance/EpisodeLength, BallBalance/EpisodeReward, BallBalance/Fell"
    assert f"StatsSideChannel              sends        {stats}" in out
    assert "gym       GymEnv                        yes      BallBalance with n_agents=1" in out


def test_info_on_multi_behaviour_masked_and_hybrid_envs(capsys):
    _, tag, _ = run(capsys, "info", "Tag")
    assert "Runner?team=0 with n_runners=1, n_taggers=1" in tag
    assert "one slot per agent; pick a behaviour (--behavior)" in tag
    assert "parallel  PettingZooParallelEnv         yes      5 agents" in tag
    _, grid, _ = run(capsys, "info", "GridWorld")
    assert "action       discrete(5)  -          masked" in grid
    assert "camera       (5, 5, 3)  DEFAULT      TRANSLATIONAL_EQUIVARIANCE" in grid
    assert "goal         (2,)       GOAL_SIGNAL  NONE" in grid
    _, collector, _ = run(capsys, "info", "Collector")
    assert "train     SB3 PPO / MaskablePPO         no       hybrid actions in ['Collector']" in (
        collector
    )


def test_info_on_a_user_core_shows_its_own_docstring_and_step_limit(capsys, user_module):
    code, out, _ = run(capsys, "info", "zooport_cli_user_envs:Capped")
    assert code == 0
    first, second = out.splitlines()[:2]
    assert first == "zooport_cli_user_envs:Capped: A counter whose episodes are cut at 50 steps."
    assert "max episode steps 50;" in second
    # No docstring of its own: not BatchedEnv's, which describes the base class.
    _, out, _ = run(capsys, "info", "zooport_cli_user_envs:Counter")
    assert out.splitlines()[0] == "zooport_cli_user_envs:Counter: (no docstring)"
    assert "max episode steps -;" in out.splitlines()[1]


def test_info_prints_descriptions_as_plain_text(capsys):
    _, out, _ = run(capsys, "info", "Soccer")
    assert out.splitlines()[0] == (
        "Soccer: Two teams of team_size players push a ball into the other team's goal."
    )


def test_info_on_a_user_factory_that_is_not_single_agent(capsys, user_module):
    code, out, _ = run(capsys, "info", "zooport_cli_user_envs:make_counter")
    assert code == 0
    assert "not a BatchedEnv" not in out  # Counter is a BatchedEnv
    assert "no behaviour has exactly one agent (B: 2) and the factory takes no n_agents" in out


# ---------------------------------------------------------------------- play


def test_play_raw_matches_the_demo_rollout():
    stats = play(resolve_target("BallBalance", {"n_agents": 3}), steps=120, seed=5, progress=False)
    expected = rollout(BallBalance(n_agents=3, seed=5), 120, seed=5)
    assert (stats.steps, stats.agent_steps) == (120, expected.agent_steps) == (120, 360)
    assert stats.episodes == expected.episodes > 0
    assert stats.mean_episode_reward == pytest.approx(expected.mean_episode_reward)


@pytest.mark.parametrize("api", ["gym", "vector", "parallel", "aec"])
def test_play_every_api_counts_steps_and_episodes(api):
    # Basic episodes are cut at 4 steps: every return is in [-0.04, 1.0 - 0.07] and an agent
    # finishes an episode at least every 4 of its steps.
    target = resolve_target("Basic", {"max_steps": 4, "n_agents": 1 if api == "gym" else 3})
    stats = play(target, api=api, steps=40, seed=0, progress=False)
    agents = 1 if api == "gym" else 3
    assert stats.steps == 40
    if api in ("gym", "vector", "parallel"):
        assert stats.agent_steps == 40 * agents
        assert stats.episodes >= 40 * agents // 4 - agents
    else:  # aec: a step is one agent's turn, a finished agent's turn acts on nothing
        assert 0 < stats.agent_steps <= 40 and stats.episodes >= 1
    assert all(-0.04 - 1e-6 <= r <= 0.93 + 1e-6 for r in stats.episode_rewards)


def test_play_progress_bar_goes_to_stderr(capsys):
    play(resolve_target("Basic"), steps=10, seed=0, progress=True)
    out, err = capsys.readouterr()
    assert out == "" and "Basic (raw):   0%|          | 0/10" in err


def test_play_command_prints_stats(capsys):
    code, out, err = run(
        capsys, "play", "Basic", "--api", "vector", "--steps", "12", "--kwargs",
        '{"n_agents": 2, "max_steps": 3}', "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    first, second = out.splitlines()
    assert first.startswith("Basic via vector: 12 steps, 24 agent-steps in ")
    assert second.startswith("episodes finished: 8; mean episode reward ")
    assert second.endswith("; expected reward (trained): 0.9")


def test_play_records_an_animated_gif(tmp_path):
    from PIL import Image

    path = tmp_path / "out.gif"
    target = resolve_target("BallBalance", {"n_agents": 2})
    stats = play(target, api="vector", steps=5, seed=0, record=path, progress=False)
    assert stats.frames == 6
    frame = BallBalance(n_agents=2, seed=0)
    frame.reset()
    height, width, _ = frame.render().shape
    with Image.open(path) as image:
        assert image.n_frames == 6 and image.size == (width, height)


def test_sample_action_respects_masks():
    rng = np.random.default_rng(0)
    discrete = spaces.Discrete(4, start=1)
    mask = np.array([0, 1, 0, 1], np.int8)
    assert {sample_action(discrete, mask, rng) for _ in range(50)} == {2, 4}
    multi = spaces.MultiDiscrete([2, 3])
    mask = np.array([1, 0, 0, 0, 1], np.int8)
    assert {tuple(sample_action(multi, mask, rng).tolist()) for _ in range(20)} == {(0, 2)}
    hybrid = spaces.Dict(continuous=spaces.Box(-1, 1, (2,)), discrete=spaces.Discrete(3))
    samples = [sample_action(hybrid, np.array([0, 0, 1], np.int8), rng) for _ in range(20)]
    assert {s["discrete"] for s in samples} == {2}
    assert all(hybrid["continuous"].contains(s["continuous"]) for s in samples)


def test_play_errors_are_one_line(capsys, monkeypatch, user_module):
    code, _, err = run(capsys, "play", "Tag", "--api", "vector")
    assert_one_line_error(code, err, "--api vector on Tag", "pass behavior_name= to choose one")
    code, _, err = run(capsys, "play", "Tag", "--api", "gym", "--behavior", "Tagger?team=1")
    assert_one_line_error(code, err, "--api gym needs a single-agent behaviour")
    code, _, err = run(
        capsys, "play", "zooport_cli_user_envs:Counter", "--record", "x.gif", "--steps", "2"
    )
    assert_one_line_error(code, err, "zooport_cli_user_envs:Counter does not render")
    monkeypatch.setitem(sys.modules, "PIL.Image", None)
    code, _, err = run(capsys, "play", "Basic", "--record", "x.gif")
    assert_one_line_error(code, err, "--record needs PIL", PLOTS_HINT)


# ---------------------------------------------------------------------- user errors


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["info", "Basc"], ["no environment 'Basc'", "did you mean ['Basic']"]),
        (["check", "BallBalence"], ["did you mean ['BallBalance']"]),
        (["info", "Basic", "--kwargs", "{n_agents: 2}"], ["--kwargs is not valid JSON"]),
        (["info", "Basic", "--kwargs", "[2]"], ["--kwargs must be a JSON object"]),
        (["info", "Basic", "--kwargs", '{"speed": 2}'], ["Basic takes no keyword ['speed']"]),
        (["play", "Basic", "--api", "rllib"], ["play: argument --api: invalid choice: 'rllib'"]),
        (["play", "Basic", "--steps", "0"], ["expected a positive int, got 0"]),
        (["train", "Basic", "--api", "gym"], ["train: argument --api: invalid choice"]),
        (["frobnicate"], ["argument COMMAND: invalid choice: 'frobnicate'"]),
        ([], ["the following arguments are required: COMMAND"]),
        (["info", "no_such_module_xyz:make"], ["cannot import 'no_such_module_xyz'"]),
        (["info", "zooport.cli:nothing"], ["module 'zooport.cli' has no attribute 'nothing'"]),
        (["info", "zooport.cli.play:APIS"], ["zooport.cli.play:APIS is a tuple, not a callable"]),
        (["check", "Basic", "--only", "nope"], ["--only takes checker names among"]),
        (["check", "Basic", "--timeout", "-1"], ["--timeout takes seconds >= 0", "got -1.0"]),
        # Counts are checked by the parser, as every other subcommand's are.
        (["check", "Basic", "--cycles", "0"], ["check: argument --cycles: expected a positive"]),
        (["bench", "--n", "16", "0"], ["bench: argument --n: expected a positive int, got 0"]),
        (["train", "Collector", "--steps", "8"], ["hybrid actions; SB3 has no policy"]),
        (["train", "Tag", "--steps", "8"], ["pick one with --behavior"]),
        (
            ["train", "Tag", "--api", "parallel", "--behavior", "Runner?team=0"],
            ["--behavior 'Runner?team=0' picks the one behaviour --api vector trains"],
        ),
    ],
)
def test_user_errors_print_one_line_and_exit_2(capsys, argv, fragments):
    code, out, err = run(capsys, *argv)
    assert out == ""
    assert_one_line_error(code, err, *fragments)


def test_help_lists_every_subcommand(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for command in ("list", "info", "play", "check", "bench", "train"):
        assert command in out


# ---------------------------------------------------------------------- check


def test_check_reports_a_step_that_raises_and_exits_1(capsys, user_module):
    code, out, err = run(capsys, "check", "zooport_cli_user_envs:StepRaises", "--steps", "20",
                         "--cycles", "5")  # fmt: skip
    assert code == 1 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("zooport_cli_user_envs:StepRaises: FAILED (1 passed, 9 failed,")
    rows = {line[:30].strip(): line for line in lines[2:]}
    assert "RuntimeError: boom: the physics exploded" in rows["pettingzoo parallel_api_test"]
    assert "step() 1 of 20 raised RuntimeError: boom" in rows["zooport check_base_env"]
    assert "skip" in rows["pettingzoo render_test"]


def test_check_fails_a_checker_that_hangs_at_the_timeout_and_exits_1(capsys, user_module):
    code, out, err = run(capsys, "check", "zooport_cli_user_envs:HangsInStep", "--only",
                         "base_env", "--timeout", "0.3")  # fmt: skip
    assert code == 1 and err == ""
    row = next(line for line in out.splitlines() if "check_base_env" in line)
    assert "did not finish within the time limit of 0.3 s" in row


def test_check_a_good_factory_with_kwargs_exits_0(capsys, user_module):
    code, out, _ = run(
        capsys, "check", "zooport_cli_user_envs:Counter", "--kwargs", '{"n_agents": 1}',
        "--steps", "20", "--cycles", "5", "--only", "base_env", "gym", "state", "-v",
    )  # fmt: skip
    assert code == 0
    assert out.splitlines()[0] == (
        "zooport_cli_user_envs:Counter: PASSED (4 passed, 0 failed, 0 skipped)"
    )
    # n_agents=1 made the one behaviour single-agent as it is: no extra keywords.
    assert "gymnasium check_env [B]" in out
    assert "warnings:" in out and "[expected: ML-Agents' ObservationSpec has no bounds" in out


def test_check_subprocess_reports_broken_env_without_traceback(user_module):
    done = run_module(
        "--plain", "check", "zooport_cli_user_envs:WrongDtype", "--steps", "20", "--cycles",
        "5", "--only", "base_env", "parallel_api", pythonpath=user_module,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    table = done.stdout.splitlines()
    assert table[0] == "zooport_cli_user_envs:WrongDtype: FAILED (2 passed, 1 failed, 0 skipped)"
    base = next(line for line in table if line.startswith("zooport check_base_env"))
    assert "fail" in base and "expected dtype float32, got float64" in base


# ---------------------------------------------------------------------- bench


def test_bench_runs_the_packaged_harness(capsys, tmp_path):
    path = tmp_path / "bench.json"
    code, out, err = run(capsys, "bench", "--quick", "--n", "1", "--envs", "Trivial",
                         "--routes", "raw", "--json", str(path))  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[0].startswith("| env | N | raw |")
    # Before anything is measured: what it will take.
    assert err.splitlines()[0].startswith("zooport bench: 1 case (env x agents x route), at least")
    results = json.loads(path.read_text())["results"]
    assert [(r["env"], r["n"], r["route"]) for r in results] == [("Trivial", 1, "raw")]
    assert results[0]["agent_steps_per_s"] > 0


def test_bench_errors(capsys):
    code, _, err = run(capsys, "bench", "--envs", "Nope")
    assert_one_line_error(
        code, err, "--envs takes names among ['BallBalance', 'Trivial', 'TrivialEndless']"
    )
    code, _, err = run(capsys, "bench", "--routes", "raw", "Nope")
    assert_one_line_error(code, err, "--routes takes names among", "got ['Nope']")


# ---------------------------------------------------------------------- train


def test_train_vector_route_prints_the_table_and_writes_the_plot(capsys, tmp_path):
    from PIL import Image

    plot = tmp_path / "curve.png"
    code, out, err = run(
        capsys, "train", "Basic", "--steps", "32", "--kwargs", '{"n_agents": 2, "max_steps": 3}',
        "--plot", str(plot), "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    header, row, written = out.splitlines()
    assert header.split() == [
        "env", "api", "algorithm", "steps", "seconds", "agent-steps/s", "mean", "episode",
        "reward", "expected", "reward", "verdict",
    ]  # fmt: skip
    cells = row.split()
    # n_steps = 8 per agent, 2 agents: two rollouts of 16 reach 32 agent-steps exactly.
    assert cells[:4] == ["Basic", "vector", "PPO", "32"]
    assert cells[-2:] == ["0.9", "below"]
    assert written == f"wrote the learning curve to {plot}"
    with Image.open(plot) as image:
        assert image.size == (700, 400)


def test_train_parallel_route_with_masks_uses_maskable_ppo():
    target = resolve_target("GridWorld", {"n_agents": 2, "max_steps": 4})
    result = train(
        target, api="parallel", steps=32, seed=0, progress=False, ppo_kwargs={"n_epochs": 1}
    )
    assert (result.algorithm, result.api, result.timesteps) == ("MaskablePPO", "parallel", 32)
    # Episodes are cut at 4 steps: 2 agents x 32/2 steps gives at least 2 * (16 // 4 - 1).
    assert len(result.episode_rewards) >= 6
    assert result.mean_episode_reward == pytest.approx(np.mean(result.episode_rewards[-100:]))
    assert result.curve and result.curve[-1][0] == 32
    assert result.solved is False
    # The masks MaskablePPO read are the env's (1 = allowed), one row per agent.
    venv = result.model.get_env()
    masks = np.stack(venv.env_method("action_masks"))
    assert masks.shape == (2, 5) and masks.dtype == np.int8 and masks.any(axis=1).all()


def test_train_says_when_no_episode_finished(capsys, user_module):
    code, out, err = run(capsys, "train", "zooport_cli_user_envs:make_counter", "--kwargs",
                         '{"limit": 1000}', "--steps", "16", "--no-progress")  # fmt: skip
    assert code == 0, err
    header, row, note = out.splitlines()
    assert "nan" not in row and "none finished" in row and row.split()[-1] == "target"
    assert note == "no episode finished in 16 agent-steps: train for more --steps"


def test_train_parallel_with_two_teams_does_not_compare_with_one_teams_target(capsys):
    target = resolve_target("Tag", {"n_runners": 1, "n_taggers": 1})
    result = train(target, api="parallel", steps=64, progress=False,
                   ppo_kwargs={"n_steps": 16, "batch_size": 32, "n_epochs": 1})  # fmt: skip
    # Both teams under one policy: the mean mixes runners' and taggers' episodes, so the
    # taggers' target (against random runners) is not applied to it.
    assert result.shared == ("Runner?team=0", "Tagger?team=1")
    assert (result.expected_reward, result.solved) == (None, None)
    kwargs = '{"n_runners": 1, "n_taggers": 1}'
    code, out, err = run(capsys, "train", "Tag", "--api", "parallel", "--steps", "64",
                         "--kwargs", kwargs, "--no-progress")  # fmt: skip
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1].split()[-3:] == ["-", "no", "target"]
    assert lines[-1].startswith("Runner?team=0, Tagger?team=1 trained under one shared policy")
    assert "Tag's expected reward is one behaviour's against a random opponent" in lines[-1]


def test_train_without_matplotlib_is_a_usage_error(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, _, err = run(capsys, "train", "Basic", "--plot", "x.png")
    assert_one_line_error(code, err, "--plot needs matplotlib", PLOTS_HINT)


# ---------------------------------------------------------------------- entry points


def test_console_script_if_installed():
    script = shutil.which("zooport", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the zooport console script is not installed in this interpreter's bin")
    done = subprocess.run([script, "--plain", "list"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert [line.split()[0] for line in done.stdout.splitlines()[1:]] == list(default_registry)


def test_module_entry_point_unknown_env():
    done = run_module("info", "Basik")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "zooport: error: no environment 'Basik' in the registry; did you mean ['Basic']? "
        f"registered: {list(default_registry)}"
    )
