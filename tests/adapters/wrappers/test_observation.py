"""RescaleObservations (and forms), CentralisedObservation, SharedVisibility: values against
the raw env by hand, spaces rewritten, and the shared contract on zooport and non-zooport envs."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import data_equivalence

from zooport.adapters.gym_env import GymEnv
from zooport.adapters.vector_env import BehaviorVectorEnv
from zooport.adapters.wrappers import (
    CentralisedObservation,
    EntitySlots,
    GymRescaleObservations,
    ParallelWrapper,
    RescaleObservations,
    SharedVisibility,
    VectorRescaleObservations,
)
from zooport.envs.builtin.grid_world import GridWorld
from zooport.errors import SpecError

from tests.support.checkers import check_gym
from tests.support.wrappers import check_contract, grid_world, mini, random_actions, scouts, tag

# ---------------------------------------------------------------------- RescaleObservations


def test_rescale_by_feature_kind_on_a_non_zooport_env():
    env, raw = RescaleObservations(mini()), mini()
    space = env.observation_space("hunter_0")
    assert space is env.observation_space("hunter_1")
    assert space.low[:8].tolist() == [-1, -1, -1, -1, -np.inf, -1, -1, -1]
    assert space.high[:8].tolist() == [1, 1, 1, np.inf, np.inf, 1, 1, 1]
    rng, rng_raw = np.random.default_rng(0), np.random.default_rng(0)
    obs, infos = env.reset(seed=5)
    raw_obs, raw_infos = raw.reset(seed=5)
    for _ in range(5):
        for agent, x in raw_obs.items():
            head = [x[0], x[1], 2 * x[2] - 1, x[3] - 1, x[4]]  # [-1,1], [0,1], [0,inf), free
            rows = x[5:].reshape(-1, 3) * [1, 1, 2] + [0, 0, -1]  # flags [0,1] -> [-1,1]
            np.testing.assert_allclose(obs[agent], head + rows.ravel().tolist(), atol=1e-6)
        obs, *_, infos = env.step(random_actions(env, obs, infos, rng))
        raw_obs, *_, raw_infos = raw.step(random_actions(raw, raw_obs, raw_infos, rng_raw))


def test_rescale_keeps_unbounded_and_integer_parts():
    inner = tag()
    env = RescaleObservations(inner)
    assert env.observation_space("runner_0") is inner.observation_space("runner_0")
    assert data_equivalence(env.reset(seed=1), tag().reset(seed=1))
    grid = RescaleObservations(grid_world())
    space = grid.observation_space("gridworld_0")
    assert space["action_mask"] == spaces.Box(0, 1, (5,), np.int8)
    assert space["observation"]["goal"].low.tolist() == [-np.inf, -np.inf]
    obs, _ = grid.reset(seed=0)
    raw, _ = grid_world().reset(seed=0)
    camera = obs["gridworld_1"]["observation"]["camera"]
    np.testing.assert_array_equal(camera, 2 * raw["gridworld_1"]["observation"]["camera"] - 1)
    assert obs["gridworld_1"]["action_mask"].dtype == np.int8


@pytest.mark.parametrize("factory", [mini, grid_world])
def test_rescale_contract(factory):
    check_contract(lambda: RescaleObservations(factory()))


def test_rescale_gym_and_vector_forms():
    env = GymRescaleObservations(GymEnv(GridWorld(n_agents=1, seed=0), allow_multiple_obs=True))
    check_gym(env)
    envs = VectorRescaleObservations(
        BehaviorVectorEnv(GridWorld(n_agents=2, seed=0, max_steps=2), allow_multiple_obs=True)
    )
    obs, _ = envs.reset(seed=0)
    assert set(np.unique(obs["camera"])) <= {-1.0, 1.0}
    envs.step(np.zeros(2, np.int64))
    _, _, _, truncated, info = envs.step(np.zeros(2, np.int64))
    assert truncated.all() and info["_final_obs"].all()
    for final in info["final_obs"]:
        assert set(np.unique(final["camera"])) <= {-1.0, 1.0}
        assert envs.single_observation_space.contains(final)


# ---------------------------------------------------------------------- CentralisedObservation


def test_centralised_parts_by_hand_on_a_non_zooport_env():
    env, raw = CentralisedObservation(mini()), mini()
    space = env.observation_space("hunter_0")
    assert space["others_observations"].shape == (33,) and space["others_actions"].shape == (12,)
    assert space["state"].shape == (9,)
    assert space["observation"] is env.env.observation_space("hunter_0")
    obs, _ = env.reset(seed=2)
    raw_obs, _ = raw.reset(seed=2)
    assert not obs["hunter_0"]["others_actions"].any()
    actions = {
        "hunter_0": np.array([0.5, -0.5], np.float32),
        "hunter_1": np.array([1.0, 0.0], np.float32),
        "prey_0": 3,
        "prey_1": 0,
    }
    obs, *_ = env.step(actions)
    raw_obs, *_ = raw.step(actions)
    mine = obs["hunter_0"]
    np.testing.assert_array_equal(mine["observation"], raw_obs["hunter_0"])
    np.testing.assert_array_equal(
        mine["others_observations"],
        np.concatenate([raw_obs["hunter_1"], raw_obs["prey_0"], raw_obs["prey_1"]]),
    )
    assert mine["others_actions"].tolist() == [1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0]
    assert obs["prey_0"]["others_actions"].tolist() == [0.5, -0.5, 1, 0, 1, 0, 0, 0, 0]
    np.testing.assert_array_equal(mine["state"], raw.state())


def test_centralised_zero_fills_agents_that_left_and_drops_masks():
    env = CentralisedObservation(mini(catch=1.0), include=["observations"])
    env.reset(seed=0)
    checked = 0
    for _ in range(30):
        if not env.agents:
            break
        reported_before = set(env.agents)
        obs, _, terms, truncs, _ = env.step(
            {a: np.zeros(2, np.float32) if "hunter" in a else 0 for a in env.agents}
        )
        others = obs.get("hunter_0", {}).get("others_observations")
        if others is not None and "prey_1" not in reported_before:
            assert not others[22:33].any()  # prey_1 was caught and left: zeros
            checked += 1
        elif others is not None:
            assert others[22:33].any()
    assert checked
    grid = CentralisedObservation(grid_world(), include=("observations",))
    space = grid.observation_space("gridworld_0")
    assert set(space.spaces) == {"action_mask", "observation", "others_observations"}
    assert space["others_observations"].shape == (2 * (75 + 2),)


def test_centralised_info_delivery_keeps_spaces():
    inner = tag()
    env = CentralisedObservation(inner, ("state", "actions"), delivery="info")
    assert env.observation_space("tagger_3") is inner.observation_space("tagger_3")
    obs, infos = env.reset(seed=0)
    assert set(infos["tagger_3"]) >= {"state", "others_actions", "decided"}
    np.testing.assert_array_equal(infos["tagger_3"]["state"], inner.state())


def test_centralised_agents_spawned_later_see_every_original_agent():
    env = CentralisedObservation(tag(spawn_every=2), include=("observations", "actions"))
    env.reset(seed=0)
    for _ in range(2):
        obs, *_ = env.step(dict.fromkeys(env.agents, 1))
    assert "runner_5" in obs and env.observation_space("runner_5")["others_actions"].shape == (25,)
    assert obs["runner_5"]["others_observations"].shape == (50,)
    assert env.observation_space("runner_5").contains(obs["runner_5"])
    assert obs["runner_5"]["others_actions"].reshape(5, 5)[:, 1].tolist() == [1] * 5


def test_centralised_bad_arguments():
    with pytest.raises(ValueError, match="non-empty subset of"):
        CentralisedObservation(mini(), include=["critic"])
    with pytest.raises(ValueError, match="delivery to be one of \\['observation', 'info'\\]"):
        CentralisedObservation(mini(), delivery="both")
    inner = mini()
    del inner.state_space
    with pytest.raises(ValueError, match="needs an env with state"):
        CentralisedObservation(inner)

    class StateKey(ParallelWrapper):
        def observation_space(self, agent):
            return spaces.Dict({"state": self.env.observation_space(agent)})

    with pytest.raises(SpecError, match="already has keys \\['state'\\]; use delivery='info'"):
        CentralisedObservation(StateKey(mini()))

    class SequenceObservations(ParallelWrapper):  # no fixed size: no joint vector
        def observation_space(self, agent):
            return spaces.Sequence(self.env.observation_space(agent))

    with pytest.raises(SpecError, match="spaces that flatten to a Box, got Sequence"):
        CentralisedObservation(SequenceObservations(mini()))


@pytest.mark.parametrize("delivery", ["observation", "info"])
@pytest.mark.parametrize("factory", [tag, mini, grid_world])
def test_centralised_contract(factory, delivery):
    check_contract(lambda: CentralisedObservation(factory(), delivery=delivery))


# ---------------------------------------------------------------------- SharedVisibility


def test_teammates_share_entity_rows_on_a_zooport_core():
    env = SharedVisibility(scouts(view=0.6))
    obs, _ = env.reset(seed=3)
    core = env.unwrapped.core
    seen_by_any = (np.linalg.norm(core.pos[:, None] - core.beacons[None], axis=-1) <= 0.6).any(0)
    assert 0 < seen_by_any.sum() < 4  # some beacons shared, some seen by nobody
    for x in obs.values():
        rows = x[2:].reshape(4, 3)
        assert rows[:, 2].tolist() == seen_by_any.astype(float).tolist()
        np.testing.assert_allclose(rows[seen_by_any, :2], core.beacons[seen_by_any])
        assert not rows[~seen_by_any].any()


def test_sharing_is_per_team_on_a_non_zooport_env():
    env, raw = SharedVisibility(mini(view=0.9)), mini(view=0.9)
    rng, rng_raw = np.random.default_rng(1), np.random.default_rng(1)
    obs, infos = env.reset(seed=1)
    raw_obs, raw_infos = raw.reset(seed=1)
    for _ in range(10):
        for team, others in (("hunter", 2), ("prey", 2)):
            members = [a for a in raw_obs if a.startswith(team)]
            raw_rows = np.stack([raw_obs[a][5:].reshape(others, 3) for a in members])
            seen = raw_rows[:, :, 2] > 0.5
            for i, agent in enumerate(members):
                np.testing.assert_array_equal(obs[agent][:5], raw_obs[agent][:5])
                rows = obs[agent][5:].reshape(others, 3)
                for j in range(others):
                    expected = (
                        raw_rows[seen[:, j].argmax(), j] if seen[:, j].any() else (raw_rows[i, j])
                    )
                    np.testing.assert_array_equal(rows[j], expected)
        if not env.agents:
            break
        obs, *_, infos = env.step(random_actions(env, obs, infos, rng))
        raw_obs, *_, raw_infos = raw.step(random_actions(raw, raw_obs, raw_infos, rng_raw))


def test_slots_arguments_and_errors():
    slots = EntitySlots(offset=5, count=2, features=3, mask_feature=2)
    only_hunters = SharedVisibility(mini(), {"hunter": slots})
    assert only_hunters._slots_of("prey_0") is None and only_hunters._slots_of("hunter_1") == slots
    SharedVisibility(mini(), lambda agent: slots)
    with pytest.raises(ValueError, match="no agent of .* has entity slots"):
        SharedVisibility(tag())
    with pytest.raises(SpecError, match="end at 15, beyond its observation of size 11"):
        SharedVisibility(mini(), EntitySlots(offset=6, count=3, features=3, mask_feature=2))
    with pytest.raises(SpecError, match="not a rank-1 Box"):
        SharedVisibility(grid_world(), slots)
    with pytest.raises(ValueError, match="0 <= mask_feature < features"):
        EntitySlots(offset=0, count=2, features=2, mask_feature=2)
    mixed = SharedVisibility(mini(), lambda a: EntitySlots(5, 2, 3, 2 if a == "hunter_0" else 0))
    with pytest.raises(SpecError, match="team 'hunter' mixes entity slot layouts"):
        mixed.reset(seed=0)


@pytest.mark.parametrize("factory", [scouts, mini])
def test_shared_visibility_contract(factory):
    check_contract(lambda: SharedVisibility(factory()))
