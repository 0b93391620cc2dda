"""What the slot family's front ends share: ``GymEnv``, ``BehaviorVectorEnv``, ``SB3VecEnv``.

Classes:
    SlotAdapter: a mixin holding the engine (:class:`~zooport.adapters.behavior_slots.
        BehaviorSlots`) and every member the three front ends expose alike: the core, the
        behaviour, its agent ids, the side channels, the step guard, ``close``/``closed``
        and ``action_masks``.

Each front end is then its constructor and the translation of the engine's
:class:`~zooport.adapters.behavior_slots.SlotStep` into its consumer's API. This module never
imports a front end.

``action_masks()`` has one rule on all three: the current masks (int8, 1 = allowed, one row
per slot; ``GymEnv`` returns its one row) where the behaviour has discrete actions, and a
:class:`~zooport.errors.SpecError` naming the behaviour where it has none (a continuous
behaviour has nothing to mask; sb3-contrib's ``MaskablePPO`` needs discrete actions).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zooport.adapters.behavior_slots import BehaviorSlots
from zooport.adapters.core_access import EngineMembers, checked_reset_arguments
from zooport.adapters.options import SlotOptions
from zooport.envs.base_env import BaseEnvLike
from zooport.errors import EnvClosedError, SpecError

__all__ = ["SlotAdapter"]


class SlotAdapter(EngineMembers):
    """The members the slot family's front ends share (a mixin; see the module docstring).

    A front end calls :meth:`_open_slots` in its constructor, resets through
    :meth:`_guarded_reset` (implementing :meth:`_restart`) and closes the core with
    :meth:`_close_core`.
    """

    _slots: BehaviorSlots
    _closed: bool = False
    #: The options the adapter was built with.
    options: SlotOptions

    def _open_slots(self, env: BaseEnvLike, options: SlotOptions) -> BehaviorSlots:
        """The engine over ``env``, its slots counted (the core is reset once to count them)."""
        self.options = options
        self._slots = slots = BehaviorSlots(
            env, options.behavior_name, layout=options, adapter=type(self).__name__
        )
        slots.reset()
        self._has_mask = slots.action_layout.mask_size > 0
        return slots

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Starts an episode; returns ``(observation, info)`` (Gymnasium's reset).

        ``seed`` (None or an int >= 0) reseeds ``np_random`` and the core (where it can be
        seeded; a Unity build cannot and warns once). ``options`` is None or a dict with str
        keys, which the core does not use (see
        :func:`~zooport.adapters.core_access.check_reset_options`).
        """
        self._check_open()
        seed = checked_reset_arguments(seed, options, f"{type(self).__name__}.reset")
        super().reset(seed=seed)  # type: ignore[misc]  # the mixed-in Env's np_random
        return self._guarded_reset(seed)

    def _guarded_reset(self, seed: int | None) -> Any:
        """:meth:`_restart` inside the engine's step guard (re-entry refused, a failure
        remembered); every front end's ``reset`` ends here."""
        with self._slots.guard.resetting():
            return self._restart(seed)

    def _restart(self, seed: int | None) -> Any:
        """The front end's reset of the engine, and what its ``reset`` returns."""
        raise NotImplementedError

    # ------------------------------------------------------------------ shared members

    @property
    def core(self) -> Any:
        """The wrapped ``BaseEnv`` (an older-API env is presented through the current API)."""
        return self._slots.core

    @property
    def behavior_name(self) -> str:
        """The behaviour whose agents are served."""
        return self._slots.name

    @property
    def agent_ids(self) -> np.ndarray:
        """The agent id each slot holds (ascending), as a fresh array."""
        return self._slots.ids.copy()

    @property
    def _engine(self) -> BehaviorSlots:
        return self._slots

    @property
    def closed(self) -> bool:
        """True once ``close()`` was called."""
        return self._closed

    @closed.setter
    def closed(self, value: bool) -> None:
        # Gymnasium's VectorEnv.close() records it so.
        self._closed = bool(value)

    def action_masks(self) -> np.ndarray:
        """The current action masks, int8, 1 = allowed (sb3-contrib's ``MaskablePPO``).

        One row per slot (``(num_envs, mask_size)``); a ``GymEnv`` returns its one row.

        Raises:
            SpecError: the behaviour has no discrete actions (nothing to mask).
            EnvClosedError: after ``close()``.
        """
        self._check_open()
        if not self._has_mask:
            raise SpecError(
                f"{type(self).__name__}: behavior {self._slots.name!r} has no discrete "
                "actions, so no action mask"
            )
        return self._slot_masks()

    def _slot_masks(self) -> np.ndarray:
        return self._slots.mask.copy()

    def _check_open(self) -> None:
        if self._closed:
            raise EnvClosedError(f"{type(self).__name__} was used after close()")

    def _close_core(self) -> None:
        """Closes the core once; later calls do nothing."""
        slots = getattr(self, "_slots", None)  # gymnasium 1.0 closes half-built envs
        if not self._closed and slots is not None:
            self._closed = True
            slots.core.close()
