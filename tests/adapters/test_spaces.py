"""The pure spec -> space conversions shared by every adapter, tested without an env."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from zooport.adapters.spaces import ActionLayout, ObservationLayout, observation_key
from zooport.envs.base_env import (
    ActionSpec,
    DimensionProperty,
    ObservationSpec,
    ObservationType,
)
from zooport.errors import ActionError, SpecError

from tests.support.specs import obs_spec

NONE = DimensionProperty.NONE


# ---------------------------------------------------------------------- observations


def test_single_vector_observation_is_a_float_box():
    layout = ObservationLayout([obs_spec((4,), "v")])
    assert layout.space == spaces.Box(-np.inf, np.inf, (4,), np.float32)
    batch = np.arange(8, dtype=np.float64).reshape(2, 4)
    out = layout.convert([batch])
    assert out.dtype == np.float32 and out.tolist() == batch.tolist()


def test_rank1_observations_concatenate_in_spec_order_without_dict():
    layout = ObservationLayout([obs_spec((2,), "a"), obs_spec((3,), "b")])
    assert layout.space.shape == (5,)
    out = layout.convert([np.array([[1.0, 2.0]]), np.array([[3.0, 4.0, 5.0]])])
    assert out.tolist() == [[1, 2, 3, 4, 5]]


def test_allow_multiple_obs_gives_a_dict_keyed_by_name():
    layout = ObservationLayout(
        [obs_spec((2,), "b_vec"), obs_spec((3,), "a goal")], allow_multiple_obs=True
    )
    assert isinstance(layout.space, spaces.Dict)
    assert set(layout.space.spaces) == {"b_vec", "a_goal"}
    out = layout.convert([np.ones((1, 2)), np.zeros((1, 3))])
    assert list(out) == list(layout.space.spaces)  # the space's (sorted) key order
    assert out["b_vec"].shape == (1, 2) and out["a_goal"].shape == (1, 3)
    assert layout.space.contains({k: v[0] for k, v in out.items()})


def test_mixed_ranks_become_a_dict_even_without_allow_multiple_obs():
    camera = obs_spec((4, 4, 3), "camera")
    layout = ObservationLayout([camera, obs_spec((2,), "goal", ObservationType.GOAL_SIGNAL)])
    assert isinstance(layout.space, spaces.Dict)
    assert layout.space["camera"] == spaces.Box(0.0, 1.0, (4, 4, 3), np.float32)


def test_duplicate_and_missing_names_get_stable_distinct_keys():
    specs = [obs_spec((1,), "x"), obs_spec((1,), "x"), obs_spec((1,), "")]
    layout = ObservationLayout(specs, allow_multiple_obs=True)
    assert sorted(layout.space.spaces) == ["obs_2", "x", "x_1"]
    assert observation_key(specs[2], 2) == "obs_2"
    assert observation_key(obs_spec((3,), "Ray Sensor"), 0) == "Ray_Sensor"


def test_uint8_visual_rounds_instead_of_truncating():
    camera = obs_spec((1, 3, 1), "camera")
    layout = ObservationLayout([camera], uint8_visual=True)
    assert layout.space == spaces.Box(0, 255, (1, 3, 1), np.uint8)
    values = np.array([0.7 / 255, 254.6 / 255, 1.0], dtype=np.float32).reshape(1, 1, 3, 1)
    out = layout.convert([values])
    assert out.dtype == np.uint8
    assert out.ravel().tolist() == [1, 255, 255]  # truncation would give [0, 254, 255]


def test_rank2_variable_size_observation_is_kept():
    items = ObservationSpec(
        (6, 3), (DimensionProperty.VARIABLE_SIZE, NONE), ObservationType.DEFAULT, "items"
    )
    layout = ObservationLayout([obs_spec((4,), "self"), items])
    assert layout.space["items"].shape == (6, 3)


def test_convert_returns_fresh_arrays_and_honours_rows():
    layout = ObservationLayout([obs_spec((2,), "v")])
    core = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]], dtype=np.float32)
    out = layout.convert([core], np.array([2, 0]))
    assert out.tolist() == [[3, 3], [1, 1]]
    out[:] = 0
    assert core[0, 0] == 1.0
    whole = layout.convert([core])
    assert not np.shares_memory(whole, core)


def test_write_allocate_take():
    layout = ObservationLayout([obs_spec((1,), "a"), obs_spec((2,), "b")], allow_multiple_obs=True)
    buffer = layout.allocate(3)
    layout.write(buffer, np.array([2, 0]), [np.array([[5.0], [6.0]]), np.ones((2, 2))])
    assert buffer["a"].ravel().tolist() == [6.0, 0.0, 5.0]
    row = ObservationLayout.take(buffer, 2)
    row["a"][0] = -1
    assert buffer["a"][2, 0] == 5.0


def test_no_observation_is_an_error():
    with pytest.raises(SpecError, match="without observations"):
        ObservationLayout([])


# ---------------------------------------------------------------------- actions


@pytest.mark.parametrize(
    ("spec", "flatten", "expected"),
    [
        (ActionSpec.create_discrete((3,)), False, spaces.Discrete(3)),
        (ActionSpec.create_discrete((2, 3)), False, spaces.MultiDiscrete([2, 3])),
        (ActionSpec.create_discrete((2, 2, 3)), True, spaces.Discrete(12)),
        (ActionSpec.create_discrete((5,)), True, spaces.Discrete(5)),
        (ActionSpec.create_continuous(2), False, spaces.Box(-1, 1, (2,), np.float32)),
        (
            ActionSpec.create_hybrid(2, (3,)),
            False,
            spaces.Dict(
                {"continuous": spaces.Box(-1, 1, (2,), np.float32), "discrete": spaces.Discrete(3)}
            ),
        ),
    ],
)
def test_action_space_of_every_kind(spec, flatten, expected):
    assert ActionLayout(spec, flatten_branched=flatten).space == expected


def test_flattened_lookup_matches_the_issue_example():
    layout = ActionLayout(ActionSpec.create_discrete((2, 2, 3)), flatten_branched=True)
    assert layout.lookup.shape == (12, 3)
    assert layout.lookup[11].tolist() == [1, 1, 2]
    assert layout.lookup[0].tolist() == [0, 0, 0]
    assert layout.to_core(np.array([11, 0])).discrete.tolist() == [[1, 1, 2], [0, 0, 0]]
    # Every combination exactly once.
    assert len({tuple(r) for r in layout.lookup.tolist()}) == 12


@pytest.mark.parametrize(
    ("spec", "flatten"),
    [
        (ActionSpec.create_discrete((3,)), False),
        (ActionSpec.create_discrete((2, 3)), False),
        (ActionSpec.create_discrete((2, 2, 3)), True),
        (ActionSpec.create_continuous(3), False),
        (ActionSpec.create_hybrid(2, (2, 4)), False),
        (ActionSpec.create_hybrid(1, (2, 4)), True),
    ],
)
def test_to_core_and_from_core_are_inverse(spec, flatten):
    layout = ActionLayout(spec, flatten_branched=flatten, name="B")
    rng = np.random.default_rng(0)
    core = spec.random_action(16, rng)
    consumer = layout.from_core(core)
    back = layout.to_core(consumer, 16)
    np.testing.assert_array_equal(back.discrete.reshape(16, -1), core.discrete.reshape(16, -1))
    np.testing.assert_allclose(back.continuous.reshape(16, -1), core.continuous.reshape(16, -1))
    single = layout.space
    rows = consumer if not isinstance(consumer, dict) else consumer["discrete"]
    if not isinstance(single, spaces.Dict):
        assert all(single.contains(np.asarray(r, dtype=single.dtype)) for r in rows)


def test_discrete_actions_are_int32_and_continuous_float32():
    disc = ActionLayout(ActionSpec.create_discrete((3,))).to_core(np.array([2, 1], np.int64), 2)
    assert disc.discrete.dtype == np.int32 and disc.discrete.tolist() == [[2], [1]]
    cont = ActionLayout(ActionSpec.create_continuous(2)).to_core(np.zeros((2, 2)), 2)
    assert cont.continuous.dtype == np.float32


@pytest.mark.parametrize(
    ("spec", "flatten", "bad", "match"),
    [
        (ActionSpec.create_discrete((3,)), False, np.array([[1], [2]]), r"shape \(2,\)"),
        (ActionSpec.create_discrete((3,)), False, np.array([0.5, 1.0]), "integer"),
        (ActionSpec.create_discrete((2, 2)), True, np.array([4, 0]), r"\[0, 3\]"),
        (ActionSpec.create_discrete((2, 2)), True, np.array([-1, 0]), r"\[0, 3\]"),
        (ActionSpec.create_continuous(2), False, np.zeros((2, 3)), r"\(2, 2\)"),
        (ActionSpec.create_continuous(2), False, np.array([["a", "b"], ["c", "d"]]), "numeric"),
        (ActionSpec.create_hybrid(1, (2,)), False, np.zeros((2, 1)), "dict with keys"),
    ],
)
def test_bad_consumer_actions_name_expected_and_actual(spec, flatten, bad, match):
    layout = ActionLayout(spec, flatten_branched=flatten, name="Walker")
    with pytest.raises(ActionError, match=match) as info:
        layout.to_core(bad, 2)
    assert "Walker" in str(info.value)


def test_masks_flip_polarity_and_flatten_over_branches():
    layout = ActionLayout(ActionSpec.create_discrete((2, 3)))
    core = [np.array([[True, False], [False, False]]), np.array([[False, True, False]] * 2)]
    mask = layout.allowed_mask(core, 2)
    assert mask.dtype == np.int8
    assert mask.tolist() == [[0, 1, 1, 0, 1], [1, 1, 1, 0, 1]]


def test_flattened_masks_allow_a_combination_only_if_every_branch_allows_it():
    layout = ActionLayout(ActionSpec.create_discrete((2, 3)), flatten_branched=True)
    core = [np.array([[True, False]]), np.array([[False, True, False]])]
    mask = layout.allowed_mask(core, 1)[0]
    expected = [
        int(b0 == 1 and b1 != 1) for b0, b1 in layout.lookup.tolist()
    ]  # branch 0 value 0 masked, branch 1 value 1 masked
    assert mask.tolist() == expected


def test_no_core_mask_means_everything_allowed():
    layout = ActionLayout(ActionSpec.create_discrete((2, 3)))
    assert layout.allowed_mask(None, 3).tolist() == [[1] * 5] * 3
    assert ActionLayout(ActionSpec.create_continuous(2)).mask_size == 0


def test_wrong_number_of_core_masks_is_an_error():
    layout = ActionLayout(ActionSpec.create_discrete((2, 3)), name="B")
    with pytest.raises(SpecError, match="one mask per discrete branch"):
        layout.allowed_mask([np.zeros((1, 2), bool)], 1)
