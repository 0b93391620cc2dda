"""Imports follow the layers: ``import zooport.envs`` loads neither gymnasium nor pettingzoo,
``import zooport`` and ``import zooport.adapters`` load no adapter, and registration still
happens, once, whichever of zooport, gymnasium and pettingzoo is imported first."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.support.pettingzoo_versions import HAS_REGISTRY


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


LOADED = """
import sys
def loaded(*prefixes):
    return sorted(m for m in sys.modules if m.split(".")[0] in prefixes or any(
        m == p or m.startswith(p + ".") for p in prefixes))
"""


def test_import_zooport_envs_loads_neither_gymnasium_nor_pettingzoo():
    out = _run(
        LOADED
        + """
import zooport.envs
from zooport.envs import BatchedEnv, default_registry, side_channel
from zooport.envs.base_env import ActionTuple
from zooport.envs.side_channel import EnvironmentParametersChannel
entry = default_registry["Tag"]
print(loaded("gymnasium", "pettingzoo", "zooport.envs.builtin.tag"))
"""
    )
    assert out == "[]"


def test_import_zooport_and_adapters_load_no_adapter():
    out = _run(
        LOADED
        + """
import zooport, zooport.adapters
adapters = [m for m in loaded("zooport.adapters") if m.rsplit(".", 1)[1] in (
    "gym_env", "vector_env", "sb3_vec_env", "pettingzoo_parallel", "pettingzoo_aec",
    "multi_agent_task", "wrappers")]
print(adapters, loaded("gymnasium", "pettingzoo", "stable_baselines3"))
"""
    )
    assert out == "[] []"


@pytest.mark.parametrize("zooport_first", [True, False])
def test_gym_make_works_after_import_zooport_in_either_order(zooport_first):
    first, second = (
        ("zooport", "gymnasium as gym") if zooport_first else ("gymnasium as gym", "zooport")
    )
    out = _run(
        f"""
import {first}
import {second}
env = gym.make("zooport/Basic-v0")
vec = gym.make_vec("zooport/BallBalance-v0", num_envs=3)
print(type(env.unwrapped).__name__, type(vec).__name__, vec.num_envs)
"""
    )
    assert out == "GymEnv BehaviorVectorEnv 3"


def test_gym_make_imports_zooport_by_its_module_prefix():
    out = _run(
        """
import gymnasium as gym
print(type(gym.make("zooport:zooport/Tag-v0").unwrapped).__name__)
"""
    )
    assert out == "GymEnv"


@pytest.mark.skipif(not HAS_REGISTRY, reason="PettingZoo < 1.27 has no registry")
def test_pettingzoo_registration_runs_once():
    out = _run(
        """
import pettingzoo

class Counting(dict):
    checks = 0
    def __contains__(self, key):
        Counting.checks += 1
        return super().__contains__(key)

pettingzoo.aec_registry = Counting(pettingzoo.aec_registry)
import zooport
import zooport.adapters.pettingzoo_envs
from zooport.adapters.pettingzoo_envs import tag_v0
env = pettingzoo.make("aec", "zooport/tag-v0", seed=0)
print(Counting.checks, type(env).__name__)
"""
    )
    # One check per built-in with PettingZoo entry points: registered once.
    assert out == "5 PettingZooAECEnv"


@pytest.mark.parametrize("package", ["zooport", "zooport.adapters", "zooport.envs.builtin"])
def test_every_lazily_imported_public_name_resolves(package):
    import importlib

    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
        assert name in dir(module)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        module.nope  # noqa: B018
