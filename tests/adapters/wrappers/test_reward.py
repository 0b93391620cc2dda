"""RewardShaping, TeamReward, IndividualDone: hand-computed values on a scripted env, zooport's
group rewards on Tag, and the shared contract on a zooport env and a non-zooport env."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from zooport.adapters.wrappers import IndividualDone, RewardShaping, StepData, TeamReward
from zooport.adapters.wrappers.reward import filler_action
from zooport.errors import ArgumentError

from tests.support.wrappers import Scripted, check_contract, mini, tag

TEAMS = {"red_0": None, "red_1": None, "blue_0": None, "blue_1": None}  # rewards 1, 2, 3, 4


def step_all(env, action=0):
    return env.step(dict.fromkeys(env.agents, action))


# ---------------------------------------------------------------------- RewardShaping


def test_weighted_components_and_schedules_by_hand():
    seen: list[StepData] = []

    def bonus(data):
        seen.append(data)
        return {a: 10.0 * i for i, a in enumerate(data.agents)}

    env = RewardShaping(
        Scripted(TEAMS),
        {"bonus": bonus, "const": lambda d: 2.0, "array": lambda d: np.arange(len(d.agents))},
        {"env_reward": 0.5, "bonus": lambda t: float(t), "array": -1.0},
    )
    env.reset()
    for t in (1, 2):
        _, rewards, _, _, infos = step_all(env)
        expected = [0.5 * r + t * 10.0 * i + 2.0 - i for i, r in enumerate([1, 2, 3, 4])]
        assert list(rewards.values()) == expected
        assert all(type(r) is float for r in rewards.values())
    record = infos["red_1"]["reward_shaping"]
    assert record == {
        "components": {"env_reward": 2.0, "bonus": 10.0, "const": 2.0, "array": 1.0},
        "coefficients": {"env_reward": 0.5, "bonus": 2.0, "const": 1.0, "array": -1.0},
        "reward": expected[1],
    }
    assert (seen[-1].episode_step, seen[-1].total_steps, seen[-1].agents[0]) == (2, 2, "red_0")
    env.reset()
    step_all(env)
    assert (seen[-1].episode_step, seen[-1].total_steps) == (1, 3)


@pytest.mark.parametrize(
    ("reduction", "shared"), [("mean", 2.5), ("sum", 10.0), ("max", 4.0), ("min", 1.0)]
)
def test_reductions_share_one_reward(reduction, shared):
    env = RewardShaping(Scripted(TEAMS), {}, reduction=reduction)
    env.reset()
    _, rewards, _, _, infos = step_all(env)
    assert rewards == dict.fromkeys(TEAMS, shared)
    assert infos["blue_1"]["reward_shaping"]["shared_reward"] == shared
    assert infos["blue_1"]["reward_shaping"]["reward"] == 4.0


def test_only_selected_agents_are_shaped():
    env = RewardShaping(Scripted(TEAMS), {"c": lambda d: 1.0}, reduction="sum", agents="blue")
    env.reset()
    _, rewards, _, _, infos = step_all(env)
    assert rewards == {"red_0": 1.0, "red_1": 2.0, "blue_0": 9.0, "blue_1": 9.0}
    assert infos["red_0"] == {} and "reward_shaping" in infos["blue_0"]


def test_bad_components_and_coefficients():
    inner = Scripted(TEAMS)
    with pytest.raises(
        ValueError,
        match=r"unknown components \['bonsu'\]; components: "
        r"\['env_reward', 'bonus'\]",
    ):
        RewardShaping(inner, {"bonus": lambda d: 0.0}, {"bonsu": 1.0})
    with pytest.raises(ValueError, match="other than 'env_reward'"):
        RewardShaping(inner, {"env_reward": lambda d: 0.0})
    with pytest.raises(TypeError, match="component 'x' to be a callable"):
        RewardShaping(inner, {"x": 1.0})
    with pytest.raises(TypeError, match="coefficient 'env_reward' to be a float"):
        RewardShaping(inner, {}, {"env_reward": True})
    with pytest.raises(ValueError, match="reduction to be one of"):
        RewardShaping(inner, {}, reduction="median")
    for component, message in [
        (lambda d: np.zeros(3), r"returned shape \(3,\); expected a scalar"),
        (lambda d: {"red_0": 1.0}, r"no value for agents \['red_1', 'blue_0', 'blue_1'\]"),
    ]:
        env = RewardShaping(Scripted(TEAMS), {"c": component})
        env.reset()
        with pytest.raises(ValueError, match=message):
            step_all(env)
    env = RewardShaping(Scripted(TEAMS), {}, {"env_reward": lambda t: "fast"})
    env.reset()
    with pytest.raises(TypeError, match="returned 'fast' at total_steps=1"):
        step_all(env)


@pytest.mark.parametrize("factory", [tag, mini])
def test_reward_shaping_contract(factory):
    components = {
        "alive": lambda d: 1.0,
        "obs": lambda d: [float(d.observations[a][0]) for a in d.agents],
    }
    check_contract(
        lambda: RewardShaping(factory(), components, {"alive": lambda t: 0.9**t}, reduction="mean")
    )


# ---------------------------------------------------------------------- TeamReward


@pytest.mark.parametrize(
    ("reduction", "red", "blue"), [("sum", 3.0, 7.0), ("mean", 1.5, 3.5), ("max", 2.0, 4.0)]
)
def test_team_reward_by_hand(reduction, red, blue):
    env = TeamReward(Scripted(TEAMS), reduction)
    env.reset()
    _, rewards, _, _, infos = step_all(env)
    assert rewards == {"red_0": red, "red_1": red, "blue_0": blue, "blue_1": blue}
    assert infos["blue_0"] == {"team_reward": blue, "individual_reward": 3.0}


def test_team_reward_from_zooport_group_rewards():
    env = TeamReward(tag(tag_radius=0.85), "max", source="group_reward")
    raw = tag(tag_radius=0.85)  # runner_0 is tagged in the first step
    env.reset(seed=0)
    raw.reset(seed=0)
    tagged = False
    for _ in range(30):
        _, rewards, _, _, infos = step_all(env)
        _, raw_rewards, _, _, raw_infos = step_all(raw)
        for agent in raw_infos:
            group = max(raw_infos[a]["group_reward"] for a in raw_infos if a[:3] == agent[:3])
            assert (
                rewards[agent] == group
                and infos[agent]["individual_reward"] == (raw_rewards[agent])
            )
        tagged |= any(r > 0 for a, r in rewards.items() if a.startswith("tagger"))
    assert tagged  # the group reward was not always zero


def test_team_reward_teams_and_errors():
    env = TeamReward(Scripted(TEAMS), teams={"red_0": 1, "red_1": 2, "blue_0": 1, "blue_1": 2})
    env.reset()
    assert step_all(env)[1] == {"red_0": 4.0, "red_1": 6.0, "blue_0": 4.0, "blue_1": 6.0}
    env = TeamReward(Scripted(TEAMS), teams={"red_0": 1})
    env.reset()
    with pytest.raises(KeyError, match="agent 'red_1' is in no team"):
        step_all(env)
    env = TeamReward(Scripted(TEAMS), source="gold")
    env.reset()
    with pytest.raises(ArgumentError, match="has no 'gold' key"):
        step_all(env)
    with pytest.raises(ValueError, match="reduction to be one of"):
        TeamReward(Scripted(TEAMS), "none")


@pytest.mark.parametrize("factory", [tag, mini])
def test_team_reward_contract(factory):
    check_contract(lambda: TeamReward(factory(), "mean"))


# ---------------------------------------------------------------------- IndividualDone

ENDS = {"red_0": (2, "term"), "red_1": None, "blue_0": (4, "trunc"), "blue_1": None}


def test_a_team_done_finishes_every_member():
    inner = Scripted(ENDS)
    env = IndividualDone(inner, "any")
    env.reset()
    step_all(env)
    _, _, terms, truncs, _ = step_all(env)
    assert terms == {"red_0": True, "red_1": False, "blue_0": False, "blue_1": False}
    assert truncs == {"red_0": False, "red_1": True, "blue_0": False, "blue_1": False}
    assert env.agents == ["blue_0", "blue_1"] and "red_1" in inner.agents
    observations, rewards, terms, truncs, infos = step_all(env, 1)
    assert inner.received[-1] == {"blue_0": 1, "blue_1": 1, "red_1": 0}  # red_1 filled in
    assert set(observations) == set(rewards) == set(terms) == {"blue_0", "blue_1"}
    _, _, terms, truncs, _ = step_all(env)
    assert truncs == {"blue_0": True, "blue_1": True} and env.agents == []


def test_individual_done_options():
    env = IndividualDone(Scripted(ENDS), "any", end_live_as="terminated")
    env.reset()
    step_all(env)
    _, _, terms, truncs, _ = step_all(env)
    assert terms["red_1"] and not truncs["red_1"]
    env = IndividualDone(Scripted(ENDS), "all")
    env.reset()
    step_all(env)
    _, _, terms, truncs, _ = step_all(env)
    assert not truncs["red_1"] and env.agents == ["red_1", "blue_0", "blue_1"]
    with pytest.raises(ValueError, match="end_live_as"):
        IndividualDone(Scripted(ENDS), end_live_as="gone")


@pytest.mark.parametrize("factory", [tag, mini])
def test_individual_done_contract(factory):
    check_contract(
        lambda: IndividualDone(factory(**({"tag_radius": 0.5} if factory is tag else {})))
    )


def test_filler_actions():
    assert filler_action(spaces.Discrete(3, start=1)) == 1
    assert filler_action(spaces.Box(-1.0, 2.0, (2,))).tolist() == [0.0, 0.0]
    assert filler_action(spaces.MultiDiscrete([2, 3])).tolist() == [0, 0]
    assert filler_action(spaces.Dict(a=spaces.Discrete(2), b=spaces.Box(0.5, 1.0)))["b"] == 0.5
