"""Tests of the built-in environments Basic, BallBalance and GridWorld, on the raw core."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from zooport.envs.base_env import (
    ActionSpec,
    ActionTuple,
    DimensionProperty,
    ObservationType,
)
from zooport.envs.builtin import _common
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.builtin.basic import Basic
from zooport.envs.builtin.grid_world import GridWorld
from zooport.envs.side_channel.environment_parameters_channel import (
    EnvironmentParametersChannel,
)
from zooport.envs.side_channel.stats_side_channel import (
    StatsAggregationMethod,
    StatsSideChannel,
)

MOVES = {0: (0, 0), 1: (-1, 0), 2: (1, 0), 3: (0, -1), 4: (0, 1)}
BLUE, GREEN, RED = (0.0, 0.0, 1.0), (0.0, 1.0, 0.0), (1.0, 0.0, 0.0)


def _step(env, name, discrete=None, continuous=None):
    env.set_actions(name, ActionTuple(continuous=continuous, discrete=discrete))
    env.step()
    return env.get_steps(name)


def _snapshot(steps):
    decision, terminal = steps
    return (
        [o.copy() for o in decision.obs],
        decision.reward.copy(),
        decision.agent_id.copy(),
        None if decision.action_mask is None else [m.copy() for m in decision.action_mask],
        [o.copy() for o in terminal.obs],
        terminal.reward.copy(),
        terminal.agent_id.copy(),
        terminal.interrupted.copy(),
    )


def _assert_same(a, b):
    for x, y in zip(a, b, strict=True):
        if x is None or y is None:
            assert x is y
        elif isinstance(x, list):
            for u, v in zip(x, y, strict=True):
                np.testing.assert_array_equal(u, v)
        else:
            np.testing.assert_array_equal(x, y)


# ----------------------------------------------------------------------------- specs


def _only_observation(spec, shape, name):
    """The spec's one observation, after checking its shape, name and type (DEFAULT)."""
    (obs,) = spec.observation_specs
    assert (obs.shape, obs.name, obs.observation_type) == (shape, name, ObservationType.DEFAULT)
    return obs


def test_basic_spec():
    env = Basic()
    spec = env.behavior_specs["Basic"]
    obs = _only_observation(spec, (20,), "position")
    assert obs.dimension_property == (DimensionProperty.NONE,)
    assert spec.action_spec == ActionSpec.create_discrete((3,))
    assert Basic.max_episode_steps == 100
    # Random play earns about 0.04; the best return is 0.93.
    assert 0.1 < Basic.expected_reward <= 0.93
    env.reset()
    decision, terminal = env.get_steps("Basic")
    assert decision.obs[0].shape == (1, 20) and decision.obs[0].dtype == np.float32
    assert decision.obs[0][0].tolist() == [float(i == 10) for i in range(20)]
    assert decision.action_mask is None and len(terminal) == 0
    env = Basic(n_agents=3)
    env.reset()
    assert env.get_steps("Basic")[0].agent_id.tolist() == [0, 1, 2]


def test_ball_balance_spec():
    env = BallBalance()
    spec = env.behavior_specs["BallBalance"]
    _only_observation(spec, (8,), "ball_state")
    assert spec.action_spec == ActionSpec.create_continuous(2)
    assert BallBalance.max_episode_steps == 200
    # The cap is 0.1 per step for 200 steps; random play earns about 2.
    assert 2.0 < BallBalance.expected_reward < 20.0
    env.reset()
    decision, _ = env.get_steps("BallBalance")
    assert decision.obs[0].shape == (12, 8) and decision.obs[0].dtype == np.float32
    assert decision.action_mask is None


def test_grid_world_spec():
    env = GridWorld(grid_size=(4, 6), pixels_per_cell=3)
    spec = env.behavior_specs["GridWorld"]
    camera, goal = spec.observation_specs
    assert (camera.shape, camera.name, camera.observation_type) == (
        (12, 18, 3), "camera", ObservationType.DEFAULT,
    )  # fmt: skip
    assert camera.dimension_property == (
        DimensionProperty.TRANSLATIONAL_EQUIVARIANCE,
        DimensionProperty.TRANSLATIONAL_EQUIVARIANCE,
        DimensionProperty.NONE,
    )
    assert (goal.shape, goal.name, goal.observation_type) == (
        (2,), "goal", ObservationType.GOAL_SIGNAL,
    )  # fmt: skip
    assert spec.action_spec == ActionSpec.create_discrete((5,))
    assert GridWorld.max_episode_steps == 50
    env.reset()
    pixels = env.get_steps("GridWorld")[0].obs[0]  # each cell a 3 x 3 block of one colour
    assert pixels.shape == (4, 12, 18, 3)
    np.testing.assert_array_equal(pixels, pixels[:, ::3, ::3].repeat(3, 1).repeat(3, 2))
    # Random allowed moves earn about -0.23; a shortest path earns about 0.97.
    assert 0.0 < GridWorld.expected_reward < 0.97
    env.reset()
    decision, _ = env.get_steps("GridWorld")
    assert decision.obs[0].shape == (4, 12, 18, 3) and decision.obs[0].dtype == np.float32
    assert decision.obs[1].shape == (4, 2) and decision.obs[1].dtype == np.float32
    assert [m.shape for m in decision.action_mask] == [(4, 5)]
    assert decision.action_mask[0].dtype == bool


@pytest.mark.parametrize(
    ("cls", "kwargs", "error", "match"),
    [
        (Basic, {"n_agents": 0}, ValueError, "n_agents >= 1"),
        (Basic, {"n_agents": 1.5}, TypeError, "n_agents"),
        (Basic, {"max_steps": -1}, ValueError, "max_steps"),
        (Basic, {"colour": 1}, TypeError, "colour"),
        (BallBalance, {"n_agents": 0}, ValueError, "n_agents >= 1"),
        (BallBalance, {"mass": 0.0}, ValueError, "mass"),
        (BallBalance, {"gravity": float("nan")}, ValueError, "gravity"),
        (BallBalance, {"scale": "big"}, TypeError, "scale"),
        (GridWorld, {"n_agents": 0}, ValueError, "n_agents >= 1"),
        (GridWorld, {"grid_size": 1}, ValueError, "grid_size rows >= 2"),
        (GridWorld, {"grid_size": (3, 3, 3)}, TypeError, "grid_size"),
        (GridWorld, {"n_walls": 5}, ValueError, "n_walls <= 4"),
        (GridWorld, {"grid_size": (2, 3), "n_walls": 2}, ValueError, "n_walls <= 1"),
        (GridWorld, {"pixels_per_cell": 0}, ValueError, "pixels_per_cell >= 1"),
    ],
)
def test_invalid_options(cls, kwargs, error, match):
    with pytest.raises(error, match=match):
        cls(**kwargs)


@pytest.mark.parametrize(
    ("cls", "kwargs", "shape"),
    [
        (Basic, {"n_agents": 2}, (2 * 16, 21 * 16, 3)),
        # 5 platforms of 64 px on a 3-column grid, 2 px padding.
        (BallBalance, {"n_agents": 5}, (2 * 66 + 2, 3 * 66 + 2, 3)),
        # 4 boards of (3 + 2) x (5 + 2) cells of 12 px on a 2-column grid.
        (GridWorld, {"grid_size": (3, 5)}, (2 * (5 * 12 + 2) + 2, 2 * (7 * 12 + 2) + 2, 3)),
    ],
)
def test_render(cls, kwargs, shape):
    env = cls(**kwargs)
    env.reset(seed=3)
    image = env.render()
    assert image.shape == shape and image.dtype == np.uint8
    assert len(np.unique(image.reshape(-1, 3), axis=0)) > 2  # not a blank canvas


# ----------------------------------------------------------------------------- determinism


def _random_actions(env, name, rng, n):
    return env.behavior_specs[name].action_spec.random_action(n, rng)


@pytest.mark.parametrize(
    ("cls", "kwargs"),
    [
        (Basic, {"n_agents": 3}),
        (BallBalance, {}),
        (GridWorld, {"n_walls": 3}),
    ],
)
def test_same_seed_same_data(cls, kwargs):
    name = cls.behavior_name
    runs = []
    for _ in range(2):
        env = cls(seed=11, **kwargs)
        env.reset()
        rng = np.random.default_rng(5)
        trace = [_snapshot(env.get_steps(name))]
        for _ in range(250):
            env.set_actions(name, _random_actions(env, name, rng, len(env.get_steps(name)[0])))
            env.step()
            trace.append(_snapshot(env.get_steps(name)))
        runs.append(trace)
    for a, b in zip(*runs, strict=True):
        _assert_same(a, b)
    # Episodes did end, so the data after restarts was compared too.
    assert sum(len(step[6]) for step in runs[0]) > 3
    if cls is not Basic:
        other = cls(seed=12, **kwargs)
        other.reset()
        assert not np.array_equal(other.get_steps(name)[0].obs[0], runs[0][0][0][0])


@pytest.mark.parametrize("cls", [BallBalance, GridWorld])
def test_reset_seed_reproduces(cls):
    env = cls(seed=1)
    env.reset(seed=4)
    first = _snapshot(env.get_steps(cls.behavior_name))
    env.reset(seed=4)
    _assert_same(first, _snapshot(env.get_steps(cls.behavior_name)))


@pytest.mark.parametrize("cls", [Basic, BallBalance, GridWorld])
def test_reordered_rows_carry_the_same_data_per_agent(cls):
    """Observations, masks and rewards follow the agent, whatever the row order."""
    name = cls.behavior_name
    plain, shuffled = cls(seed=2, n_agents=6), cls(seed=2, n_agents=6, reorder_agents=True)
    plain.reset()
    shuffled.reset()
    rng = np.random.default_rng(0)
    saw_reorder = False
    for _ in range(150):
        d1, t1 = plain.get_steps(name)
        d2, t2 = shuffled.get_steps(name)
        order = [d2.agent_id_to_index[i] for i in d1.agent_id.tolist()]
        saw_reorder |= order != list(range(len(order)))
        for o1, o2 in zip(d1.obs, d2.obs, strict=True):
            np.testing.assert_array_equal(o1, o2[order])
        np.testing.assert_array_equal(d1.reward, d2.reward[order])
        if d1.action_mask is not None:
            np.testing.assert_array_equal(d1.action_mask[0], d2.action_mask[0][order])
        assert sorted(t1.agent_id.tolist()) == sorted(t2.agent_id.tolist())
        actions = _random_actions(plain, name, rng, len(d1))
        plain.set_actions(name, actions)
        back = np.argsort(order)  # row of each shuffled agent in the plain batch
        shuffled.set_actions(name, ActionTuple(actions.continuous[back], actions.discrete[back]))
        plain.step()
        shuffled.step()
    assert saw_reorder


# ----------------------------------------------------------------------------- Basic


def test_basic_large_goal_by_hand():
    env = Basic()
    env.reset()
    rewards = []
    for _ in range(6):
        decision, terminal = _step(env, "Basic", discrete=[[2]])
        assert len(terminal) == 0
        rewards.append(decision.reward[0])
    assert rewards == [np.float32(-0.01)] * 6
    assert int(decision.obs[0][0].argmax()) == 16
    decision, terminal = _step(env, "Basic", discrete=[[2]])
    # The goal step: -0.01 + 1.0; the episode: 6 * -0.01 + 0.99 = 0.93.
    assert terminal.reward.tolist() == [np.float32(0.99)]
    assert terminal.interrupted.tolist() == [False]
    assert int(terminal.obs[0][0].argmax()) == 17
    assert sum(rewards) + terminal.reward[0] == pytest.approx(0.93, abs=1e-6)
    # Restarted in the same step, with the same id, at position 10 and no reward yet.
    assert decision.agent_id.tolist() == terminal.agent_id.tolist() == [0]
    assert int(decision.obs[0][0].argmax()) == 10 and decision.reward.tolist() == [0.0]


def test_basic_small_goal_stay_and_interruption():
    env = Basic(n_agents=2, max_steps=5)
    env.reset()
    # Agent 0 walks left (10 -> 7 in 3 steps), agent 1 stays.
    for _ in range(2):
        _step(env, "Basic", discrete=[[1], [0]])
    decision, terminal = _step(env, "Basic", discrete=[[1], [0]])
    assert terminal.agent_id.tolist() == [0]
    assert terminal.reward.tolist() == [np.float32(0.09)]
    assert int(terminal.obs[0][0].argmax()) == 7
    assert decision.agent_id.tolist() == [0, 1]
    assert decision.reward.tolist() == [0.0, np.float32(-0.01)]
    assert decision.obs[0].argmax(axis=1).tolist() == [10, 10]
    for _ in range(2):
        _, terminal = _step(env, "Basic", discrete=[[0], [0]])
    # Agent 1 reached max_steps=5 without a goal: interrupted with the step cost.
    assert terminal.agent_id.tolist() == [1]
    assert terminal.interrupted.tolist() == [True]
    assert terminal.reward.tolist() == [np.float32(-0.01)]
    env = Basic()  # the default max_steps is the class's cap, 100
    env.reset()
    for step in range(1, 101):
        _, terminal = _step(env, "Basic", discrete=[[0]])
        assert len(terminal) == (step == 100)
    assert terminal.interrupted.tolist() == [True]


def test_basic_random_run_invariants():
    env = Basic(n_agents=4)
    env.reset()
    rng = np.random.default_rng(0)
    decision, _ = env.get_steps("Basic")
    position = decision.obs[0].argmax(axis=1)
    episodes = 0
    for _ in range(2000):
        action = rng.integers(0, 3, size=(4, 1))
        decision, terminal = _step(env, "Basic", discrete=action)
        assert decision.agent_id.tolist() == [0, 1, 2, 3]
        obs = decision.obs[0]
        assert set(np.unique(obs)) <= {0.0, 1.0} and (obs.sum(axis=1) == 1).all()
        expected = position + np.array([0, -1, 1])[action[:, 0]]
        for row, agent in enumerate(terminal.agent_id.tolist()):
            reached = int(terminal.obs[0][row].argmax())
            assert reached == expected[agent]
            if reached in (7, 17):
                assert not terminal.interrupted[row]
                goal = 0.1 if reached == 7 else 1.0
                assert terminal.reward[row] == np.float32(-0.01 + goal)
            else:
                assert terminal.interrupted[row]
            assert obs[agent].argmax() == 10 and decision.reward[agent] == 0.0
            expected[agent] = 10
            episodes += 1
        running = np.setdiff1d(np.arange(4), terminal.agent_id)
        assert (decision.reward[running] == np.float32(-0.01)).all()
        position = obs.argmax(axis=1)
        np.testing.assert_array_equal(position, expected)
        assert ((position >= 7) & (position <= 17)).all()
    assert episodes > 100


# ----------------------------------------------------------------------------- BallBalance


def _zero(n):
    return np.zeros((n, 2), dtype=np.float32)


def test_ball_balance_rewards_and_termination():
    env = BallBalance(n_agents=6, seed=0)
    env.reset()
    returns, lengths = np.zeros(6), np.zeros(6, dtype=int)
    finished = []
    for _ in range(300):
        decision, terminal = _step(env, "BallBalance", continuous=np.ones((6, 2)))
        returns += decision.reward
        lengths += 1
        for row, agent in enumerate(terminal.agent_id.tolist()):
            # Every episode here ends by a fall: -1 for that step, not interrupted.
            assert terminal.reward[row] == np.float32(-1.0)
            assert not terminal.interrupted[row]
            finished.append((returns[agent] - decision.reward[agent] + terminal.reward[row],
                             lengths[agent]))  # fmt: skip
            returns[agent] = lengths[agent] = 0
            # The next episode starts at rest.
            np.testing.assert_array_equal(decision.obs[0][decision.agent_id_to_index[agent], 5:], 0)
        running = np.setdiff1d(np.arange(6), terminal.agent_id)
        assert (decision.reward[running] == np.float32(0.1)).all()
    # Full tilt one way always drops the ball, each episode: 0.1 per step then -1.
    assert len(finished) >= 6
    for total, length in finished:
        assert total == pytest.approx(0.1 * (length - 1) - 1.0, abs=1e-4)


def test_ball_balance_random_run_invariants():
    env = BallBalance(n_agents=12, seed=3, max_steps=60)
    env.reset()
    rng = np.random.default_rng(1)
    falls = interruptions = 0
    for _ in range(2000):
        decision, terminal = _step(env, "BallBalance", continuous=rng.uniform(-2, 2, (12, 2)))
        assert sorted(decision.agent_id.tolist()) == list(range(12))
        obs = decision.obs[0]
        assert np.isfinite(obs).all()
        assert (np.abs(obs[:, :2]) <= 0.5 + 1e-6).all()
        # The ball is on the platform: within the edge plus the tilt's lean and its height.
        assert (np.abs(obs[:, [2, 4]]) <= 3.0 + 1.0 + 1e-5).all()
        assert len(set(terminal.agent_id.tolist())) == len(terminal)
        assert set(terminal.agent_id.tolist()) <= set(decision.agent_id.tolist())
        for row, agent in enumerate(terminal.agent_id.tolist()):
            restarted = decision.obs[0][decision.agent_id_to_index[agent]]
            assert (restarted[5:] == 0).all() and (np.abs(restarted[:2]) <= np.radians(10)).all()
            if terminal.interrupted[row]:
                interruptions += 1
                assert terminal.reward[row] == np.float32(0.1)
            else:
                falls += 1
                assert terminal.reward[row] == np.float32(-1.0)
    assert falls > 50 and interruptions > 0


def test_ball_balance_rolls_downhill_and_clips_actions():
    a, b = BallBalance(seed=9), BallBalance(seed=9)
    a.reset()
    b.reset()
    da, _ = _step(a, "BallBalance", continuous=np.full((12, 2), 1.0))
    db, _ = _step(b, "BallBalance", continuous=np.full((12, 2), 7.5))
    np.testing.assert_array_equal(da.obs[0], db.obs[0])  # actions are clipped to [-1, 1]
    env = BallBalance(seed=9)
    env.reset()
    before = env.get_steps("BallBalance")[0].obs[0]
    decision, _ = _step(env, "BallBalance", continuous=_zero(12))
    after = decision.obs[0]
    np.testing.assert_array_equal(after[:, :2], before[:, :2])  # zero action keeps the tilt
    assert (after[:, 6] < 0).all()  # from rest, a ball on a tilted platform moves down
    assert (after[:, 3] < before[:, 3]).all()


def test_ball_balance_reads_parameters_from_the_channel():
    channel = EnvironmentParametersChannel()
    env = BallBalance(seed=5, side_channels=[channel])
    reference = BallBalance(seed=5)
    channel.set_float_parameter("gravity", 2 * 9.81)
    env.reset()
    reference.reset()
    fast, _ = _step(env, "BallBalance", continuous=_zero(12))
    slow, _ = _step(reference, "BallBalance", continuous=_zero(12))
    # From rest with the tilt held, velocity is linear in gravity.
    np.testing.assert_allclose(fast.obs[0][:, 5:], 2 * slow.obs[0][:, 5:], rtol=1e-4, atol=1e-6)

    # A sampler is drawn once per agent: the ball height 0.5 + scale / 2 differs per agent.
    channel = EnvironmentParametersChannel()
    env = BallBalance(seed=5, side_channels=[channel])
    channel.set_uniform_sampler_parameters("scale", 1.0, 3.0, seed=1)
    env.reset()
    reference.reset(seed=5)
    lifted = env.get_steps("BallBalance")[0].obs[0][:, 2:5]
    level = reference.get_steps("BallBalance")[0].obs[0][:, 2:5]
    scale = 1.0 + 2.0 * np.linalg.norm(lifted - level, axis=1)
    assert ((scale >= 1.0 - 1e-5) & (scale <= 3.0 + 1e-5)).all()
    assert len(np.unique(scale.round(4))) == 12

    # Parameters apply at an agent's next reset: set now, seen after the episode restarts.
    channel.set_float_parameter("scale", 5.0)
    for _ in range(200):
        decision, terminal = _step(env, "BallBalance", continuous=np.ones((12, 2)))
        if len(terminal):
            break
    agent = terminal.agent_id[0]
    state = decision.obs[0][decision.agent_id_to_index[agent]]
    # At rest, tilt (z, x): |rel| = sqrt(x^2 + h^2 + z^2) in the platform frame, h = 3.
    assert np.linalg.norm(state[2:5]) >= 3.0 - 1e-5


def test_ball_balance_sends_episode_statistics():
    stats = StatsSideChannel()
    env = BallBalance(n_agents=4, seed=0, side_channels=[stats], max_steps=5)
    env.reset()
    for _ in range(4):
        _step(env, "BallBalance", continuous=_zero(4))
    assert stats.get_and_reset_stats() == {}
    _, terminal = _step(env, "BallBalance", continuous=_zero(4))
    assert terminal.interrupted.all() and len(terminal) == 4
    received = stats.get_and_reset_stats()
    average = StatsAggregationMethod.AVERAGE
    assert received["BallBalance/EpisodeLength"] == [(5.0, average)] * 4
    assert received["BallBalance/EpisodeReward"] == [(pytest.approx(0.5), average)] * 4
    assert received["BallBalance/Fell"] == [(0.0, average)] * 4

    # A fall: tilt hard until a ball drops, then compare with what the core reported.
    env = BallBalance(n_agents=4, seed=0, side_channels=[stats])
    env.reset()
    totals, counts = np.zeros(4), np.zeros(4)
    for _ in range(100):
        decision, terminal = _step(env, "BallBalance", continuous=np.ones((4, 2)))
        totals += decision.reward
        counts += 1
        if len(terminal):
            break
    received = stats.get_and_reset_stats()
    agents = terminal.agent_id.tolist()
    assert received["BallBalance/EpisodeLength"] == [(counts[a], average) for a in agents]
    assert [v for v, _ in received["BallBalance/EpisodeReward"]] == pytest.approx(
        [totals[a] - decision.reward[a] + terminal[a].reward for a in agents]
    )
    assert received["BallBalance/Fell"] == [(1.0, average)] * len(agents)
    # reset() cuts the running episodes short: no statistics for them.
    env.reset()
    assert stats.get_and_reset_stats() == {}


# ----------------------------------------------------------------------------- GridWorld


def _cells(camera):
    """Agent, plus and cross cells and the wall map, read from one (rows, cols, 3) camera."""

    def where(colour):
        hits = np.argwhere((camera == colour).all(axis=2))
        return [tuple(h) for h in hits.tolist()]

    walls = (camera == 0.5).all(axis=2)
    return where(BLUE), where(GREEN), where(RED), walls


def _blocked(walls, cell):
    """The mask computed from the picture: a move is blocked by the edge or a grey cell."""
    rows, cols = walls.shape
    mask = []
    for action in range(5):
        r, c = cell[0] + MOVES[action][0], cell[1] + MOVES[action][1]
        mask.append(not (0 <= r < rows and 0 <= c < cols) or bool(walls[r, c]))
    return mask


def _path(walls, start, goal, avoid):
    """Actions of a shortest path from start to goal that never steps on ``avoid``."""
    rows, cols = walls.shape
    previous = {start: None}
    queue = deque([start])
    while queue:
        cell = queue.popleft()
        if cell == goal:
            break
        for action in (1, 2, 3, 4):
            nxt = (cell[0] + MOVES[action][0], cell[1] + MOVES[action][1])
            if (0 <= nxt[0] < rows and 0 <= nxt[1] < cols and not walls[nxt]
                    and nxt != avoid and nxt not in previous):  # fmt: skip
                previous[nxt] = (cell, action)
                queue.append(nxt)
    actions = []
    while previous[goal] is not None:
        goal, action = previous[goal]
        actions.append(action)
    return actions[::-1]


@pytest.mark.parametrize("right_goal", [True, False])
def test_grid_world_scripted_episodes(right_goal):
    env = GridWorld(n_agents=1, seed=4, n_walls=4)
    env.reset()
    for _ in range(6):
        decision, _ = env.get_steps("GridWorld")
        camera, signal = decision.obs[0][0], decision.obs[1][0]
        (agent,), (plus,), (cross,), walls = _cells(camera)
        assert walls.sum() == 4
        named = [plus, cross][int(signal.argmax())]
        other = [cross, plus][int(signal.argmax())]
        goal, avoid = (named, other) if right_goal else (other, named)
        actions = _path(walls, agent, goal, avoid)
        assert actions, "the layout put the agent on a goal"
        for action in actions[:-1]:
            decision, terminal = _step(env, "GridWorld", discrete=[[action]])
            assert len(terminal) == 0 and decision.reward.tolist() == [np.float32(-0.01)]
        decision, terminal = _step(env, "GridWorld", discrete=[[actions[-1]]])
        assert terminal.reward.tolist() == [1.0 if right_goal else -1.0]
        assert terminal.interrupted.tolist() == [False]
        assert _cells(terminal.obs[0][0])[0] == [goal]
        assert decision.agent_id.tolist() == terminal.agent_id.tolist() == [0]


def test_grid_world_masked_moves_and_interruption():
    env = GridWorld(n_agents=1, seed=0, grid_size=(2, 2), max_steps=3)
    env.reset()
    decision, _ = env.get_steps("GridWorld")
    (agent,), _, _, walls = _cells(decision.obs[0][0])
    mask = decision.action_mask[0][0].tolist()
    assert mask == _blocked(walls, agent) and sum(mask) == 2
    blocked = [a for a in range(5) if mask[a]]
    for step, action in enumerate(blocked + [0]):
        # Masked moves (and staying) leave the agent in place at the step cost.
        decision, terminal = _step(env, "GridWorld", discrete=[[action]])
        if step < 2:
            assert len(terminal) == 0 and decision.reward.tolist() == [np.float32(-0.01)]
            assert _cells(decision.obs[0][0])[0] == [agent]
    assert terminal.interrupted.tolist() == [True]
    assert terminal.reward.tolist() == [np.float32(-0.01)]
    assert _cells(terminal.obs[0][0])[0] == [agent]


@pytest.mark.parametrize("n_walls", [0, 4])
def test_grid_world_random_run_invariants(n_walls):
    env = GridWorld(n_agents=4, seed=8, n_walls=n_walls, max_steps=20)
    env.reset()
    rng = np.random.default_rng(2)
    palette = {BLUE, GREEN, RED, (0.0, 0.0, 0.0), (0.5, 0.5, 0.5)}
    rewards = {1.0: 0, -1.0: 0, "interrupted": 0}
    masked_moves = 0
    decision, _ = env.get_steps("GridWorld")
    for _ in range(2000):
        camera, signal, mask = decision.obs[0], decision.obs[1], decision.action_mask[0]
        assert decision.agent_id.tolist() == [0, 1, 2, 3]
        assert ((camera >= 0) & (camera <= 1)).all()
        assert {tuple(p) for p in camera.reshape(-1, 3).tolist()} <= palette
        assert (signal.sum(axis=1) == 1).all() and set(np.unique(signal)) <= {0.0, 1.0}
        positions = []
        for i in range(4):
            (agent,), (plus,), (cross,), walls = _cells(camera[i])
            assert walls.sum() == n_walls and len({agent, plus, cross}) == 3
            assert mask[i].tolist() == _blocked(walls, agent)
            positions.append(agent)
        # Mostly allowed moves; for some agents any move, and masked ones must not move them.
        ignore_mask = rng.random((4, 1)) < 0.2
        action = (rng.random((4, 5)) - (mask & ~ignore_mask)).argmax(axis=1)
        decision, terminal = _step(env, "GridWorld", discrete=action[:, None])
        moved = {}
        masked_moves += int(mask[np.arange(4), action].sum())
        for i in range(4):
            step = (0, 0) if mask[i, action[i]] else MOVES[int(action[i])]
            moved[i] = (positions[i][0] + step[0], positions[i][1] + step[1])
        for row, agent_id in enumerate(terminal.agent_id.tolist()):
            assert _cells(terminal.obs[0][row])[0] == [moved[agent_id]]
            if terminal.interrupted[row]:
                rewards["interrupted"] += 1
            else:
                rewards[float(terminal.reward[row])] += 1
            # Restarted with the same id: the agent stands on no goal.
            assert decision.reward[agent_id] == 0.0
        for i in np.setdiff1d(np.arange(4), terminal.agent_id).tolist():
            assert _cells(decision.obs[0][i])[0] == [moved[i]]
            assert decision.reward[i] == np.float32(-0.01)
    assert min(rewards.values()) > 20, rewards
    assert masked_moves > 50


def test_render_helpers():
    image = np.full((5, 5, 3), (1, 2, 3), np.uint8)
    _common.fill_circles(image, [2.5], [2.5], 1.0, (9, 9, 9))
    assert (image[..., 0] == 9).sum() == 5  # the centre pixel and its four neighbours
    _common.fill_rects(image, [-1, 4], [-1, 3], 2, [2, 9], (7, 7, 7))  # clipped, not an error
    assert (image[..., 0] == 7).sum() == 1 + 2
    batch = np.stack([np.full((2, 3, 3), v, np.uint8) for v in (10, 20, 30)])
    tiled = _common.tile(batch, columns=2, pad=1, pad_color=(0, 0, 0))
    assert tiled.shape == (2 * 3 + 1, 2 * 4 + 1, 3)
    assert tiled[1, 1, 0] == 10 and tiled[1, 5, 0] == 20 and tiled[4, 1, 0] == 30
    assert tiled[4, 5, 0] == 0 and tiled[0, 0, 0] == 0
