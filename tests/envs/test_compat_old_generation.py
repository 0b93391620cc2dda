"""Older-generation ML-Agents BaseEnvs through ``zooport.envs.compat`` and the adapters.

The old API generations, and ``OldWalkers``, a small deterministic numpy env written in
them, are in ``tests/support/old_api.py``; each adapter test drives one instance by hand
through the old API and a twin through the adapter and compares the data.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any, NamedTuple

import numpy as np
import pytest

from zooport.envs.base_env import (
    ActionSpec,
    ActionTuple,
    BaseEnv,
    DimensionProperty,
    ObservationSpec,
    ObservationType,
)
from zooport.envs.compat import LegacyApiWarning, LegacyBaseEnv, as_base_env, is_legacy_env
from zooport.errors import ActionError, SpecError, UnknownAgentError, UnknownBehaviorError

from tests.support.old_api import (
    BEHAVIOR,
    BRANCHES,
    SHAPES,
    ActionType,
    OldActionTuple,
    OldBehaviorSpec,
    OldTerminalSteps,
    OldTerminalStepsMaxStep,
    OldWalkers,
    OldWalkers016,
    by_id,
    hand_action,
)

# ----------------------------------------------------------------------------- as_base_env


class _CurrentStyle:
    """A duck-typed env with the current API (not a zooport BaseEnv)."""

    behavior_specs = {
        "B": type("Spec", (), {"observation_specs": [], "action_spec": ActionSpec(1, ())})()
    }

    def get_steps(self, name): ...
    def set_actions(self, name, action): ...
    def step(self): ...
    def reset(self): ...
    def close(self): ...


def test_current_generation_objects_are_returned_unchanged():
    legacy = as_base_env(OldWalkers())
    assert as_base_env(legacy) is legacy
    current = _CurrentStyle()
    assert not is_legacy_env(current)
    assert as_base_env(current) is current


def test_non_envs_and_the_pre_016_api_are_refused():
    with pytest.raises(TypeError, match=r"lacks \['behavior_specs'"):
        as_base_env(object())

    class Pre016:
        def get_step_result(self, group): ...

    with pytest.raises(TypeError, match="get_step_result"):
        as_base_env(Pre016())


@pytest.mark.parametrize("kind", ["discrete", "continuous"])
def test_specs_are_mapped_with_generated_names(kind):
    env = as_base_env(OldWalkers(kind))
    assert isinstance(env, LegacyBaseEnv) and isinstance(env, BaseEnv)
    spec = env.behavior_specs[BEHAVIOR]
    assert spec.observation_specs == [
        ObservationSpec((3,), (DimensionProperty.UNSPECIFIED,), ObservationType.DEFAULT, "obs_0"),
        ObservationSpec((2,), (DimensionProperty.UNSPECIFIED,), ObservationType.DEFAULT, "obs_1"),
    ]
    expected = (
        ActionSpec.create_discrete(BRANCHES)
        if kind == "discrete"
        else ActionSpec.create_continuous(2)
    )
    assert spec.action_spec == expected
    assert env.behavior_specs is env.behavior_specs  # converted once, not on every access
    assert any("obs_0..obs_1" in note for note in env.unmapped)
    assert any("group_id" in note for note in env.unmapped)
    # One line per invented field, in the order of the conversion table.
    assert [note.split(": ", 1)[1] for note in env.unmapped] == [
        "dimension properties (UNSPECIFIED)",
        "observation types (DEFAULT)",
        "observation names (generated obs_0..obs_1)",
        "group_id and group_reward (zeros where the steps have none)",
    ]


def test_mlagents_016_behavior_getters():
    old = OldWalkers016(kind="continuous")
    assert is_legacy_env(old)
    env = as_base_env(old)
    assert list(env.behavior_specs) == [BEHAVIOR]
    assert env.behavior_specs[BEHAVIOR].action_spec == ActionSpec.create_continuous(2)
    env.reset()
    env.set_actions(BEHAVIOR, ActionTuple(continuous=np.full((3, 2), 0.5)))
    np.testing.assert_array_equal(old.inner.received[0], np.full((3, 2), 0.5, np.float32))
    env.step()
    assert env.get_steps(BEHAVIOR)[0].obs[0][:, 0].tolist() == [0.375] * 3


def test_warn_lists_what_could_not_be_mapped():
    with pytest.warns(LegacyApiWarning, match="obs_0..obs_1"):
        as_base_env(OldWalkers(), warn=True)


def test_unknown_action_type_and_bad_action_shape_are_spec_errors():
    env = OldWalkers()
    env.spec = OldBehaviorSpec(SHAPES, "HYBRID", 2)
    with pytest.raises(SpecError, match="action_type 'HYBRID'"):
        as_base_env(env)
    env.spec = OldBehaviorSpec(SHAPES, ActionType.DISCRETE, 3)
    with pytest.raises(SpecError, match="tuple of branch sizes, got 3"):
        as_base_env(env)


def test_steps_gain_groups_and_keep_masks():
    old = OldWalkers("discrete")
    env = as_base_env(old)
    env.reset()
    decision, terminal = env.get_steps(BEHAVIOR)
    raw_decision, _ = old.get_steps(BEHAVIOR)
    assert decision.agent_id.tolist() == [12, 11, 10]
    for ours, theirs in zip(decision.obs, raw_decision.obs, strict=True):
        np.testing.assert_array_equal(ours, theirs)
    assert decision.group_id.dtype == np.int32 and decision.group_id.tolist() == [0, 0, 0]
    assert decision.group_reward.dtype == np.float32 and decision.group_reward.tolist() == [0] * 3
    assert [m.shape for m in decision.action_mask] == [(3, 3), (3, 2)]
    assert len(terminal) == 0 and terminal.interrupted.dtype == bool
    assert decision[11].obs[0].tolist() == [0.0, 0.0, 11.0]  # zooport's per-agent access
    assert env.get_steps(BEHAVIOR)[0] is decision  # converted once per batch


def test_concatenated_mask_matrix_is_split_per_branch():
    old = OldWalkers("discrete")
    env = as_base_env(old)
    env.reset()
    d = old.steps[0]
    d.action_mask = np.array([[0, 0, 1, 0, 1]] * 3, dtype=bool)
    decision, _ = env.get_steps(BEHAVIOR)
    assert [m.tolist()[0] for m in decision.action_mask] == [[False, False, True], [False, True]]


@pytest.mark.parametrize("terminal_type", [OldTerminalStepsMaxStep, OldTerminalSteps])
def test_terminal_max_step_or_interrupted_becomes_interrupted(terminal_type):
    old = OldWalkers("discrete", terminal=terminal_type, limit=2)
    env = as_base_env(old)
    env.reset()
    # Agent 12 (row 0) walks right twice with boost: pos 4 -> terminated at t=2;
    # the others stand still and hit the limit at t=2: interrupted.
    action = np.array([[2, 1], [1, 0], [1, 0]])
    env.set_actions(BEHAVIOR, ActionTuple(discrete=action))
    env.step()
    assert len(env.get_steps(BEHAVIOR)[1]) == 0
    env.set_actions(BEHAVIOR, ActionTuple(discrete=action))
    env.step()
    decision, terminal = env.get_steps(BEHAVIOR)
    interrupted = dict(zip(terminal.agent_id.tolist(), terminal.interrupted.tolist(), strict=True))
    assert interrupted == {10: True, 11: True, 12: False}
    assert terminal.reward[terminal.agent_id_to_index[12]] == pytest.approx(
        0.4 - 0.02
    )  # pos 4, row 2
    assert sorted(decision.agent_id.tolist()) == [10, 11, 12]  # restarted in the same step
    assert decision.reward.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("kind", ["discrete", "continuous"])
def test_action_tuples_reach_the_old_env_as_its_ndarray(kind):
    old = OldWalkers(kind)
    env = as_base_env(old)
    env.reset()
    if kind == "discrete":
        action = ActionTuple(discrete=np.array([[0, 1], [2, 0], [1, 1]], dtype=np.int64))
        sent, dtype = action.discrete, np.int32
    else:
        action = ActionTuple(continuous=np.array([[0.5, -1], [0, 0.25], [1, 1]]))
        sent, dtype = action.continuous, np.float32
    env.set_actions(BEHAVIOR, action)
    (received,) = old.received
    assert isinstance(received, np.ndarray) and received.dtype == dtype
    np.testing.assert_array_equal(received, sent)
    assert received is not sent  # a fresh array: the old env may keep a reference


def test_ndarray_dtype_follows_the_old_envs_create_empty_action():
    class Float64Spec(OldBehaviorSpec):
        def create_empty_action(self, n_agents):
            return np.zeros((n_agents, 2), np.float64)

    old = OldWalkers("continuous")
    old.spec = Float64Spec(SHAPES, ActionType.CONTINUOUS, 2)
    env = as_base_env(old)
    env.reset()
    env.set_actions(BEHAVIOR, ActionTuple(continuous=np.zeros((3, 2))))
    assert old.received[0].dtype == np.float64


def test_bad_actions_raise_zooport_errors_before_reaching_the_old_env():
    old = OldWalkers("discrete")
    env = as_base_env(old)
    env.reset()
    with pytest.raises(ActionError, match=r"branch 0 takes values in \[0, 2\], got 3"):
        env.set_actions(BEHAVIOR, ActionTuple(discrete=np.array([[3, 0], [0, 0], [0, 0]])))
    with pytest.raises(ActionError, match=r"shape \(3, 2\)"):
        env.set_actions(BEHAVIOR, ActionTuple(discrete=np.zeros((2, 2), int)))
    with pytest.raises(ActionError, match="no continuous actions"):
        env.set_actions(BEHAVIOR, ActionTuple(continuous=np.zeros((3, 2))))
    assert old.received == []
    with pytest.raises(UnknownBehaviorError, match="no behavior 'Nope'"):
        env.get_steps("Nope")


def test_set_action_for_agent_is_built_on_the_pending_batch():
    old = OldWalkers("discrete")
    env = as_base_env(old)
    env.reset()  # rows are agents 12, 11, 10
    env.set_action_for_agent(BEHAVIOR, 11, ActionTuple(discrete=np.array([[2, 1]])))
    np.testing.assert_array_equal(old.received[-1], [[0, 0], [2, 1], [0, 0]])
    env.set_actions(BEHAVIOR, ActionTuple(discrete=np.ones((3, 2), int)))
    env.set_action_for_agent(BEHAVIOR, 10, ActionTuple(discrete=np.array([[0, 0]])))
    np.testing.assert_array_equal(old.received[-1], [[1, 1], [1, 1], [0, 0]])
    with pytest.raises(UnknownAgentError, match="agent 99 did not request a decision"):
        env.set_action_for_agent(BEHAVIOR, 99, ActionTuple(discrete=np.array([[0, 0]])))
    # An unhashable id is an unknown agent too (it used to leak a TypeError), as in BatchedEnv.
    with pytest.raises(UnknownAgentError, match=r"agent \[11\] did not request"):
        env.set_action_for_agent(BEHAVIOR, [11], ActionTuple(discrete=np.array([[0, 0]])))
    env.step()  # the pending batch is per step
    env.set_action_for_agent(BEHAVIOR, 12, ActionTuple(discrete=np.array([[1, 1]])))
    np.testing.assert_array_equal(old.received[-1], [[1, 1], [0, 0], [0, 0]])


@pytest.mark.parametrize("style", ["action_spec_ndarray", "action_tuple"])
@pytest.mark.parametrize("kind", ["discrete", "continuous"])
def test_mlagents_022_and_023_action_specs(style, kind):
    old = OldWalkers(kind, spec_style=style, terminal=OldTerminalSteps)
    env = as_base_env(old)
    spec = env.behavior_specs[BEHAVIOR]
    assert spec.action_spec == (
        ActionSpec(0, BRANCHES) if kind == "discrete" else ActionSpec(2, ())
    )
    env.reset()
    action = spec.action_spec.random_action(3, np.random.default_rng(0))
    env.set_actions(BEHAVIOR, action)
    (received,) = old.received
    expected = action.discrete if kind == "discrete" else action.continuous
    if style == "action_tuple":
        assert isinstance(received, OldActionTuple)
        assert received.continuous.shape == (3, 2 if kind == "continuous" else 0)
        received = received.discrete if kind == "discrete" else received.continuous
    np.testing.assert_array_equal(received, expected)


def test_mlagents_024_observation_specs_without_groups():
    # observation_specs with DecisionSteps without group_id (0.24): a module like its base_env.
    module = types.ModuleType("fake_mlagents_024_base_env")

    class DecisionSteps:  # noqa: B903 - the old signature is the point
        def __init__(self, obs, reward, agent_id, action_mask):
            pass

    class BehaviorSpec(NamedTuple):
        observation_specs: list
        action_spec: Any

    for cls in (DecisionSteps, BehaviorSpec):
        cls.__module__ = module.__name__
        setattr(module, cls.__name__, cls)
    sys.modules[module.__name__] = module
    try:
        old = OldWalkers("continuous", terminal=OldTerminalSteps, spec_style="action_tuple")
        named = ObservationSpec((3,), (DimensionProperty.NONE,), ObservationType.GOAL_SIGNAL, "x")
        old.spec = BehaviorSpec([named, named._replace(shape=(2,), name="y")], old.spec.action_spec)
        assert is_legacy_env(old)
        env = as_base_env(old)
        assert [s.name for s in env.behavior_specs[BEHAVIOR].observation_specs] == ["x", "y"]
        assert env.behavior_specs[BEHAVIOR].observation_specs[0].observation_type is (
            ObservationType.GOAL_SIGNAL
        )
        assert env.unmapped == (f"{BEHAVIOR}: group_id and group_reward (zeros where the steps "
                                "have none)",)  # fmt: skip
        env.reset()
        assert env.get_steps(BEHAVIOR)[0].group_id.tolist() == [0, 0, 0]
    finally:
        del sys.modules[module.__name__]


def test_close_seed_and_side_channels_are_forwarded():
    old = OldWalkers()
    old.side_channels = ["channel"]
    env = as_base_env(old)
    assert env.side_channels == ["channel"] and not env.seedable
    env.close()
    env.close()
    assert old.closed_calls == 1 and env.closed

    class Seedable(OldWalkers):
        seedable = True

        def reset(self, seed=None):
            self.seed = seed
            super().reset()

    old = Seedable()
    env = as_base_env(old)
    assert env.seedable is True
    env.reset(seed=5)
    assert old.seed == 5


# ----------------------------------------------------------------------------- adapters


def _adapter(module: str, name: str):
    try:
        return getattr(importlib.import_module(f"zooport.adapters.{module}"), name)
    except (ImportError, AttributeError) as error:
        pytest.skip(f"zooport.adapters.{module}.{name} is not importable yet: {error}")


ROUTES = ["automatic", "explicit"]  # the adapter adopts the old env / the user calls as_base_env


def _core(old: OldWalkers, route: str) -> Any:
    return old if route == "automatic" else as_base_env(old)


def _concat(obs: list[np.ndarray], rows) -> np.ndarray:
    """The adapters' layout of the old env's two vector observations: concatenated."""
    return np.concatenate([o[rows] for o in obs], axis=np.ndim(rows))


def _allowed(mask: list[np.ndarray], rows) -> np.ndarray:
    return (~np.concatenate([m[rows] for m in mask], axis=np.ndim(rows))).astype(np.int8)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("kind", ["discrete", "continuous"])
def test_gym_env_equals_driving_the_old_env_by_hand(kind, route):
    GymEnv = _adapter("gym_env", "GymEnv")
    hand, twin = OldWalkers(kind, n_agents=1, limit=4), OldWalkers(kind, n_agents=1, limit=4)
    env = GymEnv(_core(twin, route))
    rng = np.random.default_rng(1)
    hand.reset()
    obs, info = env.reset()
    np.testing.assert_array_equal(obs, _concat(hand.steps[0].obs, 0))
    endings = {"terminated": 0, "truncated": 0}
    for _ in range(30):
        action = hand_action(hand, rng)
        if kind == "discrete":
            assert info["action_mask"].tolist() == _allowed(hand.steps[0].action_mask, 0).tolist()
        hand.set_actions(BEHAVIOR, action)
        hand.step()
        obs, reward, terminated, truncated, info = env.step(
            action[0] if kind == "continuous" else action[0].astype(np.int64)
        )
        decision, terminal = hand.steps
        if len(terminal):
            np.testing.assert_array_equal(obs, _concat(terminal.obs, 0))
            assert reward == pytest.approx(float(terminal.reward[0]))
            assert (terminated, truncated) == (not terminal.max_step[0], bool(terminal.max_step[0]))
            endings["truncated" if truncated else "terminated"] += 1
            obs, info = env.reset()  # the agent was restarted: no core reset
        else:
            assert reward == pytest.approx(float(decision.reward[0]))
            assert not (terminated or truncated)
        np.testing.assert_array_equal(obs, _concat(hand.steps[0].obs, 0))
    assert endings["truncated"] > 0  # the run covered the time limit (max_step)
    assert kind == "continuous" or endings["terminated"] > 0
    env.close()
    assert twin.closed_calls == 1


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("kind", ["discrete", "continuous"])
def test_vector_env_equals_driving_the_old_env_by_hand(kind, route):
    BehaviorVectorEnv = _adapter("vector_env", "BehaviorVectorEnv")
    hand, twin = OldWalkers(kind, limit=4), OldWalkers(kind, limit=4)
    env = BehaviorVectorEnv(_core(twin, route))
    assert env.num_envs == 3
    rng = np.random.default_rng(2)
    hand.reset()
    obs, info = env.reset()
    rows = by_id(hand.steps[0])
    np.testing.assert_array_equal(obs, _concat(hand.steps[0].obs, rows))
    saw_final = False
    for _ in range(25):
        action = hand_action(hand, rng)  # rows in the old env's order
        if kind == "discrete":
            np.testing.assert_array_equal(
                info["action_mask"], _allowed(hand.steps[0].action_mask, rows)
            )
        hand.set_actions(BEHAVIOR, action)
        hand.step()
        obs, reward, terminated, truncated, info = env.step(action[rows])
        decision, terminal = hand.steps
        expected_reward = np.zeros(3, np.float32)
        d_rows = by_id(decision)
        expected_reward[:] = decision.reward[d_rows]
        ended = np.zeros(3, bool)
        slots = np.asarray(terminal.agent_id) - 10
        expected_reward[slots] = terminal.reward
        ended[slots] = True
        np.testing.assert_allclose(reward, expected_reward, rtol=1e-6)
        np.testing.assert_array_equal(terminated, ended & ~_zeros_or(terminal.max_step, slots))
        np.testing.assert_array_equal(truncated, _zeros_or(terminal.max_step, slots))
        np.testing.assert_array_equal(obs, _concat(decision.obs, d_rows))
        for row, slot in enumerate(slots):
            saw_final = True
            np.testing.assert_array_equal(info["final_obs"][slot], _concat(terminal.obs, row))
        rows = d_rows
    assert saw_final
    env.close()


def _zeros_or(flags: np.ndarray, slots: np.ndarray) -> np.ndarray:
    out = np.zeros(3, bool)
    out[slots] = flags
    return out


@pytest.mark.parametrize("route", ROUTES)
def test_pettingzoo_parallel_equals_driving_the_old_env_by_hand(route):
    PettingZooParallelEnv = _adapter("pettingzoo_parallel", "PettingZooParallelEnv")
    hand, twin = OldWalkers("discrete", limit=5), OldWalkers("discrete", limit=5)
    env = PettingZooParallelEnv(_core(twin, route))
    rng = np.random.default_rng(3)
    hand.reset()
    observations, infos = env.reset()
    assert len(env.agents) == 3
    names = sorted(env.agents)  # agent names embed the id; sorting by name sorts by id here
    while True:
        decision = hand.steps[0]
        rows = by_id(decision)
        for name, row in zip(names, rows, strict=True):
            got = observations[name]
            observation = got["observation"] if isinstance(got, dict) else got
            np.testing.assert_array_equal(observation, _concat(decision.obs, row))
        action = hand_action(hand, rng)
        hand.set_actions(BEHAVIOR, action)
        hand.step()
        actions = {
            name: action[row].astype(np.int64) for name, row in zip(names, rows, strict=True)
        }
        observations, rewards, terminations, truncations, infos = env.step(actions)
        decision, terminal = hand.steps
        finished = {names[i] for i in np.asarray(terminal.agent_id) - 10}
        for name, row in zip(names, by_id(decision), strict=True):
            if name not in finished:
                assert rewards[name] == pytest.approx(float(decision.reward[row]))
                assert not (terminations[name] or truncations[name])
        for row, agent_id in enumerate(terminal.agent_id):
            name = names[agent_id - 10]
            assert rewards[name] == pytest.approx(float(terminal.reward[row]))
            assert truncations[name] == bool(terminal.max_step[row])
            assert terminations[name] == (not terminal.max_step[row])
        if finished:
            break
    env.close()
