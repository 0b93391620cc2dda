"""ML-Agents' older BaseEnv API generations, written by hand from its history, and an env in it.

No mlagents_envs is needed: ``BehaviorSpec(observation_shapes, action_type, action_shape)``
with an ``ActionType`` enum, ``DecisionSteps`` without groups, ``TerminalSteps.max_step``
(0.16) or ``interrupted`` (0.17-0.21), ndarray actions, ``get_behavior_names`` (0.16); then
the 0.22 (``action_spec`` + ndarray), 0.23 (its own ``ActionTuple``) and 0.24
(``observation_specs``, still no groups) steps.

Classes:
    ActionType, OldBehaviorSpec, OldDecisionSteps, OldTerminalStepsMaxStep,
        OldTerminalSteps, OldActionSpec, OldActionTuple, OldTupleActionSpec,
        OldSpecWithActionSpec: the old API's types.
    OldWalkers: a small deterministic numpy env in the 0.16-0.21 API (rows in descending id
        order, masks, restarts in the same step).
    OldWalkers016: OldWalkers behind 0.16's ``get_behavior_names``/``get_behavior_spec``.

Functions:
    by_id: the row order of a batch sorted by agent id.
    hand_action: a valid random action for OldWalkers' current decision, in the old format.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

# ----------------------------------------------------------------------------- the old API


class ActionType(enum.Enum):
    DISCRETE = 0
    CONTINUOUS = 1


class OldBehaviorSpec(NamedTuple):
    observation_shapes: list[tuple[int, ...]]
    action_type: ActionType
    action_shape: int | tuple[int, ...]

    def is_action_discrete(self) -> bool:
        return self.action_type == ActionType.DISCRETE

    def is_action_continuous(self) -> bool:
        return self.action_type == ActionType.CONTINUOUS

    @property
    def action_size(self) -> int:
        return len(self.action_shape) if self.is_action_discrete() else self.action_shape

    def create_empty_action(self, n_agents: int) -> np.ndarray:
        dtype = np.int32 if self.is_action_discrete() else np.float32
        return np.zeros((n_agents, self.action_size), dtype=dtype)

    def create_random_action(self, n_agents: int) -> np.ndarray:
        if self.is_action_discrete():
            return np.column_stack(
                [np.random.randint(0, b, size=n_agents, dtype=np.int32) for b in self.action_shape]
            )
        return np.random.uniform(-1, 1, (n_agents, self.action_size)).astype(np.float32)


class _OldSteps(Mapping):
    agent_id: np.ndarray

    def __len__(self) -> int:
        return len(self.agent_id)

    def __iter__(self):
        yield from self.agent_id

    def __getitem__(self, agent_id):  # pragma: no cover - not used by zooport
        raise NotImplementedError


class OldDecisionSteps(_OldSteps):
    def __init__(self, obs, reward, agent_id, action_mask):
        self.obs, self.reward, self.agent_id, self.action_mask = obs, reward, agent_id, action_mask


class OldTerminalStepsMaxStep(_OldSteps):
    """mlagents_envs 0.16: the truncation flag is called ``max_step``."""

    def __init__(self, obs, reward, max_step, agent_id):
        self.obs, self.reward, self.max_step, self.agent_id = obs, reward, max_step, agent_id


class OldTerminalSteps(_OldSteps):
    """mlagents_envs 0.17-0.24: ``interrupted``, still no groups."""

    def __init__(self, obs, reward, interrupted, agent_id):
        self.obs, self.reward, self.interrupted, self.agent_id = obs, reward, interrupted, agent_id


class OldActionSpec(NamedTuple):
    """mlagents_envs 0.22: an ActionSpec, but ``empty_action`` is still one ndarray."""

    continuous_size: int
    discrete_branches: tuple[int, ...]

    def empty_action(self, n_agents: int) -> np.ndarray:
        if self.continuous_size:
            return np.zeros((n_agents, self.continuous_size), dtype=np.float32)
        return np.zeros((n_agents, len(self.discrete_branches)), dtype=np.int32)


class OldActionTuple:
    """mlagents_envs 0.23: its own ActionTuple class."""

    def __init__(self, continuous=None, discrete=None):
        self.continuous, self.discrete = continuous, discrete


class OldTupleActionSpec(NamedTuple):
    continuous_size: int
    discrete_branches: tuple[int, ...]

    def empty_action(self, n_agents: int) -> OldActionTuple:
        return OldActionTuple(
            np.zeros((n_agents, self.continuous_size), np.float32),
            np.zeros((n_agents, len(self.discrete_branches)), np.int32),
        )


class OldSpecWithActionSpec(NamedTuple):
    observation_shapes: list[tuple[int, ...]]
    action_spec: Any


# ----------------------------------------------------------------------------- an old env

BEHAVIOR = "Walker?team=0"
BRANCHES = (3, 2)
SHAPES = [(3,), (2,)]


class OldWalkers:
    """Agents walk along a line; written against the mlagents_envs 0.16-0.21 API.

    Discrete: branch 0 moves -1/0/+1, branch 1 doubles the move; moving right is masked
    at ``pos >= 3``. Continuous: ``pos += 0.5 a0 + 0.25 a1``. Reaching ``pos >= 4`` ends
    the episode (terminated); ``limit`` steps end it as interrupted. An agent that ends is
    restarted in the same step (it is in both batches, as Unity does). Rows are presented
    in descending id order so that consumers must map by id.
    """

    def __init__(
        self,
        kind: str = "discrete",
        n_agents: int = 3,
        *,
        terminal: type = OldTerminalStepsMaxStep,
        spec_style: str = "action_type",
        limit: int = 6,
    ) -> None:
        self.kind = kind
        self.n = n_agents
        self.ids = np.arange(10, 10 + n_agents, dtype=np.int32)
        self.terminal_type = terminal
        self.limit = limit
        if spec_style == "action_type":
            if kind == "discrete":
                spec = OldBehaviorSpec(SHAPES, ActionType.DISCRETE, BRANCHES)
            else:
                spec = OldBehaviorSpec(SHAPES, ActionType.CONTINUOUS, 2)
        elif spec_style == "action_spec_ndarray":
            action_spec = OldActionSpec(0, BRANCHES) if kind == "discrete" else OldActionSpec(2, ())
            spec = OldSpecWithActionSpec(SHAPES, action_spec)
        else:
            action_spec = (
                OldTupleActionSpec(0, BRANCHES) if kind == "discrete" else OldTupleActionSpec(2, ())
            )
            spec = OldSpecWithActionSpec(SHAPES, action_spec)
        self.spec = spec
        self.received: list[Any] = []
        self.closed_calls = 0
        self.steps: tuple[Any, Any] | None = None

    @property
    def behavior_specs(self) -> dict[str, Any]:
        return {BEHAVIOR: self.spec}

    # -- simulation
    def reset(self) -> None:
        self.pos = np.zeros(self.n, np.float32)
        self.t = np.zeros(self.n, np.int64)
        self.action = None
        self._publish(np.arange(self.n), np.zeros(0, np.intp), None, None)

    def step(self) -> None:
        rows = self.n
        if self.kind == "discrete":
            a = np.zeros((rows, 2), np.int32) if self.action is None else self.action
            move = (a[:, 0] - 1) * (1 + a[:, 1])
        else:
            a = np.zeros((rows, 2), np.float32) if self.action is None else self.action
            move = 0.5 * a[:, 0] + 0.25 * a[:, 1]
        self.action = None
        self.pos = (self.pos + move).astype(np.float32)
        self.t += 1
        reward = (0.1 * self.pos - 0.01 * np.arange(self.n)).astype(np.float32)
        goal = self.pos >= 4
        timeout = ~goal & (self.t >= self.limit)
        done = np.flatnonzero(goal | timeout)
        terminal = None
        if done.size:
            terminal = (self._obs(done), reward[done], timeout[done])
            self.pos[done] = 0
            self.t[done] = 0
        decision_reward = reward.copy()
        decision_reward[done] = 0  # a restarted agent starts its next episode at 0
        self._publish(np.arange(self.n), done, terminal, decision_reward)

    def _obs(self, rows: np.ndarray) -> list[np.ndarray]:
        pos, t = self.pos[rows], self.t[rows].astype(np.float32)
        ids = self.ids[rows].astype(np.float32)
        return [np.stack([pos, t, ids], axis=1), np.stack([2 * pos, np.ones_like(pos)], axis=1)]

    def _publish(self, rows, done, terminal, reward) -> None:
        order = rows[::-1]
        mask = None
        if self.kind == "discrete":
            right_blocked = self.pos[order] >= 3
            branch0 = np.zeros((order.size, 3), bool)
            branch0[:, 2] = right_blocked
            mask = [branch0, np.zeros((order.size, 2), bool)]
        reward = np.zeros(self.n, np.float32) if reward is None else reward
        decision = OldDecisionSteps(self._obs(order), reward[order], self.ids[order], mask)
        if terminal is None:
            terminal = ([np.zeros((0, 3), np.float32), np.zeros((0, 2), np.float32)],
                        np.zeros(0, np.float32), np.zeros(0, bool))  # fmt: skip
        obs, t_reward, interrupted = terminal
        steps = self.terminal_type(obs, t_reward, interrupted, self.ids[done])
        self.steps = (decision, steps)
        self._order = order

    # -- the old API
    def get_steps(self, behavior_name: str):
        if behavior_name != BEHAVIOR:
            raise KeyError(behavior_name)
        return self.steps

    def _action_size(self) -> tuple[int, type]:
        return (2, np.int32) if self.kind == "discrete" else (2, np.float32)

    def set_actions(self, behavior_name: str, action: Any) -> None:
        self.received.append(action)
        if isinstance(action, OldActionTuple):
            action = action.discrete if self.kind == "discrete" else action.continuous
        size, dtype = self._action_size()
        if not isinstance(action, np.ndarray) or action.shape != (self.n, size):
            raise ValueError(f"old env wants an ndarray of shape {(self.n, size)}, got {action!r}")
        batch = np.zeros((self.n, size), dtype)
        batch[self._order] = action.astype(dtype)  # rows follow the DecisionSteps order
        self.action = batch

    def set_action_for_agent(self, behavior_name, agent_id, action) -> None:  # pragma: no cover
        raise AssertionError("zooport builds set_action_for_agent on set_actions")

    def close(self) -> None:
        self.closed_calls += 1


class OldWalkers016:
    """mlagents_envs 0.16 had ``get_behavior_names()``/``get_behavior_spec(name)`` instead of
    the ``behavior_specs`` mapping."""

    def __init__(self, **kwargs: Any) -> None:
        self.inner = OldWalkers(**kwargs)

    def get_behavior_names(self) -> list[str]:
        return [BEHAVIOR]

    def get_behavior_spec(self, behavior_name: str) -> OldBehaviorSpec:
        return self.inner.spec

    def reset(self) -> None:
        self.inner.reset()

    def step(self) -> None:
        self.inner.step()

    def get_steps(self, behavior_name: str):
        return self.inner.get_steps(behavior_name)

    def set_actions(self, behavior_name: str, action: np.ndarray) -> None:
        self.inner.set_actions(behavior_name, action)

    def set_action_for_agent(self, behavior_name, agent_id, action) -> None:  # pragma: no cover
        raise AssertionError("zooport builds set_action_for_agent on set_actions")

    def close(self) -> None:
        self.inner.close()


def by_id(steps) -> np.ndarray:
    return np.argsort(np.asarray(steps.agent_id), kind="stable")


P = [0.2, 0.2, 0.6]


def hand_action(env: OldWalkers, rng: np.random.Generator) -> np.ndarray:
    """A valid random action for every row of the current DecisionSteps, in the old format."""
    decision = env.steps[0]
    n = len(decision)
    if env.kind == "continuous":
        return rng.uniform(-1, 1, (n, 2)).astype(np.float32)
    # Mostly right (so that episodes reach the goal), never a masked action.
    first = np.where(decision.action_mask[0][:, 2], rng.integers(0, 2, n), rng.choice(3, n, p=P))
    return np.stack([first, rng.integers(0, 2, n)], axis=1).astype(np.int32)
