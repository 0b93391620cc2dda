"""Drive an environment with random, mask-respecting actions through one adapter.

Classes:
    PlayStats: what a :func:`play` run measured.

Functions:
    sample_action: a random action of a Gymnasium space that respects an action mask.
    progress_bar: a tqdm (or rich) progress bar on stderr, or nothing.
    save_gif: rgb_array frames as an animated GIF (Pillow).
    play: drive an environment through the raw core, ``GymEnv``, ``BehaviorVectorEnv`` or a
        PettingZoo adapter, with a progress bar, episode statistics and an optional GIF.

``zooport play`` (:mod:`zooport.cli`) prints what :func:`play` returns.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zooport.checks import one_line
from zooport.envs.arguments import check_seed
from zooport.errors import ArgumentError, ZooportError
from zooport.targets import Target, UsageError, check_output_path, require, reset_core

__all__ = ["APIS", "PlayStats", "sample_action", "play", "progress_bar", "save_gif"]

#: The adapters :func:`play` drives, by ``--api`` name.
APIS = ("raw", "gym", "vector", "parallel", "aec")
#: The file names ``record`` takes: :func:`save_gif` writes GIF files.
RECORD_SUFFIXES = (".gif",)
#: At most this many frames go into a ``record`` GIF (a longer run keeps every k-th frame).
_MAX_FRAMES = 500


@contextlib.contextmanager
def progress_bar(
    total: int, description: str, enabled: bool = True
) -> Iterator[Callable[[int], Any]]:
    """Yields ``update(n)``: a tqdm bar on stderr (or rich's, or nothing when not ``enabled``).

    Example:
        >>> with progress_bar(3, "work", enabled=False) as update:
        ...     update(3)
    """
    if enabled:
        try:
            from tqdm import tqdm
        except ImportError:
            pass
        else:
            with tqdm(total=total, desc=description, file=sys.stderr, leave=False) as bar:
                yield bar.update
            return
        try:
            from rich.progress import Progress
        except ImportError:
            pass
        else:
            with Progress(transient=True) as progress:
                task = progress.add_task(description, total=total)
                yield lambda n: progress.advance(task, n)
            return
    yield lambda n: None


def save_gif(
    frames: Sequence[np.ndarray | None], path: str | os.PathLike[str], fps: float = 30
) -> int:
    """Writes rgb_array ``frames`` (None entries skipped) as an endlessly looping GIF.

    Pillow stores a run of identical consecutive frames as one longer frame, so the file
    may hold fewer frames than it was given; it plays for the same time.

    Returns:
        The number of frames given (not None).

    Raises:
        UsageError: Pillow is not installed.
        ArgumentError: no frame to write.
    """
    image_module = require("PIL.Image", "plots", "writing a GIF")
    images = [
        image_module.fromarray(np.asarray(f, dtype=np.uint8)) for f in frames if f is not None
    ]
    if not images:
        raise ArgumentError(f"Expect at least one frame to write to {path}, actually: none")
    images[0].save(path, save_all=True, append_images=images[1:], duration=int(1000 / fps), loop=0)
    return len(images)


def sample_action(space: Any, mask: np.ndarray | None, rng: np.random.Generator) -> Any:
    """A uniform random action of ``space`` that never picks an action ``mask`` forbids.

    ``mask`` is the adapters' int8 mask (1 = allowed), flattened over the discrete branches;
    for a ``Dict(continuous, discrete)`` it applies to the discrete part.

    Example:
        >>> from gymnasium import spaces
        >>> rng = np.random.default_rng(0)
        >>> sample_action(spaces.Discrete(3), np.array([0, 0, 1], np.int8), rng)
        2
        >>> sample_action(spaces.MultiDiscrete([2, 3]), np.array([1, 0, 0, 1, 0]), rng).tolist()
        [0, 1]
    """
    from gymnasium import spaces

    if isinstance(space, spaces.Discrete):
        allowed = np.arange(int(space.n)) if mask is None else np.flatnonzero(mask)
        if allowed.size == 0:
            allowed = np.arange(int(space.n))
        return int(rng.choice(allowed)) + int(space.start)
    if isinstance(space, spaces.MultiDiscrete):
        nvec = np.asarray(space.nvec).reshape(-1)
        parts = (
            [None] * nvec.size if mask is None else np.split(np.asarray(mask), np.cumsum(nvec)[:-1])
        )
        values = [
            sample_action(spaces.Discrete(int(n)), p, rng) for n, p in zip(nvec, parts, strict=True)
        ]
        start = np.asarray(space.start).reshape(-1)
        return (np.asarray(values) + start).reshape(space.shape).astype(space.dtype)
    if isinstance(space, spaces.Box):
        low = np.where(np.isfinite(space.low), space.low, -1.0)
        high = np.where(np.isfinite(space.high), space.high, 1.0)
        return rng.uniform(low, high).astype(space.dtype)
    if isinstance(space, spaces.Dict):
        return {
            key: sample_action(sub, mask if key == "discrete" else None, rng)
            for key, sub in space.spaces.items()
        }
    return space.sample()


@dataclass
class PlayStats:
    """What one ``play`` run measured.

    Attributes:
        env: the environment's name.
        api: the adapter driven.
        steps: adapter steps taken (agent turns for ``aec``).
        agent_steps: agent decisions acted on.
        seconds: wall time of the loop.
        episode_rewards: the return of every episode that finished, in order.
        frames: frames written to ``record`` (0 without it).
    """

    env: str
    api: str
    steps: int
    agent_steps: int
    seconds: float
    episode_rewards: list[float]
    frames: int = 0

    @property
    def episodes(self) -> int:
        """The number of finished episodes."""
        return len(self.episode_rewards)

    @property
    def mean_episode_reward(self) -> float:
        """The mean return of the finished episodes (nan when none finished)."""
        return float(np.mean(self.episode_rewards)) if self.episode_rewards else float("nan")


class _Returns:
    """Running per-agent returns; ``end(key)`` records one finished episode."""

    def __init__(self) -> None:
        self.running: dict[Any, float] = {}
        self.finished: list[float] = []

    def add(self, key: Any, reward: float) -> None:
        self.running[key] = self.running.get(key, 0.0) + float(reward)

    def end(self, key: Any) -> None:
        self.finished.append(self.running.pop(key, 0.0))


def _single_agent_core(target: Target, behavior: str | None) -> tuple[Any, str]:
    from zooport.checks import single_agent_plan

    preset = target.gym_preset
    if behavior is not None and preset is not None and preset.get("behavior_name") != behavior:
        preset = None

    @functools.wraps(target.factory)  # the plan reads the factory's signature through this
    def make(**kwargs: Any) -> Any:
        return target.make(**kwargs)  # a factory returning no BaseEnv is a UsageError

    try:
        plan = single_agent_plan(make, preset=preset)
    except UsageError:
        raise
    except (ZooportError, TypeError, ValueError) as exc:
        raise UsageError(f"making {target.name} failed: {one_line(exc)}") from None
    choices = [b for b in plan.behaviors if behavior is None or b == behavior]
    if not choices:
        why = (
            plan.reason
            or f"behaviour {behavior!r} is not among the single-agent {list(plan.behaviors)}"
        )
        raise UsageError(
            f"--api gym needs a single-agent behaviour: {why}; use --api vector or parallel"
        )
    return target.make(**plan.kwargs), choices[0]


def _build_adapter(target: Target, api: str, behavior: str | None, record: bool) -> Any:
    render_mode = "rgb_array" if record else None
    try:
        if api == "raw":
            return target.make()
        if api == "gym":
            from zooport.adapters.gym_env import GymEnv

            core, behavior = _single_agent_core(target, behavior)
            return _wrap(GymEnv, core, render_mode, behavior_name=behavior)
        if api == "vector":
            from zooport.adapters.vector_env import BehaviorVectorEnv

            return _wrap(BehaviorVectorEnv, target.make(), render_mode, behavior_name=behavior)
        from zooport.adapters.pettingzoo_aec import PettingZooAECEnv
        from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv

        kind = PettingZooParallelEnv if api == "parallel" else PettingZooAECEnv
        return _wrap(kind, target.make(), render_mode)
    except (ZooportError, ValueError, TypeError) as exc:
        if isinstance(exc, UsageError):
            raise
        raise UsageError(f"--api {api} on {target.name}: {one_line(exc)}") from None


def _wrap(kind: type, core: Any, render_mode: str | None, **options: Any) -> Any:
    try:
        return kind(core, render_mode=render_mode, **options)
    except BaseException:
        core.close()
        raise


def _frame_of(env: Any, api: str) -> np.ndarray | None:
    if api == "raw":
        from zooport.adapters.core_access import render_core

        return render_core(env)
    frame = env.render()
    return None if frame is None else np.asarray(frame)


def play(
    target: Target,
    *,
    api: str = "raw",
    steps: int = 1000,
    seed: int = 0,
    behavior: str | None = None,
    record: str | os.PathLike[str] | None = None,
    progress: bool = True,
) -> PlayStats:
    """Drives ``target`` with random mask-respecting actions through one adapter.

    Args:
        target: the environment (see :func:`~zooport.targets.resolve_target`).
        api: one of :data:`APIS`.
        steps: adapter steps (agent turns for ``aec``).
        seed: seeds the environment and the random actions.
        behavior: the behaviour for ``gym`` and ``vector`` (None: the only one).
        record: write an animated GIF of rgb_array frames there (needs Pillow).
        progress: show a progress bar on stderr.

    Raises:
        UsageError: an unknown api, an adapter that does not apply, a missing Pillow, a
            ``record`` path that cannot be written (found before the run), or an
            environment that cannot render when ``record`` is given.
        ArgumentError: ``seed`` is not an int >= 0.

    Example:
        >>> from zooport.targets import resolve_target
        >>> stats = play(resolve_target("Basic"), steps=30, seed=0, progress=False)
        >>> stats.steps, stats.agent_steps
        (30, 30)
    """
    if not isinstance(api, str) or api not in APIS:
        raise UsageError(f"--api must be one of {list(APIS)}, got {api!r}")
    if steps < 1:
        raise UsageError(f"--steps must be a positive int, got {steps}")
    seed = check_seed(seed, "play")
    if record is not None:
        require("PIL.Image", "plots", "--record")
        check_output_path(record, "--record", RECORD_SUFFIXES)
    env = _build_adapter(target, api, behavior, record is not None)
    rng = np.random.default_rng(seed)
    returns = _Returns()
    frames: list[np.ndarray] = []
    stride = max(1, math.ceil(steps / _MAX_FRAMES))
    agent_steps = 0
    try:
        step = _make_stepper(env, api, seed, rng, returns)
        if record is not None:
            first = _frame_of(env, api)
            if first is None:
                raise UsageError(f"{target.name} does not render rgb_array frames; drop --record")
            frames.append(first)
        began = time.perf_counter()
        with progress_bar(steps, f"{target.name} ({api})", progress) as update:
            for t in range(steps):
                agent_steps += step()
                if record is not None and (t + 1) % stride == 0:
                    frames.append(_frame_of(env, api))
                update(1)
        seconds = time.perf_counter() - began
    finally:
        with contextlib.suppress(Exception):
            env.close()
    if record is not None:
        save_gif(frames, record, fps=30)
    return PlayStats(target.name, api, steps, agent_steps, seconds, returns.finished, len(frames))


def _make_stepper(env: Any, api: str, seed: int, rng: np.random.Generator, returns: _Returns):
    """Resets ``env`` and returns ``step() -> agent decisions acted on``."""
    if api == "raw":
        from zooport.demo import random_actions

        reset_core(env, seed)
        names = list(env.behavior_specs)

        def step_raw() -> int:
            acted = 0
            for name in names:
                decision, terminal = env.get_steps(name)
                for agent, reward in zip(
                    terminal.agent_id.tolist(), terminal.reward.tolist(), strict=True
                ):
                    returns.add((name, agent), reward)
                    returns.end((name, agent))
                for agent, reward in zip(
                    decision.agent_id.tolist(), decision.reward.tolist(), strict=True
                ):
                    returns.add((name, agent), reward)
                spec = env.behavior_specs[name].action_spec
                env.set_actions(
                    name, random_actions(spec, decision.action_mask, len(decision), rng)
                )
                acted += len(decision)
            env.step()
            return acted

        return step_raw
    if api == "gym":
        state = {"info": env.reset(seed=seed)[1]}

        def step_gym() -> int:
            action = sample_action(env.action_space, state["info"].get("action_mask"), rng)
            _, reward, terminated, truncated, info = env.step(action)
            returns.add(0, reward)
            if terminated or truncated:
                returns.end(0)
                _, info = env.reset()
            state["info"] = info
            return 1

        return step_gym
    if api == "vector":
        _, first_info = env.reset(seed=seed)
        state = {"info": first_info}
        single = env.single_action_space

        def step_vector() -> int:
            masks = state["info"].get("action_mask")
            actions = [
                sample_action(single, None if masks is None else masks[i], rng)
                for i in range(env.num_envs)
            ]
            if isinstance(actions[0], dict):
                batch: Any = {k: np.stack([a[k] for a in actions]) for k in actions[0]}
            else:
                batch = np.stack([np.asarray(a) for a in actions])
            _, reward, terminated, truncated, info = env.step(batch)
            decided = np.asarray(info.get("decided", np.ones(env.num_envs, bool)))
            for i, r in enumerate(reward.tolist()):
                returns.add(i, r)
            for i in np.flatnonzero(terminated | truncated).tolist():
                returns.end(i)
            state["info"] = info
            return int(decided.sum())

        return step_vector
    if api == "parallel":
        obs, _ = env.reset(seed=seed)
        state = {"obs": obs}

        def step_parallel() -> int:
            if not env.agents:
                state["obs"], _ = env.reset()
            actions = {
                agent: sample_action(env.action_space(agent), _mask_of(state["obs"][agent]), rng)
                for agent in env.agents
            }
            obs, rewards, terminations, truncations, _ = env.step(actions)
            for agent, r in rewards.items():
                returns.add(agent, r)
                if terminations[agent] or truncations[agent]:
                    returns.end(agent)
            state["obs"] = obs
            return len(actions)

        return step_parallel
    env.reset(seed=seed)

    def step_aec() -> int:
        if not env.agents:
            env.reset()
        agent = env.agent_selection
        obs, reward, terminated, truncated, _ = env.last()
        returns.add(agent, reward)
        if terminated or truncated:
            returns.end(agent)
            env.step(None)
            return 0
        env.step(sample_action(env.action_space(agent), _mask_of(obs), rng))
        return 1

    return step_aec


def _mask_of(obs: Any) -> np.ndarray | None:
    return obs.get("action_mask") if isinstance(obs, dict) else None
