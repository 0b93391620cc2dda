"""SuperSuit's vector route over the PettingZoo Parallel adapter, into Stable-Baselines3.

``pettingzoo_env_to_vec_env_v1`` + ``concat_vec_envs_v1(..., base_class="stable_baselines3")``
over ``PettingZooParallelEnv(BallBalance(...), termination_mode="any")``: the data that comes
out equals a raw BallBalance core driven by hand, PPO learns through it with a seed (with the
example's ``SeededSuperSuitVecEnv``; SuperSuit's own chain cannot be seeded, see below).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.paths import EXAMPLES, load_script

ss = pytest.importorskip("supersuit")
sb3 = pytest.importorskip("stable_baselines3")

from stable_baselines3.common.vec_env import VecEnv, VecMonitor  # noqa: E402

from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv  # noqa: E402
from zooport.envs.base_env import ActionTuple  # noqa: E402
from zooport.envs.builtin.ball_balance import BallBalance  # noqa: E402

EXAMPLE = EXAMPLES / "supersuit_sb3_shared_policy.py"
BEHAVIOR = BallBalance.behavior_name


@pytest.fixture(scope="module")
def example():
    return load_script(EXAMPLE, "supersuit_sb3_shared_policy")


def supersuit_chain(n_agents: int, copies: int) -> VecEnv:
    parallel = PettingZooParallelEnv(BallBalance(n_agents=n_agents), termination_mode="any")
    markov = ss.pettingzoo_env_to_vec_env_v1(parallel)
    return ss.concat_vec_envs_v1(markov, copies, num_cpus=0, base_class="stable_baselines3")


class RawReference:
    """One BallBalance core driven by hand with the route's episode rule.

    Termination mode "any": when any agent's episode ends, every agent is done (the others
    truncated with what they reported in that step), the terminal observations are the ones
    reported in that step, and the core is reset (unseeded: its generator runs on).
    """

    def __init__(self, n_agents: int, seed: int) -> None:
        self.core = BallBalance(n_agents=n_agents)
        self.core.reset(seed=seed)
        self.obs = self._decision_obs()

    def _decision_obs(self) -> np.ndarray:
        decision, _ = self.core.get_steps(BEHAVIOR)
        return decision.obs[0][np.argsort(decision.agent_id)]

    def step(self, actions: np.ndarray):
        core = self.core
        core.set_actions(BEHAVIOR, ActionTuple(continuous=actions))
        core.step()
        decision, terminal = core.get_steps(BEHAVIOR)
        reported = decision.obs[0].copy()
        rewards = decision.reward.copy()
        for row, agent_id in enumerate(terminal.agent_id.tolist()):
            i = decision.agent_id_to_index[agent_id]  # restarted in the same step
            reported[i] = terminal.obs[0][row]
            rewards[i] = terminal.reward[row]
        order = np.argsort(decision.agent_id)
        reported, rewards = reported[order], rewards[order]
        done = np.full(len(order), len(terminal) > 0)
        if done.any():
            core.reset()
            self.obs = self._decision_obs()
        else:
            self.obs = reported
        return self.obs, rewards, done, reported


def test_the_route_is_an_sb3_vec_env_with_one_slot_per_agent_and_copy():
    venv = supersuit_chain(n_agents=3, copies=2)
    assert isinstance(venv, VecEnv) and venv.num_envs == 6
    assert venv.observation_space.shape == (8,) and venv.action_space.shape == (2,)
    obs = venv.reset()
    assert obs.shape == (6, 8) and obs.dtype == np.float32
    obs, rewards, dones, infos = venv.step(np.zeros((6, 2), np.float32))
    assert rewards.tolist() == pytest.approx([0.1] * 6) and not dones.any()
    assert infos[0] == {"decided": True, "group_id": 0, "group_reward": 0.0}
    venv.close()


def test_data_through_the_route_equals_the_raw_core(example):
    n, copies, seed = 4, 2, 11
    venv = example.SeededSuperSuitVecEnv(supersuit_chain(n, copies))
    assert venv.seed(seed) == list(range(seed, seed + n * copies))
    references = [RawReference(n, seed + i) for i in range(copies)]  # copy i: seed + i
    obs = venv.reset()
    assert np.array_equal(obs, np.concatenate([r.obs for r in references]))
    rng = np.random.default_rng(0)
    episodes_ended = 0
    for _ in range(60):
        actions = rng.uniform(-1, 1, (n * copies, 2)).astype(np.float32)
        obs, rewards, dones, infos = venv.step(actions)
        expected = [r.step(actions[i * n : (i + 1) * n]) for i, r in enumerate(references)]
        assert np.array_equal(obs, np.concatenate([e[0] for e in expected]))
        assert np.array_equal(rewards, np.concatenate([e[1] for e in expected]))
        assert np.array_equal(dones, np.concatenate([e[2] for e in expected]))
        for i in np.flatnonzero(dones):
            terminal = expected[i // n][3][i % n]
            assert np.array_equal(infos[i]["terminal_observation"], terminal)
        episodes_ended += int(dones.sum()) // n
    assert episodes_ended >= 2  # random tilting drops balls: resets were compared too
    venv.close()


def test_unseeded_copies_are_clones(example):
    # concat_vec_envs_v1 pickles the env: without a seed the copies start alike.
    venv = supersuit_chain(n_agents=2, copies=2)
    obs = venv.reset()
    assert np.array_equal(obs[:2], obs[2:])
    seeded = example.SeededSuperSuitVecEnv(supersuit_chain(n_agents=2, copies=2))
    seeded.seed(0)
    obs = seeded.reset()
    assert not np.array_equal(obs[:2], obs[2:])


def test_supersuit_alone_cannot_be_seeded_or_wrapped_by_sb3():
    """SuperSuit 3.11 with Gymnasium 1.x (a tripwire: when this fails, SuperSuit is fixed).

    Its SB3 wrapper forwards ``seed`` and ``get_attr`` to a Gymnasium vector env, which has
    neither since Gymnasium 1.0: ``PPO(seed=...)`` raises, and SB3's wrappers warn that the
    render mode is unknown.
    """
    with pytest.raises(AttributeError, match="'ConcatVecEnv' object has no attribute 'seed'"):
        sb3.PPO("MlpPolicy", supersuit_chain(2, 1), n_steps=16, batch_size=32, seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        VecMonitor(supersuit_chain(2, 1))


def test_supersuit_needs_a_fixed_agent_set_hence_termination_mode_any():
    parallel = PettingZooParallelEnv(BallBalance(n_agents=3, seed=0), termination_mode="all")
    venv = ss.pettingzoo_env_to_vec_env_v1(parallel)
    venv.reset(seed=0)
    with pytest.raises(AssertionError, match="varying numbers of active agents"):
        for _ in range(BallBalance.max_episode_steps):  # full tilt: a ball falls early
            venv.step(np.ones((3, 2), np.float32))


@pytest.fixture
def one_torch_thread():
    # A tiny MLP: more threads only contend (and make this test several times slower).
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_ppo_learns_through_the_route_with_seed_0_deterministically(example, one_torch_thread):
    def train():
        venv = VecMonitor(example.make_vec_env(n_agents=4, copies=2))
        model = sb3.PPO(
            "MlpPolicy", venv, n_steps=16, batch_size=64, n_epochs=2, seed=0,
            policy_kwargs={"net_arch": [16]}, device="cpu",
        )  # fmt: skip
        model.learn(384)
        assert model.num_timesteps == 384
        params = np.concatenate([p.detach().numpy().ravel() for p in model.policy.parameters()])
        venv.close()
        return params, [e["r"] for e in model.ep_info_buffer]

    first, episodes = train()
    second, _ = train()
    assert np.array_equal(first, second)  # the seed reached PPO and every core copy
    assert episodes  # episodes ended (and were counted by VecMonitor through the shim)


def test_the_evaluation_helper_scores_each_platforms_first_episode(example):
    # A policy that never tilts: every ball rolls off the initial tilt within the time
    # limit; the mean return is -1 + 0.1 * (steps before the fall), per platform.
    core = BallBalance(n_agents=3)
    core.reset(seed=5)
    spec = core.behavior_specs[BEHAVIOR].action_spec
    returns = np.zeros(3)
    live = np.ones(3, bool)
    while live.any():
        core.set_actions(BEHAVIOR, spec.empty_action(len(core.get_steps(BEHAVIOR)[0])))
        core.step()
        decision, terminal = core.get_steps(BEHAVIOR)
        for agent_id, reward in zip(
            decision.agent_id.tolist(), decision.reward.tolist(), strict=True
        ):
            if live[agent_id] and agent_id not in terminal:
                returns[agent_id] += reward
        for agent_id, reward in zip(
            terminal.agent_id.tolist(), terminal.reward.tolist(), strict=True
        ):
            if live[agent_id]:
                returns[agent_id] += reward
                live[agent_id] = False
    score = example.evaluate(lambda obs: np.zeros((len(obs), 2), np.float32), 3, seed=5)
    assert score == pytest.approx(returns.mean(), abs=1e-5)
