"""MultiAgentDriver, the driver family's engine, alone (no PettingZoo front end).

Every expected value follows from ``Probe``'s documented outputs (``tests/support/probes.py``):
runner slot i earns ``1 + i`` per core step and a group reward of 0.5, walker slot i earns
``10 + i``; an observation is ``[steps in the episode, slot, agent id]``; ids are handed out
runners first. The driver names the agents, steps the core until a live agent reports,
applies the termination rule and ``max_cycles``, admits spawned agents (or drops them in the
step the episode ends), ignores or refuses stale actions and fills default actions.
"""

from __future__ import annotations

import numpy as np
import pytest

from zooport.adapters.multi_agent_driver import MultiAgentDriver
from zooport.adapters.options import DriverOptions
from zooport.errors import ActionError, EnvNotResetError

from tests.support.probes import RUNNER, WALKER, Probe


def driver(core: Probe, **options) -> MultiAgentDriver:
    d = MultiAgentDriver(core, DriverOptions(**options))
    d.reset(seed=0)
    return d


def step(d: MultiAgentDriver, **overrides):
    """One step with action 1 (runners) or [0.5, -0.5] (walkers) for every live agent."""
    actions = {a: 1 if a.startswith("runner") else [0.5, -0.5] for a in d.agents}
    return d.step({**actions, **overrides})


def table(result) -> dict[str, tuple]:
    """{agent: (obs, reward, terminated, truncated, decided)} of one step's outputs."""
    return {
        a: (
            result.observations[a].tolist(),
            result.rewards[a],
            result.terminations[a],
            result.truncations[a],
            result.infos[a]["decided"],
        )
        for a in result.observations
    }


# ---------------------------------------------------------------------- reset and steps


def test_reset_names_the_agents_behaviour_by_behaviour_in_id_order():
    d = MultiAgentDriver(Probe(runner_lengths=(0, 0), walker_lengths=(0,), seed=0))
    observations, infos = d.reset(seed=0)
    assert d.agents == d.possible_agents == ["runner_0", "runner_1", "walker_2"]
    assert {a: o.tolist() for a, o in observations.items()} == {
        "runner_0": [0.0, 0.0, 0.0],
        "runner_1": [0.0, 1.0, 1.0],
        "walker_2": [0.0, 0.0, 2.0],
    }
    assert infos["runner_1"] == {"decided": True, "group_id": 1, "group_reward": 0.0}
    assert infos["walker_2"] == {"decided": True, "group_id": 0, "group_reward": 0.0}
    assert d.names.lookup("walker_2") == (WALKER, 2) and d.group_of("runner_1").name == RUNNER


def test_actions_reach_the_core_as_one_batch_per_behaviour():
    core = Probe(runner_lengths=(0, 0), walker_lengths=(0,), seed=0)
    d = driver(core)
    d.step({"walker_2": [0.25, -1.0], "runner_1": 2, "runner_0": 0})
    assert core.applied[RUNNER][-1].tolist() == [[0], [2]]
    assert core.applied[WALKER][-1].tolist() == [[0.25, -1.0]]


def test_an_agent_without_a_decision_keeps_its_observation_and_gets_reward_zero():
    d = driver(Probe(runner_lengths=(0,), walker_lengths=(0,), walker_period=2, seed=0))
    assert table(step(d)) == {
        "runner_0": ([1.0, 0.0, 0.0], 1.0, False, False, True),
        "walker_1": ([0.0, 0.0, 1.0], 0.0, False, False, False),
    }
    # Its two steps' rewards arrive summed with its decision.
    assert table(step(d))["walker_1"] == ([2.0, 0.0, 1.0], 20.0, False, False, True)


def test_one_step_advances_the_core_until_a_live_agent_reports():
    core = Probe(runner_lengths=(), walker_lengths=(0,), walker_period=3, seed=0)
    d = driver(core)
    assert table(step(d)) == {"walker_0": ([3.0, 0.0, 0.0], 30.0, False, False, True)}
    assert core.t == 3 and d.cycles == 1


# ---------------------------------------------------------------------- the episode's end


def test_termination_any_ends_the_episode_and_truncates_the_live_agents():
    d = driver(
        Probe(runner_lengths=(2, 0), walker_lengths=(0,), walker_period=2, seed=0),
        termination_mode="any",
    )
    step(d)
    assert table(step(d)) == {
        "runner_0": ([2.0, 0.0, 0.0], 1.0, True, False, False),  # its terminal step
        "runner_1": ([2.0, 1.0, 1.0], 2.0, False, True, True),
        "walker_2": ([2.0, 0.0, 2.0], 20.0, False, True, True),
    }
    assert d.episode_over and d.agents == []
    assert d.finished == ["runner_0", "runner_1", "walker_2"]
    with pytest.raises(EnvNotResetError, match="the episode is over"):
        step(d)


def test_termination_all_waits_for_every_agent():
    d = driver(Probe(runner_lengths=(1, 3), walker_lengths=(), restart=False, seed=0))
    first = step(d)
    assert first.terminations == {"runner_0": True, "runner_1": False}
    assert d.agents == ["runner_1"] and not d.episode_over
    assert list(step(d).rewards) == ["runner_1"]  # a finished agent reports no more
    last = step(d)
    assert (last.terminations, last.truncations) == ({"runner_1": True}, {"runner_1": False})
    assert d.episode_over and d.agents == []


def test_max_cycles_truncates_every_live_agent():
    d = driver(Probe(runner_lengths=(0, 0), walker_lengths=(), seed=0), max_cycles=2)
    step(d)
    assert not d.episode_over
    result = step(d)
    assert result.truncations == {"runner_0": True, "runner_1": True}
    assert result.terminations == {"runner_0": False, "runner_1": False}
    assert result.rewards == {"runner_0": 1.0, "runner_1": 2.0} and d.episode_over


# ---------------------------------------------------------------------- spawned agents


def test_a_spawned_agent_joins_the_episode_in_the_step_it_appears():
    d = driver(Probe(runner_lengths=(0, 0), walker_lengths=(), spawn_at=2, seed=0))
    step(d)
    result = step(d)
    assert table(result)["runner_2"] == ([0.0, 2.0, 2.0], 0.0, False, False, True)
    assert d.new_agents == ["runner_2"]
    assert d.agents == d.possible_agents == ["runner_0", "runner_1", "runner_2"]
    assert step(d).rewards == {"runner_0": 1.0, "runner_1": 2.0, "runner_2": 3.0}


def test_an_agent_that_appears_in_the_last_step_is_not_part_of_the_episode():
    d = driver(Probe(runner_lengths=(0, 0), walker_lengths=(), spawn_at=2, seed=0), max_cycles=2)
    step(d)
    result = step(d)
    assert list(result.observations) == ["runner_0", "runner_1"]
    assert result.truncations == {"runner_0": True, "runner_1": True}
    assert d.possible_agents == ["runner_0", "runner_1"] and d.new_agents == []
    assert d.group_of("runner_0").n == 2  # the dropped agent's slot is gone


@pytest.mark.parametrize("mode", ["all", "majority"])
def test_agents_are_the_agents_whose_group_says_they_are_live(mode):
    # One record of who is live (the groups' flags): ``agents`` and ``is_live`` read it the
    # same way through finishes, a spawn and the final truncation.
    core = Probe((3, 0, 5), (0, 6), walker_period=2, spawn_at=4, restart=False, seed=0)
    d = driver(core, termination_mode=mode, max_cycles=8)
    seen = []
    while not d.episode_over:
        flags = [a for a in d.possible_agents if d.group_of(a).live[d.group_of(a).slot_of[a]]]
        assert d.agents == flags == [a for a in d.possible_agents if d.is_live(a)]
        seen.append(len(d.agents))
        step(d)
    assert d.agents == [] and not any(d.is_live(a) for a in d.possible_agents)
    assert "runner_5" in d.possible_agents and len(set(seen)) > 1  # joined and left


# ---------------------------------------------------------------------- stale, unknown, missing


def finished_runner_0(**options) -> tuple[Probe, MultiAgentDriver]:
    """A driver whose runner_0 terminated in its first step (the core restarted it)."""
    core = Probe(runner_lengths=(1, 0), walker_lengths=(), seed=0)
    d = driver(core, **options)
    step(d)
    assert d.agents == ["runner_1"]
    return core, d


def test_a_stale_action_is_ignored_and_counted():
    core, d = finished_runner_0()
    result = d.step({"runner_0": 2, "runner_1": 0})
    assert d.ignored_actions == 1 and list(result.rewards) == ["runner_1"]
    # The restarted agent's next episode is not this episode's: the core got a zero action.
    assert core.applied[RUNNER][-1].tolist() == [[0], [0]]


def test_a_stale_action_is_refused_with_stale_actions_raise_and_nothing_changes():
    core, d = finished_runner_0(stale_actions="raise")
    with pytest.raises(ActionError, match=r"finished earlier in the episode \['runner_0'\]"):
        d.step({"runner_0": 2, "runner_1": 0})
    assert core.t == 1 and d.ignored_actions == 0 and d.cycles == 1


def test_a_name_that_never_was_an_agent_of_the_episode_is_an_error():
    _, d = finished_runner_0()
    with pytest.raises(ActionError, match=r"not in the episode \['runner_7'\]"):
        d.step({"runner_7": 0, "runner_1": 0})


def test_a_live_agent_without_an_action_is_an_error_unless_a_default_is_set():
    d = driver(Probe(runner_lengths=(0, 0), walker_lengths=(0,), seed=0))
    with pytest.raises(ActionError, match=r"no action for live agents \['walker_2'\]"):
        d.step({"runner_0": 1, "runner_1": 1})
    assert d.cycles == 0


@pytest.mark.parametrize(
    "default, runner, walker",
    [
        ("zero", [[0], [2]], [[0.0, 0.0]]),
        ({RUNNER: 1, WALKER: [1.0, 0.5]}, [[1], [2]], [[1.0, 0.5]]),
    ],
    ids=["zero", "per-behaviour"],
)
def test_default_actions_fill_the_agents_without_one(default, runner, walker):
    core = Probe(runner_lengths=(0, 0), walker_lengths=(0,), seed=0)
    d = driver(core, default_action=default)
    d.step({"runner_1": 2})
    assert core.applied[RUNNER][-1].tolist() == runner
    assert np.allclose(core.applied[WALKER][-1], walker)
