"""``zooport list`` and ``zooport info``: what an environment is, found by making and running it."""

from __future__ import annotations

import argparse
import contextlib
import functools
import re
from typing import Any

from zooport.checks import one_line, single_agent_plan
from zooport.cli.common import Output, cell, rollout
from zooport.cli.targets import Target, parse_kwargs, resolve_target
from zooport.envs.base_env import BaseEnvLike
from zooport.envs.batched_env import BatchedEnv
from zooport.envs.capabilities import reset_core
from zooport.envs.registry import default_registry


def _brief_action(spec: Any) -> str:
    continuous, branches = spec.continuous_size, tuple(spec.discrete_branches)
    if continuous and branches:
        return f"hybrid(continuous={continuous}, discrete={branches})"
    if branches:
        return f"discrete{branches}" if len(branches) > 1 else f"discrete({branches[0]})"
    return f"continuous({continuous})"


def _agents(n: int) -> str:
    return f"{n} agent" if n == 1 else f"{n} agents"


def _first_steps(core: BaseEnvLike) -> dict[str, tuple[Any, Any]]:
    reset_core(core, 0)
    return {b: (spec, core.get_steps(b)[0]) for b, spec in core.behavior_specs.items()}


def cmd_list(args: argparse.Namespace, out: Output) -> int:
    """``zooport list``: every registered environment, one row each."""
    rows = []
    for identifier in default_registry:
        entry = default_registry[identifier]
        try:
            core = resolve_target(identifier).make(seed=0)
        except Exception as exc:  # a remote or broken entry still gets its row
            rows.append([identifier, f"({one_line(exc)[:60]})", "-", "-", "-", "-"])
            continue
        try:
            first = _first_steps(core)
        finally:
            core.close()
        specs = [spec for spec, _ in first.values()]
        rows.append([
            identifier,
            "; ".join(f"{b} x{len(decisions)}" for b, (_, decisions) in first.items()),
            "; ".join(_brief_action(s.action_spec) for s in specs),
            "; ".join(" + ".join("x".join(map(str, o.shape)) for o in s.observation_specs)
                      for s in specs),
            cell(entry.expected_reward), cell(getattr(entry, "max_episode_steps", None), ""),
        ])  # fmt: skip
    out.table(["env", "behaviours x agents", "actions", "observations", "expected reward",
               "max steps"], rows)  # fmt: skip
    return 0


def _side_channel_use(core: BaseEnvLike) -> list[list[str]]:
    # The side-channel keys a BatchedEnv asks for and records in 300 random steps.
    if not isinstance(core, BatchedEnv):
        return [["-", "-", "not a BatchedEnv: only its own side_channels are known"]]
    params: dict[str, None] = {}  # the keys in the order seen
    stats: dict[str, None] = {}
    for method, seen in (("environment_parameter", params), ("record_stat", stats)):
        setattr(core, method, functools.partial(_noting, seen, getattr(core, method)))
    rollout(core, 300, seed=0)
    return [
        ["EngineConfigurationChannel", "reads", "engine settings, kept in env.engine_config"],
        ["EnvironmentParametersChannel", "reads",
         ", ".join(params) or "no parameter seen in a 300-step random run"],
        ["FloatPropertiesChannel", "reads/sends", "properties either end sets"],
        ["StatsSideChannel", "sends", ", ".join(stats) or "no statistic seen in a 300-step run"],
    ]  # fmt: skip


def _adapter_rows(target: Target, first: dict[str, tuple[Any, Any]]) -> list[list[str]]:
    counts = {b: len(decisions) for b, (_, decisions) in first.items()}
    plan = single_agent_plan(target.factory, preset=target.gym_preset)
    how = ", ".join(f"{k}={v!r}" for k, v in plan.kwargs.items())
    gym = ["yes", ", ".join(plan.behaviors) + (f" with {how}" if how else "")]
    several = "; pick a behaviour (--behavior)" if len(first) > 1 else ""
    hybrid = [b for b, (s, _) in first.items() if s.action_spec.continuous_size
              and s.action_spec.discrete_size]  # fmt: skip
    return [
        ["raw", "BaseEnv", "yes", ", ".join(f"{b}: {_agents(n)}" for b, n in counts.items())],
        ["gym", "GymEnv", *(gym if plan.behaviors else ["no", plan.reason])],
        ["vector", "BehaviorVectorEnv, SB3VecEnv", "yes", f"one slot per agent{several}"],
        ["parallel", "PettingZooParallelEnv", "yes", _agents(sum(counts.values()))],
        ["aec", "PettingZooAECEnv", "yes", "agents act in turn, the core steps once a cycle"],
        ["train", "SB3 PPO / MaskablePPO", "no" if hybrid else "yes",
         f"hybrid actions in {hybrid}: SB3 has no hybrid policy" if hybrid
         else "--api vector or parallel"],
    ]  # fmt: skip


def _noting(seen: dict[str, None], method: Any, key: str, *args: Any, **kwargs: Any) -> Any:
    seen[key] = None
    return method(key, *args, **kwargs)


def cmd_info(args: argparse.Namespace, out: Output) -> int:
    """``zooport info ENV``: behaviour specs, side channels and the adapters that apply."""
    from zooport.adapters.core_access import render_core

    target = resolve_target(args.env, parse_kwargs(args.kwargs))
    core = target.make()
    try:
        first = _first_steps(core)
        renders = False
        with contextlib.suppress(Exception):
            renders = render_core(core) is not None
        steps: Any = getattr(target.entry, "max_episode_steps", None)
        if not steps and isinstance(core, BatchedEnv):
            # A BatchedEnv's own limit per behaviour (max_steps=, _add_behavior(max_steps=)).
            limits = {b: s.max_steps for b, s in core._behaviors.items()}
            steps = next(iter(limits.values()), 0)
            if len(set(limits.values())) > 1:
                steps = ", ".join(f"{b}: {n or '-'}" for b, n in limits.items())
        core_type, steps = type(core), steps or getattr(type(core), "max_episode_steps", None)
        channels = _side_channel_use(core)  # after the first steps: it steps the core
    finally:
        core.close()
    # The class's own docstring: a subclass without one is not described by its base's.
    entry = target.entry
    description = entry.description if entry is not None else core_type.__dict__.get("__doc__")
    summary = plain_text(description.strip().splitlines()[0]) if description else "(no docstring)"
    print(f"{target.name}: {summary}")
    print(
        f"class {core_type.__module__}.{core_type.__qualname__}; expected reward "
        f"{cell(target.expected_reward)}; max episode steps {steps or '-'}; "
        f"renders rgb_array: {'yes' if renders else 'no'}"
    )
    rows = []
    for b, (spec, decisions) in first.items():
        mask = "no mask" if decisions.action_mask is None else "masked"
        rows.append([b, str(len(decisions)), "action", _brief_action(spec.action_spec), "-",
                     mask, "-"])  # fmt: skip
        for obs in spec.observation_specs:
            props = ", ".join(
                getattr(p, "name", str(p)) or str(int(p)) for p in obs.dimension_property
            )
            rows.append(["", "", "observation", obs.name, str(tuple(obs.shape)),
                         obs.observation_type.name, props])  # fmt: skip
    tables = (
        ("Behaviour specs", ["behaviour", "agents", "kind", "name / spec", "shape", "type",
                             "dimension props"], rows),
        ("Side channels", ["side channel", "direction", "keys"], channels),
        ("Adapters", ["api", "adapter", "applies", "note"], _adapter_rows(target, first)),
    )  # fmt: skip
    for title, headers, table in tables:
        print()
        out.table(headers, table, title=title)
    return 0


def plain_text(rst: str) -> str:
    """reStructuredText's inline markup as plain text."""
    text = re.sub(r":[\w:.-]+:`~[^`]*?([^.`]+)`", r"\1", rst)  # :class:`~a.b.C` -> C
    text = re.sub(r":[\w:.-]+:`([^`]+)`", r"\1", text)  # :func:`a.b` -> a.b
    return re.sub(r"``?([^`]+)``?", r"\1", text)  # ``x`` and `x` -> x
