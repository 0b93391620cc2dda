"""BehaviorSlots: the single/vector adapters' driver, checked against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from zooport.adapters.behavior_slots import BehaviorSlots
from zooport.envs import BatchedEnv, StepResult
from zooport.envs.base_env import (
    ActionSpec,
    BehaviorSpec,
    DecisionSteps,
    TerminalSteps,
)
from zooport.errors import SpecError, UnknownBehaviorError

from tests.support.specs import obs_spec


class Timers(BatchedEnv):
    """Agent i counts steps and ends its episode at ``lengths[i]``; reward 1 per step.

    Observation: [count, slot]. The last action each slot received is recorded.
    """

    def __init__(self, lengths=(3, 100), period=1, spawn_at=0, **kw):
        super().__init__(**kw)
        n = len(lengths)
        obs = obs_spec((2,))
        spec = BehaviorSpec([obs], ActionSpec.create_discrete((4,)))
        self._add_behavior("T", spec, n, capacity=n + 1, decision_period=period)
        self.lengths = np.array([*lengths, 100])
        self.count = np.zeros(n + 1, np.float32)
        self.applied = np.zeros(n + 1, np.int32)
        self.spawn_at = spawn_at
        self.t = 0
        self.resets = 0

    def _on_reset(self):
        self.t = 0
        self.resets += 1

    def _reset_agents(self, behavior, slots):
        self.count[slots] = 0

    def _step(self, actions):
        self.t += 1
        self.applied[:] = actions["T"].discrete[:, 0]
        self.count += 1
        if self.spawn_at and self.t == self.spawn_at:
            self._spawn("T", 1)
        return {"T": StepResult(np.ones(self.count.size, np.float32), self.count >= self.lengths)}

    def _observe(self, behavior, slots):
        return [np.stack([self.count[slots], slots.astype(np.float32)], axis=1)]


def test_slots_are_sorted_agent_ids_and_the_core_is_reset():
    core = Timers(lengths=(3, 5, 7), seed=0)
    slots = BehaviorSlots(core)
    slots.reset()
    assert slots.num_slots == 3 and slots.ids.tolist() == [0, 1, 2]
    assert core.resets == 1
    assert slots.obs.tolist() == [[0, 0], [0, 1], [0, 2]]


def test_terminal_reward_final_obs_and_same_step_restart():
    core = Timers(lengths=(2, 100), seed=0)
    slots = BehaviorSlots(core)
    slots.reset()
    first = slots.step(np.array([1, 1]))
    assert first.reward.tolist() == [1.0, 1.0] and not first.terminated.any()
    second = slots.step(np.array([2, 2]))
    assert second.terminated.tolist() == [True, False]
    assert second.truncated.tolist() == [False, False]
    assert second.reward.tolist() == [1.0, 1.0]  # the terminal step's reward is kept
    assert second.final_slots.tolist() == [0]
    assert second.final_obs.tolist() == [[2.0, 0.0]]  # observed before the restart
    assert slots.obs[0].tolist() == [0.0, 0.0]  # first observation of the next episode
    assert second.decided.tolist() == [True, True]


def test_interrupted_is_truncated_not_terminated():
    core = Timers(lengths=(100, 100), seed=0, max_steps=2)
    slots = BehaviorSlots(core)
    slots.reset()
    slots.step(np.zeros(2, int))
    out = slots.step(np.zeros(2, int))
    assert out.truncated.tolist() == [True, True] and not out.terminated.any()


def test_slots_without_a_decision_keep_obs_get_zero_reward_and_ignore_actions():
    # period 2; agent 0 ends at count 3 and restarts out of phase with agent 1.
    core = Timers(lengths=(3, 100), period=2, seed=0)
    slots = BehaviorSlots(core)
    slots.reset()
    a = slots.step(np.array([1, 1]))  # two core steps until both decide
    assert a.reward.tolist() == [2.0, 2.0] and a.decided.tolist() == [True, True]
    b = slots.step(np.array([2, 2]))  # agent 0 terminates; agent 1 has no decision
    assert b.terminated.tolist() == [True, False]
    assert b.reward.tolist() == [1.0, 0.0]
    assert b.decided.tolist() == [True, False]
    kept = slots.obs[1].tolist()
    assert kept == [2.0, 1.0]  # agent 1's last decision observation
    c = slots.step(np.array([3, 0]))  # agent 1's action 0 is ignored: it has no decision
    assert core.applied[1] == 2  # it repeated its last action
    assert c.decided.tolist() == [False, True]
    assert c.reward.tolist() == [0.0, 2.0]  # what agent 1 earned over two steps, summed


def test_reordered_core_rows_give_the_same_slot_data():
    def run(reorder):
        core = Timers(lengths=(2, 3, 5, 4), seed=3, reorder_agents=reorder)
        slots = BehaviorSlots(core)
        slots.reset()
        out = []
        rng = np.random.default_rng(0)
        for _ in range(12):
            step = slots.step(rng.integers(0, 4, size=4))
            out.append((step.reward.copy(), step.terminated.copy(), slots.obs.copy()))
        return out

    for (r1, t1, o1), (r2, t2, o2) in zip(run(False), run(True), strict=True):
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(t1, t2)
        np.testing.assert_array_equal(o1, o2)


def test_actions_reach_the_core_by_slot_even_when_rows_are_reordered():
    core = Timers(lengths=(100, 100, 100), seed=1, reorder_agents=True)
    slots = BehaviorSlots(core)
    slots.reset()
    slots.step(np.array([1, 2, 3]))
    assert core.applied[:3].tolist() == [1, 2, 3]


def test_an_agent_that_was_not_there_at_reset_is_an_error():
    core = Timers(lengths=(100, 100), seed=0, spawn_at=1)
    slots = BehaviorSlots(core)
    slots.reset()
    with pytest.raises(SpecError, match="not there at reset"):
        slots.step(np.zeros(2, int))


class Renumbered:
    """A BaseEnv presenting a core's agents under ids ``renumber(id)``.

    ``reverse_terminal`` lists finished agents in descending id order (as a Unity build
    may); ``stray_terminal_id`` replaces the first finished agent's id with an id that was
    never there.
    """

    def __init__(self, core, renumber, reverse_terminal=False, stray_terminal_id=None):
        self.core, self.renumber = core, renumber
        self.reverse_terminal, self.stray = reverse_terminal, stray_terminal_id

    @property
    def behavior_specs(self):
        return self.core.behavior_specs

    def reset(self):
        self.core.reset()

    def step(self):
        self.core.step()

    def set_actions(self, name, action):
        self.core.set_actions(name, action)

    def close(self):
        self.core.close()

    def get_steps(self, name):
        d, t = self.core.get_steps(name)
        ids = self.renumber(np.asarray(t.agent_id, np.int64))
        if self.stray is not None and ids.size:
            ids[0] = self.stray
        rows = np.arange(len(t))[::-1] if self.reverse_terminal else np.arange(len(t))
        decision = DecisionSteps(
            d.obs, d.reward, self.renumber(np.asarray(d.agent_id, np.int64)), d.action_mask,
            d.group_id, d.group_reward,
        )  # fmt: skip
        terminal = TerminalSteps(
            [o[rows] for o in t.obs], t.reward[rows], t.interrupted[rows], ids[rows],
            t.group_id[rows], t.group_reward[rows],
        )  # fmt: skip
        return decision, terminal


@pytest.mark.parametrize(
    "renumber, reverse",
    [
        (lambda ids: ids + 1000, False),  # consecutive, not from 0
        (lambda ids: ids - 5, True),  # consecutive, negative, finished rows descending
        (lambda ids: ids * 3 + 7, False),  # not consecutive: slots found by search
        (lambda ids: ids * 3 + 7, True),
    ],
)
def test_any_agent_ids_in_any_terminal_order_give_the_same_slot_data(renumber, reverse):
    # Agents 0, 2 and 4 finish together every other step, 1 and 3 at other times.
    lengths = (2, 3, 2, 5, 2)

    def run(core):
        slots = BehaviorSlots(core)
        slots.reset()
        rng = np.random.default_rng(0)
        return [(slots.step(rng.integers(0, 4, size=5)), slots.obs.copy()) for _ in range(9)]

    plain = run(Timers(lengths=lengths, seed=0))
    renumbered = run(Renumbered(Timers(lengths=lengths, seed=0), renumber, reverse))
    assert plain[1][0].final_slots.tolist() == [0, 2, 4]
    for (a, obs_a), (b, obs_b) in zip(plain, renumbered, strict=True):
        for field in ("reward", "terminated", "truncated", "decided", "final_slots"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
        if a.final_obs is None:
            assert b.final_obs is None
        else:
            np.testing.assert_array_equal(a.final_obs, b.final_obs)  # rows in slot order
        np.testing.assert_array_equal(obs_a, obs_b)


@pytest.mark.parametrize("stray", [999, 1005, -1])
def test_a_finished_agent_that_was_not_there_at_reset_is_an_error(stray):
    renumber = lambda ids: ids + 1000  # noqa: E731
    core = Renumbered(Timers(lengths=(1, 100), seed=0), renumber, stray_terminal_id=stray)
    slots = BehaviorSlots(core)
    slots.reset()
    with pytest.raises(SpecError, match=rf"agent ids \[{stray}\] that were not there at reset"):
        slots.step(np.zeros(2, int))


def test_refill_steps_until_the_finished_agent_decides_again():
    core = Timers(lengths=(1,), period=3, seed=0)
    slots = BehaviorSlots(core)
    slots.reset()
    out = slots.step(np.zeros(1, int))
    assert out.terminated.tolist() == [True]
    assert slots.refill() is True
    assert core.resets == 1  # no core reset


def test_unknown_or_ambiguous_behavior():
    core = Timers(seed=0)
    with pytest.raises(UnknownBehaviorError, match="no behavior 'X'"):
        BehaviorSlots(core, "X")


def test_agent_ids_are_checked_at_reset_and_not_again_while_they_stay_the_same(monkeypatch):
    """The scene's ids are proven unique integers at reset; a step with the same ids as the
    last one (the common case) is not checked again."""
    import zooport.adapters.behavior_slots as engine

    calls = []
    check = engine.check_agent_ids
    monkeypatch.setattr(engine, "check_agent_ids", lambda *a: calls.append(a) or check(*a))
    slots = BehaviorSlots(Timers(lengths=(100, 100, 100), seed=0))
    slots.reset()
    assert len(calls) == 1  # at reset
    for _ in range(5):
        slots.step(np.array([0, 0, 0]))
    assert len(calls) == 1
