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
    registration: the one module that registers (``zooport/<Name>-v0`` for
        ``gym.make``/``gym.make_vec``, ``zooport/<name>-v0`` for PettingZoo,
        ``register_gymnasium`` for a user's own core) and holds every entry point, with
        core_building (a core or a pool from an identifier or a factory, options split by
        name).
    pettingzoo_envs: the built-ins' PettingZoo entry-point modules (``tag_v0``, ...).
    options: every adapter's options, declared once (frozen dataclasses).
    slot family engine: behavior_slots (``BehaviorSlots``), slot_adapter (the members
        ``GymEnv``, ``BehaviorVectorEnv`` and ``SB3VecEnv`` share).
    driver family engine: multi_agent_driver, agent_group, driver_controls (the members the
        PettingZoo adapters and ``MultiAgentTask`` share), pettingzoo_common.
    shared by both: agent_slots (the design's step rules), spaces and action_layout (spec ->
        space conversions), core_access, rendering, agent_names, termination, task_api,
        import_hooks.

Every public name below is imported on first use, so ``import zooport.adapters`` costs
nothing and zooport works without stable-baselines3 (needed by ``SB3VecEnv`` only).
"""

from __future__ import annotations

from zooport._lazy import lazy_attributes

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

# Every public name -> the module that defines it, imported on first use (as Gymnasium's
# ``gymnasium.wrappers`` does): ``import zooport.adapters`` loads no adapter, and
# stable-baselines3, an optional dependency, only with ``SB3VecEnv``.
__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        name: f"{__name__}.{module}"
        for module, names in {
            "agent_names": ("AgentKey", "AgentNames"),
            "core_access": ("adopt_core",),
            "gym_env": ("GymEnv", "UnityToGymWrapper"),
            "gym_task": ("GymTask",),
            "multi_agent_task": ("MultiAgentTask", "MultiAgentUnityTask", "Transition"),
            "pettingzoo_aec": ("PettingZooAECEnv", "UnityAECEnv"),
            "pettingzoo_parallel": ("PettingZooParallelEnv", "UnityParallelEnv"),
            "pettingzoo_task": ("PettingZooTask",),
            "registration": ("register_builtin_envs", "register_gymnasium"),
            "sb3_vec_env": ("SB3VecEnv",),
            "termination": ("TerminationMode", "TerminationRule"),
            "vector_env": ("BehaviorVectorEnv",),
        }.items()
        for name in names
    },
)
