"""One behaviour's N agents as a Gymnasium ``VectorEnv`` of N slots over one batched core."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import batch_space
from typing_extensions import override

from zooport.adapters.behavior_slots import RENDER_MODES, BehaviorSlots, SlotAdapter
from zooport.adapters.core_access import render_core
from zooport.adapters.options import listing_options
from zooport.adapters.rendering import HUMAN_VIA_MAKE

__all__ = ["BehaviorVectorEnv", "SAME_STEP", "RENDER_MODES"]

_OBJECT, _INT64, _FLOAT32 = np.dtype(object), np.dtype(np.int64), np.dtype(np.float32)

# gymnasium 1.0 has no AutoresetMode (its wrappers assume next-step): a string there.
_MODES = getattr(gym.vector, "AutoresetMode", None)
#: The value declared in ``metadata["autoreset_mode"]``.
SAME_STEP: Any = "SameStep" if _MODES is None else _MODES.SAME_STEP


@listing_options
class BehaviorVectorEnv(SlotAdapter, gym.vector.VectorEnv):
    """The N agents of one behaviour of a batched core as N Gymnasium vector slots, with
    SAME_STEP autoreset. Info keys (each with its ``_key`` mask): ``decided``, ``action_mask``
    (int8, 1 = allowed), ``group_id``, ``group_reward``, and for the slots that ended
    ``final_obs`` and ``final_info`` (the guide "Gymnasium and Stable-Baselines3" has the rules).

    Args:
        env: any ``BaseEnv``; one with no behaviours yet (a Unity scene) is stepped once.
        behavior_name: the behaviour whose agents are the slots (needed when there are several).
        uint8_visual: visual observations as uint8 0..255 instead of float32 0..1.
        flatten_branched: several discrete branches as one ``Discrete``, not ``MultiDiscrete``.
        allow_multiple_obs: observations always as a ``Dict`` keyed by observation name.
        render_mode: None or ``"rgb_array"`` (the core's one picture of all agents);
            ``gym.make_vec`` serves ``"human"``.

    Example:
        >>> from zooport.envs.builtin.ball_balance import BallBalance
        >>> envs = BehaviorVectorEnv(BallBalance(n_agents=4, seed=0))
        >>> envs.num_envs, envs.single_action_space, envs.observation_space.shape
        (4, Box(-1.0, 1.0, (2,), float32), (4, 8))
        >>> obs, info = envs.reset(seed=0)
        >>> obs, reward, terminated, truncated, info = envs.step(np.zeros((4, 2)))
        >>> reward.tolist(), info["decided"].tolist()
        ([0.1..., 0.1..., 0.1..., 0.1...], [True, True, True, True])
        >>> envs.close()
    """

    _human = HUMAN_VIA_MAKE

    def _build(self, slots: BehaviorSlots) -> None:
        n = self.num_envs = slots.num_slots
        self.single_observation_space = slots.obs_layout.space
        self.single_action_space = slots.action_layout.space
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        # Also an attribute, as Sync/AsyncVectorEnv have it (TorchRL's GymWrapper reads it).
        self.autoreset_mode = SAME_STEP
        self.metadata = {
            "autoreset_mode": SAME_STEP,
            "render_modes": list(RENDER_MODES),
            "render_fps": (getattr(slots.core, "metadata", None) or {}).get("render_fps", 30),
        }
        # Every slot has these keys every step: one read-only mask serves every info.
        every = np.broadcast_to(True, n)
        keys = ("decided", "group_id", "group_reward", "action_mask")[: 3 + bool(slots.mask_size)]
        self._every_mask = {f"_{key}": every for key in keys}

    @override
    def _restart(self, seed: int | None) -> tuple[Any, dict[str, Any]]:
        slots = self._slots
        slots.reset(seed)
        zero = np.zeros(self.num_envs, dtype=np.float32)
        return slots.obs_layout.copy(slots.obs), self._info(slots.decided.copy(), zero)

    @override
    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Sends the decided slots' actions and steps the core until a slot reports."""
        out, obs, groups = self._step(actions)
        info = self._info(out.decided, out.group_reward)
        done, n = out.final_slots, self.num_envs
        if done.size:
            final_obs = np.empty(n, dtype=_OBJECT)  # None where the episode goes on
            # Indexed item by item: for the few slots that end, cheaper than a scatter.
            observations = out.final_observations()
            for i, slot in enumerate(done.tolist()):
                final_obs[slot] = observations[i]
            mask = out.terminated | out.truncated  # the slots that carry the final keys
            mask.setflags(write=False)  # read-only, so the four masks can be one array
            group_id = np.zeros(n, dtype=_INT64)
            group_id[done] = groups[done]
            group_reward = np.zeros(n, dtype=_FLOAT32)
            group_reward[done] = out.group_reward[done]
            info["final_obs"], info["_final_obs"], info["_final_info"] = final_obs, mask, mask
            info["final_info"] = {
                "group_id": group_id,
                "_group_id": mask,
                "group_reward": group_reward,
                "_group_reward": mask,
            }
        return obs, out.reward, out.terminated, out.truncated, info

    @override
    def render(self) -> np.ndarray | None:  # type: ignore[override]  # one picture, not a tuple
        """The core's rgb_array picture of all its agents, or None without ``render_mode``."""
        self._check_open()
        return None if self.render_mode is None else render_core(self._slots.core)

    def _info(self, decided: np.ndarray, group_reward: np.ndarray) -> dict[str, Any]:
        slots = self._slots
        info = {
            "decided": decided,
            "group_id": slots.group_id.copy(),
            "group_reward": group_reward,
            **self._every_mask,
        }
        if slots.mask_size:
            info["action_mask"] = slots.mask.copy()
        return info
