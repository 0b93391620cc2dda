"""The support package's own cores and envs behave as their docstrings say.

The adapter tests compare against them, so a drift here would hide a defect there:
``Probe``'s rewards, restarts, masks and spawning, the reference loop's decision periods
(``tests/support/probes.py``), and the wrapper tests' envs under the upstream checkers
(``tests/support/wrappers.py``), and the allow-list that every upstream checker runs under
(``tests/support/checkers.py``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from zooport.envs.base_env import ActionTuple

from tests.support.checkers import run_allowing, run_parallel_api_test
from tests.support.pettingzoo_versions import parallel_seed_test
from tests.support.probes import RUNNER, WALKER, MaskedProbe, Probe, reference_rollout
from tests.support.wrappers import ball_balance, grid_world, mini, random_action, scouts, tag

# ---------------------------------------------------------------------- probes


def test_probe_rewards_lengths_and_restarts_are_as_documented():
    core = Probe(runner_lengths=(2, 0), walker_lengths=(0,), seed=0)
    core.reset()
    for _ in range(2):
        core.set_actions(RUNNER, ActionTuple(discrete=np.array([[1], [2]])))
        core.set_actions(WALKER, ActionTuple(continuous=np.array([[0.5, -0.5]])))
        core.step()
    decision, terminal = core.get_steps(RUNNER)
    assert terminal.agent_id.tolist() == [0] and terminal.reward.tolist() == [1.0]
    assert terminal.obs[0][0].tolist() == [2.0, 0.0, 0.0]
    assert decision.agent_id.tolist() == [0, 1]  # runner 0 restarted in the same step
    assert decision.obs[0][0].tolist() == [0.0, 0.0, 0.0]
    assert decision.reward.tolist() == [0.0, 2.0] and decision.group_reward.tolist() == [0, 0.5]
    assert core.get_steps(WALKER)[0].reward.tolist() == [10.0]
    assert core.applied[RUNNER][-1].tolist() == [[1], [2]]
    assert core.applied[WALKER][-1].tolist() == [[0.5, -0.5]]


def test_probe_masks_and_spawning():
    core = MaskedProbe(runner_lengths=(0, 0), walker_lengths=(), spawn_at=1, seed=0)
    core.reset()
    mask = core.get_steps(RUNNER)[0].action_mask[0]
    assert mask.tolist() == [[False, False, False], [False, False, True]]
    core.step()
    assert core.get_steps(RUNNER)[0].agent_id.tolist() == [0, 1, 2]


def test_reference_rollout_follows_decision_periods():
    core = Probe(runner_lengths=(0,), walker_lengths=(0,), walker_period=2, seed=0)
    steps = reference_rollout(core, seed=0, steps=2)
    assert steps[1][(WALKER, 1)][1:] == (0.0, False, False, False)
    assert steps[2][(WALKER, 1)][1:] == (20.0, False, False, True)
    assert steps[2][(RUNNER, 0)][1] == 1.0


# ---------------------------------------------------------------------- wrappers


@pytest.mark.parametrize("factory", [mini, scouts, tag, grid_world, ball_balance])
def test_helper_envs_pass_the_upstream_checkers(factory):
    run_parallel_api_test(factory())
    parallel_seed_test(lambda: factory(), num_cycles=20)


def test_mini_pursuit_semantics():
    env = mini(catch=2.9)  # every prey is within reach of a hunter at once
    obs, _ = env.reset(seed=0)
    assert obs["hunter_0"].shape == (11,) and env.observation_space("prey_0").shape == (11,)
    _, rewards, terms, truncs, _ = env.step(
        {a: random_action(env.action_space(a), np.random.default_rng(0)) for a in env.agents}
    )
    assert terms == dict.fromkeys(env.possible_agents, True) and not any(truncs.values())
    assert rewards["prey_0"] == -1.0 and env.agents == []
    env = mini(max_steps=1, catch=0.0)
    env.reset(seed=0)
    _, _, terms, truncs, _ = env.step({a: 0 if "prey" in a else np.zeros(2) for a in env.agents})
    assert all(truncs.values()) and not any(terms.values())


def test_scouts_rows_are_absolute_and_flagged():
    env = scouts()
    obs, _ = env.reset(seed=1)
    core = env.core
    rows = obs["scout_0"][2:].reshape(-1, 3)
    seen = np.linalg.norm(core.beacons - core.pos[0], axis=1) <= core.view
    assert rows[:, 2].tolist() == seen.astype(float).tolist()
    np.testing.assert_allclose(rows[seen, :2], core.beacons[seen])


# ---------------------------------------------------------------------- checkers


def _warn(*messages: str) -> None:
    for message in messages:
        warnings.warn(message, UserWarning, stacklevel=2)


def test_run_allowing_returns_the_patterns_a_warning_matched():
    assert run_allowing([r"^known", "unused"], _warn, "known issue") == {"^known"}
    assert run_allowing([], _warn) == set()


def test_run_allowing_fails_on_a_warning_no_pattern_explains():
    with pytest.raises(AssertionError, match=r"unexpected warnings: \['new issue'\]"):
        run_allowing([r"^known"], _warn, "known issue", "new issue")
    with pytest.raises(AssertionError, match="an issue"):
        run_allowing([r"^issue"], _warn, "an issue")  # patterns are regexes: ^ anchors
