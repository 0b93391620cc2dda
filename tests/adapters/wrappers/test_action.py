"""DiscretizeActions and its gym/vector forms: grids by hand, equivalence with the raw adapter
fed the grid points, and the shared contract on a zooport env and a non-zooport env."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import data_equivalence

from zooport.adapters.gym_env import GymEnv
from zooport.adapters.vector_env import BehaviorVectorEnv
from zooport.adapters.wrappers import (
    ActionGrid,
    DiscretizeActions,
    GymDiscretizeActions,
    VectorDiscretizeActions,
)
from zooport.adapters.wrappers.action import unit_grid
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.errors import ActionError

from tests.support.checkers import check_gym
from tests.support.wrappers import ball_balance, check_contract, mini, tag


def test_unit_grid_by_hand():
    corners = np.round(unit_grid(3, 2, "disc")[:2], 3).tolist()  # a corner goes onto the circle
    assert corners == [[-0.707, -0.707], [-1.0, 0.0]]
    assert unit_grid(2, 2).tolist() == [[-1, -1], [-1, 1], [1, -1], [1, 1]]
    assert unit_grid(3, 1).tolist() == [[-1.0], [0.0], [1.0]]
    disc = unit_grid(5, 2, "disc")
    norms = np.linalg.norm(disc, axis=1)
    square = unit_grid(5, 2)
    np.testing.assert_allclose(norms, np.abs(square).max(axis=1))  # square ring k -> radius k
    assert disc[12].tolist() == [0.0, 0.0] and np.all(norms <= 1 + 1e-12)
    np.testing.assert_allclose(disc[24], [np.sqrt(0.5), np.sqrt(0.5)])


def test_action_grid_scales_to_bounds_and_reverses():
    box = spaces.Box(np.array([0.0, -4.0], np.float32), np.array([1.0, 4.0], np.float32))
    grid = ActionGrid(box, levels=3)
    assert grid.points.dtype == np.float32 and grid.discrete == spaces.Discrete(9)
    assert grid.points[[0, 4, 8]].tolist() == [[0.0, -4.0], [0.5, 0.0], [1.0, 4.0]]
    assert [grid.nearest(p) for p in grid.points] == list(range(9))
    assert grid.nearest([0.9, -1.5]) == 7 - 0 and grid.nearest([0.2, 3.9]) == 2
    disc = ActionGrid(spaces.Box(-1.0, 1.0, (2,), np.float32), 3, "disc")
    assert [disc.nearest(p) for p in disc.points] == list(range(9))


@pytest.mark.parametrize(
    ("box", "levels", "mode", "message"),
    [
        (spaces.Box(-1.0, 1.0, (2,)), 1, "grid", "levels to be an int >= 2"),
        (spaces.Box(-1.0, 1.0, (2,)), 4, "disc", "odd and >= 3 for mode='disc'"),
        (spaces.Box(-1.0, 1.0, (3,)), 3, "disc", "maps 2-D actions"),
        (spaces.Box(-np.inf, 1.0, (2,)), 3, "grid", "finite bounds"),
        (spaces.Box(-1.0, 1.0, (2, 2)), 3, "grid", "rank-1 Box"),
        (spaces.Box(-1.0, 1.0, (30,)), 3, "grid", "the limit is"),
        (spaces.Box(-1.0, 1.0, (2,)), 3, "hex", "mode to be one of"),
    ],
)
def test_bad_grids(box, levels, mode, message):
    with pytest.raises(ValueError, match=message):
        ActionGrid(box, levels, mode)


def test_wrapped_zooport_env_equals_the_raw_adapter_fed_grid_points():
    env, raw = DiscretizeActions(ball_balance(), 5, "disc"), ball_balance()
    space = env.action_space("ballbalance_0")
    assert space == spaces.Discrete(25)
    assert all(env.action_space(a) is space for a in env.possible_agents)
    grid = ActionGrid(raw.action_space("ballbalance_0"), 5, "disc")
    rng = np.random.default_rng(0)
    assert data_equivalence(env.reset(seed=1), raw.reset(seed=1))
    for _ in range(20):
        if not env.agents:
            break
        picks = {a: int(rng.integers(25)) for a in env.agents}
        assert data_equivalence(
            env.step(picks), raw.step({a: grid.points[k] for a, k in picks.items()})
        )


def test_only_box_agents_change_on_a_non_zooport_env():
    inner = mini()
    env = DiscretizeActions(inner, levels=3)
    assert env.action_space("hunter_1") == spaces.Discrete(9)
    assert env.action_space("prey_0") is inner.action_space("prey_0")
    assert env.action("prey_0", 4) == 4 and env.reverse_action("prey_0", 4) == 4
    assert env.action("hunter_0", 0).tolist() == [-1.0, -1.0]
    assert env.reverse_action("hunter_0", [0.6, -0.1]) == 7
    env.reset(seed=0)
    with pytest.raises(ActionError, match=r"in \[0, 8\] for Discrete\(9\), got -1"):
        env.step({"hunter_0": -1, "hunter_1": 0, "prey_0": 0, "prey_1": 0})


def test_selection_errors():
    with pytest.raises(ValueError, match="no agent of .* has a Box action space"):
        DiscretizeActions(tag())
    with pytest.raises(ValueError, match="agent 'prey_0' was selected but its action space"):
        DiscretizeActions(mini(), agents=["hunter_0", "prey_0"])
    env = DiscretizeActions(mini(), agents=["hunter_0"])
    assert env.action_space("hunter_1") == spaces.Box(-1.0, 1.0, (2,), np.float32)


@pytest.mark.parametrize("factory", [ball_balance, mini])
@pytest.mark.parametrize("mode", ["grid", "disc"])
def test_contract(factory, mode):
    check_contract(lambda: DiscretizeActions(factory(), 3, mode))


def test_gym_form_passes_gymnasium_check_env():
    env = GymDiscretizeActions(GymEnv(BallBalance(n_agents=1, seed=0)), 5, "disc")
    check_gym(env)
    assert env.action_space == spaces.Discrete(25) and env.reverse_action([0.0, 0.0]) == 12
    env.reset(seed=0)
    obs, reward, *_ = env.step(24)
    assert isinstance(reward, float)


def test_vector_form_maps_each_slot():
    envs = VectorDiscretizeActions(BehaviorVectorEnv(BallBalance(n_agents=3, seed=0)), 3)
    raw = BehaviorVectorEnv(BallBalance(n_agents=3, seed=0))
    assert envs.single_action_space == spaces.Discrete(9) and envs.action_space.shape == (3,)
    assert data_equivalence(envs.reset(seed=2), raw.reset(seed=2))
    picks = np.array([0, 4, 8])
    assert data_equivalence(
        envs.step(picks), raw.step(np.array([[-1, -1], [0, 0], [1, 1]], np.float32))
    )
    with pytest.raises(ActionError, match=r"in \[0, 8\] for MultiDiscrete\(\[9 9 9\]\), got 9"):
        envs.step(np.array([0, 9, 1]))
