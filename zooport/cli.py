"""The ``zooport`` command line: list, inspect, play, check, benchmark and train environments.

Classes:
    UsageError: a mistake the user can fix (unknown environment, bad option or JSON, a
        missing optional dependency); ``main`` prints it as one line and exits 2.
    Target: an environment to work on: its name, a factory and its registry entry.
    PlayStats: what a ``play`` run measured.
    TrainResult: what a ``train`` run measured, with its learning curve.

Functions:
    main: the entry point (``zooport = "zooport.cli:main"``; also ``python -m zooport.cli``).
    resolve_target: a registry identifier or ``module:attr`` (plus keyword arguments) as a
        :class:`Target`.
    sample_action: a random action of a Gymnasium space that respects an action mask.
    play: drive an environment with random mask-respecting actions through one adapter.
    train: SB3 PPO (sb3-contrib MaskablePPO when the behaviour has action masks) through the
        vector or the PettingZoo route, with a progress bar and a learning curve.

Subcommands (``zooport <command> --help`` for each)::

    zooport list
    zooport info ENV [--kwargs JSON]
    zooport play ENV [--api raw|gym|vector|parallel|aec] [--steps N] [--seed S]
                     [--behavior NAME] [--record out.gif] [--kwargs JSON]
    zooport check ENV|module:factory [--kwargs JSON] [--only NAME ...] [--strict]
    zooport bench [--quick] [--json PATH] [--n N ...] [--envs NAME ...] [--routes NAME ...]
    zooport train ENV [--api vector|parallel] [--steps N] [--seed S] [--plot out.png]

Errors a user can cause print one line to stderr and exit with status 2; ``check`` exits 1
when a checker failed. Tables use ``rich`` when it is installed and stdout is a terminal,
plain text otherwise (or with ``--plain``).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import importlib.util
import inspect
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from zooport.errors import ZooportError

__all__ = [
    "UsageError",
    "Target",
    "PlayStats",
    "TrainResult",
    "main",
    "resolve_target",
    "sample_action",
    "play",
    "train",
    "APIS",
]

#: The adapters ``play`` drives, by ``--api`` name.
APIS = ("raw", "gym", "vector", "parallel", "aec")
_TRAIN_APIS = ("vector", "parallel")
_MAX_FRAMES = 500
_ENTRY_POINT = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class UsageError(ZooportError):
    """A mistake the user can fix; the CLI prints it as one line and exits 2."""


# --------------------------------------------------------------------------- output


class _Output:
    """Prints tables as plain text (stable, for tests and pipes) or with rich."""

    def __init__(self, plain: bool) -> None:
        self.console = None
        if not plain and sys.stdout.isatty():
            with contextlib.suppress(ImportError):
                from rich.console import Console

                self.console = Console()

    def line(self, text: str = "") -> None:
        print(text)

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "") -> None:
        cells = [[str(c) for c in row] for row in rows]
        if self.console is not None:
            from rich.table import Table

            table = Table(*headers, title=title or None)
            for row in cells:
                table.add_row(*row)
            self.console.print(table)
            return
        if title:
            print(title)
        print(format_table(headers, cells))


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table: columns padded to their widest cell, two spaces apart.

    Example:
        >>> print(format_table(["env", "agents"], [["Basic", "1"], ["Tag", "5"]]))
        env    agents
        Basic  1
        Tag    5
    """
    table = [list(headers), *[list(r) for r in rows]]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in table
    )


@contextlib.contextmanager
def _progress(total: int, description: str, enabled: bool = True) -> Iterator[Callable[[int], Any]]:
    """Yields ``update(n)``: a tqdm bar on stderr (or rich's, or nothing)."""
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


def _show_progress(args: argparse.Namespace) -> bool:
    """A progress bar unless ``--no-progress`` or stderr is not a terminal (pipes, CI logs)."""
    return not args.no_progress and sys.stderr.isatty()


def _require(module: str, extra: str, purpose: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".")[0]
        raise UsageError(
            f"{purpose} needs {package}; install it with `pip install zooport[{extra}]`"
        ) from None


# --------------------------------------------------------------------------- targets


@dataclass
class Target:
    """An environment the CLI works on.

    Attributes:
        name: the registry identifier or the ``module:attr`` string.
        factory: makes a fresh environment; keywords update the user's ``--kwargs``.
        entry: the registry entry, or None for a ``module:attr`` factory.
        kwargs: the user's keyword arguments.
    """

    name: str
    factory: Callable[..., Any]
    entry: Any = None
    kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def expected_reward(self) -> float | None:
        """The registry's expected reward, or the factory's ``expected_reward`` attribute."""
        if self.entry is not None:
            with contextlib.suppress(Exception):
                return self.entry.expected_reward
            return None
        value = getattr(getattr(self.factory, "func", self.factory), "expected_reward", None)
        return float(value) if isinstance(value, (int, float)) else None

    def make(self, **extra: Any) -> Any:
        """A fresh environment; a failure the user can fix becomes a :class:`UsageError`."""
        try:
            return self.factory(**extra)
        except (ZooportError, TypeError, ValueError) as exc:
            raise UsageError(f"making {self.name} failed: {_one_line(exc)}") from None

    def make_seeded(self, seed: int) -> Any:
        """A fresh environment, given ``seed=`` when its factory takes that keyword."""
        from zooport.checks import accepts_keyword

        return self.make(seed=seed) if accepts_keyword(self.factory, "seed") else self.make()

    @property
    def gym_preset(self) -> dict[str, Any] | None:
        """The built-in's single-agent ``gym.make`` keywords, for a registry built-in."""
        if self.entry is None:
            return None
        from zooport.adapters.registration import BUILTIN_GYM_ENVS

        for builtin in BUILTIN_GYM_ENVS:
            if builtin.registry_id == self.name:
                return dict(builtin.kwargs)
        return None


def _one_line(exc: BaseException) -> str:
    from zooport.checks import one_line

    return one_line(exc)


def parse_kwargs(text: str | None) -> dict[str, Any]:
    """``--kwargs``: a JSON object, as a dict.

    Example:
        >>> parse_kwargs('{"n_agents": 4}')
        {'n_agents': 4}
    """
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"--kwargs is not valid JSON ({exc.msg} at column {exc.colno}): {text}"
        ) from None
    if not isinstance(value, dict):
        raise UsageError(f"--kwargs must be a JSON object like '{{\"n_agents\": 4}}', got {text}")
    return value


def _check_keywords(target: Callable[..., Any], kwargs: Mapping[str, Any], name: str) -> None:
    try:
        parameters = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return
    accepted = sorted(
        p.name
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    )
    unknown = sorted(k for k in kwargs if k not in accepted)
    if unknown:
        raise UsageError(f"{name} takes no keyword {unknown}; it takes {accepted}")


def resolve_target(spec: str, kwargs: Mapping[str, Any] | None = None) -> Target:
    """A registry identifier or a ``module:attr`` factory, with its keyword arguments.

    Raises:
        UsageError: an unknown identifier (with close matches), a factory that cannot be
            imported, or keywords the factory does not take.

    Example:
        >>> target = resolve_target("Basic", {"n_agents": 2})
        >>> target.make().n_agents, target.expected_reward
        (2, 0.9)
    """
    from zooport.envs.registry import LocalRegistryEntry, default_registry
    from zooport.errors import RegistryError

    kwargs = dict(kwargs or {})
    if ":" in spec:
        if not _ENTRY_POINT.match(spec):
            raise UsageError(f"expected a registry id or 'package.module:factory', got {spec!r}")
        module_name, _, attr = spec.partition(":")
        try:
            obj: Any = importlib.import_module(module_name)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except ImportError as exc:
            raise UsageError(f"cannot import {module_name!r} (from {spec!r}): {exc}") from None
        except AttributeError:
            raise UsageError(f"module {module_name!r} has no attribute {attr!r}") from None
        except Exception as exc:  # the user's module raised while importing
            raise UsageError(f"importing {module_name!r} failed: {_one_line(exc)}") from None
        if not callable(obj):
            raise UsageError(
                f"{spec} is a {type(obj).__name__}, not a callable returning a BaseEnv"
            )
        _check_keywords(obj, kwargs, spec)
        return Target(spec, functools.partial(obj, **kwargs), None, kwargs)
    try:
        entry = default_registry[spec]
    except RegistryError as exc:
        raise UsageError(str(exc)) from None
    if isinstance(entry, LocalRegistryEntry):
        try:
            loaded = entry.load()
        except RegistryError as exc:
            raise UsageError(str(exc)) from None
        _check_keywords(loaded, kwargs, spec)
        factory = functools.partial(loaded, **{**entry.kwargs, **kwargs})
    else:
        factory = functools.partial(entry.make, **kwargs)
    return Target(spec, factory, entry, kwargs)


# --------------------------------------------------------------------------- descriptions


def _brief_action(spec: Any) -> str:
    continuous, branches = spec.continuous_size, tuple(spec.discrete_branches)
    if continuous and branches:
        return f"hybrid(continuous={continuous}, discrete={branches})"
    if branches:
        return f"discrete{branches}" if len(branches) > 1 else f"discrete({branches[0]})"
    return f"continuous({continuous})"


def _brief_obs(spec: Any) -> str:
    return " + ".join("x".join(str(d) for d in o.shape) for o in spec.observation_specs)


def _reset(core: Any, seed: int | None) -> None:
    if seed is not None and getattr(type(core), "seedable", False) is True:
        core.reset(seed=seed)
    else:
        core.reset()


def _agent_counts(core: Any) -> dict[str, int]:
    return {name: len(core.get_steps(name)[0]) for name in core.behavior_specs}


def _cmd_list(args: argparse.Namespace, out: _Output) -> int:
    from zooport.envs.registry import default_registry

    rows = []
    for identifier in default_registry:
        entry = default_registry[identifier]
        try:
            core = resolve_target(identifier).make_seeded(0)
        except Exception as exc:  # a remote or broken entry still gets its row
            rows.append([identifier, f"({_one_line(exc)[:60]})", "-", "-", "-", "-"])
            continue
        try:
            _reset(core, 0)
            counts = _agent_counts(core)
            specs = core.behavior_specs
            behaviours = "; ".join(f"{b} x{n}" for b, n in counts.items())
            actions = "; ".join(_brief_action(s.action_spec) for s in specs.values())
            observations = "; ".join(_brief_obs(s) for s in specs.values())
        finally:
            core.close()
        expected = entry.expected_reward
        steps = getattr(entry, "max_episode_steps", None)
        rows.append([
            identifier, behaviours, actions, observations,
            "-" if expected is None else f"{expected:g}", "-" if steps is None else str(steps),
        ])  # fmt: skip
    out.table(
        ["env", "behaviours x agents", "actions", "observations", "expected reward", "max steps"],
        rows,
    )
    return 0


def _side_channel_use(target: Target, core_type: type) -> list[list[str]]:
    """What a BatchedEnv reads and sends through side channels.

    A class may declare ``side_channel_use = {"parameters": [...], "stats": [...]}``;
    otherwise the keys are found by running a fresh instance for 300 random steps and
    recording its ``environment_parameter`` and ``record_stat`` calls.
    """
    from zooport.envs.batched_env import BatchedEnv

    if not issubclass(core_type, BatchedEnv):
        return [["-", "-", "not a BatchedEnv: only its own side_channels are known"]]
    declared = getattr(core_type, "side_channel_use", None)
    params: dict[str, None] = {}
    stats: dict[str, None] = {}
    if isinstance(declared, Mapping):
        params.update(dict.fromkeys(declared.get("parameters", ())))
        stats.update(dict.fromkeys(declared.get("stats", ())))
    else:
        # Record the keys the environment asks for and reports during a short random run.
        from zooport.demo import rollout

        core = target.make_seeded(0)
        read, record = core.environment_parameter, core.record_stat

        def environment_parameter(key: str, default: float) -> float:
            params[key] = None
            return read(key, default)

        def record_stat(key: str, value: float, *rest: Any, **kw: Any) -> None:
            stats[key] = None
            record(key, value, *rest, **kw)

        core.environment_parameter, core.record_stat = environment_parameter, record_stat
        try:
            rollout(core, 300, seed=0)
        finally:
            core.close()
    return [
        ["EngineConfigurationChannel", "reads", "engine settings, kept in env.engine_config"],
        ["EnvironmentParametersChannel", "reads",
         ", ".join(params) or "no parameter seen in a 300-step random run"],
        ["FloatPropertiesChannel", "reads/sends", "properties either end sets"],
        ["StatsSideChannel", "sends", ", ".join(stats) or "no statistic seen in a 300-step run"],
    ]  # fmt: skip


def _adapter_rows(target: Target, counts: Mapping[str, int], specs: Mapping[str, Any]) -> list:
    from zooport.checks import single_agent_plan

    plan = single_agent_plan(target.factory, preset=target.gym_preset)
    if plan.behaviors:
        how = ", ".join(f"{k}={v!r}" for k, v in plan.kwargs.items())
        gym = ["gym", "GymEnv", "yes", ", ".join(plan.behaviors) + (f" with {how}" if how else "")]
    else:
        gym = ["gym", "GymEnv", "no", plan.reason]
    several = len(specs) > 1
    vector_note = "one slot per agent" + ("; pick a behaviour (--behavior)" if several else "")
    hybrid = [
        b for b, s in specs.items() if s.action_spec.continuous_size and s.action_spec.discrete_size
    ]
    return [
        ["raw", "BaseEnv", "yes", ", ".join(f"{b}: {_agents(n)}" for b, n in counts.items())],
        gym,
        ["vector", "BehaviorVectorEnv, SB3VecEnv", "yes", vector_note],
        ["parallel", "PettingZooParallelEnv", "yes", _agents(sum(counts.values()))],
        ["aec", "PettingZooAECEnv", "yes", "agents act in turn, the core steps once a cycle"],
        ["train", "SB3 PPO / MaskablePPO", "no" if hybrid else "yes",
         f"hybrid actions in {hybrid}: SB3 has no hybrid policy" if hybrid
         else "--api vector or parallel"],
    ]  # fmt: skip


def _agents(n: int) -> str:
    return f"{n} agent" if n == 1 else f"{n} agents"


def _cmd_info(args: argparse.Namespace, out: _Output) -> int:
    target = resolve_target(args.env, parse_kwargs(args.kwargs))
    core = target.make()
    try:
        _reset(core, 0)
        specs = dict(core.behavior_specs)
        counts = _agent_counts(core)
        masks = {b: core.get_steps(b)[0].action_mask is not None for b in specs}
        renders = _renders(core)
        core_type = type(core)
    finally:
        core.close()
    entry = target.entry
    description = (entry.description if entry is not None else inspect.getdoc(core_type)) or ""
    out.line(f"{target.name}: {description.strip().splitlines()[0] if description else ''}")
    expected = target.expected_reward
    steps = getattr(entry, "max_episode_steps", None) or getattr(
        core_type, "max_episode_steps", None
    )
    out.line(
        f"class {core_type.__module__}.{core_type.__qualname__}; expected reward "
        f"{'-' if expected is None else f'{expected:g}'}; max episode steps {steps or '-'}; "
        f"renders rgb_array: {'yes' if renders else 'no'}"
    )
    rows = []
    for b, spec in specs.items():
        a = spec.action_spec
        rows.append([b, str(counts[b]), "action", _brief_action(a), "-",
                     "masked" if masks[b] else "no mask", "-"])  # fmt: skip
        for obs in spec.observation_specs:
            props = ", ".join(
                getattr(p, "name", str(p)) or str(int(p)) for p in obs.dimension_property
            )
            rows.append(["", "", "observation", obs.name, str(tuple(obs.shape)),
                         obs.observation_type.name, props])  # fmt: skip
    out.line()
    headers = ["behaviour", "agents", "kind", "name / spec", "shape", "type", "dimension props"]
    out.table(headers, rows, title="Behaviour specs")
    out.line()
    out.table(["side channel", "direction", "keys"], _side_channel_use(target, core_type),
              title="Side channels")  # fmt: skip
    out.line()
    out.table(["api", "adapter", "applies", "note"], _adapter_rows(target, counts, specs),
              title="Adapters")  # fmt: skip
    return 0


def _renders(core: Any) -> bool:
    from zooport.adapters.core_access import render_core

    with contextlib.suppress(Exception):
        return render_core(core) is not None
    return False


# --------------------------------------------------------------------------- play


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
    try:
        plan = single_agent_plan(target.factory, preset=preset)
    except (ZooportError, TypeError, ValueError) as exc:
        raise UsageError(f"making {target.name} failed: {_one_line(exc)}") from None
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
        raise UsageError(f"--api {api} on {target.name}: {_one_line(exc)}") from None


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
        target: the environment (see :func:`resolve_target`).
        api: one of :data:`APIS`.
        steps: adapter steps (agent turns for ``aec``).
        seed: seeds the environment and the random actions.
        behavior: the behaviour for ``gym`` and ``vector`` (None: the only one).
        record: write an animated GIF of rgb_array frames there (needs Pillow).
        progress: show a progress bar on stderr.

    Raises:
        UsageError: an unknown api, an adapter that does not apply, a missing Pillow, or
            an environment that cannot render when ``record`` is given.

    Example:
        >>> stats = play(resolve_target("Basic"), steps=30, seed=0, progress=False)
        >>> stats.steps, stats.agent_steps
        (30, 30)
    """
    if api not in APIS:
        raise UsageError(f"--api must be one of {list(APIS)}, got {api!r}")
    if steps < 1:
        raise UsageError(f"--steps must be a positive int, got {steps}")
    image_module = _require("PIL.Image", "plots", "--record") if record is not None else None
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
        with _progress(steps, f"{target.name} ({api})", progress) as update:
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
        images = [
            image_module.fromarray(np.asarray(f, dtype=np.uint8)) for f in frames if f is not None
        ]
        fps = 30
        images[0].save(
            record, save_all=True, append_images=images[1:], duration=int(1000 / fps), loop=0
        )
    return PlayStats(target.name, api, steps, agent_steps, seconds, returns.finished, len(frames))


def _make_stepper(env: Any, api: str, seed: int, rng: np.random.Generator, returns: _Returns):
    """Resets ``env`` and returns ``step() -> agent decisions acted on``."""
    if api == "raw":
        from zooport.demo import random_actions

        _reset(env, seed)
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


def _cmd_play(args: argparse.Namespace, out: _Output) -> int:
    target = resolve_target(args.env, parse_kwargs(args.kwargs))
    stats = play(
        target, api=args.api, steps=args.steps, seed=args.seed, behavior=args.behavior,
        record=args.record, progress=_show_progress(args),
    )  # fmt: skip
    rate = stats.agent_steps / stats.seconds if stats.seconds > 0 else float("inf")
    out.line(
        f"{stats.env} via {stats.api}: {stats.steps} steps, {stats.agent_steps} agent-steps in "
        f"{stats.seconds:.2f} s ({rate:,.0f} agent-steps/s)"
    )
    expected = target.expected_reward
    rewards = stats.episode_rewards
    summary = (
        f"mean episode reward {stats.mean_episode_reward:.3f} "
        f"(min {min(rewards):.3f}, max {max(rewards):.3f})"
        if rewards
        else "no episode finished"
    )
    out.line(
        f"episodes finished: {stats.episodes}; {summary}; expected reward (trained): "
        f"{'-' if expected is None else f'{expected:g}'}"
    )
    if args.record:
        out.line(f"wrote {stats.frames} frames to {args.record}")
    return 0


# --------------------------------------------------------------------------- check


def _cmd_check(args: argparse.Namespace, out: _Output) -> int:
    from zooport.checks import CHECKERS, run_checkers

    unknown = [c for c in args.only or () if c not in CHECKERS]
    if unknown:
        raise UsageError(f"--only takes checker names among {list(CHECKERS)}, got {unknown}")
    if args.steps < 1 or args.cycles < 1:
        raise UsageError(f"--steps and --cycles must be positive, got {args.steps}, {args.cycles}")
    target = resolve_target(args.env, parse_kwargs(args.kwargs))
    report = run_checkers(
        target.factory, name=target.name, only=args.only, seed=args.seed, steps=args.steps,
        cycles=args.cycles, single_agent=target.gym_preset, warnings_as_errors=args.strict,
    )  # fmt: skip
    if out.console is not None:
        out.table(["checker", "status", "warnings", "message"], report.rows(),
                  title=report.format(show_warnings=False).splitlines()[0])  # fmt: skip
        if args.verbose:
            for line in report.warning_lines():
                out.line(line)
    else:
        out.line(report.format(show_warnings=args.verbose))
    if args.verbose:
        for result in report.results:
            if result.details:
                out.line(f"\n{result.label}:\n{result.details}")
    return 0 if report.passed else 1


# --------------------------------------------------------------------------- bench


def bench_script_candidates() -> list[Path]:
    """Where ``benchmarks/run.py`` may be: next to the package (a checkout), then the cwd."""
    checkout = Path(__file__).resolve().parent.parent
    return [checkout / "benchmarks" / "run.py", Path.cwd() / "benchmarks" / "run.py"]


def _cmd_bench(args: argparse.Namespace, out: _Output) -> int:
    import runpy

    script = next((p for p in bench_script_candidates() if p.is_file()), None)
    if script is None:
        raise UsageError(
            "zooport bench runs the repository's benchmarks/run.py, which is not here "
            f"(looked in {[str(p) for p in bench_script_candidates()]}); run it from a checkout"
        )
    namespace = runpy.run_path(str(script), run_name="zooport_bench")
    for option, known in (
        ("envs", namespace.get("ENVS")),
        ("routes", namespace.get("ROUTE_NAMES")),
    ):
        chosen = getattr(args, option) or []
        bad = [c for c in chosen if known is not None and c not in known]
        if bad:
            raise UsageError(f"--{option} takes names among {sorted(known)}, got {bad}")
    if args.n is not None and any(n < 1 for n in args.n):
        raise UsageError(f"--n takes positive agent counts, got {args.n}")
    argv = ["--quick"] if args.quick else []
    if args.json:
        argv += ["--json", args.json]
    for option in ("n", "envs", "routes"):
        values = getattr(args, option)
        if values:
            argv += [f"--{option}", *map(str, values)]
    return int(namespace["main"](argv) or 0)


# --------------------------------------------------------------------------- train


@dataclass
class TrainResult:
    """What one ``train`` run measured.

    Attributes:
        env, api, algorithm: what was trained, through which route, with which algorithm.
        timesteps: agent-steps trained (SB3's ``num_timesteps``).
        seconds: wall time of ``learn``.
        mean_episode_reward: mean return of the last ``window`` training episodes, or of the
            evaluation episodes when ``eval_episodes`` was given; nan when none finished.
        expected_reward: the registry's target, if known.
        curve: ``(timesteps, mean return of the last window episodes)`` after each rollout.
        episode_rewards: every training episode's return, in order.
        episode_timesteps: the ``num_timesteps`` at which each of them ended.
        model: the trained SB3 model.
    """

    env: str
    api: str
    algorithm: str
    timesteps: int
    seconds: float
    mean_episode_reward: float
    expected_reward: float | None
    curve: list[tuple[int, float]]
    episode_rewards: list[float]
    episode_timesteps: list[int] = field(default_factory=list)
    model: Any = None

    @property
    def solved(self) -> bool | None:
        """Whether the mean episode reward reached ``expected_reward`` (None: no target)."""
        if self.expected_reward is None or math.isnan(self.mean_episode_reward):
            return None if self.expected_reward is None else False
        return self.mean_episode_reward >= self.expected_reward

    @property
    def agent_steps_per_second(self) -> float:
        return self.timesteps / self.seconds if self.seconds > 0 else float("inf")


def _pettingzoo_route(venv: Any, mask_size: int) -> Any:
    """Sits on SuperSuit's SB3 wrapper: seeds through ``reset(seed=...)`` and serves masks.

    SuperSuit's wrapper forwards ``seed()`` to a vector env that has none, and sb3-contrib
    reads masks with ``env_method("action_masks")``; with ``mask_in_info`` they are in infos.
    """
    from stable_baselines3.common.vec_env import VecEnvWrapper

    class PettingZooRoute(VecEnvWrapper):
        def __init__(self) -> None:
            super().__init__(venv)
            self._seed: int | None = None
            self._masks = np.ones((venv.num_envs, mask_size), dtype=np.int8)

        def _take(self, infos: Sequence[Mapping[str, Any]]) -> None:
            for i, info in enumerate(infos):
                mask = info.get("action_mask")
                if mask is not None:
                    self._masks[i] = mask

        def seed(self, seed: int | None = None) -> list[int | None]:
            self._seed = seed
            return [seed] * self.num_envs

        def reset(self) -> Any:
            obs, infos = self.venv.venv.reset(seed=self._seed)
            self.venv.reset_infos = infos
            self._seed = None
            self._take(infos)
            return obs

        def step_wait(self) -> Any:
            obs, reward, done, infos = self.venv.step_wait()
            self._take(infos)
            return obs, reward, done, infos

        def action_masks(self) -> np.ndarray:
            return self._masks.copy()

        def has_attr(self, attr_name: str) -> bool:
            try:
                self.get_attr(attr_name)
            except AttributeError:
                return False
            return True

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            if attr_name == "action_masks" and mask_size:
                return [self.action_masks] * self.num_envs
            if attr_name == "render_mode":  # SuperSuit's vector env does not answer this
                return [getattr(self.venv, "render_mode", None)] * self.num_envs
            return self.venv.get_attr(attr_name, indices)

        def env_method(self, method_name: str, *args: Any, indices: Any = None, **kw: Any):
            if method_name == "action_masks" and mask_size:
                return list(self._masks.copy())
            return self.venv.env_method(method_name, *args, indices=indices, **kw)

    return PettingZooRoute()


def _training_env(target: Target, api: str, behavior: str | None, seed: int) -> tuple[Any, bool]:
    """(an SB3 VecEnv wrapped in VecMonitor, whether the behaviour has action masks)."""
    from stable_baselines3.common.vec_env import VecMonitor

    core = target.make_seeded(seed)
    try:
        _reset(core, seed)
        names = list(core.behavior_specs)
        chosen = names if api == "parallel" else [behavior or names[0]]
        if api == "vector" and behavior is None and len(names) > 1:
            raise UsageError(
                f"{target.name} has several behaviours {names}; pick one with --behavior"
            )
        for name in chosen:
            if name not in names:
                raise UsageError(f"{target.name} has no behaviour {name!r}; behaviours: {names}")
            spec = core.behavior_specs[name].action_spec
            if spec.continuous_size and spec.discrete_size:
                raise UsageError(
                    f"behaviour {name!r} has hybrid actions; SB3 has no policy for them"
                )
        masked = any(core.get_steps(n)[0].action_mask is not None for n in chosen)
        if api == "vector":
            from zooport.adapters.sb3_vec_env import SB3VecEnv

            venv: Any = SB3VecEnv(core, chosen[0])
        else:
            venv = _parallel_vec_env(core, masked)
    except BaseException:
        with contextlib.suppress(Exception):
            core.close()
        raise
    venv.seed(seed)
    return VecMonitor(venv), masked


def _parallel_vec_env(core: Any, masked: bool) -> Any:
    """The PettingZoo route: Parallel adapter -> SuperSuit vector env -> SB3 VecEnv."""
    supersuit = _require("supersuit", "train", "--api parallel")
    from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv

    # SuperSuit's vector env needs every agent in every step: "any" ends the whole episode
    # (the others truncated) as soon as one agent finishes, so no agent is ever missing.
    parallel = PettingZooParallelEnv(core, termination_mode="any", mask_in_info=masked)
    try:
        vec = supersuit.pettingzoo_env_to_vec_env_v1(parallel)
        venv = supersuit.concat_vec_envs_v1(vec, 1, num_cpus=0, base_class="stable_baselines3")
    except AssertionError as exc:
        raise UsageError(f"--api parallel: SuperSuit cannot vectorise this env: {exc}") from None
    space = venv.action_space
    size = int(np.sum(space.nvec)) if hasattr(space, "nvec") else int(getattr(space, "n", 0))
    return _pettingzoo_route(venv, size if masked else 0)


def train(
    target: Target,
    *,
    api: str = "vector",
    steps: int = 100_000,
    seed: int = 0,
    behavior: str | None = None,
    progress: bool = True,
    window: int = 100,
    eval_episodes: int = 0,
    ppo_kwargs: Mapping[str, Any] | None = None,
) -> TrainResult:
    """Trains SB3 PPO (MaskablePPO when the behaviour has action masks) on ``target``.

    The vector route serves one behaviour's agents as an :class:`SB3VecEnv`; the PettingZoo
    route (``api="parallel"``) serves every agent of every behaviour, which must share one
    observation and one action space, through SuperSuit with ``termination_mode="any"``.

    Args:
        target: the environment (see :func:`resolve_target`).
        api: ``"vector"`` or ``"parallel"``.
        steps: total agent-steps (``total_timesteps``).
        seed: seeds the environment and the model.
        behavior: the behaviour to train on the vector route (None: the only one).
        progress: SB3's progress bar (needs tqdm and rich).
        window: how many of the last training episodes ``mean_episode_reward`` averages.
        eval_episodes: if > 0, ``mean_episode_reward`` is instead the mean return of that many
            deterministic evaluation episodes after training.
        ppo_kwargs: keyword arguments for the PPO constructor; by default ``n_steps`` is sized
            so that a run has about eight rollouts (at most 2048 steps per agent, a multiple
            of 4) and ``batch_size`` is a quarter of a rollout.

    Raises:
        UsageError: an unknown api, SB3/sb3-contrib not installed, hybrid actions, or spaces
            the route cannot serve.
    """
    if api not in _TRAIN_APIS:
        raise UsageError(f"--api must be one of {list(_TRAIN_APIS)} for train, got {api!r}")
    if steps < 1:
        raise UsageError(f"--steps must be a positive int, got {steps}")
    _require("stable_baselines3", "sb3", "train")
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback

    venv, masked = _training_env(target, api, behavior, seed)
    n_envs = venv.num_envs
    # About eight rollouts per run (so the curve has points), at most 2048 steps per agent.
    n_steps = int(min(2048, max(8, 4 * math.ceil(steps / n_envs / 32))))
    options: dict[str, Any] = {"n_steps": n_steps, "batch_size": max(2, n_steps * n_envs // 4)}
    options.update(ppo_kwargs or {})
    options.setdefault("device", "cpu")
    policy = "MultiInputPolicy" if type(venv.observation_space).__name__ == "Dict" else "MlpPolicy"
    if masked:
        contrib = _require("sb3_contrib", "sb3", "training with action masks")
        algorithm: type = contrib.MaskablePPO
    else:
        algorithm = PPO
    episodes: list[float] = []
    ends: list[int] = []
    curve: list[tuple[int, float]] = []

    class Recorder(BaseCallback):
        def _on_step(self) -> bool:
            for info in self.locals.get("infos", ()):
                episode = info.get("episode")
                if episode is not None:
                    episodes.append(float(episode["r"]))
                    ends.append(int(self.num_timesteps))
            return True

        def _on_rollout_end(self) -> None:
            if episodes:
                curve.append((int(self.num_timesteps), float(np.mean(episodes[-window:]))))

    show_bar = progress and all(_importable(m) for m in ("tqdm", "rich"))
    try:
        model = algorithm(policy, venv, seed=seed, verbose=0, **options)
        began = time.perf_counter()
        model.learn(total_timesteps=steps, callback=Recorder(), progress_bar=show_bar)
        seconds = time.perf_counter() - began
        mean = float(np.mean(episodes[-window:])) if episodes else float("nan")
        if eval_episodes > 0:
            mean = _evaluate(model, venv, eval_episodes, masked)
    finally:
        with contextlib.suppress(Exception):
            venv.close()
    return TrainResult(
        target.name, api, algorithm.__name__, int(model.num_timesteps), seconds, mean,
        target.expected_reward, curve, episodes, ends, model,
    )  # fmt: skip


def _evaluate(model: Any, venv: Any, episodes: int, masked: bool) -> float:
    if masked:
        from sb3_contrib.common.maskable.evaluation import evaluate_policy
    else:
        from stable_baselines3.common.evaluation import evaluate_policy
    mean, _ = evaluate_policy(model, venv, n_eval_episodes=episodes, deterministic=True)
    return float(mean)


def _importable(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def plot_curve(result: TrainResult, path: str | os.PathLike[str]) -> None:
    """Writes the learning curve (episode returns, their running mean, the target) as a PNG."""
    _require("matplotlib", "plots", "--plot")
    from matplotlib.figure import Figure  # no pyplot: no global backend or figure state

    figure = Figure(figsize=(7, 4), dpi=100)
    axes = figure.subplots()
    if result.episode_rewards:
        axes.scatter(
            result.episode_timesteps, result.episode_rewards, s=4, alpha=0.3,
            color="tab:blue", label="episode reward",
        )  # fmt: skip
    if result.curve:
        x, y = zip(*result.curve, strict=True)
        axes.plot(x, y, "o-", markersize=3, color="tab:orange", label="running mean")
    if result.expected_reward is not None:
        axes.axhline(result.expected_reward, color="gray", linestyle="--", label="expected")
    axes.set_xlabel("agent-steps")
    axes.set_ylabel("episode reward")
    axes.set_title(f"{result.env} via {result.api} ({result.algorithm})")
    axes.legend(loc="best")
    figure.tight_layout()
    figure.savefig(path)


def _cmd_train(args: argparse.Namespace, out: _Output) -> int:
    if args.plot:
        _require("matplotlib", "plots", "--plot")
    target = resolve_target(args.env, parse_kwargs(args.kwargs))
    result = train(
        target, api=args.api, steps=args.steps, seed=args.seed, behavior=args.behavior,
        progress=_show_progress(args), eval_episodes=args.eval_episodes,
    )  # fmt: skip
    expected = "-" if result.expected_reward is None else f"{result.expected_reward:g}"
    verdict = {True: "reached", False: "below", None: "no target"}[result.solved]
    out.table(
        ["env", "api", "algorithm", "steps", "seconds", "agent-steps/s", "mean episode reward",
         "expected reward", "verdict"],
        [[result.env, result.api, result.algorithm, str(result.timesteps), f"{result.seconds:.1f}",
          f"{result.agent_steps_per_second:,.0f}", f"{result.mean_episode_reward:.3f}", expected,
          verdict]],
    )  # fmt: skip
    if args.plot:
        plot_curve(result, args.plot)
        out.line(f"wrote the learning curve to {args.plot}")
    return 0


# --------------------------------------------------------------------------- main


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        command = self.prog.partition(" ")[2]
        raise UsageError(f"{command}: {message}" if command else message)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive int, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive int, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The ``zooport`` argument parser with its six subcommands."""
    parser = _Parser(
        prog="zooport",
        description="One batched multi-agent simulation, every RL library.",
    )
    parser.add_argument("--plain", action="store_true", help="plain-text tables, never rich")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    commands.add_parser("list", help="registered environments and their specs")

    info = commands.add_parser("info", help="behaviour specs, side channels and adapters of ENV")
    info.add_argument("env", metavar="ENV", help="a registry id or module:factory")
    info.add_argument("--kwargs", metavar="JSON", help="keyword arguments of the factory")

    play_ = commands.add_parser("play", help="random mask-respecting actions through an adapter")
    play_.add_argument("env", metavar="ENV", help="a registry id or module:factory")
    play_.add_argument("--api", choices=APIS, default="raw", help="the adapter (default raw)")
    play_.add_argument("--steps", type=_positive, default=1000, help="adapter steps (1000)")
    play_.add_argument("--seed", type=int, default=0)
    play_.add_argument("--behavior", help="the behaviour for --api gym/vector")
    play_.add_argument("--record", metavar="GIF", help="write an animated GIF of the frames")
    play_.add_argument("--kwargs", metavar="JSON", help="keyword arguments of the factory")
    play_.add_argument("--no-progress", action="store_true", help="no progress bar")

    check = commands.add_parser("check", help="run every applicable checker on ENV")
    check.add_argument("env", metavar="ENV", help="a registry id or module:factory")
    check.add_argument("--kwargs", metavar="JSON", help="keyword arguments of the factory")
    check.add_argument("--only", nargs="+", metavar="NAME", help="checkers to run (default all)")
    check.add_argument("--seed", type=int, default=0)
    check.add_argument("--steps", type=int, default=200, help="check_base_env steps (200)")
    check.add_argument("--cycles", type=int, default=100, help="PettingZoo num_cycles (100)")
    check.add_argument("--strict", action="store_true", help="a checker that warns fails")
    check.add_argument("-v", "--verbose", action="store_true", help="list warnings and details")

    bench = commands.add_parser("bench", help="the adapter benchmark table (benchmarks/run.py)")
    bench.add_argument("--quick", action="store_true", help="seconds, for CI")
    bench.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    bench.add_argument("--n", type=int, nargs="+", help="agent counts")
    bench.add_argument("--envs", nargs="+", metavar="NAME", help="benchmark environments")
    bench.add_argument("--routes", nargs="+", metavar="NAME", help="routes to measure")

    train_ = commands.add_parser("train", help="SB3 PPO (MaskablePPO with masks) on ENV")
    train_.add_argument("env", metavar="ENV", help="a registry id or module:factory")
    train_.add_argument("--api", choices=_TRAIN_APIS, default="vector")
    train_.add_argument("--steps", type=_positive, default=100_000, help="agent-steps (100000)")
    train_.add_argument("--seed", type=int, default=0)
    train_.add_argument("--behavior", help="the behaviour to train (--api vector)")
    train_.add_argument("--plot", metavar="PNG", help="write the learning curve (matplotlib)")
    train_.add_argument("--eval-episodes", type=int, default=0,
                        help="deterministic evaluation episodes after training")  # fmt: skip
    train_.add_argument("--kwargs", metavar="JSON", help="keyword arguments of the factory")
    train_.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


_COMMANDS = {
    "list": _cmd_list,
    "info": _cmd_info,
    "play": _cmd_play,
    "check": _cmd_check,
    "bench": _cmd_bench,
    "train": _cmd_train,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the ``zooport`` command line; returns the exit status.

    Example:
        >>> main(["--plain", "info", "NoSuchEnv"])
        2
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        args = build_parser().parse_args(argv)
        return _COMMANDS[args.command](args, _Output(args.plain))
    except UsageError as exc:
        if debug:
            raise
        print(f"zooport: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("zooport: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`zooport list | head -1`)
        with contextlib.suppress(OSError, ValueError):
            # Python flushes stdout at exit; point it at devnull so that is silent too.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, as a shell reports it
    except SystemExit as exc:  # --help, or a benchmark script that exits
        return exc.code if isinstance(exc.code, int) else 0
    except Exception as exc:
        if debug:
            raise
        print(f"zooport: {_one_line(exc)} (run with --debug for the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
