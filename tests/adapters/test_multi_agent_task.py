"""MultiAgentTask: one core step per cycle, the acting agent's transition, termination modes.

Regression tests for ai-traineree's ``MultiAgentUnityTask`` defects: it stepped the simulation
once per agent (here: core steps are counted), only its ``any`` mode could fire (here: every
mode and fraction fires at the hand-computed cycle), and it reset the simulation inside
``step`` (here: the core's reset count is watched).
"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from zooport.adapters.multi_agent_task import MultiAgentTask, MultiAgentUnityTask, Transition
from zooport.adapters.options import TerminationMode
from zooport.envs import BatchedEnv
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.builtin.grid_world import GridWorld
from zooport.envs.builtin.tag import Tag
from zooport.errors import (
    ActionError,
    EnvClosedError,
    EnvNotResetError,
    SpecError,
    UnknownAgentError,
)

from tests.support.probes import (
    RUNNER,
    WALKER,
    MaskedProbe,
    Probe,
    agent_policy,
    reference_rollout,
)

WALK = np.array([0.5, -0.5], np.float32)


def three_agents(**kw):
    """runner_0 (reward 1), runner_1 (reward 2), walker_2 (reward 10) per step."""
    core = Probe(runner_lengths=(0, 0), walker_lengths=(0,), seed=0)
    return core, MultiAgentTask(core, **kw)


# ---------------------------------------------------------------------- one core step per cycle


def test_the_core_steps_once_per_cycle_not_once_per_agent():
    core, task = three_agents()
    task.reset(seed=0)
    for cycle in range(1, 5):
        assert task.step(2, 0) is None
        assert task.step(1, "runner_1") is None
        assert core.t == cycle - 1 and task.waiting_for == ["walker_2"]
        out = task.step(WALK, 2)
        assert isinstance(out, Transition)
        assert core.t == cycle == task.cycles  # ai-traineree: 3 core steps per cycle
    assert core.applied[RUNNER][-1].tolist() == [[2], [1]]
    assert core.applied[WALKER][-1].tolist() == [[0.5, -0.5]]
    assert len(core.applied[RUNNER]) == 4


def test_step_returns_the_acting_agents_own_transition():
    core, task = three_agents()
    task.reset(seed=0)
    # Whoever completes the cycle gets its own transition: walker first, runner_0 last.
    assert task.step(WALK, "walker_2") is None
    assert task.step(0, 1) is None
    obs, reward, done, info = task.step(0, 0)
    assert reward == 1.0 and obs.tolist() == [1.0, 0.0, 0.0] and not done
    assert info == {
        "decided": True, "group_id": 1, "group_reward": 0.5, "terminated": False,
        "truncated": False,
    }  # fmt: skip
    assert task.last("runner_1").reward == 2.0 and task.last(2).reward == 10.0
    assert task.last(2).obs.tolist() == [1.0, 0.0, 2.0]
    # Next cycle, the walker completes it.
    task.step(0, 0)
    task.step(0, 1)
    assert task.step(WALK, 2).reward == 10.0


@pytest.mark.parametrize("walker_period", [1, 2])
def test_transitions_equal_the_raw_core_driven_by_hand(walker_period):
    """Random acting order per cycle; every transition equals the reference rollout."""

    def make():
        return Probe(
            runner_lengths=(2, 3), walker_lengths=(4,), walker_period=walker_period, seed=0
        )

    expected = reference_rollout(make(), seed=5, steps=6)
    task = MultiAgentTask(make(), termination_mode="all")
    states = task.reset(seed=5)
    for i, agent in enumerate(task.possible_agents):
        key = tuple(task.agent_key(agent))
        assert np.array_equal(states[i], expected[0][key][0])
    rng = np.random.default_rng(0)
    for t, record in enumerate(expected[1:]):
        order = [task.agents[i] for i in rng.permutation(len(task.agents))]
        out = None
        for agent in order:
            out = task.step(agent_policy(task, agent, t, task.env.behavior_specs), agent)
        assert out is task.last(order[-1])
        names = {tuple(task.agent_key(a)): a for a in task.possible_agents}
        for key, (obs, reward, terminated, truncated, decided) in record.items():
            got = task.last(names[key])
            assert np.array_equal(got.obs, obs), (t, key)
            assert got.reward == pytest.approx(reward), (t, key)
            assert got.done == (terminated or truncated)
            assert (got.info["terminated"], got.info["truncated"]) == (terminated, truncated)
            assert got.info["decided"] == decided
        if task.game_over:
            break
    assert task.game_over  # every agent finished within the 6 steps ("all")


def test_step_all_equals_stepping_agent_by_agent():
    core_a, by_agent = three_agents()
    core_b, batched = three_agents()
    by_agent.reset(seed=1)
    batched.reset(seed=1)
    for t in range(3):
        actions = {0: t % 3, 1: (t + 1) % 3, 2: WALK * t}
        for agent_id in (2, 0, 1):
            by_agent.step(actions[agent_id], agent_id)
        out = batched.step_all(actions)  # positions as keys
        assert list(out) == batched.possible_agents
        for name, transition in out.items():
            expected = by_agent.last(name)
            assert np.array_equal(transition.obs, expected.obs)
            assert transition[1:] == expected[1:]
    assert core_a.t == core_b.t == 3
    assert [a.tolist() for a in core_a.applied[RUNNER]] == [
        a.tolist() for a in core_b.applied[RUNNER]
    ]


def test_step_all_completes_a_cycle_begun_with_step():
    core, task = three_agents()
    task.reset()
    task.step(1, "runner_0")
    out = task.step_all({"runner_1": 2, "walker_2": WALK})
    assert core.t == 1 and core.applied[RUNNER][0].tolist() == [[1], [2]]
    assert out["runner_0"].reward == 1.0
    task.step(1, 0)
    with pytest.raises(ActionError, match="already acted"):
        task.step_all({"runner_0": 1, "runner_1": 2, "walker_2": WALK})


# ---------------------------------------------------------------------- termination modes


@pytest.mark.parametrize(
    "mode, last_cycle",
    [
        ("any", 1),
        ("majority", 3),  # more than half of 4
        ("all", 4),
        (TerminationMode.ALL, 4),
        ("MAJORITY", 3),
        (0.25, 1),
        (0.5, 2),
        (0.75, 3),
    ],
)
def test_every_termination_mode_fires_at_the_hand_computed_cycle(mode, last_cycle):
    # Runner i finishes at cycle i + 1 (and is restarted by the core, unseen): exactly one
    # agent finishes per cycle, so a rule that counts one step's terminal agents against
    # every agent (ai-traineree's) never reaches "majority" or "all".
    core = Probe(runner_lengths=(1, 2, 3, 4), walker_lengths=(), seed=0)
    task = MultiAgentTask(core, termination_mode=mode)
    task.reset()
    for cycle in range(1, last_cycle + 1):
        assert not task.game_over and not task.detect_game_over(task.dones)
        out = task.step_all(dict.fromkeys(task.agents, 0))
        assert out[f"runner_{cycle - 1}"].info["terminated"]
    assert task.game_over and task.detect_game_over(task.dones)
    assert all(task.dones.values()) and task.agents == []
    for agent, transition in out.items():  # the ones still live are truncated
        finisher = agent == f"runner_{last_cycle - 1}"
        assert transition.done
        assert (transition.info["terminated"], transition.info["truncated"]) == (
            finisher,
            not finisher,
        )
    assert core.resets == 1  # no reset hidden inside step
    with pytest.raises(EnvNotResetError, match="episode is over"):
        task.step(0, 0)
    with pytest.raises(EnvNotResetError, match="episode is over"):
        task.step_all({})
    assert core.resets == 1 and core.t == last_cycle
    task.reset()
    assert core.resets == 2 and task.cycles == 0 and not task.game_over


def test_a_finished_agent_does_not_act_and_the_cycle_needs_only_live_agents():
    core = Probe(runner_lengths=(1, 0), walker_lengths=(), seed=0)
    task = MultiAgentTask(core, termination_mode="all", stale_actions="raise")
    task.reset()
    task.step(0, 0)
    assert task.step(0, 1) is not None
    assert task.agents == ["runner_1"] and task.dones == {"runner_0": True, "runner_1": False}
    with pytest.raises(ActionError, match=r"finished earlier in the episode \['runner_0'\]"):
        task.step(0, 0)
    task.stale_actions = "ignore"
    assert task.step(2, 0) is None and task.ignored_actions == 1 and core.t == 1
    assert task.step(1, 1).reward == 2.0 and core.t == 2  # runner_1 alone completes a cycle
    # runner_0's 2 did not reach the core, which plays its restarted slot with zeros.
    assert core.applied[RUNNER][-1].tolist() == [[0], [1]]


@pytest.mark.parametrize(
    "mode, flags, expected",
    [
        ("any", [False] * 4, False),
        ("any", [False, True, False, False], True),
        ("majority", [True, True, False, False], False),
        ("majority", [True, True, True, False], True),
        ("all", [True, True, True, False], False),
        ("all", [True] * 4, True),
        (0.5, [True, False, False, False], False),
        (0.5, [True, False, True, False], True),
        # A mapping counts its values (ai-traineree's `all(dones)` iterated the keys).
        ("any", {"runner_0": False, "runner_1": False}, False),
        ("all", {"runner_0": True, "runner_1": True}, False),  # the 2 left out count as live
        ("majority", np.array([True, True, True, False]), True),
    ],
)
def test_detect_game_over_applies_the_rule_to_the_flags(mode, flags, expected):
    task = MultiAgentTask(Probe(runner_lengths=(0, 0, 0, 0), walker_lengths=(), seed=0))
    task.termination_mode = mode
    assert task.termination_mode == mode
    assert task.detect_game_over(flags) is expected


def test_max_cycles_truncates_every_live_agent():
    core, task = three_agents(max_cycles=2, termination_mode="all")
    task.reset()
    task.step_all({0: 0, 1: 0, 2: WALK})
    assert not task.game_over
    out = task.step_all({0: 0, 1: 0, 2: WALK})
    assert task.game_over and all(t.info["truncated"] for t in out.values())
    assert [t.reward for t in out.values()] == [1.0, 2.0, 10.0]


# ---------------------------------------------------------------------- API


def test_reset_spaces_names_and_the_alias():
    assert MultiAgentUnityTask is MultiAgentTask
    task = MultiAgentTask(Tag(seed=0))
    assert task.termination_mode == "any"  # the seed's default
    assert task.possible_agents == ["runner_0", "runner_1", "runner_2", "tagger_3", "tagger_4"]
    assert task.num_agents == 5 and task.name == "Tag" and task.env is task.core
    states = task.reset(seed=0)
    assert len(states) == 5 and states[0].shape == (10,) and states[0].dtype == np.float32
    assert task.observation_space(0) is task.observation_space("runner_2")
    assert task.action_spaces["tagger_3"] == spaces.Discrete(5)
    assert list(task.observation_spaces) == task.possible_agents
    assert task.action_spaces["tagger_4"] is task.action_spaces["tagger_3"]
    assert task.action_space is task.action_spaces["runner_0"]  # the first behaviour's
    assert task.agent_key("tagger_4") == ("Tagger?team=1", 4)
    # A name that is no agent of the episode has no space, though its behaviour parses.
    with pytest.raises(UnknownAgentError, match="'runner_9'"):
        task.observation_space("runner_9")


def test_layout_options_reach_the_spaces():
    core = Probe(runner_lengths=(0,), walker_lengths=(), branches=(3, 2), seed=0)
    assert MultiAgentTask(core).action_space == spaces.MultiDiscrete([3, 2])
    flat = MultiAgentTask(Probe((0,), (), branches=(3, 2), seed=0), flatten_branched=True)
    assert flat.action_space == spaces.Discrete(6)
    flat.reset()
    flat.step(5, 0)  # branch values (2, 1)
    assert flat.env.applied[RUNNER][-1].tolist() == [[2, 1]]


def test_action_space_is_the_one_space_of_every_behaviour_as_in_ai_traineree():
    # ai-traineree's MultiAgentUnityTask.action_space is a property: a space, not a method.
    assert isinstance(MultiAgentTask(Tag(seed=0)).action_space, spaces.Discrete)
    _, task = three_agents()  # runners: Discrete; the walker: Box
    assert task.action_spaces["walker_2"] == spaces.Box(-1, 1, (2,), np.float32)
    with pytest.raises(SpecError, match=r"do not share one action space: .*for 'Walker'"):
        _ = task.action_space


def test_render_returns_the_latest_visual_observation_as_in_ai_traineree():
    task = MultiAgentTask(GridWorld(n_agents=2, seed=0))
    states = task.reset(seed=0)
    np.testing.assert_array_equal(task.render(), states[0]["observation"]["camera"])
    task.step_all(dict.fromkeys(task.agents, 1))
    camera = task.last(0).obs["observation"]["camera"]
    frame = task.render("rgb_array")
    assert frame.shape == (5, 5, 3) and not np.shares_memory(frame, camera)
    np.testing.assert_array_equal(frame, camera)
    uint8 = MultiAgentTask(GridWorld(n_agents=1, seed=0), uint8_visual=True)
    uint8.reset(seed=0)
    assert uint8.render().dtype == np.uint8


def test_action_masks_are_in_the_observation():
    task = MultiAgentTask(MaskedProbe(runner_lengths=(0, 0), walker_lengths=(), seed=0))
    states = task.reset()
    assert isinstance(task.observation_space(0), spaces.Dict)
    assert states[1]["action_mask"].tolist() == [1, 1, 0]
    assert states[1]["action_mask"].dtype == np.int8


def test_spawned_agents_join_and_act_from_the_next_cycle():
    core = Probe(runner_lengths=(0, 0), walker_lengths=(), spawn_at=1, seed=0)
    task = MultiAgentTask(core, termination_mode="all")
    assert len(task.possible_agents) == 2 and task.dones == {}  # found, but no episode yet
    task.reset()
    task.step(0, 0)
    out = task.step(0, 1)
    assert out.reward == 2.0
    assert task.possible_agents == ["runner_0", "runner_1", "runner_2"] and task.num_agents == 3
    assert task.last(2).obs.tolist() == [0.0, 2.0, 2.0] and task.last(2).reward == 0.0
    assert task.dones == dict.fromkeys(task.possible_agents, False)
    task.step(0, 0)
    task.step(0, 1)
    assert task.waiting_for == ["runner_2"] and core.t == 1
    assert task.step(1, 2).reward == 3.0 and core.t == 2


def test_decision_periods_keep_the_observation_and_ignore_the_action():
    core = Probe(runner_lengths=(0,), walker_lengths=(0,), walker_period=2, seed=0)
    task = MultiAgentTask(core)
    task.reset()
    out = task.step_all({0: 0, 1: WALK})
    obs, reward, done, info = out["walker_1"]
    assert obs.tolist() == [0.0, 0.0, 1.0] and reward == 0.0 and not done  # kept, unpaid
    assert info == {
        "decided": False, "group_id": 0, "group_reward": 0.0, "terminated": False,
        "truncated": False,
    }  # fmt: skip
    out = task.step_all({0: 0, 1: -WALK})
    assert out["walker_1"].reward == 20.0 and out["walker_1"].info["decided"]
    assert core.applied[WALKER][1].tolist() == [[0.5, -0.5]]  # the ignored action not applied


def test_errors_name_what_was_expected():
    core, task = three_agents()
    with pytest.raises(EnvNotResetError, match="reset"):
        task.step(0, 0)
    task.reset()
    task.step(0, 0)
    with pytest.raises(ActionError, match="'runner_0' has already acted.*'runner_1', 'walker_2'"):
        task.step(0, 0)
    with pytest.raises(UnknownAgentError, match=r"position in \[0, 2\], got 3"):
        task.step(0, 3)
    with pytest.raises(UnknownAgentError, match="no agent 'runner_7'"):
        task.step(0, "runner_7")
    with pytest.raises(UnknownAgentError, match="got True"):
        task.step(0, True)
    with pytest.raises(ActionError, match="None.*default_action"):
        task.step(None, 1)
    with pytest.raises(ActionError, match="dict of actions"):
        task.step_all([0, 0])
    task.step(7, 1)  # out of range: found when the cycle completes
    with pytest.raises(ActionError, match="runner_1"):
        task.step(WALK, 2)
    assert core.t == 0 and task.waiting_for == task.agents  # the cycle starts over
    task.step_all({0: 0, 1: 1, 2: WALK})
    assert core.t == 1


def test_default_action_fills_none_and_missing_agents():
    core, task = three_agents(default_action="zero")
    task.reset()
    task.step(None, 2)
    task.step(2, 0)
    assert task.step(None, 1).reward == 2.0
    task.step_all({"runner_1": 1})
    assert core.applied[RUNNER][-1].tolist() == [[0], [1]]
    assert core.applied[WALKER][0].tolist() == [[0.0, 0.0]]


def test_step_all_by_name_takes_none_as_the_default_and_ignores_finished_agents():
    core, task = three_agents(default_action="zero")
    task.reset()
    out = task.step_all({"runner_0": None, "runner_1": 1, "walker_2": None})
    assert core.applied[RUNNER][-1].tolist() == [[0], [1]]
    assert core.applied[WALKER][-1].tolist() == [[0.0, 0.0]]
    assert list(out) == ["runner_0", "runner_1", "walker_2"]
    core, task = three_agents()
    task.reset()
    with pytest.raises(ActionError, match="'runner_0'.*got None"):
        task.step_all({"runner_0": None, "runner_1": 1, "walker_2": WALK})
    assert core.t == 0 and task.waiting_for == task.agents  # the cycle starts over
    core = Probe(runner_lengths=(1, 0), walker_lengths=(0,), seed=0)
    task = MultiAgentTask(core, termination_mode="all")
    task.reset()
    task.step_all({"runner_0": 0, "runner_1": 0, "walker_2": WALK})  # runner_0 finishes
    assert task.agents == ["runner_1", "walker_2"]
    out = task.step_all({"runner_0": 2, 1: 1, "walker_2": WALK})
    assert list(out) == ["runner_1", "walker_2"] and task.ignored_actions == 1
    assert core.applied[RUNNER][-1].tolist() == [[0], [1]]  # the restarted slot: zeros
    task.stale_actions = "raise"
    with pytest.raises(ActionError, match=r"finished earlier in the episode \['runner_0'\]"):
        task.step_all({"runner_0": 0, "runner_1": 0, "walker_2": WALK})
    assert task.ignored_actions == 1 and task.waiting_for == task.agents


def test_seed_render_close():
    a = MultiAgentTask(BallBalance(n_agents=3))
    b = MultiAgentTask(BallBalance(n_agents=3))
    a.seed(7)
    first = a.reset()
    second = b.reset(seed=7)
    assert all(np.array_equal(x, y) for x, y in zip(first, second, strict=True))
    assert not np.array_equal(a.reset()[0], first[0])  # the seed is used once

    core, task = three_agents()
    task.reset()
    task.step_all({0: 0, 1: 0, 2: WALK})
    frame = task.render()
    assert frame.shape == (4, 6, 3) and frame.dtype == np.uint8 and (frame == 1).all()
    with pytest.raises(ValueError, match="rgb_array"):
        task.render("human")
    assert task.side_channels == []
    task.close()
    task.close()
    assert core.closed_calls == 1
    with pytest.raises(EnvClosedError):
        task.step(0, 0)
    with pytest.raises(EnvClosedError):
        task.reset()


class Unpictured(Probe):
    """A Probe that cannot render (BatchedEnv's default ``_render``)."""

    _render = BatchedEnv._render


def test_a_core_without_pictures_renders_none_with_a_warning():
    task = MultiAgentTask(Unpictured(seed=0))
    task.reset()
    with pytest.warns(UserWarning, match="Unpictured cannot render"):
        assert task.render() is None


def test_the_class_example_cycle():
    """The example the class docstring carried: the core steps once the cycle is complete."""
    task = MultiAgentTask(Tag(seed=0), termination_mode="majority")
    task.reset(seed=0)
    assert [task.step(0, agent_id) for agent_id in range(4)] == [None] * 4
    obs, reward, done, info = task.step(0, 4)
    assert (task.cycles, reward, done) == (1, 0.0, False)
