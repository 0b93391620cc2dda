"""zooport.adapters: any BaseEnv as the API an RL library consumes.

Modules (one per consumer API, plus the shared conversions):
    gym_env: ``GymEnv`` (alias ``UnityToGymWrapper``), one agent as a ``gymnasium.Env``.
    gym_task: ``GymTask``, a ``gymnasium.Wrapper`` with transforms, frame stacking, no-op starts.
    vector_env: ``BehaviorVectorEnv``, a behaviour's agents as a ``gymnasium.vector.VectorEnv``.
    sb3_vec_env: ``SB3VecEnv``, the same as a Stable-Baselines3 ``VecEnv`` (needs SB3).
    pettingzoo_parallel, pettingzoo_aec: ``PettingZooParallelEnv``, ``PettingZooAECEnv`` (and
        ML-Agents' ``UnityParallelEnv``/``UnityAECEnv``, which take its ``seed=``).
    multi_agent_task: ``MultiAgentTask`` (alias ``MultiAgentUnityTask``), per-agent stepping
        that advances the core once per cycle.
    pettingzoo_task: ``PettingZooTask``, a runner-facing wrapper over any PettingZoo env.
    wrappers: the wrapper collection (team, reward, action, observation, episode,
        communication) that ``zooport.make(id, wrappers=[...])`` composes.
    registration: ``zooport/<Name>-v0`` ids for ``gym.make``/``gym.make_vec``, and
        ``register_gymnasium`` for a user's own core.
    spaces, core_access, behavior_slots, agent_names, agent_group, multi_agent_driver,
    termination, task_api: the pieces the adapters share.

``SB3VecEnv`` is imported on first use, so zooport works without stable-baselines3.
"""

from __future__ import annotations

from typing import Any

from zooport.adapters.agent_names import AgentKey, AgentNames
from zooport.adapters.core_access import adopt_core
from zooport.adapters.gym_env import GymEnv, UnityToGymWrapper
from zooport.adapters.gym_task import GymTask
from zooport.adapters.multi_agent_task import MultiAgentTask, MultiAgentUnityTask, Transition
from zooport.adapters.pettingzoo_aec import PettingZooAECEnv, UnityAECEnv
from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv, UnityParallelEnv
from zooport.adapters.pettingzoo_task import PettingZooTask
from zooport.adapters.registration import register_builtin_envs, register_gymnasium
from zooport.adapters.termination import TerminationMode, TerminationRule
from zooport.adapters.vector_env import BehaviorVectorEnv

__all__ = [
    "AgentKey",
    "AgentNames",
    "BehaviorVectorEnv",
    "GymEnv",
    "GymTask",
    "MultiAgentTask",
    "MultiAgentUnityTask",
    "PettingZooAECEnv",
    "PettingZooParallelEnv",
    "PettingZooTask",
    "SB3VecEnv",
    "TerminationMode",
    "TerminationRule",
    "Transition",
    "UnityAECEnv",
    "UnityParallelEnv",
    "UnityToGymWrapper",
    "adopt_core",
    "register_builtin_envs",
    "register_gymnasium",
]


def __getattr__(name: str) -> Any:
    # Stable-Baselines3 is an optional dependency: import it only when asked for.
    if name == "SB3VecEnv":
        from zooport.adapters.sb3_vec_env import SB3VecEnv

        return SB3VecEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
