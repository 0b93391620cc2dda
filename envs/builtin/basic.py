"""ML-Agents' Basic example: walk along a line to the better of two goals."""

from typing import ClassVar

import numpy as np

from zooport.envs.arguments import check_int
from zooport.envs.base_env import ActionSpec, ActionTuple, BehaviorSpec, ObservationSpec
from zooport.envs.batched_env import BatchedEnv, EnvDeclaration, StepResult
from zooport.envs.builtin import _common

__all__ = ["Basic"]

_MAX_POSITION = 20
_START = 10
_OBS_SIZE = 20  # ML-Agents' BasicSensor: a one-hot over 20 (positions beyond a goal: never)
_MOVES = np.array([0, -1, 1], dtype=np.int64)
_GOALS = np.array([7, 17])
#: Per position: the step's reward, -0.01 plus 0.1 at the small goal and 1.0 at the large.
_REWARD = np.full(_MAX_POSITION + 1, -0.01)
_REWARD[_GOALS] += (0.1, 1.0)


class Basic(BatchedEnv):
    """ML-Agents' Basic: walk left to a small goal or right to a large one.

    Each agent walks positions ``[0, 20]`` from 10: reaching 7 earns +0.1 and 17 +1.0 and
    ends the episode; each step costs 0.01. Observation ``"position"``, a (20,) one-hot;
    one discrete branch of 3 actions: 0 stay, 1 left, 2 right.
    """

    behavior_name: ClassVar[str] = "Basic"
    #: A trained PPO policy's mean episode reward (optimum 0.93, random actions 0.04).
    expected_reward: ClassVar[float] = 0.9
    max_episode_steps: ClassVar[int] = 100
    declaration: ClassVar[EnvDeclaration] = EnvDeclaration(gym_kwargs={"n_agents": 1})

    def __init__(
        self, *, n_agents: int = 1, seed: int | None = None,
        side_channels: _common.SideChannels = None, max_steps: int = max_episode_steps,
        reorder_agents: bool = False,
    ) -> None:  # fmt: skip
        self.n_agents = check_int(n_agents, "n_agents", 1)
        super().__init__(seed, side_channels, max_steps, reorder_agents)
        obs = ObservationSpec.vector(_OBS_SIZE, "position")
        spec = BehaviorSpec([obs], ActionSpec.create_discrete((3,)))
        self._add_behavior(self.behavior_name, spec, self.n_agents)
        self._position = np.full(self.n_agents, _START, dtype=np.int64)

    def _reset_agents(self, behavior: str, slots: np.ndarray) -> None:
        self._position[slots] = _START

    def _step(self, actions: dict[str, ActionTuple]) -> dict[str, StepResult]:
        move = _MOVES[actions[self.behavior_name].discrete[:, 0]]
        self._position = position = np.clip(self._position + move, 0, _MAX_POSITION)
        reward = _REWARD[position]
        return {self.behavior_name: StepResult(reward.astype(np.float32), reward > 0)}

    def _observe(self, behavior: str, slots: np.ndarray) -> list[np.ndarray]:
        position = np.minimum(self._position[slots], _OBS_SIZE - 1)
        return [np.eye(_OBS_SIZE, dtype=np.float32)[position]]

    def _render(self) -> np.ndarray:
        cell, n, width = 16, self.n_agents, _MAX_POSITION + 1
        image = np.full((n * cell, width * cell, 3), 40, np.uint8)
        rows = np.arange(n) * cell
        image[:, ::cell] = 0  # cell separators make positions countable
        for goal, side in zip(_GOALS.tolist(), (cell // 3, cell - 4), strict=True):
            offset = (cell - side) // 2
            left = goal * cell + offset
            _common.fill_rects(image, rows + offset, left, side, side, (60, 200, 60))
        _common.fill_circles(
            image, rows + cell / 2, (self._position + 0.5) * cell, cell * 0.35, (60, 120, 255)
        )
        return image
