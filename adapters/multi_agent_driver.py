"""The driver family's engine: every behaviour of a core as named PettingZoo agents.

Each behaviour's agents sit in an :class:`AgentGroup` whose ``live`` flags are the one record
of who is live. The driver gathers a dict of actions into one ``set_actions`` per behaviour,
steps the core until a live agent reports, and ends the episode by the termination rule or
``max_cycles``. Agents join ``agents`` when they appear and leave it, never to return within
the episode, in the step they finish; docs/guides/multi-agent.md has the rest.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, NamedTuple, TypeGuard

from zooport.adapters.agent_group import AgentGroup
from zooport.adapters.agent_names import AgentNames
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
from zooport.adapters.options import DriverOptions
from zooport.adapters.termination import TerminationMode, finished_needed
from zooport.envs.arguments import check_seed
from zooport.envs.base_env import (
    BaseEnvLike,
    DecisionSteps,
)
from zooport.envs.capabilities import has_action_masks, reset_core
from zooport.envs.step_guard import StepGuard
from zooport.errors import (
    ActionError,
    EnvClosedError,
    EnvNotResetError,
    SpecError,
    UnknownAgentError,
    ZooportError,
)

__all__ = ["AgentsStep", "MultiAgentDriver"]

_DEFAULT_OPTIONS = DriverOptions()


class AgentsStep(NamedTuple):
    """One step of every reporting agent, five dicts with the same keys in the same order."""

    observations: dict[str, Any]
    rewards: dict[str, float]
    terminations: dict[str, bool]
    truncations: dict[str, bool]
    infos: dict[str, dict[str, Any]]


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
