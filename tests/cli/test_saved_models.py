"""Saved models in-process: ``play(model=...)`` against a hand-driven loop, ``train(resume=)``,
the zip's ``zooport.json``, and resolving a factory from the working directory or a file."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest

from zooport.cli.common import UsageError
from zooport.cli.play import play
from zooport.cli.targets import resolve_target
from zooport.cli.training import ModelInfo, load_model, read_model_info, save_model, train


@pytest.fixture(scope="module")
def basic_model():
    """PPO trained briefly on Basic (2 agents, 4-step episodes) through the vector route."""
    target = resolve_target("Basic", {"n_agents": 2, "max_steps": 4})
    return train(target, steps=32, seed=0, progress=False).model


@pytest.fixture(scope="module")
def grid_model():
    """MaskablePPO trained briefly on GridWorld (masked actions) through the PettingZoo route."""
    target = resolve_target("GridWorld", {"n_agents": 2, "max_steps": 6})
    result = train(target, api="parallel", steps=32, seed=0, progress=False,
                   ppo_kwargs={"n_epochs": 1})  # fmt: skip
    assert result.algorithm == "MaskablePPO"
    return result.model


def test_play_vector_with_a_model_is_its_deterministic_policy(basic_model):
    from zooport.adapters import BehaviorVectorEnv
    from zooport.envs.builtin import Basic

    stats = play(resolve_target("Basic", {"n_agents": 2, "max_steps": 4}), api="vector",
                 steps=30, seed=7, progress=False, model=basic_model)  # fmt: skip
    assert stats.policy == "PPO" and stats.agent_steps == 60
    # The same loop by hand: predict(deterministic=True) on the batch, returns per slot.
    env = BehaviorVectorEnv(Basic(n_agents=2, max_steps=4))
    obs, _ = env.reset(seed=7)
    running, finished = np.zeros(2), []
    for _ in range(30):
        actions, _ = basic_model.predict(obs, deterministic=True)
        obs, reward, terminated, truncated, _ = env.step(actions)
        running += reward
        for i in np.flatnonzero(terminated | truncated):
            finished.append(running[i])
            running[i] = 0.0
    env.close()
    assert len(finished) >= 14
    assert stats.episode_rewards == pytest.approx(finished)


def test_play_parallel_with_a_masked_model_gives_it_the_masks(grid_model, monkeypatch):
    from zooport.adapters import PettingZooParallelEnv
    from zooport.envs.builtin import GridWorld

    seen = []
    predict = grid_model.predict

    def spy(observations, **options):
        seen.append(options)
        return predict(observations, **options)

    monkeypatch.setattr(grid_model, "predict", spy)
    stats = play(resolve_target("GridWorld", {"n_agents": 2, "max_steps": 6}), api="parallel",
                 steps=20, seed=3, progress=False, model=grid_model)  # fmt: skip
    monkeypatch.undo()
    # One batched predict per step, deterministic, with each live agent's mask (1 = allowed).
    assert len(seen) == 20
    assert all(o["deterministic"] is True and o["action_masks"].dtype == np.int8 for o in seen)
    env = PettingZooParallelEnv(GridWorld(n_agents=2, max_steps=6), mask_in_info=True)
    obs, infos = env.reset(seed=3)
    finished, running = [], {}
    for _ in range(20):
        if not env.agents:
            obs, infos = env.reset()
        agents = list(env.agents)
        batch = {k: np.stack([obs[a][k] for a in agents]) for k in obs[agents[0]]}  # camera, goal
        masks = np.stack([infos[a]["action_mask"] for a in agents])
        actions, _ = grid_model.predict(batch, deterministic=True, action_masks=masks)
        obs, rewards, terminated, truncated, infos = env.step(
            dict(zip(agents, actions, strict=True))
        )
        for agent, reward in rewards.items():
            running[agent] = running.get(agent, 0.0) + reward
            if terminated[agent] or truncated[agent]:
                finished.append(running.pop(agent))
    env.close()
    assert stats.episode_rewards == pytest.approx(finished) and finished


def test_play_gym_and_aec_with_a_model_act_one_agent_at_a_time(basic_model):
    from zooport.adapters import GymEnv
    from zooport.envs.builtin import Basic

    target = resolve_target("Basic", {"n_agents": 2, "max_steps": 4})
    stats = play(target, api="gym", steps=12, seed=5, progress=False, model=basic_model)
    # GymEnv serves one agent (n_agents=1, the single-agent plan); the policy acts on it.
    env = GymEnv(Basic(n_agents=1, max_steps=4))
    obs, _ = env.reset(seed=5)
    finished, running = [], 0.0
    for _ in range(12):
        action, _ = basic_model.predict(obs, deterministic=True)
        obs, reward, terminated, truncated, _ = env.step(action)
        running += reward
        if terminated or truncated:
            finished.append(running)
            running = 0.0
            obs, _ = env.reset()
    env.close()
    assert (stats.agent_steps, stats.episode_rewards) == (12, pytest.approx(finished))
    turns = play(target, api="aec", steps=16, seed=5, progress=False, model=basic_model)
    assert turns.policy == "PPO" and 0 < turns.agent_steps <= 16 and turns.episodes >= 2


def test_play_refuses_a_model_of_other_spaces(basic_model):
    with pytest.raises(UsageError, match="expected Tag through --api parallel to give the model"):
        play(resolve_target("Tag"), api="parallel", steps=2, progress=False, model=basic_model)
    with pytest.raises(UsageError, match="--model acts through --api gym, vector, parallel or aec"):
        play(resolve_target("Basic"), api="raw", steps=2, progress=False, model=basic_model)


def test_save_read_load_and_resume(basic_model, tmp_path):
    info = ModelInfo("Basic", {"n_agents": 2, "max_steps": 4}, "vector", "Basic", "PPO", 0,
                     int(basic_model.num_timesteps), "0.1.0")  # fmt: skip
    written = save_model(basic_model, tmp_path / "basic", info)
    assert written == tmp_path / "basic.zip"
    assert read_model_info(tmp_path / "basic") == info  # found as basic.zip, as SB3 does
    with zipfile.ZipFile(written) as archive:
        assert json.loads(archive.read("zooport.json"))["kwargs"] == info.kwargs
    loaded = load_model(written, info)
    obs = np.zeros((3, 20), np.float32)
    np.testing.assert_array_equal(loaded.predict(obs, deterministic=True)[0],
                                  basic_model.predict(obs, deterministic=True)[0])  # fmt: skip
    target = resolve_target("Basic", info.kwargs)
    resumed = train(target, steps=16, seed=1, progress=False, resume=written)
    assert resumed.timesteps == basic_model.num_timesteps + 16
    assert (resumed.algorithm, resumed.behavior) == ("PPO", "Basic")
    with pytest.raises(UsageError, match="ppo_kwargs set up a new model"):
        train(target, steps=16, progress=False, resume=written, ppo_kwargs={"n_epochs": 1})


def test_model_info_rejects_what_it_cannot_read(tmp_path):
    with pytest.raises(UsageError, match="expected zooport.json of format 1, got 7"):
        ModelInfo.from_json('{"format": 7}', "m.zip")
    with pytest.raises(UsageError, match="expected an algorithm among"):
        ModelInfo.from_json('{"format": 1, "env": "Basic", "algorithm": "DQN"}', "m.zip")
    with pytest.raises(UsageError, match="unexpected fields"):
        ModelInfo.from_json('{"format": 1, "env": "Basic", "policy": "x"}', "m.zip")
    (tmp_path / "text.zip").write_text("not a zip")
    with pytest.raises(UsageError, match="expected SB3's zip file"):
        read_model_info(tmp_path / "text.zip")


# ---------------------------------------------------------------------- factories


MODULE = textwrap.dedent(
    """
    from zooport.envs.builtin import Basic

    def make(n_agents=1):
        return Basic(n_agents=n_agents)
    """
)


def test_module_attr_is_found_in_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "cwd_factory_mod.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    # As under a console script: neither "" nor the working directory is on sys.path.
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", os.getcwd())])
    monkeypatch.delitem(sys.modules, "cwd_factory_mod", raising=False)
    target = resolve_target("cwd_factory_mod:make", {"n_agents": 3})
    assert sys.path[0] == str(tmp_path)
    assert target.make().n_agents == 3


def test_a_file_path_imports_its_module_by_name(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    file = tmp_path / "sub" / "file_factory_mod.py"
    file.write_text(MODULE)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "file_factory_mod", raising=False)
    target = resolve_target(f"{file}:make")
    # Importable by name (worker processes, pickles), from the file given.
    assert Path(sys.modules["file_factory_mod"].__file__) == file
    assert target.make().n_agents == 1 and target.entry is None
    with pytest.raises(UsageError, match="expected a file whose name is a Python module name"):
        bad = tmp_path / "not-a-name.py"
        bad.write_text(MODULE)
        resolve_target(f"{bad}:make")
