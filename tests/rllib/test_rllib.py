"""RLlib (Ray 2.60) trains PPO on Tag through the PettingZoo Parallel adapter.

One RLModule per behaviour, sampling in a separate EnvRunner process; plus the workaround
for RLlib's ``__all__`` flags (see examples/rllib_tag.py) and the policy mapping.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
import ray
from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv

from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.envs.builtin import Tag
from zooport.errors import UnknownAgentError

from tests.support.paths import EXAMPLES, load_script

EXAMPLE = EXAMPLES / "rllib_tag.py"
MODULES = ("runner", "tagger")
SHORT_STEPS = 40  # the example's --short episode cap (Tag max_steps)
#: The parameters of RLlib's default PPO module that act (what env runners receive).
POLICY_PARAMS = ("encoder.actor_encoder.", "pi.")


# Not left in sys.modules: Ray's cloudpickle then ships make_env to the worker processes by
# value, as it does for a script run as __main__ (the workers cannot import it).
example = load_script(EXAMPLE, "rllib_tag")


# ---------------------------------------------------------------------- no Ray cluster


def test_policy_mapping_uses_the_adapters_names():
    env = PettingZooParallelEnv(Tag(seed=0, n_runners=2, n_taggers=3))
    env.reset(seed=0)
    mapped = {agent: example.policy_for_agent(agent, None) for agent in env.agents}
    assert mapped == {
        "runner_0": "runner",
        "runner_1": "runner",
        "tagger_2": "tagger",
        "tagger_3": "tagger",
        "tagger_4": "tagger",
    }
    with pytest.raises(UnknownAgentError, match="'blue_1'"):
        example.policy_for_agent("blue_1", None)


def _chase(observations: dict[str, np.ndarray]) -> dict[str, int]:
    """Taggers accelerate toward their nearest runner (obs[4:6] = its dx, dy); runners stay."""
    actions = {}
    for agent, obs in observations.items():
        if agent.startswith("tagger"):
            dx, dy = float(obs[4]), float(obs[5])
            if abs(dx) > abs(dy):
                actions[agent] = 4 if dx > 0 else 3
            else:
                actions[agent] = 1 if dy > 0 else 2
        else:
            actions[agent] = 0
    return actions


def _first_tag_step(seed: int) -> tuple[int, str]:
    env = PettingZooParallelEnv(Tag(seed=0))
    obs, _ = env.reset(seed=seed)
    for step in range(1, 200):
        obs, _, terminations, _, _ = env.step(_chase({a: obs[a] for a in env.agents}))
        tagged = [a for a, done in terminations.items() if done]
        if tagged:
            return step, tagged[0]
    raise AssertionError("the chasing taggers tagged nobody in 200 steps")


@pytest.mark.parametrize("wrapper", [ParallelPettingZooEnv, example.TagEnv])
def test_episode_ending_with_terminated_and_truncated_agents(wrapper):
    # The episode's last step: one runner is tagged (terminated) as max_cycles truncates
    # everybody else. Replaying the same actions up to that step makes it happen.
    last, tagged = _first_tag_step(seed=3)
    env = wrapper(PettingZooParallelEnv(Tag(seed=0), max_cycles=last))
    obs, _ = env.reset(seed=3)
    for _ in range(last):
        obs, _, terminateds, truncateds, _ = env.step(_chase(obs))
    assert env.par_env.agents == []
    assert [a for a, t in terminateds.items() if t and a != "__all__"] == [tagged]
    assert sorted(a for a, t in truncateds.items() if t and a != "__all__") == sorted(
        set(obs) - {tagged}
    )
    if wrapper is ParallelPettingZooEnv:
        # RLlib 2.60's own wrapper: neither flag says the episode is over (the bug).
        assert (terminateds["__all__"], truncateds["__all__"]) == (False, False)
    else:
        assert (terminateds["__all__"], truncateds["__all__"]) == (False, True)


# ---------------------------------------------------------------------- training


def _returns_within_bounds(row: dict) -> None:
    """Hand-computed bounds of one episode's module returns (3 runners, 2 taggers).

    A runner earns +0.01 per step alive and -1 in the step it is tagged, after which it
    leaves: its return lies in [-1, 0.01 * 40]. A tagger pays 0.01 per step for at most 40
    steps and gains +1 per tag, at most 3 tags in all (tagged runners leave the arena).
    """
    runner, tagger = row["runner_return"], row["tagger_return"]
    assert math.isfinite(runner) and math.isfinite(tagger), row
    assert -3.0 - 1e-6 <= runner <= 3 * 0.01 * SHORT_STEPS + 1e-6, row
    assert -2 * 0.01 * SHORT_STEPS - 1e-6 <= tagger < 3.0, row


def test_example_script_short_run(capsys):
    assert example.main(["--short"]) == 0
    out = capsys.readouterr().out
    assert "1 env runner process(es), 2 iterations of 256 env steps" in out
    table = [line.split() for line in out.splitlines() if line.split()[:1] in (["1"], ["2"])]
    assert [int(r[0]) for r in table] == [1, 2]
    assert [int(r[1]) for r in table] == [256, 512]  # env steps sampled so far
    assert "reward trend: runner" in out


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False)
    yield
    ray.shutdown()


def _learner_weights(algo) -> dict[str, dict[str, np.ndarray]]:
    weights = algo.learner_group.get_weights(module_ids=list(MODULES))
    return {m: {k: np.array(v) for k, v in weights[m].items()} for m in MODULES}


def _runner_process_weights(algo) -> list[tuple[int, dict[str, dict[str, np.ndarray]]]]:
    def read(env_runner):
        return os.getpid(), {
            m: {k: v.detach().cpu().numpy() for k, v in env_runner.module[m].state_dict().items()}
            for m in MODULES
        }

    return algo.env_runner_group.foreach_env_runner(read, local_env_runner=False)


def test_ppo_trains_one_policy_per_behaviour_in_worker_processes(local_ray):
    config = example.build_config(short=True, num_env_runners=1, seed=0)
    algo = config.build_algo()
    try:
        before = _learner_weights(algo)
        rows = [example.summarize(algo.train()) for _ in range(example.SHORT["iterations"])]
        after = _learner_weights(algo)
        remote = _runner_process_weights(algo)
    finally:
        algo.stop()

    # Sampling happened in one separate worker process.
    assert len(remote) == 1 and remote[0][0] != os.getpid()
    assert rows[-1]["env_steps"] == 2 * example.SHORT["batch"]
    assert rows[-1]["episodes"] >= 2 * example.SHORT["batch"] // SHORT_STEPS
    for row in rows:
        _returns_within_bounds(row)
    for module in MODULES:
        # Both policies trained: steps counted, policy weights moved, and the worker process
        # got them (RLlib syncs the inference-only part: actor encoder and policy head).
        assert rows[-1][f"{module}_steps_trained"] > 0, module
        policy_keys = [k for k in after[module] if k.startswith(POLICY_PARAMS)]
        assert len(policy_keys) >= 4, sorted(after[module])
        changed = [k for k in policy_keys if not np.allclose(before[module][k], after[module][k])]
        assert changed, f"{module}: no policy weight changed in training"
        for key in policy_keys:
            np.testing.assert_array_equal(remote[0][1][module][key], after[module][key], key)
