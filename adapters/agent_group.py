"""One behaviour's agents in an episode, as slots, for the multi-agent driver; their ``live``
flags are the one record of who is live."""

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
from zooport.envs.base_env import (
    ActionTuple,
    BehaviorSpec,
    DecisionSteps,
    TerminalSteps,
)
from zooport.envs.steps import check_agent_ids
from zooport.errors import (
    ActionError,
    a_type,
)

__all__ = ["AgentGroup"]

# Per-slot arrays besides ``obs`` (the mask grows with 1s: allowed).
_SLOT_ARRAYS = ("ids", "group_id", "mask", "live", "reward", "group_reward")
_SLOT_FLAGS = ("terminated", "truncated", "decided")


class AgentGroup(AgentSlots):
    """One behaviour's agents in the current episode, in slots in order of appearance.

    Slot i holds the i-th agent the episode met (those at reset in ascending id order, then
    spawned ones): its id, name, ``live`` flag, last observation, int8 mask (1 = allowed) and
    group id, and one step's reward, group reward and flags. ``dec_names`` are the live agents
    of the latest DecisionSteps, whose actions :meth:`gather` collects.
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
        space = self.obs_layout.space
        self.observation_space: spaces.Space = space
        if self.mask_in_obs:
            mask = spaces.Box(0, 1, (self.mask_size,), np.int8)
            self.observation_space = spaces.Dict({"observation": space, "action_mask": mask})
        self.action_space = self.action_layout.space
        self._obs_keys = list(space.spaces) if isinstance(space, spaces.Dict) else None
        self.default_action: Any = None
        self.namer = AgentNames([name])
        self._allocate(0)

    def _allocate(self, capacity: int) -> None:
        self.capacity = capacity
        self.n = 0
        self.ids = np.zeros(capacity, np.int64)
        self.group_id = np.zeros(capacity, np.int64)
        self.mask = np.ones((capacity, self.mask_size), np.int8)
        self.live = np.zeros(capacity, bool)
        self.reward = np.zeros(capacity, np.float32)
        self.group_reward = np.zeros(capacity, np.float32)
        self.terminated = np.zeros(capacity, bool)
        self.truncated = np.zeros(capacity, bool)
        self.decided = np.zeros(capacity, bool)
        self.obs = self.obs_layout.allocate(capacity)
        self.n_decided = 0
        self.names: list[str] = []
        self.slot_of: dict[str, int] = {}
        self._sorted_ids = self._sorted_slots = np.zeros(0, np.int64)
        # The last DecisionSteps' (dtype, id bytes) with their slots and write index, and
        # the names of those agents by that index object (fast paths: see absorb()).
        self._last: tuple[Any, np.ndarray, slice | np.ndarray] | None = None
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

        def bigger(array: np.ndarray, fill: int = 0) -> np.ndarray:
            out = np.full((capacity, *array.shape[1:]), fill, array.dtype)
            out[: self.capacity] = array
            return out

        for attr in _SLOT_ARRAYS + _SLOT_FLAGS:
            setattr(self, attr, bigger(getattr(self, attr), int(attr == "mask")))
        if isinstance(self.obs, dict):
            self.obs = {k: bigger(v) for k, v in self.obs.items()}
        else:
            self.obs = bigger(self.obs)
        self.capacity = capacity

    def _index_ids(self) -> None:
        order = np.argsort(self.ids[: self.n], kind="stable")
        self._sorted_ids = self.ids[: self.n][order]
        self._sorted_slots = order.astype(np.intp)

    def _add(self, ids: np.ndarray) -> np.ndarray:
        start, k = self.n, ids.size
        self._grow(start + k)
        slots = np.arange(start, start + k, dtype=np.intp)
        self.ids[slots] = ids
        self.live[slots] = True
        added = self.namer.names(self.name, ids.tolist())
        self.names.extend(added)
        self.slot_of.update(zip(added, range(start, start + k), strict=True))
        self.n = start + k
        self._index_ids()
        return slots

    def slots_of(self, ids: np.ndarray) -> np.ndarray:
        """The slot of each agent id, -1 for ids not in this episode (vectorised)."""
        if not self.n:
            return np.full(ids.shape, -1, np.intp)
        pos = np.minimum(np.searchsorted(self._sorted_ids, ids), self.n - 1)
        return np.where(self._sorted_ids[pos] == ids, self._sorted_slots[pos], -1)

    def _decision_slots(self, agent_id: Any, same: bool) -> tuple[np.ndarray, Any]:
        # The slots of the agents (new ones get the next slots) and the index to write
        # them with: a slice when they are the first slots in order.
        if same and self._last is not None:
            return self._last[1], self._last[2]
        ids = np.asarray(agent_id, np.int64)
        slots = self.slots_of(ids)
        unknown = np.flatnonzero(slots < 0)
        if unknown.size:
            new = self._add(ids[unknown])
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
        self._add(np.sort(ids))
        self.begin_step()
        self._absorb_decision(decision, False, True)

    def begin_step(self) -> None:
        """Clears the per-step outputs."""
        for column in (self.reward, self.group_reward, self.terminated, self.truncated):
            column.fill(0)
        self.decided.fill(0)
        self.n_decided = 0
        self.new_slots, self.new_names, self.finished_names = [], [], []

    def absorb(
        self, decision: DecisionSteps, terminal: TerminalSteps, everyone: bool = False
    ) -> bool:
        """Takes one core step's batches (``everyone``: every agent of the episode was live
        at its start); True when a live agent of this behaviour reported."""
        reported = False
        agent_id = decision.agent_id
        # Most steps repeat the last step's ids: checked already, their slots and names
        # known. The fast paths kept are those benchmarks/run.py shows paying (TrivialEndless,
        # N=64, process_time, best of 7, same load): this one (keyed on the ids' bytes)
        # saves ~27 us of ~99 per Parallel step and ~30 us of ~158 per AEC cycle; reusing
        # dec_names and their itemgetter while the slots repeat ~5 us and ~7 us; infos()'s
        # one-dict copy ~5 us and ~10 us. gather()'s Box/Discrete shortcut saved nothing.
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
        return self._absorb_decision(decision, same, everyone) or reported

    def _absorb_decision(self, decision: DecisionSteps, same: bool, everyone: bool) -> bool:
        self.dec_count = len(decision)
        if not self.dec_count:
            self.dec_names = []
            return False
        slots, index = self._decision_slots(decision.agent_id, same)
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
        if not self.new_slots:
            return
        n = self.n - len(self.new_slots)
        self.live[n : self.n] = False
        self.n_decided -= int(self.decided[n : self.n].sum())
        self.n = n
        for name in self.names[n:]:
            del self.slot_of[name]
        del self.names[n:]
        self._last = None  # its slots may be the dropped ones
        self._index_ids()
        self.new_slots, self.new_names = [], []

    def truncate_live(self) -> None:
        """Ends every live agent's episode as truncated (the multi-agent episode is over)."""
        live = np.flatnonzero(self.live[: self.n])
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
        if len(names) == 1:
            values = (values,)
        try:
            action = self.action_layout.to_core(self._stack(values), len(names))
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
        if not self.action_layout.is_hybrid:
            return np.asarray(values)
        # A dict with exactly the two parts: an ndarray or a list is no hybrid action, and
        # an extra key would be dropped unseen.
        if not all(isinstance(v, Mapping) and len(v) == 2 for v in values):
            described = (
                f"a dict with keys {sorted(map(str, v))}" if isinstance(v, Mapping) else a_type(v)
                for v in values[:3]
            )
            raise ActionError(
                f"behavior {self.name!r}: expected hybrid actions as dicts with keys "
                "['continuous', 'discrete'], got " + ", ".join(described)
            )
        return {
            "continuous": np.asarray([v["continuous"] for v in values]),
            "discrete": np.asarray([v["discrete"] for v in values]),
        }

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
        """Fresh per-agent observations of the slots ``index`` in the consumer layout."""
        if self._obs_keys is None:
            rows: Iterable[Any] = _fresh_rows(self.obs, index)
        else:
            keys = self._obs_keys
            rows = [
                dict(zip(keys, v, strict=True))
                for v in zip(*(_fresh_rows(self.obs[k], index) for k in keys), strict=True)
            ]
        if self.mask_in_obs:
            return [
                {"observation": o, "action_mask": m}
                for o, m in zip(rows, _fresh_rows(self.mask, index), strict=True)
            ]
        return rows

    def infos(self, index: slice | np.ndarray, n: int) -> Iterable[dict[str, Any]]:
        """Fresh per-agent info dicts of the slots ``index`` (``n`` of them)."""
        if n and not self.mask_in_info and self.n_decided == n:
            # Every agent decided, one group id, every group reward +0.0: copies of one
            # dict (bytes compared: well under a microsecond where numpy's == takes several).
            ids = self.group_id[index]
            raw = ids.tobytes()
            rewards = self.group_reward[index].tobytes()
            if raw == raw[:8] * n and rewards == bytes(len(rewards)):
                info = {"decided": True, "group_id": int(ids[0]), "group_reward": 0.0}
                return map(dict.copy, repeat(info, n))
        columns = zip(
            self.decided[index].tolist(),
            self.group_id[index].tolist(),
            self.group_reward[index].tolist(),
            strict=True,
        )
        infos = [{"decided": d, "group_id": g, "group_reward": r} for d, g, r in columns]
        if self.mask_in_info:
            for info, mask in zip(infos, _fresh_rows(self.mask, index), strict=True):
                info["action_mask"] = mask
        return infos


def _fresh_rows(array: np.ndarray, index: slice | np.ndarray) -> np.ndarray:
    """``array[index]`` as a new array (a slice is a view, so it is copied)."""
    return array[index].copy() if isinstance(index, slice) else array[index]
