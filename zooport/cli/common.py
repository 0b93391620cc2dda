"""What the command-line programs share: errors, tables and :class:`Player`."""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import sys
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from zooport.envs.base_env import BaseEnvLike, random_actions
from zooport.envs.capabilities import accepts_keyword, reset_core
from zooport.errors import ZooportError


class UsageError(ZooportError):
    """A mistake the user can fix; the CLI prints it as one line and exits 2."""


def install_hint(extra: str) -> str:
    """The pip line that installs zooport's ``extra`` (its packages: zooport is not on PyPI)."""
    requires: list[str] = []
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        requires = importlib.metadata.requires("zooport") or []
    packages = [r.split(";")[0].strip() for r in requires if f'extra == "{extra}"' in r]
    if not packages:  # zooport imported from a checkout it was never installed from
        return f'pip install -e ".[{extra}]" (in the zooport checkout)'
    return "pip install " + " ".join(f'"{p}"' for p in packages)


def require(module: str, extra: str, purpose: str) -> Any:
    """Imports ``module``, or raises a :class:`UsageError` with the pip line of its extra."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UsageError(
            f"{purpose} needs {module.split('.')[0]}; install it with `{install_hint(extra)}` "
            f"(zooport's [{extra}] extra)"
        ) from None


def check_output_path(
    path: str | os.PathLike[str], option: str, suffixes: Collection[str] | None = None
) -> Path:
    """``path`` checked, before the run, as a file it can write (ending in one of ``suffixes``)."""
    file, given = Path(path), repr(str(path))
    writable = os.access(file.parent, os.W_OK | os.X_OK)
    writable = writable and (not file.exists() or os.access(file, os.W_OK))
    for wrong, expected in (
        (file.is_dir(), f"a file name, got the directory {given}"),
        (suffixes is not None and file.suffix.lower() not in suffixes,
         f"a file name ending in one of {sorted(suffixes or ())}, got {given}"),
        (not file.parent.is_dir(),
         f"a file in an existing directory, got {given} ({str(file.parent)!r} does not exist)"),
        (not writable, f"a file that can be written, got {given}"),
    ):  # fmt: skip
        if wrong:
            raise UsageError(f"{option}: expected {expected}")
    return file


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    table = [list(headers), *[list(r) for r in rows]]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in table
    )


def cell(value: float | None, spec: str = "g") -> str:
    return "-" if value is None else format(value, spec)


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
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

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "") -> None:
        cells = [[str(c) for c in row] for row in rows]
        if self.console is None:
            print((f"{title}\n" if title else "") + format_table(headers, cells))
            return
        from rich.table import Table

        table = Table(*headers, title=title or None)
        for row in cells:
            table.add_row(*row)
        self.console.print(table)


def sample_action(space: Any, mask: np.ndarray | None, rng: np.random.Generator) -> Any:
    """A uniform random action of ``space`` that ``mask`` (flat over the branches) allows."""
    from gymnasium import spaces

    if isinstance(space, spaces.Discrete):
        allowed = np.flatnonzero(mask) if mask is not None and np.any(mask) else np.arange(space.n)
        return int(rng.choice(allowed)) + int(space.start)
    if isinstance(space, spaces.MultiDiscrete):
        nvec, start = np.asarray(space.nvec).reshape(-1), np.asarray(space.start).reshape(-1)
        cuts = np.cumsum(nvec)[:-1]
        parts = [None] * nvec.size if mask is None else np.split(np.asarray(mask), cuts)
        values = [
            sample_action(spaces.Discrete(n, start=s), p, rng)
            for n, s, p in zip(nvec, start, parts, strict=True)
        ]
        return np.asarray(values).reshape(space.shape).astype(space.dtype)
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


def _stack(observations: Sequence[Any]) -> Any:
    if isinstance(observations[0], Mapping):
        return {k: np.stack([o[k] for o in observations]) for k in observations[0]}
    return np.stack(observations)


class Player:
    """Drives ``env`` through its ``api``'s loop with random allowed actions or ``model``'s."""

    def __init__(
        self, env: Any, api: str, seed: int = 0, model: Any = None, deterministic: bool = True
    ) -> None:
        self.env, self.api, self.model, self.deterministic = env, api, model, deterministic
        self.rng = np.random.default_rng(seed)
        self.masked = model is not None and accepts_keyword(model.predict, "action_masks")
        self.running: dict[Any, float] = {}
        self.finished: list[float] = []  # the returns of the episodes that ended, in order
        self.step: Callable[[], int] = getattr(self, f"_step_{api}")  # -> the agents that acted
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        if self.api == "raw":
            reset_core(self.env, seed)
            self.names = list(self.env.behavior_specs)
        elif self.api == "aec":
            self.env.reset(seed=seed)
        else:
            self.obs, self.info = self.env.reset(seed=seed)

    def _book(self, agents: Iterable[Any], rewards: Iterable[float], ended: Iterable[bool]) -> None:
        for agent, reward, end in zip(agents, rewards, ended, strict=True):
            self.running[agent] = self.running.get(agent, 0.0) + float(reward)
            if end:
                self.finished.append(self.running.pop(agent))

    def _act(self, spaces: list[Any], observations: Any, masks: Sequence[Any]) -> list[Any]:
        if self.model is None:
            return [sample_action(s, m, self.rng) for s, m in zip(spaces, masks, strict=True)]
        if isinstance(observations, list):
            observations = _stack(observations)
        options: dict[str, Any] = {"deterministic": self.deterministic}
        if self.masked and all(m is not None for m in masks):
            options["action_masks"] = np.stack(masks)
        return list(self.model.predict(observations, **options)[0])

    def _step_raw(self) -> int:
        acted = 0
        for name in self.names:
            decision, terminal = self.env.get_steps(name)
            for steps, ended in ((terminal, True), (decision, False)):
                agents = [(name, agent) for agent in steps.agent_id.tolist()]
                self._book(agents, steps.reward.tolist(), [ended] * len(agents))
            spec = self.env.behavior_specs[name].action_spec
            actions = random_actions(spec, len(decision), self.rng, decision.action_mask)
            self.env.set_actions(name, actions)
            acted += len(decision)
        self.env.step()
        return acted

    def _step_gym(self) -> int:
        action = self._act([self.env.action_space], [self.obs], [self.info.get("action_mask")])
        self.obs, reward, terminated, truncated, self.info = self.env.step(action[0])
        self._book([0], [reward], [terminated or truncated])
        if terminated or truncated:
            self.obs, self.info = self.env.reset()
        return 1

    def _step_vector(self) -> int:
        n = self.env.num_envs
        masks = self.info.get("action_mask")
        masks = [None] * n if masks is None else list(masks)
        actions = self._act([self.env.single_action_space] * n, self.obs, masks)
        self.obs, reward, terminated, truncated, self.info = self.env.step(_stack(actions))
        self._book(range(n), reward.tolist(), (terminated | truncated).tolist())
        return int(np.sum(self.info.get("decided", np.ones(n, bool))))

    def _step_parallel(self) -> int:
        if not self.env.agents:
            self.reset()
        agents, obs = list(self.env.agents), self.obs
        masks = [self.info.get(a, {}).get("action_mask") for a in agents]
        spaces = [self.env.action_space(a) for a in agents]
        actions = dict(zip(agents, self._act(spaces, [obs[a] for a in agents], masks), strict=True))
        self.obs, rewards, terminated, truncated, self.info = self.env.step(actions)
        self._book(rewards, rewards.values(), [terminated[a] or truncated[a] for a in rewards])
        return len(agents)

    def _step_aec(self) -> int:
        if not self.env.agents:
            self.env.reset()
        agent = self.env.agent_selection
        obs, reward, terminated, truncated, info = self.env.last()
        self._book([agent], [reward], [terminated or truncated])
        if terminated or truncated:
            self.env.step(None)
            return 0
        action = self._act([self.env.action_space(agent)], [obs], [info.get("action_mask")])
        self.env.step(action[0])
        return 1


@dataclass
class RolloutStats:
    """One run: ``steps`` adapter steps (turns for ``aec``), ``agent_steps`` decisions acted on."""

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
    """``steps`` random steps of ``core``, with per-agent episode rewards."""
    player = Player(core, "raw", seed)
    agents = sum(len(core.get_steps(name)[0]) for name in player.names)
    start = time.perf_counter()
    agent_steps = sum(player.step() for _ in range(steps))
    seconds = time.perf_counter() - start
    return RolloutStats(
        type(core).__name__, "raw", steps, agent_steps, seconds, player.finished, agents=agents
    )
