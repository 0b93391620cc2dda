"""One behaviour's agents as a Gymnasium vector environment, at the core's own speed.

Classes:
    BehaviorVectorEnv: a ``gymnasium.vector.VectorEnv`` whose N sub-environments are the N
        agents of one behaviour of one batched core (SAME_STEP autoreset).

Functions:
    make_vector_env: the ``vector_entry_point`` of the ``zooport/<Name>-v0`` registrations:
        one core with ``num_envs`` agents behind a :class:`BehaviorVectorEnv`.
    final_observations, restart_if_all_over: the autoreset helpers shared with
        :class:`~zooport.adapters.sb3_vec_env.SB3VecEnv`.

A vector step is one ``set_actions`` call and one or more core steps (until some slot has a
decision or a terminal step); slots map to agent ids by sorting and searching, through
:class:`~zooport.adapters.behavior_slots.BehaviorSlots`, so nothing on the step path loops
over agents in Python except over the slots whose episode just ended (Gymnasium's
``final_obs`` is an object array of per-environment observations).

Info (Gymnasium's vector convention: ``info[key]`` is an array over slots and
``info["_key"]`` a bool mask of the slots that carry it; every slot carries every key):
    - ``decided`` (bool): the slot has a new decision; its action counts at the next step.
      A slot without one kept its observation, got reward 0 and its action was ignored.
    - ``action_mask`` (int8, 1 = allowed), for behaviours with discrete actions.
    - ``group_id`` (int32) and ``group_reward`` (float32, this step's, summed like rewards).
    - for the slots whose episode ended in this step (SAME_STEP autoreset): ``final_obs``
      (object array, the final observation, ``None`` elsewhere) with ``_final_obs``, and
      ``final_info`` (a vector info holding their terminal ``group_id``/``group_reward``) with
      ``_final_info``. The slot's observation is already the first of its next episode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import batch_space
from typing_extensions import override

from zooport.adapters.behavior_slots import BehaviorSlots, SlotStep
from zooport.adapters.core_access import check_reset_options, render_core, side_channels_of
from zooport.envs.arguments import check_seed
from zooport.envs.step_guard import StepGuard
from zooport.errors import ArgumentError, EnvClosedError, SpecError

__all__ = [
    "BehaviorVectorEnv",
    "check_render_mode",
    "make_vector_env",
    "final_observations",
    "restart_if_all_over",
    "SAME_STEP",
    "VECTOR_ENV_OPTIONS",
]

try:  # gymnasium >= 1.1
    from gymnasium.vector import AutoresetMode

    #: The value declared in ``metadata["autoreset_mode"]`` (a string on gymnasium 1.0).
    SAME_STEP: Any = AutoresetMode.SAME_STEP
except ImportError:  # gymnasium 1.0 has no AutoresetMode; its wrappers assume next-step
    SAME_STEP = "SameStep"

_RENDER_MODES = ("rgb_array",)



def check_render_mode(render_mode: str | None) -> None:
    """Rejects a render mode the vector adapters do not offer (they offer ``rgb_array``)."""
    if render_mode is not None and (
        not isinstance(render_mode, str) or render_mode not in _RENDER_MODES
    ):
        raise ArgumentError(
            f"Expect render_mode to be None or one of {list(_RENDER_MODES)}, "
            f"actually: {render_mode!r}"
        )

class BehaviorVectorEnv(gym.vector.VectorEnv):
    """The N agents of one behaviour of a batched core as N Gymnasium vector slots.

    Slot i holds the agent with the i-th smallest id at reset; the core may present its rows
    in any order. Autoreset is SAME_STEP (``metadata["autoreset_mode"]``): a slot whose
    agent's episode ended reports ``terminated`` (or ``truncated`` when the core says
    ``interrupted``), the terminal reward, and its final observation in
    ``info["final_obs"]``, while its observation is the first of the agent's next episode
    (the core restarts it in the same step). A slot whose agent is not restarted keeps its
    final observation and reports reward 0 with ``decided`` False until every slot's episode
    is over; then the core is reset in that same step. See the module docstring for the
    info keys.

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
        behavior_name: the behaviour whose agents are the slots (None: the only one).
        uint8_visual: visual observations as uint8 0..255 instead of float32 0..1.
        flatten_branched: several discrete branches as one ``Discrete`` action.
        allow_multiple_obs: observations always as a ``Dict`` keyed by observation name.
        render_mode: None or ``"rgb_array"``; ``render()`` then returns the core's one
            picture of all its agents (not one frame per slot).

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
        env: Any,
        behavior_name: str | None = None,
        *,
        uint8_visual: bool = False,
        flatten_branched: bool = False,
        allow_multiple_obs: bool = False,
        render_mode: str | None = None,
    ) -> None:
        check_render_mode(render_mode)
        self._slots = BehaviorSlots(
            env,
            behavior_name,
            uint8_visual=uint8_visual,
            flatten_branched=flatten_branched,
            allow_multiple_obs=allow_multiple_obs,
            adapter=type(self).__name__,
        )
        # An older-API core is wrapped by BehaviorSlots (adopt_core); keep what it uses.
        self._core = self._slots.core
        # The slot count is the agent count, known only once the core has been reset.
        self._slots.reset()
        n = self._slots.num_slots
        self.num_envs = n
        self.single_observation_space = self._slots.obs_layout.space
        self.single_action_space = self._slots.action_layout.space
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        core_metadata = getattr(env, "metadata", None) or {}
        self.metadata = {
            "autoreset_mode": SAME_STEP,
            "render_modes": list(_RENDER_MODES),
            "render_fps": core_metadata.get("render_fps", 30),
        }
        self.render_mode = render_mode
        self._has_mask = self._slots.action_layout.mask_size > 0
        self._all_slots = np.ones(n, dtype=bool)

    # ------------------------------------------------------------------ Gymnasium API

    @override
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Resets the core (reseeded with ``seed``) and returns every slot's first observation.

        ``seed`` is None or an int >= 0. ``options`` is None or a dict with str keys, which
        the core does not use (see :func:`~zooport.adapters.core_access.check_reset_options`).
        """
        self._check_open()
        seed = check_seed(seed, f"{type(self).__name__}.reset")
        check_reset_options(options, f"{type(self).__name__}.reset")
        super().reset(seed=seed)
        slots = self._slots
        guard = slots.guard
        guard.enter("reset")
        try:
            guard.committed = True
            slots.reset(seed)
            zero = np.zeros(self.num_envs, dtype=np.float32)
            obs = slots.obs_layout.copy(slots.obs)
        except BaseException as error:
            guard.abort(error)
            raise
        guard.reset_done()
        return obs, self._info(slots.decided.copy(), zero)

    @override
    def step(
        self, actions: Any
    ) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Sends the decided slots' actions, steps the core until a slot reports.

        Returns:
            ``(obs, reward, terminated, truncated, info)``: batched fresh arrays; reward is
            float32 (what each slot earned since its last report), flags are bool.
        """
        if self.closed:
            raise EnvClosedError(f"{type(self).__name__} was used after close()")
        slots = self._slots
        guard = slots.guard
        guard.enter("step")
        try:
            slots.set_actions(actions)  # a bad action raises here and changes nothing
            guard.committed = True
            out = slots.advance()
            info = self._info(out.decided, out.group_reward)
            if out.final_slots.size:
                self._add_final(info, out)
                if restart_if_all_over(slots):
                    info.update(self._info(slots.decided.copy(), out.group_reward))
            obs = slots.obs_layout.copy(slots.obs)
        except BaseException as error:
            guard.abort(error)
            raise
        guard.exit()
        return obs, out.reward, out.terminated, out.truncated, info

    @override
    def render(self) -> np.ndarray | None:  # type: ignore[override]
        """The core's rgb_array picture of all its agents, or None without ``render_mode``."""
        self._check_open()
        if self.render_mode is None:
            return None
        return render_core(self._core)

    @override
    def close_extras(self, **kwargs: Any) -> None:
        """Closes the core (``close()`` calls this once)."""
        core = getattr(self, "_core", None)  # gymnasium 1.0 closes half-built envs on __del__
        if core is not None:
            core.close()

    # ------------------------------------------------------------------ zooport extras

    @property
    def core(self) -> Any:
        """The wrapped ``BaseEnv``."""
        return self._core

    @property
    def behavior_name(self) -> str:
        """The behaviour whose agents are the slots."""
        return self._slots.name

    @property
    def agent_ids(self) -> np.ndarray:
        """The agent id each slot holds (ascending), as a fresh array."""
        return self._slots.ids.copy()

    @property
    def side_channels(self) -> list[Any]:
        """The core's side channels."""
        return side_channels_of(self._core)

    def action_masks(self) -> np.ndarray:
        """The slots' current action masks, int8 (num_envs, mask_size), 1 = allowed."""
        self._check_open()
        return self._slots.mask.copy()

    @property
    def step_guard(self) -> StepGuard:
        """The adapter's re-entry and failure state (see :mod:`zooport.envs.step_guard`)."""
        return self._slots.guard

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({type(self._core).__name__}, "
            f"behavior={self._slots.name!r}, num_envs={self.num_envs})"
        )

    # ------------------------------------------------------------------ internals

    def _check_open(self) -> None:
        if self.closed:
            raise EnvClosedError(f"{type(self).__name__} was used after close()")

    def _info(self, decided: np.ndarray, group_reward: np.ndarray) -> dict[str, Any]:
        slots, every = self._slots, self._all_slots
        info = {
            "decided": decided,
            "_decided": every.copy(),
            "group_id": slots.group_id.copy(),
            "_group_id": every.copy(),
            "group_reward": group_reward,
            "_group_reward": every.copy(),
        }
        if self._has_mask:
            info["action_mask"] = slots.mask.copy()
            info["_action_mask"] = every.copy()
        return info

    def _add_final(self, info: dict[str, Any], out: SlotStep) -> None:
        n, done = self.num_envs, out.final_slots
        final_obs = np.empty(n, dtype=object)  # None where the episode goes on
        # Item by item: for the few slots that end in a step, cheaper than building a
        # second object array to scatter. There is one row per slot in ``done`` by
        # construction (strict=True costs a microsecond).
        for slot, obs in zip(done.tolist(), final_observations(out), strict=False):
            final_obs[slot] = obs
        # Every slot that ended is either terminated or truncated, and no other slot is.
        mask = out.terminated | out.truncated
        # Integer ids times the mask are the masked copy, in one array operation.
        group_id = self._slots.group_id * mask
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


def final_observations(out: SlotStep) -> Iterable[Any]:
    """The final observation of each slot in ``out.final_slots``: one array or dict each.

    For an array observation this is the fresh batch itself, whose rows (views, taken as they
    are iterated) are the observations: no list is built for the few slots that end.
    """
    rows = out.final_obs
    if rows is None:
        return []
    if isinstance(rows, dict):
        return [{key: value[i] for key, value in rows.items()} for i in range(out.final_slots.size)]
    return rows


def restart_if_all_over(slots: BehaviorSlots) -> bool:
    """Resets the core when no slot's agent is left (a core that does not restart agents).

    Call after a step that ended some episode; returns True when the core was reset, so
    every slot's observation is the first of its next episode (SAME_STEP autoreset).
    """
    # count_nonzero: a fraction of the cost of .all() on a small bool array.
    if np.count_nonzero(slots.episode_over) == slots.num_slots:
        slots.reset()
        return True
    return False


# ---------------------------------------------------------------------- vector entry point

#: The keyword arguments of :class:`BehaviorVectorEnv` that ``make_vector_env`` routes to
#: the adapter; every other keyword goes to the core's constructor.
VECTOR_ENV_OPTIONS = ("uint8_visual", "flatten_branched", "allow_multiple_obs", "render_mode")

#: Registry ids whose agent count is not the ``n_agents`` keyword: the keyword that sets
#: each behaviour's count.
_AGENT_COUNT_KWARGS: dict[str, dict[str, str]] = {
    "Tag": {"Runner?team=0": "n_runners", "Tagger?team=1": "n_taggers"},
    "Soccer": {"Soccer?team=0": "team_size", "Soccer?team=1": "team_size"},
}


def make_vector_env(
    *,
    num_envs: int,
    env_id: str | None = None,
    factory: str | Callable[..., Any] | None = None,
    behavior_name: str | None = None,
    max_episode_steps: int | None = None,
    agent_count_kwarg: str | None = None,
    workers: int | None = None,
    pool_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> BehaviorVectorEnv:
    """Builds ONE core with ``num_envs`` agents in the behaviour, as a BehaviorVectorEnv.

    With ``workers=K`` the ``num_envs`` agents are shared out over K cores (as evenly as
    possible, the first cores taking one more) in a :class:`~zooport.envs.CorePool`, so
    ``gym.make_vec("zooport/BallBalance-v0", num_envs=64, workers=2)`` steps two cores of
    32 agents in parallel behind the same adapter.

    This is the ``vector_entry_point`` of ``zooport/<Name>-v0``: Gymnasium calls it as
    ``make_vector_env(num_envs=N, max_episode_steps=..., **registered_kwargs, **kwargs)``,
    so ``gym.make_vec("zooport/BallBalance-v0", num_envs=64,
    vectorization_mode="vector_entry_point")`` is one ``BallBalance(n_agents=64)``.

    Args:
        num_envs: the number of slots: the core is built with that many agents.
        env_id: an identifier of ``zooport.envs.registry.default_registry`` (e.g.
            ``"BallBalance"``, not the Gymnasium id); exclusive with ``factory``.
        factory: instead of ``env_id``: a callable returning a ``BaseEnv`` or a
            ``"module:attr"`` string naming one.
        behavior_name: the behaviour whose agents are the slots (None: the only one).
        max_episode_steps: the registration's episode cap; it becomes the core's
            ``max_steps`` (the core interrupts its agents) unless ``max_steps`` is given or
            the core has no such keyword.
        agent_count_kwarg: the core keyword that sets the behaviour's agent count (default
            ``n_agents``; ``n_runners``/``n_taggers`` for ``Tag``, ``team_size`` for
            ``Soccer``).
        workers: build a CorePool of this many cores (None: one core in this process).
        pool_options: ``CorePool`` arguments (``mode``, ``timeout``, ...) with ``workers``.
        **kwargs: :data:`VECTOR_ENV_OPTIONS` for the adapter, every other keyword for the
            core (a registered ``n_agents=1`` is overridden by ``num_envs``; with
            ``workers``, core ``i`` gets ``seed + i``).

    Raises:
        ArgumentError: ``num_envs`` is not a positive int.
        ArgumentTypeError: a keyword is neither a core parameter nor an adapter option.
        SpecError: the behaviour does not end up with ``num_envs`` agents.

    Example:
        >>> envs = make_vector_env(num_envs=3, env_id="BallBalance", seed=0)
        >>> envs.num_envs, envs.core.n_agents
        (3, 3)
        >>> envs.close()
    """
    from zooport.adapters.registration import (
        _check_workers,
        _keyword_parameters,
        _resolve,
        build_core,
        build_pool,
    )

    if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
        raise ArgumentError(f"Expect num_envs to be a positive int, actually: {num_envs!r}")
    if agent_count_kwarg is None:
        counts = _AGENT_COUNT_KWARGS.get(env_id or "", {})
        agent_count_kwarg = counts.get(behavior_name or "", "n_agents")
    options = {**kwargs, agent_count_kwarg: int(num_envs)}
    if max_episode_steps is not None and "max_steps" not in options:
        accepted = _keyword_parameters(_resolve(env_id, factory)[1])
        if accepted is None or "max_steps" in accepted:
            options["max_steps"] = int(max_episode_steps)
    if workers is None:
        core, adapter_kwargs = build_core(
            env_id=env_id, factory=factory, options=options, adapter_options=VECTOR_ENV_OPTIONS
        )
    else:
        count = _check_workers(workers)
        if count > num_envs:
            raise ArgumentError(f"Expect workers <= num_envs ({num_envs}), actually: {count}")
        shares = [num_envs // count + (i < num_envs % count) for i in range(count)]
        core, adapter_kwargs = build_pool(
            env_id=env_id, factory=factory, options=options, adapter_options=VECTOR_ENV_OPTIONS,
            workers=count, core_options=[{agent_count_kwarg: n} for n in shares],
            pool_options=pool_options,
        )  # fmt: skip
    try:
        envs = BehaviorVectorEnv(core, behavior_name, **adapter_kwargs)
    except BaseException:
        core.close()
        raise
    if envs.num_envs != num_envs:
        envs.close()
        raise SpecError(
            f"make_vector_env: expected {num_envs} agents of behavior {envs.behavior_name!r} "
            f"after setting {agent_count_kwarg}={num_envs}, got {envs.num_envs}; pass "
            "agent_count_kwarg= naming the core keyword that sets that behaviour's count"
        )
    return envs
