"""zooport.adapters: any BaseEnv as the API an RL library consumes, one front-end module per API;
every public name loads on first use."""

from __future__ import annotations

from zooport._lazy import lazy_attributes

_MODULES = {
    "agent_names": ("AgentKey", "AgentNames"),
    "core_access": ("adopt_core",),
    "gym_env": ("GymEnv", "UnityToGymWrapper"),
    "mlagents_serve": ("relay_channels", "serve_mlagents"),
    "multi_agent_task": ("MultiAgentTask", "MultiAgentUnityTask", "PettingZooTask", "Transition"),
    "options": ("TerminationMode",),
    "pettingzoo_aec": ("PettingZooAECEnv", "UnityAECEnv"),
    "pettingzoo_parallel": ("PettingZooParallelEnv", "UnityParallelEnv"),
    "registration": ("register_builtin_envs", "register_gymnasium"),
    "sb3_vec_env": ("SB3VecEnv",),
    "task_api": ("GymTask",),
    "vector_env": ("BehaviorVectorEnv",),
}
__all__ = sorted(name for names in _MODULES.values() for name in names)
__getattr__, __dir__ = lazy_attributes(__name__, _MODULES)
