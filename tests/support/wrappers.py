"""Test envs and the shared contract check for the wrapper tests (plus tests of the envs).

- ``MiniPursuit``: a small PettingZoo ParallelEnv written without zooport: hunters with Box
  actions, prey with Discrete actions, bounded / half-bounded / unbounded observation
  features, entity rows with visibility flags (``entity_slots``), a global state, prey that
  terminate when caught and a time limit that truncates, and a noise feature drawn from the
  env's own generator (a wrapper consuming that generator would change it).
- ``Scouts``: a zooport ``BatchedEnv`` whose core declares ``entity_slots(behaviour)``.
- ``check_contract``: reset/step key and space parity, spaces fixed, seeds reproduce, and
  PettingZoo's ``parallel_api_test`` passing with warnings failing the test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils.env_checker import data_equivalence
from pettingzoo import ParallelEnv

from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.adapters.wrappers.observation import EntitySlots
from zooport.envs.base_env import (
    ActionSpec,
    BehaviorSpec,
)
from zooport.envs.batched_env import BatchedEnv, StepResult
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.builtin.grid_world import GridWorld
from zooport.envs.builtin.tag import Tag

from tests.support.checkers import run_parallel_api_test
from tests.support.specs import obs_spec

_MOVES = np.array([[0, 0], [0, 1], [0, -1], [-1, 0], [1, 0]], dtype=np.float32)


class MiniPursuit(ParallelEnv):
    """Hunters (Box(-1, 1, (2,)) moves) chase prey (Discrete(5) moves) on [-1, 1]^2.

    Observation of an agent: [x, y] in [-1, 1], t / max_steps in [0, 1], distance travelled
    in [0, inf), a N(0, 1) noise value in (-inf, inf), then one row (x, y, seen) per agent of
    the other team (absolute coordinates, zeros when not within ``view``).
    """

    metadata = {"name": "mini_pursuit_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(
        self,
        n_hunters: int = 2,
        n_prey: int = 2,
        max_steps: int = 30,
        view: float = 0.8,
        catch: float = 0.3,
        seed: int | None = None,
    ) -> None:
        self.hunters = [f"hunter_{i}" for i in range(n_hunters)]
        self.prey = [f"prey_{i}" for i in range(n_prey)]
        self.possible_agents = self.hunters + self.prey
        self.agents: list[str] = []
        self.render_mode = None
        self.max_steps, self.view, self.catch = max_steps, view, catch
        self.np_random = np.random.default_rng(seed)
        self._obs_spaces = {
            "hunter": self._obs_space(n_prey),
            "prey": self._obs_space(n_hunters),
        }
        self._act_spaces = {
            "hunter": spaces.Box(-1.0, 1.0, (2,), np.float32),
            "prey": spaces.Discrete(5),
        }
        n = len(self.possible_agents)
        self.state_space = spaces.Box(-1.0, 1.0, (2 * n + 1,), np.float32)

    @staticmethod
    def _obs_space(others: int) -> spaces.Box:
        low = np.array([-1, -1, 0, 0, -np.inf] + [-1, -1, 0] * others, np.float32)
        high = np.array([1, 1, 1, np.inf, np.inf] + [1, 1, 1] * others, np.float32)
        return spaces.Box(low, high, dtype=np.float32)

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_spaces[agent.split("_")[0]]

    def action_space(self, agent: str) -> spaces.Space:
        return self._act_spaces[agent.split("_")[0]]

    def entity_slots(self, agent: str) -> EntitySlots:
        others = len(self.prey) if agent.startswith("hunter") else len(self.hunters)
        return EntitySlots(offset=5, count=others, features=3, mask_feature=2)

    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
        self.agents = list(self.possible_agents)
        self.pos = {a: self.np_random.uniform(-0.9, 0.9, 2).astype(np.float32) for a in self.agents}
        self.travelled = dict.fromkeys(self.agents, 0.0)
        self.t = 0
        return {a: self._observe(a) for a in self.agents}, {a: {} for a in self.agents}

    def _observe(self, agent: str) -> np.ndarray:
        others = self.prey if agent.startswith("hunter") else self.hunters
        rows = []
        for other in others:
            here = self.pos.get(other)
            seen = here is not None and np.linalg.norm(here - self.pos[agent]) <= self.view
            rows.append([*here, 1.0] if seen else [0.0, 0.0, 0.0])
        head = [*self.pos[agent], self.t / self.max_steps, self.travelled[agent]]
        noise = float(self.np_random.normal())
        return np.array(head + [noise] + sum(rows, []), dtype=np.float32)

    def step(self, actions: dict[str, Any]):
        for agent in self.agents:
            action = actions[agent]
            if agent.startswith("hunter"):
                move = np.clip(np.asarray(action, np.float32), -1, 1) * 0.1
            else:
                move = _MOVES[int(action)] * 0.1
            self.pos[agent] = np.clip(self.pos[agent] + move, -1, 1).astype(np.float32)
            self.travelled[agent] += float(np.linalg.norm(move))
        self.t += 1
        live_hunters = [h for h in self.hunters if h in self.agents]
        rewards = {a: (-0.01 if a.startswith("hunter") else 0.01) for a in self.agents}
        terminations = dict.fromkeys(self.agents, False)
        for prey in [p for p in self.prey if p in self.agents]:
            gaps = [np.linalg.norm(self.pos[h] - self.pos[prey]) for h in live_hunters]
            if gaps and min(gaps) <= self.catch:
                terminations[prey] = True
                rewards[prey] = -1.0
                rewards[live_hunters[int(np.argmin(gaps))]] += 1.0
        if all(terminations.get(p, True) for p in self.prey):
            terminations.update(dict.fromkeys(live_hunters, True))
        over = self.t >= self.max_steps
        truncations = {a: over and not terminations[a] for a in self.agents}
        observations = {a: self._observe(a) for a in self.agents}
        infos = {a: {} for a in self.agents}
        for agent in [a for a in self.agents if terminations[a] or truncations[a]]:
            if agent.startswith("prey"):
                del self.pos[agent]  # caught prey are no longer seen
        self.agents = [a for a in self.agents if not (terminations[a] or truncations[a])]
        return observations, rewards, terminations, truncations, infos

    def state(self) -> np.ndarray:
        values = []
        for agent in self.possible_agents:
            values += list(self.pos.get(agent, (0.0, 0.0)))
        return np.array(values + [self.t / self.max_steps], dtype=np.float32)


class Scouts(BatchedEnv):
    """Scouts move (continuous) among fixed beacons; each sees the beacons within ``view``.

    Observation: own (x, y), then per beacon (x, y, seen) in arena coordinates. The core
    declares the rows with ``entity_slots(behaviour)``.
    """

    def __init__(self, n_agents: int = 3, n_beacons: int = 4, view: float = 0.7, **kw):
        super().__init__(**kw)
        self.n, self.m, self.view = n_agents, n_beacons, view
        obs = obs_spec((2 + 3 * n_beacons,), "scout")
        self._add_behavior("Scout", BehaviorSpec([obs], ActionSpec.create_continuous(2)), n_agents)
        self.pos = np.zeros((n_agents, 2), np.float32)
        self.beacons = np.zeros((n_beacons, 2), np.float32)

    def entity_slots(self, behavior: str) -> EntitySlots:
        return EntitySlots(offset=2, count=self.m, features=3, mask_feature=2)

    def _on_reset(self) -> None:
        self.beacons[:] = self.np_random.uniform(-1, 1, (self.m, 2))

    def _reset_agents(self, behavior, slots):
        self.pos[slots] = self.np_random.uniform(-1, 1, (len(slots), 2))

    def _step(self, actions):
        self.pos = np.clip(self.pos + 0.1 * actions["Scout"].continuous, -1, 1)
        seen = self._seen(np.arange(self.n)).sum(axis=1).astype(np.float32)
        return {"Scout": StepResult(0.01 * seen, np.zeros(self.n, bool))}

    def _seen(self, slots):
        gap = np.linalg.norm(self.pos[slots, None] - self.beacons[None], axis=-1)
        return gap <= self.view

    def _observe(self, behavior, slots):
        seen = self._seen(slots)
        rows = (
            np.concatenate(
                [np.broadcast_to(self.beacons, (len(slots), self.m, 2)), seen[..., None]], axis=-1
            )
            * seen[..., None]
        )
        return [np.concatenate([self.pos[slots], rows.reshape(len(slots), -1)], 1)]


class Scripted(ParallelEnv):
    """Agents whose episodes end on a script: ``ends[agent] = (step, "term" | "trunc")``.

    ``joins[agent] = step`` makes an agent appear (spawn) in that step. Every live agent
    observes ``[steps so far]``, takes Discrete(2) actions and earns ``1 + index`` per step
    (its index in ``possible_agents``).
    """

    metadata = {"name": "scripted_v0", "render_modes": []}

    def __init__(self, ends: dict, joins: dict | None = None) -> None:
        self.ends, self.joins = ends, joins or {}
        self.all_agents = list(ends)
        self._obs = spaces.Box(0.0, np.inf, (1,), np.float32)
        self._act = spaces.Discrete(2)
        self.render_mode = None
        self.possible_agents = [a for a in self.all_agents if a not in self.joins]
        self.agents: list[str] = []

    def observation_space(self, agent):
        return self._obs

    def action_space(self, agent):
        return self._act

    def reset(self, seed=None, options=None):
        self.t = 0
        self.possible_agents = [a for a in self.all_agents if a not in self.joins]
        self.agents = list(self.possible_agents)
        self.received: list[dict] = []
        return {a: self._ob() for a in self.agents}, {a: {} for a in self.agents}

    def _ob(self):
        return np.array([self.t], np.float32)

    def step(self, actions):
        self.received.append(dict(actions))
        self.t += 1
        live = list(self.agents)
        terms, truncs = {}, {}
        for agent in live:
            end = self.ends.get(agent)
            done = end is not None and end[0] == self.t
            terms[agent] = done and end[1] == "term"
            truncs[agent] = done and end[1] == "trunc"
        rewards = {a: float(1 + self.all_agents.index(a)) for a in live}
        joined = [a for a, t in self.joins.items() if t == self.t]
        for agent in joined:
            self.possible_agents.append(agent)
            terms[agent] = truncs[agent] = False
            rewards[agent] = 0.0
        observations = {a: self._ob() for a in terms}
        infos = {a: {} for a in terms}
        self.agents = [a for a in live + joined if not (terms[a] or truncs[a])]
        return observations, rewards, terms, truncs, infos


# ---------------------------------------------------------------------- env factories


def tag(**kwargs: Any) -> PettingZooParallelEnv:
    core = {k: kwargs.pop(k) for k in list(kwargs) if k not in _ADAPTER}
    return PettingZooParallelEnv(Tag(**{"seed": 0, **core}), **kwargs)


def ball_balance(**kwargs: Any) -> PettingZooParallelEnv:
    core = {k: kwargs.pop(k) for k in list(kwargs) if k not in _ADAPTER}
    return PettingZooParallelEnv(BallBalance(**{"seed": 0, "n_agents": 3, **core}), **kwargs)


def grid_world(**kwargs: Any) -> PettingZooParallelEnv:
    core = {k: kwargs.pop(k) for k in list(kwargs) if k not in _ADAPTER}
    return PettingZooParallelEnv(GridWorld(**{"seed": 0, "n_agents": 3, **core}), **kwargs)


def scouts(**kwargs: Any) -> PettingZooParallelEnv:
    core = {k: kwargs.pop(k) for k in list(kwargs) if k not in _ADAPTER}
    return PettingZooParallelEnv(Scouts(**{"seed": 0, "max_steps": 40, **core}), **kwargs)


def mini(**kwargs: Any) -> MiniPursuit:
    return MiniPursuit(**{"seed": 0, **kwargs})


_ADAPTER = {"max_cycles", "termination_mode", "mask_in_info", "default_action", "render_mode"}


# ---------------------------------------------------------------------- actions


def random_action(space: spaces.Space, rng: np.random.Generator, mask: Any = None) -> Any:
    """A valid action drawn from ``rng`` (within ``mask`` for a Discrete space)."""
    if isinstance(space, spaces.Discrete):
        if mask is not None:
            return int(space.start + rng.choice(np.flatnonzero(mask)))
        return int(space.start + rng.integers(space.n))
    if isinstance(space, spaces.MultiDiscrete):
        return rng.integers(space.nvec).astype(space.dtype)
    if isinstance(space, spaces.Box):
        return rng.uniform(space.low, space.high).astype(space.dtype)
    if isinstance(space, spaces.Dict):
        return {k: random_action(s, rng) for k, s in space.spaces.items()}
    raise TypeError(space)


def random_actions(env: Any, observations: dict, infos: dict, rng: np.random.Generator) -> dict:
    actions = {}
    for agent in env.agents:
        obs, info = observations.get(agent), infos.get(agent, {})
        mask = obs.get("action_mask") if isinstance(obs, dict) else info.get("action_mask")
        actions[agent] = random_action(env.action_space(agent), rng, mask)
    return actions


def rollout(env: Any, seed: int, steps: int) -> list[tuple]:
    """(obs, rewards, terminations, truncations) per step of a seeded random rollout."""
    rng = np.random.default_rng(seed)
    observations, infos = env.reset(seed=seed)
    record = [(observations,)]
    for _ in range(steps):
        if not env.agents:
            break
        observations, rewards, terms, truncs, infos = env.step(
            random_actions(env, observations, infos, rng)
        )
        record.append((observations, rewards, terms, truncs))
    return record


# ---------------------------------------------------------------------- contract


def check_contract(make_env: Callable[[], Any], steps: int = 25, seed: int = 3) -> list[tuple]:
    """Every wrapper's contract on one env; returns the rollout for further checks."""
    env = make_env()
    for agent in env.possible_agents:
        assert env.observation_space(agent) is env.observation_space(agent)
        assert env.action_space(agent) is env.action_space(agent)
    record = rollout(env, seed, steps)
    for entry in record:
        observations = entry[0]
        for agent, obs in observations.items():
            space = env.observation_space(agent)
            assert space.contains(obs), (agent, space, obs)
        if len(entry) > 1:
            keys = [set(d) for d in entry]
            assert all(k == keys[0] for k in keys), keys
            assert all(isinstance(r, (float, np.floating)) for r in entry[1].values())
    again = rollout(make_env(), seed, steps)
    assert data_equivalence(record, again), "the same seed must give the same rollout"
    run_parallel_api_test(make_env())
    return record
