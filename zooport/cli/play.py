"""Drive an environment with random, mask-respecting actions through one adapter.

Classes:
    PlayStats: what a :func:`play` run measured.

Functions:
    play: drive an environment through the raw core, ``GymEnv``, ``BehaviorVectorEnv`` or a
        PettingZoo adapter, with a progress bar, episode statistics and an optional GIF.

``zooport play`` (:mod:`zooport.cli.app`) prints what :func:`play` returns.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zooport.checks import one_line
from zooport.cli.common import (
    EpisodeReturns,
    UsageError,
    check_output_path,
    progress_bar,
    random_core_step,
    require,
    sample_action,
    save_gif,
)
from zooport.cli.targets import Target
from zooport.envs.arguments import check_seed
from zooport.envs.capabilities import reset_seeded
from zooport.errors import ZooportError

__all__ = ["APIS", "PlayStats", "play"]

#: The adapters :func:`play` drives, by ``--api`` name.
APIS = ("raw", "gym", "vector", "parallel", "aec")
#: The file names ``record`` takes: GIF files (:func:`~zooport.cli.common.save_gif`).
RECORD_SUFFIXES = (".gif",)
#: At most this many frames go into a ``record`` GIF (a longer run keeps every k-th frame).
_MAX_FRAMES = 500


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


# --------------------------------------------------------------------------- who acts


class _RandomActor:
    """Uniform random actions that respect the adapter's masks (1 = allowed)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def one(self, space: Any, obs: Any, mask: np.ndarray | None) -> Any:
        return sample_action(space, mask, self.rng)

    def many(self, spaces: Sequence[Any], observations: Any, masks: Any) -> list:
        """One action per agent; ``masks`` is None or indexable by agent (rows or a list)."""
        return [
            sample_action(space, None if masks is None else masks[i], self.rng)
            for i, space in enumerate(spaces)
        ]


def _mask_of(obs: Any, info: Any) -> np.ndarray | None:
    """The adapter's mask: ``obs["action_mask"]``, else ``info["action_mask"]`` (or None)."""
    if isinstance(obs, dict) and "action_mask" in obs:
        return obs["action_mask"]
    return info.get("action_mask") if isinstance(info, dict) else None


# --------------------------------------------------------------------------- adapters


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


# --------------------------------------------------------------------------- play


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
        target: the environment (see :func:`~zooport.cli.targets.resolve_target`).
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
        >>> from zooport.cli.targets import resolve_target
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
    actor = _RandomActor(np.random.default_rng(seed))
    returns = EpisodeReturns()
    frames: list[np.ndarray | None] = []
    stride = max(1, math.ceil(steps / _MAX_FRAMES))
    agent_steps = 0
    try:
        step = _make_stepper(env, api, seed, actor, returns)
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


def _make_stepper(
    env: Any, api: str, seed: int, actor: _RandomActor, returns: EpisodeReturns
) -> Callable[[], int]:
    """Resets ``env`` and returns ``step() -> agent decisions acted on``."""
    if api == "raw":
        reset_seeded(env, seed)
        names = list(env.behavior_specs)
        return functools.partial(random_core_step, env, names, actor.rng, returns)
    if api == "gym":
        state = dict(zip(("obs", "info"), env.reset(seed=seed), strict=True))

        def step_gym() -> int:
            action = actor.one(env.action_space, state["obs"], state["info"].get("action_mask"))
            obs, reward, terminated, truncated, info = env.step(action)
            returns.add(0, reward)
            if terminated or truncated:
                returns.end(0)
                obs, info = env.reset()
            state["obs"], state["info"] = obs, info
            return 1

        return step_gym
    if api == "vector":
        state = dict(zip(("obs", "info"), env.reset(seed=seed), strict=True))
        single = env.single_action_space

        def step_vector() -> int:
            masks = state["info"].get("action_mask")
            actions = actor.many([single] * env.num_envs, state["obs"], masks)
            if isinstance(actions[0], dict):
                batch: Any = {k: np.stack([a[k] for a in actions]) for k in actions[0]}
            else:
                batch = np.stack([np.asarray(a) for a in actions])
            obs, reward, terminated, truncated, info = env.step(batch)
            decided = np.asarray(info.get("decided", np.ones(env.num_envs, bool)))
            for i, r in enumerate(reward.tolist()):
                returns.add(i, r)
            for i in np.flatnonzero(terminated | truncated).tolist():
                returns.end(i)
            state["obs"], state["info"] = obs, info
            return int(decided.sum())

        return step_vector
    if api == "parallel":
        state = dict(zip(("obs", "infos"), env.reset(seed=seed), strict=True))

        def step_parallel() -> int:
            if not env.agents:
                state["obs"], state["infos"] = env.reset()
            agents = list(env.agents)
            obs, infos = state["obs"], state["infos"]
            masks = [_mask_of(obs[a], infos.get(a)) for a in agents]
            chosen = actor.many(
                [env.action_space(a) for a in agents], [obs[a] for a in agents], masks
            )
            obs, rewards, terminations, truncations, infos = env.step(
                dict(zip(agents, chosen, strict=True))
            )
            for agent, r in rewards.items():
                returns.add(agent, r)
                if terminations[agent] or truncations[agent]:
                    returns.end(agent)
            state["obs"], state["infos"] = obs, infos
            return len(agents)

        return step_parallel
    env.reset(seed=seed)

    def step_aec() -> int:
        if not env.agents:
            env.reset()
        agent = env.agent_selection
        obs, reward, terminated, truncated, info = env.last()
        returns.add(agent, reward)
        if terminated or truncated:
            returns.end(agent)
            env.step(None)
            return 0
        env.step(actor.one(env.action_space(agent), obs, _mask_of(obs, info)))
        return 1

    return step_aec
