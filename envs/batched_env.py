"""A base class for writing a vectorised :class:`~zooport.envs.base_env.BaseEnv` with arrays only
(the guide ``docs/guides/batched-env.md`` walks through one)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, Protocol

import numpy as np

from zooport.envs.arguments import check_bool, check_int, check_seed
from zooport.envs.base_env import (
    ActionTuple,
    AgentId,
    BaseEnv,
    BehaviorMapping,
    BehaviorName,
    BehaviorSpec,
)
from zooport.envs.batched_behavior import BehaviorState, StepResult
from zooport.envs.side_channel.engine_configuration_channel import EngineConfig
from zooport.envs.side_channel.side_channel import SideChannel
from zooport.envs.side_channel.side_channel_manager import SimulationSideChannels
from zooport.envs.side_channel.stats_side_channel import StatsAggregationMethod
from zooport.envs.step_guard import StepGuard
from zooport.envs.steps import DecisionSteps, TerminalSteps, decision_row
from zooport.errors import (
    ArgumentError,
    EnvClosedError,
    EnvNotResetError,
    SpecError,
    UnknownBehaviorError,
    look_up,
)

__all__ = ["StepResult", "BatchedEnv", "builds_own_steps", "EnvDeclaration", "DeclaredEnvClass"]


class BatchedEnv(BaseEnv):
    """Base class for a vectorised numpy environment: declare behaviours with ``_add_behavior``
    and implement ``_reset_agents``, ``_step`` and ``_observe`` over *slots* (0 .. capacity - 1
    per behaviour); the base owns agent ids, decision periods, restarts, spawning, action
    checks and side channels. ``max_steps`` interrupts an episode after that many steps (0:
    never); ``reorder_agents`` presents each batch in a random row order, as Unity may."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 30}
    #: Adapters call ``reset(seed=...)`` on cores that declare this.
    seedable: ClassVar[bool] = True

    def __init__(
        self,
        seed: int | None = None,
        side_channels: Sequence[SideChannel] | None = None,
        max_steps: int = 0,
        reorder_agents: bool = False,
    ) -> None:
        where = type(self).__name__
        seed = check_seed(seed, where)
        self._behaviors: dict[str, BehaviorState] = {}
        self._specs = BehaviorMapping({})
        self._max_steps = check_int(max_steps, "max_steps", 0, where=where)
        self._reorder = check_bool(reorder_agents, "reorder_agents", where)
        self._seed = seed
        self.np_random = np.random.default_rng(seed)
        self._order_rng = np.random.default_rng(None if seed is None else seed + 1)
        self._channels = SimulationSideChannels(side_channels, seed=seed)
        self._next_id = 0
        self._spawn_count = 0  # step() notices an author spawning outside _step by it
        self._was_reset = False
        self._closed = False
        self._guard = StepGuard(where)

    def _add_behavior(
        self,
        name: BehaviorName,
        spec: BehaviorSpec,
        n_agents: int,
        *,
        capacity: int | None = None,
        decision_period: int = 1,
        max_steps: int | None = None,
        restart_finished: bool = True,
        group_id: int | np.ndarray | None = None,
    ) -> None:
        """Declares a behaviour with ``n_agents`` agents (``capacity`` slots for spawning), in
        ``__init__``; a team game declares one name per team (``"Soccer?team=0"``) and
        ``group_id`` (an int or one per slot) groups agents. An agent decides every
        ``decision_period`` steps and right after a restart; with ``restart_finished=False``
        a finished agent stays out until ``reset``."""
        where = f"{type(self).__name__}._add_behavior({name!r})"
        if name in self._behaviors:
            raise ArgumentError(f"behavior {name!r} is declared twice")
        n_agents = check_int(n_agents, "n_agents", 1, where=where)
        capacity = n_agents if capacity is None else check_int(capacity, "capacity", 1, where=where)
        if capacity < n_agents:
            raise ArgumentError(
                f"behavior {name!r}: expect 1 <= n_agents <= capacity, actually: "
                f"n_agents={n_agents}, capacity={capacity}"
            )
        decision_period = check_int(decision_period, "decision_period", 1, where=where)
        limit = self._max_steps if max_steps is None else check_int(max_steps, "max_steps", 0)
        self._behaviors[name] = BehaviorState(
            name, spec, n_agents, capacity, decision_period, limit, restart_finished, group_id
        )
        self._specs = BehaviorMapping({b.name: b.spec for b in self._behaviors.values()})

    def _spawn(self, behavior: BehaviorName, count: int) -> np.ndarray:
        """Activates up to ``count`` free slots with fresh agent ids (from ``_step``); returns
        the slots, which are reset with ``_reset_agents`` after the step and then decide."""
        b = self._behavior(behavior)
        free = np.flatnonzero(~b.active)[:count]
        b.active[free] = True
        b.spawned[free] = True
        b.any_spawned |= free.size > 0
        b.ids[free] = np.arange(self._next_id, self._next_id + free.size, dtype=np.int32)
        b.clear(free)
        self._next_id += free.size
        self._spawn_count += free.size
        return free

    def active_slots(self, behavior: BehaviorName) -> np.ndarray:
        """A (capacity,) bool array, True where a slot holds a live agent."""
        return self._behavior(behavior).active.copy()

    def environment_parameter(self, key: str, default: float) -> float:
        """The value sent through ``EnvironmentParametersChannel`` (sampled if a sampler)."""
        return self._channels.get_parameter(key, default)

    def record_stat(
        self,
        key: str,
        value: float,
        aggregation: StatsAggregationMethod = StatsAggregationMethod.AVERAGE,
    ) -> None:
        """Sends a statistic to the user's ``StatsSideChannel`` at the end of this step."""
        self._channels.record_stat(key, value, aggregation)

    @property
    def engine_config(self) -> EngineConfig:
        """The engine configuration last received through ``EngineConfigurationChannel``."""
        return self._channels.engine_config

    def _reset_agents(self, behavior: BehaviorName, slots: np.ndarray) -> None:
        """Starts a new episode for these slots of ``behavior`` (a hook you must define)."""
        raise self._missing_hook("_reset_agents(self, behavior, slots)")

    def _step(self, actions: dict[BehaviorName, ActionTuple]) -> dict[BehaviorName, StepResult]:
        """Advances every slot one step (a hook you must define); a slot that did not decide
        repeats its last action. Returns ``{behavior: StepResult(...)}`` over all slots."""
        raise self._missing_hook("_step(self, actions)")

    def _observe(self, behavior: BehaviorName, slots: np.ndarray) -> list[np.ndarray]:
        """The slots' observations, one ``(len(slots), *shape)`` array per spec (a hook)."""
        raise self._missing_hook("_observe(self, behavior, slots)")

    def _action_mask(self, behavior: BehaviorName, slots: np.ndarray) -> list[np.ndarray] | None:
        """One ``(len(slots), branch_size)`` bool array per branch, True = NOT available."""
        return None

    def _on_reset(self) -> None:
        """Called at the start of every ``reset``, after reseeding; resets global state."""

    def _render(self) -> np.ndarray:
        """An ``(H, W, 3)`` uint8 picture, what ``render()`` returns (optional)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement rendering")

    def _missing_hook(self, signature: str) -> NotImplementedError:
        return NotImplementedError(
            f"{type(self).__name__} must define {signature}, a hook of BatchedEnv"
        )

    @property
    def behavior_specs(self) -> Mapping[BehaviorName, BehaviorSpec]:
        self._check_open()
        return self._specs

    @property
    def side_channels(self) -> list[SideChannel]:
        """The user's side channels this environment was constructed with."""
        return list(self._channels.side_channels)

    @property
    def has_action_masks(self) -> bool:
        """Whether the class implements ``_action_mask`` (read by the adapters)."""
        return type(self)._action_mask is not BatchedEnv._action_mask

    @property
    def can_render(self) -> bool:
        """Whether the class implements ``_render``: ``render()`` draws a picture."""
        return type(self)._render is not BatchedEnv._render

    def restarts_finished(self, behavior_name: BehaviorName) -> bool:
        """Whether a finished agent of the behaviour is restarted in the same step."""
        return self._behavior(behavior_name).restart

    def reset(self, seed: int | None = None) -> None:
        """Starts a new episode for every agent; ``seed`` reseeds ``np_random``."""
        self._check_open()
        seed = check_seed(seed, f"{type(self).__name__}.reset")
        if not self._behaviors:
            raise SpecError(f"{type(self).__name__} declared no behavior (_add_behavior)")
        with self._guard.resetting():
            if seed is not None:
                self._seed, self.np_random = seed, np.random.default_rng(seed)
                self._order_rng = np.random.default_rng(seed + 1)
            self._channels.exchange()
            self._on_reset()
            self._next_id = 0
            for b in self._behaviors.values():
                self._next_id = b.start_episode(self._next_id)
            # Authors may read other behaviours' slots while placing agents: all ids and
            # active flags are those of the new episode before any _reset_agents call.
            for b in self._behaviors.values():
                self._reset_agents(b.name, np.arange(b.initial))
            for b in self._behaviors.values():
                self._publish(b, b.active.nonzero()[0], None)
            self._was_reset = True
            self._channels.exchange()

    def step(self) -> None:
        """Advances every behaviour one step (after a hook raised, refused until ``reset()``)."""
        if self._closed or not self._was_reset:
            self._check_ready()
        # step() takes no arguments: anything raised loses data, so it is committed at once.
        with self._guard.enter("step", committed=True):
            self._channels.exchange()
            behaviors = self._behaviors
            for b in behaviors.values():
                b.default_actions()
                b.actions_set = False
            results = self._step(
                {n: ActionTuple._trusted(b.continuous, b.discrete) for n, b in behaviors.items()}
            )
            spawn_count = self._spawn_count
            # Three phases over every behaviour, so none observes another's agents half-updated:
            # finish episodes (observing before any reset), restart and spawn, publish decisions.
            finished = [self._finish(b, results) for b in behaviors.values()]
            for b, (done_slots, _, _) in zip(behaviors.values(), finished, strict=True):
                if done_slots.size and b.restart:
                    self._reset_agents(b.name, done_slots)
                elif done_slots.size:
                    b.active[done_slots] = False
                if b.any_spawned:
                    arrived = b.spawned & b.active
                    if arrived.any():
                        self._reset_agents(b.name, np.flatnonzero(arrived))
                        b.spawned[:] = False
                        b.any_spawned = False
            # Agents spawned outside _step (from another hook) were not stepped.
            late_spawn = self._spawn_count != spawn_count
            for b, (done, terminal, spawned) in zip(behaviors.values(), finished, strict=True):
                self._publish(b, b.due_slots(done, spawned, late_spawn), terminal)
            self._channels.exchange()

    def set_actions(self, behavior_name: BehaviorName, action: ActionTuple) -> None:
        if self._closed or not self._was_reset or self._guard.running:
            self._check_ready("set_actions")
        b = self._behavior(behavior_name)
        action = b.spec.action_spec._validate_action(action, b.decision_slots.size, b.name)
        self._set_checked_actions(b.name, action.continuous, action.discrete)

    def _set_checked_actions(
        self, behavior_name: BehaviorName, continuous: np.ndarray, discrete: np.ndarray
    ) -> None:
        """``set_actions`` for rows a CorePool already validated (saves ~5 us a pool step)."""
        if self._closed or not self._was_reset or self._guard.running:
            self._check_ready("set_actions")
        b = self._behavior(behavior_name)
        # Every slot decided, in order: a plain copy, not a scatter (~10 us for 1024 agents).
        slots = slice(None) if b.all_decide else b.decision_slots
        if b.continuous.shape[1]:
            b.continuous[slots] = continuous
        if b.discrete.shape[1]:
            b.discrete[slots] = discrete
        b.actions_set = True

    def set_action_for_agent(
        self, behavior_name: BehaviorName, agent_id: AgentId, action: ActionTuple
    ) -> None:
        self._check_ready("set_action_for_agent")
        b = self._behavior(behavior_name)
        action = b.spec.action_spec._validate_action(action, 1, b.name)
        row = decision_row(b.name, b.steps[0], agent_id)
        b.default_actions()  # its fellow deciders take a zero action unless set too
        slot = b.decision_slots[row]
        b.continuous[slot] = action.continuous[0]
        b.discrete[slot] = action.discrete[0]
        b.actions_set = True

    def get_steps(self, behavior_name: BehaviorName) -> tuple[DecisionSteps, TerminalSteps]:
        if self._closed or not self._was_reset:
            self._check_ready()
        return self._behavior(behavior_name).steps

    def render(self) -> np.ndarray:
        self._check_ready()
        return self._render()

    def close(self) -> None:
        self._closed = True

    @property
    def closed(self) -> bool:
        return self._closed

    def _finish(
        self, b: BehaviorState, results: Mapping[str, StepResult]
    ) -> tuple[np.ndarray, TerminalSteps | None, np.ndarray | None]:
        """Accounts a step; returns the done slots, their TerminalSteps and the spawned mask."""
        where = f"{type(self).__name__}._step"
        result = look_up(results, b.name, SpecError, lambda: (
            f"{where} returned no StepResult for behavior {b.name!r}; "
            f"expected a dict with a StepResult for each of {list(self._behaviors)}"
        ))  # fmt: skip
        capacity, active = b.capacity, b.active
        reward = np.asarray(result.reward, dtype=np.float32)
        terminated = np.asarray(result.terminated, dtype=bool)
        if reward.shape != (capacity,) or terminated.shape != (capacity,):
            raise SpecError(
                f"{where} for behavior {b.name!r}: expected reward and terminated of "
                f"shape ({capacity},), got {reward.shape} and {terminated.shape}"
            )
        # A slot spawned during this _step starts its episode after it: its reward and flags
        # from this step are ignored.
        spawned = b.spawned & active if b.any_spawned else None
        # Every slot stepped (no empty or spawned slot) is the common case: whole-array
        # updates then, masked in-place ones otherwise (boolean fancy indexing is slower).
        everyone = spawned is None and np.count_nonzero(active) == capacity
        stepped = active if spawned is None else active & ~spawned
        rows = True if everyone else stepped
        np.add(b.pending_reward, reward, out=b.pending_reward, where=rows)
        if result.group_reward is not None:  # any dtype or shape: broadcast, then rounded
            b.pending_group += np.where(stepped, result.group_reward, 0.0).astype(np.float32)
        counted = 1 if everyone else stepped
        b.since_decision += counted
        limited = b.max_steps > 0
        if limited:  # episode_steps serves only the max_steps limit
            b.episode_steps += counted
        if not everyone:
            terminated = terminated & stepped
        limit = b.episode_steps >= b.max_steps if limited else None
        if result.interrupted is not None:
            flag = np.asarray(result.interrupted, dtype=bool)
            limit = flag if limit is None else limit | flag
        if limit is None:
            # No time limit and no interruption from the author: nothing is truncated.
            cut = None
            done_slots = terminated.nonzero()[0]
        else:
            cut = ~terminated & limit
            if not everyone:
                cut &= stepped
            done_slots = (terminated | cut).nonzero()[0]
        if not done_slots.size:
            return done_slots, None, spawned
        b.episode_steps[done_slots] = 0
        interrupted = np.zeros(done_slots.size, bool) if cut is None else cut[done_slots]
        slots = done_slots  # restarted in slot order, whatever order TerminalSteps shows
        if self._reorder:
            order = self._order_rng.permutation(slots.size)
            slots, interrupted = slots[order], interrupted[order]
        obs = self._observe(b.name, slots)
        reward, group_reward = b.pending_reward[slots], b.pending_group[slots]
        b.pending_reward[slots] = 0  # paid
        b.pending_group[slots] = 0
        ids, group_id = b.ids[slots], b.group_id[slots]
        terminal = TerminalSteps(obs, reward, interrupted, ids, group_id, group_reward)
        return done_slots, terminal, spawned

    def _publish(self, b: BehaviorState, slots: np.ndarray, terminal: TerminalSteps | None) -> None:
        in_order = slots.size == b.capacity and not self._reorder
        if self._reorder and slots.size:
            slots = slots[self._order_rng.permutation(slots.size)]
        obs = self._observe(b.name, slots)
        mask = self._action_mask(b.name, slots)
        if in_order:
            # Every slot decides, in order: copies and fills are several times cheaper than
            # gathers and scatters at large N.
            reward, agent_id = b.pending_reward.copy(), b.ids.copy()
            group_id, group_reward = b.group_id.copy(), b.pending_group.copy()
            b.pending_reward.fill(0)
            b.pending_group.fill(0)
            b.since_decision.fill(0)
        else:
            reward, agent_id = b.pending_reward[slots], b.ids[slots]
            group_id, group_reward = b.group_id[slots], b.pending_group[slots]
            b.pending_reward[slots] = 0
            b.pending_group[slots] = 0
            b.since_decision[slots] = 0
        b.decision_slots = slots
        b.all_decide = in_order
        if terminal is None:
            # A fresh object every step (its arrays, all of size 0, are shared): a consumer
            # that changes one step's TerminalSteps never changes another step's.
            e = b.empty_terminal
            terminal = TerminalSteps(
                list(e.obs), e.reward, e.interrupted, e.agent_id, e.group_id, e.group_reward
            )
        b.steps = (DecisionSteps(obs, reward, agent_id, mask, group_id, group_reward), terminal)

    def _behavior(self, name: BehaviorName) -> BehaviorState:
        return look_up(self._behaviors, name, UnknownBehaviorError, lambda: (
            f"{type(self).__name__} has no behavior {name!r}; behaviors: {list(self._behaviors)}"
        ))  # fmt: skip

    def _check_open(self) -> None:
        if self._closed:
            raise EnvClosedError(f"{type(self).__name__} was used after close()")

    def _check_ready(self, setting: str | None = None) -> None:
        self._check_open()
        if not self._was_reset:
            raise EnvNotResetError(
                f"{type(self).__name__}: call reset() before step(), get_steps() or set_actions()"
            )
        if setting is not None and self._guard.running:
            # Actions set from a hook or a side channel in the middle of a step would change
            # the buffers the running step reads: refused as a re-entrant call.
            self._guard.enter(setting)


def builds_own_steps(core: object) -> bool:
    """Whether ``core`` is a BatchedEnv whose batches its own ``get_steps`` builds: agent ids
    (int32, each once) and per-agent fields need no second check; its hooks' output still does."""
    return isinstance(core, BatchedEnv) and type(core).get_steps is BatchedEnv.get_steps


_MODULE_NAME = re.compile(r"^[a-z][a-z0-9_]*_v\d+$")


@dataclasses.dataclass(frozen=True)
class EnvDeclaration:
    """How a built-in environment is registered: ``pettingzoo_name`` names its PettingZoo
    module ``zooport.adapters.pettingzoo_envs.<name>`` (None: single-agent); ``gym_kwargs``
    make its ``zooport/<Name>-v0`` id serve one agent; ``gym_threshold``: ``expected_reward``
    is that id's ``reward_threshold``; ``agent_counts`` maps a behaviour to the keyword that
    sets its agent count (``num_envs`` of ``gym.make_vec``), ``n_agents`` where unlisted."""

    pettingzoo_name: str | None = None
    gym_kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    gym_threshold: bool = True
    agent_counts: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        name = self.pettingzoo_name
        if name is not None and not (isinstance(name, str) and _MODULE_NAME.match(name)):
            raise ArgumentError(
                f"Expect pettingzoo_name to be None or a module name like 'tag_v0', actually: "
                f"{name!r}"
            )
        # Read-only views: the record is shared by every instance of the class.
        object.__setattr__(self, "gym_kwargs", MappingProxyType(dict(self.gym_kwargs)))
        object.__setattr__(self, "agent_counts", MappingProxyType(dict(self.agent_counts)))

    @property
    def pettingzoo_id(self) -> str | None:
        """``zooport/<name>-v<version>`` (or None)."""
        if self.pettingzoo_name is None:
            return None
        base, _, version = self.pettingzoo_name.rpartition("_v")
        return f"zooport/{base}-v{version}"


class DeclaredEnvClass(Protocol):
    """A built-in environment's class as the registration code reads it (a static type)."""

    declaration: EnvDeclaration
    expected_reward: float
    max_episode_steps: int
