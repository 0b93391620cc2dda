"""Tests of the core API types in ``zooport.envs.base_env``.

The first part restates what ML-Agents' own tests assert about ``ActionSpec``,
``ActionTuple``, ``DecisionSteps``, ``TerminalSteps`` and ``BehaviorMapping``; the second
checks zooport's strictness: every malformed action raises :class:`zooport.ActionError`
naming the behaviour, never another exception.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from zooport import ActionError, ObservationError, UnknownAgentError
from zooport.envs.base_env import (
    ActionSpec,
    ActionTuple,
    BaseEnv,
    BehaviorMapping,
    BehaviorSpec,
    DecisionStep,
    DecisionSteps,
    TerminalStep,
    TerminalSteps,
    _out_of_range,
    random_actions,
)
from zooport.envs.batched_env import BatchedEnv, StepResult
from zooport.envs.steps import check_agent_ids

from tests.support.specs import obs_spec


def make_decision_steps() -> DecisionSteps:
    return DecisionSteps(
        obs=[np.arange(12, dtype=np.float32).reshape(3, 4)],
        reward=np.array([0.0, 1.0, 2.0], dtype=np.float32),
        agent_id=np.array([10, 11, 12], dtype=np.int32),
        action_mask=[np.array([[False, True], [False, False], [True, False]])],
        group_id=np.array([0, 1, 1], dtype=np.int32),
        group_reward=np.array([0.0, 0.5, 0.5], dtype=np.float32),
    )


def make_terminal_steps() -> TerminalSteps:
    return TerminalSteps(
        obs=[np.arange(12, dtype=np.float32).reshape(3, 4)],
        reward=np.array([0.0, 1.0, 2.0], dtype=np.float32),
        interrupted=np.array([True, False, True]),
        agent_id=np.array([10, 11, 12], dtype=np.int32),
        group_id=np.zeros(3, dtype=np.int32),
        group_reward=np.zeros(3, dtype=np.float32),
    )


# --------------------------------------------------------------------------- DecisionSteps


def test_decision_steps_index_by_agent_id():
    ds = make_decision_steps()
    assert ds.agent_id_to_index == {10: 0, 11: 1, 12: 2}
    with pytest.raises(KeyError):
        ds.agent_id_to_index[-1]
    assert len(ds) == 3
    assert list(ds) == [10, 11, 12]
    assert all(isinstance(i, int) for i in ds)


def test_decision_step_of_one_agent():
    ds = make_decision_steps()
    step = ds[12]
    assert isinstance(step, DecisionStep)
    assert step.agent_id == 12
    np.testing.assert_array_equal(step.obs[0], [8.0, 9.0, 10.0, 11.0])
    assert step.reward == 2.0
    assert isinstance(step.action_mask, list) and len(step.action_mask) == 1
    np.testing.assert_array_equal(step.action_mask[0], [True, False])
    assert step.group_id == 1 and step.group_reward == 0.5
    # Indexing with a numpy integer, as a loop over ``ds.agent_id`` gives, works too.
    assert ds[np.int32(11)].reward == 1.0


def test_decision_step_without_mask():
    ds = DecisionSteps(
        [np.zeros((2, 1), np.float32)],
        np.zeros(2, np.float32),
        np.array([3, 4], np.int32),
        None,
        np.zeros(2, np.int32),
        np.zeros(2, np.float32),
    )
    assert ds[4].action_mask is None


def test_unknown_agent_is_an_error_naming_present_agents():
    ds = make_decision_steps()
    with pytest.raises(UnknownAgentError, match=r"99.*\[10, 11, 12\]"):
        ds[99]
    with pytest.raises(LookupError):
        ds[99]


def test_membership_and_get_of_absent_agent():
    # Mapping's ``in`` and ``get`` must answer, not raise, for an absent id (bug fixed:
    # they used to raise UnknownAgentError since Mapping only catches KeyError).
    for steps in (make_decision_steps(), make_terminal_steps()):
        assert 11 in steps and np.int32(11) in steps
        assert 99 not in steps
        assert [1, 2] not in steps  # unhashable
        assert steps.get(99) is None
        assert steps.get(99, "absent") == "absent"
        assert steps.get(10).agent_id == 10


def test_empty_decision_steps_have_the_spec_shapes():
    spec = BehaviorSpec([obs_spec((3, 2)), obs_spec((5,))], ActionSpec.create_continuous(3))
    ds = DecisionSteps.empty(spec)
    assert len(ds) == 0 and list(ds) == []
    assert [o.shape for o in ds.obs] == [(0, 3, 2), (0, 5)]
    assert all(o.dtype == np.float32 for o in ds.obs)
    assert ds.reward.shape == (0,) and ds.reward.dtype == np.float32
    assert ds.agent_id.shape == (0,) and np.issubdtype(ds.agent_id.dtype, np.integer)
    assert ds.group_id.shape == (0,) and ds.group_reward.shape == (0,)
    assert ds.action_mask is None


# --------------------------------------------------------------------------- TerminalSteps


def test_terminal_steps_interrupted_by_agent():
    ts = make_terminal_steps()
    assert ts.agent_id_to_index == {10: 0, 11: 1, 12: 2}
    with pytest.raises(KeyError):
        ts.agent_id_to_index[-1]
    assert ts[10].interrupted and not ts[11].interrupted and ts[12].interrupted
    step = ts[11]
    assert isinstance(step, TerminalStep)
    assert step.reward == 1.0 and step.agent_id == 11
    for agent_id in ts:
        assert ts.agent_id_to_index[agent_id] in range(3)


def test_empty_terminal_steps_have_the_spec_shapes():
    spec = BehaviorSpec([obs_spec((3, 2)), obs_spec((5,))], ActionSpec.create_continuous(3))
    ts = TerminalSteps.empty(spec)
    assert len(ts) == 0
    assert [o.shape for o in ts.obs] == [(0, 3, 2), (0, 5)]
    assert ts.interrupted.shape == (0,) and ts.interrupted.dtype == bool


# --------------------------------------------------------------------------- ActionSpec


def test_continuous_spec():
    spec = ActionSpec.create_continuous(3)
    assert spec.discrete_branches == () and spec.discrete_size == 0
    assert spec.continuous_size == 3
    assert spec.is_continuous() and not spec.is_discrete()
    empty = spec.empty_action(5)
    assert empty.continuous.shape == (5, 3) and empty.continuous.dtype == np.float32
    assert empty.discrete.shape == (5, 0)
    assert not empty.continuous.any()


def test_discrete_spec():
    spec = ActionSpec.create_discrete((3,))
    assert spec.discrete_branches == (3,) and spec.discrete_size == 1
    assert spec.continuous_size == 0
    assert spec.is_discrete() and not spec.is_continuous()
    empty = spec.empty_action(5)
    assert empty.discrete.shape == (5, 1) and empty.discrete.dtype == np.int32
    assert empty.continuous.shape == (5, 0)


def test_hybrid_spec_built_directly():
    spec = ActionSpec(3, (3,))
    assert spec.continuous_size == 3 and spec.discrete_branches == (3,)
    assert spec.discrete_size == 1
    assert not spec.is_discrete() and not spec.is_continuous()
    empty = spec.empty_action(5)
    assert empty.continuous.shape == (5, 3) and empty.continuous.dtype == np.float32
    assert empty.discrete.shape == (5, 1) and empty.discrete.dtype == np.int32
    assert ActionSpec.create_hybrid(3, (3,)) == spec
    assert hash(ActionSpec.create_hybrid(3, [3])) == hash(spec)
    assert ActionSpec.create_hybrid(3, (4,)) != spec


@pytest.mark.parametrize(
    "make",
    [
        lambda: ActionSpec.create_continuous(-1),
        lambda: ActionSpec.create_continuous(2.0),
        lambda: ActionSpec.create_continuous(True),
        lambda: ActionSpec.create_discrete((3, 0)),
        lambda: ActionSpec.create_discrete((2.5,)),
        lambda: ActionSpec.create_hybrid(1, (-2,)),
    ],
)
def test_invalid_spec_sizes_are_rejected(make):
    with pytest.raises(ValueError, match="Expected"):
        make()


def test_random_action_ranges_and_dtypes():
    spec = ActionSpec.create_continuous(30)
    action = spec.random_action(4).continuous
    assert action.dtype == np.float32 and action.shape == (4, 30)
    assert action.min() >= -1 and action.max() <= 1
    branches = (10, 20, 30)
    spec = ActionSpec.create_discrete(branches)
    action = spec.random_action(400, np.random.default_rng(0)).discrete
    assert action.dtype == np.int32 and action.shape == (400, 3)
    assert action.min() == 0
    # With 400 draws every branch reaches its top value and never passes it.
    assert action.max(axis=0).tolist() == [9, 19, 29]


def test_random_action_with_generator_is_reproducible():
    spec = ActionSpec.create_hybrid(3, (4, 5))
    first = spec.random_action(7, np.random.default_rng(42))
    again = spec.random_action(7, np.random.default_rng(42))
    other = spec.random_action(7, np.random.default_rng(43))
    np.testing.assert_array_equal(first.continuous, again.continuous)
    np.testing.assert_array_equal(first.discrete, again.discrete)
    assert not np.array_equal(first.continuous, other.continuous)


def test_random_action_of_zero_agents():
    action = ActionSpec.create_hybrid(2, (3,)).random_action(0, np.random.default_rng(0))
    assert action.continuous.shape == (0, 2) and action.discrete.shape == (0, 1)


def test_random_actions_never_pick_a_masked_action():
    spec = ActionSpec.create_discrete((3,))
    mask = [np.array([[True, True, False]] * 50)]  # only action 2 is available
    action = random_actions(spec, 50, np.random.default_rng(0), mask)
    assert action.discrete.tolist() == [[2]] * 50 and action.discrete.dtype == np.int32


def test_check_agent_ids_names_the_batch_and_the_repeated_ids():
    decision = DecisionSteps([], [0] * 3, [3, 3, 4], None, [0] * 3, [0] * 3)
    with pytest.raises(
        ObservationError, match=r"behaviour 'B': agent ids repeat in DecisionSteps: \[3\]"
    ):
        check_agent_ids("B", decision, [])
    with pytest.raises(ObservationError, match="agent ids repeat in TerminalSteps: \\[1\\]"):
        check_agent_ids("B", [], [1, 2, 1])  # plain id arrays are read too
    check_agent_ids("B", DecisionSteps.empty(BehaviorSpec([], ActionSpec(0, ()))), [5, 6])


# --------------------------------------------------------------------------- ActionTuple


def test_action_tuple_converts_dtypes():
    action = ActionTuple(
        continuous=np.ones((2, 3), dtype=np.float64), discrete=np.array([[1], [2]], np.int64)
    )
    assert action.continuous.dtype == np.float32 and action.discrete.dtype == np.int32
    assert action.discrete_dtype is np.int32
    assert len(action) == 2
    np.testing.assert_array_equal(action.discrete, [[1], [2]])


def test_action_tuple_fills_the_missing_part():
    action = ActionTuple()
    action.add_continuous(np.zeros((4, 2)))
    assert action.discrete.shape == (4, 0) and action.discrete.dtype == np.int32
    action = ActionTuple(discrete=[[1, 0]])
    assert action.continuous.shape == (1, 0) and action.continuous.dtype == np.float32
    assert len(ActionTuple()) == 0
    # A part set again resizes the filler: the missing part always has the batch's rows.
    action.add_discrete(np.zeros((3, 2), np.int32))
    assert action.continuous.shape == (3, 0) and len(action) == 3


def test_action_tuple_accepts_whole_floats_as_discrete():
    action = ActionTuple(discrete=np.array([[2.0], [0.0]]))
    np.testing.assert_array_equal(action.discrete, [[2], [0]])
    assert action.discrete.dtype == np.int32
    # float16 too: its range check once compared it with 2**31 in float16 (an overflow
    # warning, an error under this suite's filterwarnings).
    action = ActionTuple(discrete=np.array([[2.0], [0.0]], np.float16))
    assert action.discrete.tolist() == [[2], [0]] and action.discrete.dtype == np.int32
    with pytest.raises(ActionError, match="non-integral"):
        ActionTuple(discrete=np.array([[0.5]], np.float16))


def test_a_spec_built_with_a_list_of_branches_validates_actions():
    spec = ActionSpec(0, [3, 2])
    ok = ActionTuple(discrete=np.array([[2, 1]], np.int32))
    assert spec._validate_action(ok, 1, "B") is ok
    with pytest.raises(ActionError, match=r"branch 1 takes values in \[0, 1\], got 2"):
        spec._validate_action(ActionTuple(discrete=np.array([[0, 2]], np.int32)), 1, "B")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"continuous": np.zeros(3)}, "rank 2"),
        ({"discrete": np.zeros((1, 1, 1), np.int32)}, "rank 2"),
        ({"discrete": [[1.5]]}, "non-integral"),
        ({"discrete": [[np.nan]]}, "non-integral"),
        ({"discrete": [["a"]]}, "dtype"),
        ({"continuous": [["a"]]}, "numeric"),
        ({"continuous": np.ones((2, 1)), "discrete": np.ones((3, 1), np.int32)}, "rows"),
        ({"continuous": [[1.0], [1.0, 2.0]]}, "rectangular"),
        ({"discrete": np.array([[2**32 + 1]])}, "int32 range"),
        ({"discrete": np.array([[1e10]])}, "int32 range"),
        ({"continuous": np.array([[1e300]])}, "float32 range"),
    ],
)
def test_action_tuple_rejects_malformed_parts(kwargs, match):
    with pytest.raises(ActionError, match=match):
        ActionTuple(**kwargs)


@pytest.mark.parametrize("kind", ["masked", "record"])
def test_action_tuple_unwraps_array_subclasses(kind):
    # The no-conversion path is for plain arrays: a subclass becomes a plain ndarray.
    data = np.array([[1.0, 2.0]], np.float32)
    continuous = np.ma.array(data) if kind == "masked" else data.view(np.recarray)
    action = ActionTuple(continuous=continuous, discrete=np.ma.array([[1]], dtype=np.int32))
    assert type(action.continuous) is np.ndarray and type(action.discrete) is np.ndarray
    assert action.continuous.tolist() == [[1.0, 2.0]] and action.discrete.tolist() == [[1]]


# --------------------------------------------------------------------------- BehaviorMapping


def test_behavior_mapping_is_read_only():
    spec = BehaviorSpec([obs_spec((2,))], ActionSpec.create_discrete((2,)))
    mapping = BehaviorMapping({"A": spec, "B": spec})
    assert len(mapping) == 2 and list(mapping) == ["A", "B"]
    assert mapping["A"] is spec and "B" in mapping and "C" not in mapping
    assert dict(mapping.items()) == {"A": spec, "B": spec}
    with pytest.raises(KeyError):
        mapping["C"]
    with pytest.raises(TypeError):
        mapping["C"] = spec  # type: ignore[index]


def test_base_env_is_abstract():
    with pytest.raises(TypeError):
        BaseEnv()  # type: ignore[abstract]


# --------------------------------------------------------------------------- strictness

BEHAVIOR = "Walker?team=0"

_CORRUPTIONS = (
    "not_an_action_tuple",
    "wrong_rank",
    "wrong_batch",
    "missing_part",
    "extra_part",
    "non_numeric",
    "nan_inf",
    "discrete_out_of_range",
    "discrete_non_integral",
    "ragged",
)


@st.composite
def specs(draw) -> ActionSpec:
    continuous = draw(st.integers(0, 3))
    branches = tuple(draw(st.lists(st.integers(1, 4), max_size=3)))
    if continuous == 0 and not branches:
        continuous = 1
    return ActionSpec(continuous, branches)


@st.composite
def bad_actions(draw, spec: ActionSpec, n: int):
    """Builds a malformed action for ``spec`` and ``n`` agents; returns a thunk."""
    kind = draw(st.sampled_from(_CORRUPTIONS))
    good = spec.random_action(n, np.random.default_rng(draw(st.integers(0, 2**16))))
    cont, disc = good.continuous, good.discrete
    parts = []
    if spec.continuous_size:
        parts.append("continuous")
    if spec.discrete_size:
        parts.append("discrete")
    part = draw(st.sampled_from(parts))
    if kind == "not_an_action_tuple":
        value = draw(st.sampled_from([None, cont, {"continuous": cont}, (cont, disc), 3]))
        return kind, lambda: value
    if kind == "wrong_rank":
        array = cont if part == "continuous" else disc
        bad = draw(st.sampled_from([array.reshape(-1), array[..., None], np.float32(1.0)]))
        return kind, lambda: ActionTuple(**{part: bad})
    if kind == "wrong_batch":
        delta = draw(st.sampled_from([-1, 1, 2]).filter(lambda d: n + d >= 0))
        rows = n + delta
        alt = spec.random_action(rows, np.random.default_rng(0))
        return kind, lambda: ActionTuple(continuous=alt.continuous, discrete=alt.discrete)
    if kind == "missing_part":
        if len(parts) == 2:
            other = "discrete" if part == "continuous" else "continuous"
            kept = cont if other == "continuous" else disc
            return kind, lambda: ActionTuple(**{other: kept})
        return kind, lambda: ActionTuple()
    if kind == "extra_part":
        if len(parts) == 2:  # a hybrid spec has no absent part: widen one instead
            return kind, lambda: ActionTuple(
                continuous=np.zeros((n, spec.continuous_size + 1), np.float32), discrete=disc
            )
        if spec.continuous_size:
            extra = np.zeros((n, draw(st.integers(1, 2))), np.int32)
            return kind, lambda: ActionTuple(continuous=cont, discrete=extra)
        extra = np.zeros((n, draw(st.integers(1, 2))), np.float32)
        return kind, lambda: ActionTuple(continuous=extra, discrete=disc)
    if kind == "non_numeric":
        array = cont if part == "continuous" else disc
        fill = draw(st.sampled_from(["x", None, 1 + 2j, True]))
        bad = np.full(array.shape if array.size else (max(n, 1), array.shape[1]), fill)
        return kind, lambda: ActionTuple(**{part: bad})
    if kind == "nan_inf" and spec.continuous_size and n:
        bad = cont.copy()
        row, col = draw(st.integers(0, n - 1)), draw(st.integers(0, spec.continuous_size - 1))
        bad[row, col] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
        return kind, lambda: ActionTuple(continuous=bad, discrete=disc)
    if kind == "discrete_out_of_range" and spec.discrete_size and n:
        bad = disc.astype(np.int64)
        row, col = draw(st.integers(0, n - 1)), draw(st.integers(0, spec.discrete_size - 1))
        size = spec.discrete_branches[col]
        bad[row, col] = draw(
            st.one_of(st.integers(-(2**40), -1), st.integers(size, 2**40), st.just(2**32))
        )
        return kind, lambda: ActionTuple(continuous=cont, discrete=bad)
    if kind == "discrete_non_integral" and spec.discrete_size and n:
        bad = disc.astype(np.float64)
        row, col = draw(st.integers(0, n - 1)), draw(st.integers(0, spec.discrete_size - 1))
        bad[row, col] += draw(st.sampled_from([0.5, 0.25, np.nan, np.inf]))
        return kind, lambda: ActionTuple(continuous=cont, discrete=bad)
    if kind == "ragged":
        width = spec.continuous_size if part == "continuous" else spec.discrete_size
        rows = [[0] * width, [0] * (width + 1)]
        return kind, lambda: ActionTuple(**{part: rows})
    # The corruption does not apply to this spec / batch size: fall back to a wrong batch.
    alt = spec.random_action(n + 1, np.random.default_rng(1))
    return "wrong_batch", lambda: ActionTuple(continuous=alt.continuous, discrete=alt.discrete)


def _assert_rejected(build, validate) -> None:
    """``build`` may already refuse (ActionError); otherwise ``validate`` must, naming BEHAVIOR.

    Any other exception type propagates and fails the test.
    """
    try:
        action = build()
    except ActionError:
        return
    with pytest.raises(ActionError) as info:
        validate(action)
    assert BEHAVIOR in str(info.value)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), spec=specs(), n=st.integers(0, 4))
def test_validate_action_rejects_bad_input(data, spec, n):
    kind, build = data.draw(bad_actions(spec, n))
    _assert_rejected(build, lambda action: spec._validate_action(action, n, BEHAVIOR))


@settings(max_examples=100, deadline=None)
@given(spec=specs(), n=st.integers(0, 4), seed=st.integers(0, 2**16))
def test_validate_action_accepts_good_input(spec, n, seed):
    action = spec.random_action(n, np.random.default_rng(seed))
    checked = spec._validate_action(action, n, BEHAVIOR)
    assert checked.continuous.shape == (n, spec.continuous_size)
    assert checked.discrete.shape == (n, spec.discrete_size)
    np.testing.assert_array_equal(checked.discrete, action.discrete)


def test_validate_action_fills_the_absent_part():
    spec = ActionSpec.create_discrete((3,))
    checked = spec._validate_action(ActionTuple(discrete=[[2], [1]]), 2, BEHAVIOR)
    assert checked.continuous.shape == (2, 0)
    checked = ActionSpec.create_continuous(2)._validate_action(
        ActionTuple(continuous=np.zeros((0, 2))), 0, BEHAVIOR
    )
    assert checked.continuous.shape == (0, 2) and checked.discrete.shape == (0, 0)
    # Even for zero agents the spec's part must be there, with the spec's width.
    with pytest.raises(ActionError, match=r"shape \(0, 2\)"):
        ActionSpec.create_continuous(2)._validate_action(ActionTuple(), 0, BEHAVIOR)


def test_extra_part_of_zero_agents_is_rejected():
    # Bug fixed: an extra part was detected by its size, so (0, k) slipped through.
    spec = ActionSpec.create_continuous(2)
    action = ActionTuple(continuous=np.zeros((0, 2)), discrete=np.zeros((0, 3), np.int32))
    with pytest.raises(ActionError, match="no discrete actions"):
        spec._validate_action(action, 0, BEHAVIOR)


@pytest.mark.parametrize(
    ("action", "match"),
    [
        (ActionTuple(discrete=[[0, 3]]), r"branch 1 takes values in \[0, 1\], got 3 at row 0"),
        (ActionTuple(discrete=[[-1, 0]]), r"branch 0 takes values in \[0, 2\], got -1"),
        (ActionTuple(discrete=[[0, 0], [0, 0]]), r"shape \(1, 2\).*got \(2, 2\)"),
        (ActionTuple(continuous=[[1.0]], discrete=[[0, 0]]), "no continuous actions"),
    ],
)
def test_validate_action_messages_say_expected_and_actual(action, match):
    spec = ActionSpec.create_discrete((3, 2))
    with pytest.raises(ActionError, match=match) as info:
        spec._validate_action(action, 1, BEHAVIOR)
    assert repr(BEHAVIOR) in str(info.value)


def test_nan_continuous_message_locates_the_value():
    spec = ActionSpec.create_continuous(2)
    action = ActionTuple(continuous=[[0.0, 0.0], [0.0, np.inf]])
    with pytest.raises(ActionError, match="inf at row 1, column 1"):
        spec._validate_action(action, 2, BEHAVIOR)


# --------------------------------------------------------------------------- BatchedEnv input


class _Hybrid(BatchedEnv):
    """Three agents of one hybrid behaviour; nothing ever ends."""

    def __init__(self, spec: ActionSpec, n: int = 3) -> None:
        super().__init__(seed=0)
        self._add_behavior(BEHAVIOR, BehaviorSpec([obs_spec((1,))], spec), n)
        self.n = n

    def _reset_agents(self, behavior, slots):
        pass

    def _step(self, actions):
        return {BEHAVIOR: StepResult(np.zeros(self.n, np.float32), np.zeros(self.n, bool))}

    def _observe(self, behavior, slots):
        return [np.zeros((slots.size, 1), np.float32)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), spec=specs(), n=st.integers(1, 4))
def test_set_actions_rejects_bad_input(data, spec, n):
    env = _Hybrid(spec, n)
    env.reset()
    kind, build = data.draw(bad_actions(spec, n))
    _assert_rejected(build, lambda action: env.set_actions(BEHAVIOR, action))
    # A rejected action leaves the env usable and the stored actions untouched.
    env.step()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), spec=specs())
def test_set_action_for_agent_rejects_bad_input(data, spec):
    env = _Hybrid(spec, 3)
    env.reset()
    kind, build = data.draw(bad_actions(spec, 1))
    _assert_rejected(build, lambda action: env.set_action_for_agent(BEHAVIOR, 1, action))


@pytest.mark.parametrize(
    "branches", [(3,), (3, 3), (2, 5, 4), (2**33,), (2**33, 4), (2**31, 2**31 + 1)]
)
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_discrete_range_check_matches_a_plain_bounds_check(branches, dtype):
    # _out_of_range compares int32 values viewed as uint32 against clipped bounds.
    rng = np.random.default_rng(len(branches))
    limits = np.array(branches, dtype=np.int64)
    edge = [-(2**31), -1, 0, 1, 2, 3, 4, 5, 2**31 - 1]
    for _ in range(200):
        values = rng.choice(edge, size=(int(rng.integers(1, 4)), len(branches)))
        discrete = values.astype(dtype)
        expected = bool(((values < 0) | (values >= limits)).any())
        assert _out_of_range(discrete, branches) == expected, (values, branches)
    if dtype is np.int32:
        spec = ActionSpec.create_discrete(branches)
        top = np.array([[min(b, 2**31) - 1 for b in branches]], np.int32)
        spec._validate_action(ActionTuple(discrete=top), 1, BEHAVIOR)
        with pytest.raises(ActionError, match=r"got -1 at row 0"):
            spec._validate_action(ActionTuple(discrete=np.full_like(top, -1)), 1, BEHAVIOR)
