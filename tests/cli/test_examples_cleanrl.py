"""examples/cleanrl_ppo_vector.py: CleanRL-style PPO over BehaviorVectorEnv, short mode.

The script runs as a user would run it (a subprocess, warnings as errors); its printed
episode statistics are checked against BallBalance's reward rule.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.support.paths import EXAMPLES, load_script

pytest.importorskip("torch")

EXAMPLE = EXAMPLES / "cleanrl_ppo_vector.py"
LINE = re.compile(
    r"iteration=(\d+), global_step=(\d+), SPS=(\d+), episodes=(\d+), "
    r"episodic_return=(-?[\d.]+), episodic_length=([\d.]+)"
)


def test_short_mode_arguments():
    example = load_script(EXAMPLE, "cleanrl_ppo_vector")
    args = example.parse_args(["--short", "--seed", "7", "--anneal-lr", "false"])
    assert (args.seed, args.anneal_lr, args.num_agents) == (7, False, 12)
    assert (args.num_steps, args.batch_size, args.minibatch_size) == (48, 576, 144)
    assert (args.num_iterations, args.max_steps, args.short) == (2, 40, True)
    full = example.parse_args([])
    assert (full.num_steps, full.num_iterations, full.short) == (256, 100_000 // (12 * 256), False)


def test_short_run_prints_consistent_episode_statistics():
    env = {**os.environ, "ZOOPORT_EXAMPLE_SHORT": "1"}
    out = subprocess.run(
        [sys.executable, "-W", "error", str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    rows = [tuple(float(x) for x in m.groups()) for m in LINE.finditer(out.stdout)]
    assert [int(r[0]) for r in rows] == [1, 2], out.stdout
    assert [int(r[1]) for r in rows] == [576, 1152]  # 12 slots x 48 steps per iteration
    for _, _, sps, episodes, ret, length in rows:
        assert sps > 0 and episodes >= 1
        # BallBalance: +0.1 per step on the platform; the step the ball falls pays -1
        # instead. So an episode of l steps returns 0.1 l (held until the 40-step limit) or
        # 0.1 (l - 1) - 1 (fell), and a mean of episodes lies between the two lines (up to
        # the printed rounding: 0.05 in the length, 0.0005 in the return).
        assert 1 <= length <= 40
        slack = 0.1 * 0.05 + 0.0005 + 1e-6
        assert 0.1 * length - 1.1 - slack <= ret <= 0.1 * length + slack, (ret, length)
    assert re.search(r"BallBalance x12: 1152 steps in [\d.]+ s \(\d+ SPS\)", out.stdout)
