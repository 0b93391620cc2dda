"""One behaviour's agents in an episode, as slots, for the multi-agent driver."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from operator import itemgetter
from typing import Any

import numpy as np
from gymnasium import spaces

from zooport.adapters.agent_names import AgentNames
from zooport.adapters.agent_slots import AgentSlots
from zooport.adapters.options import LayoutOptions
from zooport.adapters.spaces import checked_discrete
from zooport.envs.base_env import (
    ActionTuple,
    BehaviorSpec,
    DecisionSteps,
    TerminalSteps,
)
from zooport.envs.steps import check_agent_ids
from zooport.errors import ActionError, a_type

__all__ = ["AgentGroup"]


class AgentGroup(AgentSlots):
    """One behaviour's agents in the current episode, in slots in order of appearance.

    Slot i holds the i-th agent the episode met (those at reset in ascending id order, then
    spawned ones): its id, name, live flag, last observation, mask and group id, and one
    step's reward, group reward and flags, all written with array operations. ``dec_names``
    are the live agents of the core's latest DecisionSteps, whose actions :meth:`gather`
    collects; ``masked`` gives agents an int8 action mask (1 = allowed), in the info with
    ``mask_in_info``.
    """

    def __init__(
        self,
        name: str,
        spec: BehaviorSpec,
        *,
        masked: bool,
        mask_in_info: bool,
        layout: LayoutOptions,
    ) -> None:
        super().__init__(name, spec, layout)
        self.mask_size = self.action_layout.mask_size if masked else 0
        self.mask_in_obs = bool(self.mask_size) and not mask_in_info
        self.mask_in_info = bool(self.mask_size) and mask_in_info
        if self.mask_in_obs:
            self.observation_space: spaces.Space = spaces.Dict(
                {
                    "observation": self.obs_layout.space,
                    "action_mask": spaces.Box(0, 1, (self.mask_size,), np.int8),
                }
            )
        else:
            self.observation_space = self.obs_layout.space
        self.action_space = self.action_layout.space
        # The two common layouts take a shortcut in gather(): one Box, or one Discrete branch.
        self._fast = None
        if isinstance(self.action_space, spaces.Box):
            self._fast = "continuous"
        elif isinstance(self.action_space, spaces.Discrete) and not self.action_layout.flatten:
            self._fast = "discrete"
        self._fast_shape = (spec.action_spec.continuous_size,)
        self._fast_size = self.action_layout.branches[0] if self._fast == "discrete" else 0
        space = self.obs_layout.space
        self._obs_keys = list(space.spaces) if isinstance(space, spaces.Dict) else None
        self.default_action: Any = None
        self.namer = AgentNames([name])
        self._allocate(0)

    # ------------------------------------------------------------------ storage

    def _allocate(self, capacity: int) -> None:
        self.capacity = capacity
        self.n = 0
        self.ids = np.zeros(capacity, np.int64)
        self.live = np.zeros(capacity, bool)
        self.group_id = np.zeros(capacity, np.int64)
        self.mask = np.ones((capacity, self.mask_size), np.int8)
        self.obs = self.obs_layout.allocate(capacity)
        self._step_floats = np.zeros((2, capacity), np.float32)
        self._step_flags = np.zeros((3, capacity), bool)
        self._step_views()
        self.n_decided = 0
        self.names: list[str] = []
        self.slot_of: dict[str, int] = {}
        self._sorted_ids = np.zeros(0, np.int64)
        self._sorted_slots = np.zeros(0, np.intp)
        # The last DecisionSteps' ids (checked) with their slots and write index.
        self._last: tuple[Any, np.ndarray, slice | np.ndarray] | None = None
        # The names of the agents of the last lookup, by that lookup's index object: reused
        # (and gather's itemgetter with them) while the ids repeat.
        self._last_names: tuple[Any, list[str]] = (None, [])
        self.dec_count = 0
        self.dec_rows: np.ndarray | None = None
        self.dec_names: list[str] = []
        self._getter: Any = None
        self._getter_names: list[str] | None = None
        self.new_slots: list[int] = []
        self.new_names: list[str] = []
        self.finished_names: list[str] = []

    def _grow(self, needed: int) -> None:
        if needed <= self.capacity:
            return
        capacity = max(needed, 2 * self.capacity, 8)

        def bigger(array: np.ndarray, fill: Any = 0) -> np.ndarray:
            out = np.full((capacity, *array.shape[1:]), fill, array.dtype)
            out[: self.capacity] = array
            return out

        self.ids, self.live, self.group_id = (
            bigger(self.ids),
            bigger(self.live),
            bigger(self.group_id),
        )
        self.mask = bigger(self.mask, 1)
        if isinstance(self.obs, dict):
            self.obs = {k: bigger(v) for k, v in self.obs.items()}
        else:
            self.obs = bigger(self.obs)
        self._step_floats = bigger(self._step_floats.T).T.copy()
        self._step_flags = bigger(self._step_flags.T).T.copy()
        self.capacity = capacity
        self._step_views()

    def _step_views(self) -> None:
        # One step's outputs per slot, in two arrays so that a step clears them in two calls.
        self.reward, self.group_reward = self._step_floats
        self.terminated, self.truncated, self.decided = self._step_flags

    # The five step outputs are views of two buffers; pickle, cloudpickle and deepcopy would
    # store them as separate arrays that begin_step no longer clears (a copied adapter then
    # double-counted rewards). A copy stores the buffers alone and rebuilds the views.
    _VIEWS = ("reward", "group_reward", "terminated", "truncated", "decided")

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for name in self._VIEWS:
            del state[name]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._step_views()

    def _add(self, ids: np.ndarray, names: AgentNames) -> np.ndarray:
        """Gives new agents the next slots; returns the slots."""
        k = ids.size
        start = self.n
        self._grow(start + k)
        slots = np.arange(start, start + k, dtype=np.intp)
        self.ids[slots] = ids
        self.live[slots] = True
        added = names.names(self.name, ids.tolist())
        self.names.extend(added)
        self.slot_of.update(zip(added, range(start, start + k), strict=True))
        self.n = start + k
        order = np.argsort(self.ids[: self.n], kind="stable")
        self._sorted_ids = self.ids[: self.n][order]
        self._sorted_slots = order.astype(np.intp)
        return slots

    def slots_of(self, ids: np.ndarray) -> np.ndarray:
        """The slot of each agent id, -1 for ids not in this episode (vectorised)."""
        if not self.n:
            return np.full(ids.shape, -1, np.intp)
        pos = np.minimum(np.searchsorted(self._sorted_ids, ids), self.n - 1)
        return np.where(self._sorted_ids[pos] == ids, self._sorted_slots[pos], -1)

    def _decision_slots(
        self, agent_id: Any, names: AgentNames | None, same: bool = False
    ) -> tuple[np.ndarray, slice | np.ndarray]:
        """Slots of a DecisionSteps' agents (new agents get slots when ``names`` is given), and
        the index to write them with: a slice when they are the first slots in order."""
        if same and self._last is not None:
            return self._last[1], self._last[2]
        ids = np.asarray(agent_id, np.int64)
        slots = self.slots_of(ids)
        missing = slots < 0
        if missing.any():
            if names is None:
                return slots, slots
            unknown = np.flatnonzero(missing)
            new = self._add(ids[unknown], names)
            self.new_slots.extend(new.tolist())
            self.new_names.extend(self.names[self.n - new.size :])
            slots[unknown] = new
        index = slice(0, slots.size) if (slots == np.arange(slots.size)).all() else slots
        key = (agent_id.dtype, agent_id.tobytes()) if type(agent_id) is np.ndarray else None
        self._last = (key, slots, index)
        return slots, index

    # ------------------------------------------------------------------ episode

    def start(self, decision: DecisionSteps, names: AgentNames) -> None:
        """A new episode with the agents of ``decision`` (slots in ascending id order), named
        by ``names`` (as are the agents that join it)."""
        self.namer = names
        decision = self.obs_layout.checked(decision)
        check_agent_ids(self.name, decision, ())
        ids = np.asarray(decision.agent_id, np.int64)
        self._allocate(max(ids.size, 1))
        self._add(np.sort(ids), names)
        self.begin_step()
        self._absorb_decision(decision, None, False, True)
        self.new_slots, self.new_names = [], []

    def begin_step(self) -> None:
        """Clears the per-step outputs."""
        self._step_floats.fill(0)
        self._step_flags.fill(False)
        self.n_decided = 0
        self.new_slots, self.new_names, self.finished_names = [], [], []

    def absorb(
        self, decision: DecisionSteps, terminal: TerminalSteps, everyone: bool = False
    ) -> bool:
        """Takes one core step's batches; True when a live agent of this behaviour reported.

        ``everyone``: every agent of the episode was live at the step's start (the driver
        knows it without reading the flags).
        """
        reported = False
        agent_id = decision.agent_id
        # Most steps repeat the last step's ids: checked already, their slots and names
        # known. Kept because it pays: without it benchmarks/run.py's PettingZoo route
        # (TrivialEndless, N=64) runs 15% more instructions per step (callgrind).
        same = (
            self._last is not None
            and type(agent_id) is np.ndarray
            and self._last[0] == (agent_id.dtype, agent_id.tobytes())
        )
        if len(terminal) or not same:
            check_agent_ids(self.name, decision, terminal)
        if len(terminal):
            terminal = self.obs_layout.checked(terminal, terminal=True)
            slots = self.slots_of(np.asarray(terminal.agent_id, np.int64))
            hit = slots >= 0
            hit[hit] = self.live[slots[hit]]
            if hit.any():
                rows = np.flatnonzero(hit)
                s = slots[rows]
                self._end_episodes(
                    s, terminal, rows, self.reward, self.group_reward, self.terminated,
                    self.truncated,
                )  # fmt: skip
                self.live[s] = False
                self.finished_names.extend(self.names[i] for i in s.tolist())
                reported = True
        everyone = everyone and not self.finished_names
        decision = self.obs_layout.checked(decision)
        return self._absorb_decision(decision, self.namer, same, everyone) or reported

    def _absorb_decision(
        self, decision: DecisionSteps, names: AgentNames | None, same: bool, everyone: bool
    ) -> bool:
        count = len(decision)
        self.dec_count = count
        if not count:
            self.dec_names = []
            return False
        slots, index = self._decision_slots(decision.agent_id, names, same)
        if everyone or self.live[index].all():
            rows, s = None, index
            if self._last_names[0] is index:
                dec_names = self._last_names[1]
            else:
                dec_names = [self.names[i] for i in slots.tolist()]
                self._last_names = (index, dec_names)
        else:
            rows = np.flatnonzero(self.live[slots])
            s = slots[rows]
            dec_names = [self.names[i] for i in s.tolist()]
        self.dec_rows = rows
        self.dec_names = dec_names
        if not dec_names:
            return False
        self._take_decisions(s, decision, rows, len(dec_names))
        if rows is None:
            self.reward[s] = decision.reward
            self.group_reward[s] = decision.group_reward
        else:
            self.reward[s] = decision.reward[rows]
            self.group_reward[s] = decision.group_reward[rows]
        self.decided[s] = True
        self.n_decided += len(dec_names)
        return True

    def drop_new(self) -> None:
        """Forgets the agents that joined in this step (they hold the last slots)."""
        k = len(self.new_slots)
        if not k:
            return
        n = self.n - k
        self.live[n : self.n] = False
        self.n_decided -= int(self.decided[n : self.n].sum())
        self.n = n
        for name in self.names[n:]:
            del self.slot_of[name]
        del self.names[n:]
        self._last = None  # its slots may be the dropped ones
        order = np.argsort(self.ids[:n], kind="stable")
        self._sorted_ids = self.ids[:n][order]
        self._sorted_slots = order.astype(np.intp)
        self.new_slots, self.new_names = [], []

    def truncate_live(self) -> None:
        """Ends every live agent's episode as truncated (the multi-agent episode is over)."""
        live = np.flatnonzero(self.live[: self.n])
        if live.size:
            self.truncated[live] = True
            self.live[live] = False
            self.finished_names.extend(self.names[i] for i in live.tolist())

    # ------------------------------------------------------------------ actions

    def gather(self, actions: Mapping[str, Any]) -> ActionTuple:
        """The core batch for the latest DecisionSteps from a dict of consumer actions."""
        names = self.dec_names
        if self._getter_names is not names:
            self._getter = itemgetter(*names)
            self._getter_names = names
        values = self._getter(actions)
        n = len(names)
        if n == 1:
            values = (values,)
        action = None
        try:
            if self._fast == "continuous":
                batch = np.asarray(values)
                if batch.shape[1:] == self._fast_shape and batch.dtype.kind in "fiu":
                    action = ActionTuple(continuous=batch)
            elif self._fast == "discrete":
                batch = np.asarray(values)
                if batch.ndim == 1 and batch.dtype.kind in "iu":
                    # Range-checked before the cast to int32, which would wrap 2**32 + 1
                    # into action 1 (whatever the core checks afterwards).
                    checked_discrete(batch, self._fast_size, self.name)
                    action = ActionTuple(discrete=batch.reshape(n, 1).astype(np.int32))
            if action is None:
                action = self.action_layout.to_core(self._stack(values), n)
        except (ActionError, ValueError, TypeError, KeyError, IndexError) as error:
            raise self.diagnose(names, values, error) from None
        if self.dec_rows is not None:
            full = self.spec.action_spec.empty_action(self.dec_count)
            if self.spec.action_spec.continuous_size:
                full.continuous[self.dec_rows] = action.continuous
            if self.spec.action_spec.discrete_size:
                full.discrete[self.dec_rows] = action.discrete
            action = full
        return action

    def _stack(self, values: Sequence[Any]) -> Any:
        if self.action_layout.is_hybrid:
            # A dict with exactly the two parts: an ndarray or a list is no hybrid action,
            # and an extra key would be dropped unseen.
            if not all(isinstance(v, Mapping) and len(v) == 2 for v in values):
                raise ActionError(
                    f"behavior {self.name!r}: expected hybrid actions as dicts with keys "
                    "['continuous', 'discrete'], got "
                    + ", ".join(_describe_hybrid(v) for v in values[:3])
                )
            return {
                "continuous": np.asarray([v["continuous"] for v in values]),
                "discrete": np.asarray([v["discrete"] for v in values]),
            }
        return np.asarray(values)

    def problem(self, value: Any) -> str | None:
        """What is wrong with one agent's action, or None when the core would accept it."""
        try:
            action = self.action_layout.to_core(self._stack([value]), 1)
        except (ActionError, ValueError, TypeError, KeyError, IndexError) as error:
            return str(error)
        branches = np.asarray(self.action_layout.branches, np.int64)
        if not np.all(np.isfinite(action.continuous)):
            return "a continuous value is not finite"
        if branches.size and ((action.discrete < 0) | (action.discrete >= branches)).any():
            return "a discrete value is out of range"
        return None

    def diagnose(
        self, names: Sequence[str], values: Sequence[Any], error: Exception
    ) -> ActionError:
        """An :class:`ActionError` naming the first agent whose action is wrong."""
        for name, value in zip(names, values, strict=True):
            problem = self.problem(value)
            if problem is not None:
                return ActionError(
                    f"agent {name!r} (behavior {self.name!r}): expected an action of "
                    f"{self.action_space}, got {value!r} ({problem})"
                )
        return ActionError(f"behavior {self.name!r}: {error}")

    # ------------------------------------------------------------------ outputs

    def reporting(self) -> tuple[list[str], slice | np.ndarray]:
        """The names and slots that report this step: the agents live at its start (those
        that finished in it too), then those that joined; a slice when that is every slot."""
        n = self.n
        if self.n_decided == n:  # every slot decided: all live, all report
            return self.names, slice(0, n)
        report = self.live[:n]
        if self.finished_names:
            report = report | self.terminated[:n] | self.truncated[:n]
        if report.all():
            return self.names, slice(0, n)
        index = np.flatnonzero(report)
        return [self.names[i] for i in index.tolist()], index

    def observations(self, index: slice | np.ndarray) -> Iterable[Any]:
        """Fresh per-agent observations of the slots ``index`` in the consumer layout.

        For a plain array observation this is a fresh batch, whose rows (iterated) are the
        agents' observations: views of an array no one else holds.
        """
        fresh = _fresh_rows
        if self._obs_keys is None:
            rows: Iterable[Any] = fresh(self.obs, index)
        else:
            keys = self._obs_keys
            rows = [
                dict(zip(keys, v, strict=True))
                for v in zip(*(fresh(self.obs[k], index) for k in keys), strict=True)
            ]
        if self.mask_in_obs:
            return [
                {"observation": o, "action_mask": m}
                for o, m in zip(rows, fresh(self.mask, index), strict=True)
            ]
        return rows

    def infos(self, index: slice | np.ndarray, n: int) -> Iterable[dict[str, Any]]:
        """Fresh per-agent info dicts of the slots ``index`` (``n`` of them)."""
        if n and not self.mask_in_info and self.n_decided == n:
            # The common case, every agent decided, one group id, every group reward +0.0:
            # copies of one dict. Both tests compare bytes (the ids are int64), which takes
            # well under a microsecond where numpy's == and all() take several.
            ids = self.group_id[index]
            raw = ids.tobytes()
            rewards = self.group_reward[index].tobytes()
            if raw == raw[:8] * n and rewards == bytes(len(rewards)):
                info = {"decided": True, "group_id": int(ids[0]), "group_reward": 0.0}
                return map(dict.copy, repeat(info, n))
        decided = self.decided[index].tolist()
        group_id = self.group_id[index].tolist()
        group_reward = self.group_reward[index].tolist()
        if self.mask_in_info:
            return [
                {"decided": d, "group_id": g, "group_reward": r, "action_mask": m}
                for d, g, r, m in zip(
                    decided, group_id, group_reward, _fresh_rows(self.mask, index), strict=True
                )
            ]
        return [
            {"decided": d, "group_id": g, "group_reward": r}
            for d, g, r in zip(decided, group_id, group_reward, strict=True)
        ]


def _describe_hybrid(value: Any) -> str:
    if isinstance(value, Mapping):
        return f"a dict with keys {sorted(map(str, value))}"
    return a_type(value)


def _fresh_rows(array: np.ndarray, index: slice | np.ndarray) -> np.ndarray:
    """``array[index]`` as a new array (a slice is a view, so it is copied)."""
    return array[index].copy() if isinstance(index, slice) else array[index]
