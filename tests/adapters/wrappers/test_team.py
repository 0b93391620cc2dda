"""FoldAgents, SingleAgentView, RandomPolicy: folded agents against the raw adapter fed the
policy's actions, clones and their seeds, Gymnasium's check_env, and the shared contract."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import data_equivalence

from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.adapters.wrappers import (
    FoldAgents,
    RandomPolicy,
    SingleAgentView,
    has_wrapper,
)
from zooport.envs.builtin.basic import Basic
from zooport.errors import ActionError, EnvNotResetError, UnknownAgentError

from tests.support.checkers import check_gym
from tests.support.wrappers import check_contract, mini, tag


class Recorder:
    """A stateful policy: records what its clone was bound to, seeded with, and saw."""

    def __init__(self, action=0):
        self.action, self.bound, self.seeds, self.calls = action, None, [], 0

    def bind(self, agent, action_space):
        self.bound = (agent, action_space)

    def reset(self, seed):
        self.seeds.append(seed)

    def __call__(self, observation):
        self.calls += 1
        return self.action


# ---------------------------------------------------------------------- FoldAgents


def test_folded_agents_play_the_policy_and_vanish_from_the_api():
    env, raw = FoldAgents(tag(), lambda obs: 3, behavior="Tagger?team=1"), tag()
    assert env.possible_agents == ["runner_0", "runner_1", "runner_2"]
    obs, infos = env.reset(seed=1)
    raw_obs, raw_infos = raw.reset(seed=1)
    assert set(obs) == set(infos) == set(env.agents) == set(env.possible_agents)
    rng = np.random.default_rng(0)
    for _ in range(12):
        moves = {a: int(rng.integers(5)) for a in env.agents}
        result = env.step(moves)
        raw_result = raw.step({**moves, **dict.fromkeys(["tagger_3", "tagger_4"], 3)})
        exposed = [{a: v for a, v in d.items() if a.startswith("runner")} for d in raw_result]
        assert data_equivalence(list(result), exposed)
        assert env.folded_rewards == {a: raw_result[1][a] for a in ("tagger_3", "tagger_4")}


def test_clones_are_per_agent_bound_and_seeded_from_the_wrapper():
    policy = Recorder(action=2)
    env = FoldAgents(mini(), policy, behavior="prey")
    env.reset(seed=7)
    for _ in range(3):
        env.step({a: np.zeros(2, np.float32) for a in env.agents})
    clones = env._clones
    assert set(clones) == {"prey_0", "prey_1"} and policy.calls == 0 and policy.seeds == []
    assert clones["prey_0"] is not clones["prey_1"] and clones["prey_0"].calls == 3
    assert clones["prey_1"].bound == ("prey_1", env.env.action_space("prey_1"))
    first = [clones[a].seeds[-1] for a in ("prey_0", "prey_1")]
    assert first[0] != first[1]
    env.reset(seed=7)
    assert [clones[a].seeds[-1] for a in ("prey_0", "prey_1")] == first
    env.reset(seed=8)
    assert [clones[a].seeds[-1] for a in ("prey_0", "prey_1")] != first


def test_spawned_agents_that_match_are_folded():
    env = FoldAgents(tag(spawn_every=2), Recorder(), behavior="runner")
    env.reset(seed=0)
    for _ in range(4):
        env.step(dict.fromkeys(env.agents, 0))
    assert env.possible_agents == ["tagger_3", "tagger_4"] and env.agents == env.possible_agents
    assert "runner_5" in env._clones and env._clones["runner_5"].seeds  # seeded on arrival
    assert "runner_5" in env.folded_rewards


def test_fold_errors():
    with pytest.raises(ValueError, match="exactly one of agents="):
        FoldAgents(mini(), "random", ["prey_0"], behavior="prey")
    with pytest.raises(ValueError, match="exactly one of agents="):
        FoldAgents(mini(), "random")
    with pytest.raises(ValueError, match="folds none of"):
        FoldAgents(mini(), "random", behavior="wolf")
    with pytest.raises(ValueError, match="folds every agent"):
        FoldAgents(mini(), "random", lambda agent: True)
    with pytest.raises(TypeError, match="policy to be a callable"):
        FoldAgents(mini(), 3, behavior="prey")
    with pytest.raises(TypeError, match="pass behavior='prey_0'"):
        FoldAgents(mini(), "random", "prey_0")
    env = FoldAgents(mini(), "random", ["prey_0"])
    env.reset(seed=0)
    with pytest.raises(ActionError, match=r"\['prey_0'\] are played by the folded policy"):
        env.step({a: 0 for a in ("hunter_0", "hunter_1", "prey_0", "prey_1")})


@pytest.mark.parametrize(("factory", "behaviour"), [(tag, "tagger"), (mini, "prey")])
def test_fold_contract(factory, behaviour):
    check_contract(lambda: FoldAgents(factory(), "random", behavior=behaviour))


def test_random_policy_respects_masks_and_seeds():
    policy = RandomPolicy(spaces.MultiDiscrete([3, 2]))
    policy.reset(1)
    mask = np.array([0, 1, 0, 1, 0], np.int8)  # branch 0: only 1; branch 1: only 0
    assert all(policy({"action_mask": mask}).tolist() == [1, 0] for _ in range(5))
    draws = [RandomPolicy(spaces.Discrete(9)) for _ in range(2)]
    for p in draws:
        p.reset(5)
    assert [draws[0](None) for _ in range(8)] == [draws[1](None) for _ in range(8)]
    shared = spaces.Discrete(4)
    state = shared.np_random.bit_generator.state
    RandomPolicy(shared)(None)
    assert shared.np_random.bit_generator.state == state  # the env's space is not drawn from


# ---------------------------------------------------------------------- SingleAgentView


@pytest.mark.parametrize(("factory", "agent"), [(tag, "runner_1"), (mini, "hunter_0")])
def test_single_agent_view_is_a_true_gymnasium_env(factory, agent):
    inner = factory()
    env = SingleAgentView(inner, agent)
    assert env.observation_space is inner.observation_space(agent)
    assert env.action_space is inner.action_space(agent)
    check_gym(env)
    assert has_wrapper(env, FoldAgents)


def test_single_agent_view_episode_is_the_agents_and_seeds_reproduce():
    env = SingleAgentView(tag(tag_radius=0.85), "runner_0")  # tagged in the first step
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(0)
    assert terminated and not truncated and reward == -1.0 and isinstance(reward, float)
    with pytest.raises(EnvNotResetError, match="episode is over"):
        env.step(0)

    def episode(seed):
        view = SingleAgentView(mini(), "hunter_1")
        out = [view.reset(seed=seed)[0]]
        for _ in range(10):
            out.append(view.step(np.array([0.3, -0.2], np.float32))[:4])
        return out

    assert data_equivalence(episode(3), episode(3))
    assert not data_equivalence(episode(3), episode(4))


def test_single_agent_view_of_a_single_agent_env_and_errors():
    env = SingleAgentView(PettingZooParallelEnv(Basic(seed=0)))
    assert env.agent == "basic_0" and env.action_space == spaces.Discrete(3)
    env.reset(seed=0)
    assert env.step(2)[1] == pytest.approx(-0.01)
    with pytest.raises(UnknownAgentError, match="'wolf_0' is not a possible agent"):
        SingleAgentView(mini(), "wolf_0")
    with pytest.raises(TypeError, match="wraps a PettingZoo ParallelEnv"):
        SingleAgentView(env)


def test_fold_agents_takes_behavior_and_the_old_spelling_with_a_warning():
    """One spelling in code, ``behavior=`` (as ``behavior_name=``); ``behaviour=`` still works
    and says it is deprecated."""
    env = FoldAgents(tag(), "random", behavior="tagger")
    assert env.possible_agents == ["runner_0", "runner_1", "runner_2"]
    with pytest.warns(DeprecationWarning, match="pass behavior="):
        old = FoldAgents(tag(), "random", behaviour="tagger")
    assert old.possible_agents == env.possible_agents
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="behavior= only"):
        FoldAgents(tag(), "random", behavior="tagger", behaviour="runner")
