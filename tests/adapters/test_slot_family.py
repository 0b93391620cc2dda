"""The slot family (GymEnv, BehaviorVectorEnv, SB3VecEnv): signatures that match their options
class, one set of shared members, one rule for action masks; UnityToGymWrapper with
ML-Agents' signature."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from zooport.adapters import BehaviorVectorEnv, GymEnv, SB3VecEnv, UnityToGymWrapper
from zooport.adapters.options import GymOptions, SlotOptions
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.builtin.basic import Basic
from zooport.envs.builtin.grid_world import GridWorld
from zooport.errors import ArgumentTypeError, EnvClosedError, SpecError

# adapter -> (a discrete, masked core; a continuous core), each single-agent for GymEnv.
ADAPTERS = {
    "GymEnv": (GymEnv, lambda: GridWorld(n_agents=1, seed=0), lambda: BallBalance(n_agents=1)),
    "BehaviorVectorEnv": (
        BehaviorVectorEnv,
        lambda: GridWorld(n_agents=3, seed=0),
        lambda: BallBalance(n_agents=2),
    ),
    "SB3VecEnv": (
        SB3VecEnv,
        lambda: GridWorld(n_agents=3, seed=0),
        lambda: BallBalance(n_agents=2),
    ),
}


def _reset(env):
    return env.reset() if isinstance(env, SB3VecEnv) else env.reset(seed=0)[0]


@pytest.mark.parametrize("name", ADAPTERS)
def test_action_masks_follow_one_rule(name):
    """A behaviour with discrete actions: its current masks; without: a SpecError naming it.

    BehaviorVectorEnv used to answer an (n, 0) array where the other two raised.
    """
    adapter, masked, continuous = ADAPTERS[name]
    env = adapter(masked())
    _reset(env)
    core = env.core
    decision, _ = core.get_steps("GridWorld")
    # The core's masks say True = NOT available; the adapters hand out 1 = allowed.
    expected = (~np.concatenate(decision.action_mask, axis=1)).astype(np.int8)
    rows = np.argsort(decision.agent_id)
    masks = env.action_masks()
    assert masks.dtype == np.int8
    np.testing.assert_array_equal(masks, expected[rows][0] if name == "GymEnv" else expected[rows])
    env.close()
    with pytest.raises(EnvClosedError):
        env.action_masks()

    env = adapter(continuous())
    _reset(env)
    with pytest.raises(SpecError, match="behavior 'BallBalance' has no discrete actions"):
        env.action_masks()
    env.close()


@pytest.mark.parametrize("name", ADAPTERS)
def test_the_shared_members_answer_alike(name):
    adapter, masked, _ = ADAPTERS[name]
    core = masked()
    env = adapter(core)
    assert env.core is core and env.behavior_name == "GridWorld"
    assert env.side_channels == core.side_channels
    np.testing.assert_array_equal(env.agent_ids, np.sort(core.get_steps("GridWorld")[0].agent_id))
    assert env.options.behavior_name is None and env.step_guard.owner == name
    assert not env.closed
    env.close()
    env.close()  # closes the core once
    assert env.closed and core.closed


@pytest.mark.parametrize(
    "adapter, options",
    [(GymEnv, GymOptions), (BehaviorVectorEnv, SlotOptions), (SB3VecEnv, SlotOptions)],
)
def test_signatures_match_the_options_classes(adapter, options):
    """The written signature takes exactly the options class's fields, with its defaults,
    each documented in the class docstring; the options object carries what was given."""
    parameters = inspect.signature(adapter).parameters
    assert list(parameters)[:2] == ["env", "behavior_name"]
    assert set(parameters) == {"env", *options.names()}
    assert all(parameters[n].default == d for n, d in options.defaults().items())
    assert all(
        parameters[n].kind is inspect.Parameter.KEYWORD_ONLY
        for n in options.names()
        if n != "behavior_name"
    )
    for name in options.names():  # every option is documented in the class docstring
        assert f"        {name}: " in adapter.__doc__
    values = {"behavior_name": "GridWorld", "uint8_visual": True, "flatten_branched": True,
              "allow_multiple_obs": True, "render_mode": "rgb_array",
              "action_space_seed": 3}  # fmt: skip
    for name in options.names():  # each parameter reaches its own field
        env = adapter(GridWorld(n_agents=1 if adapter is GymEnv else 2), **{name: values[name]})
        assert env.options == options(**{name: values[name]})
        env.close()
    with pytest.raises(ArgumentTypeError, match="unexpected keyword argument 'uint8'.*options"):
        adapter(Basic(), uint8=True)
    with pytest.raises(ArgumentTypeError, match="too many positional arguments"):
        adapter(BallBalance(), None, True)


def test_unity_to_gym_wrapper_takes_mlagents_positional_options():
    """ML-Agents' ``UnityToGymWrapper(unity_env, uint8_visual, flatten_branched,
    allow_multiple_obs, action_space_seed)``: the old alias of GymEnv read the second
    positional argument as ``behavior_name`` (``True`` was a bad behaviour name)."""
    parameters = inspect.signature(UnityToGymWrapper).parameters
    assert list(parameters)[:5] == [
        "unity_env", "uint8_visual", "flatten_branched", "allow_multiple_obs", "action_space_seed",
    ]  # fmt: skip
    env = UnityToGymWrapper(GridWorld(n_agents=1, seed=0), True, False, True, 3)
    assert isinstance(env, GymEnv)
    assert env.observation_space["camera"].dtype == np.uint8  # uint8_visual
    assert env.options.allow_multiple_obs and env.options.action_space_seed == 3
    twin = GymEnv(GridWorld(n_agents=1, seed=0), uint8_visual=True, allow_multiple_obs=True,
                  action_space_seed=3)  # fmt: skip
    # action_space_seed seeds the action space, as ML-Agents' does.
    assert [int(env.action_space.sample()) for _ in range(10)] == [
        int(twin.action_space.sample()) for _ in range(10)
    ]
    obs, _ = env.reset(seed=0)
    twin_obs, _ = twin.reset(seed=0)
    np.testing.assert_array_equal(obs["camera"], twin_obs["camera"])
    # flatten_branched by position: a single branch stays Discrete either way.
    flat = UnityToGymWrapper(Basic(), False, True)
    assert flat.options.flatten_branched and repr(flat).startswith("<UnityToGymWrapper<Basic")
    # behavior_name and render_mode only by keyword.
    tagged = UnityToGymWrapper(GridWorld(n_agents=1), behavior_name="GridWorld",
                               render_mode="rgb_array")  # fmt: skip
    assert tagged.render().shape[-1] == 3
    with pytest.raises(ArgumentTypeError, match=r"UnityToGymWrapper\(\): too many positional"):
        UnityToGymWrapper(Basic(), False, False, False, None, "Basic")


def test_first_steps_of_each_front_end():
    """The examples the front ends' docstrings carried, as asserts."""
    from zooport.adapters.gym_env import GymEnv as Gym

    env = Gym(Basic())
    assert str((env.observation_space, env.action_space)) == (
        "(Box(-inf, inf, (20,), float32), Discrete(3))"
    )
    obs, info = env.reset(seed=0)
    assert int(obs.argmax()) == 10 and info["action_mask"].tolist() == [1, 1, 1]
    obs, reward, terminated, truncated, info = env.step(2)
    assert (int(obs.argmax()), round(reward, 2), terminated, truncated) == (11, -0.01, False, False)
    env.close()

    envs = BehaviorVectorEnv(BallBalance(n_agents=4, seed=0))
    assert envs.num_envs == 4 and envs.observation_space.shape == (4, 8)
    assert str(envs.single_action_space) == "Box(-1.0, 1.0, (2,), float32)"
    envs.reset(seed=0)
    obs, reward, terminated, truncated, info = envs.step(np.zeros((4, 2)))
    assert all(0.1 <= r < 0.2 for r in reward.tolist()) and info["decided"].tolist() == [True] * 4
    envs.close()

    venv = SB3VecEnv(BallBalance(n_agents=3, seed=0))
    assert venv.num_envs == 3 and venv.observation_space.shape == (8,)
    assert venv.seed(0) == [0, 1, 2]
    venv.reset()
    obs, reward, done, infos = venv.step(np.zeros((3, 2), np.float32))
    assert obs.shape == (3, 8) and done.tolist() == [False] * 3 and infos == [{}, {}, {}]
    venv.close()
