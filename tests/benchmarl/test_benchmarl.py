"""docs/recipes/benchmarl.md: zooport under BenchMARL 1.5.2's torchrl (0.11).

Import order in both directions (BenchMARL and ``torchrl.envs`` look gymnasium and
pettingzoo up before importing them), TorchRL's ``GymEnv`` by registry id (it passes
``frameskip=`` and retries without it on Python's own TypeError wording), ``GymWrapper``
over ``gym.make_vec`` (it reads ``autoreset_mode``), and the ``PettingZooWrapper`` BenchMARL's
PettingZoo tasks use, each checked with TorchRL's ``check_env_specs`` and a rollout compared
with the raw core's rewards.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch

import zooport  # noqa: F401 - registers zooport/<Name>-v0 with Gymnasium

#: torchrl 0.11's PettingZooWrapper warns on every construction unless PettingZoo is 1.24.3.
PETTINGZOO_VERSION_WARNING = "PettingZoo in TorchRL is tested using version"


@pytest.mark.parametrize(
    "imports",
    ["import zooport, benchmarl", "import benchmarl, zooport"],
    ids=["zooport-first", "benchmarl-first"],
)
def test_import_order_does_not_matter(imports):
    code = textwrap.dedent(
        f"""
        {imports}
        import gymnasium as gym
        from torchrl.envs import GymEnv

        env = GymEnv("zooport/Basic-v0")
        print(env.rollout(3).batch_size)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("torch.Size([3])")


def test_gym_env_by_registry_id():
    from torchrl.envs import GymEnv
    from torchrl.envs.utils import check_env_specs

    env = GymEnv("zooport/Basic-v0")
    check_env_specs(env)
    env.set_seed(0)
    rollout = env.rollout(20, break_when_any_done=False)
    rewards = rollout["next", "reward"].squeeze(-1).numpy()
    # Basic: -0.01 a step, +0.1 or +1 on reaching a goal; a random walk stays in that range.
    assert rewards.shape == (20,) and np.all((rewards >= -0.011) & (rewards <= 1.0))
    env.close()


def test_gym_wrapper_over_make_vec():
    from torchrl.envs import GymWrapper
    from torchrl.envs.utils import check_env_specs

    vector = gym.make_vec("zooport/BallBalance-v0", num_envs=4)
    assert vector.autoreset_mode == vector.metadata["autoreset_mode"]
    env = GymWrapper(vector)
    check_env_specs(env)
    rollout = env.rollout(10, break_when_any_done=False)
    assert rollout.batch_size == torch.Size([4, 10])
    # BallBalance pays 0.1 a step per platform whose ball stays on; -1 when it falls.
    rewards = rollout["next", "reward"].numpy()
    assert (np.isclose(rewards, 0.1) | np.isclose(rewards, -1.0)).all()
    env.close()


def test_pettingzoo_wrapper_as_benchmarl_builds_it():
    from torchrl.envs import PettingZooWrapper
    from torchrl.envs.utils import check_env_specs

    from zooport.adapters import PettingZooParallelEnv
    from zooport.envs.builtin import Tag

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", PETTINGZOO_VERSION_WARNING, UserWarning)
        env = PettingZooWrapper(
            env=PettingZooParallelEnv(Tag(seed=0), termination_mode="any"),
            use_mask=True,
            categorical_actions=True,
        )
    assert sorted(env.group_map) == ["runner", "tagger"]
    check_env_specs(env)
    rollout = env.rollout(10)
    assert rollout["next", "runner", "reward"].shape[-2] == len(env.group_map["runner"])
    env.close()
