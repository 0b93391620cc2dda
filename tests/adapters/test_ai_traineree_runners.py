"""ai-traineree's runner loops over zooport's tasks: what runs as written, what needs a change.

The loops below replay ``interact_episode`` of ai-traineree's ``EnvRunner``,
``MultiAgentEnvRunner`` and ``MultiAgentCycleEnvRunner`` (``aitraineree/runners/``) line for
line, with the agent's ``act`` replaced by a fixed policy and learning left out. Each test
states what differs (the README's "Coming from ai-traineree" says the same) and checks the
data the loop collects against the Gymnasium env or the Parallel adapter driven directly.
"""

from __future__ import annotations

from collections import defaultdict

import gymnasium as gym
import numpy as np
import pytest

from zooport.adapters.multi_agent_task import MultiAgentTask, PettingZooTask
from zooport.adapters.pettingzoo_aec import PettingZooAECEnv
from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.adapters.task_api import DataSpace, GymTask
from zooport.envs.builtin.tag import Tag


def chase(agent: str, obs: np.ndarray) -> int:
    """Taggers move toward their nearest runner (obs[4:6] = its dx, dy); runners stay."""
    if not agent.startswith("tagger"):
        return 0
    dx, dy = obs[4], obs[5]
    return (4 if dx > 0 else 3) if abs(dx) > abs(dy) else (1 if dy > 0 else 2)


def parallel_reference(seed: int, actions_per_step: list[dict[str, int]], **options):
    """The Parallel adapter driven directly with the same actions: (observations, steps)."""
    env = PettingZooParallelEnv(Tag(seed=0), **options)
    observations, _ = env.reset(seed=seed)
    steps = [env.step(actions) for actions in actions_per_step]
    return observations, steps


# ---------------------------------------------------------------------- EnvRunner


def test_env_runner_loop_needs_the_gymnasium_reset_and_step():
    # EnvRunner does ``obs = task.reset()`` and ``next_obs, reward, done, _ = task.step(a)``;
    # GymTask is a gymnasium.Wrapper: reset gives (obs, info) and step five values.
    task = GymTask("CartPole-v1")
    task.seed(0)
    assert isinstance(task.reset(), tuple)
    with pytest.raises(ValueError, match="too many values to unpack"):
        next_obs, reward, done, _ = task.step(np.array([0]))

    # The loop with those two lines changed; the agent hands over one-element arrays.
    task.seed(4)
    obs, _ = task.reset()  # changed: was obs = task.reset()
    score, iterations, done, trace = 0.0, 0, False, []
    while iterations < 500 and not done:
        iterations += 1
        action = np.array([int(obs[2] > 0)])  # the agent's act
        next_obs, reward, terminated, truncated, _ = task.step(action)  # changed
        done = terminated or truncated  # changed
        score += float(reward)
        trace.append((obs, int(action[0]), next_obs, reward, done))
        obs = next_obs

    direct = gym.make("CartPole-v1")
    obs, _ = direct.reset(seed=4)
    for state, action, next_obs, reward, done in trace:
        np.testing.assert_array_equal(state, obs)
        obs, expected, terminated, truncated, _ = direct.step(action)
        np.testing.assert_array_equal(next_obs, obs)
        assert (reward, done) == (expected, terminated or truncated)
    assert done and score == len(trace) and task.name == "CartPole-v1"


class PPOLikeAgent:
    """What ai-traineree's PPOAgent reads of the two spaces it is built from
    (``aitraineree/agents/ppo.py``): ``len(action_space.shape) == 1``,
    ``action_space.shape[0]`` and ``obs_space.shape``; its action has ``action_space.shape``."""

    def __init__(self, obs_space, action_space):
        assert len(action_space.shape) == 1, "Only 1D actions are supported"
        self.action_size = action_space.shape[0]
        self.obs_shape = obs_space.shape

    def act(self, obs):
        assert (self.action_size,) == (1,) and obs.shape == self.obs_shape
        return np.array([np.clip(-obs[2], -2, 2)], np.float32)  # push against the spin


class DQNLikeAgent:
    """What ai-traineree's DQNAgent reads (``aitraineree/agents/dqn.py``):
    ``action_space.to_feature()`` for its output size, ``obs_space.shape`` for its input,
    ``randint(action_space.low, action_space.high)`` to explore."""

    def __init__(self, obs_space, action_space):
        (self.n_actions,) = action_space.to_feature()
        self.obs_shape = obs_space.shape
        self.low, self.high = action_space.low, action_space.high

    def act(self, obs):
        assert obs.shape == self.obs_shape and (self.low, self.high) == (0, self.n_actions - 1)
        return np.array([float(obs[2] > 0)])  # a float, as a network's output can be


def run_env_runner_episode(task, agent, seed):
    """EnvRunner.interact_episode with Gymnasium's reset and step (the changed lines)."""
    task.seed(seed)
    obs, _ = task.reset()
    trace, done = [], False
    while len(trace) < 200 and not done:
        action = agent.act(obs)
        next_obs, reward, terminated, truncated, _ = task.step(action)
        done = terminated or truncated
        trace.append((obs, action, next_obs, reward, done))
        obs = next_obs
    return trace


def test_agents_are_built_from_task_obs_space_and_action_space_as_in_ai_traineree():
    # ai-traineree's examples and runner tests: ``Agent(task.obs_space, task.action_space)``.
    # GymTask.action_space is a Gymnasium space that also answers what the agents ask of
    # ai-traineree's DataSpace: to_feature(), and a Discrete's inclusive low/high.
    task = GymTask("Pendulum-v1")
    trace = run_env_runner_episode(task, PPOLikeAgent(task.obs_space, task.action_space), 2)
    assert task.action_space.to_feature() == (1,)  # what TD3 and DDPG read
    cart = GymTask("CartPole-v1")
    cart_trace = run_env_runner_episode(cart, DQNLikeAgent(cart.obs_space, cart.action_space), 5)
    assert cart.action_space == gym.spaces.Discrete(2)
    data = DataSpace.from_gym_space(cart.action_space)
    assert (data.to_feature(), data.low, data.high) == ((2,), 0, 1)
    assert cart_trace[-1][-1] and len(cart_trace) < 200

    for env_id, seed, steps in (("Pendulum-v1", 2, trace), ("CartPole-v1", 5, cart_trace)):
        direct = gym.make(env_id)
        obs, _ = direct.reset(seed=seed)
        for state, action, next_obs, reward, done in steps:
            np.testing.assert_array_equal(state, obs)
            sent = int(action[0]) if env_id == "CartPole-v1" else action
            obs, expected, terminated, truncated, _ = direct.step(sent)
            np.testing.assert_array_equal(next_obs, obs)
            assert (reward, done) == (expected, terminated or truncated)


# ---------------------------------------------------------------------- MultiAgentEnvRunner


def test_multiagent_env_runner_loop_needs_step_all():
    # MultiAgentEnvRunner unpacks task.step(action, agent_id=i) for every agent in turn; the
    # core moves once all live agents have acted, so earlier calls return None.
    task = MultiAgentTask(Tag(seed=0))
    task.seed(3)
    states = task.reset()
    with pytest.raises(TypeError, match="cannot unpack non-iterable NoneType"):
        next_state, reward, done, _ = task.step(chase("runner_0", states[0]), agent_id=0)

    # The loop with its per-agent step replaced by one step_all per iteration.
    task = MultiAgentTask(Tag(seed=0))
    task.seed(3)
    num_agents = task.num_agents
    score = [0.0] * num_agents
    states = task.reset()
    iterations, sent, seen = 0, [], []
    while iterations < 300:
        iterations += 1
        actions = [chase(task.agent(i), states[i]) for i in range(num_agents)]  # act
        task.step_all(dict(enumerate(actions)))  # changed: was task.step per agent
        next_states, dones = [], []
        for agent_id in range(num_agents):
            next_state, reward, done, _ = task.last(agent_id)  # changed: was task.step(...)
            next_states.append(next_state)
            dones.append(done)
            score[agent_id] += float(reward)
        sent.append({task.agent(i): a for i, a in enumerate(actions)})
        seen.append([task.last(i) for i in range(num_agents)])
        states = next_states
        if any(dones):
            break
    assert any(dones) and task.game_over  # the default "any": the first tag ends it

    _, reference = parallel_reference(3, sent, termination_mode="any")
    names = task.possible_agents
    for t, step in enumerate(reference):
        for i, agent in enumerate(names):
            np.testing.assert_array_equal(seen[t][i].obs, step.observations[agent])
            assert seen[t][i].reward == step.rewards[agent]
            assert seen[t][i].done == (step.terminations[agent] or step.truncations[agent])
    totals = [sum(step.rewards[agent] for step in reference) for agent in names]
    assert score == pytest.approx(totals)


# ---------------------------------------------------------------------- MultiAgentCycleEnvRunner


def test_multiagent_cycle_runner_loop_runs_on_pettingzoo_task_as_written():
    # Over the AEC adapter, the cycle runner's loop runs unchanged to the end of an episode
    # whose agents end together (termination "any": the first tag truncates the others).
    # As on PettingZoo's own AEC envs with simultaneous moves, task.step returns the acting
    # agent's reward of its own turn: the core pays every agent when the cycle's last agent
    # acts, so the others' rewards reach them through task.last() at their next turn.
    task = PettingZooTask(PettingZooAECEnv(Tag(seed=0), termination_mode="any"))
    task.seed(3)
    num_agents = len(task.possible_agents)  # the runner's multi_agent.num_agents
    score: dict[str, float] = defaultdict(float)
    iterations = 0
    task.reset()
    sent, rewards_seen_by_last, acted = [], [], []
    while iterations < 300:
        iterations += 1
        dones = {}
        cycle, paid = {}, {}
        for agent_name in task.agent_iter(max_iter=num_agents):
            state, reward, done, info = task.last(agent_name)
            paid[agent_name] = reward
            action = chase(agent_name, state)  # the agent's act
            next_obs, reward, done, _ = task.step(action)
            cycle[agent_name] = action
            dones[agent_name] = done
            score[agent_name] += float(reward)
        sent.append(cycle)
        rewards_seen_by_last.append(paid)
        acted.append(list(cycle))
        if any(dones.values()):
            break
    assert iterations > 1 and dones[acted[-1][-1]], iterations
    env = task.env
    assert all(env.terminations[a] or env.truncations[a] for a in env.agents)

    _, reference = parallel_reference(3, sent, termination_mode="any")
    names = list(sent[0])
    # What last() paid each agent at its turn in cycle t+1 is the core's reward of cycle t.
    for t in range(len(sent) - 1):
        for agent in names:
            assert rewards_seen_by_last[t + 1][agent] == reference[t].rewards[agent]
    # The runner's score holds the step rewards only: the cycle's last agent's.
    last_agent = names[-1]
    expected = {agent: 0.0 for agent in names}
    expected[last_agent] = sum(step.rewards[last_agent] for step in reference)
    assert dict(score) == pytest.approx(expected)


def test_multiagent_cycle_runner_stops_at_an_agent_that_finished_before_the_others():
    # With agents finishing at different times the runner reaches a finished agent's turn:
    # its action is ignored and task.step returns None (there is no transition), which the
    # runner's unpacking refuses.
    task = PettingZooTask(PettingZooAECEnv(Tag(seed=0, restart_tagged=False)))
    task.seed(3)
    task.reset()
    for _ in range(2000):
        agent = task.env.agent_selection
        state, _, done, _ = task.last(agent)
        if done:
            break
        task.step(chase(agent, state))
    assert done
    with pytest.raises(TypeError, match="cannot unpack non-iterable NoneType"):
        next_obs, reward, done, _ = task.step(chase(agent, state))
    assert task.env.ignored_actions == 1 and agent not in task.agents
