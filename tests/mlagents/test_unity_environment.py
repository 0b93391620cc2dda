"""A real ``mlagents_envs`` 0.28 UnityEnvironment through every zooport adapter.

No Unity binary: ``UnityEnvironment`` talks to ML-Agents' own ``MockCommunicator`` (stock, or
scripted in ``scripted_unity.py``), so the protobuf conversion, ``get_steps``, action
validation and the step input sent to "Unity" are ML-Agents' real code. Every adapter is
given the UnityEnvironment itself (no zooport glue) and each step is checked against what
``UnityEnvironment.get_steps`` returns and against the actions the communicator received.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from mlagents_envs.base_env import ActionTuple as MLAgentsActionTuple
from mlagents_envs.mock_communicator import MockCommunicator

from zooport.envs.compat import as_base_env, is_legacy_env

from tests.mlagents.scripted_unity import BRAIN, ScriptedCommunicator, build_unity

SEEDLESS = "cannot be reseeded"  # zooport's warning for a core without reset(seed=...)
# PettingZoo's api tests warn on Dict observations; masks are in obs["action_mask"] by design.
DICT_OBS = "Observation space for each agent probably should be"


def _concat(obs, row) -> np.ndarray:
    """The adapters' layout of the two vector observations (state, extra): concatenated."""
    return np.concatenate([np.asarray(o)[row] for o in obs], axis=np.ndim(row))


def _allowed(mask, row) -> np.ndarray:
    return (~np.concatenate([m[row] for m in mask], axis=np.ndim(row))).astype(np.int8)


def _choose(rng: np.random.Generator, allowed: np.ndarray, discrete: bool) -> np.ndarray:
    """A random action for one agent: branch choices among the allowed, or a Box sample."""
    if not discrete:
        return rng.uniform(-1, 1, 2).astype(np.float32)
    first = np.flatnonzero(allowed[:3])
    # Mostly "right" when allowed, so that episodes also end at the goal (terminated).
    a0 = 2 if 2 in first and rng.random() < 0.6 else rng.choice(first)
    return np.array([a0, rng.choice(np.flatnonzero(allowed[3:]))], dtype=np.int64)


def _received(action: np.ndarray, discrete: bool) -> tuple[list[float], list[int]]:
    """What the communicator records for an agent's action (its AgentActionProto)."""
    if discrete:
        return [], [int(a) for a in action]
    return [float(a) for a in action.astype(np.float32)], []


def _agent_id(name: str) -> int:
    return int(name.rsplit("_", 1)[1])


def _adapter(module: str, name: str):
    try:
        return getattr(__import__(f"zooport.adapters.{module}", fromlist=[name]), name)
    except (ImportError, AttributeError) as error:
        pytest.skip(f"zooport.adapters.{module}.{name} is not importable yet: {error}")


def _over_scripted(make_unity, adapter: str, discrete: bool, n_agents: int, length: int):
    """(communicator, UnityEnvironment, adapter over it) for ``adapter``, "module.Class" in
    zooport.adapters, over a ScriptedCommunicator whose episodes last ``length`` steps."""
    comm = ScriptedCommunicator(discrete, n_agents, length=length)
    unity = make_unity(comm)
    return comm, unity, _adapter(*adapter.split("."))(unity)


# ----------------------------------------------------------------------------- the core


def test_a_real_unity_environment_is_the_current_api(make_unity):
    unity = make_unity(ScriptedCommunicator(True, 3))
    assert not is_legacy_env(unity)
    assert as_base_env(unity) is unity


@pytest.mark.parametrize("discrete", [True, False], ids=["discrete", "continuous"])
def test_check_base_env_passes_on_a_unity_environment(make_unity, discrete):
    from zooport.envs.checker import check_base_env

    unity = make_unity(ScriptedCommunicator(discrete, 3))
    report = check_base_env(
        unity,
        steps=40,
        make_env=lambda: build_unity(ScriptedCommunicator(discrete, 3)),
        strict=False,
    )
    assert _unexpected_failures(report) == [], report.format()
    assert {r.check for r in report.results} >= {"steps_format", "random_actions", "determinism"}


def test_check_base_env_passes_on_the_stock_mock_communicator(make_unity):
    from zooport.envs.checker import check_base_env

    unity = make_unity(MockCommunicator(discrete_action=True, num_agents=2))
    report = check_base_env(unity, strict=False)
    assert _unexpected_failures(report) == [], report.format()


def _unexpected_failures(report) -> list[str]:
    """Every failed check (mlagents_envs 0.28's ``group_id`` lists are accepted by the checker)."""
    return [f.message for f in report.failures]


# ----------------------------------------------------------------------------- Gymnasium


@pytest.mark.parametrize("discrete", [True, False], ids=["discrete", "continuous"])
def test_gym_env_over_the_stock_mock_communicator(make_unity, discrete):
    GymEnv = _adapter("gym_env", "GymEnv")
    unity = make_unity(MockCommunicator(discrete_action=discrete, num_agents=1))
    env = GymEnv(unity)
    assert env.action_space == (
        env.action_space.__class__([3, 2]) if discrete else env.action_space.__class__(-1, 1, (2,))
    )
    obs, info = env.reset()
    assert obs.tolist() == [1.0, 2.0, 3.0]
    for _ in range(3):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        decision, _ = unity.get_steps("RealFakeBrain")
        assert obs.tolist() == decision.obs[0][0].tolist() == [1.0, 2.0, 3.0]
        assert (reward, terminated, truncated) == (1.0, False, False)
        if discrete:
            assert info["action_mask"].tolist() == [1, 1, 1, 1, 1]
    env.close()
    assert not unity._loaded  # the adapter owns the core and closed the Unity connection


@pytest.mark.parametrize("discrete", [True, False], ids=["discrete", "continuous"])
def test_gym_env_equals_get_steps(make_unity, discrete):
    comm, unity, env = _over_scripted(make_unity, "gym_env.GymEnv", discrete, 1, length=4)
    rng = np.random.default_rng(0)
    obs, info = env.reset()
    decision, _ = unity.get_steps(BRAIN)
    np.testing.assert_array_equal(obs, _concat(decision.obs, 0))
    endings = {"terminated": 0, "truncated": 0}
    for _ in range(40):
        if discrete:
            assert info["action_mask"].tolist() == _allowed(decision.action_mask, 0).tolist()
        action = _choose(rng, info.get("action_mask", np.ones(5, np.int8)), discrete)
        obs, reward, terminated, truncated, info = env.step(action)
        assert comm.actions[-1] == {5: _received(action, discrete)}
        decision, terminal = unity.get_steps(BRAIN)
        if len(terminal):
            np.testing.assert_array_equal(obs, _concat(terminal.obs, 0))
            assert reward == pytest.approx(float(terminal.reward[0]))
            assert truncated == bool(terminal.interrupted[0]) and terminated == (not truncated)
            endings["truncated" if truncated else "terminated"] += 1
            core_steps = len(comm.actions)
            obs, info = env.reset()  # Unity restarted the agent in the same step
            assert len(comm.actions) == core_steps and len(comm.side_channel_in) == core_steps + 1
            np.testing.assert_array_equal(obs, _concat(decision.obs, 0))
        else:
            np.testing.assert_array_equal(obs, _concat(decision.obs, 0))
            assert reward == pytest.approx(float(decision.reward[0]))
            assert not (terminated or truncated)
    assert endings["truncated"] and (endings["terminated"] or not discrete), endings
    env.close()


def test_gymnasium_check_env_on_a_unity_environment(make_unity):
    from gymnasium.utils.env_checker import check_env

    GymEnv = _adapter("gym_env", "GymEnv")
    env = GymEnv(make_unity(ScriptedCommunicator(True, 1)))
    with warnings.catch_warnings():
        # A Unity build cannot be reseeded; zooport says so once (and so may Gymnasium).
        warnings.filterwarnings("ignore", message=f".*{SEEDLESS}")
        # Vector observations are unbounded Boxes, as ML-Agents declares them.
        warnings.filterwarnings("ignore", message=".*Box observation space m[a-z]+imum value is")
        check_env(env, skip_render_check=True)
    env.close()


# ----------------------------------------------------------------------------- vector envs


def _check_vector_step(unity, comm, actions, discrete, obs, reward):
    """Compares one vector step's actions, observations and rewards (slots = agents 5, 6, 7)
    with the received actions and get_steps; returns (decision, terminal, rows, ended slots)."""
    assert comm.actions[-1] == {5 + s: _received(actions[s], discrete) for s in range(3)}
    decision, terminal = unity.get_steps(BRAIN)
    rows = np.argsort(decision.agent_id)
    np.testing.assert_array_equal(obs, _concat(decision.obs, rows))
    expected = decision.reward[rows].copy()
    ended = np.asarray(terminal.agent_id) - 5
    expected[ended] = terminal.reward
    np.testing.assert_allclose(reward, expected, rtol=1e-6)
    return decision, terminal, rows, ended


@pytest.mark.parametrize("discrete", [True, False], ids=["discrete", "continuous"])
def test_behavior_vector_env_equals_get_steps(make_unity, discrete):
    adapter = "vector_env.BehaviorVectorEnv"
    comm, unity, env = _over_scripted(make_unity, adapter, discrete, 3, length=3)
    assert env.num_envs == 3
    rng = np.random.default_rng(1)
    obs, info = env.reset()
    finals = 0
    for _ in range(20):
        mask = info.get("action_mask", np.ones((3, 5), np.int8))
        actions = np.stack([_choose(rng, mask[s], discrete) for s in range(3)])
        obs, reward, terminated, truncated, info = env.step(actions)
        decision, terminal, rows, ended = _check_vector_step(
            unity, comm, actions, discrete, obs, reward
        )
        flags = np.zeros(3, bool)
        flags[ended] = terminal.interrupted
        np.testing.assert_array_equal(truncated, flags)
        flags[ended] = ~np.asarray(terminal.interrupted)
        np.testing.assert_array_equal(terminated, flags)
        if discrete:
            np.testing.assert_array_equal(info["action_mask"], _allowed(decision.action_mask, rows))
        for row, agent_id in enumerate(terminal.agent_id):
            finals += 1
            np.testing.assert_array_equal(
                info["final_obs"][agent_id - 5], _concat(terminal.obs, row)
            )
    assert finals
    env.close()


@pytest.mark.parametrize("discrete", [True, False], ids=["discrete", "continuous"])
def test_sb3_vec_env_equals_get_steps(make_unity, discrete):
    comm, unity, env = _over_scripted(make_unity, "sb3_vec_env.SB3VecEnv", discrete, 3, length=3)
    assert env.num_envs == 3
    rng = np.random.default_rng(2)
    env.reset()
    finals = 0
    for _ in range(20):
        mask = env.action_masks() if discrete else np.ones((3, 5), np.int8)
        actions = np.stack([_choose(rng, mask[s], discrete) for s in range(3)])
        obs, reward, dones, infos = env.step(actions)
        decision, terminal, rows, ended = _check_vector_step(
            unity, comm, actions, discrete, obs, reward
        )
        assert dones.tolist() == [s in ended for s in range(3)]
        for row, agent_id in enumerate(terminal.agent_id):
            finals += 1
            info = infos[agent_id - 5]
            np.testing.assert_array_equal(info["terminal_observation"], _concat(terminal.obs, row))
            assert info["TimeLimit.truncated"] == bool(terminal.interrupted[row])
        if discrete:
            np.testing.assert_array_equal(env.action_masks(), _allowed(decision.action_mask, rows))
    assert finals
    env.close()


# ----------------------------------------------------------------------------- PettingZoo


def _observation(value):
    return value["observation"] if isinstance(value, dict) else value


@pytest.mark.parametrize("discrete", [True, False], ids=["discrete", "continuous"])
def test_pettingzoo_parallel_equals_get_steps(make_unity, discrete):
    adapter = "pettingzoo_parallel.PettingZooParallelEnv"
    comm, unity, env = _over_scripted(make_unity, adapter, discrete, 3, length=3)
    rng = np.random.default_rng(3)
    observations, infos = env.reset()
    assert sorted(_agent_id(a) for a in env.agents) == [5, 6, 7]
    finished = False
    while not finished:
        decision, _ = unity.get_steps(BRAIN)
        row_of = decision.agent_id_to_index
        actions = {}
        for agent in env.agents:
            row = row_of[_agent_id(agent)]
            got = _observation(observations[agent])
            np.testing.assert_array_equal(got, _concat(decision.obs, row))
            allowed = np.ones(5, np.int8)
            if discrete:
                allowed = observations[agent]["action_mask"]
                assert allowed.tolist() == _allowed(decision.action_mask, row).tolist()
            actions[agent] = _choose(rng, allowed, discrete)
        observations, rewards, terminations, truncations, infos = env.step(actions)
        expected = {_agent_id(a): _received(actions[a], discrete) for a in actions}
        assert comm.actions[-1] == expected
        decision, terminal = unity.get_steps(BRAIN)
        for agent in actions:
            agent_id = _agent_id(agent)
            if agent_id in terminal.agent_id_to_index:
                row = terminal.agent_id_to_index[agent_id]
                assert rewards[agent] == pytest.approx(float(terminal.reward[row]))
                assert truncations[agent] == bool(terminal.interrupted[row])
                assert terminations[agent] == (not terminal.interrupted[row])
                finished = True
            else:
                row = decision.agent_id_to_index[agent_id]
                assert rewards[agent] == pytest.approx(float(decision.reward[row]))
                assert not (terminations[agent] or truncations[agent])
    env.close()


@pytest.mark.parametrize(
    ("module", "adapter", "checker", "also_allowed"),
    [
        ("pettingzoo_parallel", "PettingZooParallelEnv", "parallel_api_test", ()),
        ("pettingzoo_aec", "PettingZooAECEnv", "api_test", ("Observation is not a NumPy array",)),
    ],
    ids=["parallel", "aec"],
)
def test_pettingzoo_api_test_on_a_unity_environment(
    make_unity, module, adapter, checker, also_allowed
):
    import pettingzoo.test

    make_adapter = _adapter(module, adapter)
    # flatten_branched: PettingZoo 1.27's api tests sample MultiDiscrete spaces with
    # sample(mask=obs["action_mask"]), which wants one mask per branch, not zooport's
    # flattened mask; over every combination (Discrete(6)) the flattened mask is the right one.
    env = make_adapter(make_unity(ScriptedCommunicator(True, 3)), flatten_branched=True)
    with warnings.catch_warnings():
        for message in (f".*{SEEDLESS}", DICT_OBS, *also_allowed):
            warnings.filterwarnings("ignore", message=message)
        getattr(pettingzoo.test, checker)(env, num_cycles=30)
    env.close()


def test_pettingzoo_aec_equals_get_steps(make_unity):
    adapter = "pettingzoo_aec.PettingZooAECEnv"
    comm, unity, env = _over_scripted(make_unity, adapter, True, 3, length=3)
    env.reset()
    rng = np.random.default_rng(4)
    for cycle in range(2):
        decision, _ = unity.get_steps(BRAIN)
        sent = {}
        for _ in range(len(env.agents)):
            agent = env.agent_selection
            observation, reward, terminated, truncated, info = env.last()
            row = decision.agent_id_to_index[_agent_id(agent)]
            np.testing.assert_array_equal(_observation(observation), _concat(decision.obs, row))
            if cycle:
                assert reward == pytest.approx(float(decision.reward[row]))
            sent[_agent_id(agent)] = _choose(rng, observation["action_mask"], True)
            env.step(sent[_agent_id(agent)])
        # The whole cycle goes to Unity as one step.
        assert comm.actions[-1] == {i: _received(a, True) for i, a in sent.items()}
        assert len(comm.actions) == cycle + 1
    env.close()


def test_mlagents_own_action_tuple_is_accepted_where_zooport_passes_its_own(make_unity):
    """The adapters send zooport ActionTuples to ML-Agents; its own class must also work."""
    comm = ScriptedCommunicator(True, 3)
    unity = make_unity(comm)
    unity.reset()
    unity.set_actions(BRAIN, MLAgentsActionTuple(discrete=np.array([[0, 1], [1, 0], [2, 1]])))
    unity.step()
    assert comm.actions[-1] == {7: ([], [0, 1]), 6: ([], [1, 0]), 5: ([], [2, 1])}
