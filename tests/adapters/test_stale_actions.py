"""Actions for agents that finished earlier in the episode: ignored by default, counted, or refused.

PettingZoo's own Parallel environments ignore an action keyed by an agent that has left;
AgileRL's ``AsyncPettingZooVecEnv`` and TorchRL's ``PettingZooWrapper(done_on_any=False)``
send one for every agent they know, every step (TorchRL's case is in ``test_torchrl.py``).
Here every multi-agent entry point is checked: the stale action never reaches the core, the
outputs equal those of the same run without it, ``ignored_actions`` counts it, and
``stale_actions="raise"`` refuses it; a name that never was an agent of the episode, and a
live agent without an action, stay errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import zooport
from zooport.adapters.multi_agent_task import MultiAgentTask, PettingZooTask
from zooport.adapters.pettingzoo_aec import PettingZooAECEnv
from zooport.adapters.pettingzoo_envs import tag_v0
from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.errors import ActionError

from tests.support.probes import RUNNER, Probe

WALK = np.zeros(2, np.float32)


def finished_runner_0(**options):
    """A Parallel adapter over a Probe whose runner_0 finished in the first step."""
    core = Probe(runner_lengths=(1, 0), walker_lengths=(0,), seed=0)
    env = PettingZooParallelEnv(core, **options)
    env.reset(seed=0)
    env.step({"runner_0": 0, "runner_1": 0, "walker_2": WALK})
    assert env.agents == ["runner_1", "walker_2"]
    return core, env


def same_step(a, b) -> None:
    for x, y in zip(a, b, strict=True):
        assert list(x) == list(y)
        for agent in x:
            np.testing.assert_equal(x[agent], y[agent])


# ---------------------------------------------------------------------- Parallel


def test_parallel_ignores_a_finished_agents_action_and_counts_it():
    core, env = finished_runner_0()
    _, reference = finished_runner_0()
    assert env.stale_actions == "ignore" and env.ignored_actions == 0
    got = env.step({"runner_0": 2, "runner_1": 1, "walker_2": WALK})
    expected = reference.step({"runner_1": 1, "walker_2": WALK})
    same_step(got, expected)
    assert "runner_0" not in got.observations
    # The core restarted runner_0's slot and plays it with zeros: the 2 never reached it.
    assert core.applied[RUNNER][-1].tolist() == [[0], [1]]
    assert env.ignored_actions == 1 and reference.ignored_actions == 0
    # Not validated either: whatever a trainer sends for a finished agent is dropped.
    env.step({"runner_0": "junk", "runner_1": 1, "walker_2": WALK})
    assert env.ignored_actions == 2


def test_parallel_strict_mode_refuses_it_and_the_refused_step_changes_nothing():
    core, env = finished_runner_0(stale_actions="raise")
    with pytest.raises(
        ActionError, match=r"finished earlier in the episode \['runner_0'\].*stale_actions"
    ):
        env.step({"runner_0": 2, "runner_1": 1, "walker_2": WALK})
    assert core.t == 1 and env.ignored_actions == 0
    env.stale_actions = "ignore"  # writable
    env.step({"runner_0": 2, "runner_1": 1, "walker_2": WALK})
    assert core.t == 2 and env.ignored_actions == 1


def test_unknown_names_and_missing_live_agents_stay_errors():
    core, env = finished_runner_0()
    with pytest.raises(ActionError, match=r"not in the episode \['ghost_9'\]"):
        env.step({"runner_0": 0, "ghost_9": 0, "runner_1": 1, "walker_2": WALK})
    with pytest.raises(ActionError, match=r"no action for live agents \['walker_2'\]"):
        env.step({"runner_1": 1})
    # A dict as long as the live agents, with a stale name in place of a live one.
    with pytest.raises(ActionError, match=r"no action for live agents \['walker_2'\]"):
        env.step({"runner_0": 0, "runner_1": 1})
    assert core.t == 1 and env.ignored_actions == 0  # refused steps count nothing
    _, env = finished_runner_0(default_action="zero")
    env.step({"runner_0": 0, "runner_1": 1})  # walker_2 takes the default, runner_0 ignored
    assert env.ignored_actions == 1


def test_the_agent_restarted_by_the_core_is_a_stale_name_until_reset():
    core, env = finished_runner_0()
    for _ in range(3):
        env.step({"runner_0": 1, "runner_1": 1, "walker_2": WALK})
    assert env.ignored_actions == 3
    env.reset()
    env.step({"runner_0": 1, "runner_1": 2, "walker_2": WALK})  # live again: it acts
    assert core.applied[RUNNER][-1].tolist() == [[1], [2]] and env.ignored_actions == 3


def test_bad_stale_actions_option():
    with pytest.raises(ValueError, match=r"stale_actions to be one of \['ignore', 'raise'\]"):
        PettingZooParallelEnv(Probe(seed=0), stale_actions="warn")
    env = PettingZooParallelEnv(Probe(seed=0))
    with pytest.raises(ValueError, match="stale_actions"):
        env.stale_actions = True


# ---------------------------------------------------------------------- AEC


def test_aec_finished_agents_turn_takes_none_and_ignores_an_action_instead():
    # PettingZoo's convention holds: a finished agent is selected first and leaves with
    # step(None). An action in its place (TorchRL's AEC loop sends the group's action) is
    # ignored by default, with the same result, and counted.
    runs = []
    for dead_action in (None, 2):
        core = Probe((1, 0, 0), (), seed=0)
        env = PettingZooAECEnv(core)
        env.reset(seed=0)
        for _ in range(3):
            env.step(0)
        assert env.agent_selection == "runner_0" and env.terminations["runner_0"]
        env.step(dead_action)
        assert env.agents == ["runner_1", "runner_2"] and env.agent_selection == "runner_1"
        env.step(1)
        env.step(1)
        runs.append((env.ignored_actions, core.applied[RUNNER][-1].tolist(), env.rewards))
    assert runs[0][0] == 0 and runs[1][0] == 1
    assert runs[0][1:] == runs[1][1:]
    assert runs[1][1] == [[0], [1], [1]]  # the restarted slot of runner_0 plays zeros


# ---------------------------------------------------------------------- tasks


def test_pettingzoo_task_passes_stale_actions_to_the_env_which_ignores_them():
    core = Probe(runner_lengths=(1, 0), walker_lengths=(0,), seed=0)
    task = PettingZooTask(PettingZooParallelEnv(core))
    task.reset(seed=0)
    task.step({"runner_0": 0, "runner_1": 0, "walker_2": WALK})
    out = task.step({"runner_0": 2, "runner_1": 1, "walker_2": WALK})
    assert list(out) == ["runner_1", "walker_2"] and task.env.ignored_actions == 1

    task = PettingZooTask(PettingZooAECEnv(Probe((1, 0), (), seed=0)))
    task.reset(seed=0)
    task.step(0)
    task.step(0)  # the core steps: runner_0 finished
    assert task.env.agent_selection == "runner_0"
    assert task.step(1) is None  # its turn: no transition, the action ignored
    assert task.env.ignored_actions == 1 and task.agents == ["runner_1"]


def test_multi_agent_task_ignores_finished_agents_in_step_and_step_all():
    core = Probe(runner_lengths=(1, 0), walker_lengths=(0,), seed=0)
    task = MultiAgentTask(core, termination_mode="all")
    task.reset(seed=0)
    task.step_all({"runner_0": 0, "runner_1": 0, "walker_2": WALK})
    assert task.step(2, "runner_0") is None and task.waiting_for == ["runner_1", "walker_2"]
    task.step_all({0: 2, "runner_1": 1, "walker_2": WALK})
    assert task.ignored_actions == 2 and core.applied[RUNNER][-1].tolist() == [[0], [1]]
    task.stale_actions = "raise"
    with pytest.raises(ActionError, match="runner_0"):
        task.step(2, 0)


# ---------------------------------------------------------------------- entry points, make


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: tag_v0.parallel_env(**kw),
        lambda **kw: zooport.make("Tag", **kw),
        lambda **kw: zooport.make("zooport/Tag-v0", api="parallel", **kw),
    ],
    ids=["tag_v0", "make", "make-gym-id"],
)
def test_entry_points_and_make_take_the_option(make):
    for option, ignored in (("ignore", True), ("raise", False)):
        env = make(seed=0, restart_tagged=False, stale_actions=option)
        assert env.stale_actions == option
        gone, observations = play_until_a_runner_is_tagged(env)
        actions = {**chase(env, observations), gone: 0}
        if ignored:
            env.step(actions)
            assert env.ignored_actions == 1
        else:
            with pytest.raises(ActionError, match=gone):
                env.step(actions)
    assert tag_v0.env(seed=0, stale_actions="raise").stale_actions == "raise"


# ---------------------------------------------------------------------- AgileRL's loop


def chase(env, observations) -> dict:
    """Taggers move toward their nearest runner (obs[4:6] = its dx, dy); runners stay."""
    actions = {}
    for agent, obs in observations.items():
        if agent.startswith("tagger"):
            dx, dy = obs[4], obs[5]
            actions[agent] = (4 if dx > 0 else 3) if abs(dx) > abs(dy) else (1 if dy > 0 else 2)
        else:
            actions[agent] = 0
    return actions


def play_until_a_runner_is_tagged(env) -> tuple[str, dict]:
    """Resets and chases until a runner leaves; its name and the live agents' observations."""
    observations, _ = env.reset(seed=0)
    for _ in range(500):
        observations, _, terminations, _, _ = env.step(chase(env, observations))
        observations = {a: o for a, o in observations.items() if a in env.agents}
        tagged = [a for a, t in terminations.items() if t]
        if tagged:
            assert env.agents
            return tagged[0], observations
    raise AssertionError("no runner was tagged in 500 steps")


def agilerl_worker(env, steps: int, policy):
    """What AgileRL's ``AsyncPettingZooVecEnv`` worker does with one env, in process.

    The agent list is read once, before the first reset; every step sends one action per
    agent of that list (``np.array(action).squeeze()``), whether it is live or not; when
    every agent in the step's outputs is terminated or truncated the next call resets.
    """
    agents = env.possible_agents[:]
    observations, _ = env.reset(seed=0)
    latest = dict(observations)
    record = []
    autoreset = False
    for _ in range(steps):
        if autoreset:
            observations, _ = env.reset()
            latest = dict(observations)
            terminated = dict.fromkeys(agents, False)
            truncated = dict.fromkeys(agents, False)
            record.append("reset")
        else:
            wanted = policy(env, latest)
            sent = [wanted.get(agent, 0) for agent in agents]  # a list in the agents' order
            data = {agent: np.array(sent[i]).squeeze() for i, agent in enumerate(agents)}
            observations, rewards, terminated, truncated, _ = env.step(data)
            latest.update(observations)
            record.append((rewards, terminated, truncated))
        autoreset = all(t | u for t, u in zip(terminated.values(), truncated.values(), strict=True))
    return record


def live_only_loop(env, steps: int, policy):
    """The same loop sending actions for live agents only, as PettingZoo's own loops do."""
    observations, _ = env.reset(seed=0)
    latest = dict(observations)
    record = []
    over = False
    for _ in range(steps):
        if over:
            observations, _ = env.reset()
            latest = dict(observations)
            record.append("reset")
            over = False
            continue
        wanted = policy(env, latest)
        observations, rewards, terminated, truncated, _ = env.step(
            {agent: np.array(wanted[agent]).squeeze() for agent in env.agents}
        )
        latest.update(observations)
        record.append((rewards, terminated, truncated))
        over = not env.agents
    return record


def test_agilerl_async_vec_env_loop_runs_on_a_default_env():
    # Runners are tagged one by one and leave while the episode goes on (it ends when the
    # last is tagged and the taggers are done, or after 60 cycles); AgileRL keeps sending the
    # tagged runners' actions. Several episodes, compared step by step with the same run
    # sending live agents' actions only.
    make = lambda: tag_v0.parallel_env(seed=0, restart_tagged=False, max_cycles=60)  # noqa: E731
    env = make()
    got = agilerl_worker(env, 185, chase)
    expected = live_only_loop(make(), 185, chase)
    assert got == expected
    assert got.count("reset") >= 3
    # Each step ignored one action per runner tagged in an earlier step of its episode.
    stale = 0
    gone: set[str] = set()
    for entry in got:
        if entry == "reset":
            gone = set()
            continue
        rewards, terminated, truncated = entry
        stale += len(gone)
        gone |= {a for a in rewards if terminated[a] or truncated[a]}
    assert stale > 0 and env.ignored_actions == stale
