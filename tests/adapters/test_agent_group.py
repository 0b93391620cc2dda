"""AgentGroup, the driver family's per-behaviour engine, alone: batches written by hand.

Each test builds the core's DecisionSteps/TerminalSteps itself and checks the group's slots,
step outputs and action batches against values worked out by hand: slots in ascending id
order at the start and in order of appearance after, the terminal reward kept when the core
restarts an agent in the same step, no decision (last observation, reward 0), spawned and
dropped agents, ``end_episode``, the cached id lookup when rows are reordered, and
``gather`` for agents in any row order.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from gymnasium import spaces

from zooport.adapters.agent_names import AgentNames
from zooport.adapters.multi_agent_driver import AgentGroup
from zooport.adapters.options import LayoutOptions
from zooport.adapters.pettingzoo_parallel import flat_observations
from zooport.envs.base_env import ActionSpec, BehaviorSpec, DecisionSteps, TerminalSteps
from zooport.errors import ActionError

from tests.support.specs import obs_spec

B = "Walker"
NAMES = AgentNames([B])


def group(action: ActionSpec | None = None, *, masked: bool = False, mask_in_info=False):
    spec = BehaviorSpec([obs_spec((2,))], action or ActionSpec.create_discrete((3,)))
    return AgentGroup(B, spec, masked=masked, mask_in_info=mask_in_info, layout=LayoutOptions())


def decision(
    ids, reward=None, *, obs=None, mask=None, group_id=None, group_reward=None, dtype=np.int32
):
    """DecisionSteps of agents ``ids`` whose observation is ``[id, 10 * id]`` by default."""
    ids = np.asarray(ids, dtype)
    n = ids.size
    return DecisionSteps(
        [np.stack([ids, 10 * ids], 1).astype(np.float32) if obs is None else obs],
        np.zeros(n, np.float32) if reward is None else np.asarray(reward, np.float32),
        ids,
        mask,
        np.zeros(n, np.int32) if group_id is None else np.asarray(group_id, np.int32),
        np.zeros(n, np.float32) if group_reward is None else np.asarray(group_reward, np.float32),
    )


def terminal(ids, reward, interrupted, *, group_reward=None):
    """TerminalSteps of agents ``ids`` whose final observation is ``[-id, -10 * id]``."""
    ids = np.asarray(ids, np.int32)
    n = ids.size
    return TerminalSteps(
        [-np.stack([ids, 10 * ids], 1).astype(np.float32)],
        np.asarray(reward, np.float32),
        np.asarray(interrupted, bool),
        ids,
        np.zeros(n, np.int32),
        np.zeros(n, np.float32) if group_reward is None else np.asarray(group_reward, np.float32),
    )


NO_END = terminal([], [], [])


def started(ids=(7, 3, 5), **kwargs) -> AgentGroup:
    g = group(**kwargs)
    g.start(decision(ids), NAMES)
    return g


def outputs(g: AgentGroup) -> dict[str, tuple]:
    """{name: (obs, reward, terminated, truncated, decided)} of the agents that report."""
    names, index = g.reporting()
    obs = [o.tolist() for o in g.observations(index)]
    columns = (g.reward, g.terminated, g.truncated, g.decided)
    rows = zip(obs, *(c[index].tolist() for c in columns), strict=True)
    return dict(zip(names, rows, strict=True))


# ---------------------------------------------------------------------- start, absorb


def test_start_gives_slots_in_ascending_id_order_whatever_the_row_order():
    g = started((7, 3, 5))
    assert g.ids[: g.n].tolist() == [3, 5, 7] and g.names == ["walker_3", "walker_5", "walker_7"]
    assert g.dec_names == ["walker_7", "walker_3", "walker_5"]  # the core's row order
    assert outputs(g) == {
        "walker_3": ([3.0, 30.0], 0.0, False, False, True),
        "walker_5": ([5.0, 50.0], 0.0, False, False, True),
        "walker_7": ([7.0, 70.0], 0.0, False, False, True),
    }
    assert g.slots_of(np.array([5, 4, 7, 3])).tolist() == [1, -1, 2, 0]


def test_terminal_reward_is_kept_when_the_core_restarts_the_agent_in_the_same_step():
    g = started()
    g.begin_step()
    # Agent 5 ends (terminal reward 2.5) and is restarted: it is in both batches.
    reported = g.absorb(decision([3, 5, 7], [1.0, 0.0, 3.0]), terminal([5], [2.5], [False]))
    assert reported
    assert outputs(g) == {
        "walker_3": ([3.0, 30.0], 1.0, False, False, True),
        "walker_5": ([-5.0, -50.0], 2.5, True, False, False),  # its final observation
        "walker_7": ([7.0, 70.0], 3.0, False, False, True),
    }
    assert g.finished_names == ["walker_5"] and g.live[: g.n].sum() == 2
    assert g.dec_names == ["walker_3", "walker_7"]  # its next episode is not this episode's


def test_interrupted_is_truncated_and_group_rewards_arrive_with_the_end():
    g = started()
    g.begin_step()
    g.absorb(decision([]), terminal([3, 7], [0.5, -1.0], [True, False], group_reward=[2, 4]))
    assert outputs(g)["walker_3"] == ([-3.0, -30.0], 0.5, False, True, False)
    assert outputs(g)["walker_7"] == ([-7.0, -70.0], -1.0, True, False, False)
    assert g.group_reward[:3].tolist() == [2.0, 0.0, 4.0]


def test_an_agent_without_a_decision_keeps_its_observation_with_reward_zero():
    g = started()
    g.begin_step()
    obs = np.array([[50.0, 51.0]], np.float32)
    assert g.absorb(decision([5], [4.0], obs=obs), NO_END)
    assert outputs(g) == {
        "walker_3": ([3.0, 30.0], 0.0, False, False, False),
        "walker_5": ([50.0, 51.0], 4.0, False, False, True),
        "walker_7": ([7.0, 70.0], 0.0, False, False, False),
    }
    g.begin_step()  # the next step starts from zero rewards and no decisions
    assert not g.absorb(decision([]), NO_END)
    assert g.reward[:3].tolist() == [0.0, 0.0, 0.0] and not g.decided[:3].any()
    assert g.obs[1].tolist() == [50.0, 51.0]


def test_a_finished_agent_stops_reporting_from_the_next_step():
    g = started()
    g.begin_step()
    g.absorb(decision([3, 7]), terminal([5], [1.0], [False]))
    g.begin_step()
    g.absorb(decision([3, 5, 7], [1.0, 9.0, 2.0]), NO_END)
    assert list(outputs(g)) == ["walker_3", "walker_7"]
    assert outputs(g)["walker_7"][1] == 2.0 and g.dec_names == ["walker_3", "walker_7"]


# ---------------------------------------------------------------------- spawned, dropped


def test_a_spawned_agent_takes_the_next_slot_and_reports_from_its_first_step():
    g = started()
    g.begin_step()
    g.absorb(decision([9, 3, 5, 7], [6.0, 1.0, 1.0, 1.0]), NO_END)
    assert g.new_names == ["walker_9"] and g.slots_of(np.array([9])).tolist() == [3]
    assert g.ids[: g.n].tolist() == [3, 5, 7, 9] and g.live[: g.n].all()
    assert outputs(g)["walker_9"] == ([9.0, 90.0], 6.0, False, False, True)
    assert g.dec_names == ["walker_9", "walker_3", "walker_5", "walker_7"]
    g.begin_step()  # from now on a live agent like the others
    assert g.reporting()[0] == ["walker_3", "walker_5", "walker_7", "walker_9"]
    assert g.new_names == [] and g.slots_of(np.array([9])).tolist() == [3]


def test_agents_new_in_the_last_step_are_forgotten_and_the_cached_lookup_with_them():
    g = started()
    g.begin_step()
    joined = decision([3, 5, 7, 9])
    g.absorb(joined, NO_END)
    assert g.end_episode() == ["walker_3", "walker_5", "walker_7"]  # truncated; 9 forgotten
    assert g.n == 3 and not g.live[: g.n].any() and g.names == ["walker_3", "walker_5", "walker_7"]
    assert g.slots_of(np.array([9])).tolist() == [-1] and list(outputs(g)) == g.names
    # The same agent_id bytes again: a stale cached lookup would name the dropped slot 3.
    g.begin_step()
    g.absorb(decision([3, 5, 7, 9]), NO_END)
    assert g.new_names == ["walker_9"] and g.slots_of(np.array([9])).tolist() == [3]
    assert g.n == 4


def test_a_dropped_agent_does_not_count_among_those_that_report():
    # walker_5 finished earlier; walker_9 joins in the last step and is dropped: the three
    # decisions no longer cover the three slots, and walker_5 does not report.
    g = started()
    g.begin_step()
    g.absorb(decision([3, 7]), terminal([5], [1.0], [False]))
    g.begin_step()
    g.absorb(decision([3, 7, 9]), NO_END)
    g.end_episode()
    assert g.reporting()[0] == ["walker_3", "walker_7"]


def test_end_episode_ends_every_live_agent_as_truncated():
    g = started()
    g.begin_step()
    g.absorb(decision([3, 7], [1.0, 2.0]), terminal([5], [4.0], [False]))
    assert g.end_episode() == ["walker_3", "walker_7"]
    assert not g.live[: g.n].any()
    assert g.finished_names == ["walker_5", "walker_3", "walker_7"]
    assert outputs(g) == {
        "walker_3": ([3.0, 30.0], 1.0, False, True, True),
        "walker_5": ([-5.0, -50.0], 4.0, True, False, False),
        "walker_7": ([7.0, 70.0], 2.0, False, True, True),
    }


# ---------------------------------------------------------------------- cached id lookup


def test_the_cached_lookup_follows_reordered_rows():
    g = started((3, 5, 7))
    for ids in ([7, 5, 3], [3, 5, 7], [5, 7, 3], [3, 5, 7]):
        g.begin_step()
        ids = np.array(ids)
        obs = np.stack([ids, ids + 0.5], 1).astype(np.float32)
        g.absorb(decision(ids, ids / 10, obs=obs), NO_END)
        assert g.obs[:3].tolist() == [[3.0, 3.5], [5.0, 5.5], [7.0, 7.5]], ids
        assert g.reward[:3].tolist() == pytest.approx([0.3, 0.5, 0.7])
        assert g.dec_names == [f"walker_{i}" for i in ids.tolist()]


def test_the_cached_lookup_tells_dtypes_apart():
    # int64 [3] and int32 [3, 0] have the same bytes; a lookup keyed on bytes alone would
    # map the two rows of the second through the one slot of the first.
    g = started((0, 3))
    g.begin_step()
    g.absorb(decision([3], dtype=np.int64), NO_END)
    g.begin_step()
    obs = np.array([[30.0, 31.0], [0.5, 1.5]], np.float32)
    g.absorb(decision([3, 0], [2.0, 1.0], obs=obs, dtype=np.int32), NO_END)
    assert g.obs[:2].tolist() == [[0.5, 1.5], [30.0, 31.0]]
    assert g.reward[:2].tolist() == [1.0, 2.0] and g.dec_names == ["walker_3", "walker_0"]


# ---------------------------------------------------------------------- actions


def test_gather_orders_actions_by_the_decision_rows():
    g = started((7, 3, 5))
    batch = g.gather({"walker_3": 0, "walker_5": 1, "walker_7": 2, "walker_8": 1})
    assert batch.discrete.tolist() == [[2], [0], [1]] and batch.discrete.dtype == np.int32


def test_gather_fills_rows_of_finished_agents_with_zeros():
    g = started(action=ActionSpec.create_continuous(2))
    g.begin_step()
    g.absorb(decision([7, 3, 5]), terminal([3], [1.0], [False]))  # 3 restarted
    assert g.dec_names == ["walker_7", "walker_5"] and g.dec_rows.tolist() == [0, 2]
    batch = g.gather({"walker_5": [0.5, -0.5], "walker_7": np.array([1.0, 0.25])})
    assert batch.continuous.tolist() == [[1.0, 0.25], [0.0, 0.0], [0.5, -0.5]]


def test_a_bad_action_names_its_agent():
    g = started()
    expected = r"agent 'walker_5' \(behavior 'Walker'\): expected an action of Discrete\(3\), got 3"
    with pytest.raises(ActionError, match=expected):
        g.gather({"walker_3": 0, "walker_5": 3, "walker_7": 1})
    with pytest.raises(ActionError, match="agent 'walker_3'.*got 2.5"):
        g.gather({"walker_3": 2.5, "walker_5": 0, "walker_7": 1})
    assert g.problem(2) is None and "in [0, 2]" in g.problem(-1)


# ---------------------------------------------------------------------- masks, infos, state


def test_masks_are_handed_out_as_allowed_int8():
    g = group(ActionSpec.create_discrete((3, 2)), masked=True)
    core_mask = [np.array([[False, True, False], [False, False, True]]), np.zeros((2, 2), bool)]
    g.start(decision([4, 2], mask=core_mask), NAMES)
    assert g.observation_space["action_mask"] == spaces.Box(0, 1, (5,), np.int8)
    observations = list(g.observations(g.reporting()[1]))
    assert observations[0]["action_mask"].tolist() == [1, 1, 0, 1, 1]  # agent 2: row 1
    assert observations[1]["action_mask"].tolist() == [1, 0, 1, 1, 1]
    assert observations[0]["observation"].tolist() == [2.0, 20.0]


def test_mask_in_info_leaves_the_observation_space_alone():
    g = group(masked=True, mask_in_info=True)
    g.start(decision([1], mask=[np.array([[True, False, False]])]), NAMES)
    assert g.observation_space == spaces.Box(-np.inf, np.inf, (2,), np.float32)
    (info,) = g.infos(g.reporting()[1], 1)
    assert info["action_mask"].tolist() == [0, 1, 1] and info["decided"] is True


def test_infos_carry_decided_group_id_and_group_reward():
    g = group()
    g.start(decision([1, 2], group_id=[4, 4]), NAMES)
    assert list(g.infos(g.reporting()[1], 2)) == [
        {"decided": True, "group_id": 4, "group_reward": 0.0},
        {"decided": True, "group_id": 4, "group_reward": 0.0},
    ]
    g.begin_step()
    g.absorb(decision([2], group_id=[6], group_reward=[0.5]), NO_END)
    assert list(g.infos(g.reporting()[1], 2)) == [
        {"decided": False, "group_id": 4, "group_reward": 0.0},
        {"decided": True, "group_id": 6, "group_reward": 0.5},
    ]


def test_flat_observations_are_zero_for_agents_no_longer_live():
    g = started((3, 5))
    g.begin_step()
    g.absorb(decision([3]), terminal([5], [1.0], [False]))
    assert flat_observations(g, 3).tolist() == [[3.0, 30.0], [0.0, 0.0], [0.0, 0.0]]


def test_a_copy_keeps_its_step_outputs_tied_to_the_buffers_begin_step_clears():
    g = started()
    g.begin_step()
    g.absorb(decision([3, 5, 7], [1.0, 2.0, 3.0]), NO_END)
    copy = pickle.loads(pickle.dumps(g))
    assert copy.reward[:3].tolist() == [1.0, 2.0, 3.0]
    copy.begin_step()
    assert copy.reward[:3].tolist() == [0.0, 0.0, 0.0] and not copy.decided.any()
    assert g.reward[:3].tolist() == [1.0, 2.0, 3.0]  # the original is untouched
