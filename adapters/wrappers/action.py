"""Discrete actions over Box actions (MATE's ``DiscreteCamera``): points of a grid or disc."""

from __future__ import annotations

import functools
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space
from pettingzoo import ParallelEnv

from zooport.adapters.spaces import checked_discrete
from zooport.errors import ActionError, ArgumentError

from .base import AgentSelector, AgentSpec, ParallelWrapper, StepReturn, check_once, expect

MODES = ("grid", "disc")
_MAX_ACTIONS = 1 << 20


def unit_grid(levels: int, dims: int, mode: str = "grid") -> np.ndarray:
    """The ``(levels ** dims, dims)`` points of the unit square grid or of the unit disc."""
    line = np.linspace(-1.0, 1.0, levels)
    grid = np.stack(np.meshgrid(*([line] * dims), indexing="ij"), axis=-1).reshape(-1, dims)
    if mode == "disc":
        norm = np.linalg.norm(grid, axis=1)
        scale = np.divide(np.abs(grid).max(axis=1), norm, out=np.zeros_like(norm), where=norm > 0)
        grid = grid * scale[:, None]
    return grid


class ActionGrid:
    """A rank-1 bounded Box as ``discrete`` (``Discrete(levels ** d)``) and ``points``."""

    def __init__(self, space: spaces.Space, levels: int, mode: str = "grid") -> None:
        expect(mode in MODES, "mode", f"one of {list(MODES)}", mode)
        ok = isinstance(levels, (int, np.integer)) and not isinstance(levels, bool)
        expect(ok and levels >= 2, "levels", "an int >= 2", levels)
        wanted = "odd and >= 3 for mode='disc' (the centre must be a point)"
        expect(mode != "disc" or (levels >= 3 and levels % 2 == 1), "levels", wanted, int(levels))
        if not isinstance(space, spaces.Box) or len(space.shape) != 1:
            raise ArgumentError(
                f"Expect a rank-1 Box action space to discretize, actually: {space}"
            )
        if not (np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high))):
            raise ArgumentError(f"Expect a Box with finite bounds to discretize, actually: {space}")
        dims = space.shape[0]
        if mode == "disc" and dims != 2:
            raise ArgumentError(f"mode='disc' maps 2-D actions, but the Box is {space}")
        if levels**dims > _MAX_ACTIONS:
            raise ArgumentError(
                f"levels={levels} over {dims} dimensions makes {levels**dims} actions; the "
                f"limit is {_MAX_ACTIONS}"
            )
        self.space, self.levels, self.mode = space, int(levels), mode
        self.unit = unit_grid(self.levels, dims, mode)
        self._low = space.low.astype(np.float64)
        self._half = np.where(space.high > space.low, space.high - self._low, 1.0) / 2.0
        points = self._low + (self.unit + 1.0) * self._half
        self.points = np.clip(points, space.low, space.high).astype(space.dtype)
        self.discrete = spaces.Discrete(len(self.points))

    def action(self, index: Any, where: str = "ActionGrid") -> np.ndarray:
        """The Box action of a discrete index (a fresh array; checked before any cast)."""
        array = np.asarray(index)
        if array.size != 1:
            raise ActionError(
                f"{where}: expected one action of {self.discrete}, got shape {array.shape}"
            )
        value = checked_discrete(array.reshape(()), int(self.discrete.n), where, self.discrete)
        return self.points[int(value)].copy()

    def nearest(self, action: Any) -> int:
        """The index of the grid point nearest ``action`` (in ``[-1, 1]`` units)."""
        unit = (np.asarray(action, dtype=np.float64) - self._low) / self._half - 1.0
        return int(np.argmin(np.linalg.norm(self.unit - unit, axis=-1)))


class DiscretizeActions(ParallelWrapper[str, Any, Any]):
    """Gives the selected agents with Box actions (default: all) ``Discrete(levels ** d)``."""

    def __init__(
        self, env: ParallelEnv, levels: int = 5, mode: str = "grid", *, agents: AgentSpec = None
    ) -> None:
        super().__init__(env)
        check_once(self, env)
        self.levels, self.mode = levels, mode
        self.select = AgentSelector(env, agents)
        self._by_space: dict[int, ActionGrid] = {}  # a grid holds its space: ids stay unique
        self._grids: dict[str, ActionGrid | None] = {}
        if not any([self._grid(agent) for agent in env.possible_agents]):
            raise ArgumentError(
                f"DiscretizeActions: no agent of {env} has a Box action space to discretize "
                f"(agents: {env.possible_agents})"
            )

    def _grid(self, agent: str) -> ActionGrid | None:
        if agent not in self._grids:
            space, selected = self.env.action_space(agent), self.select(agent)
            if selected and self.select.spec is not None and not isinstance(space, spaces.Box):
                raise ArgumentError(
                    f"DiscretizeActions: agent {agent!r} was selected but its action space "
                    f"is {space}, not a Box"
                )
            if selected and isinstance(space, spaces.Box) and id(space) not in self._by_space:
                self._by_space[id(space)] = ActionGrid(space, self.levels, self.mode)
            self._grids[agent] = self._by_space.get(id(space)) if selected else None
        return self._grids[agent]

    def action_space(self, agent: str) -> spaces.Space:
        grid = self._grid(agent)
        return self.env.action_space(agent) if grid is None else grid.discrete

    def action(self, agent: str, index: Any) -> Any:
        """The wrapped env's action for ``agent``'s discrete ``index`` (others unchanged)."""
        grid = self._grid(agent)
        return index if grid is None else grid.action(index, f"DiscretizeActions: agent {agent!r}")

    def reverse_action(self, agent: str, action: Any) -> Any:
        """The discrete index whose grid point is nearest ``agent``'s Box ``action``."""
        grid = self._grid(agent)
        return action if grid is None else grid.nearest(action)

    def step(self, actions: dict[str, Any]) -> StepReturn:
        return self.env.step({a: self.action(a, act) for a, act in actions.items()})


class GymDiscretizeActions(gym.wrappers.TransformAction):
    """:class:`DiscretizeActions` for a single-agent ``gymnasium.Env`` with a Box action space."""

    def __init__(self, env: gym.Env, levels: int = 5, mode: str = "grid") -> None:
        self.grid = ActionGrid(env.action_space, levels, mode)
        action = functools.partial(self.grid.action, where="GymDiscretizeActions")
        super().__init__(env, action, self.grid.discrete)

    def reverse_action(self, action: Any) -> int:
        """The index of the grid point nearest a Box action."""
        return self.grid.nearest(action)


class VectorDiscretizeActions(gym.vector.VectorActionWrapper):
    """:class:`DiscretizeActions` for a ``gymnasium.vector.VectorEnv`` with Box actions."""

    def __init__(self, env: gym.vector.VectorEnv, levels: int = 5, mode: str = "grid") -> None:
        super().__init__(env)
        self.grid = ActionGrid(env.single_action_space, levels, mode)
        self.single_action_space = self.grid.discrete
        self.action_space = batch_space(self.grid.discrete, env.num_envs)

    def actions(self, actions: Any) -> np.ndarray:
        n, where = int(self.grid.discrete.n), "VectorDiscretizeActions"
        return self.grid.points[checked_discrete(np.asarray(actions), n, where, self.action_space)]


DiscretizeActions.forms = {"gym": GymDiscretizeActions, "vector": VectorDiscretizeActions}
