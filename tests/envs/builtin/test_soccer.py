"""The built-in ``Soccer`` (one behaviour in two teams) against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from zooport.envs.base_env import ActionSpec, ActionTuple, DimensionProperty, ObservationType
from zooport.envs.builtin.soccer import Soccer
from zooport.envs.checker import check_base_env

from tests.support.core_runs import random_rollout

BLUE, PURPLE = Soccer.behavior_names
F32 = np.float32


def act(env, blue, purple):
    """Sets one (x, y) branch action per player of each team."""
    n = env.team_size
    env.set_actions(BLUE, ActionTuple(discrete=np.broadcast_to(np.array(blue, np.int32), (n, 2))))
    env.set_actions(
        PURPLE, ActionTuple(discrete=np.broadcast_to(np.array(purple, np.int32), (n, 2)))
    )


def place(env, blue, purple, ball=(0.0, 0.0), ball_vel=(0.0, 0.0)):
    """Puts the players (at rest) and the ball at the given spots, in team 0's frame."""
    env.player_pos[0] = blue
    env.player_pos[1] = purple
    env.player_vel[:] = 0
    env.ball_pos[:] = ball
    env.ball_vel[:] = ball_vel


#: Players far from the centre and from the goals, at rest: they touch nothing.
AWAY = ([[-0.6, 0.45], [-0.6, -0.45]], [[0.6, 0.45], [0.6, -0.45]])


def test_specs_ids_and_groups():
    env = Soccer(seed=0)
    assert list(env.behavior_specs) == ["Soccer?team=0", "Soccer?team=1"]
    for name in (BLUE, PURPLE):
        spec = env.behavior_specs[name]
        assert spec.action_spec == ActionSpec.create_discrete((3, 3))
        (obs,) = spec.observation_specs
        assert obs.shape == (14,) and obs.name == "players_and_ball"
        assert obs.dimension_property == (DimensionProperty.NONE,)
        assert obs.observation_type == ObservationType.DEFAULT
    env.reset()
    blue, blue_end = env.get_steps(BLUE)
    purple, _ = env.get_steps(PURPLE)
    # Agent ids are unique across the scene, as in a Unity scene with two teams.
    assert blue.agent_id.tolist() == [0, 1] and purple.agent_id.tolist() == [2, 3]
    assert blue.group_id.tolist() == [1, 1] and purple.group_id.tolist() == [2, 2]
    assert blue.obs[0].shape == (2, 14) and blue.obs[0].dtype == np.float32
    assert len(blue_end) == 0 and blue.action_mask is None
    assert env.global_state_shape == (20,) and Soccer.max_episode_steps == 200
    for team in (0, 1):  # kickoff: each team in its own half, the ball on the centre spot
        sign = 1 if team else -1
        x = env.player_pos[team, :, 0] * sign
        assert ((0.2 <= x) & (x <= 0.8)).all()
        assert (np.abs(env.player_pos[team, :, 1]) <= 0.45).all()
    assert env.ball_pos.tolist() == [0.0, 0.0] and env.ball_vel.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("team_size", [1, 3])
def test_team_size_sets_agents_and_shapes(team_size):
    env = Soccer(seed=0, team_size=team_size)
    size = 8 + 2 * (2 * team_size - 1)
    assert env.behavior_specs[BLUE].observation_specs[0].shape == (size,)
    env.reset()
    assert env.get_steps(PURPLE)[0].agent_id.tolist() == list(range(team_size, 2 * team_size))
    assert env.global_state().shape == env.global_state_shape == (4 + 8 * team_size,)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"team_size": 0}, ValueError, "team_size >= 1, actually: 0"),
        ({"team_size": 2.0}, TypeError, "team_size to be an int"),
        ({"team_size": True}, TypeError, "team_size to be an int"),
        ({"individual_rewards": "yes"}, TypeError, "individual_rewards to be a bool"),
        ({"shaping": "1"}, TypeError, "shaping to be a number"),
        ({"shaping": float("nan")}, ValueError, "shaping to be finite"),
        ({"max_steps": -1}, ValueError, "max_steps"),
    ],
)
def test_rejects_bad_options(options, error, message):
    with pytest.raises(error, match=message):
        Soccer(**options)


# ----------------------------------------------------------------------------- dynamics


def test_observation_in_each_teams_frame_hand_computed():
    env = Soccer(seed=0)
    env.reset()
    place(
        env, [[-0.5, 0.1], [-0.3, -0.2]], [[0.4, 0.3], [0.6, -0.1]],
        ball=(0.1, 0.05), ball_vel=(0.02, -0.01),
    )  # fmt: skip
    env.player_vel[0, 0] = [0.01, 0.02]
    env.player_vel[1, 1] = [0.03, -0.04]
    (blue,) = env._observe(BLUE, np.array([0, 1]))
    # Own position, own velocity, ball relative, ball velocity, teammate, both opponents.
    np.testing.assert_allclose(
        blue[0],
        [-0.5, 0.1, 0.01, 0.02, 0.6, -0.05, 0.02, -0.01, 0.2, -0.3, 0.9, 0.2, 1.1, -0.2],
        atol=1e-6,
    )
    (purple,) = env._observe(PURPLE, np.array([1]))
    # Team 1's frame is team 0's turned by 180 degrees: every coordinate negated.
    np.testing.assert_allclose(
        purple[0],
        [-0.6, 0.1, -0.03, 0.04, 0.5, -0.15, -0.02, 0.01, 0.2, -0.4, 1.1, -0.2, 0.9, 0.1],
        atol=1e-6,
    )


def test_movement_in_each_teams_frame_hand_computed():
    env = Soccer(seed=0, team_size=1)
    env.reset()
    place(env, [[-0.5, 0.0]], [[0.5, 0.56]])
    accel, damping = Soccer.player_accel, Soccer.player_damping
    act(env, [1, 2], [1, 2])  # forward and to the right, in each team's own frame
    env.step()
    np.testing.assert_allclose(env.player_vel[0, 0], [accel, -accel], rtol=1e-6)
    np.testing.assert_allclose(env.player_pos[0, 0], [-0.5 + accel, -accel], rtol=1e-6)
    # Team 1's forward is -x, its right is +y in team 0's frame: into the touch line.
    np.testing.assert_allclose(env.player_pos[1, 0], [0.5 - accel, 0.6 - 0.06], rtol=1e-6)
    np.testing.assert_allclose(env.player_vel[1, 0], [-accel, 0.0], rtol=1e-6)
    act(env, [0, 0], [0, 0])  # coast: the velocity is damped
    env.step()
    x = -0.5 + accel + damping * accel
    np.testing.assert_allclose(env.player_pos[0, 0], [x, -accel * (1 + damping)], rtol=1e-6)
    np.testing.assert_allclose(env.player_vel[0, 0], [damping * accel, -damping * accel])


@pytest.mark.parametrize("shaping", [0.0, 0.5])
def test_a_kick_hand_computed(shaping):
    env = Soccer(seed=0, shaping=shaping)
    env.reset()
    blue, purple = AWAY
    place(env, [[-0.09, 0.0], blue[1]], purple)  # touching: 0.09 < 0.06 + 0.04
    act(env, [0, 0], [0, 0])
    env.step()
    kick, friction = Soccer.kick_speed, Soccer.ball_friction
    np.testing.assert_allclose(env.ball_pos, [kick, 0.0], rtol=1e-6)
    np.testing.assert_allclose(env.ball_vel, [kick * friction, 0.0], rtol=1e-6)

    # Shaping: the ball moved `kick` towards team 1's goal, and away from every player (the
    # kicker followed it by nothing: its potential is unchanged); no group reward for it.
    def gap(player, ball_x):
        return np.hypot(player[0] - ball_x, player[1])

    players = [[-0.09, 0.0], blue[1], *purple]
    change = [(sign * kick - gap(p, kick)) - (0.0 - gap(p, 0.0))
              for sign, p in zip((1, 1, -1, -1), players, strict=True)]  # fmt: skip
    assert change[0] == pytest.approx(0.0, abs=1e-7)
    for team, name in enumerate((BLUE, PURPLE)):
        decision, _ = env.get_steps(name)
        expected = np.array(change[2 * team : 2 * team + 2]) * shaping
        np.testing.assert_allclose(decision.reward, expected, rtol=1e-5, atol=1e-7)
        assert decision.group_reward.tolist() == [0.0, 0.0]
    # Two players kicking the same way: the kicks add up to at most max_ball_speed.
    place(env, [[-0.09, 0.0], [-0.08, 0.0]], purple, ball_vel=(0.05, 0.0))
    act(env, [0, 0], [0, 0])
    env.step()
    np.testing.assert_allclose(env.ball_pos, [Soccer.max_ball_speed, 0.0], rtol=1e-6)


@pytest.mark.parametrize(
    ("ball", "ball_vel", "pos", "vel"),
    [
        # Off the touch line: y clipped to 0.6 - 0.04, vy reversed (after friction).
        ((0.3, 0.5), (0.0, 0.1), (0.3, 0.56), (0.0, -0.094)),
        # Off the end line outside the goal mouth.
        ((0.97, 0.4), (0.05, 0.0), (0.96, 0.4), (-0.047, 0.0)),
        # Inside the mouth the ball may pass x = 1 - radius on its way into the goal.
        ((0.95, 0.0), (0.02, 0.0), (0.97, 0.0), (0.0188, 0.0)),
    ],
)
def test_the_ball_bounces_off_the_walls_outside_the_goal_mouths(ball, ball_vel, pos, vel):
    env = Soccer(seed=0)
    env.reset()
    place(env, *AWAY, ball=ball, ball_vel=ball_vel)
    act(env, [0, 0], [0, 0])
    env.step()
    np.testing.assert_allclose(env.ball_pos, pos, rtol=1e-6)
    np.testing.assert_allclose(env.ball_vel, vel, rtol=1e-5)
    assert len(env.get_steps(BLUE)[1]) == 0


@pytest.mark.parametrize(
    ("scorer", "ball", "ball_vel"),
    [(0, (0.97, 0.1), (0.05, 0.0)), (1, (-0.98, -0.2), (-0.03, 0.0))],
)
@pytest.mark.parametrize("individual", [True, False])
def test_a_goal_ends_every_agent_together_and_restarts_them_in_the_same_step(
    scorer, ball, ball_vel, individual
):
    env = Soccer(seed=0, individual_rewards=individual)
    env.reset()
    place(env, *AWAY, ball=ball, ball_vel=ball_vel)
    act(env, [0, 0], [0, 0])
    env.step()
    for team, name in enumerate((BLUE, PURPLE)):
        decision, terminal = env.get_steps(name)
        ids = [2 * team, 2 * team + 1]
        outcome = 1.0 if team == scorer else -1.0
        assert terminal.agent_id.tolist() == ids and not terminal.interrupted.any()
        assert terminal.group_reward.tolist() == [outcome, outcome]
        assert terminal.reward.tolist() == ([outcome] * 2 if individual else [0.0, 0.0])
        assert terminal.group_id.tolist() == [team + 1] * 2
        # The terminal observation is the goal: the ball past the end line.
        ball_x = terminal.obs[0][:, 4] + terminal.obs[0][:, 0]  # own x + ball relative x
        np.testing.assert_allclose(
            ball_x,
            [ball[0] + ball_vel[0]] * 2 if team == 0 else [-(ball[0] + ball_vel[0])] * 2,
            rtol=1e-6,
        )
        # ... and the same ids decide again at the new kickoff.
        assert decision.agent_id.tolist() == ids
        assert decision.reward.tolist() == [0.0, 0.0] and decision.group_reward.tolist() == [0, 0]
    assert env.ball_pos.tolist() == [0.0, 0.0] and env.ball_vel.tolist() == [0.0, 0.0]
    assert (env.player_pos[0, :, 0] < 0).all() and (env.player_pos[1, :, 0] > 0).all()


def test_the_time_limit_interrupts_every_agent_together():
    env = Soccer(seed=0, max_steps=5)
    env.reset()
    for t in range(1, 11):
        if t == 1:
            place(env, *AWAY)  # nobody near the ball: no goal (nor after a kickoff)
        act(env, [0, 0], [0, 0])
        env.step()
        for name in (BLUE, PURPLE):
            decision, terminal = env.get_steps(name)
            assert len(decision) == 2
            if t % 5 == 0:
                assert len(terminal) == 2 and terminal.interrupted.all()
                assert terminal.reward.tolist() == [0.0, 0.0]
            else:
                assert len(terminal) == 0


def test_global_state_in_team_0s_frame():
    env = Soccer(seed=0, team_size=1)
    env.reset()
    place(env, [[-0.5, 0.1]], [[0.4, 0.3]], ball=(0.1, 0.05), ball_vel=(0.02, -0.01))
    env.player_vel[1, 0] = [0.03, -0.04]
    state = env.global_state()
    np.testing.assert_allclose(
        state, [0.1, 0.05, 0.02, -0.01, -0.5, 0.1, 0, 0, 0.4, 0.3, 0.03, -0.04], rtol=1e-6
    )
    assert state.dtype == np.float32
    state[:] = 9  # a fresh array, not a view of the simulation
    assert env.ball_pos[0] == F32(0.1)


# ----------------------------------------------------------------------------- long runs


@pytest.mark.parametrize("reorder", [False, True])
def test_deterministic_under_a_seed(reorder):
    runs = []
    for seed in (3, 3, 4):
        env = Soccer(seed=seed, reorder_agents=reorder, max_steps=30)
        env.reset()
        runs.append(random_rollout(env, 150, action_seed=1))
    first, second, other = runs
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
    assert any(
        a.shape != b.shape or not np.array_equal(a, b) for a, b in zip(first, other, strict=True)
    )


def run_at_the_ball(obs):
    """Each player accelerates towards the ball (its relative position is obs[:, 4:6])."""
    rel = obs[:, 4:6]
    return np.where(rel > 0.02, 1, np.where(rel < -0.02, 2, 0)).astype(np.int32)


def test_long_run_invariants():
    """Every episode ends for all agents of both teams at once, with opposite outcomes."""
    env = Soccer(seed=5, max_steps=50)
    env.reset()
    rng = np.random.default_rng(0)
    goals = interruptions = 0
    start = 0
    for t in range(1, 3001):
        env.set_actions(BLUE, ActionTuple(discrete=run_at_the_ball(env.get_steps(BLUE)[0].obs[0])))
        env.set_actions(PURPLE, ActionTuple(discrete=rng.integers(0, 3, (2, 2))))
        env.step()
        (blue, blue_end), (purple, purple_end) = env.get_steps(BLUE), env.get_steps(PURPLE)
        assert sorted(blue.agent_id.tolist()) == [0, 1]
        assert sorted(purple.agent_id.tolist()) == [2, 3]
        assert len(blue_end) == len(purple_end) in (0, 2)
        if len(blue_end):
            assert len(set(blue_end.interrupted.tolist() + purple_end.interrupted.tolist())) == 1
            assert t - start == 50 if blue_end.interrupted[0] else t - start <= 50
            start = t
            if blue_end.interrupted[0]:
                interruptions += 1
                assert not blue_end.group_reward.any() and not purple_end.group_reward.any()
            else:
                goals += 1
                (a,), (b,) = set(blue_end.group_reward.tolist()), set(purple_end.group_reward)
                assert {a, b} == {1.0, -1.0}
                assert blue_end.reward.tolist() == [a, a]
            assert env.ball_pos.tolist() == [0.0, 0.0]
        else:
            assert not blue.group_reward.any() and not purple.group_reward.any()
        assert np.isfinite(blue.obs[0]).all()
        assert (np.abs(env.ball_pos) <= [1.05, 0.6]).all()
    assert goals > 20 and interruptions > 5


def test_zooports_checker_passes():
    report = check_base_env(Soccer(seed=0), steps=200, make_env=lambda: Soccer(seed=0))
    assert report.passed, report


def test_render():
    env = Soccer(seed=0)
    env.reset()
    place(env, [[-0.5, 0.0], [-0.5, 0.3]], [[0.5, 0.0], [0.5, 0.3]], ball=(0.0, -0.3))
    image = env.render()
    assert image.shape == (108, 172, 3) and image.dtype == np.uint8
    # Pixel (row, col) of a point (x, y): (54 - 80 y, 86 + 80 x).
    assert image[54, 86 - 40].tolist() == [40, 90, 220]  # a blue player at (-0.5, 0)
    assert image[54, 86 + 40].tolist() == [150, 60, 200]  # a purple one at (0.5, 0)
    assert image[54 + 24, 86].tolist() == [250, 250, 250]  # the ball at (0, -0.3)
    assert image[54 - 20, 86 + 20].tolist() == [50, 140, 60]  # grass
    assert image[54, 2].tolist() == [230, 230, 230]  # team 0's goal mouth, left
    assert image[3, 86].tolist() == [40, 40, 40]  # outside the pitch
