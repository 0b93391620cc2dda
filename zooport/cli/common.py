"""What the command-line programs share: tables, progress bars, GIFs, random actions and
rollouts; it imports no other module of :mod:`zooport.cli`."""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import os
import sys
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from zooport.envs.actions import random_actions
from zooport.envs.base_env import BaseEnvLike
from zooport.envs.capabilities import reset_core
from zooport.errors import ArgumentError, ZooportError


class UsageError(ZooportError):
    """A mistake the user can fix; the CLI prints it as one line and exits 2."""


def install_hint(extra: str) -> str:
    """The pip line that installs zooport's ``extra`` (its packages: zooport is not on PyPI).

    Example:
        >>> install_hint("plots")
        'pip install "matplotlib>=3.7" "pillow>=9"'
    """
    try:
        requires = importlib.metadata.requires("zooport") or []
    except importlib.metadata.PackageNotFoundError:
        requires = []
    packages = [r.split(";")[0].strip() for r in requires if f'extra == "{extra}"' in r]
    if not packages:  # zooport imported from a checkout it was never installed from
        return f'pip install -e ".[{extra}]" (in the zooport checkout)'
    return "pip install " + " ".join(f'"{p}"' for p in packages)


def require(module: str, extra: str, purpose: str) -> Any:
    """Imports ``module``, or raises a :class:`UsageError` with the pip line of its extra.

    Example:
        >>> require("json", "core", "reading JSON").__name__
        'json'
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".")[0]
        raise UsageError(
            f"{purpose} needs {package}; install it with `{install_hint(extra)}` "
            f"(zooport's [{extra}] extra)"
        ) from None


def check_output_path(
    path: str | os.PathLike[str], option: str, suffixes: Collection[str] | None = None
) -> Path:
    """``path`` checked, before the run, as a file it can write (ending in one of ``suffixes``)."""
    file = Path(path)
    if file.is_dir():
        raise UsageError(f"{option}: expected a file name, got the directory {str(path)!r}")
    if suffixes is not None and file.suffix.lower() not in suffixes:
        raise UsageError(
            f"{option}: expected a file name ending in one of {sorted(suffixes)}, got {str(path)!r}"
        )
    directory = file.parent
    if not directory.is_dir():
        raise UsageError(
            f"{option}: expected a file in an existing directory, got {str(path)!r} "
            f"({str(directory)!r} does not exist)"
        )
    if not os.access(directory, os.W_OK | os.X_OK) or (
        file.exists() and not os.access(file, os.W_OK)
    ):
        raise UsageError(f"{option}: expected a file that can be written, got {str(path)!r}")
    return file


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


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A markdown table's lines: the header, its rule, then ``rows``."""
    lines = ["| " + " | ".join(cells) + " |" for cells in (headers, *rows)]
    return [lines[0], "|" + "---|" * len(headers), *lines[1:]]


class Output:
    """Prints tables with rich on a terminal (unless ``plain``), else as plain text."""

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


@contextlib.contextmanager
def progress_bar(
    total: int, description: str, enabled: bool = True
) -> Iterator[Callable[[int], Any]]:
    """Yields ``update(n)``: a tqdm bar on stderr where tqdm is installed and ``enabled``."""
    try:
        from tqdm import tqdm
    except ImportError:
        enabled = False
    if not enabled:
        yield lambda n: None
        return
    with tqdm(total=total, desc=description, file=sys.stderr, leave=False) as bar:
        yield bar.update


def save_gif(
    frames: Sequence[np.ndarray | None], path: str | os.PathLike[str], fps: float = 30
) -> int:
    """Writes rgb_array ``frames`` (None skipped) as a looping GIF; returns how many it got."""
    image_module = require("PIL.Image", "plots", "writing a GIF")
    images = [
        image_module.fromarray(np.asarray(f, dtype=np.uint8)) for f in frames if f is not None
    ]
    if not images:
        raise ArgumentError(f"Expect at least one frame to write to {path}, actually: none")
    images[0].save(path, save_all=True, append_images=images[1:], duration=int(1000 / fps), loop=0)
    return len(images)


def sample_action(space: Any, mask: np.ndarray | None, rng: np.random.Generator) -> Any:
    """A uniform random action of ``space`` that ``mask`` allows (1 = allowed, flattened over
    the discrete branches; for a ``Dict(continuous, discrete)`` the discrete part's).

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


def stack_observations(observations: Sequence[Any]) -> Any:
    """Per-agent observations (or actions) as one batch; dicts as a dict of batches."""
    if isinstance(observations[0], Mapping):
        return {k: np.stack([o[k] for o in observations]) for k in observations[0]}
    return np.stack(observations)


class EpisodeReturns:
    """Running per-agent returns; ``end(key)`` records one finished episode."""

    def __init__(self) -> None:
        self.running: dict[Any, float] = {}
        self.finished: list[float] = []

    def add(self, key: Any, reward: float) -> None:
        self.running[key] = self.running.get(key, 0.0) + float(reward)

    def end(self, key: Any) -> None:
        self.finished.append(self.running.pop(key, 0.0))


def random_core_step(
    core: BaseEnvLike, names: Sequence[str], rng: np.random.Generator, returns: EpisodeReturns
) -> int:
    """Books ``core``'s rewards, steps it once with random allowed actions; returns how many
    agents acted."""
    acted = 0
    for name in names:
        decision, terminal = core.get_steps(name)
        for agent, reward in zip(terminal.agent_id.tolist(), terminal.reward.tolist(), strict=True):
            returns.add((name, agent), reward)
            returns.end((name, agent))
        for agent, reward in zip(decision.agent_id.tolist(), decision.reward.tolist(), strict=True):
            returns.add((name, agent), reward)
        spec = core.behavior_specs[name].action_spec
        core.set_actions(name, random_actions(spec, len(decision), rng, decision.action_mask))
        acted += len(decision)
    core.step()
    return acted


@dataclass
class RolloutStats:
    """One run of random (or a model's) actions: ``steps`` are adapter steps (turns for
    ``aec``), ``agent_steps`` the decisions acted on, ``agents`` those live at the start."""

    env: str
    api: str
    steps: int
    agent_steps: int
    seconds: float
    episode_rewards: list[float]
    frames: int = 0
    policy: str = "random"
    agents: int = 0

    @property
    def episodes(self) -> int:
        return len(self.episode_rewards)

    @property
    def mean_episode_reward(self) -> float:
        return float(np.mean(self.episode_rewards)) if self.episode_rewards else float("nan")

    @property
    def agent_steps_per_second(self) -> float:
        return self.agent_steps / self.seconds if self.seconds > 0 else float("inf")


def rollout(core: BaseEnvLike, steps: int, seed: int = 0) -> RolloutStats:
    """``steps`` random steps of ``core``, with per-agent episode rewards.

    Example:
        >>> from zooport.envs.builtin.basic import Basic
        >>> stats = rollout(Basic(n_agents=2, seed=0), 30, seed=0)
        >>> stats.agents, stats.agent_steps, stats.episodes > 0
        (2, 60, True)
    """
    rng = np.random.default_rng(seed)
    reset_core(core, seed)
    names = list(core.behavior_specs)
    returns = EpisodeReturns()
    agent_steps = 0
    agents = sum(len(core.get_steps(name)[0]) for name in names)
    start = time.perf_counter()
    for _ in range(steps):
        agent_steps += random_core_step(core, names, rng, returns)
    seconds = time.perf_counter() - start
    name = type(core).__name__
    return RolloutStats(name, "raw", steps, agent_steps, seconds, returns.finished, agents=agents)
