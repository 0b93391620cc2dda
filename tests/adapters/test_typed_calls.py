"""The front ends' documented calls, type-checked as a user's checker sees them.

zooport ships py.typed, so a user's mypy or pyright reads these signatures (plain keyword
parameters, some options also by position). ``make typecheck`` runs mypy over this module: a
call below that a checker refuses (``PettingZooParallelEnv(core, termination_mode=...)`` was
"Unexpected keyword argument", ``step_all({"runner_0": 0})`` an incompatible ``dict[str,
Any]``) fails the lint step. Here the same calls run, and their results are compared with
the documented values.
"""

from __future__ import annotations

from typing import Any

from zooport.adapters.gym_env import GymEnv, UnityToGymWrapper
from zooport.adapters.multi_agent_task import MultiAgentTask
from zooport.adapters.pettingzoo_aec import PettingZooAECEnv
from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.adapters.sb3_vec_env import SB3VecEnv
from zooport.adapters.vector_env import BehaviorVectorEnv
from zooport.envs.builtin.basic import Basic
from zooport.envs.builtin.tag import Tag


def test_options_by_keyword_and_by_position() -> None:
    gym = GymEnv(Basic(), "Basic", action_space_seed=3)
    unity = UnityToGymWrapper(Basic(), False, True, False, 7)
    vector = BehaviorVectorEnv(Tag(seed=0), "Runner?team=0", uint8_visual=False)
    sb3 = SB3VecEnv(Tag(seed=0), behavior_name="Tagger?team=1")
    parallel = PettingZooParallelEnv(Tag(seed=0), termination_mode="any")
    aec = PettingZooAECEnv(Tag(seed=0), termination_mode="all")
    try:
        assert gym.options.behavior_name == "Basic"
        assert gym.options.action_space_seed == 3
        assert unity.options.action_space_seed == 7 and unity.options.flatten_branched
        assert vector.num_envs == 3 and sb3.num_envs == 2
        assert parallel.options.termination_mode == "any"
        assert aec.options.termination_mode == "all"
    finally:
        for env in (gym, unity, vector, sb3, parallel, aec):
            env.close()


def test_step_all_takes_a_dict_keyed_by_name_or_by_position() -> None:
    task = MultiAgentTask(Tag(seed=0), termination_mode="majority")
    task.reset(seed=0)
    by_name: dict[str, Any] = {agent: 0 for agent in task.agents}
    assert sorted(task.step_all(by_name)) == sorted(task.agents)
    by_position: dict[int, Any] = {i: 0 for i in range(task.num_agents)}
    assert sorted(task.step_all(by_position)) == sorted(task.agents)
    task.close()
