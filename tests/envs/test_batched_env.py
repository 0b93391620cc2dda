"""Tests of :class:`zooport.envs.batched_env.BatchedEnv` on small environments written here.

``Echo`` pays each agent the action it applied (discrete + continuous), observes
``[episode step, last applied action]`` and ends agent ``i``'s episode after ``lengths[i]``
steps, so every reward, observation and restart below is computed by hand.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from zooport import (
    ActionError,
    EnvClosedError,
    EnvNotResetError,
    SpecError,
    UnknownAgentError,
    UnknownBehaviorError,
)
from zooport.envs.base_env import (
    ActionSpec,
    ActionTuple,
    BehaviorSpec,
)
from zooport.envs.batched_env import BatchedEnv, StepResult

from tests.support.paths import REPO, load_script
from tests.support.specs import obs_spec

NAME = "Echo"


def _spec() -> BehaviorSpec:
    obs = obs_spec((2,), "state")
    return BehaviorSpec([obs], ActionSpec.create_hybrid(1, (4,)))


class Echo(BatchedEnv):
    """Reward = the action applied this step; agent ``i``'s episode lasts ``lengths[i]``."""

    def __init__(
        self,
        n: int = 3,
        *,
        lengths=None,
        decision_period: int = 1,
        restart_finished: bool = True,
        capacity: int | None = None,
        spawn_at: dict[int, int] | None = None,
        group_id=None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self._add_behavior(
            NAME,
            _spec(),
            n,
            capacity=capacity,
            decision_period=decision_period,
            restart_finished=restart_finished,
            group_id=group_id,
        )
        self.capacity = capacity or n
        self.lengths = np.zeros(self.capacity, np.int64)
        if lengths is not None:
            self.lengths[: len(lengths)] = lengths
        self.spawn_at = dict(spawn_at or {})  # global step -> number of agents to spawn
        self.t = np.zeros(self.capacity, np.int64)
        self.last = np.zeros(self.capacity, np.float32)
        self.clock = 0
        self.reset_log: list[list[int]] = []
        self.spawned_slots: list[list[int]] = []

    def _on_reset(self):
        self.clock = 0

    def _reset_agents(self, behavior, slots):
        self.t[slots] = 0
        self.last[slots] = 0
        self.reset_log.append(slots.tolist())

    def _step(self, actions):
        action = actions[NAME]
        self.clock += 1
        self.t += 1
        applied = (action.discrete[:, 0] + action.continuous[:, 0]).astype(np.float32)
        self.last[:] = applied
        done = (self.lengths > 0) & (self.t >= self.lengths)
        if self.clock in self.spawn_at:
            self.spawned_slots.append(self._spawn(NAME, self.spawn_at[self.clock]).tolist())
        return {NAME: StepResult(applied, done, group_reward=applied * 10)}

    def _observe(self, behavior, slots):
        return [np.stack([self.t[slots], self.last[slots]], axis=1).astype(np.float32)]


def act(discrete, continuous=None) -> ActionTuple:
    discrete = np.asarray(discrete, np.int32).reshape(-1, 1)
    if continuous is None:
        continuous = np.zeros(discrete.shape, np.float32)
    return ActionTuple(continuous=np.asarray(continuous, np.float32).reshape(-1, 1),
                       discrete=discrete)  # fmt: skip


def by_id(steps) -> dict[int, tuple]:
    """{agent id: (obs..., reward[, interrupted])} of one batch, independent of row order."""
    out = {}
    for agent_id in steps:
        step = steps[agent_id]
        extra = (bool(step.interrupted),) if hasattr(step, "interrupted") else ()
        out[int(agent_id)] = (*step.obs[0].tolist(), float(step.reward), *extra)
    return out


# --------------------------------------------------------------------------- basic flow


def test_reset_step_get_steps_flow():
    env = Echo(seed=0)
    env.reset()
    decision, terminal = env.get_steps(NAME)
    assert decision.agent_id.tolist() == [0, 1, 2]
    np.testing.assert_array_equal(decision.obs[0], np.zeros((3, 2)))
    assert decision.reward.tolist() == [0.0, 0.0, 0.0]
    assert decision.obs[0].dtype == np.float32 and decision.reward.dtype == np.float32
    assert len(terminal) == 0 and terminal.obs[0].shape == (0, 2)
    env.set_actions(NAME, act([1, 2, 3], [0.5, 0.0, -0.25]))
    env.step()
    decision, terminal = env.get_steps(NAME)
    assert decision.agent_id.tolist() == [0, 1, 2]
    assert decision.reward.tolist() == [1.5, 2.0, 2.75]
    assert decision.obs[0].tolist() == [[1.0, 1.5], [1.0, 2.0], [1.0, 2.75]]
    assert decision.group_reward.tolist() == [15.0, 20.0, 27.5]
    assert len(terminal) == 0
    assert list(env.behavior_specs) == [NAME]
    assert env.behavior_specs[NAME] == _spec()


def test_group_id_is_reported():
    env = Echo(group_id=np.array([1, 1, 2]))
    env.reset()
    assert env.get_steps(NAME)[0].group_id.tolist() == [1, 1, 2]


def test_returned_arrays_are_not_internal_buffers():
    env = Echo()
    env.reset()
    env.set_actions(NAME, act([1, 1, 1]))
    env.step()
    decision, _ = env.get_steps(NAME)
    decision.reward[:] = 99
    decision.agent_id[:] = 99
    env.set_actions(NAME, act([2, 2, 2]))
    env.step()
    decision, _ = env.get_steps(NAME)
    assert decision.reward.tolist() == [2.0, 2.0, 2.0]
    assert decision.agent_id.tolist() == [0, 1, 2]


# --------------------------------------------------------------------------- decision periods


def test_rewards_between_decisions_are_summed_and_last_action_repeated():
    env = Echo(decision_period=3)
    env.reset()
    env.set_actions(NAME, act([1, 2, 3]))
    for _ in range(2):
        env.step()
        decision, terminal = env.get_steps(NAME)
        assert len(decision) == 0 and len(terminal) == 0
        assert decision.obs[0].shape == (0, 2) and decision.reward.shape == (0,)
        # An empty batch takes an empty action, which changes nothing.
        env.set_actions(NAME, act(np.zeros(0)))
    env.step()
    decision, _ = env.get_steps(NAME)
    assert decision.agent_id.tolist() == [0, 1, 2]
    # Three steps of the same action: summed reward, and the last applied action observed.
    assert decision.reward.tolist() == [3.0, 6.0, 9.0]
    assert decision.group_reward.tolist() == [30.0, 60.0, 90.0]
    assert decision.obs[0].tolist() == [[3.0, 1.0], [3.0, 2.0], [3.0, 3.0]]


def test_agent_that_decided_without_set_actions_takes_zero_action():
    env = Echo()
    env.reset()
    env.set_actions(NAME, act([1, 2, 3]))
    env.step()
    env.step()  # no set_actions: zero actions, not a repeat of [1, 2, 3]
    assert env.get_steps(NAME)[0].reward.tolist() == [0.0, 0.0, 0.0]


def test_zero_action_rule_with_decision_period():
    env = Echo(decision_period=2)
    env.reset()
    env.set_actions(NAME, act([1, 2, 3]))
    env.step()
    env.step()  # no decision in between: the action is repeated
    assert env.get_steps(NAME)[0].reward.tolist() == [2.0, 4.0, 6.0]
    env.step()  # decided, no action given: zero for both steps of the period
    env.step()
    assert env.get_steps(NAME)[0].reward.tolist() == [0.0, 0.0, 0.0]


def test_set_action_for_agent_leaves_the_others_at_zero():
    env = Echo()
    env.reset()
    env.set_action_for_agent(NAME, 1, act([3], [0.5]))
    env.step()
    assert env.get_steps(NAME)[0].reward.tolist() == [0.0, 3.5, 0.0]
    env.set_actions(NAME, act([1, 1, 1]))
    env.set_action_for_agent(NAME, np.int32(2), act([3]))
    env.step()
    assert env.get_steps(NAME)[0].reward.tolist() == [1.0, 1.0, 3.0]


def test_set_action_for_unknown_agent():
    env = Echo(decision_period=2)
    env.reset()
    with pytest.raises(UnknownAgentError, match=r"agent 7.*\[0, 1, 2\]"):
        env.set_action_for_agent(NAME, 7, act([1]))
    env.step()  # nobody decides now
    with pytest.raises(UnknownAgentError, match=r"agent 0.*\[\]"):
        env.set_action_for_agent(NAME, 0, act([1]))


# --------------------------------------------------------------------------- episode ends


def test_max_steps_interrupts_and_restarts():
    env = Echo(lengths=[0, 4, 0], max_steps=4)
    env.reset()
    for _ in range(4):
        env.set_actions(NAME, act([1, 2, 3]))
        env.step()
    decision, terminal = env.get_steps(NAME)
    # Agent 1 reached its own end at the time limit: terminated, not interrupted.
    assert by_id(terminal) == {
        0: (4.0, 1.0, 1.0, True),
        1: (4.0, 2.0, 2.0, False),
        2: (4.0, 3.0, 3.0, True),
    }
    assert terminal.interrupted.dtype == bool
    # Restarted in the same step under the same ids, with a fresh first observation.
    assert by_id(decision) == {0: (0.0, 0.0, 0.0), 1: (0.0, 0.0, 0.0), 2: (0.0, 0.0, 0.0)}
    assert env.reset_log[-1] == [0, 1, 2]


def test_restart_in_the_same_step_keeps_the_terminal_reward():
    env = Echo(lengths=[2, 0, 0])
    env.reset()
    for k in (1, 2):
        env.set_actions(NAME, act([k, k, k]))
        env.step()
    decision, terminal = env.get_steps(NAME)
    assert by_id(terminal) == {0: (2.0, 2.0, 2.0, False)}
    assert by_id(decision) == {0: (0.0, 0.0, 0.0), 1: (2.0, 2.0, 2.0), 2: (2.0, 2.0, 2.0)}
    assert decision.group_reward.tolist() == [0.0, 20.0, 20.0]
    assert terminal.group_reward.tolist() == [20.0]


def test_episode_end_between_decisions_sums_the_terminal_reward():
    env = Echo(lengths=[2, 0, 0], decision_period=3)
    env.reset()
    env.set_actions(NAME, act([1, 2, 3]))
    env.step()
    assert len(env.get_steps(NAME)[0]) == 0
    env.step()
    decision, terminal = env.get_steps(NAME)
    assert by_id(terminal) == {0: (2.0, 1.0, 2.0, False)}
    # Only the restarted agent decides now; the others keep their period.
    assert by_id(decision) == {0: (0.0, 0.0, 0.0)}
    env.set_actions(NAME, act([3]))
    env.step()
    decision, terminal = env.get_steps(NAME)
    assert len(terminal) == 0
    assert by_id(decision) == {1: (3.0, 2.0, 6.0), 2: (3.0, 3.0, 9.0)}
    env.step()
    # Agent 0's second episode ends at step 4, having played its action 3 twice.
    decision, terminal = env.get_steps(NAME)
    assert by_id(terminal) == {0: (2.0, 3.0, 6.0, False)}
    assert by_id(decision) == {0: (0.0, 0.0, 0.0)}


def test_finished_agents_stay_out_without_restart():
    env = Echo(lengths=[2, 0, 0], restart_finished=False)
    env.reset()
    env.step()
    env.step()
    decision, terminal = env.get_steps(NAME)
    assert terminal.agent_id.tolist() == [0]
    assert decision.agent_id.tolist() == [1, 2]
    assert env.active_slots(NAME).tolist() == [False, True, True]
    for _ in range(3):
        env.set_actions(NAME, act([1, 1]))
        env.step()
        decision, terminal = env.get_steps(NAME)
        assert decision.agent_id.tolist() == [1, 2] and len(terminal) == 0
    env.reset()
    assert env.get_steps(NAME)[0].agent_id.tolist() == [0, 1, 2]


# --------------------------------------------------------------------------- spawning


def test_spawn_gives_fresh_ids_and_an_immediate_decision():
    env = Echo(n=2, capacity=4, spawn_at={2: 1, 3: 5})
    env.reset()
    env.set_actions(NAME, act([1, 1]))
    env.step()
    env.set_actions(NAME, act([2, 2]))
    env.step()  # one agent spawns in slot 2
    decision, _ = env.get_steps(NAME)
    assert env.spawned_slots == [[2]]
    # The newcomer has id 2 and its first observation; it was not stepped this time.
    assert by_id(decision) == {0: (2.0, 2.0, 2.0), 1: (2.0, 2.0, 2.0), 2: (0.0, 0.0, 0.0)}
    env.set_actions(NAME, act([1, 1, 3]))
    env.step()  # asks for 5, only slot 3 is free
    assert env.spawned_slots[-1] == [3]
    decision, _ = env.get_steps(NAME)
    assert by_id(decision) == {
        0: (3.0, 1.0, 1.0), 1: (3.0, 1.0, 1.0), 2: (1.0, 3.0, 3.0), 3: (0.0, 0.0, 0.0),
    }  # fmt: skip
    env.reset()
    assert env.get_steps(NAME)[0].agent_id.tolist() == [0, 1]
    assert env.active_slots(NAME).tolist() == [True, True, False, False]


def test_spawn_into_a_freed_slot_never_reuses_an_id():
    env = Echo(n=2, lengths=[1, 0], restart_finished=False, spawn_at={2: 1})
    env.reset()
    env.step()
    assert env.get_steps(NAME)[1].agent_id.tolist() == [0]
    env.step()
    assert env.spawned_slots == [[0]]
    decision, _ = env.get_steps(NAME)
    assert sorted(decision.agent_id.tolist()) == [1, 2]


# --------------------------------------------------------------------------- row order


def _run_by_id(reorder: bool) -> tuple[list, bool]:
    env = Echo(n=5, lengths=[3, 0, 5, 2, 0], decision_period=2, max_steps=7, seed=11,
               reorder_agents=reorder)  # fmt: skip
    env.reset()
    record, permuted = [], False
    for step in range(20):
        decision, terminal = env.get_steps(NAME)
        record.append((by_id(decision), by_id(terminal)))
        ids = decision.agent_id
        permuted |= ids.tolist() != sorted(ids.tolist())
        # The action depends on the id only, never on the row.
        env.set_actions(NAME, act((ids * 7 + step) % 4, ids / 10))
        env.step()
    return record, permuted


def test_reorder_agents_permutes_rows_but_not_data():
    ordered, permuted = _run_by_id(False)
    assert not permuted
    shuffled, permuted = _run_by_id(True)
    assert permuted
    assert shuffled == ordered


# --------------------------------------------------------------------------- errors


def test_unknown_behavior_lists_the_behaviors():
    env = Echo()
    env.reset()
    for call in (
        lambda: env.get_steps("Ecko"),
        lambda: env.set_actions("Ecko", act([0, 0, 0])),
        lambda: env.set_action_for_agent("Ecko", 0, act([0])),
        lambda: env.get_steps(["Echo"]),
        lambda: env.active_slots("Ecko"),
    ):
        with pytest.raises(UnknownBehaviorError, match=r"behaviors: \['Echo'\]"):
            call()


def test_use_before_reset():
    env = Echo()
    assert list(env.behavior_specs) == [NAME]  # allowed before reset, as in Unity
    for call in (
        lambda: env.get_steps(NAME),
        env.step,
        lambda: env.set_actions(NAME, act([0, 0, 0])),
        lambda: env.set_action_for_agent(NAME, 0, act([0])),
    ):
        with pytest.raises(EnvNotResetError, match="reset"):
            call()


def test_every_call_after_close():
    env = Echo()
    env.reset()
    env.close()
    assert env.closed
    for call in (
        env.reset,
        env.step,
        lambda: env.get_steps(NAME),
        lambda: env.set_actions(NAME, act([0, 0, 0])),
        lambda: env.set_action_for_agent(NAME, 0, act([0])),
        lambda: env.behavior_specs,
        env.render,
    ):
        with pytest.raises(EnvClosedError, match="close"):
            call()
    env.close()  # closing twice is harmless


def test_step_result_of_the_wrong_shape_is_reported():
    class Short(Echo):
        def _step(self, actions):
            return {NAME: StepResult(np.zeros(2, np.float32), np.zeros(2, bool))}

    env = Short()
    env.reset()
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        env.step()


# --------------------------------------------------------------------------- seeding


class Scatter(Echo):
    """Echo whose agents restart at a random episode clock drawn from ``np_random``."""

    def _reset_agents(self, behavior, slots):
        super()._reset_agents(behavior, slots)
        self.t[slots] = self.np_random.integers(0, 100, slots.size)


def _trace(env: Scatter, seed: int | None, steps: int = 12) -> list[list[float]]:
    env.reset(seed=seed)
    trace = []
    for _ in range(steps):
        decision, terminal = env.get_steps(NAME)
        trace.append(decision.obs[0].ravel().tolist() + terminal.obs[0].ravel().tolist())
        env.set_actions(NAME, act(decision.agent_id % 4))
        env.step()
    return trace


def test_reset_seed_is_reproducible():
    env = Scatter(n=4, lengths=[2, 3, 4, 5])
    first = _trace(env, seed=5)
    assert _trace(env, seed=5) == first
    assert _trace(Scatter(n=4, lengths=[2, 3, 4, 5]), seed=5) == first
    assert _trace(env, seed=6) != first
    # A seed given to the constructor seeds the first reset the same way.
    assert _trace(Scatter(n=4, lengths=[2, 3, 4, 5], seed=5), seed=None) == first


# --------------------------------------------------------------------------- two behaviours


class Duo(BatchedEnv):
    """Behaviour A (2 agents, discrete, every step) and B (2 agents, continuous, every 2)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        obs = obs_spec((1,), "x")
        self._add_behavior("A", BehaviorSpec([obs], ActionSpec.create_discrete((5,))), 2)
        self._add_behavior(
            "B", BehaviorSpec([obs], ActionSpec.create_continuous(1)), 2, decision_period=2
        )

    def _reset_agents(self, behavior, slots):
        pass

    def _step(self, actions):
        a = actions["A"].discrete[:, 0].astype(np.float32)
        b = actions["B"].continuous[:, 0]
        never = np.zeros(2, bool)
        return {"A": StepResult(a, never), "B": StepResult(b, never)}

    def _observe(self, behavior, slots):
        return [np.full((slots.size, 1), len(behavior), np.float32)]


def test_behaviors_share_one_id_space_and_act_independently():
    env = Duo()
    env.reset()
    assert env.get_steps("A")[0].agent_id.tolist() == [0, 1]
    assert env.get_steps("B")[0].agent_id.tolist() == [2, 3]
    env.set_actions("A", ActionTuple(discrete=[[4], [1]]))
    env.set_actions("B", ActionTuple(continuous=[[0.5], [-0.5]]))
    env.step()
    assert env.get_steps("A")[0].reward.tolist() == [4.0, 1.0]
    assert len(env.get_steps("B")[0]) == 0
    with pytest.raises(ActionError, match="no continuous actions") as info:
        env.set_actions("A", ActionTuple(continuous=[[0.5], [0.5]]))
    assert "'A'" in str(info.value)
    env.step()  # A decided without an action: zero; B repeats its action
    assert env.get_steps("A")[0].reward.tolist() == [0.0, 0.0]
    assert env.get_steps("B")[0].reward.tolist() == [1.0, -1.0]


def test_missing_step_result_names_the_behavior():
    class Forgetful(Duo):
        def _step(self, actions):
            return {"A": StepResult(np.zeros(2, np.float32), np.zeros(2, bool))}

    env = Forgetful()
    env.reset()
    with pytest.raises(SpecError, match="'B'"):
        env.step()


class Bare(BatchedEnv):
    """One behaviour and no hooks; the test below adds all but one."""

    def __init__(self) -> None:
        super().__init__()
        self._add_behavior("B", _spec(), 2)


HOOKS = {
    "_reset_agents": lambda self, behavior, slots: None,
    "_observe": lambda self, behavior, slots: [np.zeros((slots.size, 2), np.float32)],
    "_step": lambda self, actions: {},
}


@pytest.mark.parametrize(
    "missing",
    [
        "_reset_agents(self, behavior, slots)",
        "_observe(self, behavior, slots)",
        "_step(self, actions)",
    ],
)
def test_a_missing_hook_is_named_with_the_class(missing):
    name = missing.partition("(")[0]
    lacking = type("Lacking", (Bare,), {k: v for k, v in HOOKS.items() if k != name})
    env = lacking()
    with pytest.raises(NotImplementedError) as raised:
        env.reset()
        env.step()
    assert str(raised.value) == f"Lacking must define {missing}, a hook of BatchedEnv"


def test_the_authoring_hooks_have_docstrings():
    for hook in ("_add_behavior", "_spawn", "_reset_agents", "_step", "_observe"):
        doc = getattr(BatchedEnv, hook).__doc__
        assert doc and len(doc.split()) >= 8, hook
    assert "?team=" in BatchedEnv._add_behavior.__doc__


def test_the_api_reference_page_shows_the_authoring_hooks():
    pytest.importorskip("mkdocs")
    reference = load_script(REPO / "docs" / "_hooks" / "reference.py", "zooport_docs_reference")
    page = reference.page_text("zooport.envs.batched_env", REPO / "envs" / "batched_env.py")
    filters = reference.MEMBER_FILTERS["zooport.envs.batched_env"]
    assert f"filters: {filters}" in page

    def shown(name: str) -> bool:  # mkdocstrings' rule: the last filter that matches decides
        verdicts = [not f.startswith("!") for f in filters if re.search(f.lstrip("!"), name)]
        return verdicts[-1] if verdicts else True

    for hook in ("_add_behavior", "_spawn", "_reset_agents", "_step", "_observe", "_on_reset"):
        assert shown(hook), hook
    assert not shown("_step_unguarded") and not shown("_publish")


# ---------------------------------------------------------------------------------------
# Several behaviours: no behaviour sees another half-updated, whatever the declaration order.


class Watchers(BatchedEnv):
    """Behaviour "A" ends at step 2 and restarts at position 100; "B" observes A's position.

    ``a_first`` sets the declaration order; the observations must not depend on it.
    """

    def __init__(self, a_first=True, **kw):
        super().__init__(**kw)
        spec = BehaviorSpec(
            [obs_spec((1,), "x")],
            ActionSpec.create_discrete((2,)),
        )
        order = ("A", "B") if a_first else ("B", "A")
        for name in order:
            self._add_behavior(name, spec, 1)
        self.pos = np.zeros(1, np.float32)
        self.t = 0
        self.seen_at_reset: dict[str, list[bool]] = {}

    def _reset_agents(self, behavior, slots):
        # What every behaviour's slots look like while one behaviour is being placed.
        self.seen_at_reset[behavior] = [bool(self._behaviors[n].active.any()) for n in ("A", "B")]
        if behavior == "A":
            self.pos[:] = 100.0 if self.t else 0.0

    def _on_reset(self):
        self.t = 0

    def _step(self, actions):
        self.t += 1
        self.pos += 1
        done = np.array([self.t == 2])
        zero = np.zeros(1, np.float32)
        return {"A": StepResult(zero, done), "B": StepResult(zero, np.zeros(1, bool))}

    def _observe(self, behavior, slots):
        return [np.full((slots.size, 1), self.pos[0], np.float32)]


@pytest.mark.parametrize("a_first", [True, False])
def test_other_behaviours_observe_after_every_restart(a_first):
    env = Watchers(a_first=a_first)
    env.reset()
    env.step()
    env.step()  # A ends at pos 2 and restarts at 100
    decision_a, terminal_a = env.get_steps("A")
    decision_b, _ = env.get_steps("B")
    assert terminal_a.obs[0].tolist() == [[2.0]]  # observed before the restart
    assert decision_a.obs[0].tolist() == [[100.0]]
    assert decision_b.obs[0].tolist() == [[100.0]]  # B sees A's restart, in either order


@pytest.mark.parametrize("a_first", [True, False])
def test_reset_sets_every_behaviours_slots_before_placing_any(a_first):
    env = Watchers(a_first=a_first)
    env.reset()
    assert env.seen_at_reset == {"A": [True, True], "B": [True, True]}


class Cutter(BatchedEnv):
    """One agent; the author interrupts it at step 2 and terminates it at step 4."""

    def __init__(self, **kw):
        super().__init__(**kw)
        spec = BehaviorSpec(
            [obs_spec((1,), "t")],
            ActionSpec.create_discrete((2,)),
        )
        self._add_behavior("C", spec, 1)
        self.t = 0

    def _reset_agents(self, behavior, slots):
        pass

    def _step(self, actions):
        self.t += 1
        return {
            "C": StepResult(
                np.ones(1, np.float32),
                terminated=np.array([self.t == 4]),
                interrupted=np.array([self.t in (2, 4)]),
            )
        }

    def _observe(self, behavior, slots):
        return [np.full((slots.size, 1), self.t, np.float32)]


def test_author_interruption_is_truncation_and_termination_wins():
    env = Cutter()
    env.reset()
    flags = []
    for _ in range(4):
        env.step()
        _, terminal = env.get_steps("C")
        flags.append(terminal.interrupted.tolist())
    assert flags == [[], [True], [], [False]]


# ---------------------------------------------------------------------------------------
# The step has fast paths for the common case (every slot live, every agent deciding);
# they must give exactly what the general, masked paths give.


def _record(env: Echo, steps: int = 14) -> list:
    """Every batch's full data (rows in slot order), for actions that depend on the id only."""
    env.reset()
    record = []
    for step in range(steps):
        decision, terminal = env.get_steps(NAME)
        record.append([
            (s.agent_id.tolist(), s.obs[0].tolist(), s.reward.tolist(), s.group_id.tolist(),
             s.group_reward.tolist(), getattr(s, "interrupted", np.zeros(0)).tolist())
            for s in (decision, terminal)
        ])  # fmt: skip
        ids = decision.agent_id
        env.set_actions(NAME, act((ids * 3 + step) % 4, ids / 4))
        env.step()
    return record


@pytest.mark.parametrize("restart_finished", [True, False])
@pytest.mark.parametrize("max_steps", [0, 5])
def test_an_empty_slot_changes_no_data(restart_finished, max_steps):
    # A fourth, never-used slot sends every step down the masked paths.
    kwargs = dict(lengths=[3, 0, 4], restart_finished=restart_finished, max_steps=max_steps,
                  group_id=np.array([1, 2, 3, 4]))  # fmt: skip
    full = _record(Echo(n=3, **{**kwargs, "group_id": kwargs["group_id"][:3]}))
    assert _record(Echo(n=3, capacity=4, **kwargs)) == full
    assert any(len(terminal[0]) for _, terminal in full)  # episodes did end


class Claimer(Echo):
    """Echo whose newly spawned slots claim a reward, an end and an interruption at once.

    The group reward arrives as ``kind`` (float32, float64 or a list).
    """

    def __init__(self, kind="float32", **kwargs):
        super().__init__(**kwargs)
        self.kind = kind

    def _step(self, actions):
        result = super()._step(actions)[NAME]
        new = self.spawned_slots[-1] if self.clock in self.spawn_at else []
        reward, terminated = result.reward.copy(), result.terminated.copy()
        group, interrupted = result.group_reward.astype(np.float64), np.zeros(self.capacity, bool)
        reward[new], group[new], terminated[new], interrupted[new] = 100, 100, True, True
        group = {"float32": group.astype(np.float32), "float64": group, "list": group.tolist()}
        return {NAME: StepResult(reward, terminated, group[self.kind], interrupted)}


@pytest.mark.parametrize("kind", ["float32", "float64", "list"])
def test_spawned_agent_ignores_what_its_spawn_step_reports(kind):
    env = Claimer(kind, n=2, capacity=3, spawn_at={1: 1})
    env.reset()
    env.set_actions(NAME, act([1, 2], [0.5, 0.25]))
    env.step()
    decision, terminal = env.get_steps(NAME)
    assert len(terminal) == 0
    assert by_id(decision) == {0: (1.0, 1.5, 1.5), 1: (1.0, 2.25, 2.25), 2: (0.0, 0.0, 0.0)}
    assert decision.group_reward.dtype == np.float32
    assert decision.group_reward.tolist() == [15.0, 22.5, 0.0]


def test_spawned_agent_counts_max_steps_from_its_spawn():
    env = Echo(n=2, capacity=3, spawn_at={1: 1}, max_steps=3)
    env.reset()
    ended = []
    for _ in range(4):
        env.step()
        ended.append(env.get_steps(NAME)[1].agent_id.tolist())
    assert ended == [[], [], [0, 1], [2]]


class LateSpawner(Echo):
    """Echo that spawns one agent from ``_reset_agents`` when slot 0 restarts (once)."""

    def _reset_agents(self, behavior, slots):
        super()._reset_agents(behavior, slots)
        if 0 in slots.tolist() and self.clock and not self.spawned_slots:
            self.spawned_slots.append(self._spawn(NAME, 1).tolist())


def test_agent_spawned_outside_step_decides_after_its_first_step():
    # _spawn belongs in _step; from another hook it still works, as it always did: the
    # newcomer is placed at once and first decides after the next step.
    env = LateSpawner(n=2, capacity=3, lengths=[1, 0])
    env.reset()
    env.set_actions(NAME, act([1, 2]))
    env.step()
    decision, terminal = env.get_steps(NAME)
    assert env.spawned_slots == [[2]] and env.reset_log[-2:] == [[0], [2]]
    assert terminal.agent_id.tolist() == [0]
    assert by_id(decision) == {0: (0.0, 0.0, 0.0), 1: (1.0, 2.0, 2.0)}
    env.set_actions(NAME, act([3, 3]))
    env.step()
    decision, _ = env.get_steps(NAME)
    # The newcomer (id 2) was stepped once, with a zero action, before deciding.
    assert by_id(decision) == {0: (0.0, 0.0, 0.0), 1: (2.0, 3.0, 3.0), 2: (1.0, 0.0, 0.0)}
