"""The command line's small helpers, by example (these were doctests in the package)."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from zooport.cli.app import plain_text
from zooport.cli.common import format_table, install_hint, rollout, sample_action
from zooport.cli.targets import resolve_target
from zooport.cli.training import ModelInfo
from zooport.envs.builtin.basic import Basic


def test_install_hint_names_the_extras_packages():
    assert install_hint("plots") == 'pip install "matplotlib>=3.7" "pillow>=9"'


def test_format_table_pads_columns_two_spaces_apart():
    table = format_table(["env", "agents"], [["Basic", "1"], ["Tag", "5"]])
    assert table.splitlines() == ["env    agents", "Basic  1", "Tag    5"]


def test_sample_action_draws_only_allowed_values():
    rng = np.random.default_rng(0)
    assert sample_action(spaces.Discrete(3), np.array([0, 0, 1], np.int8), rng) == 2
    multi = sample_action(spaces.MultiDiscrete([2, 3]), np.array([1, 0, 0, 1, 0]), rng)
    assert multi.tolist() == [0, 1]


def test_rollout_counts_agents_steps_and_episodes():
    stats = rollout(Basic(n_agents=2, seed=0), 30, seed=0)
    assert (stats.agents, stats.agent_steps) == (2, 60) and stats.episodes > 0


def test_plain_text_drops_restructuredtext_markup():
    text = "Two teams of ``team_size`` players; see :class:`~zooport.envs.Tag`."
    assert plain_text(text) == "Two teams of team_size players; see Tag."


def test_model_info_round_trips_and_fills_options_as_trained():
    info = ModelInfo("Basic", {"n_agents": 2}, "vector", "Basic", "PPO", 0, 64, "0.1.0")
    assert ModelInfo.from_json(info.to_json(), "model.zip") == info
    assert info.options_for("Basic") == ({"n_agents": 2}, "vector", "Basic")
    assert info.options_for("Tag", api="parallel") == ({}, "parallel", None)


def test_resolve_target_checks_keywords_and_reads_the_registry():
    target = resolve_target("Basic", {"n_agents": 2})
    assert (target.make().n_agents, target.expected_reward) == (2, 0.9)
