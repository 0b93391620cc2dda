"""A core whose behaviour specs arrive after its first step (a Unity scene): every adapter.

Each adapter over ``LateSpecs(core)`` (no behaviours until stepped, as a Unity scene whose
agents have not requested a decision) must step it once, as ML-Agents' wrappers do, and then
yield exactly what the same adapter yields over the core with its specs known at once
(``CoreProxy(core)``, same seed, same actions). A core that never reports a behaviour is a
SpecError naming the adapter. The same scene on a real UnityEnvironment is tested in
``tests/mlagents/test_unity_scenes.py``.
"""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import data_equivalence

from zooport.adapters import BehaviorVectorEnv, GymEnv, GymTask
from zooport.adapters.registration import make_gym_env, make_vector_env, register_gymnasium
from zooport.envs.builtin.basic import Basic
from zooport.envs.builtin.tag import Tag
from zooport.errors import SpecError, ZooportError

from tests.support.adapters import ADAPTERS
from tests.support.raw_cores import CoreProxy, LateSpecs, drive, late_basic

SLOT_FAMILY = ("GymEnv", "GymTask", "BehaviorVectorEnv", "SB3VecEnv")


def make_core(adapter: str):
    """Basic with as many agents as the adapter takes (slot family), or Tag (the others)."""
    if adapter in SLOT_FAMILY:
        return Basic(n_agents=ADAPTERS[adapter].agents, max_steps=4, seed=0)
    return Tag(seed=0, max_steps=6)


def wrapper(adapter: str):
    if adapter == "GymTask":  # stacking frames: its buffers are shaped after the late specs
        return lambda core: GymTask(GymEnv(core), stack_frames=2)
    return ADAPTERS[adapter].wrap


@pytest.mark.parametrize("adapter", list(ADAPTERS))
def test_every_adapter_steps_a_late_core_once_and_then_matches_the_core(adapter):
    make_adapter = wrapper(adapter)
    late = LateSpecs(make_core(adapter))
    assert not late.behavior_specs
    env = make_adapter(late)
    assert late.early_steps == 1  # stepped exactly once before anything else
    expected = drive(make_adapter(CoreProxy(make_core(adapter))), 15)
    assert data_equivalence(drive(env, 15), expected)
    assert late.early_steps == 1


@pytest.mark.parametrize("adapter", list(ADAPTERS))
def test_a_core_without_behaviors_after_one_step_is_a_spec_error(adapter):
    never = LateSpecs(make_core(adapter), never=True)
    with pytest.raises(SpecError, match=r"has no behaviors, even after one step") as info:
        wrapper(adapter)(never)
    assert isinstance(info.value, ZooportError)
    assert str(info.value).startswith(f"{ADAPTERS[adapter].holder}: LateSpecs has no behaviors")
    assert never.early_steps == 1


def test_the_gym_entry_points_step_a_late_core_once():
    single = make_gym_env(factory=late_basic, seed=0)
    assert single.core.early_steps == 1
    assert single.observation_space == gym.spaces.Box(-float("inf"), float("inf"), (20,))
    vector = make_vector_env(num_envs=3, factory=late_basic, seed=0)
    assert vector.num_envs == 3 and vector.core.early_steps == 1
    expected = drive(BehaviorVectorEnv(CoreProxy(Basic(n_agents=3, max_steps=4, seed=0))), 10)
    assert data_equivalence(drive(vector, 10), expected)


def test_gym_make_of_a_registered_late_factory():
    register_gymnasium("zooport_tests/LateBasic-v0", late_basic, seed=0)
    try:
        env = gym.make("zooport_tests/LateBasic-v0")
        assert env.unwrapped.core.early_steps == 1
        expected = drive(GymEnv(CoreProxy(Basic(n_agents=1, max_steps=4, seed=0))), 10)
        assert data_equivalence(drive(env, 10), expected)
    finally:
        gym.registry.pop("zooport_tests/LateBasic-v0")
