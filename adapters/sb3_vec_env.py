"""One behaviour's N agents as a Stable-Baselines3 ``VecEnv`` (the one module that needs SB3)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

try:
    from stable_baselines3.common.vec_env.base_vec_env import (
        VecEnv,
        VecEnvIndices,
        VecEnvObs,
        VecEnvStepReturn,
    )
except ImportError as exc:  # pragma: no cover - exercised only without SB3 installed
    raise ImportError(
        "zooport.adapters.sb3_vec_env needs stable-baselines3; install it with "
        '`pip install "stable-baselines3>=2.3"`'
    ) from exc
from typing_extensions import override

from zooport.adapters.behavior_slots import BehaviorSlots, SlotAdapter
from zooport.adapters.core_access import checked_reset_arguments, render_core
from zooport.adapters.options import listing_options
from zooport.envs.arguments import check_seed
from zooport.errors import ActionError, ArgumentError, ArgumentTypeError

__all__ = ["SB3VecEnv", "SlotIndexError"]

#: What ``step_wait`` finds when no ``step_async`` came first (None is an action to check).
_NO_ACTIONS: Any = object()
#: The attributes get_attr reads from the VecEnv, not the core ("action_masks" with masks).
_OWN_ATTRS = ("action_masks", "render_mode", "observation_space", "action_space")


class SlotIndexError(ArgumentError, IndexError):
    """Indices the VecEnv does not have; an ``IndexError`` too, as SB3's ``DummyVecEnv`` raises."""


@listing_options
class SB3VecEnv(SlotAdapter, VecEnv):
    """The N agents of one behaviour of a batched core as an SB3 ``VecEnv`` of N envs, with
    :class:`~zooport.adapters.vector_env.BehaviorVectorEnv`'s slots and autoreset. A finished
    slot's info holds ``terminal_observation`` and ``TimeLimit.truncated``, a slot without a
    new decision ``decided=False``; other infos are empty.

    Args:
        env: any ``BaseEnv``; one with no behaviours yet (a Unity scene) is stepped once.
        behavior_name: the behaviour whose agents are the slots (needed when there are several).
        uint8_visual: visual observations as uint8 0..255 instead of float32 0..1.
        flatten_branched: several discrete branches as one ``Discrete``, not ``MultiDiscrete``.
        allow_multiple_obs: observations always as a ``Dict`` keyed by observation name.
        render_mode: None or ``"rgb_array"`` (the core's one picture of all agents).

    Example:
        >>> from zooport.envs.builtin.ball_balance import BallBalance
        >>> venv = SB3VecEnv(BallBalance(n_agents=3, seed=0))
        >>> venv.num_envs, venv.observation_space.shape
        (3, (8,))
        >>> venv.seed(0)
        [0, 1, 2]
        >>> obs = venv.reset()
        >>> obs, reward, done, infos = venv.step(np.zeros((3, 2), np.float32))
        >>> obs.shape, done.tolist(), infos
        ((3, 8), [False, False, False], [{}, {}, {}])
        >>> venv.close()
    """

    def _build(self, slots: BehaviorSlots) -> None:
        self._actions: Any = _NO_ACTIONS
        #: True where the slot has a new decision after the last step (decision periods).
        self.decided = slots.decided.copy()
        VecEnv.__init__(self, slots.num_slots, slots.obs_layout.space, slots.action_layout.space)

    @override
    def reset(self) -> VecEnvObs:  # type: ignore[override]  # SB3's reset takes no seed
        """Resets the core (reseeded by the last ``seed()``) and returns the first obs."""
        self._check_open()
        given, where = self._options, f"{type(self).__name__}.reset (from set_options)"
        try:
            for options in given if isinstance(given, (list, tuple)) else [given]:
                checked_reset_arguments(None, options, where)
        finally:
            self._reset_options()
        slots = self._slots
        with slots.guard.resetting():
            slots.reset(self._seeds[0] if self._seeds else None)
            self._reset_seeds()
            self._actions = _NO_ACTIONS
            self.decided = slots.decided.copy()
            self.reset_infos = [{} for _ in range(self.num_envs)]
            return slots.obs_layout.copy(slots.obs)

    @override
    def step_async(self, actions: np.ndarray) -> None:
        """Stores the actions (one row per environment) for :meth:`step_wait`."""
        self._actions = actions

    @override
    def step_wait(self) -> VecEnvStepReturn:
        """Steps the core until a slot reports; returns ``(obs, reward, done, infos)``."""
        if self._actions is _NO_ACTIONS and not self.closed:
            raise ActionError(
                f"{type(self).__name__}.step_wait(): expected actions from step_async() first, "
                "got none"
            )
        out, obs, _ = self._step(self._actions)
        self._actions = _NO_ACTIONS
        # Distinct dicts, as DummyVecEnv gives: a consumer may write into any of them.
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        done = out.final_slots
        if done.size:
            cuts = out.truncated[done].tolist()
            rows = out.final_observations()  # indexed: iterating an array costs more
            for i, slot in enumerate(done.tolist()):
                infos[slot] = {"terminal_observation": rows[i], "TimeLimit.truncated": cuts[i]}
        self.decided = out.decided
        if self._slots._decision_slots is not self._slots._every:  # no array read when all decide
            for slot in np.flatnonzero(~out.decided).tolist():
                infos[slot]["decided"] = False
        return obs, out.reward, out.terminated | out.truncated, infos

    @override
    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Stores ``seed`` (None or an int >= 0) for the next ``reset()``."""
        return super().seed(check_seed(seed, f"{type(self).__name__}.seed"))

    close = SlotAdapter.close  # VecEnv's abstract close, defined here

    @override
    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The attribute for each index: per slot where it is one, else the core's."""
        idx = self._indices(indices, "get_attr", attr_name)
        if attr_name == "agent_id":
            return self._slots.ids[idx].tolist()
        own = _OWN_ATTRS if self._slots.mask_size else _OWN_ATTRS[1:]
        # Else the core's: an AttributeError makes has_attr False.
        value = getattr(self if attr_name in own else self._slots.core, attr_name)
        return [value] * len(idx)

    @override
    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Sets the core's attribute; every environment shares it, so ``indices`` must be all."""
        idx = self._indices(indices, "set_attr", attr_name)
        if sorted(set(idx)) != list(range(self.num_envs)):
            raise ArgumentError(
                f"{type(self).__name__}: every environment is the same core, so set_attr "
                f"must cover all {self.num_envs} indices (or indices=None), got {idx}"
            )
        setattr(self._slots.core, attr_name, value)

    @override
    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """Calls the core's method once, result repeated per index (masks are per slot)."""
        idx = self._indices(indices, "env_method", method_name)
        if method_name == "action_masks":
            return list(self.action_masks()[idx])
        result = getattr(self._slots.core, method_name)(*method_args, **method_kwargs)
        return [result] * len(idx)

    @override
    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """Whether the core is an instance of ``wrapper_class`` (slots are not gym envs)."""
        idx = self._indices(indices)
        return [isinstance(self._slots.core, wrapper_class)] * len(idx)

    @override
    def get_images(self) -> Sequence[np.ndarray | None]:
        """The core's one picture of all agents, once per environment (the same array)."""
        frame = render_core(self._slots.core) if self.render_mode == "rgb_array" else None
        return [frame] * self.num_envs

    @override
    def render(self, mode: str | None = None) -> np.ndarray | None:
        """The core's rgb_array picture (not tiled: it already shows every agent)."""
        self._check_open()
        return self.get_images()[0] if (mode or "rgb_array") == "rgb_array" else None

    def _indices(self, indices: VecEnvIndices, call: str = "", name: Any = "") -> list[int]:
        if not isinstance(name, str):
            raise ArgumentTypeError(
                f"SB3VecEnv.{call}: expected an attribute name (str), got {type(name).__name__} "
                f"{name!r}"
            )
        if indices is None:
            return list(range(self.num_envs))
        idx = list(indices) if isinstance(indices, Iterable) else [indices]
        bad = [i for i in idx if not isinstance(i, (int, np.integer)) or not 0 <= i < self.num_envs]
        if bad:
            raise SlotIndexError(
                f"{type(self).__name__}: indices must be ints in [0, {self.num_envs - 1}], "
                f"got {bad}"
            )
        return [int(i) for i in idx]
