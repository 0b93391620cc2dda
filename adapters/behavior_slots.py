"""The slot family's engine (one behaviour's agents as N fixed slots) and its front ends' base."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from zooport.adapters.core_access import (
    MAX_IDLE_STEPS,
    EngineMembers,
    adopt_core_with_specs,
    checked_reset_arguments,
    note_core_failure,
)
from zooport.adapters.options import LayoutOptions, SlotOptions
from zooport.adapters.rendering import check_render_mode
from zooport.adapters.spaces import AgentSlots
from zooport.envs.base_env import (
    ActionTuple,
    BaseEnvLike,
    BehaviorMapping,
    DecisionSteps,
    TerminalSteps,
)
from zooport.envs.batched_env import builds_own_steps
from zooport.envs.capabilities import reset_core
from zooport.envs.step_guard import StepGuard
from zooport.envs.steps import check_agent_ids
from zooport.errors import (
    ActionError,
    ArgumentTypeError,
    EnvClosedError,
    SpecError,
    UnknownBehaviorError,
    ZooportError,
    a_type,
)

__all__ = ["SlotStep", "BehaviorSlots", "SlotAdapter", "RENDER_MODES"]

#: The render modes of the vector adapters: the core's one picture of all its agents.
RENDER_MODES = ("rgb_array",)
_DEFAULT_LAYOUT = LayoutOptions()
_EVERY = slice(None)  # every slot: a whole-array write
# dtype instances: numpy converts a type on every call.
_FLOAT32, _INT64, _INTP = np.dtype(np.float32), np.dtype(np.int64), np.dtype(np.intp)


class SlotStep(NamedTuple):
    """One adapter step over N slots; ``final_obs`` rows follow ``final_slots`` (ascending)."""

    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    decided: np.ndarray
    final_slots: np.ndarray
    final_obs: Any
    group_reward: np.ndarray

    def final_observations(self) -> Sequence[Any]:
        """The final observation of each slot in ``final_slots`` (an array batch's rows)."""
        rows, n = self.final_obs, self.final_slots.size
        if isinstance(rows, dict):
            return [{key: value[i] for key, value in rows.items()} for i in range(n)]
        return [] if rows is None else rows  # index it: iterating an array costs more


class BehaviorSlots(AgentSlots):
    """A behaviour's agents as N slots (slot i holds the i-th smallest agent id at reset)."""

    def __init__(
        self,
        core: BaseEnvLike,
        behavior_name: str | None = None,
        *,
        layout: LayoutOptions = _DEFAULT_LAYOUT,
        adapter: str = "adapter",
    ) -> None:
        core, specs = adopt_core_with_specs(core, adapter)
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
            behavior_name = names[0]
        elif behavior_name not in names:
            raise UnknownBehaviorError(
                f"{adapter}: the core has no behavior {behavior_name!r}; behaviors: {names}"
            )
        super().__init__(behavior_name, specs[behavior_name], layout)
        self.core = core
        self.adapter = adapter
        self.behaviors = tuple(specs)
        self._specs_seen: Any = specs if isinstance(specs, BehaviorMapping) else None
        self.mask_size = self.action_layout.mask_size
        # One float observation and no mask: a decision is two whole-array writes.
        self._plain_obs = self.obs_layout.plain and not self.mask_size
        self.num_slots = 0  # counted by reset(), which allocates the per-slot arrays
        self.guard = StepGuard(adapter)
        self._rows_known = builds_own_steps(core)

    def reset(self, seed: int | None = None) -> None:
        """Resets the core (reseeded with ``seed``) and fixes the slots."""
        try:
            reset_core(self.core, seed, warn=True)
            decision, terminal = self.core.get_steps(self.name)
            if not len(decision):
                decision, terminal = self._step_until_any()
        except Exception as error:
            note_core_failure(error, f"{self.adapter}.reset()")
            raise
        decision = self.obs_layout.checked(decision)
        check_agent_ids(self.name, decision, terminal)
        self.steps = 0
        ids = np.sort(np.asarray(decision.agent_id, dtype=np.int64))
        n = ids.size
        if self.num_slots and n != self.num_slots:
            raise SpecError(
                f"{self.adapter}: behavior {self.name!r} had {self.num_slots} agents and now "
                f"has {n} after reset; the number of slots is fixed at construction"
            )
        self.ids, self.num_slots = ids, n
        # Shared between steps (hence read-only): the slots when every one reports in order.
        self._every = _read_only(np.arange(n, dtype=np.intp))
        self._column = self._every.reshape(n, 1)  # row i: slot i alone, cheaper than an array
        self._slot_of = dict(zip(ids.tolist(), range(n), strict=True))
        self.obs = self.obs_layout.allocate(n)
        self.mask = np.ones((n, self.mask_size), dtype=np.int8)
        self.carry = np.zeros(n, dtype=np.float32)
        self._carrying = False  # False: every carry is 0 (a BatchedEnv's always is)
        self.group_id = np.zeros(n, dtype=np.int64)  # int64: 2**40 + 1 is not group 1
        self.decided = np.zeros(n, dtype=bool)
        self.episode_over = np.zeros(n, dtype=bool)
        # A continuous behaviour's float32 batch of this shape goes to the core as it is.
        continuous = self.action_layout.spec.continuous_size
        plain = continuous and not self.action_layout.is_hybrid
        self._plain_actions: tuple[int, int] | None = (n, continuous) if plain else None
        self._no_discrete = np.zeros((n, 0), dtype=np.int32)
        self._decision_slots = _NO_SLOTS
        # The last decision's ids (dtype, bytes): the same ones skip the mapping (issue 23).
        self._last_ids: tuple[Any, bytes] = (None, b"")
        self._take(decision, None)

    def refill(self, limit: int = 1000) -> bool:
        """Steps the core until every slot whose episode ended decides again (False: it did not)."""
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
                decision, terminal = self.core.get_steps(self.name)
            except Exception as error:
                note_core_failure(error, f"{self.adapter}.reset(), waiting for a restart")
                raise
            # What a slot earns before the episode it is waiting for belongs to that episode.
            self.carry += self._take(decision, terminal).reward
            self._carrying = True
        return False

    def set_actions(self, actions: Any) -> None:
        """Sends the actions of the slots that have a decision to the core (one call)."""
        if (
            type(actions) is np.ndarray
            and actions.dtype is _FLOAT32
            and actions.shape == self._plain_actions
        ):
            # Passed straight through, as ActionLayout.to_core would (the core checks values).
            action = ActionTuple._trusted(actions, self._no_discrete)
        else:
            try:
                action = self.action_layout.to_core(actions, self.num_slots)
            except ZooportError:
                raise
            except (ValueError, TypeError, IndexError, KeyError) as error:
                # What numpy raises for input it cannot read (ragged lists) is an ActionError.
                raise ActionError(
                    f"{self.adapter}: behavior {self.name!r}: expected a batch of "
                    f"{self.num_slots} actions of {self.action_layout.space}, got "
                    f"{a_type(actions)} that cannot be read as one ({error})"
                ) from None
        rows = self._decision_slots
        if rows is self._every:
            self.core.set_actions(self.name, action)  # every slot decides, rows in slot order
        elif rows.size:
            self.core.set_actions(
                self.name, ActionTuple(action.continuous[rows], action.discrete[rows])
            )

    def step(self, actions: Any) -> SlotStep:
        """:meth:`set_actions` then :meth:`advance` (unguarded)."""
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
            if not (len(terminal.agent_id) or len(decision.agent_id)):
                decision, terminal = self._step_until_any()
        except Exception as error:
            note_core_failure(error, f"{self.adapter}.step(), step {self.steps} after reset")
            raise
        return self._take(decision, terminal)

    def _step_until_any(self) -> tuple[DecisionSteps, TerminalSteps]:
        for _ in range(MAX_IDLE_STEPS):
            self.core.step()
            decision, terminal = self.core.get_steps(self.name)
            if len(decision) or len(terminal):
                return decision, terminal
        raise ZooportError(
            f"{type(self.core).__name__}: no agent of {[self.name]} requested a decision or "
            f"ended its episode in {MAX_IDLE_STEPS} steps"
        )

    def _locate(self, agent_ids: Any, terminal: bool = False) -> tuple[np.ndarray, bool]:
        agent_ids = np.asarray(agent_ids)
        batch = ((), agent_ids) if terminal else (agent_ids, ())
        if agent_ids.dtype.kind not in "iu":
            check_agent_ids(self.name, *batch)  # raises: not integers
        if agent_ids.size <= 8 and agent_ids.size < self.num_slots:
            # The few that end in a step: dict lookups, cheaper than a search, if ascending.
            found = [self._slot_of.get(i, -1) for i in agent_ids.tolist()]
            if -1 not in found and (len(found) < 2 or found == sorted(set(found))):
                return (self._column[found[0]] if len(found) == 1 else np.array(found, _INTP)), True
        agent_ids = agent_ids.astype(_INT64, copy=False)
        if agent_ids.size == self.num_slots and agent_ids.tobytes() == self.ids.tobytes():
            return self._every, True
        slots = self.ids.searchsorted(agent_ids)
        # An id past the last one gets slot num_slots; clipped, it compares unequal.
        known = self.ids.take(slots, mode="clip") == agent_ids
        ascending = slots.size < 2 or not np.count_nonzero(slots[1:] <= slots[:-1])
        if not ascending or np.count_nonzero(known) != known.size:
            check_agent_ids(self.name, *batch)  # a repeated id is named first
        if np.count_nonzero(known) != known.size:
            raise SpecError(
                f"{self.adapter}: behavior {self.name!r} has agent ids "
                f"{agent_ids[~known].tolist()} that were not there at reset "
                f"(slots hold {self.ids.tolist()}); vector adapters need a fixed set of agents"
            )
        return _read_only(slots), ascending

    def _take(self, decision: DecisionSteps, terminal: TerminalSteps | None) -> SlotStep:
        specs = self.core.behavior_specs
        if specs is not self._specs_seen:  # a zooport core's read-only mapping: unchanged
            new = [name for name in specs if name not in self.behaviors]
            if new:
                raise SpecError(
                    f"{self.adapter}: the core gained behavior(s) {new} after reset; this "
                    f"adapter serves behavior {self.name!r} (of {list(self.behaviors)}, the core's "
                    "behaviors when it was built), and a later behavior's agents would get no "
                    "actions; build the adapter once the scene has all its behaviors"
                )
            self._specs_seen = specs if isinstance(specs, BehaviorMapping) else None
        layout, known = self.obs_layout, self._rows_known
        decision = layout.checked(decision, False, known)
        ids = decision.agent_id
        if not len(ids):
            slots = _NO_SLOTS
        elif ids.dtype is self._last_ids[0] and ids.tobytes() == self._last_ids[1]:
            # The fast path (issue 23): the last step's deciders, in order, were mapped then.
            slots = self._decision_slots
        else:
            slots = self._locate(ids)[0]
        n = self.num_slots
        every = slots is self._every
        carry, carrying = self.carry, self._carrying
        if terminal is not None and len(terminal.agent_id):
            terminal = layout.checked(terminal, True, known)
            ended, ascending = self._locate(terminal.agent_id, terminal=True)
            if carrying:
                earned = carry[ended]  # the ending episodes' carry (a gathered copy)
                carry[ended] = 0.0
        else:
            terminal = None
        if every:
            if carrying:
                reward = np.add(decision.reward, carry, dtype=_FLOAT32)
                carry.fill(0.0)
                self._carrying = False
            else:
                reward = decision.reward.astype(_FLOAT32)  # a fresh copy
            group_reward = decision.group_reward.astype(_FLOAT32)
            # Every slot decides: no ending slot keeps its final observation (keep_obs below).
            if self._decision_slots is not slots:
                self.decided.fill(True)
                self.episode_over.fill(False)
            if self._plain_obs:
                self.obs[:] = decision.obs[0]  # one float observation: the write, inlined
                self.group_id[:] = decision.group_id
            else:
                self._take_decisions(_EVERY, decision, None, n)
        else:
            reward = np.zeros(n, dtype=_FLOAT32)
            group_reward = np.zeros(n, dtype=_FLOAT32)
            reward[slots] = decision.reward
            if carrying:
                reward[slots] += carry[slots]
                carry[slots] = 0.0
            group_reward[slots] = decision.group_reward
        terminated, truncated = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        final_slots, final_obs = _NO_SLOTS, None
        if terminal is not None:
            # A restarted slot's decision reward is carried to its next episode.
            kept = reward[ended]
            if np.count_nonzero(kept):
                carry[ended] = kept
                self._carrying = True
            # The last observation of a slot not restarted is its final one.
            self._end_episodes(
                ended, terminal, None, reward, group_reward, terminated, truncated,
                keep_obs=not every,
            )  # fmt: skip
            if carrying:
                reward[ended] += earned
            final_slots, order = ended, None
            if not ascending:
                order = np.argsort(ended, kind="stable")
                final_slots = ended[order]
            final_obs = layout.convert(terminal.obs, order)
            if not every:
                self.episode_over[ended] = True
        if not every:
            self.decided[:] = False
            self.decided[slots] = True
            self.episode_over[slots] = False
            if slots.size:
                self._take_decisions(slots, decision, None, slots.size)
        if slots is not self._decision_slots:  # the same slots: the same ids (the fast path)
            self._decision_slots = slots
            self._last_ids = (ids.dtype, ids.tobytes()) if len(ids) else (None, b"")
        return tuple.__new__(SlotStep, (
            reward, terminated, truncated, self.decided.copy(), final_slots, final_obs,
            group_reward,
        ))  # fmt: skip


class SlotAdapter(EngineMembers):
    """The members the slot family's front ends share (a mixin over the front end's base)."""

    _slots: BehaviorSlots
    closed: bool = False  #: True once ``close()`` was called
    _rows: Any = slice(None)  # the slots action_masks() returns (GymEnv: its one agent's row)
    _human = ""  # where render_mode="human" is served instead, for the error message
    options: SlotOptions
    _build: Callable[[BehaviorSlots], None]  # a vector front end's constructor, slots counted
    _restart: Callable[[int | None], Any]  # the front end's reset of the engine

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
        check_render_mode(render_mode, RENDER_MODES, type(self).__name__, human=self._human)
        self.render_mode = render_mode
        self._build(self._open_slots(env, options))

    def _step(self, actions: Any) -> tuple[SlotStep, Any, np.ndarray]:
        # A vector front end's step: the outcome, fresh obs, and the group ids before a restart.
        if self.closed:
            raise EnvClosedError(f"{type(self).__name__} was used after close()")
        slots = self._slots
        guard = slots.guard
        guard.enter("step")  # the guard's steps spelled out: a `with` costs three calls
        try:
            slots.set_actions(actions)  # a bad action raises here and changes nothing
            guard.committed = True
            out = slots.advance()
            groups = slots.group_id  # reset() allocates anew: these stay the ended slots'
            if out.final_slots.size and slots._decision_slots is not slots._every:
                if np.count_nonzero(slots.episode_over) == slots.num_slots:  # SAME_STEP restart
                    slots.reset()
                    out = out._replace(decided=slots.decided.copy())
            obs = slots.obs_layout.copy(slots.obs)
        except BaseException as error:
            guard.abort(error)
            raise
        guard.exit()
        return out, obs, groups

    def _open_slots(self, env: BaseEnvLike, options: SlotOptions) -> BehaviorSlots:
        # The slot count is the agent count, known only once the core has been reset.
        self.options = options
        self._slots = self._engine = slots = BehaviorSlots(
            env, options.behavior_name, layout=options, adapter=type(self).__name__
        )
        slots.reset()
        return slots

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Starts an episode; ``seed`` reseeds the core, ``options`` is unused by the core."""
        self._check_open()
        seed = checked_reset_arguments(seed, options, f"{type(self).__name__}.reset")
        super().reset(seed=seed)  # type: ignore[misc]  # the mixed-in Env's np_random
        with self._slots.guard.resetting():
            return self._restart(seed)

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

    def action_masks(self) -> np.ndarray:
        """The current action masks, int8, 1 = allowed (sb3-contrib's ``MaskablePPO``)."""
        self._check_open()
        if not self._slots.mask_size:
            raise SpecError(
                f"{type(self).__name__}: behavior {self._slots.name!r} has no discrete "
                "actions, so no action mask"
            )
        return self._slots.mask[self._rows].copy()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({type(self._slots.core).__name__}, "
            f"behavior={self._slots.name!r}, num_envs={self.num_envs})"  # type: ignore[attr-defined]
        )

    def _check_open(self) -> None:
        if self.closed:
            raise EnvClosedError(f"{type(self).__name__} was used after close()")

    def close(self, **kwargs: Any) -> None:
        """Closes the core (once; later calls do nothing)."""
        slots = getattr(self, "_slots", None)  # gymnasium 1.0 closes half-built envs
        if not self.closed and slots is not None:
            self.closed = True
            slots.core.close()


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


_NO_SLOTS = _read_only(np.zeros(0, dtype=np.intp))
