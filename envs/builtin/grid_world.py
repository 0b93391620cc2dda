"""ML-Agents' GridWorld: reach the goal the goal signal names, seen through a tiny camera."""

from typing import ClassVar

import numpy as np

from zooport.envs.arguments import check_int
from zooport.envs.base_env import (
    ActionSpec,
    ActionTuple,
    BehaviorSpec,
    ObservationSpec,
    ObservationType,
)
from zooport.envs.batched_env import BatchedEnv, EnvDeclaration, StepResult
from zooport.envs.builtin import _common
from zooport.errors import ArgumentError, ArgumentTypeError, article

__all__ = ["GridWorld"]

#: Row and column change of each action: 0 stay, 1 up, 2 down, 3 left, 4 right.
_MOVES = np.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1]], dtype=np.int64)

# Cell kinds and their colours in the camera (float, [0, 1]).
_EMPTY, _WALL, _PLUS, _CROSS, _AGENT = range(5)
_PALETTE = np.array([[0, 0, 0], [0.5, 0.5, 0.5], [0, 1, 0], [1, 0, 0], [0, 0, 1]], np.float32)


class GridWorld(BatchedEnv):
    """ML-Agents' GridWorld, vectorised: walk to the goal the goal signal names.

    Each episode places the agent, a green plus and a red cross on a ``grid_size`` board,
    with ``n_walls`` walls on cells of odd row and column. Each step costs 0.01; the named
    goal ends the episode with +1, the other with -1. Observations ``"camera"``, (rows * p,
    cols * p, 3) float32 (p = ``pixels_per_cell``), and ``"goal"``, a GOAL_SIGNAL one-hot
    (0 plus, 1 cross); actions 0 stay, 1 up, 2 down, 3 left, 4 right, masked into walls.
    """

    behavior_name: ClassVar[str] = "GridWorld"
    #: A trained masked PPO policy's mean episode reward (optimum 0.97, random moves -0.23).
    expected_reward: ClassVar[float] = 0.75
    max_episode_steps: ClassVar[int] = 50
    declaration: ClassVar[EnvDeclaration] = EnvDeclaration(
        pettingzoo_name="grid_world_v0", gym_kwargs={"n_agents": 1}
    )

    def __init__(
        self, *, n_agents: int = 4, seed: int | None = None,
        side_channels: _common.SideChannels = None, max_steps: int = max_episode_steps,
        reorder_agents: bool = False, grid_size: int | tuple[int, int] = 5, n_walls: int = 0,
        pixels_per_cell: int = 1,
    ) -> None:  # fmt: skip
        n = check_int(n_agents, "n_agents", 1)
        if isinstance(grid_size, (int, np.integer)) and not isinstance(grid_size, bool):
            grid_size = (grid_size, grid_size)
        if not (isinstance(grid_size, (tuple, list)) and len(grid_size) == 2):
            raise ArgumentTypeError(
                f"Expect grid_size to be an int or (rows, cols), actually: {grid_size!r}"
            )
        rows = check_int(grid_size[0], "grid_size rows", 2)
        cols = check_int(grid_size[1], "grid_size cols", 2)
        pillars = (rows // 2) * (cols // 2)
        self.n_walls = check_int(n_walls, "n_walls", 0)
        if self.n_walls > pillars or rows * cols - self.n_walls < 3:
            raise ArgumentError(
                f"Expect n_walls <= {min(pillars, rows * cols - 3)} on "
                f"{article(f'{rows}x{cols}')} grid "
                f"(walls stand on cells with odd row and column; 3 cells must stay free), "
                f"actually: {self.n_walls}"
            )
        self.pixels_per_cell = check_int(pixels_per_cell, "pixels_per_cell", 1)
        super().__init__(seed, side_channels, max_steps, reorder_agents)
        self.n_agents, self.grid_size = n, (rows, cols)
        p = self.pixels_per_cell
        camera = ObservationSpec.visual(rows * p, cols * p, 3, "camera")
        goal = ObservationSpec.vector(2, "goal", observation_type=ObservationType.GOAL_SIGNAL)
        spec = BehaviorSpec([camera, goal], ActionSpec.create_discrete((5,)))
        self._add_behavior(self.behavior_name, spec, n)
        # Boards are stored with their border: interior cell (r, c) is (r + 1, c + 1).
        self._border = np.pad(np.zeros((rows, cols), bool), 1, constant_values=True)
        self._walls = np.broadcast_to(self._border, (n, rows + 2, cols + 2)).copy()
        self._pillar_cells = np.argwhere(np.ones((rows // 2, cols // 2))) * 2 + 2  # odd r and c
        self._agent = np.ones((n, 2), dtype=np.int64)
        self._goals = np.ones((n, 2, 2), dtype=np.int64)  # (agent, plus/cross, row/col)
        self._target = np.zeros(n, dtype=np.int64)

    def _reset_agents(self, behavior: str, slots: np.ndarray) -> None:
        k, (rows, cols) = slots.size, self.grid_size
        self._walls[slots] = self._border
        if self.n_walls:
            # A random subset of the pillar cells: the first n_walls of a random order.
            order = np.argsort(self.np_random.random((k, len(self._pillar_cells))), axis=1)
            cells = self._pillar_cells[order[:, : self.n_walls]]  # (k, n_walls, 2)
            self._walls[slots[:, None], cells[..., 0], cells[..., 1]] = True
        # Three distinct free cells per board: the first three of a random order of free cells.
        keys = self.np_random.random((k, rows * cols))
        keys[self._walls[slots, 1:-1, 1:-1].reshape(k, -1)] = 2.0  # walls last
        chosen = np.argsort(keys, axis=1)[:, :3]
        positions = np.stack([chosen // cols, chosen % cols], axis=2) + 1  # (k, 3, 2)
        self._agent[slots], self._goals[slots] = positions[:, 0], positions[:, 1:]
        self._target[slots] = self.np_random.integers(0, 2, k)

    def _step(self, actions: dict[str, ActionTuple]) -> dict[str, StepResult]:
        index = np.arange(self.n_agents)
        target = self._agent + _MOVES[actions[self.behavior_name].discrete[:, 0]]
        # The border is a wall, so a blocked move is exactly a move into a wall cell.
        blocked = self._walls[index, target[:, 0], target[:, 1]]
        self._agent = np.where(blocked[:, None], self._agent, target)
        on_goal = (self._agent[:, None, :] == self._goals).all(axis=2)  # (n, 2)
        right, wrong = on_goal[index, self._target], on_goal[index, 1 - self._target]
        reward = np.where(right, 1.0, np.where(wrong, -1.0, -0.01))
        return {self.behavior_name: StepResult(reward.astype(np.float32), right | wrong)}

    def _cell_kinds(self, slots: np.ndarray, border: bool) -> np.ndarray:
        index = np.arange(slots.size)
        kinds = np.where(self._walls[slots], _WALL, _EMPTY)
        goals, agent = self._goals[slots], self._agent[slots]
        kinds[index[:, None], goals[..., 0], goals[..., 1]] = (_PLUS, _CROSS)
        kinds[index, agent[:, 0], agent[:, 1]] = _AGENT
        return kinds if border else kinds[:, 1:-1, 1:-1]

    def _observe(self, behavior: str, slots: np.ndarray) -> list[np.ndarray]:
        camera = _PALETTE[self._cell_kinds(slots, border=False)]
        if self.pixels_per_cell > 1:
            camera = camera.repeat(self.pixels_per_cell, 1).repeat(self.pixels_per_cell, 2)
        return [camera, np.eye(2, dtype=np.float32)[self._target[slots]]]

    def _action_mask(self, behavior: str, slots: np.ndarray) -> list[np.ndarray]:
        target = self._agent[slots, None, :] + _MOVES[None, :, :]  # (k, 5, 2)
        return [self._walls[slots[:, None], target[..., 0], target[..., 1]]]

    def _render(self) -> np.ndarray:
        cell, index = 12, np.arange(self.n_agents)
        kinds = self._cell_kinds(index, border=True)
        # The named goal keeps its shape on a lit cell (kinds 5 and 6), unless the agent is on it.
        goal = self._goals[index, self._target]
        lit = index[kinds[index, goal[:, 0], goal[:, 1]] != _AGENT]
        kinds[lit, goal[lit, 0], goal[lit, 1]] = 5 + self._target[lit]
        n, rows, cols = kinds.shape
        images = _stamps(cell)[kinds].transpose(0, 1, 3, 2, 4, 5)  # (n, R, cell, C, cell, 3)
        return _common.tile(images.reshape(n, rows * cell, cols * cell, 3))


def _stamps(cell: int) -> np.ndarray:
    """(7, cell, cell, 3): each cell kind's picture, then the named plus and cross."""
    r, c = np.mgrid[0:cell, 0:cell] + 0.5
    mid, arm = cell / 2, cell * 0.12
    inner = (r > cell * 0.15) & (r < cell * 0.85) & (c > cell * 0.15) & (c < cell * 0.85)
    plus = inner & ((np.abs(r - mid) < arm) | (np.abs(c - mid) < arm))
    cross = inner & ((np.abs(r - c) < arm * 1.4) | (np.abs(r + c - cell) < arm * 1.4))
    disc = (r - mid) ** 2 + (c - mid) ** 2 <= (cell * 0.38) ** 2
    shapes = np.stack([np.zeros_like(disc), np.ones_like(disc), plus, cross, disc, plus, cross])
    # Each shape in its colour (the lit goals keep theirs) on a grey background.
    fg = np.array([[0, 0, 0], [128, 128, 128], [0, 220, 0], [230, 0, 0], [40, 90, 255]], np.uint8)
    fg = np.concatenate([fg, fg[2:4]])[:, None, None]
    bg = np.array([20, 128, 20, 20, 20, 235, 235], np.uint8)[:, None, None, None]
    return np.where(shapes[..., None], fg, bg)
