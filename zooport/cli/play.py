"""``zooport play``: random or a model's actions through one adapter, with statistics and a GIF."""

from __future__ import annotations

import contextlib
import functools
import math
import os
import sys
import time
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from zooport.checks import single_agent_plan
from zooport.cli.common import Player, RolloutStats, UsageError, check_output_path, require
from zooport.cli.targets import Target, as_usage

_ADAPTERS = {"raw": "", "gym": "GymEnv", "vector": "BehaviorVectorEnv",
             "parallel": "PettingZooParallelEnv", "aec": "PettingZooAECEnv"}  # fmt: skip
APIS = tuple(_ADAPTERS)


def _build_adapter(target: Target, api: str, behavior: str | None, record: bool) -> Any:
    from zooport import adapters

    if api == "raw":
        return target.make()
    kwargs: Mapping[str, Any] = {}
    if api == "gym":  # a single-agent behaviour, through the built-in's preset if it names it
        preset = target.gym_preset
        if behavior is not None and preset is not None and preset.get("behavior_name") != behavior:
            preset = None
        # The plan reads the factory's signature; Target.make makes a non-BaseEnv a UsageError.
        make = functools.wraps(target.factory)(lambda **kwargs: target.make(**kwargs))
        with as_usage(f"making {target.name} failed"):
            plan = single_agent_plan(make, preset=preset)
        choices = [b for b in plan.behaviors if behavior in (None, b)]
        if not choices:
            why = plan.reason or (
                f"behaviour {behavior!r} is not among the single-agent {list(plan.behaviors)}"
            )
            raise UsageError(
                f"--api gym needs a single-agent behaviour: {why}; use --api vector or parallel"
            )
        kwargs, behavior = plan.kwargs, choices[0]
    core = target.make(**kwargs)
    options = {"behavior_name": behavior} if api in ("gym", "vector") else {"mask_in_info": True}
    try:
        with as_usage(f"--api {api} on {target.name}"):
            adapter = getattr(adapters, _ADAPTERS[api])
            return adapter(core, render_mode="rgb_array" if record else None, **options)
    except BaseException:
        core.close()
        raise


def check_play_api(api: Any, *, with_model: bool) -> None:
    if not isinstance(api, str) or api not in APIS:
        raise UsageError(f"--api must be one of {list(APIS)}, got {api!r}")
    if with_model and api == "raw":
        raise UsageError(
            f"--model acts through --api {', '.join(APIS[1:-1])} or {APIS[-1]}, got --api raw: "
            "the raw core's observations are not those a policy learns from"
        )


def play(
    target: Target, *, api: str = "raw", steps: int = 1000, seed: int = 0,
    behavior: str | None = None, record: str | os.PathLike[str] | None = None,
    progress: bool = True, model: Any = None, deterministic: bool = True,
    every: int | None = None, fps: float = 30,
) -> RolloutStats:  # fmt: skip
    """Drives ``target`` through ``api`` with random or ``model``'s actions; ``record``: a GIF."""
    from zooport.adapters.core_access import render_core

    try:
        from tqdm import tqdm
    except ImportError:  # no progress bar
        progress = False
    check_play_api(api, with_model=model is not None)
    if record is not None:
        image = require("PIL.Image", "plots", "--record")
        check_output_path(record, "--record", (".gif",))
    env = _build_adapter(target, api, behavior, record is not None)
    frames: list[Any] = []
    every = every or max(1, math.ceil(steps / 500))
    agent_steps = 0
    try:
        if api == "gym":
            spaces = [("the agent", env.observation_space, env.action_space)]
        elif api == "vector":
            spaces = [("each slot", env.single_observation_space, env.single_action_space)]
        elif model is not None:  # the raw core has no spaces (and no model)
            spaces = [
                (a, env.observation_space(a), env.action_space(a)) for a in env.possible_agents
            ]
        for who, observation_space, action_space in spaces if model is not None else ():
            if observation_space != model.observation_space or action_space != model.action_space:
                raise UsageError(
                    f"--model: expected {target.name} through --api {api} to give the model's "
                    f"observations {model.observation_space} and actions {model.action_space}, "
                    f"got {observation_space} and {action_space} for {who}"
                )
        player = Player(env, api, seed, model, deterministic)
        if record is not None:
            frames.append(render_core(env))
            if frames[0] is None:
                raise UsageError(f"{target.name} does not render rgb_array frames; drop --record")
        ticks: Iterable[int] = range(1, steps + 1)
        if progress:
            ticks = tqdm(ticks, desc=f"{target.name} ({api})", file=sys.stderr, leave=False)
        began = time.perf_counter()
        for t in ticks:
            agent_steps += player.step()
            if record is not None and t % every == 0:
                frames.append(render_core(env))
        seconds = time.perf_counter() - began
    finally:
        with contextlib.suppress(Exception):
            env.close()
    if record is not None:  # a looping GIF of the frames rendered (the first one was)
        gif = [image.fromarray(np.asarray(f, dtype=np.uint8)) for f in frames if f is not None]
        gif[0].save(record, save_all=True, append_images=gif[1:], duration=int(1000 / fps), loop=0)
    policy = "random" if model is None else type(model).__name__
    return RolloutStats(
        target.name, api, steps, agent_steps, seconds, player.finished, len(frames), policy
    )
