"""The driver family's engine (every behaviour of a core as named PettingZoo agents), and the
members its front ends expose over it."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from operator import attrgetter
from typing import Any, NamedTuple, TypeGuard

from gymnasium import spaces

from zooport.adapters.agent_group import AgentGroup, set_default_actions
from zooport.adapters.agent_names import AgentKey, AgentNames
from zooport.adapters.core_access import (
    MAX_IDLE_STEPS,
    EngineMembers,
    adopt_core_with_specs,
    note_core_failure,
)
from zooport.adapters.options import DriverOptions, TerminationMode, finished_needed
from zooport.envs.arguments import check_int
from zooport.envs.base_env import BaseEnvLike
from zooport.envs.capabilities import has_action_masks, reset_core
from zooport.envs.step_guard import StepGuard
from zooport.errors import (
    ActionError,
    ArgumentError,
    EnvClosedError,
    EnvNotResetError,
    SpecError,
    UnknownAgentError,
    ZooportError,
    look_up,
)

__all__ = ["AgentGroup", "AgentsStep", "DriverControls", "MultiAgentDriver"]


class AgentsStep(NamedTuple):
    """One step of every reporting agent: five dicts with the same keys in the same order."""

    observations: dict[str, Any]
    rewards: dict[str, float]
    terminations: dict[str, bool]
    truncations: dict[str, bool]
    infos: dict[str, dict[str, Any]]


class MultiAgentDriver:
    """Drives every behaviour of ``core`` as PettingZoo agents, for the front end ``adapter``."""

    def __init__(
        self,
        core: BaseEnvLike,
        options: DriverOptions = DriverOptions(),  # noqa: B008  # frozen: one shared value
        *,
        adapter: str = "MultiAgentDriver",
    ) -> None:
        core, specs = adopt_core_with_specs(core, adapter)
        self.core, self.adapter, self.options = core, adapter, options
        self.names = AgentNames(list(specs), options.agent_name)
        # Writable: the front ends' setters check them too.
        finished_needed(options.termination_mode, 1)  # a bad mode raises now, not in a step
        self.termination_mode: TerminationMode | str | float = options.termination_mode
        self.max_cycles = _checked_max_cycles(options.max_cycles)
        self.stale_actions = _checked_stale_actions(options.stale_actions)
        # Masks on auto: wherever there are discrete actions, unless the core says it has none.
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
        set_default_actions(self.groups, options.default_action)
        self.possible_agents: list[str] = []
        # The groups' ``live`` flags in ``possible_agents`` order, rebuilt when they change.
        self._agents: list[str] = []
        # Every agent of the episode, live or finished -> its behaviour's group.
        self.agent_groups: dict[str, AgentGroup] = {}
        self.cycles = self.ignored_actions = 0
        # The agents that finished in the last step, and those that joined in it.
        self.finished: list[str] = []
        self.new_agents: list[str] = []
        self.episode_over = True
        self.ready = self._closed = False  # ready: between a reset() and close()
        self.first_counts: list[int] | None = None  # at the first reset: the state's layout
        self.guard = StepGuard(adapter)

    @property
    def agents(self) -> list[str]:
        """The live agents, in ``possible_agents`` order."""
        return list(self._agents)

    def ignore_stale(self, agents: list[str], got: str = "") -> None:
        """Counts the actions of finished ``agents`` as ignored (or refuses them, with ``got``)."""
        if self.stale_actions == "raise":
            raise ActionError(
                f"{self.adapter}: actions for agents that finished earlier in the episode "
                f"{agents} (stale_actions='raise': the only valid action is None){got}; live "
                f"agents: {self.agents}"
            )
        self.ignored_actions += len(agents)

    def group_of(self, agent: str) -> AgentGroup:
        """The group of an agent of the episode (before the first ``reset()``, after one)."""
        self.discover()
        try:
            return self.agent_groups[agent]
        except (KeyError, TypeError):
            raise UnknownAgentError(
                f"{self.adapter}: expected an agent of the episode, got {agent!r}; possible "
                f"agents: {self.possible_agents}"
            ) from None

    def is_live(self, agent: object) -> TypeGuard[str]:
        """True when ``agent`` is live in the current episode."""
        g = self.agent_groups.get(agent)  # type: ignore[call-overload]  # any key may be asked
        return g is not None and self.ready and bool(g.live[g.slot_of[agent]])

    def discover(self) -> None:
        """Resets the core once to learn ``possible_agents`` and the state layout."""
        if self.first_counts is None:
            self.reset()
            self.ready, self._agents = False, []

    def reset(self, seed: int | None = None) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """Resets the core (reseeded with ``seed`` where it can be) and starts an episode."""
        self.check_open()  # the front ends check the seed
        with self.guard.resetting():
            try:
                reset_core(self.core, seed, warn=True)
                self.names.forget()
                for idle in range(MAX_IDLE_STEPS + 1):
                    steps = {g.name: self.core.get_steps(g.name)[0] for g in self.groups}
                    if any(len(d) for d in steps.values()):
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
            self.possible_agents, self.agent_groups = [], {}
            for g in self.groups:
                g.start(steps[g.name], self.names)
                self.possible_agents.extend(g.names)
                self.agent_groups.update(dict.fromkeys(g.names, g))
            self._agents = list(self.possible_agents)
            self.cycles, self.finished, self.new_agents = 0, [], []
            self.episode_over, self.ready = not self._agents, True
            if self.first_counts is None:
                self.first_counts = [g.n for g in self.groups]
            step = self._outputs(self._agents, False)
            return step.observations, step.infos

    def step(self, actions: Mapping[str, Any]) -> AgentsStep:
        """Applies one action per live agent and steps the core until a live agent reports."""
        self.check_running()
        with self.guard.call("step"):
            live, possible, stale = self._agents, self.possible_agents, 0
            # When every live agent decides, a dict of the right size whose lookups all succeed
            # (in gather) has exactly the live agents as keys: no set comparison is needed.
            deciding = sum(len(g.dec_names) for g in self.groups)
            if (
                type(actions) is not dict
                or len(actions) != len(live)
                or (deciding != len(live) and actions.keys() != set(live))
            ):
                actions, stale = self._complete(actions)
            core, groups = self.core, self.groups
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
            everyone = len(live) == len(possible)  # nobody has finished
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
            finished: list[str] = []
            new: list[str] = []
            for g in groups:  # a loop, not comprehensions: each is a call in Python 3.11
                finished += g.finished_names
                new += g.new_names
            # Agents leave only by finishing; while none has, no mode ends the episode.
            n_finished = len(possible) - len(live) + len(finished)
            over = (
                len(live) + len(new) == len(finished)
                or (
                    n_finished > 0
                    and n_finished
                    >= finished_needed(self.termination_mode, len(possible) + len(new))
                )
                or (self.max_cycles is not None and self.cycles >= self.max_cycles)
            )
            if over:
                new = []
                for g in groups:
                    finished += g.end_episode()
            elif new:
                for g in groups:
                    possible.extend(g.new_names)
                    self.agent_groups.update(dict.fromkeys(g.new_names, g))
            self.episode_over, self.finished, self.new_agents = over, finished, new
            step = self._outputs(live + new if new else live, bool(finished))
            if finished or new:
                gone = set(finished)
                self._agents = [a for a in live if a not in gone] + new
            return step

    def _outputs(self, keys: list[str], finished: bool) -> AgentsStep:
        # The reporting agents' dicts in ``agents``' order: copies of one dict, then updated.
        template: dict[str, Any] = dict.fromkeys(keys)
        observations, rewards, infos = template.copy(), template.copy(), template.copy()
        if finished:
            terminations, truncations = template.copy(), template.copy()
        else:
            terminations = dict.fromkeys(keys, False)
            truncations = terminations.copy()
        for g in self.groups:
            names, index = g.reporting()
            if not names:
                continue
            observations.update(zip(names, g.observations(index), strict=True))
            rewards.update(zip(names, g.reward[index].tolist(), strict=True))
            if finished:
                terminations.update(zip(names, g.terminated[index].tolist(), strict=True))
                truncations.update(zip(names, g.truncated[index].tolist(), strict=True))
            infos.update(zip(names, g.infos(index, len(names)), strict=True))
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
        unknown = [a for a in extra if a not in self.agent_groups]  # finished ones are in it
        if unknown:
            raise ActionError(
                f"{self.adapter}: actions for agents that are not in the episode {unknown}; "
                f"live agents: {self.agents}"
            )
        if extra and self.stale_actions == "raise":
            self.ignore_stale(extra)  # raises
        filled = {a: action for a, action in actions.items() if self.is_live(a)}
        for agent in self._agents:
            if agent not in filled and self.agent_groups[agent].default_action is not None:
                filled[agent] = self.agent_groups[agent].default_action
        without = [a for a in self._agents if a not in filled]
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
            self._closed, self.ready = True, False
            self.core.close()

    def check_open(self) -> None:
        """Raises :class:`EnvClosedError` once the adapter was closed."""
        if self._closed:
            raise EnvClosedError(f"{self.adapter} was used after close()")

    def check_running(self) -> None:
        """Raises unless an episode is under way and the core is not stepping."""
        if self.guard.running:
            self.guard.enter("step")  # raises
        if not self.ready:
            self.check_open()
            raise EnvNotResetError(f"{self.adapter}: call reset() before step()")
        if self.episode_over:
            raise EnvNotResetError(
                f"{self.adapter}: the episode is over (after {self.cycles} cycles); call reset()"
            )


def _forward(name: str, check: Callable[[Any], Any] | None = None) -> Any:
    """A front end's property reading its driver's ``name``, written through ``check`` if given."""

    def write(self: DriverControls, value: Any) -> None:
        setattr(self._driver, name, check(value))  # type: ignore[misc]  # only set with a check

    return property(attrgetter(f"_driver.{name}"), write if check else None)


def _checked_max_cycles(value: Any) -> int | None:
    try:
        return None if value is None else check_int(value, "max_cycles", 1, maximum=sys.maxsize)
    except ArgumentError as error:  # check_int's type or range error, saying None is allowed too
        got = f"{type(value).__name__} {value!r}" if isinstance(error, TypeError) else repr(value)
        raise type(error)(f"Expect max_cycles to be None or an int >= 1, actually: {got}") from None


def _checked_stale_actions(value: Any) -> str:
    message = f"Expect stale_actions to be one of ['ignore', 'raise'], actually: {value!r}"
    return look_up({"ignore": "ignore", "raise": "raise"}, value, ArgumentError, lambda: message)


class DriverControls(EngineMembers):
    """The members every front end exposes over its ``MultiAgentDriver`` (``self._driver``)."""

    _driver: MultiAgentDriver
    core: BaseEnvLike

    def _start_driver(self, core: BaseEnvLike, options: DriverOptions) -> None:
        self._driver = self._engine = MultiAgentDriver(core, options, adapter=type(self).__name__)
        self.core = self._driver.core  # an older-API core's wrapper, where it needed one

    @property
    def possible_agents(self) -> list[str]:
        """The agents present at the last ``reset()``, then those spawned since (appended)."""
        self._driver.discover()  # before the first reset(): reset the core once to find them
        return self._driver.possible_agents

    def _agent(self, agent: Any) -> Any:
        return agent

    def observation_space(self, agent: Any) -> spaces.Space:
        """The observation space of ``agent``'s behaviour (one object per behaviour)."""
        return self._driver.group_of(self._agent(agent)).observation_space

    def agent_key(self, agent: Any) -> AgentKey:
        """The (behaviour, agent id) an agent stands for."""
        return self._driver.names.lookup(self._agent(agent))

    def behavior_spaces(self) -> dict[str, tuple[spaces.Space, spaces.Space]]:
        """Each behaviour's (observation space, action space), by behaviour name."""
        return {g.name: (g.observation_space, g.action_space) for g in self._driver.groups}

    @property
    def observation_spaces(self) -> dict[str, spaces.Space]:
        """``observation_space(agent)`` for every possible agent."""
        return {a: self._driver.group_of(a).observation_space for a in self.possible_agents}

    @property
    def action_spaces(self) -> dict[str, spaces.Space]:
        """Each possible agent's action space (one object per behaviour)."""
        return {a: self._driver.group_of(a).action_space for a in self.possible_agents}

    agents = _forward("agents")
    """The live agents, in ``possible_agents`` order."""
    termination_mode = _forward("termination_mode", lambda mode: finished_needed(mode, 1) and mode)
    """The mode that ends an episode once enough of its agents have finished; writable (a bad
    mode raises when set, not in a step)."""
    max_cycles = _forward("max_cycles", _checked_max_cycles)
    """Cycles after which every live agent is truncated (None = no limit); writable."""
    cycles = _forward("cycles")
    """Completed cycles (core steps asked for) in the current episode."""
    stale_actions = _forward("stale_actions", _checked_stale_actions)
    """``"ignore"`` (counted) or ``"raise"``: an action for a finished agent; writable."""
    ignored_actions = _forward("ignored_actions")
    """How many actions for finished agents were ignored since construction."""
