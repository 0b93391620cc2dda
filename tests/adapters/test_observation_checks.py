"""Observations that disagree with their spec are an ObservationError in every adapter.

A core (``Tamper`` over ``Basic``, whose one observation is ``position``, shape (20,)) that
sends observations of another shape, another number of observations, or batches whose rows
disagree with their agent ids, in its DecisionSteps or its TerminalSteps, must never be
broadcast into the declared shape: every adapter (and the vector path) raises an
:class:`~zooport.errors.ObservationError` naming the behaviour, the observation (index and
name) and the expected and given shapes. Before, the Parallel adapter handed out
``[7, 7, 7]`` for ``[7]`` and other shapes leaked numpy's broadcast ``ValueError``.
"""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.adapters.spaces import ObservationLayout
from zooport.envs.base_env import (
    DecisionSteps,
    ObservationSpec,
    ObservationType,
    TerminalSteps,
)
from zooport.envs.builtin.basic import Basic
from zooport.envs.exception import UnityObservationException
from zooport.errors import ObservationError, SpecError

from tests.support.adapters import ADAPTERS
from tests.support.paths import BENCHMARKS
from tests.support.raw_cores import CoreProxy, Tamper, Walkers, drive, with_obs, with_rows


def _obs(kind, n):
    """(tamper function, message) pairs: what the core sends and what the error must say."""
    prefix = re.escape(f"behavior 'Basic': {kind} ")
    position = prefix + re.escape("observation 0 ('position') ")
    return {
        "narrow": (
            lambda s: with_obs(s, [s.obs[0][:, :1]]),
            position + re.escape(f"has shape ({n}, 1), expected ({n}, 20)"),
        ),
        "wide": (
            lambda s: with_obs(s, [np.pad(s.obs[0], ((0, 0), (0, 1)))]),
            position + re.escape(f"has shape ({n}, 21), expected ({n}, 20)"),
        ),
        "rank": (
            lambda s: with_obs(s, [s.obs[0][:, :, None]]),
            position + re.escape(f"has shape ({n}, 20, 1), expected ({n}, 20)"),
        ),
        "extra observation": (
            lambda s: with_obs(s, [s.obs[0], s.obs[0]]),
            prefix + re.escape("has 2 observations, expected 1 (one per observation spec: "),
        ),
        "no observation": (
            lambda s: with_obs(s, []),
            prefix + re.escape("has 0 observations, expected 1"),
        ),
        "rows": (
            lambda s: with_obs(s, [s.obs[0][:-1]]),
            position + re.escape(f"has {n - 1} rows, but the batch has {n} agent ids"),
        ),
        "rewards": (
            lambda s: with_rows(s, reward=s.reward[:-1]),
            prefix + re.escape(f"has {n} agent ids but reward of shape ({n - 1},); expected"),
        ),
        "group ids": (
            lambda s: with_rows(s, group_id=np.zeros(n + 1, np.int32)),
            prefix + re.escape(f"has {n} agent ids but group_id of shape ({n + 1},)"),
        ),
    }


DECISION_CASES = list(_obs("DecisionSteps", 3))
TERMINAL_CASES = ["narrow", "extra observation", "rows", "interrupted"]


@pytest.mark.parametrize("case", DECISION_CASES)
@pytest.mark.parametrize("adapter", list(ADAPTERS))
def test_decision_observations_that_disagree_with_the_spec(adapter, case):
    n, make_adapter, _ = ADAPTERS[adapter]
    tamper, message = _obs("DecisionSteps", n)[case]
    core = Tamper(Basic(n_agents=n, max_steps=50, seed=0), "Basic", decision=tamper, after=2)
    env = make_adapter(core)
    with pytest.raises(ObservationError, match=message) as info:
        drive(env, 6)
    assert core.steps == 2  # raised at the first batch that disagrees, during a step
    assert isinstance(info.value, SpecError | UnityObservationException | ValueError)


@pytest.mark.parametrize("case", TERMINAL_CASES)
@pytest.mark.parametrize("adapter", list(ADAPTERS))
def test_terminal_observations_that_disagree_with_the_spec(adapter, case):
    n, make_adapter, _ = ADAPTERS[adapter]
    tamper = {
        "narrow": lambda s: with_obs(s, [s.obs[0][:, :1]]),
        "extra observation": lambda s: with_obs(s, [s.obs[0], s.obs[0]]),
        "rows": lambda s: with_obs(s, [s.obs[0][:-1]]),
        "interrupted": lambda s: with_rows(s, interrupted=np.zeros(len(s) + 1, bool)),
    }[case]
    position = re.escape("behavior 'Basic': TerminalSteps observation 0 ('position') ")
    message = {
        "narrow": position + r"has shape \((\d+), 1\), expected \(\1, 20\)",
        "extra observation": re.escape("TerminalSteps has 2 observations, expected 1"),
        "rows": position + r"has (\d+) rows, but the batch has \d+ agent ids",
        "interrupted": r"TerminalSteps has (\d+) agent ids but interrupted of shape \(\d+,\)",
    }[case]
    # Basic ends every episode after 4 steps at the latest (interrupted).
    core = Tamper(Basic(n_agents=n, max_steps=4, seed=0), "Basic", terminal=tamper)
    with pytest.raises(ObservationError, match=message):
        drive(make_adapter(core), 30)
    assert core.steps <= 4


@pytest.mark.parametrize("adapter", list(ADAPTERS))
def test_observations_that_disagree_at_reset(adapter):
    n, make_adapter, _ = ADAPTERS[adapter]
    tamper, message = _obs("DecisionSteps", n)["narrow"]
    core = Tamper(Basic(n_agents=n, seed=0), "Basic", decision=tamper)
    with pytest.raises(ObservationError, match=message):
        drive(make_adapter(core), 1)


def test_the_parallel_adapter_no_longer_broadcasts_one_value_into_three():
    """The issue's example: (3,) declared, (1,) sent, [7, 7, 7] handed out before."""
    spec = ObservationSpec((3,), (), ObservationType.DEFAULT, "state")
    core = Tamper(
        Walkers(spec), "Walker", decision=lambda s: with_obs(s, [np.full((len(s), 1), 7.0)])
    )
    with pytest.raises(ObservationError, match=r"'Walker': DecisionSteps observation 0 "
                       r"\('state'\) has shape \(2, 1\), expected \(2, 3\)"):  # fmt: skip
        PettingZooParallelEnv(core).reset(seed=0)


def test_checked_returns_a_batch_that_agrees_unchanged():
    specs = [
        ObservationSpec((2,), (), ObservationType.DEFAULT, "a"),
        ObservationSpec((2, 2, 1), (), ObservationType.DEFAULT, "camera"),
    ]
    layout = ObservationLayout(specs, name="B")
    obs = [np.ones((3, 2)), np.zeros((3, 2, 2, 1))]
    steps = TerminalSteps(obs, np.zeros(3), np.zeros(3, bool), np.arange(3), np.zeros(3),
                          np.zeros(3))  # fmt: skip
    assert layout.checked(steps, terminal=True) is steps
    # An empty batch may come with any observations: nothing is read from it.
    empty = DecisionSteps([], np.zeros(0), np.zeros(0, np.int32), None, np.zeros(0),
                          np.zeros(0))  # fmt: skip
    assert layout.checked(empty) is empty


def test_checked_turns_a_batch_of_lists_into_arrays():
    specs = [
        ObservationSpec((2,), (), ObservationType.DEFAULT, "a"),
        ObservationSpec((2, 2, 1), (), ObservationType.DEFAULT, "camera"),
    ]
    layout = ObservationLayout(specs, name="B")
    listed = DecisionSteps([[[1, 2]], [[[[0], [1]], [[2], [3]]]]], [0.5], [7],
                           [[[False, True]]], [3], [0.25])  # fmt: skip
    checked = layout.checked(listed)
    assert isinstance(checked, DecisionSteps) and checked is not listed
    assert [o.shape for o in checked.obs] == [(1, 2), (1, 2, 2, 1)]
    assert checked.obs[1].dtype == np.float32 and checked.obs[1].ravel().tolist() == [0, 1, 2, 3]
    assert checked.reward.tolist() == [0.5] and checked.agent_id.tolist() == [7]
    assert checked.group_id.tolist() == [3] and checked.group_reward.tolist() == [0.25]
    assert checked.action_mask[0].dtype == bool and checked.action_mask[0].tolist() == [
        [False, True]
    ]
    short_mask = DecisionSteps([np.ones((2, 2)), np.zeros((2, 2, 2, 1))], np.zeros(2),
                               np.arange(2), [np.zeros((1, 3), bool)], np.zeros(2),
                               np.zeros(2))  # fmt: skip
    with pytest.raises(ObservationError, match=r"but action_mask\[0\] of shape \(1, 3\)"):
        layout.checked(short_mask)


def _lists(steps):
    fields = ["agent_id", "reward", "group_id", "group_reward"]
    if isinstance(steps, TerminalSteps):
        fields.append("interrupted")
    return with_rows(steps, **{f: np.asarray(getattr(steps, f)).tolist() for f in fields})


@pytest.mark.parametrize("adapter", list(ADAPTERS))
def test_batches_built_from_lists_give_what_arrays_give(adapter):
    """ML-Agents' own test envs build steps with ``agent_id=list(...)``, and mlagents_envs
    0.28 hands ``group_id`` out as a list: every adapter reads them as arrays."""
    n, make_adapter, _ = ADAPTERS[adapter]
    listed = Tamper(Basic(n_agents=n, max_steps=4, seed=0), "Basic", decision=_lists,
                    terminal=_lists)  # fmt: skip
    expected = drive(make_adapter(CoreProxy(Basic(n_agents=n, max_steps=4, seed=0))), 20)
    assert data_equivalence(drive(make_adapter(listed), 20), expected)


def test_two_behaviours_name_the_one_that_disagrees():
    from zooport.envs.builtin.tag import Tag

    def narrow(s):
        return with_obs(s, [s.obs[0][:, :4]])

    core = Tamper(Tag(seed=0), "Tagger?team=1", decision=narrow, after=1)
    env = PettingZooParallelEnv(core)
    with pytest.raises(
        ObservationError,
        match=re.escape("behavior 'Tagger?team=1': DecisionSteps observation 0 "
                        "('self_and_opponents') has shape (2, 4), expected (2, 10)"),
    ):  # fmt: skip
        drive(env, 4)


def test_the_cost_micro_benchmark_runs():
    """``benchmarks/observation_check.py`` (its numbers are the lead's to take; none is
    asserted) prints one row per N."""
    script = BENCHMARKS / "observation_check.py"
    result = subprocess.run(
        [sys.executable, str(script), "--quick"], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if re.match(r"\| \d+ \|", line)]
    assert [row.split("|")[1].strip() for row in rows] == ["64", "1024"]
