"""Tests of the built-in ``Tag`` and ``Collector`` environments against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from zooport.envs.base_env import ActionSpec, ActionTuple, DimensionProperty, ObservationType
from zooport.envs.builtin.collector import Collector
from zooport.envs.builtin.tag import Tag
from zooport.errors import ActionError, EnvNotResetError

from tests.support.core_runs import random_rollout

RUNNER, TAGGER = Tag.runner_behavior, Tag.tagger_behavior
F32 = np.float32


# ----------------------------------------------------------------------------- helpers


def place_tag(env, runners, taggers):
    """Puts live runners/taggers at the given spots at rest (the rest of the slots unchanged)."""
    env.runner_pos[: len(runners)] = runners
    env.runner_vel[:] = 0
    env.tagger_pos[: len(taggers)] = taggers
    env.tagger_vel[:] = 0


def stay(env, name):
    """Sets the 'stay' action for every agent of a Tag behaviour that decides."""
    decision, _ = env.get_steps(name)
    env.set_actions(name, ActionTuple(discrete=np.zeros((len(decision), 1), np.int32)))


def stay_all(env):
    stay(env, RUNNER)
    stay(env, TAGGER)


def chase_nearest(obs):
    """Tag actions towards the nearest opponent (its dx, dy are obs[:, 4:6])."""
    dx, dy = obs[:, 4], obs[:, 5]
    action = np.where(np.abs(dx) > np.abs(dy), np.where(dx > 0, 4, 3), np.where(dy > 0, 1, 2))
    return action[:, None]


FAR = [[-0.9, -0.9], [-0.9, 0.9], [0.9, -0.9], [0.9, 0.9], [0.0, 0.9], [0.0, -0.9]]


# ----------------------------------------------------------------------------- Tag: specs


def test_tag_specs_and_groups():
    env = Tag(seed=0)
    assert list(env.behavior_specs) == [RUNNER, TAGGER]
    for name in (RUNNER, TAGGER):
        spec = env.behavior_specs[name]
        assert spec.action_spec == ActionSpec.create_discrete((5,))
        (obs,) = spec.observation_specs
        assert obs.shape == (10,)
        assert obs.name == "self_and_opponents"
        assert obs.dimension_property == (DimensionProperty.NONE,)
        assert obs.observation_type == ObservationType.DEFAULT
    env.reset()
    runners, _ = env.get_steps(RUNNER)
    taggers, _ = env.get_steps(TAGGER)
    assert runners.agent_id.tolist() == [0, 1, 2]
    assert taggers.agent_id.tolist() == [3, 4]
    assert runners.group_id.tolist() == [1, 1, 1]
    assert taggers.group_id.tolist() == [2, 2]
    assert runners.obs[0].shape == (3, 10) and runners.obs[0].dtype == np.float32
    assert env.global_state_shape == (25,)
    assert Tag.max_episode_steps == 200
    assert env.behavior_specs is env.behavior_specs  # the same static object every call


def test_tag_options_change_shapes():
    env = Tag(seed=0, n_runners=2, n_taggers=4, observed_opponents=3, spawn_every=5, max_spawned=2)
    assert env.behavior_specs[RUNNER].observation_specs[0].shape == (13,)
    env.reset()
    assert len(env.get_steps(RUNNER)[0]) == 2
    assert len(env.get_steps(TAGGER)[0]) == 4
    # Runner slots: 2 + 2 spawnable; tagger slots: 4.
    assert env.global_state_shape == ((4 + 4) * 5,)
    assert env.global_state().shape == env.global_state_shape
    assert Tag(spawn_every=0, max_spawned=9).global_state_shape == ((3 + 2) * 5,)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"n_runners": 0}, ValueError, "n_runners >= 1, actually: 0"),
        ({"n_taggers": 1.5}, TypeError, "n_taggers to be an int"),
        ({"runner_decision_period": 0}, ValueError, "runner_decision_period >= 1"),
        ({"tagger_decision_period": True}, TypeError, "tagger_decision_period"),
        ({"spawn_every": -1}, ValueError, "spawn_every >= 0, actually: -1"),
        ({"max_spawned": -2}, ValueError, "max_spawned >= 0"),
        ({"observed_opponents": 0}, ValueError, "observed_opponents >= 1"),
        ({"restart_tagged": "no"}, TypeError, "restart_tagged to be a bool"),
        ({"tag_radius": 0.0}, ValueError, "0 < tag_radius < 2, actually: 0.0"),
        ({"tag_radius": "big"}, TypeError, "tag_radius"),
        ({"max_steps": -1}, ValueError, "max_steps"),
    ],
)
def test_tag_rejects_bad_options(options, error, message):
    with pytest.raises(error, match=message):
        Tag(**options)


# ----------------------------------------------------------------------------- Tag: dynamics


def test_tag_observation_hand_computed():
    env = Tag(seed=0, n_runners=2, n_taggers=1, observed_opponents=2)
    env.reset()
    place_tag(env, [[0.0, 0.0], [0.5, 0.5]], [[-0.5, 0.0]])
    env.runner_vel[0] = [0.1, -0.2]
    runners = env._observe(RUNNER, np.array([0, 1]))[0]
    # Own position, velocity, then the only tagger (dx, dy, 1) and an absent one (zeros).
    np.testing.assert_allclose(runners[0], [0, 0, 0.1, -0.2, -0.5, 0, 1, 0, 0, 0], atol=1e-7)
    np.testing.assert_allclose(runners[1], [0.5, 0.5, 0, 0, -1, -0.5, 1, 0, 0, 0], atol=1e-7)
    (tagger,) = env._observe(TAGGER, np.array([0]))[0]
    # Both runners, nearest first.
    np.testing.assert_allclose(tagger, [-0.5, 0, 0, 0, 0.5, 0, 1, 1, 0.5, 1], atol=1e-7)


def test_tag_movement_hand_computed():
    env = Tag(seed=0, n_runners=1, n_taggers=1)
    env.reset()
    place_tag(env, [[0.0, 0.0]], [[0.9, 0.9]])
    env.set_actions(RUNNER, ActionTuple(discrete=[[4]]))  # right
    env.set_actions(TAGGER, ActionTuple(discrete=[[1]]))  # up, into the wall
    env.step()
    np.testing.assert_allclose(env.runner_vel[0], [Tag.runner_accel, 0])
    np.testing.assert_allclose(env.runner_pos[0], [Tag.runner_accel, 0])
    np.testing.assert_allclose(env.tagger_pos[0], [0.9, 0.9 + Tag.tagger_accel])
    env.set_actions(RUNNER, ActionTuple(discrete=[[0]]))  # coast: damped velocity
    env.step()  # the tagger repeats "up" (period 2) and stops at the wall
    expected = Tag.runner_accel * (1 + Tag.damping)
    np.testing.assert_allclose(env.runner_pos[0], [expected, 0], rtol=1e-6)
    np.testing.assert_allclose(env.tagger_pos[0], [0.9, 1.0])
    np.testing.assert_allclose(env.tagger_vel[0], [0.0, 0.0])


def test_tag_tagged_runner_is_restarted_with_exact_rewards():
    env = Tag(seed=3)
    env.reset()
    # Runner 0 touches tagger 0; everyone else is far apart.
    place_tag(env, [[0.0, 0.0], FAR[0], FAR[1]], [[0.05, 0.0], FAR[3]])
    stay_all(env)
    env.step()
    decision, terminal = env.get_steps(RUNNER)
    assert terminal.agent_id.tolist() == [0]
    assert terminal.reward.tolist() == [-1.0]
    assert terminal.interrupted.tolist() == [False]
    assert terminal.group_id.tolist() == [1]
    # Terminal observation: the tagger at (0.05, 0) relative to the runner at the origin.
    np.testing.assert_allclose(terminal.obs[0][0, :7], [0, 0, 0, 0, 0.05, 0, 1], atol=1e-7)
    # Restarted in the same step, same id, fresh episode away from the taggers.
    assert decision.agent_id.tolist() == [0, 1, 2]
    assert decision.reward.tolist() == [0.0, F32(0.01), F32(0.01)]
    assert decision.group_reward.tolist() == [0.0, 0.0, 0.0]
    new_spot = env.runner_pos[0]
    assert np.linalg.norm(env.tagger_pos - new_spot, axis=1).min() > env.tag_radius
    np.testing.assert_allclose(decision.obs[0][0, :4], [*new_spot, 0, 0])
    # Taggers decide at step 2: rewards since their decision at reset.
    assert len(env.get_steps(TAGGER)[0]) == 0
    stay_all(env)
    env.step()
    taggers, tagger_terminal = env.get_steps(TAGGER)
    assert len(tagger_terminal) == 0
    assert taggers.agent_id.tolist() == [3, 4]
    np.testing.assert_allclose(taggers.reward, [1 - 2 * 0.01, -2 * 0.01], rtol=1e-6)
    np.testing.assert_allclose(taggers.group_reward, [1.0, 1.0])
    assert taggers.group_id.tolist() == [2, 2]


def test_tag_credit_goes_to_the_nearest_tagger_and_one_tagger_can_tag_two():
    env = Tag(seed=0, n_runners=3, n_taggers=3, tagger_decision_period=1)
    env.reset()
    place_tag(
        env,
        [[0.0, 0.0], [0.5, 0.5], [0.5, 0.6]],
        [[0.08, 0.0], [-0.05, 0.0], [0.5, 0.55]],  # tagger 1 is nearer to runner 0
    )
    stay_all(env)
    env.step()
    _, terminal = env.get_steps(RUNNER)
    assert sorted(terminal.agent_id.tolist()) == [0, 1, 2]
    assert terminal.reward.tolist() == [-1.0, -1.0, -1.0]
    taggers, _ = env.get_steps(TAGGER)
    np.testing.assert_allclose(taggers.reward, [-0.01, 0.99, 1.99], rtol=1e-6)
    np.testing.assert_allclose(taggers.group_reward, [3.0, 3.0, 3.0])


@pytest.mark.parametrize(("gap", "tagged"), [(0.099, True), (0.101, False)])
def test_tag_radius_is_the_tagging_distance(gap, tagged):
    env = Tag(seed=0, n_runners=1, n_taggers=1)
    env.reset()
    place_tag(env, [[0.0, 0.0]], [[0.0, gap]])
    stay_all(env)
    env.step()
    assert env.get_steps(RUNNER)[1].agent_id.tolist() == ([0] if tagged else [])


def test_tag_places_new_agents_far_from_opponents():
    env = Tag(seed=0, n_runners=50)
    env.reset()
    others = np.array([[0.0, 0.0], [0.5, -0.5]], np.float32)
    env.tagger_pos[:] = others
    env.np_random = np.random.default_rng(5)
    env._reset_agents(RUNNER, np.arange(50))
    candidates = np.random.default_rng(5).uniform(-0.9, 0.9, (50, 8, 2)).astype(np.float32)
    # Each spot is the candidate farthest from its nearest opponent.
    clearance = np.linalg.norm(candidates[:, :, None] - others, axis=-1).min(axis=-1)
    best = candidates[np.arange(50), clearance.argmax(axis=1)]
    np.testing.assert_array_equal(env.runner_pos, best)
    assert not np.array_equal(best, candidates[:, 0])
    env._taggers_placed = False  # no tagger placed yet in this episode: any spot
    env.np_random = np.random.default_rng(5)
    env._reset_agents(RUNNER, np.arange(50))
    np.testing.assert_array_equal(env.runner_pos, candidates[:, 0])


def test_tag_slow_runner_sums_rewards_into_its_terminal_step():
    env = Tag(seed=0, n_runners=1, n_taggers=1, runner_decision_period=3)
    env.reset()
    place_tag(env, [[0.0, 0.0]], [[0.5, 0.0]])
    stay_all(env)
    env.step()
    assert len(env.get_steps(RUNNER)[0]) == 0  # decides every 3 steps
    env.tagger_pos[0] = [0.05, 0.0]
    stay(env, TAGGER)
    env.step()
    decision, terminal = env.get_steps(RUNNER)
    np.testing.assert_allclose(terminal.reward, [0.01 - 1.0], rtol=1e-6)
    assert decision.agent_id.tolist() == [0]  # restarted: decides at once
    assert decision.reward.tolist() == [0.0]


def test_tag_without_restart_runners_leave_and_taggers_end_with_the_last_runner():
    env = Tag(seed=0, n_runners=2, n_taggers=2, restart_tagged=False)
    env.reset()
    place_tag(env, [[0.0, 0.0], FAR[0]], [[0.05, 0.0], FAR[3]])
    stay_all(env)
    env.step()
    decision, terminal = env.get_steps(RUNNER)
    assert terminal.agent_id.tolist() == [0] and terminal.reward.tolist() == [-1.0]
    assert decision.agent_id.tolist() == [1]  # runner 0 left
    assert env.active_slots(RUNNER).tolist() == [False, True]
    assert len(env.get_steps(TAGGER)[1]) == 0  # a runner is still live
    # The tagger's observation no longer sees runner 0: only runner 1 is present.
    state = env.global_state().reshape(4, 5)
    assert state[0].tolist() == [0.0] * 5 and state[1, 4] == 1.0
    env.runner_pos[1] = env.tagger_pos[1] + [0.0, -0.05]
    stay_all(env)
    env.step()
    _, terminal = env.get_steps(RUNNER)
    assert terminal.agent_id.tolist() == [1]
    taggers, tagger_terminal = env.get_steps(TAGGER)
    assert len(taggers) == 0
    assert tagger_terminal.agent_id.tolist() == [2, 3]
    assert tagger_terminal.interrupted.tolist() == [False, False]
    np.testing.assert_allclose(tagger_terminal.reward, [0.98, 1 - 0.02], rtol=1e-6)
    np.testing.assert_allclose(tagger_terminal.group_reward, [2.0, 2.0])
    # Nobody is left: stepping changes nothing until reset.
    env.step()
    for name in (RUNNER, TAGGER):
        decision, terminal = env.get_steps(name)
        assert len(decision) == 0 and len(terminal) == 0
    assert not env.global_state().any()
    env.reset()
    assert env.get_steps(RUNNER)[0].agent_id.tolist() == [0, 1]


def test_tag_spawned_runners_get_fresh_ids_and_reuse_freed_slots():
    env = Tag(seed=0, n_runners=1, n_taggers=2, spawn_every=2, max_spawned=1, restart_tagged=False)
    env.reset()
    place_tag(env, [[0.0, 0.0]], [FAR[2], FAR[3]])
    stay_all(env)
    env.step()
    assert env.get_steps(RUNNER)[0].agent_id.tolist() == [0]
    stay_all(env)
    env.step()  # step 2: a runner spawns into slot 1 with id 3
    decision, _ = env.get_steps(RUNNER)
    assert decision.agent_id.tolist() == [0, 3]
    assert decision.reward.tolist() == [F32(0.01), 0.0]
    np.testing.assert_allclose(decision.obs[0][1, :2], env.runner_pos[1])
    place_tag(env, [[0.0, 0.0], FAR[0]], [[0.05, 0.0], FAR[3]])
    stay_all(env)
    env.step()  # step 3: runner 0 is tagged and leaves
    decision, terminal = env.get_steps(RUNNER)
    assert terminal.agent_id.tolist() == [0] and decision.agent_id.tolist() == [3]
    stay_all(env)
    env.step()  # step 4: the freed slot 0 takes a new runner with a fresh id
    assert env.get_steps(RUNNER)[0].agent_id.tolist() == [4, 3]
    stay_all(env)
    env.step()
    stay_all(env)
    env.step()  # step 6: every slot is live, so nobody spawns
    assert env.get_steps(RUNNER)[0].agent_id.tolist() == [4, 3]


def test_tag_global_state():
    env = Tag(seed=0, n_runners=2, n_taggers=1, spawn_every=10, max_spawned=1)
    with pytest.raises(EnvNotResetError):
        env.get_steps(RUNNER)
    env.reset()
    place_tag(env, [[0.1, 0.2], [0.3, 0.4]], [[-0.5, -0.6]])
    env.runner_pos[2] = [0.7, 0.7]  # an empty slot's stale values are hidden
    env.tagger_vel[0] = [0.01, 0.02]
    state = env.global_state()
    assert state.dtype == np.float32 and state.shape == (20,)
    expected = [
        [0.1, 0.2, 0, 0, 1],
        [0.3, 0.4, 0, 0, 1],
        [0, 0, 0, 0, 0],
        [-0.5, -0.6, 0.01, 0.02, 1],
    ]
    np.testing.assert_allclose(state.reshape(4, 5), expected, rtol=1e-6)
    state[:] = 9  # a fresh array, not a view of the simulation
    assert env.runner_pos[0, 0] == F32(0.1)


# ----------------------------------------------------------------------------- Tag: long runs


@pytest.mark.parametrize("reorder", [False, True])
def test_tag_is_deterministic_under_a_seed(reorder):
    options = {"spawn_every": 9, "max_spawned": 3, "max_steps": 40, "reorder_agents": reorder}
    runs = []
    for env_seed in (7, 7, 8):
        env = Tag(seed=env_seed, **options)
        env.reset()
        runs.append(random_rollout(env, 320, action_seed=1))
    first, second, other = runs
    assert len(first) == len(second)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
    assert any(
        a.shape != b.shape or not np.array_equal(a, b) for a, b in zip(first, other, strict=True)
    ), "another seed should give another rollout"
    # reset(seed=...) reseeds: the same data again.
    env = Tag(seed=123, **options)
    env.reset(seed=7)
    again = random_rollout(env, 320, action_seed=1)
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)


def test_tag_long_random_run_invariants():
    period, max_steps, spawn_every, max_spawned = 2, 25, 7, 3
    env = Tag(
        seed=11, tagger_decision_period=period, max_steps=max_steps,
        spawn_every=spawn_every, max_spawned=max_spawned, tag_radius=0.3,
    )  # fmt: skip
    env.reset()
    rng = np.random.default_rng(0)
    seen = {*env.get_steps(RUNNER)[0].agent_id.tolist(), *env.get_steps(TAGGER)[0].agent_id}
    assert seen == {0, 1, 2, 3, 4}
    last_tagger_decision = dict.fromkeys([3, 4], 0)
    runner_start = dict.fromkeys([0, 1, 2], 0)
    tags_since_tagger_decision = 0
    n_tags = n_spawned = n_tagger_restarts = 0
    for t in range(1, 401):
        decision, _ = env.get_steps(RUNNER)
        env.set_actions(RUNNER, ActionTuple(discrete=rng.integers(0, 5, (len(decision), 1))))
        decision, _ = env.get_steps(TAGGER)
        env.set_actions(TAGGER, ActionTuple(discrete=chase_nearest(decision.obs[0])))
        env.step()
        runners, runner_terminal = env.get_steps(RUNNER)
        taggers, tagger_terminal = env.get_steps(TAGGER)
        for steps in (runners, runner_terminal, taggers, tagger_terminal):
            assert len(set(steps.agent_id.tolist())) == len(steps)
            assert np.isfinite(steps.obs[0]).all()
            assert set(steps.obs[0][:, 6::3].ravel().tolist()) <= {0.0, 1.0}
        # Restarting mode: every runner slot ever filled decides every step.
        assert set(runner_terminal.agent_id.tolist()) <= set(runners.agent_id.tolist())
        assert (runners.group_id == 1).all() and (runner_terminal.group_id == 1).all()
        assert (taggers.group_id == 2).all() and (tagger_terminal.group_id == 2).all()
        assert not runners.group_reward.any() and not runner_terminal.group_reward.any()

        tagged = runner_terminal.agent_id[~runner_terminal.interrupted].tolist()
        n_tags += len(tagged)
        tags_since_tagger_decision += len(tagged)
        assert (runner_terminal.reward[~runner_terminal.interrupted] == F32(-1.0)).all()
        assert (runner_terminal.reward[runner_terminal.interrupted] == F32(0.01)).all()
        ended = zip(runner_terminal.agent_id, runner_terminal.interrupted, strict=True)
        for agent_id, interrupted in ended:
            # Interrupted exactly at max_steps, unless tagged in that very step.
            length = t - runner_start[agent_id]
            assert length == max_steps if interrupted else length <= max_steps
            runner_start[agent_id] = t
            assert runners[agent_id].reward == 0.0  # the first step of its next episode

        new = set(runners.agent_id.tolist()) - seen
        if new:
            # A spawn: one fresh id (the next one), at a spawn step, with capacity left.
            assert new == {max(seen) + 1}
            assert t % spawn_every == 0 and n_spawned < max_spawned
            (agent_id,) = new
            assert runners[agent_id].reward == 0.0
            runner_start[agent_id] = t
            n_spawned += 1
            seen |= new
        continuing = set(runners.agent_id.tolist()) - new - set(runner_terminal.agent_id.tolist())
        for agent_id in continuing:
            assert runners[agent_id].reward == F32(0.01)

        # Taggers decide exactly every `period` steps, or when restarted after max_steps.
        restarted = set(tagger_terminal.agent_id.tolist())
        assert tagger_terminal.interrupted.all()
        n_tagger_restarts += len(restarted)
        for agent_id in (3, 4):
            due = t - last_tagger_decision[agent_id] == period or agent_id in restarted
            assert (agent_id in taggers.agent_id_to_index) == due
        if len(taggers):
            assert taggers.agent_id.tolist() in ([3, 4], [4, 3])  # they share one schedule
            steps = t - last_tagger_decision[3]
            # Rewards since the last decision: -0.01 per step, +1 per credited tag.
            # An interrupted tagger's rewards are in its terminal step, its decision has 0.
            ended = len(tagger_terminal) > 0
            earned = tagger_terminal.reward if ended else taggers.reward
            group = tagger_terminal.group_reward if ended else taggers.group_reward
            expected = tags_since_tagger_decision - 0.02 * steps
            np.testing.assert_allclose(earned.sum(), expected, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(group, [tags_since_tagger_decision] * 2)
            if ended:
                assert taggers.reward.tolist() == [0.0, 0.0]
                assert taggers.group_reward.tolist() == [0.0, 0.0]
            tags_since_tagger_decision = 0
            last_tagger_decision = dict.fromkeys([3, 4], t)
    assert n_tags > 20, "the run should exercise tagging"
    assert n_spawned == max_spawned
    assert n_tagger_restarts == 2 * (400 // max_steps)


# ----------------------------------------------------------------------------- Collector


def test_collector_specs():
    env = Collector(seed=0)
    assert list(env.behavior_specs) == ["Collector"]
    spec = env.behavior_specs["Collector"]
    assert spec.action_spec == ActionSpec.create_hybrid(2, (2,))
    kinematics, items = spec.observation_specs
    assert (kinematics.shape, kinematics.name) == ((4,), "self")
    assert kinematics.dimension_property == (DimensionProperty.NONE,)
    assert (items.shape, items.name) == ((6, 3), "items")
    assert items.dimension_property == (DimensionProperty.VARIABLE_SIZE, DimensionProperty.NONE)
    assert Collector.max_episode_steps == 250
    env.reset()
    decision, _ = env.get_steps("Collector")
    assert decision.agent_id.tolist() == [0, 1, 2, 3]
    assert decision.group_id.tolist() == [0, 0, 0, 0]
    assert [o.shape for o in decision.obs] == [(4, 4), (4, 6, 3)]
    assert [o.dtype for o in decision.obs] == [np.float32, np.float32]
    assert Collector(n_agents=2, n_items=9).behavior_specs["Collector"].observation_specs[
        1
    ].shape == (9, 3)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"n_agents": 0}, ValueError, "n_agents >= 1, actually: 0"),
        ({"n_items": "6"}, TypeError, "n_items to be an int"),
        ({"min_items": 0}, ValueError, "min_items >= 1"),
        ({"n_items": 3, "min_items": 4}, ValueError, "min_items <= n_items"),
        ({"reach": 0}, ValueError, "0 < reach < 2, actually: 0"),
        ({"reach": None}, TypeError, "reach to be a float"),
    ],
)
def test_collector_rejects_bad_options(options, error, message):
    with pytest.raises(error, match=message):
        Collector(**options)


def test_collector_validates_hybrid_actions():
    env = Collector(seed=0, n_agents=2)
    env.reset()
    good = np.zeros((2, 2), np.float32)
    with pytest.raises(ActionError, match=r"discrete branch 0 takes values in \[0, 1\], got 2"):
        env.set_actions("Collector", ActionTuple(good, np.array([[0], [2]])))
    with pytest.raises(ActionError, match=r"continuous actions of shape \(2, 2\)"):
        env.set_actions("Collector", ActionTuple(np.zeros((2, 3)), np.zeros((2, 1), int)))
    with pytest.raises(ActionError, match="finite"):
        env.set_actions("Collector", ActionTuple(np.full((2, 2), np.nan), np.zeros((2, 1), int)))
    with pytest.raises(ActionError, match=r"discrete actions of shape \(2, 1\)"):
        env.set_actions("Collector", ActionTuple(good))
    env.set_actions("Collector", ActionTuple(good, np.ones((2, 1), int)))


def set_items(env, agent, positions):
    env.item_present[agent] = False
    env.item_pos[agent, : len(positions)] = positions
    env.item_present[agent, : len(positions)] = True


def test_collector_hand_computed_step():
    env = Collector(seed=0, n_agents=3)
    env.reset()
    env.pos[:] = 0.0
    env.vel[:] = 0.0
    set_items(env, 0, [[0.1, 0.0]])  # within reach: collected, the arena is then empty
    set_items(env, 1, [[0.12, 0.0], [0.0, 0.05], [0.5, 0.5]])  # only the nearest is taken
    set_items(env, 2, [[0.0, 0.3]])
    # Agent 2 moves instead: its push of (5, -0.5) is clipped to (1, -0.5).
    action = ActionTuple([[0.7, 0.7], [0.0, 0.0], [5.0, -0.5]], [[1], [1], [0]])
    env.set_actions("Collector", action)
    env.step()
    decision, terminal = env.get_steps("Collector")
    assert terminal.agent_id.tolist() == [0]
    assert terminal.interrupted.tolist() == [False]
    np.testing.assert_allclose(terminal.reward, [0.995], rtol=1e-6)
    assert not terminal.obs[1].any()  # no item left: all rows zero-padded
    np.testing.assert_allclose(terminal.obs[0], [[0, 0, 0, 0]])  # grabbing: no acceleration
    np.testing.assert_allclose(decision.reward, [0.0, 0.995, -0.005], rtol=1e-6)
    # Agent 0 restarted with a fresh arena: between min_items and n_items items.
    assert env.min_items <= env.item_present[0].sum() <= env.n_items
    expected_items = [[0.12, 0, 1], [0.5, 0.5, 1]] + [[0, 0, 0]] * 4
    np.testing.assert_allclose(decision.obs[1][1], expected_items, rtol=1e-6)
    np.testing.assert_allclose(env.vel[2], [0.04, -0.02], rtol=1e-6)
    np.testing.assert_allclose(decision.obs[0][2], [0.04, -0.02, 0.04, -0.02], rtol=1e-6)
    np.testing.assert_allclose(decision.obs[1][2, 0], [-0.04, 0.32, 1], rtol=1e-6)
    # An item beyond reach is not collected.
    env.pos[2], env.vel[2] = 0.0, 0.0
    set_items(env, 2, [[0.0, env.reach + 0.01]])
    env.set_actions("Collector", ActionTuple(np.zeros((3, 2)), np.ones((3, 1), int)))
    env.step()
    assert env.item_present[2, 0]
    assert env.get_steps("Collector")[0][2].reward == F32(-0.005)


def test_collector_is_deterministic_under_a_seed():
    runs = []
    for env_seed in (5, 5, 6):
        env = Collector(seed=env_seed, max_steps=60, reorder_agents=True)
        env.reset()
        runs.append(random_rollout(env, 300, action_seed=2))
    for a, b in zip(runs[0], runs[1], strict=True):
        np.testing.assert_array_equal(a, b)
    pairs = zip(runs[0], runs[2], strict=True)
    assert any(a.shape != b.shape or not np.array_equal(a, b) for a, b in pairs)


def test_collector_long_random_run_invariants():
    max_steps = 60
    env = Collector(seed=1, max_steps=max_steps, n_items=5, min_items=2, reach=0.4)
    env.reset()
    rng = np.random.default_rng(3)
    start = np.zeros(4, int)
    spec = env.behavior_specs["Collector"].action_spec
    decision, _ = env.get_steps("Collector")
    n_terminated = n_interrupted = 0
    for t in range(1, 501):
        # Half random, half heading for the nearest item: both ends of an episode occur.
        action = spec.random_action(4, rng)
        seek = rng.random(4) < 0.5
        action.continuous[seek] = 10 * decision.obs[1][seek, 0, :2]
        env.set_actions("Collector", action)
        env.step()
        decision, terminal = env.get_steps("Collector")
        assert decision.agent_id.tolist() == [0, 1, 2, 3]  # everyone restarts at once
        for steps in (decision, terminal):
            items = steps.obs[1]
            present = items[..., 2]
            assert set(present.ravel().tolist()) <= {0.0, 1.0}
            # BufferSensor semantics: remaining items first, nearest first, zeros after.
            assert (np.diff(present, axis=1) <= 0).all()
            assert not items[present == 0].any()
            distance = np.where(present == 1, np.linalg.norm(items[..., :2], axis=-1), np.inf)
            assert (distance[:, 1:] >= distance[:, :-1]).all()
        np.testing.assert_array_equal(decision.obs[1][..., 2].sum(axis=1), env.item_present.sum(1))
        step_rewards = [round(r, 4) for r in decision.reward.tolist()]
        for agent_id, interrupted, reward in zip(
            terminal.agent_id, terminal.interrupted, terminal.reward, strict=True
        ):
            assert decision[agent_id].reward == 0.0
            step_rewards[agent_id] = round(float(reward), 4)
            length = t - start[agent_id]
            assert length == max_steps if interrupted else length <= max_steps
            if interrupted:
                n_interrupted += 1
                assert terminal[agent_id].obs[1][:, 2].any()
            else:
                n_terminated += 1
                assert not terminal[agent_id].obs[1].any()
                assert reward == F32(0.995)
            start[agent_id] = t
        assert set(step_rewards) <= {-0.005, 0.995}
    assert n_terminated > 3 and n_interrupted > 3


# ----------------------------------------------------------------------------- render


def test_renders():
    tag = Tag(seed=0)
    tag.reset()
    place_tag(tag, [[0.0, 0.0], FAR[0], FAR[1]], [FAR[2], FAR[3]])
    image = tag.render()
    assert image.shape == (128, 128, 3) and image.dtype == np.uint8
    assert image[64, 64].tolist() == [40, 90, 220]  # the runner at the centre
    assert image[6, 121].tolist() == [220, 50, 40]  # the tagger at (0.9, 0.9): top right
    assert image[64, 100].tolist() == [235, 235, 235]

    collector = Collector(seed=0, n_agents=3)
    collector.reset()
    collector.pos[:] = [[0.0, 0.0], [-0.5, 0.5], [0.5, -0.5]]
    image = collector.render()
    assert image.dtype == np.uint8
    assert image.shape == (64 + 4, 3 * 64 + 4 * 2, 3)
    assert image[2 + 32, 2 + 32].tolist() == [40, 90, 220]
    assert image[2 + 16, 68 + 16].tolist() == [40, 90, 220]
    assert image[2 + 48, 134 + 48].tolist() == [40, 90, 220]
