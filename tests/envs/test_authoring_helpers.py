"""The authoring conveniences: ``ObservationSpec.vector/visual/entities``, the argument checks,
the capability questions and the step guard.

Each constructor is compared with the spec spelled out field by field (what every built-in
wrote before), and the built-ins' specs with the hand-written ones they always had.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from zooport.envs.arguments import check_float, check_int, check_seed
from zooport.envs.base_env import DimensionProperty, ObservationSpec, ObservationType
from zooport.envs.builtin import Basic, Collector, GridWorld, Tag
from zooport.envs.capabilities import accepts_keyword, keyword_parameters
from zooport.envs.step_guard import StepGuard
from zooport.errors import ArgumentError, ArgumentTypeError, EnvNotResetError

NONE = DimensionProperty.NONE
EQUIVARIANT = DimensionProperty.TRANSLATIONAL_EQUIVARIANCE


def test_vector_is_the_spec_spelled_out():
    assert ObservationSpec.vector(8, "state") == ObservationSpec(
        (8,), (NONE,), ObservationType.DEFAULT, "state"
    )
    goal = ObservationSpec.vector(2, "goal", observation_type=ObservationType.GOAL_SIGNAL)
    assert goal == ObservationSpec((2,), (NONE,), ObservationType.GOAL_SIGNAL, "goal")
    assert ObservationSpec.vector(np.int64(0), "empty").shape == (0,)  # zero-size is allowed
    assert type(ObservationSpec.vector(np.int64(3), "x").shape[0]) is int


def test_visual_and_entities_are_the_specs_spelled_out():
    assert ObservationSpec.visual(84, 64, 3, "camera") == ObservationSpec(
        (84, 64, 3), (EQUIVARIANT, EQUIVARIANT, NONE), ObservationType.DEFAULT, "camera"
    )
    assert ObservationSpec.entities(6, 3, "items") == ObservationSpec(
        (6, 3), (DimensionProperty.VARIABLE_SIZE, NONE), ObservationType.DEFAULT, "items"
    )


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (
            lambda: ObservationSpec.vector(-1, "x"),
            ArgumentError,
            ("vector('x')", "size >= 0", "-1"),
        ),
        (lambda: ObservationSpec.vector(2.0, "x"), ArgumentTypeError, ("size", "float")),
        (lambda: ObservationSpec.vector(True, "x"), ArgumentTypeError, ("size", "bool")),
        (lambda: ObservationSpec.visual(8, 0, 3, "cam"), ArgumentError, ("width >= 1", "0")),
        (lambda: ObservationSpec.entities(4, "3", "it"), ArgumentTypeError, ("features", "'3'")),
    ],
)
def test_a_bad_size_names_the_argument(make, error, words):
    with pytest.raises(error) as raised:
        make()
    for word in words:
        assert word in str(raised.value)


def test_the_builtins_specs_are_unchanged():
    camera, goal = (
        GridWorld(grid_size=(4, 6), pixels_per_cell=2).behavior_specs["GridWorld"].observation_specs
    )
    assert camera == ObservationSpec(
        (8, 12, 3), (EQUIVARIANT, EQUIVARIANT, NONE), ObservationType.DEFAULT, "camera"
    )
    assert goal == ObservationSpec((2,), (NONE,), ObservationType.GOAL_SIGNAL, "goal")
    own, items = Collector(n_items=5).behavior_specs["Collector"].observation_specs
    assert own == ObservationSpec((4,), (NONE,), ObservationType.DEFAULT, "self")
    assert items == ObservationSpec(
        (5, 3), (DimensionProperty.VARIABLE_SIZE, NONE), ObservationType.DEFAULT, "items"
    )
    [runner] = Tag(observed_opponents=3).behavior_specs["Runner?team=0"].observation_specs
    assert runner == ObservationSpec((13,), (NONE,), ObservationType.DEFAULT, "self_and_opponents")


@pytest.mark.parametrize(
    ("value", "kwargs", "expected"),
    [
        (np.float32(0.5), {"above": 0, "below": 2}, 0.5),
        (np.int64(3), {}, 3.0),
        (0, {"above": 0, "at_least": True}, 0.0),
        (-1e300, {}, -1e300),
    ],
)
def test_check_float_accepts(value, kwargs, expected):
    result = check_float(value, "x", **kwargs)
    assert result == expected and type(result) is float


@pytest.mark.parametrize(
    ("value", "kwargs", "error", "message"),
    [
        (True, {}, ArgumentTypeError, "Expect x to be a number, actually: True"),
        ("1", {"kind": "a float"}, ArgumentTypeError, "Expect x to be a float, actually: '1'"),
        (1j, {}, ArgumentTypeError, "Expect x to be a number, actually: 1j"),
        (math.nan, {}, ArgumentError, "Expect x to be finite, actually: nan"),
        (math.inf, {"above": 0}, ArgumentError, "Expect x to be finite and > 0, actually: inf"),
        (0, {"above": 0}, ArgumentError, "Expect x to be finite and > 0, actually: 0"),
        (
            -0.5,
            {"above": 0, "at_least": True},
            ArgumentError,
            "Expect x to be finite and >= 0, actually: -0.5",
        ),
        (2, {"above": 0, "below": 2}, ArgumentError, "Expect 0 < x < 2, actually: 2"),
        (math.nan, {"above": 0, "below": 2}, ArgumentError, "Expect 0 < x < 2, actually: nan"),
        (3, {"below": 2}, ArgumentError, "Expect x to be finite and < 2, actually: 3"),
        (0, {"above": 0, "where": "Tag"}, ArgumentError, "Tag: Expect x to be finite and > 0"),
    ],
)
def test_check_float_refuses_naming_expected_and_given(value, kwargs, error, message):
    with pytest.raises(error, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        check_float(value, "x", **kwargs)


def test_argument_and_capability_helpers():
    """What these helpers' docstring examples asserted before issue 24 moved them here."""
    assert (check_seed(np.int64(7)), check_seed(None)) == (7, None)
    assert type(check_seed(np.int64(7))) is int
    with pytest.raises(ArgumentError, match="^Basic: Expect n_agents >= 1, actually: 0$"):
        check_int(0, "n_agents", 1, where="Basic")
    assert sorted(keyword_parameters(Basic))[:3] == ["max_steps", "n_agents", "reorder_agents"]
    assert keyword_parameters(lambda **kwargs: None) is None
    assert keyword_parameters(None) is None
    assert accepts_keyword(lambda n, seed=None: None, "seed")
    assert accepts_keyword(lambda **kwargs: None, "seed")
    assert not accepts_keyword(lambda n, *, other=None: None, "seed")
    assert not accepts_keyword(max, "seed")  # no readable signature


def test_step_guard_refuses_steps_after_a_committed_failure():
    guard = StepGuard("Demo")
    guard.enter("step")
    guard.committed = True
    guard.abort(KeyError("boom"))
    assert guard.failure == "step raised KeyError: 'boom'"
    with pytest.raises(EnvNotResetError, match="^Demo: the last step raised KeyError: 'boom'; "):
        guard.enter("step")
