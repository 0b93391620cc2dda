"""The driver family's engine: every behaviour of a core as named PettingZoo agents.

Each behaviour's agents sit in an :class:`AgentGroup` whose ``live`` flags are the one record
of who is live. The driver gathers a dict of actions into one ``set_actions`` per behaviour,
steps the core until a live agent reports, and ends the episode by the termination rule or
``max_cycles``. Agents join ``agents`` when they appear and leave it, never to return within
the episode, in the step they finish; docs/guides/multi-agent.md has the rest.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import repeat
from operator import itemgetter
from typing import Any, NamedTuple, TypeGuard

import numpy as np
from gymnasium import spaces

from zooport.adapters.agent_names import AgentNames
from zooport.adapters.agent_slots import AgentSlots
from zooport.adapters.core_access import (
    MAX_IDLE_STEPS,
    adopt_core_with_specs,
    note_core_failure,
)
from zooport.adapters.driver_controls import (
    checked_max_cycles,
    checked_stale_actions,
    default_actions,
)
from zooport.adapters.options import DriverOptions, LayoutOptions
from zooport.adapters.termination import TerminationMode, finished_needed
from zooport.envs.arguments import check_seed
from zooport.envs.base_env import (
    ActionTuple,
    BaseEnvLike,
    BehaviorSpec,
    DecisionSteps,
    TerminalSteps,
)
from zooport.envs.capabilities import has_action_masks, reset_core
from zooport.envs.step_guard import StepGuard
from zooport.envs.steps import check_agent_ids
from zooport.errors import (
    ActionError,
    EnvClosedError,
    EnvNotResetError,
    SpecError,
    UnknownAgentError,
    ZooportError,
    a_type,
)

__all__ = ["AgentGroup", "AgentsStep", "MultiAgentDriver"]

_DEFAULT_OPTIONS = DriverOptions()
# Per-slot arrays besides ``obs`` (the mask grows with 1s: allowed).
_SLOT_ARRAYS = ("ids", "group_id", "mask", "live", "reward", "group_reward")
_SLOT_FLAGS = ("terminated", "truncated", "decided")


class AgentsStep(NamedTuple):
    """One step of every reporting agent, five dicts with the same keys in the same order."""

    observations: dict[str, Any]
    rewards: dict[str, float]
    terminations: dict[str, bool]
    truncations: dict[str, bool]
    infos: dict[str, dict[str, Any]]


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


class MultiAgentDriver:
    """Drives every behaviour of ``core`` as PettingZoo agents with the ``options``;
    ``adapter`` names the front end in error messages.

    Example:
        >>> from zooport.envs.builtin.tag import Tag
        >>> driver = MultiAgentDriver(Tag(seed=0))
        >>> obs, infos = driver.reset(seed=0)
        >>> driver.agents
        ['runner_0', 'runner_1', 'runner_2', 'tagger_3', 'tagger_4']
        >>> step = driver.step(dict.fromkeys(driver.agents, 0))
        >>> step.infos["runner_0"]["decided"], step.infos["tagger_3"]["decided"]
        (True, False)
    """

    def __init__(
        self,
        core: BaseEnvLike,
        options: DriverOptions = _DEFAULT_OPTIONS,
        *,
        adapter: str = "MultiAgentDriver",
    ) -> None:
        core, specs = adopt_core_with_specs(core, adapter)
        self.core = core
        self.adapter = adapter
        self.options = options
        self.names = AgentNames(list(specs), options.agent_name)
        finished_needed(options.termination_mode, 1)  # a bad mode raises here, not in a step
        # The options that stay writable (through the front ends, which check them).
        self.termination_mode: TerminationMode | str | float = options.termination_mode
        self.max_cycles = checked_max_cycles(options.max_cycles)
        self.stale_actions = checked_stale_actions(options.stale_actions)
        # Masks left on auto: wherever there are discrete actions, unless the core says it
        # has none (a BatchedEnv without ``_action_mask``).
        masks = has_action_masks(core) if options.action_masks is None else options.action_masks
        self.groups = [
            AgentGroup(
                behavior,
                spec,
                masked=bool(masks) and spec.action_spec.discrete_size > 0,
                mask_in_info=options.mask_in_info,
                layout=options,
            )
            for behavior, spec in specs.items()
        ]
        self.default_action = options.default_action
        defaults = default_actions(self.groups, options.default_action)
        for g in self.groups:
            g.default_action = defaults.get(g.name)
        self.possible_agents: list[str] = []
        # The groups' ``live`` flags as a list in ``possible_agents`` order, rebuilt in the
        # step they change (``agents`` is read on every step).
        self._agents: list[str] = []
        # Every agent of the episode, live or finished, by name -> its behaviour's group.
        self.agent_groups: dict[str, AgentGroup] = {}
        self.cycles = 0
        # The agents whose episode ended in the last step, and those that joined in it.
        self.finished: list[str] = []
        self.new_agents: list[str] = []
        self.episode_over = True
        self._ready = False
        self._closed = False
        # Each group's agent count at the first reset (None before it): the state's layout.
        self.first_counts: list[int] | None = None
        self.ignored_actions = 0
        self.guard = StepGuard(adapter)

    @property
    def agents(self) -> list[str]:
        """The live agents, in ``possible_agents`` order."""
        return list(self._agents)

    @property
    def ready(self) -> bool:
        """True between a ``reset()`` and ``close()``: the episode can be stepped (unless over)."""
        return self._ready

    def ignore_stale(self, agents: list[str]) -> None:
        """Counts the actions of finished ``agents`` as ignored (or refuses them)."""
        self._refuse_stale(agents)
        self.ignored_actions += len(agents)

    def _refuse_stale(self, agents: list[str]) -> None:
        if self.stale_actions == "raise":
            raise ActionError(
                f"{self.adapter}: actions for agents that finished earlier in the episode "
                f"{agents} (stale_actions='raise'); live agents: {self.agents}"
            )

    def group_of(self, agent: str) -> AgentGroup:
        """The behaviour group of an agent of the episode (the core is reset once to find
        the agents, before the first ``reset()``)."""
        try:
            return self.agent_groups[agent]
        except (KeyError, TypeError):
            pass
        if self.first_counts is None:
            self.discover()
            return self.group_of(agent)
        raise UnknownAgentError(
            f"{self.adapter}: expected an agent of the episode, got {agent!r}; possible "
            f"agents: {self.possible_agents}"
        )

    def is_live(self, agent: object) -> TypeGuard[str]:
        """True when ``agent`` is live in the current episode (its group's flag says so)."""
        g = self.agent_groups.get(agent)  # type: ignore[call-overload]  # any key may be asked
        return g is not None and self._ready and bool(g.live[g.slot_of[agent]])

    def all_live(self, agents: Collection[Any]) -> bool:
        """True when every one of ``agents`` (names, a dict's keys) is live."""
        return set(agents).issubset(self._agents)

    # ------------------------------------------------------------------ episodes

    def discover(self) -> None:
        """Resets the core once to learn ``possible_agents`` and the state layout."""
        if self.first_counts is None:
            self.reset()
            self._ready = False
            self._agents = []

    def reset(self, seed: int | None = None) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """Resets the core (reseeded with ``seed`` where it can be) and starts an episode;
        one that raises (a core hook, a side channel) leaves the driver needing another."""
        self.check_open()
        seed = check_seed(seed, f"{self.adapter}.reset")  # a bad seed raises, changing nothing
        with self.guard.resetting():
            return self._reset(seed)

    def _reset(self, seed: int | None) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        steps = self._reset_core(seed)
        self.possible_agents = []
        self.agent_groups = {}
        for g in self.groups:
            g.start(steps[g.name], self.names)
            self.possible_agents.extend(g.names)
            self.agent_groups.update(dict.fromkeys(g.names, g))
        self._agents = list(self.possible_agents)
        self.cycles = 0
        self.finished = []
        self.new_agents = []
        self.episode_over = not self._agents
        self._ready = True
        if self.first_counts is None:
            self.first_counts = [g.n for g in self.groups]
        observations: dict[str, Any] = dict.fromkeys(self._agents)
        infos = observations.copy()
        for g in self.groups:
            observations.update(zip(g.names, g.observations(slice(0, g.n)), strict=True))
            infos.update(zip(g.names, g.infos(slice(0, g.n), g.n), strict=True))
        return observations, infos

    def _reset_core(self, seed: int | None) -> dict[str, DecisionSteps]:
        try:
            reset_core(self.core, seed, warn=True)
            self.names.forget()
            for idle in range(MAX_IDLE_STEPS + 1):
                decisions = {g.name: self.core.get_steps(g.name)[0] for g in self.groups}
                if any(len(d) for d in decisions.values()):
                    break
                if idle == MAX_IDLE_STEPS:
                    raise ZooportError(
                        f"{self.adapter}: no agent requested a decision in {MAX_IDLE_STEPS} "
                        "steps after reset"
                    )
                self.core.step()
            if len(self.core.behavior_specs) != len(self.groups):
                raise self._late_behavior()
        except Exception as error:
            note_core_failure(error, f"{self.adapter}.reset()")
            raise
        return decisions

    def step(self, actions: Mapping[str, Any]) -> AgentsStep:
        """Applies one action per live agent and steps the core until a live agent reports.

        Bad actions raise before anything changes; an exception once the core is stepping
        loses the step's outputs (later steps raise ``EnvNotResetError`` until ``reset()``).
        """
        if not self._ready:
            self.check_open()
            raise EnvNotResetError(f"{self.adapter}: call reset() before step()")
        if self.episode_over:
            raise EnvNotResetError(
                f"{self.adapter}: the episode is over (no live agents); call reset()"
            )
        with self.guard.call("step"):
            return self._step(actions)

    def _step(self, actions: Mapping[str, Any]) -> AgentsStep:
        live = self._agents
        stale = 0
        # When every live agent decides, a dict of the right size whose lookups all succeed
        # (in gather) has exactly the live agents as keys: no set comparison is needed.
        deciding = sum(len(g.dec_names) for g in self.groups)
        if (
            type(actions) is not dict
            or len(actions) != len(live)
            or (deciding != len(live) and actions.keys() != set(live))
        ):
            actions, stale = self._complete(actions)
        core = self.core
        groups = self.groups
        for g in groups:
            if g.dec_names:
                try:
                    batch = g.gather(actions)
                except KeyError:
                    # A live agent without an action, so the dict names one that is not live.
                    actions, stale = self._complete(actions)
                    batch = g.gather(actions)
                try:
                    core.set_actions(g.name, batch)
                except ActionError as error:
                    values = [actions[n] for n in g.dec_names]
                    raise g.diagnose(g.dec_names, values, error) from None
        # Every action was accepted; from here on an exception loses the step's outputs.
        self.guard.committed = True
        everyone = len(live) == len(self.possible_agents)  # nobody has finished
        for g in groups:
            g.begin_step()
        for _ in range(MAX_IDLE_STEPS):
            try:
                core.step()
            except Exception as error:
                note_core_failure(
                    error, f"{self.adapter}.step(), cycle {self.cycles + 1} of the episode"
                )
                raise
            if len(core.behavior_specs) != len(groups):
                raise self._late_behavior()
            reported = False
            for g in groups:
                if g.absorb(*core.get_steps(g.name), everyone):
                    reported = True
            if reported:
                break
        else:
            raise ZooportError(
                f"{self.adapter}: none of the live agents {self.agents[:10]} requested a "
                f"decision or ended its episode in {MAX_IDLE_STEPS} core steps"
            )
        self.cycles += 1
        self.ignored_actions += stale
        return self._finish_step()

    def _finish_step(self) -> AgentsStep:
        groups = self.groups
        finished = [name for g in groups for name in g.finished_names]
        new = [name for g in groups for name in g.new_names]
        n_live = len(self._agents) - len(finished) + len(new)
        # Agents leave only by finishing: those of the episode that are not live have.
        n_finished = len(self.possible_agents) - len(self._agents) + len(finished)
        # While no agent of the episode has finished, no mode can end it (each asks for at
        # least one finished agent).
        over = (
            n_live == 0
            or (
                n_finished > 0
                and n_finished
                >= finished_needed(self.termination_mode, len(self.possible_agents) + len(new))
            )
            or (self.max_cycles is not None and self.cycles >= self.max_cycles)
        )
        if over:
            for g in groups:
                # An agent that appears in the step the episode ends is not part of it: it
                # could not join ``agents`` and leave them in the same step.
                g.drop_new()
                k = len(g.finished_names)
                g.truncate_live()
                finished.extend(g.finished_names[k:])
            new = []
        else:
            for g in groups:
                self.possible_agents.extend(g.new_names)
                self.agent_groups.update(dict.fromkeys(g.new_names, g))
        self.episode_over = over
        self.finished = finished
        self.new_agents = new
        # The dicts follow ``agents``' order: copies of one dict with those keys, then updated.
        template: dict[str, Any] = dict.fromkeys(self._agents)
        observations = template.copy()
        rewards = template.copy()
        infos = template.copy()
        if finished:
            terminations = template.copy()
            truncations = template.copy()
        else:
            terminations = dict.fromkeys(template, False)
            truncations = terminations.copy()
        for g in groups:
            names, index = g.reporting()
            if not names:
                continue
            observations.update(zip(names, g.observations(index), strict=True))
            rewards.update(zip(names, g.reward[index].tolist(), strict=True))
            if finished:
                terminations.update(zip(names, g.terminated[index].tolist(), strict=True))
                truncations.update(zip(names, g.truncated[index].tolist(), strict=True))
            elif g.new_names:
                terminations.update(dict.fromkeys(g.new_names, False))
                truncations.update(dict.fromkeys(g.new_names, False))
            infos.update(zip(names, g.infos(index, len(names)), strict=True))
        if finished or new:
            gone = set(finished)
            self._agents = [a for a in self._agents if a not in gone] + new
        return AgentsStep(observations, rewards, terminations, truncations, infos)

    def _late_behavior(self) -> SpecError:
        served = [g.name for g in self.groups]
        late = [b for b in self.core.behavior_specs if b not in served]
        return SpecError(
            f"{self.adapter}: expected the behaviours {served} the adapter was built with, "
            f"got new ones {late}: agents and spaces are fixed at construction, so build the "
            "adapter once the scene has registered every behaviour"
        )

    def _complete(self, actions: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
        # The live agents' actions, defaults filled, and how many stale ones were left out.
        if not isinstance(actions, Mapping):
            raise ActionError(
                f"{self.adapter}: expected a dict of actions keyed by agent name, got "
                f"{type(actions).__name__}"
            )
        extra = [a for a in actions if not self.is_live(a)]
        # Every agent of the episode, live or finished, is in agent_groups.
        unknown = [a for a in extra if a not in self.agent_groups]
        if unknown:
            raise ActionError(
                f"{self.adapter}: actions for agents that are not in the episode {unknown}; "
                f"live agents: {self.agents}"
            )
        if extra:
            self._refuse_stale(extra)
        filled = {a: action for a, action in actions.items() if self.is_live(a)}
        without = []
        for agent in self._agents:
            if agent not in filled:
                default = self.agent_groups[agent].default_action
                if default is None:
                    without.append(agent)
                else:
                    filled[agent] = default
        if without:
            raise ActionError(
                f"{self.adapter}: no action for live agents {without}; every live agent "
                "needs one (its action is ignored when info['decided'] is False), or pass "
                "default_action='zero'"
            )
        return filled, len(extra)

    def close(self) -> None:
        """Closes the core once; later calls do nothing."""
        if not self._closed:
            self._closed = True
            self._ready = False
            self.core.close()

    def check_open(self) -> None:
        """Raises :class:`EnvClosedError` once the adapter was closed."""
        if self._closed:
            raise EnvClosedError(f"{self.adapter} was used after close()")
