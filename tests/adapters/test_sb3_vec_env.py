"""SB3VecEnv: the VecEnv contract, checked directly, against the raw core and with SB3 itself."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.vec_env import VecEnv, VecMonitor, VecNormalize  # noqa: E402

from zooport.adapters.sb3_vec_env import SB3VecEnv  # noqa: E402
from zooport.envs.base_env import ActionTuple  # noqa: E402
from zooport.envs.builtin.ball_balance import BallBalance  # noqa: E402
from zooport.envs.builtin.grid_world import GridWorld  # noqa: E402
from zooport.errors import ArgumentTypeError, EnvClosedError, SpecError  # noqa: E402

from tests.support.counters import Counters, by_agent  # noqa: E402


def test_it_is_a_vec_env_with_single_spaces():
    venv = SB3VecEnv(Counters(lengths=(2, 3, 5), seed=0))
    assert isinstance(venv, VecEnv) and not VecEnv.__abstractmethods__ - set(vars(SB3VecEnv))
    assert venv.num_envs == 3
    assert venv.observation_space.shape == (2,) and venv.action_space.n == 3
    assert venv.render_mode is None and venv.get_attr("agent_id") == [0, 1, 2]


def test_reset_sets_reset_infos_and_uses_the_stored_seed_once():
    venv = SB3VecEnv(BallBalance(n_agents=3))
    assert venv.seed(7) == [7, 8, 9]
    obs = venv.reset()
    raw = BallBalance(n_agents=3)
    raw.reset(seed=7)
    np.testing.assert_array_equal(obs, raw.get_steps("BallBalance")[0].obs[0])
    assert venv.reset_infos == [{}, {}, {}]
    assert venv._seeds == [None, None, None]  # used once, as SB3's DummyVecEnv does
    venv.seed(7)
    np.testing.assert_array_equal(venv.reset(), obs)
    # Options follow every adapter's rule: a dict with str keys, not used by the core.
    venv.seed(7)
    venv.set_options({"anything": 1})
    np.testing.assert_array_equal(venv.reset(), obs)
    venv.set_options(5)
    with pytest.raises(ArgumentTypeError, match="expected options to be None or a dict"):
        venv.reset()
    assert venv._options == [{}, {}, {}]  # a rejected set_options() does not stick


def test_terminal_observation_and_time_limit_truncated_equal_the_raw_cores():
    n, name = 5, "BallBalance"
    venv = SB3VecEnv(BallBalance(n_agents=n, seed=2, max_steps=15, reorder_agents=True))
    raw = BallBalance(n_agents=n, seed=2, max_steps=15)
    venv.seed(4)
    obs = venv.reset()
    raw.reset(seed=4)
    ids = venv.get_attr("agent_id")
    rng = np.random.default_rng(1)
    seen = {True: 0, False: 0}
    for _ in range(60):
        actions = rng.uniform(0.3, 1, (n, 2)).astype(np.float32)
        obs, reward, done, infos = venv.step(actions)
        decision, _ = raw.get_steps(name)
        rows = [decision.agent_id_to_index[i] for i in ids]
        in_rows = np.empty_like(actions)
        in_rows[rows] = actions
        raw.set_actions(name, ActionTuple(continuous=in_rows))
        raw.step()
        decision, terminal = raw.get_steps(name)
        finals = by_agent(terminal)
        for slot, agent in enumerate(ids):
            np.testing.assert_array_equal(obs[slot], by_agent(decision)[agent])
            assert done[slot] == (agent in finals)
            if agent in finals:
                np.testing.assert_array_equal(infos[slot]["terminal_observation"], finals[agent])
                cut = bool(by_agent(terminal, terminal.interrupted)[agent])
                assert infos[slot]["TimeLimit.truncated"] is cut
                assert reward[slot] == by_agent(terminal, terminal.reward)[agent]
                seen[cut] += 1
            else:
                assert infos[slot] == {}
    assert seen[True] and seen[False]


def test_slots_without_a_decision_say_so_and_get_zero_reward():
    venv = SB3VecEnv(Counters(lengths=(4, 100), period=3, seed=0))
    venv.reset()
    venv.step(np.array([1, 1]))
    _, reward, done, infos = venv.step(np.array([2, 2]))
    assert done.tolist() == [True, False] and reward.tolist() == [4.0, 0.0]
    assert infos[1] == {"decided": False} and venv.decided.tolist() == [True, False]
    assert infos[0]["TimeLimit.truncated"] is False
    np.testing.assert_array_equal(infos[0]["terminal_observation"], [4.0, 4.0])


def test_agents_that_are_not_restarted_idle_until_every_episode_is_over():
    venv = SB3VecEnv(Counters(lengths=(1, 2), restart=False, seed=0))
    venv.reset()
    obs, reward, done, infos = venv.step(np.zeros(2, int))
    assert done.tolist() == [True, False] and infos[0]["TimeLimit.truncated"] is False
    assert infos[0]["decided"] is False and obs[0].tolist() == [1.0, 1.0]
    obs, reward, done, infos = venv.step(np.zeros(2, int))
    # The last agent ends: the core is reset in the same step, every slot decides again.
    assert done.tolist() == [False, True] and reward.tolist() == [0.0, 2.0]
    np.testing.assert_array_equal(infos[1]["terminal_observation"], [2.0, 2.0])
    assert obs.tolist() == [[0.0, 1.0], [0.0, 2.0]] and venv.decided.all()
    assert infos[0] == {}


def test_attribute_and_method_access_with_indices():
    core = Counters(lengths=(2, 3, 5), seed=0)
    venv = SB3VecEnv(core)
    assert venv.get_attr("lengths", indices=[0, 2]) == [core.lengths] * 2
    assert venv.get_attr("agent_id", indices=2) == [2]
    assert venv.has_attr("action_masks") and not venv.has_attr("no_such_attribute")
    venv.set_attr("spawn_at", 9)
    assert core.spawn_at == 9
    with pytest.raises(ValueError, match="all 3 indices"):
        venv.set_attr("spawn_at", 1, indices=[0])
    with pytest.raises(IndexError, match=r"\[0, 2\]"):
        venv.get_attr("lengths", indices=[3])
    venv.reset()
    venv.step(np.zeros(3, int))
    masks = venv.env_method("action_masks", indices=[1, 2])
    assert [m.tolist() for m in masks] == [[1, 1, 0], [1, 1, 0]]
    assert venv.env_method("render", indices=[0, 1])[0].shape == (4, 6, 3)
    assert venv.env_is_wrapped(Counters) == [True] * 3
    assert venv.env_is_wrapped(VecEnv, indices=[1]) == [False]


def test_images_render_close():
    venv = SB3VecEnv(Counters(seed=0), render_mode="rgb_array")
    assert venv.render_mode == "rgb_array"
    venv.reset()
    venv.step(np.zeros(3, int))
    images = venv.get_images()
    assert len(images) == 3 and images[0].shape == (4, 6, 3) and images[0][0, 0, 0] == 1
    assert venv.render().shape == (4, 6, 3)
    assert SB3VecEnv(Counters(seed=0)).get_images() == [None] * 3
    venv.close()
    venv.close()
    assert venv.core.closes == 1
    with pytest.raises(EnvClosedError):
        venv.step(np.zeros(3, int))


def test_action_masks_for_continuous_actions_is_an_error():
    venv = SB3VecEnv(BallBalance(n_agents=2, seed=0))
    assert not venv.has_attr("action_masks")
    with pytest.raises(SpecError, match="no discrete actions"):
        venv.action_masks()


def test_vec_monitor_and_vec_normalize_wrap_it():
    venv = VecNormalize(VecMonitor(SB3VecEnv(Counters(lengths=(2, 3), seed=0))), gamma=0.9)
    venv.reset()
    episodes = []
    for _ in range(6):
        _, _, done, infos = venv.step(np.zeros(2, int))
        for slot in np.flatnonzero(done):
            episodes.append((int(slot), infos[slot]["episode"]["r"], infos[slot]["episode"]["l"]))
            assert infos[slot]["terminal_observation"].shape == (2,)
    assert episodes == [(0, 4.0, 2), (1, 9.0, 3), (0, 4.0, 2), (0, 4.0, 2), (1, 9.0, 3)]


@pytest.fixture
def one_torch_thread():
    """Tiny MLPs train fastest on one thread (and do not fight other test processes)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_ppo_learns_on_it_and_seed_makes_it_reproducible(one_torch_thread):
    def train():
        venv = SB3VecEnv(BallBalance(n_agents=8))
        model = PPO("MlpPolicy", venv, n_steps=16, batch_size=64, n_epochs=1, seed=0)
        model.learn(256)
        return model.policy.parameters_to_vector()

    np.testing.assert_array_equal(train(), train())


def test_maskable_ppo_on_grid_world(one_torch_thread):
    sb3_contrib = pytest.importorskip("sb3_contrib")
    venv = SB3VecEnv(GridWorld(n_agents=4, seed=0))
    model = sb3_contrib.MaskablePPO(
        "MultiInputPolicy", venv, n_steps=16, batch_size=32, n_epochs=1, seed=0
    )
    model.learn(128)
    obs = venv.reset()
    actions, _ = model.predict(obs, action_masks=venv.action_masks())
    allowed = venv.action_masks()[np.arange(4), actions]
    assert allowed.all()


def test_zooport_imports_without_stable_baselines3():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["stable_baselines3"] = None  # as if it were not installed
        import zooport, zooport.adapters, zooport.adapters.vector_env
        try:
            import zooport.adapters.sb3_vec_env
        except ImportError as exc:
            assert 'pip install "stable-baselines3>=2.3"' in str(exc), exc
        else:
            raise AssertionError("sb3_vec_env imported without stable_baselines3")
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
