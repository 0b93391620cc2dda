"""``zooport train``: SB3 PPO through the vector or the PettingZoo route, its plot, and the saved
model: SB3's own zip (``PPO.load`` and rl-zoo3 read it unchanged) plus :data:`INFO_MEMBER`."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import math
import os
import time
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from zooport.cli.common import Player, UsageError, check_output_path, require
from zooport.cli.targets import Target
from zooport.envs.base_env import BaseEnvLike
from zooport.envs.capabilities import reset_core

TRAIN_APIS = ("vector", "parallel")
#: The zip member that holds the :class:`ModelInfo`, as JSON.
INFO_MEMBER = "zooport.json"
#: The algorithms ``zooport train`` trains (both in zooport's [sb3] extra): name -> module.
ALGORITHMS = {"PPO": "stable_baselines3", "MaskablePPO": "sb3_contrib"}
_FORMAT = 1


@dataclass(frozen=True)
class ModelInfo:
    """What a saved model was trained on, so ``play`` and ``--resume`` can rebuild it."""

    env: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    api: str = "vector"
    behavior: str | None = None
    algorithm: str = "PPO"
    seed: int = 0
    timesteps: int = 0
    zooport_version: str = ""

    def to_json(self) -> str:
        try:
            return json.dumps({"format": _FORMAT, **asdict(self)}, indent=2)
        except TypeError as exc:
            raise UsageError(
                f"--save: expected keyword arguments JSON can hold, got {self.kwargs!r} ({exc})"
            ) from None

    @classmethod
    def from_json(cls, text: str, where: str) -> ModelInfo:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{where}: {INFO_MEMBER} is not valid JSON ({exc.msg})") from None
        fields = dict(data) if isinstance(data, dict) else {"format": data}
        given = fields.pop("format", None)
        if given != _FORMAT:
            raise UsageError(f"{where}: expected {INFO_MEMBER} of format {_FORMAT}, got {given!r}")
        try:
            info = cls(**fields)
        except TypeError as exc:
            raise UsageError(f"{where}: {INFO_MEMBER} has unexpected fields: {exc}") from None
        if info.algorithm not in ALGORITHMS or not isinstance(info.kwargs, dict):
            raise UsageError(
                f"{where}: expected an algorithm among {list(ALGORITHMS)} and a kwargs object, "
                f"got {info.algorithm!r} and {info.kwargs!r}"
            )
        return info

    def options_for(
        self, env: str, kwargs: dict[str, Any] | None = None, api: str | None = None,
        behavior: str | None = None,
    ) -> tuple[dict[str, Any], str, str | None]:  # fmt: skip
        """``(kwargs, api, behavior)`` for ``env``: as given, else as trained on this ``env``."""
        same = env == self.env
        if kwargs is None:
            kwargs = dict(self.kwargs) if same else {}
        return kwargs, api or self.api, self.behavior if behavior is None and same else behavior


def _zip(path: str | os.PathLike[str]) -> Path:
    file = Path(path)  # SB3 writes and finds "model" as "model.zip"
    return file.with_suffix(".zip") if file.suffix == "" else file


def save_path(path: str | os.PathLike[str]) -> Path:
    """The file ``--save`` writes (``.zip`` added to a bare name, as SB3 does), checked."""
    return check_output_path(_zip(path), "--save", (".zip",))


def save_model(model: Any, path: str | os.PathLike[str], info: ModelInfo) -> Path:
    file = save_path(path)
    document = info.to_json()  # found unserialisable before anything is written
    model.save(file)
    with zipfile.ZipFile(file, "a") as archive:
        archive.writestr(INFO_MEMBER, document)
    return file


def _existing(path: str | os.PathLike[str], option: str) -> Path:
    file = Path(path) if Path(path).is_file() else _zip(path)
    if not file.is_file():
        raise UsageError(f"{option}: expected a model saved by `zooport train --save`, got "
                         f"{str(path)!r}, which is not a file")  # fmt: skip
    return file


def read_model_info(path: str | os.PathLike[str], option: str = "--model") -> ModelInfo:
    """The :class:`ModelInfo` saved with the model at ``path`` (no torch needed)."""
    file = _existing(path, option)
    try:
        with zipfile.ZipFile(file) as archive:
            text = archive.read(INFO_MEMBER).decode("utf-8")
    except KeyError:
        raise UsageError(
            f"{option}: {str(file)!r} has no {INFO_MEMBER}: expected a model saved by "
            f"`zooport train --save`, which records the environment and algorithm"
        ) from None
    except (zipfile.BadZipFile, OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{option}: expected SB3's zip file, got {str(file)!r} ({exc})") from None
    return ModelInfo.from_json(text, f"{option} {file}")


def load_model(
    path: str | os.PathLike[str], info: ModelInfo, *, env: Any = None, option: str = "--model"
) -> Any:
    """The model at ``path``, loaded on CPU by its algorithm's ``load`` (on ``env`` if given)."""
    module = require(ALGORITHMS[info.algorithm], "sb3", f"loading a {info.algorithm} model")
    file = _existing(path, option)
    try:
        return getattr(module, info.algorithm).load(file, env=env, device="cpu")
    except (ValueError, KeyError) as exc:  # SB3: spaces that do not match the env's
        raise UsageError(f"{option} {file}: {' '.join(str(exc).split())}") from None


@dataclass
class TrainResult:
    """One ``train`` run; its mean episode reward is the evaluation's, else training's (or nan)."""

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
    eval_episodes: int = 0
    behavior: str | None = None
    stopped_at: int | None = None
    shared: tuple[str, ...] = ()

    @property
    def solved(self) -> bool | None:
        if self.expected_reward is None:
            return None
        return self.mean_episode_reward >= self.expected_reward  # False for nan

    @property
    def verdict(self) -> str:
        return {True: "reached", False: "below", None: "no target"}[self.solved]

    @property
    def agent_steps_per_second(self) -> float:
        return self.timesteps / self.seconds if self.seconds > 0 else float("inf")


def _pettingzoo_route(venv: Any, masked: bool) -> Any:
    """SuperSuit's SB3 env, seeded, serving masks to sb3-contrib, and marking a truncated slot
    ``TimeLimit.truncated`` (SuperSuit folds it into ``done``) so that PPO bootstraps it."""
    from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

    space = venv.action_space
    size = int(np.sum(space.nvec)) if hasattr(space, "nvec") else int(getattr(space, "n", 0))

    class PettingZooRoute(VecEnvWrapper):
        def __init__(self) -> None:
            super().__init__(venv)
            self._seed: int | None = None
            self._masks = np.ones((venv.num_envs, size if masked else 0), dtype=np.int8)
            self._vector = venv.venv  # the vector env under SuperSuit's SB3 wrapper

        def _take(self, infos: Sequence[Mapping[str, Any]]) -> None:
            for i, info in enumerate(infos):
                if info.get("action_mask") is not None:
                    self._masks[i] = info["action_mask"]

        def seed(self, seed: int | None = None) -> list[int | None]:
            self._seed = seed
            return [seed] * self.num_envs

        def reset(self) -> Any:
            obs, infos = self._vector.reset(seed=self._seed)
            self.venv.reset_infos, self._seed = infos, None
            self._take(infos)
            return obs

        def step_wait(self) -> Any:
            obs, reward, terminated, truncated, infos = self._vector.step_wait()
            terminated = np.asarray(terminated, dtype=bool)
            truncated = np.asarray(truncated, dtype=bool)
            for i in np.flatnonzero(truncated & ~terminated).tolist():
                infos[i]["TimeLimit.truncated"] = True
            self._take(infos)
            return obs, reward, terminated | truncated, infos

        has_attr = VecEnv.has_attr  # asks get_attr below, not the wrapped env

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            if attr_name == "action_masks" and masked:  # sb3-contrib's has_attr asks for it
                return list(self._masks.copy())
            if attr_name == "render_mode":  # SuperSuit's vector env does not answer this
                return [getattr(self.venv, "render_mode", None)] * self.num_envs
            return self.venv.get_attr(attr_name, indices)

        def env_method(
            self, method_name: str, *args: Any, indices: Any = None, **kw: Any
        ) -> list[Any]:
            if method_name == "action_masks" and masked:
                return list(self._masks.copy())
            return self.venv.env_method(method_name, *args, indices=indices, **kw)

    return PettingZooRoute()


def _training_env(
    target: Target, api: str, behavior: str | None, seed: int, copies: int = 1,
    workers: int | None = None,
) -> tuple[Any, bool, tuple[str, ...]]:  # fmt: skip
    from stable_baselines3.common.vec_env import VecMonitor

    from zooport.adapters import PettingZooParallelEnv, SB3VecEnv

    core = target.make(seed=seed, workers=workers)
    try:
        reset_core(core, seed)
        names = list(core.behavior_specs)
        if api == "vector" and behavior is None and len(names) > 1:
            raise UsageError(
                f"{target.name} has several behaviours {names}; pick one with --behavior"
            )
        chosen = names if api == "parallel" else [behavior or names[0]]
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
            venv: Any = SB3VecEnv(core, chosen[0])
        else:
            supersuit = require("supersuit", "train", "--api parallel")
            # "any": SuperSuit's vector env needs every agent in every step (_pettingzoo_route).
            parallel = PettingZooParallelEnv(core, termination_mode="any", mask_in_info=masked)
            try:
                vec = supersuit.pettingzoo_env_to_vec_env_v1(parallel)
                venv = supersuit.concat_vec_envs_v1(vec, copies, 0, "stable_baselines3")
            except AssertionError as exc:
                message = f"--api parallel: SuperSuit cannot vectorise this env: {exc}"
                raise UsageError(message) from None
            venv = _pettingzoo_route(venv, masked)
    except BaseException:
        with contextlib.suppress(Exception):
            core.close()
        raise
    venv.seed(seed)
    return VecMonitor(venv), masked, tuple(chosen)


def train(
    target: Target, *, api: str = "vector", steps: int = 100_000, seed: int = 0,
    behavior: str | None = None, progress: bool = True, window: int = 100,
    eval_episodes: int = 0, ppo_kwargs: Mapping[str, Any] | None = None, copies: int = 1,
    stop_reward: float | None = None, hold: int = 1, workers: int | None = None,
    resume: str | os.PathLike[str] | None = None, eval_target: Target | None = None,
    deterministic: bool = True,
) -> TrainResult:  # fmt: skip
    """Trains SB3 PPO (MaskablePPO with masks) through ``api``, stopping once the mean of the
    last ``window`` episodes held ``stop_reward`` for ``hold`` rollouts."""
    if not isinstance(api, str) or api not in TRAIN_APIS:
        raise UsageError(f"--api must be one of {list(TRAIN_APIS)} for train, got {api!r}")
    if api == "parallel" and behavior is not None:
        raise UsageError(
            f"--behavior {behavior!r} picks the one behaviour --api vector trains; --api "
            "parallel trains every behaviour under one shared policy (leave --behavior out)"
        )
    if copies < 1 or (copies > 1 and api != "parallel"):
        raise UsageError(f"copies must be 1, or > 1 with api='parallel', got {copies} ({api})")
    if resume is not None and ppo_kwargs:
        raise UsageError("ppo_kwargs set up a new model; a resumed model keeps its own")
    require("stable_baselines3", "sb3", "train")
    saved = None if resume is None else (resume, read_model_info(resume, "--resume"))
    from stable_baselines3.common.callbacks import BaseCallback

    venv, masked, chosen = _training_env(target, api, behavior, seed, copies, workers)
    episodes: list[float] = []
    ends: list[int] = []
    curve: list[tuple[int, float]] = []

    class Recorder(BaseCallback):
        reached = False
        held = 0  # rollouts in a row whose running mean reached stop_reward

        def _on_step(self) -> bool:
            for info in self.locals.get("infos", ()):
                if info.get("episode") is not None:
                    episodes.append(float(info["episode"]["r"]))
                    ends.append(int(self.num_timesteps))
            return not self.reached  # PPO has trained on the rollout that reached it

        def _on_rollout_end(self) -> None:
            if episodes:
                recent = float(np.mean(episodes[-window:]))
                curve.append((int(self.num_timesteps), recent))
                if stop_reward is not None and len(episodes) >= window:
                    self.held = self.held + 1 if recent >= stop_reward else 0
                    self.reached = self.held >= hold

    try:
        if saved is None:
            # About eight rollouts per run (so the curve has points), at most 2048 steps per agent.
            n_steps = int(min(2048, max(8, 4 * math.ceil(steps / venv.num_envs / 32))))
            options = {"n_steps": n_steps, "batch_size": max(2, n_steps * venv.num_envs // 4),
                       "device": "cpu", **(ppo_kwargs or {})}  # fmt: skip
            dicts = type(venv.observation_space).__name__ == "Dict"
            name = "MaskablePPO" if masked else "PPO"  # sb3 is there: only sb3_contrib may lack
            module = require(ALGORITHMS[name], "sb3", "training with action masks")
            model = getattr(module, name)("MultiInputPolicy" if dicts else "MlpPolicy", venv,
                                          seed=seed, verbose=0, **options)  # fmt: skip
        else:
            model = load_model(*saved, env=venv, option="--resume")
            model.set_random_seed(seed)
        began = time.perf_counter()
        recorder = Recorder()
        model.learn(
            total_timesteps=steps, callback=recorder, reset_num_timesteps=saved is None,
            progress_bar=progress and all(importlib.util.find_spec(m) for m in ("tqdm", "rich")),
        )  # fmt: skip
        seconds = time.perf_counter() - began
        mean = float(np.mean(episodes[-window:])) if episodes else float("nan")
        returns: list[float] = []
        if eval_episodes > 0 and api == "parallel":  # seeds apart from the training copies'
            core = (eval_target or target).make(seed=seed + copies)
            returns = evaluate_parallel(model, core, episodes=eval_episodes, seed=seed + copies,
                                        deterministic=deterministic)  # fmt: skip
        elif eval_episodes > 0:
            package = "sb3_contrib.common.maskable" if masked else "stable_baselines3.common"
            returns, _ = importlib.import_module(f"{package}.evaluation").evaluate_policy(
                model, venv, eval_episodes, deterministic=deterministic, return_episode_rewards=True
            )
        mean = float(np.mean(returns)) if returns else mean
    finally:
        with contextlib.suppress(Exception):
            venv.close()
    shared = chosen if api == "parallel" and len(chosen) > 1 else ()
    return TrainResult(
        target.name, api, type(model).__name__, int(model.num_timesteps), seconds, mean,
        None if shared else target.expected_reward, curve, episodes, ends, model, len(returns),
        chosen[0] if api == "vector" else None,
        int(model.num_timesteps) if recorder.reached else None, shared,
    )  # fmt: skip


def evaluate_parallel(
    model: Any, core: BaseEnvLike, *, episodes: int, seed: int = 0, deterministic: bool = True
) -> list[float]:
    """Every agent's return over whole episodes of ``core`` (then closed) until ``episodes``."""
    from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv

    env = PettingZooParallelEnv(core, termination_mode="all", mask_in_info=True, max_cycles=10_000)
    try:
        player = Player(env, "parallel", seed, model, deterministic)
        for episode in range(1, episodes + 1):  # at least one agent finishes per episode
            while env.agents:
                player.step()
            if len(player.finished) >= episodes:
                break
            player.reset(seed + episode)
    finally:
        env.close()
    return player.finished


def plot_curve(results: TrainResult | Sequence[TrainResult], path: str | os.PathLike[str]) -> None:
    require("matplotlib", "plots", "--plot")
    from matplotlib.figure import Figure  # no pyplot: no global backend or figure state

    results = [results] if isinstance(results, TrainResult) else list(results)
    figure = Figure(figsize=(7 * len(results), 4), dpi=100)
    for axes, r in zip(figure.subplots(1, len(results), squeeze=False)[0], results, strict=True):
        if r.episode_rewards:
            axes.scatter(r.episode_timesteps, r.episode_rewards, s=4, alpha=0.3,
                         color="tab:blue", label="episode reward")  # fmt: skip
        if r.curve:
            x, y = zip(*r.curve, strict=True)
            axes.plot(x, y, "o-", markersize=3, color="tab:orange", label="running mean")
        if r.expected_reward is not None:
            axes.axhline(r.expected_reward, color="gray", linestyle="--", label="expected")
        if r.eval_episodes:
            axes.plot([r.timesteps], [r.mean_episode_reward], "*", markersize=14, color="tab:green",
                      label=f"deterministic evaluation ({r.eval_episodes} episodes)")  # fmt: skip
        axes.set(xlabel="agent-steps", ylabel="episode reward")
        axes.set_title(f"{r.env} via {r.api} ({r.algorithm})")
        if axes.get_legend_handles_labels()[0]:
            axes.legend(loc="best")
        else:  # matplotlib warns about a legend without entries
            axes.text(0.5, 0.5, "no episode finished", ha="center", transform=axes.transAxes)
    figure.tight_layout()
    figure.savefig(path)
