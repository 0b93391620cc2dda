"""TorchRL's wrappers accept zooport's adapters: ``GymWrapper`` and ``PettingZooWrapper``.

Skipped when torchrl is not installed (it is optional; torchrl 0.14.1 with tensordict
0.14.3 works with torch 2.13). ``check_env_specs`` runs on single- and multi-agent envs,
and rollouts are compared with the adapters driven directly or with hand-computed values.

Workaround (torchrl 0.14.1): ``PettingZooWrapper`` warns on every construction unless
PettingZoo is exactly 1.24.3 (allowed below by message). It sends an action for every agent
of its groups, also for agents that have left the episode; the adapter ignores those, as
PettingZoo's own environments do (``test_pettingzoo_wrapper_agents_leave_mid_episode``).
"""

from __future__ import annotations

import numpy as np
import pytest

torchrl = pytest.importorskip("torchrl")

import torch  # noqa: E402
from torchrl.envs import GymWrapper, PettingZooWrapper  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

from zooport.adapters.gym_env import GymEnv  # noqa: E402
from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv  # noqa: E402
from zooport.envs.builtin import BallBalance, Basic, GridWorld, Tag  # noqa: E402

# torchrl's PettingZoo wrapper warns whenever PettingZoo is not 1.24.3, the version its CI
# tests; zooport needs PettingZoo >= 1.24 and the main venv runs a newer one.
pytestmark = pytest.mark.filterwarnings(
    "ignore:PettingZoo in TorchRL is tested using version == 1.24.3:UserWarning"
)


# ---------------------------------------------------------------------- single agent


@pytest.mark.parametrize(
    "make", [Basic, lambda: BallBalance(n_agents=1, seed=0)], ids=["basic", "ballbalance"]
)
def test_gym_wrapper_check_env_specs(make):
    env = GymWrapper(GymEnv(make()))
    check_env_specs(env, seed=0)
    env.close()


def test_gym_wrapper_rollout_is_hand_computed_basic():
    # Always right: from position 10 the large goal (17) is reached in 7 steps, each costing
    # 0.01, the last one earning +1 (see Basic's docstring).
    env = GymWrapper(GymEnv(Basic()), categorical_action_encoding=True)

    def right(td):
        return td.set("action", torch.tensor(2))

    td = env.rollout(20, right)
    assert td.batch_size == torch.Size([7])  # the rollout stops at the terminal step
    assert td["observation"].argmax(-1).tolist() == list(range(10, 17))
    assert td["next", "observation"].argmax(-1).tolist() == list(range(11, 18))
    np.testing.assert_allclose(
        td["next", "reward"].squeeze(-1).numpy(), [-0.01] * 6 + [0.99], rtol=1e-6
    )
    assert td["next", "terminated"].squeeze(-1).tolist() == [False] * 6 + [True]
    assert not td["next", "truncated"].any()


def test_gym_wrapper_over_make_vec_rolls_out_hand_computed_basic():
    """``GymWrapper(gym.make_vec(...))`` needs the vector env's ``autoreset_mode``."""
    import gymnasium as gym

    env = GymWrapper(gym.make_vec("zooport/Basic-v0", num_envs=3), categorical_action_encoding=True)

    def right(td):
        return td.set("action", torch.full((3,), 2))

    td = env.rollout(5, right, break_when_any_done=False)
    assert td.batch_size == torch.Size([3, 5])
    # Each of the 3 agents walks right from position 10, paying 0.01 a step.
    assert td["next", "observation"].argmax(-1).tolist() == [list(range(11, 16))] * 3
    np.testing.assert_allclose(td["next", "reward"].squeeze(-1).numpy(), -0.01, rtol=1e-6)
    env.close()


def test_gym_wrapper_continuous_matches_the_adapter():
    actions = np.random.default_rng(0).uniform(-1, 1, size=(30, 2)).astype(np.float32)
    direct = GymEnv(BallBalance(n_agents=1, seed=0))
    expected_obs = [direct.reset(seed=5)[0]]
    expected_rewards = []
    for action in actions:
        obs, reward, terminated, truncated, _ = direct.step(action)
        expected_obs.append(obs)
        expected_rewards.append(reward)
        if terminated or truncated:
            break
    steps = len(expected_rewards)

    env = GymWrapper(GymEnv(BallBalance(n_agents=1, seed=0)))
    td = env.reset(seed=5)
    for t in range(steps):
        td = env.step(td.set("action", torch.from_numpy(actions[t])))
        np.testing.assert_allclose(td["next", "observation"].numpy(), expected_obs[t + 1])
        assert td["next", "reward"].item() == pytest.approx(expected_rewards[t])
        td = td["next"]


# ---------------------------------------------------------------------- multi agent


def _chase(td) -> None:
    """Taggers accelerate toward their nearest runner (obs[4:6] = its dx, dy); runners stay."""
    obs = td["tagger", "observation"]
    dx, dy = obs[..., 4], obs[..., 5]
    move = torch.where(dx.abs() > dy.abs(), torch.where(dx > 0, 4, 3), torch.where(dy > 0, 1, 2))
    td["tagger", "action"] = move
    td["runner", "action"] = torch.zeros(td["runner", "observation"].shape[:-1], dtype=torch.long)
    return td


def test_pettingzoo_wrapper_tag_groups_and_specs():
    env = PettingZooWrapper(env=PettingZooParallelEnv(Tag(seed=0)), use_mask=True)
    assert env.group_map == {
        "runner": ["runner_0", "runner_1", "runner_2"],
        "tagger": ["tagger_3", "tagger_4"],
    }
    assert env.full_action_spec["runner", "action"].shape == (3,)
    assert env.full_action_spec["tagger", "action"].space.n == 5
    assert env.observation_spec["tagger", "observation"].shape == (2, 10)
    check_env_specs(env, seed=0)
    env.close()


def test_pettingzoo_wrapper_action_masks_gridworld():
    # The adapter's Dict observation {"observation": {"camera", "goal"}, "action_mask"}:
    # torchrl moves the mask to ("gridworld", "action_mask") as bools (True = allowed) and
    # keeps the rest under ("gridworld", "observation").
    core = GridWorld(n_agents=3, seed=0)
    env = PettingZooWrapper(env=PettingZooParallelEnv(core), use_mask=True)
    check_env_specs(env, seed=0)
    td = env.reset(seed=1)
    decision, _ = core.get_steps("GridWorld")
    order = np.argsort(decision.agent_id)
    expected = ~decision.action_mask[0][order]  # the core's mask is True = NOT available
    assert not expected.all()  # some move is blocked by a wall: the mask carries information
    assert td["gridworld", "action_mask"].numpy().tolist() == expected.tolist()
    camera = td["gridworld", "observation", "observation", "camera"].numpy()
    np.testing.assert_array_equal(camera, decision.obs[0][order])
    env.close()


def test_pettingzoo_wrapper_rollout_matches_the_adapter():
    # torchrl's default for a Parallel env ends its episode when any agent is done.
    env = PettingZooWrapper(env=PettingZooParallelEnv(Tag(seed=0)), use_mask=True)
    td = env.rollout(300, _chase, auto_reset=False, tensordict=env.reset(seed=3))
    steps = td.batch_size[0]

    direct = PettingZooParallelEnv(Tag(seed=0))
    obs, _ = direct.reset(seed=3)
    for t in range(steps):
        actions = {
            **{a: int(td["runner", "action"][t, i]) for i, a in enumerate(env.group_map["runner"])},
            **{a: int(td["tagger", "action"][t, i]) for i, a in enumerate(env.group_map["tagger"])},
        }
        obs, rewards, terminations, _, _ = direct.step(actions)
        for group, agents in env.group_map.items():
            got = td["next", group, "reward"][t].squeeze(-1).tolist()
            assert got == pytest.approx([rewards[a] for a in agents]), (t, group)
    # The rollout stopped at the first tag: that runner terminated with reward -1.
    tagged = [a for a, done in terminations.items() if done]
    assert len(tagged) >= 1 and all(a.startswith("runner") for a in tagged)
    assert all(rewards[a] == pytest.approx(-1.0) for a in tagged)
    assert td["next", "done"][-1].item() and not td["next", "done"][:-1].any()


def test_pettingzoo_wrapper_agents_leave_mid_episode():
    # With done_on_any=False the episode goes on while runners are tagged and leave; torchrl
    # masks them out ("mask" False) but still sends them actions, which the adapter ignores
    # (as PettingZoo's own environments do) and counts, with no shim in between.
    pz = PettingZooParallelEnv(Tag(seed=0))
    env = PettingZooWrapper(env=pz, use_mask=True, done_on_any=False)
    td = env.rollout(300, _chase, auto_reset=False, tensordict=env.reset(seed=3))
    steps = td.batch_size[0]
    mask = td["next", "runner", "mask"]
    terminated = td["next", "runner", "terminated"].squeeze(-1)
    reward = td["next", "runner", "reward"].squeeze(-1)
    for i in range(3):
        gone = (~mask[:, i]).nonzero().flatten().tolist()
        if not gone:
            continue
        first = gone[0]  # the step after which runner i is no longer live
        assert terminated[first, i] and reward[first, i] == pytest.approx(-1.0)
        assert not mask[first:, i].any()  # it never comes back within the episode
        assert not terminated[:first, i].any()
    assert (~mask).any(), "no runner was tagged in the rollout"
    assert td["next", "done"][-1].item()
    # torchrl sent an action for every agent of its groups in every step: those of agents
    # gone in an earlier step were ignored, one each.
    gone_before = sum(
        int((~td["next", group, "mask"][: steps - 1]).sum()) for group in env.group_map
    )
    assert gone_before > 0 and pz.ignored_actions == gone_before

    # The same rollout, driven directly with the live agents' actions only, is identical.
    direct = PettingZooParallelEnv(Tag(seed=0))
    direct.reset(seed=3)
    for t in range(steps):
        actions = {
            agent: int(td[group, "action"][t, i])
            for group, agents in env.group_map.items()
            for i, agent in enumerate(agents)
            if agent in direct.agents
        }
        _, rewards, terminations, _, _ = direct.step(actions)
        for group, agents in env.group_map.items():
            for i, agent in enumerate(agents):
                if agent in rewards:
                    assert td["next", group, "reward"][t, i].item() == pytest.approx(
                        rewards[agent]
                    ), (t, agent)
                    assert td["next", group, "terminated"][t, i].item() == terminations[agent]
    assert direct.ignored_actions == 0 and not direct.agents
