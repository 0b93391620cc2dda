"""Cores that behave as real Unity scenes do, for the late-spec and observation-check tests.

Classes:
    CoreProxy: a BaseEnv that forwards every call to a zooport core (no BatchedEnv checks of
        its own), the base of the others; it counts the steps taken before the first reset.
    LateSpecs: a proxy whose ``behavior_specs`` is empty until its first ``step()`` (which,
        as a UnityEnvironment's first step, resets the core) or ``reset()``; with
        ``never=True`` it never reports a behaviour.
    Tamper: a proxy whose DecisionSteps/TerminalSteps of one behaviour are rewritten by a
        function (observations of the wrong shape, count or rows; short reward arrays).
    EmptySensor: a BatchedEnv with a zero-size observation beside a camera (and optionally a
        goal vector), as visual Unity scenes have.
    Walkers: a BatchedEnv of agents with one observation of a given spec.

Functions:
    with_obs, with_rows: rebuild a DecisionSteps/TerminalSteps with other observations or
        other field lengths.
    drive: reset an adapter and step it with valid random actions, whatever its API.
    late_basic: a LateSpecs Basic, a factory for the registration entry points.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from zooport.envs.base_env import (
    ActionSpec,
    BaseEnv,
    BehaviorSpec,
    DecisionSteps,
    ObservationSpec,
    ObservationType,
    TerminalSteps,
)
from zooport.envs.batched_env import BatchedEnv, StepResult

from tests.support.specs import obs_spec

__all__ = [
    "CoreProxy",
    "LateSpecs",
    "Tamper",
    "EmptySensor",
    "Walkers",
    "with_obs",
    "with_rows",
    "drive",
    "late_basic",
]


class CoreProxy(BaseEnv):
    """Forwards every BaseEnv call to ``inner`` (seedable, renders and has side channels)."""

    seedable = True

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.started = False
        self.early_steps = 0  # steps asked for before the first reset

    @property
    def behavior_specs(self) -> Mapping[str, BehaviorSpec]:
        return self.inner.behavior_specs

    @property
    def side_channels(self) -> list[Any]:
        return self.inner.side_channels

    @property
    def metadata(self) -> dict[str, Any]:
        return self.inner.metadata

    def reset(self, seed: int | None = None) -> None:
        self.inner.reset() if seed is None else self.inner.reset(seed=seed)
        self.started = True

    def step(self) -> None:
        if not self.started:
            # A UnityEnvironment's first step is its reset.
            self.early_steps += 1
            self.reset()
            return
        self.inner.step()

    def close(self) -> None:
        self.inner.close()

    def set_actions(self, behavior_name: str, action: Any) -> None:
        self.inner.set_actions(behavior_name, action)

    def set_action_for_agent(self, behavior_name: str, agent_id: int, action: Any) -> None:
        self.inner.set_action_for_agent(behavior_name, agent_id, action)

    def get_steps(self, behavior_name: str) -> tuple[DecisionSteps, TerminalSteps]:
        return self.inner.get_steps(behavior_name)

    def render(self) -> np.ndarray | None:
        return self.inner.render()


class LateSpecs(CoreProxy):
    """``behavior_specs`` is empty until the first ``step()`` or ``reset()`` (never, with
    ``never=True``), as a Unity scene whose agents have not requested a decision yet."""

    def __init__(self, inner: Any, *, never: bool = False) -> None:
        super().__init__(inner)
        self.never = never

    @property
    def behavior_specs(self) -> Mapping[str, BehaviorSpec]:
        return {} if self.never or not self.started else self.inner.behavior_specs


class Tamper(CoreProxy):
    """Rewrites the steps of ``behavior`` with ``decision(steps)``/``terminal(steps)``
    (non-empty batches only) once ``after`` core steps have been taken since the first reset."""

    def __init__(
        self,
        inner: Any,
        behavior: str,
        *,
        decision: Callable[[DecisionSteps], DecisionSteps] | None = None,
        terminal: Callable[[TerminalSteps], TerminalSteps] | None = None,
        after: int = 0,
    ) -> None:
        super().__init__(inner)
        self.behavior = behavior
        self.decision = decision
        self.terminal = terminal
        self.after = after
        self.steps = 0

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)

    def step(self) -> None:
        super().step()
        self.steps += 1

    def get_steps(self, behavior_name: str) -> tuple[DecisionSteps, TerminalSteps]:
        decision, terminal = self.inner.get_steps(behavior_name)
        if behavior_name == self.behavior and self.steps >= self.after:
            if self.decision is not None and len(decision):
                decision = self.decision(decision)
            if self.terminal is not None and len(terminal):
                terminal = self.terminal(terminal)
        return decision, terminal


def with_obs(steps: Any, obs: list[Any]) -> Any:
    """``steps`` (Decision or Terminal) with other observations."""
    return with_rows(steps, obs=obs)


def with_rows(steps: Any, **fields: Any) -> Any:
    """``steps`` with some fields replaced (obs, reward, agent_id, group_id, ...)."""
    if isinstance(steps, DecisionSteps):
        names = ("obs", "reward", "agent_id", "action_mask", "group_id", "group_reward")
        cls = DecisionSteps
    else:
        names = ("obs", "reward", "interrupted", "agent_id", "group_id", "group_reward")
        cls = TerminalSteps
    return cls(*(fields.get(n, getattr(steps, n)) for n in names))


class EmptySensor(BatchedEnv):
    """Agents see an (h, w, 3) camera, an empty (0,) vector sensor and, with ``goal``, a (2,)
    goal vector. The camera of agent k shows ``(t + k + 1) / 10`` everywhere (t = episode step),
    the goal ``(k, t)``; each step earns 0.1; episodes last 5 steps (truncated)."""

    def __init__(self, n_agents: int = 2, *, goal: bool = False, size: int = 6, **kw: Any):
        super().__init__(**kw)
        specs = [obs_spec((size, size, 3), "camera"), obs_spec((0,), "vector")]
        if goal:
            specs.append(obs_spec((2,), "goal", ObservationType.GOAL_SIGNAL))
        self.goal = goal
        self.size = size
        self._add_behavior(
            "Seer", BehaviorSpec(specs, ActionSpec.create_discrete((3,))), n_agents, max_steps=5
        )
        self.t = np.zeros(n_agents, np.int64)

    def _reset_agents(self, behavior: str, slots: np.ndarray) -> None:
        self.t[slots] = 0

    def _step(self, actions: Any) -> dict[str, StepResult]:
        self.t += 1
        n = self.t.size
        return {"Seer": StepResult(np.full(n, 0.1, np.float32), np.zeros(n, bool))}

    def _observe(self, behavior: str, slots: np.ndarray) -> list[np.ndarray]:
        value = ((self.t[slots] + slots + 1) / 10.0).astype(np.float32)
        camera = np.broadcast_to(value[:, None, None, None], (slots.size, self.size, self.size, 3))
        obs = [camera.copy(), np.zeros((slots.size, 0), np.float32)]
        if self.goal:
            obs.append(np.stack([slots, self.t[slots]], axis=1).astype(np.float32))
        return obs


def drive(env: Any, steps: int, seed: int = 0, *, reseed: bool = True) -> list[Any]:
    """Resets ``env`` (any zooport adapter or task) and takes ``steps`` steps of valid random
    actions, resetting where an episode ends; returns what each reset and step returned.

    ``seed`` seeds the actions and, with ``reseed``, the first reset (a core that cannot be
    reseeded, a Unity build, warns)."""
    first = seed if reseed else None
    from gymnasium.vector import VectorEnv
    from pettingzoo import AECEnv, ParallelEnv
    from stable_baselines3.common.vec_env import VecEnv

    from zooport.adapters import MultiAgentTask, PettingZooTask

    rng = np.random.default_rng(seed)
    out: list[Any] = []
    if isinstance(env, VecEnv):
        env.seed(first)
        env.action_space.seed(seed)
        out.append(env.reset())
        for _ in range(steps):
            actions = np.stack([env.action_space.sample() for _ in range(env.num_envs)])
            out.append(env.step(actions))
        return out
    if isinstance(env, VectorEnv):
        env.action_space.seed(seed)
        out.append(env.reset(seed=first))
        for _ in range(steps):
            out.append(env.step(env.action_space.sample()))
        return out
    if isinstance(env, ParallelEnv | PettingZooTask):
        action_space = env.env.action_space if isinstance(env, PettingZooTask) else env.action_space
        out.append(env.reset(seed=first))
        for _ in range(steps):
            if not env.agents:
                out.append(env.reset())
            actions = {a: _sample(action_space(a), rng) for a in env.agents}
            out.append(env.step(actions))
        return out
    if isinstance(env, AECEnv):
        env.reset(seed=first)
        for _ in range(steps):
            if not env.agents:
                env.reset()
            observation, reward, terminated, truncated, info = env.last()
            out.append((observation, reward, terminated, truncated, info))
            done = terminated or truncated
            env.step(None if done else _sample(env.action_space(env.agent_selection), rng))
        return out
    if isinstance(env, MultiAgentTask):
        out.append(env.reset(seed=first))
        for _ in range(steps):
            if env.game_over:
                out.append(env.reset())
            actions = {a: _sample(env.action_spaces[a], rng) for a in env.agents}
            out.append(env.step_all(actions))
        return out
    # A Gymnasium Env (GymEnv, GymTask).
    env.action_space.seed(seed)
    out.append(env.reset(seed=first))
    for _ in range(steps):
        result = env.step(env.action_space.sample())
        out.append(result)
        if result[2] or result[3]:
            out.append(env.reset())
    return out


def _sample(space: Any, rng: np.random.Generator) -> Any:
    from gymnasium import spaces

    if isinstance(space, spaces.Discrete):
        return int(rng.integers(space.n))
    space.seed(int(rng.integers(2**31)))
    return space.sample()


def late_basic(n_agents: int = 1, max_steps: int = 4, seed: int | None = None) -> LateSpecs:
    """A ``Basic`` whose behaviour appears after its first step (for the entry points)."""
    from zooport.envs.builtin.basic import Basic

    return LateSpecs(Basic(n_agents=n_agents, max_steps=max_steps, seed=seed))


class Walkers(BatchedEnv):
    """``n_agents`` agents of behaviour ``Walker`` with one observation of the given spec
    (zeros), continuous actions of size 1; nothing ever ends."""

    def __init__(self, spec: ObservationSpec, n_agents: int = 2, **kw: Any) -> None:
        super().__init__(**kw)
        self.shape = spec.shape
        self.n = n_agents
        action = ActionSpec.create_continuous(1)
        self._add_behavior("Walker", BehaviorSpec([spec], action), n_agents)

    def _reset_agents(self, behavior: str, slots: np.ndarray) -> None:
        pass

    def _step(self, actions: Any) -> dict[str, StepResult]:
        return {"Walker": StepResult(np.zeros(self.n, np.float32), np.zeros(self.n, bool))}

    def _observe(self, behavior: str, slots: np.ndarray) -> list[np.ndarray]:
        return [np.zeros((slots.size, *self.shape), np.float32)]
