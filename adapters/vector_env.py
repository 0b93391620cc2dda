"""One behaviour's N agents as a Gymnasium ``VectorEnv`` of N slots over one batched core,
with SAME_STEP autoreset; the info keys are listed in :class:`BehaviorVectorEnv`'s docstring."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import batch_space
from typing_extensions import override

from zooport.adapters.behavior_slots import SlotAdapter, SlotStep
from zooport.adapters.core_access import render_core
from zooport.adapters.options import SlotOptions, listing_options
from zooport.adapters.rendering import HUMAN_VIA_MAKE, check_render_mode
from zooport.envs.base_env import BaseEnvLike
from zooport.errors import EnvClosedError

__all__ = ["BehaviorVectorEnv", "SAME_STEP", "RENDER_MODES"]

try:  # gymnasium >= 1.1
    from gymnasium.vector import AutoresetMode

    #: The value declared in ``metadata["autoreset_mode"]`` (a string on gymnasium 1.0).
    SAME_STEP: Any = AutoresetMode.SAME_STEP
except ImportError:  # gymnasium 1.0 has no AutoresetMode; its wrappers assume next-step
    SAME_STEP = "SameStep"

#: The render modes of the vector adapters: the core's one picture of all its agents.
RENDER_MODES = ("rgb_array",)


@listing_options
class BehaviorVectorEnv(SlotAdapter, gym.vector.VectorEnv):
    """The N agents of one behaviour of a batched core as N Gymnasium vector slots.

    Slot i holds the agent with the i-th smallest id at reset; the core may present its rows
    in any order. Autoreset is SAME_STEP (``metadata["autoreset_mode"]``): a slot whose
    agent's episode ended reports ``terminated`` (or ``truncated`` when the core says
    ``interrupted``), the terminal reward, and its final observation in
    ``info["final_obs"]``, while its observation is the first of the agent's next episode
    (the core restarts it in the same step). A slot whose agent is not restarted keeps its
    final observation and reports reward 0 with ``decided`` False until every slot's episode
    is over; then the core is reset in that same step.

    Info (Gymnasium's vector convention: ``info[key]`` is an array over slots and
    ``info["_key"]`` a bool mask of the slots that carry it; every slot carries every key):
    ``decided`` (bool: the slot has a new decision; without one it kept its observation, got
    reward 0 and its action was ignored), ``action_mask`` (int8, 1 = allowed, for discrete
    actions), ``group_id`` (int64) and ``group_reward`` (float32, this step's). For the slots
    whose episode ended: ``final_obs`` (object array, ``None`` elsewhere) and ``final_info``
    (their terminal ``group_id``/``group_reward``), with ``_final_obs`` and ``_final_info``.

    The slot count is fixed when the adapter is built (the core is reset then to count the
    agents): an agent id that was not there at reset raises :class:`~zooport.SpecError`.

    Not thread-safe and not re-entrant: a ``step``/``reset`` entered while another runs (from
    a callback, a hook or a second thread) raises :class:`~zooport.errors.ReentrantCallError`;
    after a step interrupted by an exception (a core hook, a side channel), ``step`` raises
    :class:`~zooport.errors.EnvNotResetError` naming that error until ``reset()``.

    On gymnasium 1.0, which has no ``AutoresetMode``, ``metadata["autoreset_mode"]`` is the
    string ``"SameStep"``. Before gymnasium 1.4, the vector ``RecordEpisodeStatistics``
    ignores the declared mode and assumes next-step autoreset, so it leaves the first step
    of each episode after the first out of its statistics (training data is unaffected).

    Args:
        env: any ``BaseEnv`` (a zooport core, a Unity environment, ...); one with no
            behaviours yet (a Unity scene whose agents have not requested a decision) is
            stepped once first, as ML-Agents' wrappers do.
        behavior_name: the behaviour whose agents are the slots; needed only when the core
            has several.
        uint8_visual: visual observations as uint8 0..255 instead of float32 0..1.
        flatten_branched: several discrete branches as one ``Discrete``, not ``MultiDiscrete``.
        allow_multiple_obs: observations always as a ``Dict`` keyed by observation name.
        render_mode: None or ``"rgb_array"`` (the core's one picture of all agents), fixed at
            construction; ``"human"`` is served by ``gym.make_vec``, which shows those frames
            in a window.

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

    def __init__(
        self,
        env: BaseEnvLike,
        behavior_name: str | None = None,
        *,
        uint8_visual: bool = False,
        flatten_branched: bool = False,
        allow_multiple_obs: bool = False,
        render_mode: str | None = None,
    ) -> None:
        options = SlotOptions(
            uint8_visual=uint8_visual,
            flatten_branched=flatten_branched,
            allow_multiple_obs=allow_multiple_obs,
            behavior_name=behavior_name,
            render_mode=render_mode,
        )
        check_render_mode(
            options.render_mode, RENDER_MODES, type(self).__name__, human=HUMAN_VIA_MAKE
        )
        # The slot count is the agent count, known only once the core has been reset.
        slots = self._open_slots(env, options)
        n = slots.num_slots
        self.num_envs = n
        self.single_observation_space = slots.obs_layout.space
        self.single_action_space = slots.action_layout.space
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        core_metadata = getattr(slots.core, "metadata", None) or {}
        # Also an attribute, as Sync/AsyncVectorEnv have it (TorchRL's GymWrapper reads it).
        self.autoreset_mode = SAME_STEP
        self.metadata = {
            "autoreset_mode": SAME_STEP,
            "render_modes": list(RENDER_MODES),
            "render_fps": core_metadata.get("render_fps", 30),
        }
        self.render_mode = options.render_mode
        self._all_slots = np.ones((4, n), dtype=bool)  # one copy makes the four info masks

    # ------------------------------------------------------------------ Gymnasium API

    @override
    def _restart(self, seed: int | None) -> tuple[Any, dict[str, Any]]:
        slots = self._slots
        slots.reset(seed)
        zero = np.zeros(self.num_envs, dtype=np.float32)
        return slots.obs_layout.copy(slots.obs), self._info(slots.decided.copy(), zero)

    @override
    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Sends the decided slots' actions, steps the core until a slot reports.

        Returns:
            ``(obs, reward, terminated, truncated, info)``: batched fresh arrays; reward is
            float32 (what each slot earned since its last report), flags are bool.
        """
        if self._closed:
            raise EnvClosedError(f"{type(self).__name__} was used after close()")
        slots = self._slots
        guard = slots.guard
        guard.enter("step")  # the guard's steps spelled out: a `with` costs three calls
        try:
            slots.set_actions(actions)  # a bad action raises here and changes nothing
            guard.committed = True
            out = slots.advance()
            info = self._info(out.decided, out.group_reward)
            if out.final_slots.size:
                self._add_final(info, out)
                if slots.restart_if_all_over():
                    info.update(self._info(slots.decided.copy(), out.group_reward))
            obs = slots.obs_layout.copy(slots.obs)
        except BaseException as error:
            guard.abort(error)
            raise
        guard.exit()
        return obs, out.reward, out.terminated, out.truncated, info

    @override
    def render(self) -> np.ndarray | None:  # type: ignore[override]  # one picture, not a tuple
        """The core's rgb_array picture of all its agents, or None without ``render_mode``."""
        self._check_open()
        if self.render_mode is None:
            return None
        return render_core(self._slots.core)

    @override
    def close_extras(self, **kwargs: Any) -> None:
        """Closes the core (``close()`` calls this once)."""
        self._close_core()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({type(self._slots.core).__name__}, "
            f"behavior={self._slots.name!r}, num_envs={self.num_envs})"
        )

    # ------------------------------------------------------------------ internals

    def _info(self, decided: np.ndarray, group_reward: np.ndarray) -> dict[str, Any]:
        slots = self._slots
        every = self._all_slots.copy()
        info = {
            "decided": decided,
            "_decided": every[0],
            "group_id": slots.group_id.copy(),
            "_group_id": every[1],
            "group_reward": group_reward,
            "_group_reward": every[2],
        }
        if self._has_mask:
            info["action_mask"] = slots.mask.copy()
            info["_action_mask"] = every[3]
        return info

    def _add_final(self, info: dict[str, Any], out: SlotStep) -> None:
        n, done = self.num_envs, out.final_slots
        final_obs = np.empty(n, dtype=object)  # None where the episode goes on
        # Item by item: for the few slots that end in a step, cheaper than building a
        # second object array to scatter. There is one row per slot in ``done`` by
        # construction (strict=True costs a microsecond).
        for slot, obs in zip(done.tolist(), out.final_observations(), strict=False):
            final_obs[slot] = obs
        # The slots that ended (each is either terminated or truncated) carry the final keys.
        mask = np.zeros(n, dtype=bool)
        mask[done] = True
        group_id = np.zeros(n, dtype=np.int64)
        group_id[done] = self._slots.group_id[done]
        group_reward = np.zeros(n, dtype=np.float32)
        group_reward[done] = out.group_reward[done]
        info["final_obs"], info["_final_obs"] = final_obs, mask
        info["final_info"] = {
            "group_id": group_id,
            "_group_id": mask.copy(),
            "group_reward": group_reward,
            "_group_reward": mask.copy(),
        }
        info["_final_info"] = mask.copy()
