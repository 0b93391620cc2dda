"""Imports follow the layers: ``import zooport.envs`` loads neither gymnasium nor pettingzoo,
``import zooport`` and ``import zooport.adapters`` load no adapter, and registration still
happens, once, whichever of zooport, gymnasium and pettingzoo is imported first."""

from __future__ import annotations

import importlib.util
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


def test_import_zooport_loads_neither_numpy_nor_registration_and_envs_only_the_api():
    out = _run(
        LOADED
        + """
import zooport
print(loaded("numpy", "gymnasium", "pettingzoo", "zooport.adapters", "typing"))
import zooport.envs
print(loaded("zooport.envs"))
"""
    )
    # Issue 24: `import zooport` under 30 ms, so not even typing (with re and enum, 13 ms in a
    # plain install); the checker, the registry, the side channels, BatchedEnv and CorePool
    # load when a name needing them is first used (test_every_lazily_imported_public_name...).
    assert out.splitlines() == [
        "[]",
        "['zooport.envs', 'zooport.envs.arguments', 'zooport.envs.base_env', 'zooport.envs.steps']",
    ]


def test_import_zooport_and_adapters_load_no_adapter():
    out = _run(
        LOADED
        + """
import zooport, zooport.adapters
adapters = [m for m in loaded("zooport.adapters") if m.rsplit(".", 1)[1] in (
    "gym_env", "vector_env", "sb3_vec_env", "pettingzoo_parallel", "pettingzoo_aec",
    "multi_agent_task", "wrappers", "mlagents_serve")]
print(adapters, loaded("gymnasium", "pettingzoo", "stable_baselines3", "grpc", "google"))
"""
    )
    assert out == "[] []"


#: Ways a program (or a library it imports) can bring in zooport, gymnasium and pettingzoo.
#: torchrl.envs and BenchMARL look for gymnasium with find_spec before importing it.
IMPORT_ORDERS = {
    "zooport first": "import zooport; import gymnasium as gym; import pettingzoo",
    "zooport last": "import gymnasium as gym; import pettingzoo; import zooport",
    "zooport between": "import gymnasium as gym; import zooport; import pettingzoo",
    "find_spec before import": """
import zooport, importlib.util
assert importlib.util.find_spec("gymnasium") and importlib.util.find_spec("pettingzoo")
import gymnasium as gym; import pettingzoo""",
    "import_module": """
import zooport, importlib
gym = importlib.import_module("gymnasium"); pettingzoo = importlib.import_module("pettingzoo")""",
    "pettingzoo brings gymnasium": "import zooport; import pettingzoo; import gymnasium as gym",
    "module prefix": """
import gymnasium as gym; gym.make("zooport:zooport/Basic-v0"); import pettingzoo""",
}


@pytest.mark.parametrize("order", IMPORT_ORDERS.values(), ids=IMPORT_ORDERS)
def test_registration_does_not_depend_on_import_order(order):
    out = _run(
        order
        + """
import sys
env = gym.make("zooport/Basic-v0")
vec = gym.make_vec("zooport/BallBalance-v0", num_envs=3)
print(type(env.unwrapped).__name__, type(vec).__name__, vec.num_envs)
if hasattr(pettingzoo, "parallel_registry"):  # PettingZoo >= 1.27
    print(pettingzoo.make("parallel", "zooport/tag-v0", seed=0), end=" ")
    print(pettingzoo.make("aec", "zooport/soccer-v0", seed=0))
else:
    print("tag_v0 soccer_v0")
# Each module keeps its own loader, and the finder leaves once nothing is awaited.
print(gym.__loader__ is gym.__spec__.loader, type(gym.__loader__).__name__,
      [type(f).__name__ for f in sys.meta_path if type(f).__module__ == "zooport"])
"""
    )
    assert out.splitlines() == [
        "GymEnv BehaviorVectorEnv 3",
        "tag_v0 soccer_v0",
        "True SourceFileLoader []",
    ]


def test_registration_survives_torchrl_looking_for_gymnasium():
    if importlib.util.find_spec("torchrl") is None:
        pytest.skip("torchrl is not installed")
    out = _run(
        """
import zooport
import torchrl.envs
import gymnasium as gym
print(type(gym.make("zooport/Basic-v0").unwrapped).__name__)
"""
    )
    assert out == "GymEnv"


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


@pytest.mark.parametrize(
    "package", ["zooport", "zooport.adapters", "zooport.envs", "zooport.envs.builtin"]
)
def test_every_lazily_imported_public_name_resolves(package):
    import importlib

    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
        assert name in dir(module)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        module.nope  # noqa: B018
