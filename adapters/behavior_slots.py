"""The agents of one behaviour as a fixed set of slots, for the single and vector adapters.

Classes:
    SlotStep: the outcome of one adapter step, one entry per slot (and the final
        observations of the slots whose episode ended, as the vector adapters hand them out).
    BehaviorSlots: maps a behaviour's agent ids to slots by array arithmetic, sends the
        slots' actions to the core in one ``set_actions`` call, steps the core until a slot
        has a decision or a terminal step, keeps each slot's last observation, and resets the
        core when no slot's agent is left (SAME_STEP autoreset).

Functions:
    behavior_name_of: the behaviour an adapter serves (the given one, or the core's only one).

This is the slot family's engine; its front ends (``GymEnv``, ``BehaviorVectorEnv``,
``SB3VecEnv``) share their members through :class:`~zooport.adapters.slot_adapter.SlotAdapter`
and only translate. Neither module imports a front end.

Semantics (shared by ``GymEnv``, ``BehaviorVectorEnv`` and ``SB3VecEnv``):
    - slot i holds the i-th smallest agent id seen at reset; the core may reorder rows;
    - a slot in TerminalSteps is terminated, or truncated when ``interrupted``, with its
      terminal reward and final observation; if the core restarted it in the same step, the
      DecisionSteps entry is the first observation of its next episode (SAME_STEP autoreset);
    - a slot without a decision keeps its last observation, gets reward 0 (what it earns
      arrives summed with its next decision), and its submitted action is ignored;
    - an agent id that was not there at reset is an error: the slot count is fixed;
    - the core's batches are checked against the spec once per step (see
      ``ObservationLayout.checked``): a disagreement is an ``ObservationError``;
    - a core with no behaviours yet (a Unity scene) is stepped once at construction, and an
      exception from the core's own ``step``/``reset`` (a Unity process that died) passes
      through unchanged with a note naming the adapter call (``core_access``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import numpy as np

from zooport.adapters.agent_slots import AgentSlots
from zooport.adapters.core_access import (
    adopt_core_with_specs,
    note_core_failure,
    step_until_any,
)
from zooport.adapters.options import LayoutOptions
from zooport.envs.base_env import (
    ActionTuple,
    BaseEnvLike,
    BehaviorMapping,
    DecisionSteps,
    TerminalSteps,
)
from zooport.envs.capabilities import reset_core
from zooport.envs.step_guard import StepGuard
from zooport.envs.steps import check_agent_ids
from zooport.errors import (
    ActionError,
    ArgumentTypeError,
    SpecError,
    UnknownBehaviorError,
    ZooportError,
)

__all__ = ["SlotStep", "BehaviorSlots", "behavior_name_of"]

_DEFAULT_LAYOUT = LayoutOptions()


class SlotStep(NamedTuple):
    """One adapter step over N slots.

    Attributes:
        reward: (N,) float32.
        terminated: (N,) bool.
        truncated: (N,) bool.
        decided: (N,) bool, True where the slot has a new decision (its action counts next).
        final_slots: the slots whose episode ended, in ascending order.
        final_obs: their final observations (consumer layout, rows follow ``final_slots``).
        group_reward: (N,) float32, the group reward reported with this step.
    """

    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    decided: np.ndarray
    final_slots: np.ndarray
    final_obs: Any
    group_reward: np.ndarray

    def final_observations(self) -> Iterable[Any]:
        """The final observation of each slot in ``final_slots``: one array or dict each.

        For an array observation this is the fresh batch itself, whose rows (views, taken as
        they are iterated) are the observations: no list is built for the few slots that end.
        """
        rows = self.final_obs
        if rows is None:
            return []
        if isinstance(rows, dict):
            n = self.final_slots.size
            return [{key: value[i] for key, value in rows.items()} for i in range(n)]
        return rows


def behavior_name_of(specs: Mapping[str, Any], behavior_name: str | None, adapter: str) -> str:
    """The behaviour an adapter serves: the given one, or the core's only one."""
    names = list(specs)
    if behavior_name is not None and not isinstance(behavior_name, str):
        raise ArgumentTypeError(
            f"{adapter}: expected behavior_name to be None or one of {names}, got "
            f"{type(behavior_name).__name__} {behavior_name!r}"
        )
    if behavior_name is None:
        if len(names) != 1:
            raise UnknownBehaviorError(
                f"{adapter}: the core has behaviors {names}; pass behavior_name= to choose one"
            )
        return names[0]
    if behavior_name not in names:
        raise UnknownBehaviorError(
            f"{adapter}: the core has no behavior {behavior_name!r}; behaviors: {names}"
        )
    return behavior_name


class BehaviorSlots(AgentSlots):
    """A behaviour's agents as N slots; see the module docstring for the semantics.

    Args:
        core: any BaseEnv; one with no behaviours yet (a Unity scene whose agents have not
            requested a decision) is stepped once first, as ML-Agents' wrappers do.
        behavior_name: the behaviour (None when the core has only one).
        layout: how the specs become spaces (:class:`~zooport.adapters.options.LayoutOptions`).
        adapter: the adapter's name, for error messages.
    """

    def __init__(
        self,
        core: BaseEnvLike,
        behavior_name: str | None = None,
        *,
        layout: LayoutOptions = _DEFAULT_LAYOUT,
        adapter: str = "adapter",
    ) -> None:
        # Older-API cores are wrapped to present the current one; others pass unchanged.
        # One without behaviours yet is stepped once (core_access.behavior_specs_of).
        core, specs = adopt_core_with_specs(core, adapter)
        name = behavior_name_of(specs, behavior_name, adapter)
        super().__init__(name, specs[name], layout)
        self.core = core
        self.adapter = adapter
        #: The core's behaviours when the adapter was built; one that appears later is an error.
        self.behaviors = tuple(specs)
        self._specs_seen: Any = specs if isinstance(specs, BehaviorMapping) else None
        # A property that sums the branches; the per-step path reads it once per step.
        self.mask_size = self.action_layout.mask_size
        self.ids = np.zeros(0, dtype=np.int64)
        self.num_slots = 0
        self.episode_over = np.zeros(0, dtype=bool)
        self._every_slot = _read_only(np.zeros(0, dtype=np.intp))
        # The last decision's ids (dtype, bytes), their slots and whether those ascend.
        self._known: tuple[np.dtype, bytes, np.ndarray, bool] = (
            self.ids.dtype, b"", self._every_slot, True
        )  # fmt: skip
        self._first_id: int | None = None
        self._decision_slots = self._every_slot
        self._plain_actions: tuple[int, int] | None = None
        #: Adapter steps since the last reset (named when the core fails mid-step).
        self.steps = 0
        #: The adapter's re-entry and failure guard (see :mod:`zooport.envs.step_guard`).
        self.guard = StepGuard(adapter)

    # ------------------------------------------------------------------ episodes

    def reset(self, seed: int | None = None) -> bool:
        """Resets the core and fixes the slots; returns True if the seed reached the core."""
        try:
            seeded = reset_core(self.core, seed, warn=True)
            decision, terminal = self.core.get_steps(self.name)
            if not len(decision):
                decision, terminal = step_until_any(self.core, [self.name])[self.name]
        except Exception as error:
            note_core_failure(error, f"{self.adapter}.reset()")
            raise
        self._check_behaviors(self.core.behavior_specs)
        decision = self.obs_layout.checked(decision)
        check_agent_ids(self.name, decision, terminal)
        self.steps = 0
        ids = np.sort(np.asarray(decision.agent_id, dtype=np.int64))
        if self.num_slots and ids.size != self.num_slots:
            raise SpecError(
                f"{self.adapter}: behavior {self.name!r} had {self.num_slots} agents and now "
                f"has {ids.size} after reset; the number of slots is fixed at construction"
            )
        self.ids = ids
        self.num_slots = ids.size
        # Returned by slots_of when every slot reports in slot order (the common case);
        # read-only because it is shared between steps.
        self._every_slot = _read_only(np.arange(ids.size, dtype=np.intp))
        # The ids in the core's own dtype: a core that reports every slot in slot order is
        # recognised by one bytes comparison.
        probe = ids.astype(np.asarray(decision.agent_id).dtype)
        self._known = (probe.dtype, probe.tobytes(), self._every_slot, True)
        # Consecutive ids (a BatchedEnv's, usually a Unity build's): an id's slot is its
        # offset from the first. Only within +-2**62, so that no int64 id's offset can wrap
        # around into the slot range.
        first = int(ids[0]) if ids.size else 0
        consecutive = ids.size > 0 and int(ids[-1]) - first == ids.size - 1
        self._first_id = first if consecutive and abs(first) < 2**62 else None
        self.obs = self.obs_layout.allocate(self.num_slots)
        self.mask = np.ones((self.num_slots, self.mask_size), dtype=np.int8)
        self.carry = np.zeros(self.num_slots, dtype=np.float32)
        # int64: a scene's group ids keep their value (2**40 + 1 is not group 1).
        self.group_id = np.zeros(self.num_slots, dtype=np.int64)
        self.decided = np.zeros(self.num_slots, dtype=bool)
        self.episode_over = np.zeros(self.num_slots, dtype=bool)
        self._all_true = np.ones(self.num_slots, dtype=bool)
        # A continuous behaviour's float32 batch of this shape goes to the core as it is.
        continuous = self.action_layout.spec.continuous_size
        plain = continuous and not self.action_layout.is_hybrid
        self._plain_actions = (self.num_slots, continuous) if plain else None
        self._no_discrete = np.zeros((self.num_slots, 0), dtype=np.int32)
        self._absorb_decisions(decision)
        return seeded

    def refill(self, limit: int = 1000) -> bool:
        """Steps the core until every slot whose episode ended has a decision again.

        Used by single-agent ``reset()`` after an episode that the core itself ended, so a
        restarted agent does not cost a full core reset. Returns False when the agents have
        not come back within ``limit`` core steps, or at once when the core says it does not
        restart them (a ``BatchedEnv``'s ``restarts_finished``); the caller then resets the
        core.
        """
        restarts = getattr(self.core, "restarts_finished", None)
        if callable(restarts) and not restarts(self.name):
            return False
        for _ in range(limit):
            if self.decided[self.episode_over].all():
                self.episode_over[:] = False
                self.steps = 0
                return True
            try:
                self.core.step()
                steps = self.core.get_steps(self.name)
            except Exception as error:
                note_core_failure(error, f"{self.adapter}.reset(), waiting for a restart")
                raise
            # What a slot earns before the episode it is waiting for belongs to that episode.
            self.carry += self._absorb(*self._checked(*steps)).reward
        return False

    def restart_if_all_over(self) -> bool:
        """Resets the core when no slot's agent is left (a core that does not restart agents).

        Called after a step that ended some episode; True when the core was reset, so every
        slot's observation is the first of its next episode (SAME_STEP autoreset).
        """
        if self._decision_slots is self._every_slot:
            return False  # every slot decided: none is over
        # count_nonzero: a fraction of the cost of .all() on a small bool array.
        if np.count_nonzero(self.episode_over) == self.num_slots:
            self.reset()
            return True
        return False

    # ------------------------------------------------------------------ stepping

    def slots_of(self, agent_ids: np.ndarray) -> np.ndarray:
        """The slot of each agent id (vectorised); unknown ids are an error.

        When ``agent_ids`` are exactly the slots' ids in slot order, the result is a shared
        read-only ``arange`` (checked with one comparison instead of a search).
        """
        return self._locate(agent_ids)[0]

    def _locate(self, agent_ids: np.ndarray, terminal: bool = False) -> tuple[np.ndarray, bool]:
        """:meth:`slots_of`, and True when the slots are known to be in ascending order.

        The ids are proven unique integers on the way (a repeat or a float id is an
        ``ObservationError`` naming them): for free when they are the last decision's ids or
        strictly ascending consecutive ones, by ``check_agent_ids`` otherwise.
        """
        agent_ids = np.asarray(agent_ids)
        dtype, key, known, ascending = self._known
        if agent_ids.dtype == dtype and agent_ids.tobytes() == key:
            return known, ascending  # the same ids as the last decision: already checked
        slots = self._consecutive_slots(agent_ids)
        if slots is not None:
            ascending = True
        else:
            check_agent_ids(self.name, *(((), agent_ids) if terminal else (agent_ids, ())))
            agent_ids = agent_ids.astype(np.int64, copy=False)
            slots = np.searchsorted(self.ids, agent_ids)
            # An id past the last one gets slot num_slots; clipped, it compares unequal.
            known_ids = self.ids.take(slots, mode="clip") == agent_ids
            if np.count_nonzero(known_ids) != known_ids.size:
                raise SpecError(
                    f"{self.adapter}: behavior {self.name!r} has agent ids "
                    f"{agent_ids[~known_ids].tolist()} that were not there at reset "
                    f"(slots hold {self.ids.tolist()}); vector adapters need a fixed set of "
                    "agents"
                )
            ascending = slots.size < 2
        if not terminal:
            slots = _read_only(slots)
            self._known = (agent_ids.dtype, agent_ids.tobytes(), slots, ascending)
        return slots, ascending

    def _consecutive_slots(self, agent_ids: np.ndarray) -> np.ndarray | None:
        """The slots of strictly ascending consecutive ids (a BatchedEnv's), else None.

        The offsets from the first id are the slots, the first and last bound them all, and
        strictly ascending means no id repeats: fewer array operations than a search.
        """
        if (
            self._first_id is None
            or agent_ids.ndim != 1
            or agent_ids.dtype.kind not in "iu"
            or (agent_ids.dtype.kind == "u" and agent_ids.dtype.itemsize == 8)  # no uint64 wrap
        ):
            return None
        slots = agent_ids.astype(np.intp)
        if self._first_id:
            slots -= self._first_id
        if slots.size < 2 or not np.count_nonzero(slots[1:] <= slots[:-1]):
            if not slots.size or (slots[0] >= 0 and slots[-1] < self.num_slots):
                return slots
        return None

    def set_actions(self, actions: Any) -> None:
        """Sends the actions of the slots that have a decision to the core (one call)."""
        if (
            type(actions) is np.ndarray
            and actions.shape == self._plain_actions
            and actions.dtype == np.float32
        ):
            # A continuous behaviour's float32 batch: ActionLayout.to_core would pass it as
            # it is (the core checks the values).
            self._send(ActionTuple._trusted(actions, self._no_discrete))
            return
        try:
            action = self.action_layout.to_core(actions, self.num_slots)
        except ZooportError:
            raise
        except (ValueError, TypeError, IndexError, KeyError) as error:
            # What numpy raises for input it cannot read (ragged lists, objects) is turned
            # into the error every bad action gets; a try costs nothing when nothing is raised.
            raise ActionError(
                f"{self.adapter}: behavior {self.name!r}: expected a batch of "
                f"{self.num_slots} actions of {self.action_layout.space}, got a "
                f"{type(actions).__name__} that cannot be read as one ({error})"
            ) from None
        self._send(action)

    def _send(self, action: ActionTuple) -> None:
        rows = self._decision_slots
        if rows is self._every_slot:
            self.core.set_actions(self.name, action)  # every slot decides, rows in slot order
        elif rows.size:
            self.core.set_actions(
                self.name, ActionTuple(action.continuous[rows], action.discrete[rows])
            )

    def step(self, actions: Any) -> SlotStep:
        """Sets the actions, steps the core until a slot reports, returns the outcome.

        Unguarded: the adapters call :meth:`set_actions` (which only checks and sends) and
        :meth:`advance` (which changes state) inside their :attr:`guard`.
        """
        self.set_actions(actions)
        return self.advance()

    def advance(self) -> SlotStep:
        """Steps the core until a slot reports (actions already set); returns the outcome."""
        self.steps += 1
        core = self.core
        try:
            # step_until_any's first iteration, inlined: most steps report at once.
            core.step()
            decision, terminal = core.get_steps(self.name)
            ended = len(terminal.agent_id)
            if not (ended or len(decision.agent_id)):
                decision, terminal = step_until_any(core, [self.name])[self.name]
                ended = len(terminal.agent_id)
        except Exception as error:
            note_core_failure(error, f"{self.adapter}.step(), step {self.steps} after reset")
            raise
        specs = core.behavior_specs
        if specs is not self._specs_seen:  # a BatchedEnv's read-only mapping: unchanged
            self._check_behaviors(specs)
        layout = self.obs_layout
        decision = layout.checked(decision)
        if ended:
            return self._absorb(decision, layout.checked(terminal, terminal=True))
        # No episode ended (the common case). Deciders that are the last step's, in the same
        # order, need no mapping (their ids were checked then).
        ids = decision.agent_id
        dtype, key, slots, _ = self._known
        if ids.dtype != dtype or ids.tobytes() != key:
            slots = self._locate(ids)[0]
        if slots is not self._every_slot:
            return self._absorb_no_terminal(decision, slots)
        # Every slot decided, in slot order: whole-array writes.
        if self._decision_slots is not slots:  # else still all decided, none over
            self._decision_slots = slots
            self.decided.fill(True)
            self.episode_over.fill(False)
        self._take_decisions(_EVERY, decision, None, slots.size)
        reward = np.add(decision.reward, self.carry, dtype=np.float32)
        self.carry.fill(0.0)
        n = self.num_slots
        return tuple.__new__(SlotStep, (
            reward, np.zeros(n, bool), np.zeros(n, bool), self._all_true.copy(), _NO_SLOTS,
            None, np.array(decision.group_reward, dtype=np.float32),
        ))  # fmt: skip

    def _checked(
        self, decision: DecisionSteps, terminal: TerminalSteps
    ) -> tuple[DecisionSteps, TerminalSteps]:
        """The core's batches checked against the spec (see ``ObservationLayout.checked``)."""
        self._check_behaviors(self.core.behavior_specs)
        layout = self.obs_layout
        return layout.checked(decision), layout.checked(terminal, terminal=True)

    def _check_behaviors(self, specs: Any) -> None:
        """A behaviour that appears after the adapter was built is an error, never ignored."""
        new = [name for name in specs if name not in self.behaviors]
        if not new:
            # A zooport core's mapping is read-only: while it is the same object, no check.
            self._specs_seen = specs if isinstance(specs, BehaviorMapping) else None
        else:
            raise SpecError(
                f"{self.adapter}: the core gained behavior(s) {new} after reset; this adapter "
                f"serves behavior {self.name!r} (of {list(self.behaviors)}, the core's behaviors "
                "when it was built), and a later behavior's agents would get no actions; build "
                "the adapter once the scene has all its behaviors"
            )

    def _absorb(self, decision: DecisionSteps, terminal: TerminalSteps) -> SlotStep:
        if not len(terminal):
            return self._absorb_no_terminal(decision)
        if len(decision) == self.num_slots:
            slots, _ = self._locate(decision.agent_id)
            if slots is self._every_slot:
                return self._absorb_all_decided(decision, terminal)
        n = self.num_slots
        reward = np.zeros(n, dtype=np.float32)
        group_reward = np.zeros(n, dtype=np.float32)
        terminated = np.zeros(n, dtype=bool)
        truncated = np.zeros(n, dtype=bool)
        term_slots, ascending = self._locate(terminal.agent_id, terminal=True)
        # The last observation of a slot that is not restarted is its final one.
        self._end_episodes(term_slots, terminal, None, reward, group_reward, terminated, truncated)
        final_slots, final_obs = self._final(term_slots, ascending, terminal)
        self.episode_over[term_slots] = True
        dec_slots = self._absorb_decisions(decision)
        restarted = np.zeros(n, dtype=bool)
        restarted[term_slots] = True
        restarted_rows = restarted[dec_slots]
        fresh_rows = ~restarted_rows
        reward[dec_slots[fresh_rows]] += decision.reward[fresh_rows]
        group_reward[dec_slots[fresh_rows]] += decision.group_reward[fresh_rows]
        reporting = np.zeros(n, dtype=bool)
        reporting[term_slots] = True
        reporting[dec_slots[fresh_rows]] = True
        reward[reporting] += self.carry[reporting]
        self.carry[reporting] = 0.0
        # A restarted agent's decision reward belongs to its next episode.
        self.carry[dec_slots[restarted_rows]] = decision.reward[restarted_rows]
        return SlotStep(
            reward, terminated, truncated, self.decided.copy(), final_slots, final_obs,
            group_reward,
        )  # fmt: skip

    def _absorb_no_terminal(
        self, decision: DecisionSteps, slots: np.ndarray | None = None
    ) -> SlotStep:
        """:meth:`_absorb` when no episode ended: every decision is then fresh, so a slot's
        reward is its decision reward plus its carry."""
        n = self.num_slots
        dec_slots = self._absorb_decisions(decision, slots)
        if dec_slots is self._every_slot:
            reward = np.asarray(decision.reward, dtype=np.float32) + self.carry
            group_reward = np.array(decision.group_reward, dtype=np.float32)
            self.carry.fill(0.0)
        else:
            reward = np.zeros(n, dtype=np.float32)
            group_reward = np.zeros(n, dtype=np.float32)
            reward[dec_slots] = decision.reward
            reward[dec_slots] += self.carry[dec_slots]
            group_reward[dec_slots] = decision.group_reward
            self.carry[dec_slots] = 0.0
        return SlotStep(
            reward, np.zeros(n, bool), np.zeros(n, bool), self.decided.copy(), _NO_SLOTS, None,
            group_reward,
        )  # fmt: skip

    def _absorb_all_decided(self, decision: DecisionSteps, terminal: TerminalSteps) -> SlotStep:
        """:meth:`_absorb` when every slot decided, in slot order (same result, fewer passes).

        The slots in ``terminal`` were then restarted in this step: their decision is the
        first of the next episode, so its reward is carried, and every slot reports.
        """
        n = self.num_slots
        self._absorb_decisions(decision, self._every_slot)
        term_slots, ascending = self._locate(terminal.agent_id, terminal=True)
        # Decision row i is slot i. Restarted slots report their terminal reward (put in
        # before the carry is added: one addition over every slot instead of two).
        carry = self.carry
        reward = np.array(decision.reward, dtype=np.float32)
        group_reward = np.array(decision.group_reward, dtype=np.float32)
        terminated = np.zeros(n, dtype=bool)
        truncated = np.zeros(n, dtype=bool)
        # Every ending slot decided again: its last observation is already the next one's.
        self._end_episodes(
            term_slots, terminal, None, reward, group_reward, terminated, truncated,
            keep_obs=False,
        )  # fmt: skip
        reward += carry
        # A restarted agent's decision reward belongs to its next episode.
        carry.fill(0.0)
        carry[term_slots] = decision.reward[term_slots]
        final_slots, final_obs = self._final(term_slots, ascending, terminal)
        return SlotStep(
            reward, terminated, truncated, self.decided.copy(), final_slots, final_obs,
            group_reward,
        )  # fmt: skip

    def _final(
        self, term_slots: np.ndarray, ascending: bool, terminal: TerminalSteps
    ) -> tuple[np.ndarray, Any]:
        """The ending slots in ascending order and their final observations in that order."""
        if ascending:  # the usual case: no sort, no reordering gather
            return term_slots, self.obs_layout.convert(terminal.obs)
        order = np.argsort(term_slots, kind="stable")
        return term_slots[order], self.obs_layout.convert(terminal.obs, order)

    def _absorb_decisions(
        self, decision: DecisionSteps, slots: np.ndarray | None = None
    ) -> np.ndarray:
        if slots is None:
            slots = self.slots_of(decision.agent_id) if len(decision) else np.zeros(0, np.intp)
        self._decision_slots = slots
        if slots is self._every_slot:
            # Every slot decided, in order: whole-array writes beat index arrays.
            rows: slice | np.ndarray = slice(None)
            self.decided.fill(True)
        else:
            rows = slots
            self.decided[:] = False
            self.decided[slots] = True
        if slots.size:
            self._take_decisions(rows, decision, None, slots.size)
            self.episode_over[rows] = False
        return slots


#: Every slot (a whole-array write), and no slot (the ending slots of a step where none end).
_EVERY = slice(None)


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


_NO_SLOTS = _read_only(np.zeros(0, dtype=np.intp))
