"""GymEnv: checked against the raw core driven by hand and against hand-computed values."""

from __future__ import annotations

import pickle

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from zooport.adapters.gym_env import GymEnv, UnityToGymWrapper
from zooport.adapters.registration import make_gym_env
from zooport.envs import BatchedEnv, StepResult
from zooport.envs.base_env import (
    ActionSpec,
    ActionTuple,
    BehaviorSpec,
    DimensionProperty,
    ObservationSpec,
    ObservationType,
)
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.builtin.basic import Basic
from zooport.envs.builtin.collector import Collector
from zooport.envs.builtin.grid_world import GridWorld
from zooport.envs.builtin.soccer import Soccer
from zooport.envs.builtin.tag import Tag
from zooport.envs.side_channel import FloatPropertiesChannel
from zooport.errors import (
    ActionError,
    EnvClosedError,
    EnvNotResetError,
    SpecError,
    UnknownBehaviorError,
)

from tests.support.specs import obs_spec

NONE = DimensionProperty.NONE


class Line(BatchedEnv):
    """Agents count their steps; the reward of the k-th step of an episode is k.

    Observation [steps this episode, episodes started]. An episode terminates after
    ``length`` steps. Counts core resets and records the last action applied.
    """

    def __init__(self, n=1, length=3, period=1, restart=True, **kw):
        super().__init__(**kw)
        spec = BehaviorSpec([obs_spec((2,), "count")], ActionSpec.create_discrete((4,)))
        self._add_behavior("L", spec, n, decision_period=period, restart_finished=restart)
        self.length = length
        self.count = np.zeros(n, np.float32)
        self.episodes = np.zeros(n, np.float32)
        self.applied = np.zeros(n, np.int32)
        self.resets = 0
        self.core_steps = 0
        self.closes = 0

    def reset(self, seed=None):
        self.resets += 1
        super().reset(seed)

    def close(self):
        self.closes += 1
        super().close()

    def _on_reset(self):
        self.episodes[:] = 0

    def _reset_agents(self, behavior, slots):
        self.count[slots] = 0
        self.episodes[slots] += 1

    def _step(self, actions):
        self.core_steps += 1
        self.applied[:] = actions["L"].discrete[:, 0]
        self.count += 1
        return {"L": StepResult(self.count.copy(), self.count >= self.length)}

    def _observe(self, behavior, slots):
        return [np.stack([self.count[slots], self.episodes[slots]], axis=1)]


class Probe(BatchedEnv):
    """One agent with the given specs, fixed observations and masks; records its actions."""

    def __init__(self, obs_specs, action_spec, obs_values=None, mask=None, **kw):
        super().__init__(**kw)
        self._add_behavior("P", BehaviorSpec(list(obs_specs), action_spec), 1)
        self.values = obs_values or [
            np.full(s.shape, 0.25 * (i + 1), np.float32) for i, s in enumerate(obs_specs)
        ]
        self.mask = mask
        self.actions: list[ActionTuple] = []

    def _reset_agents(self, behavior, slots):
        pass

    def _step(self, actions):
        a = actions["P"]
        self.actions.append(ActionTuple(a.continuous.copy(), a.discrete.copy()))
        return {"P": StepResult(np.zeros(1, np.float32), np.zeros(1, bool))}

    def _observe(self, behavior, slots):
        return [np.repeat(np.asarray(v, np.float32)[None], slots.size, axis=0) for v in self.values]

    def _action_mask(self, behavior, slots):
        if self.mask is None:
            return None
        return [np.repeat(np.asarray(m, bool)[None], slots.size, axis=0) for m in self.mask]


# ---------------------------------------------------------------------- raw-core parity


def to_core_action(action, space) -> ActionTuple:
    """A single consumer action as the core's ActionTuple, by hand."""
    if isinstance(space, spaces.Dict):
        return ActionTuple(
            continuous=np.asarray(action["continuous"], np.float32)[None],
            discrete=np.array([[int(action["discrete"])]], np.int32),
        )
    if isinstance(space, spaces.Discrete):
        return ActionTuple(discrete=np.array([[int(action)]], np.int32))
    if isinstance(space, spaces.MultiDiscrete):
        return ActionTuple(discrete=np.asarray(action, np.int32)[None])
    return ActionTuple(continuous=np.asarray(action, np.float32)[None])


def raw_rollout(core, behavior, seed, actions, space):
    """What a single-agent consumer must see, read off the raw core by hand."""
    core.reset(seed=seed)
    decision, _ = core.get_steps(behavior)
    out = [("reset", [o[0] for o in decision.obs], decision.action_mask)]
    for action in actions:
        core.set_actions(behavior, to_core_action(action, space))
        while True:
            core.step()
            decision, terminal = core.get_steps(behavior)
            if len(decision) or len(terminal):
                break
        if len(terminal):
            interrupted = bool(terminal.interrupted[0])
            obs = [o[0] for o in terminal.obs]
            out.append((obs, float(terminal.reward[0]), not interrupted, interrupted))
            out.append(("reset", [o[0] for o in decision.obs], decision.action_mask))
        else:
            obs = [o[0] for o in decision.obs]
            out.append((obs, float(decision.reward[0]), False, False))
    return out


def by_spec(obs, specs):
    return [obs[s.name] for s in specs] if isinstance(obs, dict) else [obs]


def counting(cls):
    return type(f"Counting{cls.__name__}", (cls,), {"resets": 0, "reset": _counted_reset})


def _counted_reset(self, seed=None):
    self.resets += 1
    type(self).__mro__[1].reset(self, seed)


PARITY_CASES = {
    "Basic": (Basic, {"max_steps": 15}, None),
    "BallBalance": (BallBalance, {"n_agents": 1}, None),
    "GridWorld": (GridWorld, {"n_agents": 1, "max_steps": 12}, None),
    "TagRunner": (
        Tag,
        {"n_runners": 1, "n_taggers": 1, "runner_decision_period": 3, "max_steps": 20},
        "Runner?team=0",
    ),
    "Collector": (Collector, {"n_agents": 1, "max_steps": 25}, None),
    # One behaviour in two teams; the served team's episodes end at goals and the time limit.
    "SoccerTeam1": (Soccer, {"team_size": 1, "max_steps": 15}, "Soccer?team=1"),
}


@pytest.mark.parametrize("case", sorted(PARITY_CASES))
def test_adapter_output_equals_the_raw_core_for_the_same_seed_and_actions(case):
    cls, kwargs, behavior = PARITY_CASES[case]
    counted = counting(cls)
    env = GymEnv(counted(**kwargs), behavior)
    env.action_space.seed(5)
    actions = [env.action_space.sample() for _ in range(60)]
    raw = counted(**kwargs)
    name = behavior or next(iter(raw.behavior_specs))
    specs = raw.behavior_specs[name].observation_specs
    expected = raw_rollout(raw, name, 11, actions, env.action_space)

    got = []
    obs, info = env.reset(seed=11)
    got.append(("reset", by_spec(obs, specs), info.get("action_mask")))
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        assert type(reward) is float and type(terminated) is bool and type(truncated) is bool
        got.append((by_spec(obs, specs), reward, terminated, truncated))
        if terminated or truncated:
            obs, info = env.reset()
            got.append(("reset", by_spec(obs, specs), info.get("action_mask")))

    assert len(got) == len(expected)
    assert sum(1 for g in got if g[0] == "reset") > 2, "no episode ended: the test proves little"
    for g, e in zip(got, expected, strict=True):
        if g[0] == "reset":
            assert e[0] == "reset"
            for a, b in zip(g[1], e[1], strict=True):
                np.testing.assert_array_equal(a, b)
            if e[2] is not None:  # the core's mask: True = NOT available
                np.testing.assert_array_equal(g[2], (~np.concatenate(e[2], 1)[0]).astype(np.int8))
        else:
            for a, b in zip(g[0], e[0], strict=True):
                np.testing.assert_array_equal(a, b)
            assert g[1:] == e[1:]
    # Restarted agents cost no core reset: the constructor's and reset(seed=11).
    assert env.core.resets == 2


def test_two_adapters_reset_with_the_same_seed_give_identical_trajectories():
    def run(seed):
        env = GymEnv(BallBalance(n_agents=1))
        env.action_space.seed(0)
        obs, _ = env.reset(seed=seed)
        out = [obs]
        for _ in range(30):
            obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
            out.append(np.append(obs, [reward, terminated, truncated]))
            if terminated or truncated:
                out.append(env.reset()[0])
        return np.concatenate(out)

    np.testing.assert_array_equal(run(3), run(3))
    assert not np.array_equal(run(3), run(4))


# ---------------------------------------------------------------------- spaces


def test_flattened_branches_lookup_and_delivery():
    core = Probe([obs_spec((1,), "x")], ActionSpec.create_discrete((2, 2, 3)))
    env = GymEnv(core, flatten_branched=True)
    assert env.action_space == spaces.Discrete(12)
    assert env.action_lookup[11].tolist() == [1, 1, 2]
    assert env.action_lookup[4].tolist() == [0, 1, 1]
    env.reset()
    env.step(11)
    env.step(np.int64(4))
    assert core.actions[0].discrete.tolist() == [[1, 1, 2]]
    assert core.actions[1].discrete.tolist() == [[0, 1, 1]]
    plain = GymEnv(Probe([obs_spec((1,), "x")], ActionSpec.create_discrete((2, 2, 3))))
    assert plain.action_space == spaces.MultiDiscrete([2, 2, 3]) and plain.action_lookup is None


def test_visual_observations_float_or_rounded_uint8_and_render_falls_back_to_them():
    camera = obs_spec((1, 1, 3), "camera")
    values = np.array([[[0.6 / 255, 254.6 / 255, 127.4 / 255]]], np.float32)
    as_float = GymEnv(Probe([camera], ActionSpec.create_discrete((2,)), [values]))
    assert as_float.observation_space == spaces.Box(0.0, 1.0, (1, 1, 3), np.float32)
    obs, _ = as_float.reset()
    assert obs.dtype == np.float32
    np.testing.assert_array_equal(obs, values)

    as_uint8 = GymEnv(
        Probe([camera], ActionSpec.create_discrete((2,)), [values]),
        uint8_visual=True,
        render_mode="rgb_array",
    )
    assert as_uint8.observation_space == spaces.Box(0, 255, (1, 1, 3), np.uint8)
    obs, _ = as_uint8.reset()
    assert obs.dtype == np.uint8 and obs.tolist() == [[[1, 255, 127]]]  # rounded
    # Probe cannot render itself: the first visual observation is the frame.
    assert as_uint8.metadata["render_modes"] == ["rgb_array"]
    assert as_uint8.render().tolist() == [[[1, 255, 127]]]


def test_no_render_modes_without_a_picture():
    env = GymEnv(Probe([obs_spec((2,), "x")], ActionSpec.create_discrete((2,))))
    assert env.metadata["render_modes"] == []
    assert type(env).metadata["render_modes"] == ["rgb_array"]  # the class is untouched
    with pytest.raises(ValueError, match="expected render_mode in \\[None\\]"):
        GymEnv(
            Probe([obs_spec((2,), "x")], ActionSpec.create_discrete((2,))), render_mode="rgb_array"
        )


def test_render_gives_the_core_picture():
    env = GymEnv(Basic(), render_mode="rgb_array")
    env.reset()
    env.step(2)
    frame = env.render()
    np.testing.assert_array_equal(frame, env.core.render())
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    silent = GymEnv(Basic())
    silent.reset()
    with pytest.warns(UserWarning, match="without a render_mode"):
        assert silent.render() is None


def test_multiple_observations():
    specs = [obs_spec((2,), "position"), obs_spec((3,), "")]
    concatenated = GymEnv(Probe(specs, ActionSpec.create_discrete((2,))))
    assert concatenated.observation_space == spaces.Box(-np.inf, np.inf, (5,), np.float32)
    obs, _ = concatenated.reset()
    assert obs.tolist() == [0.25, 0.25, 0.5, 0.5, 0.5]  # spec order, nothing dropped

    keyed = GymEnv(Probe(specs, ActionSpec.create_discrete((2,))), allow_multiple_obs=True)
    assert set(keyed.observation_space.spaces) == {"position", "obs_1"}
    obs, _ = keyed.reset()
    assert obs["position"].tolist() == [0.25, 0.25] and obs["obs_1"].tolist() == [0.5] * 3

    camera = obs_spec((2, 2, 1), "camera")
    mixed = GymEnv(Probe([camera, obs_spec((2,), "goal")], ActionSpec.create_discrete((2,))))
    assert isinstance(mixed.observation_space, spaces.Dict)  # a mix is never concatenated
    obs, _ = mixed.reset()
    assert obs["camera"].shape == (2, 2, 1) and obs["goal"].tolist() == [0.5, 0.5]

    variable = ObservationSpec(
        (4, 3), (DimensionProperty.VARIABLE_SIZE, NONE), ObservationType.DEFAULT, "items"
    )
    kept = GymEnv(Probe([variable], ActionSpec.create_discrete((2,))))
    assert kept.observation_space.shape == (4, 3)  # rank 2 is kept, not dropped


def test_hybrid_actions_are_a_dict_and_reach_the_core():
    core = Probe([obs_spec((1,), "x")], ActionSpec.create_hybrid(2, (3,)))
    env = GymEnv(core)
    assert env.action_space == spaces.Dict(
        {"continuous": spaces.Box(-1.0, 1.0, (2,), np.float32), "discrete": spaces.Discrete(3)}
    )
    env.reset()
    env.step({"continuous": np.array([0.5, -0.25], np.float32), "discrete": 2})
    assert core.actions[0].continuous.tolist() == [[0.5, -0.25]]
    assert core.actions[0].discrete.tolist() == [[2]]
    with pytest.raises(ActionError, match="keys"):
        env.step({"continuous": np.zeros(2, np.float32)})


def test_masks_in_info_and_action_masks():
    mask = [np.array([False, True]), np.array([True, False, False])]
    env = GymEnv(Probe([obs_spec((1,), "x")], ActionSpec.create_discrete((2, 3)), mask=mask))
    _, info = env.reset()
    assert info["action_mask"].dtype == np.int8
    assert info["action_mask"].tolist() == [1, 0, 0, 1, 1]
    assert env.action_masks().tolist() == [1, 0, 0, 1, 1]
    _, _, _, _, info = env.step(np.array([0, 1]))
    assert info["action_mask"].tolist() == [1, 0, 0, 1, 1]

    flat = GymEnv(
        Probe([obs_spec((1,), "x")], ActionSpec.create_discrete((2, 3)), mask=mask),
        flatten_branched=True,
    )
    _, info = flat.reset()
    # Allowed: branch 0 -> 0, branch 1 -> 1 or 2: flattened indices 1 and 2.
    assert info["action_mask"].tolist() == [0, 1, 1, 0, 0, 0]

    continuous = GymEnv(Probe([obs_spec((1,), "x")], ActionSpec.create_continuous(2)))
    _, info = continuous.reset()
    assert "action_mask" not in info
    with pytest.raises(SpecError, match="no discrete actions"):
        continuous.action_masks()


def test_grid_world_masks_match_the_core_and_sb3_contrib_reads_them():
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.vec_env import DummyVecEnv

    env = GymEnv(GridWorld(n_agents=1, seed=0))
    for seed in range(50):  # find a start next to the border: something is masked
        _, info = env.reset(seed=seed)
        if 0 in info["action_mask"].tolist():
            break
    assert 0 in info["action_mask"].tolist()
    core_mask = env.core.get_steps("GridWorld")[0].action_mask[0][0]
    assert info["action_mask"].tolist() == (~core_mask).astype(int).tolist()
    assert env.action_masks().tolist() == info["action_mask"].tolist()
    venv = DummyVecEnv([lambda: env])
    np.testing.assert_array_equal(get_action_masks(venv)[0], info["action_mask"].astype(bool))


# ---------------------------------------------------------------------- episodes


def test_truncation_is_the_core_interruption():
    env = GymEnv(Line(length=100, max_steps=3))
    env.reset()
    assert env.step(0)[2:4] == (False, False)
    assert env.step(0)[2:4] == (False, False)
    obs, reward, terminated, truncated, _ = env.step(0)
    assert (terminated, truncated) == (False, True)
    assert reward == 3.0 and obs.tolist() == [3.0, 1.0]  # the final observation


def test_the_no_decision_step_advances_until_the_agent_decides_and_sums_rewards():
    core = Line(length=100, period=3)
    env = GymEnv(core)
    env.reset()
    obs, reward, terminated, truncated, _ = env.step(2)
    assert core.core_steps == 3
    assert reward == 1.0 + 2.0 + 3.0
    assert obs.tolist() == [3.0, 1.0] and not terminated and not truncated
    assert core.applied.tolist() == [2]  # repeated between decisions


def test_a_restarted_agent_costs_no_core_reset():
    core = Line(length=2)
    env = GymEnv(core)
    env.reset()
    assert core.resets == 1  # the constructor's reset is handed out, not repeated
    env.step(1)
    obs, reward, terminated, truncated, _ = env.step(1)
    assert (terminated, truncated, reward) == (True, False, 2.0)
    assert obs.tolist() == [2.0, 1.0]  # the final observation
    obs, _ = env.reset()
    assert obs.tolist() == [0.0, 2.0]  # the next episode of the same core run
    assert core.resets == 1


def test_reset_mid_episode_and_seeded_reset_reset_the_core():
    core = Line(length=5)
    env = GymEnv(core)
    env.reset()
    env.step(0)
    obs, _ = env.reset()
    assert core.resets == 2 and obs.tolist() == [0.0, 1.0]
    env.reset(seed=1)
    assert core.resets == 3


def test_a_core_that_does_not_restart_the_agent_is_reset():
    core = Line(length=1, restart=False)
    env = GymEnv(core)
    env.reset()
    assert env.step(0)[2] is True
    steps = core.core_steps
    obs, _ = env.reset()
    assert core.resets == 2 and obs.tolist() == [0.0, 1.0]
    # The core says its finished agents stay out: no idle steps waiting for the agent
    # (there were 1,000 before the core was reset).
    assert core.core_steps == steps
    assert core.restarts_finished("L") is False and Line().restarts_finished("L") is True


def test_more_than_one_agent_points_to_the_vector_adapters():
    with pytest.raises(SpecError, match="BehaviorVectorEnv.*PettingZooParallelEnv"):
        GymEnv(Line(n=2))
    with pytest.raises(UnknownBehaviorError, match="pass behavior_name"):
        GymEnv(Tag(n_runners=1, n_taggers=1))


def test_api_order_close_and_python_types():
    core = Line(length=2)
    env = GymEnv(core)
    with pytest.raises(EnvNotResetError):
        env.step(0)
    first, info = env.reset()
    assert info == {"group_id": 0, "action_mask": info["action_mask"]}
    second, reward, terminated, truncated, info = env.step(0)
    assert not np.shares_memory(first, second)
    assert type(reward) is float and type(info["group_reward"]) is float
    env.step(0)
    with pytest.raises(EnvNotResetError, match="episode ended"):
        env.step(0)
    with pytest.raises(ActionError, match="shape"):
        env.reset()
        env.step(np.array([1, 2]))
    env.close()
    env.close()
    assert core.closes == 1 and env.closed
    with pytest.raises(EnvClosedError):
        env.reset()


def test_side_channels_and_core_are_public():
    channel = FloatPropertiesChannel()
    core = Basic(side_channels=[channel])
    env = UnityToGymWrapper(core)
    assert env.core is core
    assert env.side_channels == [channel] and env.side_channels[0] is channel


def test_the_group_reward_and_id_are_in_info():
    env = GymEnv(Tag(n_runners=2, n_taggers=1, seed=0), "Tagger?team=1")
    _, info = env.reset(seed=0)
    assert info["group_id"] == Tag.tagger_group_id
    # Two runners sit still (no actions); the tagger heads for the nearest one.
    rewards = []
    obs, _ = env.reset(seed=0)
    for _ in range(300):
        dx, dy = obs[4], obs[5]
        action = (4 if dx > 0 else 3) if abs(dx) > abs(dy) else (1 if dy > 0 else 2)
        obs, reward, terminated, truncated, info = env.step(action)
        rewards.append((reward, info["group_reward"]))
        if terminated or truncated:
            obs, _ = env.reset()
    assert all(isinstance(g, float) for _, g in rewards)
    tagged = [(r, g) for r, g in rewards if g > 0]
    assert len(tagged) >= 2, "fewer than two tags: the test proves little"
    # The tagger decides every second step: -0.01 twice, plus +1 per tag (its own here).
    assert all(r == pytest.approx(g - 0.02) for r, g in rewards)


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps], ids=["pickle", "cloudpickle"])
def test_pickle_round_trip_mid_episode(dumps):
    env = GymEnv(BallBalance(n_agents=1), render_mode="rgb_array")
    env.reset(seed=0)
    env.step(np.array([0.5, -0.5], np.float32))
    clone = pickle.loads(dumps(env))
    assert clone.core is not env.core and clone.render_mode == "rgb_array"
    for action in (np.array([1.0, 0.0], np.float32), np.array([-1.0, 0.3], np.float32)):
        a, b = env.step(action), clone.step(action)
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1:4] == b[1:4]
    wrapped = gym.wrappers.TimeLimit(make_gym_env("Basic"), 10)
    assert isinstance(pickle.loads(dumps(wrapped)).unwrapped, GymEnv)


def test_an_unseedable_core_warns_once_and_still_resets():
    unseedable = type("Unseedable", (Line,), {"seedable": False})
    env = GymEnv(unseedable())
    with pytest.warns(UserWarning, match="cannot be reseeded"):
        env.reset(seed=1)
    env.reset(seed=2)  # once per core type: no second warning (warnings are errors here)
    assert env.core.resets == 3


def test_action_space_seed_makes_samples_reproducible():
    a = GymEnv(BallBalance(n_agents=1), action_space_seed=3)
    b = GymEnv(BallBalance(n_agents=1), action_space_seed=3)
    for _ in range(5):
        np.testing.assert_array_equal(a.action_space.sample(), b.action_space.sample())


def test_make_gym_env_takes_exactly_one_source_and_splits_kwargs():
    with pytest.raises(TypeError, match="exactly one"):
        make_gym_env()
    with pytest.raises(TypeError, match="exactly one"):
        make_gym_env("Basic", factory=Basic)
    env = make_gym_env(factory=Line, length=4, render_mode=None)
    assert isinstance(env.core, Line) and env.core.length == 4
    with pytest.raises(TypeError, match=r"unknown keyword arguments \['size'\]"):
        make_gym_env(factory=Basic, size=4)
