"""A Gymnasium env over the one agent of one behaviour of any BaseEnv (``UnityToGymWrapper``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from typing_extensions import override

from zooport.adapters.behavior_slots import SlotAdapter
from zooport.adapters.core_access import render_core
from zooport.adapters.options import GymOptions, listing_options
from zooport.adapters.rendering import HUMAN_VIA_MAKE, check_render_mode, visual_frame
from zooport.envs.arguments import check_seed
from zooport.envs.base_env import BaseEnvLike
from zooport.errors import ActionError, EnvNotResetError, SpecError

__all__ = ["GymEnv", "UnityToGymWrapper"]


@listing_options
class GymEnv(SlotAdapter, gym.Env[Any, Any]):
    """A ``gymnasium.Env`` over the one agent of one behaviour of a ``BaseEnv``.

    ``interrupted`` is ``truncated``; ``info`` holds ``group_id``, ``group_reward`` and, for
    discrete actions, ``action_mask``. ``reset()`` does not reset a core that restarted the agent.

    Args:
        env: any ``BaseEnv`` (an older ML-Agents API is adapted), reset once here to count
            the agents; one with no behaviours yet (a Unity scene) is stepped once first.
        behavior_name: the behaviour served (needed when the core has several).
        uint8_visual: visual observations as uint8 0..255 instead of float32 0..1.
        flatten_branched: several discrete branches as one ``Discrete``, not ``MultiDiscrete``.
        allow_multiple_obs: observations always as a ``Dict`` keyed by observation name.
        render_mode: None or ``"rgb_array"``, fixed at construction: ``render()`` returns
            the core's picture, or its first visual observation where it draws none.
            ``"human"`` is served by ``gym.make``, which shows those frames in a window.
        action_space_seed: seeds ``action_space`` (for ``action_space.sample()``), as
            ML-Agents' wrapper does; the core is seeded by ``reset(seed=...)``.

    Example:
        >>> from zooport.envs.builtin.basic import Basic
        >>> env = GymEnv(Basic())
        >>> env.observation_space, env.action_space
        (Box(-inf, inf, (20,), float32), Discrete(3))
        >>> obs, info = env.reset(seed=0)
        >>> int(obs.argmax()), info["action_mask"].tolist()
        (10, [1, 1, 1])
        >>> obs, reward, terminated, truncated, info = env.step(2)
        >>> int(obs.argmax()), round(reward, 2), terminated, truncated
        (11, -0.01, False, False)
        >>> env.close()
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 30}
    options: GymOptions
    _rows = 0

    def __init__(
        self,
        env: BaseEnvLike,
        behavior_name: str | None = None,
        *,
        uint8_visual: bool = False,
        flatten_branched: bool = False,
        allow_multiple_obs: bool = False,
        render_mode: str | None = None,
        action_space_seed: int | None = None,
    ) -> None:
        options = GymOptions(
            uint8_visual=uint8_visual,
            flatten_branched=flatten_branched,
            allow_multiple_obs=allow_multiple_obs,
            behavior_name=behavior_name,
            render_mode=render_mode,
            action_space_seed=action_space_seed,
        )
        slots = self._open_slots(env, options)
        if slots.num_slots != 1:
            raise SpecError(
                f"{type(self).__name__} serves one agent, but behavior {slots.name!r} has "
                f"{slots.num_slots} agents (ids {slots.ids.tolist()}); use "
                "zooport.adapters.BehaviorVectorEnv (one slot per agent) or "
                "zooport.adapters.PettingZooParallelEnv instead"
            )
        self.observation_space: spaces.Space = slots.obs_layout.space
        self.action_space: spaces.Space = slots.action_layout.space
        name = type(self).__name__
        seed = check_seed(options.action_space_seed, f"{name}(action_space_seed=...)")
        if seed is not None:
            self.action_space.seed(seed)
        # The constructor's reset started an episode that the first reset() hands out.
        self._fresh, self._episode_over = True, False

        core = slots.core
        self._core_renders = render_core(core) is not None
        self._visual = [i for i, s in enumerate(slots.obs_layout.specs) if len(s.shape) == 3]
        modes = ["rgb_array"] if self._core_renders or self._visual else []
        fps = getattr(core, "metadata", {}).get("render_fps", 30) if self._core_renders else 30
        # Per instance: the class attribute is shared and must not be mutated.
        self.metadata = {"render_modes": modes, "render_fps": fps}
        check_render_mode(
            options.render_mode, modes, f"{name} over {type(core).__name__}", human=HUMAN_VIA_MAKE
        )
        self.render_mode = options.render_mode

    @override
    def _restart(self, seed: int | None) -> tuple[Any, dict[str, Any]]:
        slots = self._slots
        # After a failed step or reset, always the whole core; else the constructor's unseen
        # episode, or an agent the core restarted after its episode ended, needs no reset.
        if (
            seed is not None
            or slots.guard.failure is not None
            or not (self._fresh or self._episode_over and slots.refill())
        ):
            slots.reset(seed)
        self._fresh, self._episode_over = False, False
        return slots.obs_layout.copy(slots.obs, 0), self._info()

    @override
    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Advances the core until the agent decides again (or its episode ends)."""
        self._check_open()
        if self._fresh or self._episode_over:
            ended = "the episode ended (terminated or truncated); " if self._episode_over else ""
            raise EnvNotResetError(f"{type(self).__name__}: {ended}call reset() before step()")
        slots = self._slots
        batch = self._batch(action, self.action_space)
        guard = slots.guard
        with guard.call("step"):
            slots.set_actions(batch)  # a bad action raises here and changes nothing
            guard.committed = True
            result = slots.advance()
            terminated, truncated = bool(result.terminated[0]), bool(result.truncated[0])
            self._episode_over = terminated or truncated
            obs = slots.obs_layout.copy(result.final_obs if self._episode_over else slots.obs, 0)
            info = self._info(group_reward=float(result.group_reward[0]))
        return obs, float(result.reward[0]), terminated, truncated, info

    def _info(self, **extra: Any) -> dict[str, Any]:
        info: dict[str, Any] = {"group_id": int(self._slots.group_id[0]), **extra}
        if self._slots.mask_size:
            info["action_mask"] = self._slots.mask[0].copy()
        return info

    @override
    def render(self) -> np.ndarray | None:
        """An (H, W, 3) uint8 frame with ``render_mode="rgb_array"``, else None."""
        self._check_open()
        if self.render_mode is None:
            gym.logger.warn(
                f"{type(self).__name__}.render() was called without a render_mode; construct "
                'the env with render_mode="rgb_array" (gym.make(..., render_mode="rgb_array"))'
            )
            return None
        if self._core_renders:
            frame = render_core(self.core)
            if frame is not None:
                return np.array(frame, dtype=np.uint8, copy=True)
        if not self._visual:
            return None
        keys, obs = self._slots.obs_layout.keys, self._slots.obs  # the first visual observation
        return visual_frame(obs[keys[self._visual[0]]][0] if keys else obs[0])

    @property
    def action_lookup(self) -> np.ndarray | None:
        """With ``flatten_branched``: row k is the branch tuple of action k; else None."""
        lookup = self._slots.action_layout.lookup
        return None if lookup is None else lookup.copy()

    def __repr__(self) -> str:
        return f"<{type(self).__name__}<{type(self.core).__name__}, {self.behavior_name!r}>>"

    def _batch(self, action: Any, space: spaces.Space) -> Any:
        # One consumer action as a batch of one (the layout checks dtypes and ranges).
        if isinstance(space, spaces.Dict):  # hybrid actions; else the engine names the keys
            if isinstance(action, Mapping) and set(action) == set(space.spaces):
                return {key: self._batch(action[key], sub) for key, sub in space.spaces.items()}
            return action
        try:
            array = np.asarray(action)
        except (ValueError, TypeError):  # ragged lists and the like: the engine says so
            return [action]
        expected = space.shape or ()  # every action space here (Box, Discrete...) has one
        # A Discrete action may also come as shape (1,), as some consumers send it; not (1, 1).
        if array.shape != expected and not (
            isinstance(space, spaces.Discrete) and array.shape == (1,)
        ):
            raise ActionError(
                f"{type(self).__name__}: behavior {self.behavior_name!r} expects an action of "
                f"shape {expected} for {space}, got shape {array.shape}"
            )
        return array.reshape((1, *expected))


@listing_options
class UnityToGymWrapper(GymEnv):
    """ML-Agents' ``UnityToGymWrapper``: :class:`GymEnv` with ML-Agents' positional options."""

    def __init__(
        self,
        unity_env: BaseEnvLike,
        uint8_visual: bool = False,
        flatten_branched: bool = False,
        allow_multiple_obs: bool = False,
        action_space_seed: int | None = None,
        *,
        behavior_name: str | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(
            unity_env,
            behavior_name,
            uint8_visual=uint8_visual,
            flatten_branched=flatten_branched,
            allow_multiple_obs=allow_multiple_obs,
            render_mode=render_mode,
            action_space_seed=action_space_seed,
        )
