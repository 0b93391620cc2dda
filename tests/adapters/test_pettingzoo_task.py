"""PettingZooTask over zooport's and third-party PettingZoo envs, AEC and Parallel.

Regression tests for ai-traineree's ``PettingZooTask``: its ``step`` returned the next agent's
data (``env.last()`` after the step), its ``is_all_done`` iterated the keys of ``dones``, its
``agents`` were cached once, and its ``reset()`` returned nothing.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import data_equivalence
from pettingzoo import AECEnv
from pettingzoo.test import api_test
from pettingzoo.test.example_envs import generated_agents_env_v0, generated_agents_parallel_v0

from zooport.adapters.multi_agent_task import PettingZooTask, Transition
from zooport.adapters.pettingzoo_aec import PettingZooAECEnv
from zooport.adapters.pettingzoo_envs import ball_balance_v0
from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.errors import SpecError, UnknownAgentError, ZooportError

from tests.support.pettingzoo_versions import STUCK_EXAMPLE_AEC_ENV, AgentSelector
from tests.support.probes import MaskedProbe, Probe


class Relay(AECEnv):
    """Three agents take turns; a turn pays only the agent that takes it.

    Agent ``i``'s turn with action ``x`` pays it ``10 * (i + 1) + x`` and sets its observation
    to ``[i + 1, its turns so far, x]``. ``relay_1`` terminates on its second turn; after
    ``rounds`` rounds every agent left is truncated.
    """

    metadata = {"name": "relay_v0", "render_modes": ["ansi"]}

    def __init__(self, rounds=3, render_mode=None):
        super().__init__()
        self.possible_agents = ["relay_0", "relay_1", "relay_2"]
        self.rounds = rounds
        self.render_mode = render_mode
        self._obs_space = spaces.Box(0, 100, (3,), np.float32)
        self._act_space = spaces.Discrete(3)

    def observation_space(self, agent):
        return self._obs_space

    def action_space(self, agent):
        return self._act_space

    def observe(self, agent):
        return self._obs[agent].copy()

    def reset(self, seed=None, options=None):
        self.agents = list(self.possible_agents)
        self._obs = {a: np.array([i + 1, 0, 0], np.float32) for i, a in enumerate(self.agents)}
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {"turns": 0} for a in self.agents}
        self._selector = AgentSelector(self.agents)
        self.agent_selection = self._selector.reset()
        self.round = 0

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._clear_rewards()
        self._cumulative_rewards[agent] = 0
        i = int(agent[-1])
        turns = self.infos[agent]["turns"] + 1
        self.infos[agent] = {"turns": turns}
        self._obs[agent] = np.array([i + 1, turns, action], np.float32)
        self.rewards[agent] = 10 * (i + 1) + int(action)
        if agent == "relay_1" and turns == 2:
            self.terminations[agent] = True
        if self._selector.is_last():
            self.round += 1
            if self.round >= self.rounds:
                self.truncations = dict.fromkeys(self.agents, True)
        self._accumulate_rewards()
        self.agent_selection = self._selector.next()
        self._deads_step_first()

    def render(self):
        return f"round {self.round}"

    def close(self):
        self.closed = True


def test_relay_is_a_valid_aec_env():
    api_test(Relay(), num_cycles=10)


# ---------------------------------------------------------------------- AEC


def test_aec_step_returns_the_acting_agents_transition_not_the_next_agents():
    env = Relay()
    task = PettingZooTask(env)
    observations = task.reset()
    assert list(observations) == ["relay_0", "relay_1", "relay_2"]
    assert observations["relay_2"].tolist() == [3, 0, 0]
    turns = {a: 0 for a in env.possible_agents}
    for x in (1, 2, 0):
        agent = env.agent_selection
        i = int(agent[-1])
        turns[agent] += 1
        obs, reward, done, info = task.step(x)
        assert obs.tolist() == [i + 1, turns[agent], x] and reward == 10 * (i + 1) + x
        assert info == {"turns": turns[agent], "terminated": False, "truncated": False}
        assert not done
        # ai-traineree returned env.last(): the next agent's observation and reward.
        assert env.agent_selection != agent and env.last()[0][0] != i + 1
    assert env.infos["relay_0"] == {"turns": 1}  # the env's own info dict is left alone


def test_aec_done_agents_their_none_step_and_is_all_done_over_values():
    env = Relay(rounds=3)
    task = PettingZooTask(env)
    task.reset()
    assert task.dones == dict.fromkeys(env.possible_agents, False)
    assert not task.is_all_done  # ai-traineree: all(dones) over the (truthy) names -> True
    for _ in range(3):
        task.step(0)
    task.step(0)
    finished = task.step(1)  # relay_1's second turn terminates it
    assert finished.done and finished.info["terminated"] and finished.reward == 21
    assert env.agent_selection == "relay_1" and task.dones["relay_1"]
    assert not task.is_all_done
    assert task.step(None) is None  # its None step: it leaves, no transition
    assert task.agents == ["relay_0", "relay_2"]  # not cached
    assert task.num_agents == 2 and task.possible_agents == env.possible_agents
    task.step(0)  # relay_2 ends round 2
    task.step(0)
    last = task.step(2)  # relay_2 ends round 3: everyone truncated
    assert last.done and last.info["truncated"] and not last.info["terminated"]
    assert task.dones == {"relay_0": True, "relay_2": True} and task.is_all_done
    for _ in task.agent_iter():
        assert task.last().done
        assert task.step(None) is None
    assert task.agents == [] and task.dones == {} and task.is_all_done


def test_aec_last_gives_the_cumulative_reward_of_any_agent():
    env = PettingZooAECEnv(Probe(runner_lengths=(0, 0), walker_lengths=(), seed=0))
    task = PettingZooTask(env)
    task.reset(seed=0)
    # The native AEC adapter steps the core when the cycle's last agent acts: runner_0's own
    # turn earns nothing yet; its 1.0 arrives with runner_1's turn, for its next last().
    assert task.step(0).reward == 0.0
    assert task.step(0).reward == 2.0
    assert env.agent_selection == "runner_0"
    selected = task.last()
    assert selected.reward == 1.0 and selected.obs.tolist() == [1.0, 0.0, 0.0]
    assert task.last("runner_1").reward == 2.0
    assert selected.info["terminated"] is False and "decided" in selected.info
    with pytest.raises(UnknownAgentError, match="runner_9"):
        task.last("runner_9")


@pytest.mark.skipif(STUCK_EXAMPLE_AEC_ENV is not None, reason=str(STUCK_EXAMPLE_AEC_ENV))
def test_a_third_party_aec_env_with_agents_that_come_and_go():
    env = generated_agents_env_v0.env()
    task = PettingZooTask(env)
    assert not task.is_parallel and task.name == "CUSTOM"
    task.reset(seed=0)
    rng = np.random.default_rng(0)
    live_turns = dead_turns = 0
    for agent in task.agent_iter():
        selected = task.last()
        if selected.done:
            assert task.step(None) is None and agent not in task.agents
            dead_turns += 1
            continue
        assert set(task.action_spaces) == set(task.observation_spaces) == set(task.agents)
        action = int(rng.integers(task.action_spaces[agent].n))
        out = task.step(action)
        assert out.reward == env.rewards[agent]
        assert out.done == (env.terminations[agent] or env.truncations[agent])
        assert out.obs in env.observation_space(agent)
        live_turns += 1
    assert live_turns > 100 and dead_turns > 0 and task.is_all_done


def test_action_mask_spaces_and_the_observation_part():
    masked_example = pytest.importorskip(
        "pettingzoo.test.example_envs.generated_agents_env_action_mask_obs_v0",
        reason="PettingZoo ships this example env from 1.25.0 on",
    )
    env = masked_example.env()
    task = PettingZooTask(env)
    task.reset(seed=0)
    masks = task.action_mask_spaces()
    assert set(masks) == set(task.agents)
    for agent in task.agents:
        full = env.observation_space(agent)
        assert masks[agent] is full["action_mask"]
        assert task.observation_spaces[agent] is full["observation"]
    assert PettingZooTask(Relay()).action_mask_spaces() is None

    zoo = PettingZooParallelEnv(MaskedProbe(runner_lengths=(0, 0), walker_lengths=(0,), seed=0))
    task = PettingZooTask(zoo)
    assert task.action_mask_spaces() is None  # the walker (continuous) has no mask
    zoo = PettingZooParallelEnv(MaskedProbe(runner_lengths=(0, 0), walker_lengths=(), seed=0))
    task = PettingZooTask(zoo)
    assert task.action_mask_spaces() == {
        "runner_0": spaces.Box(0, 1, (3,), np.int8),
        "runner_1": spaces.Box(0, 1, (3,), np.int8),
    }
    assert task.observation_spaces["runner_0"] == spaces.Box(-np.inf, np.inf, (3,), np.float32)
    obs = task.reset()
    assert obs["runner_1"]["action_mask"].tolist() == [1, 1, 0]


def test_a_dict_observation_other_than_the_mask_convention_is_kept_whole():
    # The rule obs_size and GymTask use: only {"observation", "action_mask"} is split.
    env = Relay()
    env._obs_space = spaces.Dict(observation=spaces.Box(0, 1, (3,)), turns=spaces.Discrete(9))
    task = PettingZooTask(env)
    assert task.observation_spaces == dict.fromkeys(env.possible_agents, env._obs_space)
    with pytest.raises(SpecError, match=r"obs_size .*Dict.*read observation_space"):
        _ = task.obs_size


# ---------------------------------------------------------------------- Parallel


def test_parallel_step_returns_every_agents_transition():
    env = PettingZooParallelEnv(Probe(runner_lengths=(0, 2), walker_lengths=(0,), seed=0))
    task = PettingZooTask(env)
    assert task.is_parallel and task.name == "CUSTOM"  # ai-traineree's, whatever the env
    observations = task.reset(seed=0)
    assert list(observations) == ["runner_0", "runner_1", "walker_2"]
    assert task.last("walker_2").reward == 0.0 and not task.is_all_done
    actions = {"runner_0": 1, "runner_1": 2, "walker_2": np.zeros(2, np.float32)}
    out = task.step(actions)
    assert {a: t.reward for a, t in out.items()} == {
        "runner_0": 1.0, "runner_1": 2.0, "walker_2": 10.0,
    }  # fmt: skip
    assert out["walker_2"].obs.tolist() == [1.0, 0.0, 2.0]
    out = task.step(actions)
    assert out["runner_1"].done and out["runner_1"].info["terminated"]
    assert task.agents == ["runner_0", "walker_2"]
    assert task.dones == {"runner_0": False, "runner_1": True, "walker_2": False}
    assert not task.is_all_done
    assert task.last("runner_1") is out["runner_1"]
    with pytest.raises(ValueError, match="last\\(agent="):
        task.last()
    with pytest.raises(ZooportError, match="step\\("):
        task.agent_iter()
    with pytest.raises(UnknownAgentError, match="nobody"):
        task.last("nobody")


def test_parallel_is_all_done_when_the_episode_ends():
    env = PettingZooParallelEnv(Probe(runner_lengths=(1, 0), walker_lengths=(), seed=0))
    env.termination_mode = "any"
    task = PettingZooTask(env)
    task.reset()
    out = task.step({"runner_0": 0, "runner_1": 0})
    assert out["runner_1"].info["truncated"] and out["runner_0"].info["terminated"]
    assert task.is_all_done and task.agents == []


def test_a_third_party_parallel_env_matches_the_env_stepped_directly():
    raw = generated_agents_parallel_v0.parallel_env()
    task = PettingZooTask(generated_agents_parallel_v0.parallel_env())
    expected_obs, expected_infos = raw.reset(seed=3)
    assert data_equivalence(task.reset(seed=3), expected_obs)
    for t in range(20):
        actions = {a: t % raw.action_space(a).n for a in raw.agents}
        obs, rewards, terminations, truncations, infos = raw.step(actions)
        out = task.step(actions)
        assert list(out) == list(obs)
        for agent, transition in out.items():
            assert data_equivalence(transition.obs, obs[agent])
            assert transition.reward == rewards[agent]
            assert transition.done == (terminations[agent] or truncations[agent])
            assert transition.info == {
                **infos[agent], "terminated": terminations[agent],
                "truncated": truncations[agent],
            }  # fmt: skip
        assert task.agents == raw.agents


# ---------------------------------------------------------------------- the rest


def test_env_seed_render_close_and_type_check():
    env = ball_balance_v0.parallel_env(n_agents=2, render_mode="rgb_array")
    task = PettingZooTask(env)
    assert task.env is env
    task.seed(4)
    first = task.reset()
    expected, _ = ball_balance_v0.parallel_env(n_agents=2).reset(seed=4)
    assert data_equivalence(first, expected)
    frame = task.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3
    assert np.array_equal(task.render("rgb_array"), frame)
    with pytest.raises(ValueError, match="render_mode 'rgb_array'.*'human'"):
        task.render("human")
    relay = PettingZooTask(Relay(render_mode="ansi"))
    relay.reset()
    assert relay.render() == "round 0"
    task.close()
    assert env.core.closed
    with pytest.raises(TypeError, match="AECEnv or ParallelEnv, actually: Env"):
        PettingZooTask(gymnasium.Env())


def test_transitions_are_the_shared_named_tuple():
    task = PettingZooTask(ball_balance_v0.env(n_agents=1, seed=0))
    task.reset(seed=0)
    out = task.step(np.zeros(2, np.float32))
    assert isinstance(out, Transition) and out._fields == ("obs", "reward", "done", "info")
    assert round(out.reward, 3) == 0.1


def test_aec_last_gives_python_bools_whatever_flags_the_env_keeps():
    # An env may keep numpy flags; every Transition the task builds carries Python bools,
    # as step() always did (last() passed the env's own values on).
    env = Relay()
    task = PettingZooTask(env)
    task.reset()
    env.terminations["relay_0"], env.truncations["relay_0"] = np.bool_(True), np.bool_(False)
    for transition in (task.last(), task.last("relay_0")):
        flags = (transition.done, transition.info["terminated"], transition.info["truncated"])
        assert flags == (True, True, False) and all(type(flag) is bool for flag in flags)


def test_the_class_example_aec_turn():
    """The example the class docstring carried: agent 0 acted, the core waits for agent 1."""
    task = PettingZooTask(ball_balance_v0.env(seed=0, n_agents=2))
    task.reset(seed=0)
    assert task.step(np.zeros(2, np.float32)).reward == 0.0
