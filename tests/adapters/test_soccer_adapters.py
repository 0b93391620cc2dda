"""One behaviour in two teams through every multi-agent adapter, with both naming schemes.

Soccer's teams are ``Soccer?team=0`` and ``Soccer?team=1``: before the team joined the default
agent-name prefix, every adapter below refused the core (SpecError: both teams would name
their agents ``soccer_<id>``). A goal is forced by placing the ball in front of a goal, so
the infos of the step are hand-computed: +1 / -1 group rewards, group ids 1 / 2.
"""

from __future__ import annotations

import numpy as np
import pytest

import zooport
from zooport.adapters.multi_agent_task import MultiAgentTask, PettingZooTask
from zooport.adapters.pettingzoo_aec import PettingZooAECEnv
from zooport.adapters.pettingzoo_envs import soccer_v0
from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.adapters.wrappers import FoldAgents, TeamReward
from zooport.envs.builtin.soccer import Soccer

from tests.support.probes import agent_policy, reference_rollout

BLUE, PURPLE = Soccer.behavior_names
NAMES = {
    None: ["soccer_0_0", "soccer_0_1", "soccer_1_2", "soccer_1_3"],
    "mlagents": [
        "Soccer?team=0?agent_id=0", "Soccer?team=0?agent_id=1",
        "Soccer?team=1?agent_id=2", "Soccer?team=1?agent_id=3",
    ],
}  # fmt: skip
KEYS = [(BLUE, 0), (BLUE, 1), (PURPLE, 2), (PURPLE, 3)]
STILL = np.zeros(2, np.int64)  # no push on either axis


def goal_for_team_0(core):
    """Players far from the ball, the ball rolling into team 1's goal in the next step."""
    core.player_pos[0] = [[-0.6, 0.45], [-0.6, -0.45]]
    core.player_pos[1] = [[0.6, 0.45], [0.6, -0.45]]
    core.player_vel[:] = 0
    core.ball_pos[:] = [0.97, 0.1]
    core.ball_vel[:] = [0.05, 0.0]


def expected_infos(names):
    """The infos of the goal step: terminal steps (not decisions), each team's group reward."""
    return {
        name: {"decided": False, "group_id": 1 + (i >= 2), "group_reward": 1.0 if i < 2 else -1.0}
        for i, name in enumerate(names)
    }


EXPECTED_REWARDS = [1.0, 1.0, -1.0, -1.0]


# ---------------------------------------------------------------------- each adapter at the goal


@pytest.mark.parametrize("agent_name", [None, "mlagents"])
@pytest.mark.parametrize(
    "make", [PettingZooParallelEnv, soccer_v0.parallel_env, "zooport.make"],
    ids=["PettingZooParallelEnv", "soccer_v0.parallel_env", "zooport.make"],
)  # fmt: skip
def test_parallel_infos_at_the_goal(make, agent_name):
    if make is PettingZooParallelEnv:
        env = PettingZooParallelEnv(Soccer(seed=0), agent_name=agent_name)
    elif make == "zooport.make":
        env = zooport.make("Soccer", seed=0, agent_name=agent_name)
    else:
        env = make(seed=0, agent_name=agent_name)
    names = NAMES[agent_name]
    observations, infos = env.reset(seed=0)
    assert env.possible_agents == env.agents == list(observations) == names
    assert [tuple(env.agent_key(a)) for a in names] == KEYS
    assert infos[names[2]] == {"decided": True, "group_id": 2, "group_reward": 0.0}
    goal_for_team_0(env.core)
    _, rewards, terminations, truncations, infos = env.step(dict.fromkeys(names, STILL))
    assert infos == expected_infos(names)
    assert list(rewards.values()) == EXPECTED_REWARDS
    assert all(terminations.values()) and not any(truncations.values())
    assert env.agents == []  # every agent of both teams ended in that step
    env.close()


@pytest.mark.parametrize("agent_name", [None, "mlagents"])
@pytest.mark.parametrize("make", [PettingZooAECEnv, soccer_v0.env], ids=["PettingZooAECEnv", "env"])
def test_aec_infos_at_the_goal(make, agent_name):
    env = (
        make(Soccer(seed=0), agent_name=agent_name)
        if make is PettingZooAECEnv
        else make(seed=0, agent_name=agent_name)
    )
    names = NAMES[agent_name]
    env.reset(seed=0)
    assert env.possible_agents == names and env.agent_selection == names[0]
    goal_for_team_0(env.core)
    for name in names:  # one cycle: the core steps after the last agent's turn
        assert env.agent_selection == name
        env.step(STILL)
    assert {a: env.infos[a] for a in names} == expected_infos(names)
    assert [env.rewards[a] for a in names] == EXPECTED_REWARDS
    assert all(env.terminations[a] for a in names)
    observation, reward, terminated, truncated, info = env.last()
    assert (reward, terminated, truncated, info) == (1.0, True, False, expected_infos(names)[
        env.agent_selection])  # fmt: skip
    for _ in names:
        env.step(None)
    assert env.agents == []


@pytest.mark.parametrize("agent_name", [None, "mlagents"])
def test_multi_agent_task_infos_at_the_goal(agent_name):
    task = MultiAgentTask(Soccer(seed=0), termination_mode="all", agent_name=agent_name)
    names = NAMES[agent_name]
    task.reset(seed=0)
    assert task.agents == names
    assert [tuple(task.agent_key(a)) for a in names] == KEYS
    goal_for_team_0(task.core)
    for index in range(4):
        task.step(STILL, index)
    for name, info, reward in zip(names, expected_infos(names).values(), EXPECTED_REWARDS,
                                  strict=True):  # fmt: skip
        last = task.last(name)
        assert last.reward == reward and last.done
        assert {k: last.info[k] for k in info} == info
        assert last.info["terminated"] and not last.info["truncated"]
    assert task.game_over


@pytest.mark.parametrize("agent_name", [None, "mlagents"])
@pytest.mark.parametrize("kind", ["parallel", "aec"])
def test_pettingzoo_task_infos_at_the_goal(kind, agent_name):
    env = (soccer_v0.parallel_env if kind == "parallel" else soccer_v0.env)(
        seed=0, agent_name=agent_name
    )
    task = PettingZooTask(env)
    names = NAMES[agent_name]
    assert sorted(task.reset(seed=0)) == sorted(names)
    goal_for_team_0(env.core)
    if kind == "parallel":
        out = task.step(dict.fromkeys(names, STILL))
    else:
        # An AEC turn's transition is the acting agent's right after its turn: the core steps
        # (and the goal is scored) at the last turn; task.last(agent) then has everyone's.
        out = {name: task.step(STILL) for name in names}
        assert out[names[0]].info["group_reward"] == 0.0 and not out[names[0]].done
        assert out[names[-1]].info["group_reward"] == -1.0 and out[names[-1]].done
        out = {name: task.last(name) for name in names}
    for (name, info), reward in zip(expected_infos(names).items(), EXPECTED_REWARDS, strict=True):
        assert {k: out[name].info[k] for k in info} == info, name
        assert out[name].done and out[name].info["terminated"]
        assert out[name].reward == reward
    assert task.is_all_done


def test_the_old_default_refused_the_core():
    """Before the team joined the prefix: a SpecError at construction, by default."""
    from zooport.adapters.agent_names import behavior_prefix

    assert behavior_prefix(BLUE) == behavior_prefix(PURPLE) == "soccer"
    env = PettingZooParallelEnv(Soccer(seed=0))  # constructs: the names are told apart
    assert env.possible_agents[0] == "soccer_0_0"


# ---------------------------------------------------------------------- wrappers by team


def test_fold_one_team_by_behaviour_or_prefix():
    for selector in (PURPLE, "soccer_1"):
        env = FoldAgents(PettingZooParallelEnv(Soccer(seed=0)), "random", behavior=selector)
        assert env.possible_agents == ["soccer_0_0", "soccer_0_1"]
    # The base name without a team selects both teams: nothing would be left.
    with pytest.raises(ValueError, match="folds every agent"):
        FoldAgents(PettingZooParallelEnv(Soccer(seed=0)), "random", behavior="Soccer")


def test_team_reward_groups_the_two_teams_apart():
    env = TeamReward(PettingZooParallelEnv(Soccer(seed=0)), "sum")
    env.reset(seed=0)
    goal_for_team_0(env.unwrapped.core)
    _, rewards, *_ = env.step(dict.fromkeys(NAMES[None], STILL))
    assert list(rewards.values()) == [2.0, 2.0, -2.0, -2.0]


# ---------------------------------------------------------------------- equivalence


def test_multi_agent_task_transitions_equal_the_raw_core_driven_by_hand():
    """The Parallel and AEC forms are in test_trajectories.py ("soccer-two-teams")."""

    def make():
        return Soccer(seed=5, max_steps=25)

    expected = reference_rollout(make(), seed=11, steps=40)
    assert len(expected) == 26  # the reset and 25 steps: the time limit ends every agent
    task = MultiAgentTask(make(), termination_mode="all")
    task.reset(seed=11)
    names = {tuple(task.agent_key(a)): a for a in task.possible_agents}
    for t, record in enumerate(expected[1:]):
        for agent in task.agents:
            task.step(agent_policy(task, agent, t, task.env.behavior_specs), agent)
        for key, (obs, reward, terminated, truncated, decided) in record.items():
            got = task.last(names[key])
            assert np.array_equal(got.obs, obs), (t, key)
            assert (got.reward, got.info["terminated"], got.info["truncated"]) == (
                reward, terminated, truncated,
            )  # fmt: skip
            assert got.info["decided"] == decided
    assert task.game_over
