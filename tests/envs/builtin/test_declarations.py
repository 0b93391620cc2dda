"""What zooport knows about each built-in is declared once, on its class, and registered
from one module; the PettingZoo entry-point modules are generated from the declarations."""

from __future__ import annotations

import pickle
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pettingzoo
import pytest

import zooport
from zooport.adapters import pettingzoo_envs
from zooport.adapters.registration import (
    builtin_envs,
    make_vector_env,
    register_builtin_envs,
    register_pettingzoo_envs,
)
from zooport.envs.batched_env import EnvDeclaration
from zooport.envs.builtin import BUILTINS
from zooport.envs.registry import default_registry
from zooport.errors import ArgumentError

from tests.support.pettingzoo_versions import HAS_REGISTRY

CLASSES = builtin_envs()


def test_every_builtin_declares_itself():
    assert list(CLASSES) == list(BUILTINS) == list(default_registry)
    for name, cls in CLASSES.items():
        assert cls.__name__ == name and isinstance(cls.declaration, EnvDeclaration)
        assert default_registry[name].entry_point == f"{cls.__module__}:{name}"
    with pytest.raises(TypeError):  # shared by every instance: read-only
        CLASSES["Tag"].declaration.gym_kwargs["n_runners"] = 2
    with pytest.raises(ArgumentError, match="pettingzoo_name"):
        EnvDeclaration(pettingzoo_name="Tag")


@pytest.mark.parametrize("name", list(CLASSES))
def test_gymnasium_registration_reads_the_declaration(name):
    cls = CLASSES[name]
    register_builtin_envs()
    spec = gym.spec(f"zooport/{name}-v0")
    assert spec.kwargs == {"env_id": name, **cls.declaration.gym_kwargs}
    assert spec.max_episode_steps == cls.max_episode_steps
    threshold = cls.expected_reward if cls.declaration.gym_threshold else None
    assert spec.reward_threshold == threshold
    assert gym.make(spec.id).unwrapped.core.get_steps(spec.kwargs.get("behavior_name", name))


def test_pettingzoo_registration_and_modules_read_the_declarations():
    declared = {
        cls.declaration.pettingzoo_name: name
        for name, cls in CLASSES.items()
        if cls.declaration.pettingzoo_name
    }
    assert set(pettingzoo_envs.ENV_MODULES) == set(declared)
    assert "Basic" not in declared.values()  # single-agent: no PettingZoo entry points
    assert CLASSES["Basic"].declaration.pettingzoo_id is None
    ids = register_pettingzoo_envs()
    if not HAS_REGISTRY:  # PettingZoo < 1.27: nothing to register in
        assert ids == []
    for module_name, env_id in declared.items():
        module = getattr(pettingzoo_envs, module_name)
        assert module is sys.modules[f"zooport.adapters.pettingzoo_envs.{module_name}"]
        assert module.raw_env is module.env and ":class:`zooport.envs.builtin." in module.__doc__
        pz_id = CLASSES[env_id].declaration.pettingzoo_id
        if HAS_REGISTRY:
            assert pz_id in ids and pz_id in pettingzoo.parallel_registry
            env = pettingzoo.make("parallel", pz_id, seed=0)
        else:
            env = module.parallel_env(seed=0)
        assert type(env.core).__name__ == env_id and str(env) == module_name
        # Functions pickle by reference, as a module file's would.
        assert pickle.loads(pickle.dumps(module.parallel_env)) is module.parallel_env


def test_the_modules_import_by_name_in_a_fresh_process():
    code = (
        "import pickle, zooport.adapters.pettingzoo_envs.soccer_v0 as m;"
        "from zooport.adapters.pettingzoo_envs import tag_v0;"
        "env = m.parallel_env(seed=0, team_size=1);"
        "assert env.possible_agents == ['soccer_0_0', 'soccer_1_1'], env.possible_agents;"
        "print(pickle.dumps(tag_v0.env).decode('latin1').count('tag_v0'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == 1


def test_vector_agent_counts_come_from_the_declaration():
    envs = make_vector_env(num_envs=3, env_id="Tag", behavior_name="Tagger?team=1", seed=0)
    assert envs.num_envs == 3  # n_taggers=3, the runners' count untouched
    assert len(envs.core.get_steps("Runner?team=0")[0]) == 3
    soccer = make_vector_env(num_envs=2, env_id="Soccer", behavior_name="Soccer?team=1")
    assert soccer.num_envs == 2 and len(soccer.core.get_steps("Soccer?team=0")[0]) == 2
    # The examples the entry-point modules once carried, now checked here.
    from zooport.adapters.pettingzoo_envs import ball_balance_v0, grid_world_v0, tag_v0

    env = ball_balance_v0.parallel_env(seed=0, n_agents=3)
    env.reset(seed=0)
    _, rewards, _, _, _ = env.step({a: np.zeros(2, np.float32) for a in env.agents})
    assert {a: round(r, 3) for a, r in rewards.items()} == dict.fromkeys(env.agents, 0.1)
    grid = grid_world_v0.parallel_env(seed=0, n_agents=2)
    observations, _ = grid.reset(seed=0)
    assert sorted(observations["gridworld_0"]["observation"]) == ["camera", "goal"]
    assert observations["gridworld_0"]["action_mask"].dtype == np.int8
    tag = tag_v0.parallel_env(seed=0, spawn_every=2, termination_mode="any")
    tag.reset(seed=0)
    for _ in range(2):
        tag.step(dict.fromkeys(tag.agents, 0))
    assert tag.agents[-1] == "runner_5"  # a runner spawned in the second step
    assert zooport.make("Soccer", api="gym", seed=0).behavior_name == "Soccer?team=0"
