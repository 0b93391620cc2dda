"""A behaviour's agents for the multi-agent driver: who is live, what a step reports, actions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import repeat
from operator import itemgetter
from typing import Any

import numpy as np
from gymnasium import spaces

from zooport.adapters.agent_names import AgentNames
from zooport.adapters.options import LayoutOptions
from zooport.adapters.spaces import AgentSlots, Index
from zooport.envs.base_env import ActionTuple, BehaviorSpec, DecisionSteps, TerminalSteps
from zooport.envs.steps import check_agent_ids
from zooport.errors import ActionError, ArgumentError, ArgumentTypeError, a_type

__all__ = ["AgentGroup", "set_default_actions"]

# The per-slot arrays (the observations aside), grown together.
_ARRAYS = "ids group_id mask live reward group_reward terminated truncated decided".split()


class AgentGroup(AgentSlots):
    """One behaviour's agents in the current episode, in slots in order of appearance: id,
    name, ``live`` flag (who is live), last observation, mask, group id, one step's outputs."""

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
        self.n = self.n_decided = self.dec_count = 0
        self.ids = np.zeros(capacity, np.int64)
        self.group_id = np.zeros(capacity, np.int64)
        self.mask = np.ones((capacity, self.mask_size), np.int8)
        self.live = np.zeros(capacity, bool)
        self.reward, self.group_reward = np.zeros((2, capacity), np.float32)
        self.terminated, self.truncated, self.decided = np.zeros((3, capacity), bool)
        self.obs = self.obs_layout.allocate(capacity)
        self.names: list[str] = []
        self.slot_of: dict[str, int] = {}
        # The last DecisionSteps' key, slots, write index and names (_decision_slots).
        self._last: tuple[Any, np.ndarray, Index, list[str]] | None = None
        self.dec_rows: np.ndarray | None = None
        self.dec_names: list[str] = []
        self._getter: Any = None
        self._getter_names: list[str] | None = None
        self.new_names: list[str] = []
        self.finished_names: list[str] = []

    def _add(self, ids: np.ndarray) -> None:
        start, self.n = self.n, self.n + ids.size
        if self.n > self.capacity:  # every per-slot array grows together
            capacity = max(self.n, 2 * self.capacity, 8)

            def bigger(array: np.ndarray, fill: int = 0) -> np.ndarray:
                out = np.full((capacity, *array.shape[1:]), fill, array.dtype)
                out[: self.capacity] = array
                return out

            for attr in _ARRAYS:
                setattr(self, attr, bigger(getattr(self, attr), int(attr == "mask")))
            if isinstance(self.obs, dict):
                self.obs = {k: bigger(v) for k, v in self.obs.items()}
            else:
                self.obs = bigger(self.obs)
            self.capacity = capacity
        self.ids[start : self.n] = ids
        self.live[start : self.n] = True
        added = self.namer.names(self.name, ids.tolist())
        self.names.extend(added)
        self.slot_of.update(zip(added, range(start, self.n), strict=True))
        self._index_ids()

    def _index_ids(self) -> None:
        self._sorted_slots = np.argsort(self.ids[: self.n], kind="stable")
        self._sorted_ids = self.ids[self._sorted_slots]

    def slots_of(self, ids: np.ndarray) -> np.ndarray:
        """The slot of each agent id, -1 for ids not in this episode (vectorised)."""
        if not self.n:
            return np.full(ids.shape, -1, np.intp)
        pos = np.minimum(np.searchsorted(self._sorted_ids, ids), self.n - 1)
        return np.where(self._sorted_ids[pos] == ids, self._sorted_slots[pos], -1)

    def _decision_slots(self, agent_id: Any) -> tuple[Any, np.ndarray, Index, list[str]]:
        # The ids' (dtype, bytes), slots (new agents get the next ones), index and names.
        ids = np.asarray(agent_id, np.int64)
        slots = self.slots_of(ids)
        unknown = np.flatnonzero(slots < 0)
        if unknown.size:
            self._add(ids[unknown])
            self.new_names.extend(self.names[self.n - unknown.size :])
            slots[unknown] = np.arange(self.n - unknown.size, self.n)
        index = slice(0, slots.size) if (slots == np.arange(slots.size)).all() else slots
        key = (agent_id.dtype, agent_id.tobytes()) if type(agent_id) is np.ndarray else None
        return key, slots, index, [self.names[i] for i in slots.tolist()]

    def start(self, decision: DecisionSteps, names: AgentNames) -> None:
        """A new episode with the agents of ``decision``, named by ``names``."""
        self.namer = names
        decision = self.obs_layout.checked(decision)
        check_agent_ids(self.name, decision, ())
        ids = np.asarray(decision.agent_id, np.int64)
        self._allocate(max(ids.size, 1))
        self._add(np.sort(ids))
        self.begin_step()
        self._absorb_decision(decision, False, True)

    def begin_step(self) -> None:
        if self.finished_names:  # flags are set only in steps where agents finish
            self.terminated.fill(False)
            self.truncated.fill(False)
        self.reward.fill(0)
        self.group_reward.fill(0)
        self.decided.fill(False)
        self.n_decided = 0
        self.new_names, self.finished_names = [], []

    def absorb(
        self, decision: DecisionSteps, terminal: TerminalSteps, everyone: bool = False
    ) -> bool:
        """Takes one core step's batches; True when a live agent reported."""
        agent_id = decision.agent_id
        # Most steps repeat the last ids: checked, slots and names known (~27% of a step).
        same = (
            self._last is not None
            and type(agent_id) is np.ndarray
            and self._last[0] == (agent_id.dtype, agent_id.tobytes())
        )
        if len(terminal) or not same:
            check_agent_ids(self.name, decision, terminal)
        reported = False
        if len(terminal):
            terminal = self.obs_layout.checked(terminal, terminal=True)
            slots = self.slots_of(np.asarray(terminal.agent_id, np.int64))
            hit = slots >= 0
            hit[hit] = self.live[slots[hit]]
            rows = np.flatnonzero(hit)
            if rows.size:
                s = slots[rows]
                self._end_episodes(
                    s, terminal, rows, self.reward, self.group_reward, self.terminated,
                    self.truncated,
                )  # fmt: skip
                self.live[s] = False
                self.finished_names.extend(self.names[i] for i in s.tolist())
                reported = True
        decision = self.obs_layout.checked(decision)
        return self._absorb_decision(decision, same, everyone and not reported) or reported

    def _absorb_decision(self, decision: DecisionSteps, same: bool, everyone: bool) -> bool:
        self.dec_count = len(decision)
        if not self.dec_count:
            self.dec_names = []
            return False
        last = self._last
        if not same or last is None:
            last = self._last = self._decision_slots(decision.agent_id)
        _, slots, index, names = last
        rows: np.ndarray | None = None
        if everyone or self.live[index].all():
            s = index
        else:
            rows = np.flatnonzero(self.live[slots])
            s = slots[rows]
            names = [self.names[i] for i in s.tolist()]
        self.dec_rows, self.dec_names = rows, names
        if not names:
            return False
        self._take_decisions(s, decision, rows, len(names))
        reward, group_reward = decision.reward, decision.group_reward
        if rows is not None:
            reward, group_reward = reward[rows], group_reward[rows]
        self.reward[s] = reward
        self.group_reward[s] = group_reward
        self.decided[s] = True
        self.n_decided += len(names)
        return True

    def end_episode(self) -> list[str]:
        """Forgets the agents that joined in this step; truncates the live ones, named in return."""
        n = self.n - len(self.new_names)
        self.n_decided -= int(self.decided[n : self.n].sum())
        self.live[n : self.n] = False
        for name in self.new_names:
            del self.slot_of[name]
        del self.names[n:]
        self.n, self.new_names = n, []
        self._last = None  # its slots may be the dropped ones
        self._index_ids()
        live = np.flatnonzero(self.live[:n])
        self.truncated[live] = True
        self.live[live] = False
        names = [self.names[i] for i in live.tolist()]
        self.finished_names.extend(names)
        return names

    def reporting(self) -> tuple[list[str], Index]:
        """The names and slots of the agents live at the step's start, then those that joined."""
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

    def gather(self, actions: Mapping[str, Any]) -> ActionTuple:
        """The core batch for the latest DecisionSteps from a dict of consumer actions."""
        names = self.dec_names
        if self._getter_names is not names:
            self._getter, self._getter_names = itemgetter(*names), names
        values = self._getter(actions)
        if len(names) == 1:
            values = (values,)
        try:
            action = self.action_layout.to_core(self._stack(values), len(names))
        except (ActionError, ValueError, TypeError, KeyError, IndexError) as error:
            raise self.diagnose(names, values, error) from None
        if self.dec_rows is not None:
            # The live agents' rows, zeros for the others; an empty part is not written.
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
        # A dict with exactly the two parts (an extra key would be dropped unseen).
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
        if not np.all(np.isfinite(action.continuous)):
            return "a continuous value is not finite"
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

    def observations(self, index: Index) -> Any:
        """Fresh per-agent observations of the slots ``index`` in the consumer layout."""
        if self._obs_keys is None:
            rows: Any = _fresh_rows(self.obs, index)
        else:
            keys = self._obs_keys
            columns = zip(*(_fresh_rows(self.obs[k], index) for k in keys), strict=True)
            rows = [dict(zip(keys, v, strict=True)) for v in columns]
        if self.mask_in_obs:
            masks = _fresh_rows(self.mask, index)
            return [{"observation": o, "action_mask": m} for o, m in zip(rows, masks, strict=True)]
        return rows

    def infos(self, index: Index, n: int) -> Any:
        """Fresh per-agent info dicts of the slots ``index`` (``n`` of them)."""
        if n and not self.mask_in_info and self.n_decided == n:
            # All decided, one group id, group rewards +0.0: copies of one dict (bytes compared).
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


def _fresh_rows(array: np.ndarray, index: Index) -> np.ndarray:
    return array[index].copy() if isinstance(index, slice) else array[index]


def set_default_actions(groups: Sequence[AgentGroup], default: Any) -> None:
    """Sets each group's default action from ``default_action=``."""
    if default is None:
        return
    if isinstance(default, str) and default == "zero":
        default = {}
        for g in groups:
            batch = g.action_layout.from_core(g.spec.action_spec.empty_action(1))
            default[g.name] = (
                {k: v[0] for k, v in batch.items()} if isinstance(batch, dict) else batch[0]
            )
    if not isinstance(default, Mapping):
        error = ArgumentError if isinstance(default, str) else ArgumentTypeError
        raise error(
            f"Expect default_action to be None, 'zero' or a mapping behavior -> action, "
            f"actually: {default!r}"
        )
    by_name = {g.name: g for g in groups}
    unknown = set(default) - set(by_name)
    if unknown:
        raise ArgumentError(
            f"default_action names behaviors {sorted(unknown)} the core does not have; "
            f"behaviors: {list(by_name)}"
        )
    for behavior, value in default.items():
        g = by_name[behavior]
        problem = g.problem(value)
        if problem is not None:
            raise ActionError(
                f"default_action for behavior {behavior!r}: expected an action of "
                f"{g.action_space}, got {value!r} ({problem})"
            )
        g.default_action = value
