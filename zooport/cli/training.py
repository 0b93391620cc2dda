"""Train SB3 PPO on an environment through the vector or the PettingZoo route, and plot it.

stable-baselines3, sb3-contrib, SuperSuit and matplotlib are optional (``zooport[train]``,
``zooport[plots]``) and imported only when a function needs them. ``zooport train``
(:mod:`zooport.cli.app`) prints what :func:`train` returns and saves its model
(:mod:`zooport.cli.saved_model`); ``train(resume=path)`` continues training a saved one.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zooport.cli.common import UsageError, require, stack_observations
from zooport.cli.saved_model import load_model, read_model_info
from zooport.cli.targets import Target
from zooport.envs.arguments import check_seed
from zooport.envs.base_env import BaseEnvLike
from zooport.envs.capabilities import accepts_keyword, reset_core
from zooport.errors import ArgumentError

__all__ = ["TRAIN_APIS", "TrainResult", "train", "evaluate_parallel", "plot_curve"]

#: The routes :func:`train` trains through, by ``--api`` name.
TRAIN_APIS = ("vector", "parallel")


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
        eval_episodes: how many deterministic evaluation episodes ``mean_episode_reward``
            averages (0: it is the training episodes' mean).
        behavior: the behaviour trained on the vector route (None on the PettingZoo route).
        stopped_at: the agent-step at which training stopped because the running mean held
            ``stop_reward``; None when it trained its whole budget.
        shared: the behaviours the PettingZoo route trained under one shared policy when
            there were several; their episodes are mixed in ``mean_episode_reward``, so
            ``expected_reward`` (one team's, against a random opponent) is None there.
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
    eval_episodes: int = 0
    behavior: str | None = None
    stopped_at: int | None = None
    shared: tuple[str, ...] = ()

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
    """Sits on SuperSuit's SB3 wrapper: seeds, serves masks, marks truncated episodes.

    SuperSuit's wrapper forwards ``seed()`` to a vector env that has none; sb3-contrib
    reads masks with ``env_method("action_masks")`` (with ``mask_in_info`` they are in
    infos); and SuperSuit's wrapper folds truncation into ``done``, so here a truncated
    slot's info gets SB3's ``TimeLimit.truncated`` and PPO bootstraps it from its
    ``terminal_observation`` instead of treating it as a terminal state. That matters with
    ``termination_mode="any"``, where one agent's end truncates every other agent.
    """
    from stable_baselines3.common.vec_env import VecEnvWrapper

    class PettingZooRoute(VecEnvWrapper):
        def __init__(self) -> None:
            super().__init__(venv)
            self._seed: int | None = None
            self._masks = np.ones((venv.num_envs, mask_size), dtype=np.int8)
            self._vector = venv.venv  # the vector env under SuperSuit's SB3 wrapper

        def _take(self, infos: Sequence[Mapping[str, Any]]) -> None:
            for i, info in enumerate(infos):
                mask = info.get("action_mask")
                if mask is not None:
                    self._masks[i] = mask

        def seed(self, seed: int | None = None) -> list[int | None]:
            self._seed = seed
            return [seed] * self.num_envs

        def reset(self) -> Any:
            obs, infos = self._vector.reset(seed=self._seed)
            self.venv.reset_infos = infos
            self._seed = None
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


def _training_env(
    target: Target,
    api: str,
    behavior: str | None,
    seed: int,
    copies: int = 1,
    workers: int | None = None,
) -> tuple[Any, bool, tuple[str, ...]]:
    """(an SB3 VecEnv wrapped in VecMonitor, whether it has action masks, the behaviours)."""
    from stable_baselines3.common.vec_env import VecMonitor

    core = target.make_seeded(seed) if workers is None else _pool(target, seed, workers)
    try:
        reset_core(core, seed)
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
            venv = _parallel_vec_env(core, masked, copies)
    except BaseException:
        with contextlib.suppress(Exception):
            core.close()
        raise
    venv.seed(seed)
    return VecMonitor(venv), masked, tuple(chosen)


def _pool(target: Target, seed: int, workers: int, side_channels: Any = None) -> Any:
    """``workers`` copies of the target's core in a CorePool, core ``i`` seeded ``seed + i``."""
    import functools

    from zooport.envs.core_pool import CorePool
    from zooport.errors import ZooportError

    seeded = accepts_keyword(target.factory, "seed")
    factories = [
        functools.partial(target.factory, seed=seed + i) if seeded else target.factory
        for i in range(workers)
    ]
    try:
        return CorePool(factories, side_channels=side_channels)
    except ZooportError as exc:
        raise UsageError(f"--workers {workers}: {exc}") from None


def _parallel_vec_env(core: BaseEnvLike, masked: bool, copies: int = 1) -> Any:
    """The PettingZoo route: Parallel adapter -> SuperSuit vector env -> SB3 VecEnv.

    With ``copies > 1`` SuperSuit runs that many clones of the Parallel env side by side;
    the route's ``reset(seed=s)`` gives clone ``i`` the seed ``s + i``.
    """
    supersuit = require("supersuit", "train", "--api parallel")
    from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv

    # SuperSuit's vector env needs every agent in every step: "any" ends the whole episode
    # (the others truncated) as soon as one agent finishes, so no agent is ever missing.
    parallel = PettingZooParallelEnv(core, termination_mode="any", mask_in_info=masked)
    try:
        vec = supersuit.pettingzoo_env_to_vec_env_v1(parallel)
        venv = supersuit.concat_vec_envs_v1(vec, copies, num_cpus=0, base_class="stable_baselines3")
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
    copies: int = 1,
    stop_reward: float | None = None,
    hold: int = 1,
    workers: int | None = None,
    resume: str | os.PathLike[str] | None = None,
) -> TrainResult:
    """Trains SB3 PPO (MaskablePPO when the behaviour has action masks) on ``target``.

    The vector route serves one behaviour's agents as an :class:`SB3VecEnv`; the PettingZoo
    route (``api="parallel"``) serves every agent of every behaviour, which must share one
    observation and one action space, through SuperSuit with ``termination_mode="any"``.

    Args:
        target: the environment (see :func:`~zooport.cli.targets.resolve_target`).
        api: ``"vector"`` or ``"parallel"``.
        steps: agent-steps to train (``total_timesteps``; more of them with ``resume``).
        seed: seeds the environment and the model.
        behavior: the behaviour to train on the vector route (None: the only one).
        progress: SB3's progress bar (needs tqdm and rich).
        window: how many of the last training episodes ``mean_episode_reward`` averages.
        eval_episodes: if > 0, ``mean_episode_reward`` is instead the mean return of
            deterministic evaluation episodes after training: on the vector route that many
            episodes of the training env (SB3's ``evaluate_policy``); on the PettingZoo route
            at least that many whole agent episodes of a fresh core seeded ``seed + 1``
            (:func:`evaluate_parallel`), as training episodes there end with the first
            agent's.
        ppo_kwargs: keyword arguments for the PPO constructor; by default ``n_steps`` is sized
            so that a run has about eight rollouts (at most 2048 steps per agent, a multiple
            of 4) and ``batch_size`` is a quarter of a rollout.
        copies: the PettingZoo route only: this many copies of the environment side by side
            (SuperSuit's ``concat_vec_envs_v1``). With ``termination_mode="any"`` one agent's
            end truncates every agent of its copy, so many copies of a core with few agents
            give agents longer episodes than one core with many.
        stop_reward: stop training once at least ``window`` episodes finished and the mean
            of the last ``window`` has reached this after ``hold`` rollouts in a row (None:
            train for all ``steps``); ``TrainResult.stopped_at`` says where it stopped.
        hold: how many rollouts in a row the running mean must hold ``stop_reward``.
        workers: train on this many copies of the core, stepped in parallel in a
            :class:`~zooport.envs.CorePool` (copy ``i`` seeded ``seed + i``); None: one core.
        resume: a model saved by ``zooport train --save``: it is loaded (its algorithm and
            settings, its own ``num_timesteps``) and trains ``steps`` more agent-steps on
            this environment, which must give its observation and action spaces.

    Raises:
        UsageError: an unknown api, SB3/sb3-contrib not installed, hybrid actions, spaces
            the route cannot serve, or a ``resume`` model that does not fit the environment
            (or with ``ppo_kwargs``, which only set up a new model).
        ArgumentError: ``seed`` is not an int >= 0, or ``eval_episodes`` a negative int.
    """
    if not isinstance(api, str) or api not in TRAIN_APIS:
        raise UsageError(f"--api must be one of {list(TRAIN_APIS)} for train, got {api!r}")
    if steps < 1:
        raise UsageError(f"--steps must be a positive int, got {steps}")
    if api == "parallel" and behavior is not None:
        raise UsageError(
            f"--behavior {behavior!r} picks the one behaviour --api vector trains; --api "
            "parallel trains every behaviour under one shared policy (leave --behavior out)"
        )
    seed = check_seed(seed, "train")
    if isinstance(eval_episodes, bool) or not isinstance(eval_episodes, int) or eval_episodes < 0:
        raise ArgumentError(
            f"train: expected eval_episodes to be an int >= 0 (0: no evaluation), got "
            f"{eval_episodes!r}"
        )
    if copies < 1 or (copies > 1 and api != "parallel"):
        raise UsageError(f"copies must be 1, or > 1 with api='parallel', got {copies} ({api})")
    if resume is not None and ppo_kwargs:
        raise UsageError("ppo_kwargs set up a new model; a resumed model keeps its own")
    require("stable_baselines3", "sb3", "train")
    saved = None if resume is None else (resume, read_model_info(resume, "--resume"))
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback

    if workers is not None and workers < 1:
        raise UsageError(f"--workers must be a positive int, got {workers}")
    if isinstance(hold, bool) or not isinstance(hold, int) or hold < 1:
        raise ArgumentError(f"train: expected hold to be an int >= 1, got {hold!r}")
    venv, masked, chosen = _training_env(target, api, behavior, seed, copies, workers)
    n_envs = venv.num_envs
    # About eight rollouts per run (so the curve has points), at most 2048 steps per agent.
    n_steps = int(min(2048, max(8, 4 * math.ceil(steps / n_envs / 32))))
    options: dict[str, Any] = {"n_steps": n_steps, "batch_size": max(2, n_steps * n_envs // 4)}
    options.update(ppo_kwargs or {})
    options.setdefault("device", "cpu")
    policy = "MultiInputPolicy" if type(venv.observation_space).__name__ == "Dict" else "MlpPolicy"
    if masked:
        contrib = require("sb3_contrib", "sb3", "training with action masks")
        algorithm: type = contrib.MaskablePPO
    else:
        algorithm = PPO
    episodes: list[float] = []
    ends: list[int] = []
    curve: list[tuple[int, float]] = []

    class Recorder(BaseCallback):
        reached = False
        held = 0  # rollouts in a row whose running mean reached stop_reward

        def _on_step(self) -> bool:
            for info in self.locals.get("infos", ()):
                episode = info.get("episode")
                if episode is not None:
                    episodes.append(float(episode["r"]))
                    ends.append(int(self.num_timesteps))
            # Stops at the first step after the rollout that reached the target, so PPO has
            # trained on that rollout.
            return not self.reached

        def _on_rollout_end(self) -> None:
            if episodes:
                recent = float(np.mean(episodes[-window:]))
                curve.append((int(self.num_timesteps), recent))
                if stop_reward is not None and len(episodes) >= window:
                    self.held = self.held + 1 if recent >= stop_reward else 0
                    self.reached = self.held >= hold

    show_bar = progress and all(_importable(m) for m in ("tqdm", "rich"))
    try:
        if saved is None:
            model = algorithm(policy, venv, seed=seed, verbose=0, **options)
        else:
            model = load_model(*saved, env=venv, option="--resume")
            model.set_random_seed(seed)
            algorithm = type(model)
        began = time.perf_counter()
        recorder = Recorder()
        model.learn(
            total_timesteps=steps, callback=recorder, progress_bar=show_bar,
            reset_num_timesteps=saved is None,
        )  # fmt: skip
        seconds = time.perf_counter() - began
        mean = float(np.mean(episodes[-window:])) if episodes else float("nan")
        evaluated = 0
        if eval_episodes > 0 and api == "parallel":
            returns = evaluate_parallel(
                model, target.make_seeded(seed + 1), episodes=eval_episodes, seed=seed + 1
            )
            mean, evaluated = float(np.mean(returns)), len(returns)
        elif eval_episodes > 0:
            mean, evaluated = _evaluate(model, venv, eval_episodes, masked), eval_episodes
    finally:
        with contextlib.suppress(Exception):
            venv.close()
    trained = getattr(venv.venv, "behavior_name", None) if api == "vector" else None
    shared = chosen if api == "parallel" and len(chosen) > 1 else ()
    return TrainResult(
        target.name, api, algorithm.__name__, int(model.num_timesteps), seconds, mean,
        None if shared else target.expected_reward, curve, episodes, ends, model, evaluated,
        trained, int(model.num_timesteps) if recorder.reached else None, shared,
    )  # fmt: skip


def _evaluate(model: Any, venv: Any, episodes: int, masked: bool) -> float:
    if masked:
        from sb3_contrib.common.maskable.evaluation import evaluate_policy as evaluate_masked

        evaluate: Callable[..., Any] = evaluate_masked
    else:
        from stable_baselines3.common.evaluation import evaluate_policy as evaluate
    rewards, _ = evaluate(
        model, venv, n_eval_episodes=episodes, deterministic=True, return_episode_rewards=True
    )
    return float(np.mean(rewards))


def _frame(env: Any) -> np.ndarray:
    frame = env.render()
    assert frame is not None  # render_mode="rgb_array" always returns a frame
    return frame


def evaluate_parallel(
    model: Any,
    core: BaseEnvLike,
    *,
    episodes: int,
    seed: int = 0,
    deterministic: bool = True,
    frames: list[np.ndarray] | None = None,
    max_cycles: int = 10_000,
) -> list[float]:
    """Every agent's return over whole episodes, one shared policy acting for all agents.

    The core is served by ``PettingZooParallelEnv(termination_mode="all")``: an agent
    leaves when its own episode ends and the PettingZoo episode lasts until every agent's
    has, so no return is cut short by another agent's end (as in training with ``"any"``).
    PettingZoo episodes are played until at least ``episodes`` agent episodes finished. The
    observations are those of the training route (masks in the info), so a model trained by
    :func:`train` with ``api="parallel"`` acts as it learnt to; sb3-contrib's MaskablePPO
    is given the masks.

    Args:
        model: an SB3 model (``predict``).
        core: a fresh core of the environment trained on; it is closed at the end.
        episodes: the least number of agent episodes to play.
        seed: seeds the core at each PettingZoo reset (``seed``, ``seed + 1``, ...).
        deterministic: the policy's mode rather than a sample.
        frames: if given, the core's rgb_array frame after each reset and step is appended.
        max_cycles: steps after which a PettingZoo episode is cut (its agents truncated).

    Returns:
        The return of every agent episode that finished, in order of finishing.
    """
    from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv

    masked = accepts_keyword(model.predict, "action_masks")
    env = PettingZooParallelEnv(
        core, termination_mode="all", mask_in_info=True, max_cycles=max_cycles,
        render_mode=None if frames is None else "rgb_array",
    )  # fmt: skip
    finished: list[float] = []
    try:
        for episode in range(episodes):  # at least one agent finishes per PettingZoo episode
            if len(finished) >= episodes:
                break
            obs, infos = env.reset(seed=seed + episode)
            running = dict.fromkeys(env.agents, 0.0)
            if frames is not None:
                frames.append(_frame(env))
            while env.agents:
                agents = list(env.agents)
                batch = stack_observations([obs[a] for a in agents])
                options: dict[str, Any] = {"deterministic": deterministic}
                if masked and "action_mask" in infos[agents[0]]:
                    options["action_masks"] = np.stack([infos[a]["action_mask"] for a in agents])
                actions, _ = model.predict(batch, **options)
                obs, rewards, terminated, truncated, infos = env.step(
                    dict(zip(agents, actions, strict=True))
                )
                if frames is not None:
                    frames.append(_frame(env))
                for agent, reward in rewards.items():
                    running[agent] = running.get(agent, 0.0) + float(reward)
                    if terminated[agent] or truncated[agent]:
                        finished.append(running.pop(agent))
    finally:
        env.close()
    return finished


def _importable(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def plot_curve(results: TrainResult | Sequence[TrainResult], path: str | os.PathLike[str]) -> None:
    """Writes learning curves as a PNG: one panel per result, side by side.

    A panel shows every training episode's return, their running mean after each rollout,
    the expected reward, and the deterministic evaluation when there was one.
    """
    require("matplotlib", "plots", "--plot")
    from matplotlib.figure import Figure  # no pyplot: no global backend or figure state

    results = [results] if isinstance(results, TrainResult) else list(results)
    figure = Figure(figsize=(7 * len(results), 4), dpi=100)
    for axes, result in zip(
        figure.subplots(1, len(results), squeeze=False)[0], results, strict=True
    ):
        _draw_curve(axes, result)
    figure.tight_layout()
    figure.savefig(path)


def _draw_curve(axes: Any, result: TrainResult) -> None:
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
    if result.eval_episodes:
        axes.plot(
            [result.timesteps], [result.mean_episode_reward], "*", markersize=14,
            color="tab:green", label=f"deterministic evaluation ({result.eval_episodes} episodes)",
        )  # fmt: skip
    axes.set_xlabel("agent-steps")
    axes.set_ylabel("episode reward")
    axes.set_title(f"{result.env} via {result.api} ({result.algorithm})")
    if axes.get_legend_handles_labels()[0]:
        axes.legend(loc="best")
    else:  # matplotlib warns about a legend without entries
        axes.text(0.5, 0.5, "no episode finished", ha="center", transform=axes.transAxes)
