"""``make demo`` (``python -m zooport.demo``): train two built-ins through two adapters on CPU.
A table, ``learning_curves.png``, GIFs and ``results.json``; exit 1 if a run misses its reward."""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from zooport.cli.common import cell, format_table, markdown_table, rollout
from zooport.cli.play import play
from zooport.cli.targets import resolve_target
from zooport.cli.training import plot_curve, train
from zooport.envs.registry import default_registry


@dataclass(frozen=True)
class DemoRun:
    """One training run. ``sampled_eval``: evaluate and record the sampling policy, as trained;
    ``show_kwargs``: the core of both (else ``kwargs``); ``quick``: what ``--quick`` replaces."""

    env: str
    kwargs: Mapping[str, Any]
    api: str
    adapter: str
    steps: int
    ppo_kwargs: Mapping[str, Any]
    eval_episodes: int
    quick: Mapping[str, Any]
    stop_at_expected: bool = True
    hold: int = 3
    sampled_eval: bool = False
    copies: int = 1
    camera_cnn: bool = False
    show_kwargs: Mapping[str, Any] | None = None
    gif_steps: int = 100
    gif_every: int = 1
    gif_fps: float = 15


#: The main job's runs; budgets measured on a 2-core machine.
RUNS: tuple[DemoRun, ...] = (
    DemoRun(
        env="BallBalance", kwargs={"n_agents": 12}, api="vector", adapter="SB3VecEnv",
        steps=200_000,  # a safety margin: the running mean reaches 18 at about 45k
        ppo_kwargs={"n_steps": 256, "batch_size": 512, "n_epochs": 10}, eval_episodes=48,
        quick={"steps": 1536, "ppo_kwargs": {"n_steps": 64, "batch_size": 256, "n_epochs": 1}},
        gif_steps=200, gif_every=2,
    ),
    DemoRun(
        # 16 one-agent envs side by side: with termination_mode="any" (SuperSuit needs every
        # agent in every step) an env of several agents would cut short all but the first.
        env="GridWorld", kwargs={"n_agents": 1}, copies=16, api="parallel",
        adapter="PettingZooParallelEnv x16 + SuperSuit", steps=450_560,
        ppo_kwargs={"n_steps": 128, "batch_size": 256, "n_epochs": 4, "ent_coef": 0.0},
        eval_episodes=1600,
        quick={"steps": 1024, "ppo_kwargs": {"n_steps": 32, "batch_size": 128, "n_epochs": 1}},
        # The deterministic policy lags the sampled one (an agent whose likeliest move is
        # blocked repeats it), so the sampled one is evaluated; seed 0 stops at 264k.
        hold=5, sampled_eval=True, camera_cnn=True, show_kwargs={"n_agents": 16}, gif_steps=60,
        gif_fps=6,
    ),
)  # fmt: skip


@dataclass
class DemoResult:
    """One run of the demo and its :class:`~zooport.cli.training.TrainResult`."""

    run: DemoRun
    agents: int
    result: Any
    gif: Path | None = None
    gif_frames: int = 0


@functools.cache
def camera_cnn() -> type:
    """An SB3 features extractor for GridWorld's ``Dict(camera, goal)``: two 3x3 convolutions
    over the camera and the goal as two channels (SB3's ``NatureCNN`` needs 36x36 pixels)."""
    import torch
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
    from torch import nn

    class CameraCNN(BaseFeaturesExtractor):
        def __init__(self, observation_space: Any, channels: int = 16) -> None:
            rows, cols, colours = observation_space["camera"].shape
            goals = observation_space["goal"].shape[0]
            super().__init__(observation_space, features_dim=2 * channels * rows * cols)
            self.conv = nn.Sequential(
                nn.Conv2d(colours + goals, channels, 3, padding=1), nn.ReLU(),
                nn.Conv2d(channels, 2 * channels, 3, padding=1), nn.ReLU(), nn.Flatten(),
            )  # fmt: skip

        def forward(self, observations: dict[str, Any]) -> Any:
            camera = observations["camera"].permute(0, 3, 1, 2)  # channels first
            goal = observations["goal"][:, :, None, None].expand(-1, -1, *camera.shape[2:])
            return self.conv(torch.cat([camera, goal], dim=1))

    return CameraCNN


def run_demo(
    out: str | os.PathLike[str], *, quick: bool = False, seed: int = 0, progress: bool = True,
    runs: Sequence[DemoRun] = RUNS,
) -> list[DemoResult]:  # fmt: skip
    import torch

    torch.set_num_threads(1)  # a second thread only contends with the simulation
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    results: list[DemoResult] = []
    for number, run in enumerate(runs, 1):
        if quick:
            run = replace(run, eval_episodes=4, stop_at_expected=False,
                          gif_steps=min(run.gif_steps, 20), **run.quick)  # fmt: skip
        agents = int(run.kwargs.get("n_agents", 1)) * run.copies
        print(f"[{number}/{len(runs)}] {run.env}: training through {run.adapter}, {agents} "
              f"agents, up to {run.steps:,} agent-steps", flush=True)  # fmt: skip
        target = resolve_target(run.env, run.kwargs)
        ppo_kwargs = dict(run.ppo_kwargs)
        if run.camera_cnn:
            ppo_kwargs["policy_kwargs"] = {"features_extractor_class": camera_cnn(),
                                           "net_arch": [64]}  # fmt: skip
        shown = resolve_target(run.env, run.show_kwargs or run.kwargs)
        result = train(
            target, api=run.api, steps=run.steps, seed=seed, progress=progress,
            eval_episodes=run.eval_episodes, ppo_kwargs=ppo_kwargs, copies=run.copies,
            hold=run.hold, stop_reward=target.expected_reward if run.stop_at_expected else None,
            eval_target=shown, deterministic=not run.sampled_eval,
        )  # fmt: skip
        print(f"    {_stop_line(result, run.steps, run.hold)}", flush=True)
        gif = directory / f"{run.env}.gif"
        recorded = play(
            shown, api="vector", steps=run.gif_steps, seed=seed + 2, record=gif, progress=False,
            model=result.model, deterministic=not run.sampled_eval, every=run.gif_every,
            fps=run.gif_fps,
        )  # fmt: skip
        results.append(DemoResult(run, agents, result, gif, recorded.frames))
    plot_curve([r.result for r in results], directory / "learning_curves.png")
    summaries = [{
        "env": r.run.env, "adapter": r.run.adapter, "algorithm": t.algorithm,
        "agents": r.agents, "steps": t.timesteps, "stopped_at": t.stopped_at,
        "seconds": round(t.seconds, 2), "agent_steps_per_second": round(t.agent_steps_per_second),
        "mean_episode_reward": None if math.isnan(mean) else round(mean, 4),
        "eval_episodes": t.eval_episodes, "expected_reward": t.expected_reward,
        "passed": t.solved is True, "gif": r.gif.name if r.gif else None,
        "gif_frames": r.gif_frames,
    } for r in results for t, mean in [(r.result, r.result.mean_episode_reward)]]  # fmt: skip
    (directory / "results.json").write_text(
        json.dumps({"quick": quick, "runs": summaries}, indent=2) + "\n"
    )
    return results


def _stop_line(result: Any, budget: int, hold: int) -> str:
    if result.stopped_at is None:
        return f"trained the whole budget: {result.timesteps:,} agent-steps"
    return (
        f"stopped at agent-step {result.stopped_at:,} of {budget:,}: the mean of the last 100 "
        f"training episodes held the expected reward ({result.expected_reward:g}) for "
        f"{hold} rollouts"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser("python -m zooport.demo", description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="tiny budgets, no reward gate")
    mode.add_argument("--random", action="store_true", help="the random-rollout table only")
    parser.add_argument("--out", default="out/demo", help="output directory (out/demo)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=2000, help="--random: core steps per env")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.seed < 0:
        parser.error(f"--steps must be positive and --seed >= 0, got {args.steps}, {args.seed}")
    if args.random:  # the random-rollout table of every registered environment
        rows = []
        for identifier in default_registry:
            entry = default_registry[identifier]
            core = entry.make(seed=args.seed)
            try:
                stats = rollout(core, args.steps, args.seed)
                behaviours = ", ".join(core.behavior_specs)
            finally:
                core.close()
            rows.append([
                identifier, behaviours, str(stats.agents), str(stats.steps),
                f"{stats.agent_steps_per_second:,.0f}", str(stats.episodes),
                f"{stats.mean_episode_reward:.3f}", str(entry.expected_reward),
            ])  # fmt: skip
        headers = ["environment", "behaviours", "agents", "steps", "agent-steps/s", "episodes",
                   "mean episode reward (random)", "expected reward (trained)"]  # fmt: skip
        print("\n".join(markdown_table(headers, rows)))
        return 0

    began = time.perf_counter()
    progress = not args.no_progress and sys.stderr.isatty()
    results = run_demo(args.out, quick=args.quick, seed=args.seed, progress=progress)
    headers = ["env", "adapter", "algorithm", "agents", "steps", "wall s", "agent-steps/s",
               "mean episode reward (eval)", "expected", "verdict"]  # fmt: skip
    rows = [[
        r.run.env, r.run.adapter, t.algorithm, str(r.agents), f"{t.timesteps:,}",
        f"{t.seconds:.1f}", f"{t.agent_steps_per_second:,.0f}",
        f"{t.mean_episode_reward:.3f} ({t.eval_episodes} ep.)", cell(t.expected_reward), t.verdict,
    ] for r in results for t in [r.result]]  # fmt: skip
    print(f"\n{format_table(headers, rows)}\n")
    for r in results:
        print(f"{r.run.env}: {r.gif_frames} frames of the trained policy in {r.gif}")
    print(f"learning curves in {Path(args.out) / 'learning_curves.png'}")
    print(f"demo finished in {time.perf_counter() - began:.0f} s")
    missed = [r.run.env for r in results if not r.result.solved]
    if args.quick:
        print("--quick: tiny budgets, so the rewards are not checked")
    elif missed:
        print(f"below the expected reward: {', '.join(missed)}", file=sys.stderr)
        return 1
    return 0
