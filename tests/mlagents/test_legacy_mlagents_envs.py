"""``as_base_env`` on environments built from the real classes of older mlagents_envs releases.

Each test loads a release's ``mlagents_envs/base_env.py`` and builds a small env with its
classes (``legacy_envs.py`` beside this file); the wrapped env must then pass zooport's
``check_base_env`` and drive an adapter.
"""

from __future__ import annotations

import numpy as np
import pytest

from zooport.envs.base_env import ActionTuple, DimensionProperty
from zooport.envs.checker import check_base_env
from zooport.envs.compat import LegacyBaseEnv, as_base_env, is_legacy_env

from tests.mlagents.legacy_envs import NAME, VERSIONS, base_env_module, make_legacy_env


@pytest.mark.parametrize("discrete", [True, False], ids=["discrete", "continuous"])
@pytest.mark.parametrize("version", VERSIONS)
def test_real_legacy_classes_are_normalised(version, discrete):
    mod = base_env_module(version)
    old = make_legacy_env(mod, discrete)
    assert is_legacy_env(old)
    env = as_base_env(old)
    assert isinstance(env, LegacyBaseEnv)
    spec = env.behavior_specs[NAME]
    obs_spec = spec.observation_specs[0]
    assert obs_spec.shape == (3,)
    if version == "0.24.0":
        assert (obs_spec.name, obs_spec.dimension_property) == ("obs_0", (DimensionProperty.NONE,))
    else:
        assert (obs_spec.name, obs_spec.dimension_property) == (
            "obs_0",
            (DimensionProperty.UNSPECIFIED,),
        )
    assert tuple(spec.action_spec) == ((0, (3, 2)) if discrete else (2, ()))
    assert any("group_id" in note for note in env.unmapped)

    env.reset()
    action = (
        ActionTuple(discrete=np.array([[2, 0], [1, 1]]))
        if discrete
        else ActionTuple(continuous=np.array([[0.5, 0.25], [-1.0, 0.0]]))
    )
    for _ in range(3):
        env.set_actions(NAME, action)
        env.step()
    received = old.received[-1]
    if version in ("0.23.0", "0.24.0"):
        assert isinstance(received, mod.ActionTuple)
    else:
        assert isinstance(received, np.ndarray)
    decision, terminal = env.get_steps(NAME)
    assert terminal.agent_id.tolist() == [4, 3] and terminal.interrupted.tolist() == [False, True]
    last = [2.0, 2.0] if discrete else [0.75, -1.0]  # action sums, rows (agents 4, 3)
    assert terminal.reward.tolist() == [1.5 + last[0], 1.5 + last[1]]
    assert decision.group_id.tolist() == [0, 0] and decision.group_reward.tolist() == [0.0, 0.0]
    if discrete:
        assert decision.action_mask[1].tolist() == [[False, True], [False, False]]


@pytest.mark.parametrize("version", VERSIONS)
def test_check_base_env_passes_on_wrapped_legacy_envs(version):
    mod = base_env_module(version)
    report = check_base_env(
        as_base_env(make_legacy_env(mod, True)),
        steps=30,
        make_env=lambda: as_base_env(make_legacy_env(mod, True)),
    )
    assert report.passed, report.format()


@pytest.mark.parametrize("version", VERSIONS)
def test_vector_env_over_a_real_legacy_env(version):
    try:
        from zooport.adapters.vector_env import BehaviorVectorEnv
    except ImportError as error:  # pragma: no cover
        pytest.skip(f"BehaviorVectorEnv is not importable yet: {error}")
    mod = base_env_module(version)
    old = make_legacy_env(mod, False)
    env = BehaviorVectorEnv(as_base_env(old))
    obs, _ = env.reset()
    assert obs[:, 1].tolist() == [3.0, 4.0]  # slots in ascending id order
    for t in (1, 2, 3):
        obs, reward, terminated, truncated, _ = env.step(np.array([[1.0, 0.0], [0.0, 0.5]]))
        # slot 0 = agent 3 (last action sum 1.0), slot 1 = agent 4 (0.5)
        np.testing.assert_allclose(reward, [0.5 * t + 1.0, 0.5 * t + 0.5])
    assert truncated.tolist() == [True, False] and terminated.tolist() == [False, True]
    env.close()
