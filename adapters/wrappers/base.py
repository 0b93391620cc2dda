"""The base of every zooport PettingZoo Parallel wrapper, and agent selection helpers.

Classes:
    ParallelWrapper: a ``pettingzoo.ParallelEnv`` around another one, with explicit pass-through
        members (no ``__getattr__`` forwarding), composition rules as class attributes and a
        per-wrapper random generator seeded from ``reset(seed=...)``.
    ObservationMapper: a ``ParallelWrapper`` that changes observations only (one hook).
    RendersAndClosesInner: a mixin whose ``render`` and ``close`` are the wrapped env's.
    PartsDelivery: a mixin for wrappers that add named parts to each observation or info.
    AgentSelector: which agents a wrapper acts on: all, a collection of names, a behaviour
        (team) name or a predicate.
    Teams: groups agents into teams (by behaviour by default).

Functions:
    inner_env: the env one layer inside a wrapper (its ``.env``; from
        :mod:`~zooport.adapters.wrappers.placement`, re-exported).
    behavior_of: an agent's behaviour (a zooport core's behaviour name, otherwise the part of
        the agent name before its last ``_``).

Why not ``pettingzoo.utils.BaseParallelWrapper``: it forwards every missing public attribute
through ``__getattr__``. ``ParallelEnv`` only *annotates* ``agents``, ``possible_agents`` and
``metadata``, so with that base each ``env.agents`` read in a training loop is a failed
lookup plus a ``__getattr__`` call per layer (about 10x slower through three layers), and a
wrapper silently answers with inner attributes that its own transformation made wrong (an
inner ``observation_spaces`` dict, say). :class:`ParallelWrapper` subclasses ``ParallelEnv``
directly and defines every member it passes through; anything else is reached explicitly,
through ``env.unwrapped`` or :func:`~zooport.adapters.wrappers.composition.get_wrapper`.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable, Collection, Hashable, Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from typing_extensions import override

from zooport.adapters.agent_names import behavior_prefix
from zooport.adapters.wrappers.placement import check_placement, inner_env, wrapper_chain
from zooport.envs.arguments import check_seed
from zooport.envs.step_guard import StepGuard
from zooport.errors import ArgumentError, ArgumentTypeError, SpecError, UnknownAgentError, look_up

__all__ = [
    "ParallelWrapper",
    "ObservationMapper",
    "PartsDelivery",
    "RendersAndClosesInner",
    "DELIVERIES",
    "AgentSelector",
    "Teams",
    "behavior_of",
    "inner_env",
]

#: An agent selection: None (every agent), a behaviour/team name, names, or a predicate.
AgentSpec = str | Collection[str] | Callable[[str], bool] | None


class RendersAndClosesInner:
    """A mixin for wrappers: ``render()`` and ``close()`` are the wrapped env's (``self.env``)."""

    env: Any

    def render(self) -> Any:
        """The wrapped env's frame."""
        return self.env.render()

    def close(self) -> None:
        """Closes the wrapped env."""
        self.env.close()


class ParallelWrapper(RendersAndClosesInner, ParallelEnv[str, Any, Any]):
    """A PettingZoo Parallel env wrapping another; every member passes through explicitly.

    Subclasses override what they change (``reset``, ``step``, the spaces, ...) and declare
    their composition rules, which
    :func:`~zooport.adapters.wrappers.composition.validate_wrappers` checks centrally:

    Attributes:
        requires: wrapper classes one of which must be beneath this one (applied earlier).
        forbids: wrapper classes that must not be beneath this one.
        unique: True when the wrapper may appear only once in a chain.
        forms: the wrapper's equivalent for other env kinds (``"gym"``, ``"vector"``), used
            by ``zooport.make`` for ``api="gym"``/``"vector"``; empty for parallel-only ones.
        accepts, produces: the env kind wrapped and the kind given (``"parallel"`` for all
            but ``SingleAgentView``, which produces ``"gym"``).
        env: the wrapped env.

    The constructor checks the rules against the wrappers already in ``env``'s ``.env``
    chain (through the same central validator), so a hand-built chain is held to them too.

    Every ``step`` and ``reset`` (a subclass's own included, guarded when the class is
    created) refuses re-entry (:class:`~zooport.errors.ReentrantCallError`: a policy or a
    callback calling the env it runs in). A step that raises after the wrapped env completed
    its step (the wrapper's own code, a shaping function, a policy) has lost that step's
    outputs, so later steps raise :class:`~zooport.errors.EnvNotResetError` naming the error
    until ``reset()``; one that raises before (a bad action) changes nothing. Over an env
    without a ``step_guard`` (not zooport's) any exception counts as after. A wrapper is not
    thread-safe.

    Example:
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.envs.builtin.tag import Tag
        >>> env = ParallelWrapper(PettingZooParallelEnv(Tag(seed=0)))
        >>> env.possible_agents[:2], env.unwrapped is env.env
        (['runner_0', 'runner_1'], True)
        >>> env.core
        Traceback (most recent call last):
        ...
        AttributeError: 'ParallelWrapper' object has no attribute 'core'
    """

    requires: ClassVar[tuple[type, ...]] = ()
    forbids: ClassVar[tuple[type, ...]] = ()
    unique: ClassVar[bool] = False
    forms: ClassVar[Mapping[str, Callable[..., Any]]] = {}
    accepts: ClassVar[str] = "parallel"
    produces: ClassVar[str] = "parallel"

    def __init__(self, env: ParallelEnv) -> None:
        if not isinstance(env, ParallelEnv):
            hint = ""
            if isinstance(env, AECEnv):
                hint = " (convert an AEC env with pettingzoo.utils.aec_to_parallel first)"
            raise ArgumentTypeError(
                f"{type(self).__name__} wraps a PettingZoo ParallelEnv, actually: "
                f"{type(env).__name__}{hint}"
            )
        check_placement(type(self), env)
        self.env = env
        self._np_random: np.random.Generator | None = None
        self._seed_salt = zlib.crc32(type(self).__qualname__.encode())
        self._depth = sum(1 for _ in wrapper_chain(env))
        self._guard = StepGuard(type(self).__name__)
        # The class whose guarded step/reset is running (a subclass's may call super()'s).
        self._guard_entry: type | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for call in ("step", "reset"):
            method = cls.__dict__.get(call)
            if method is not None and not getattr(method, "_zooport_guarded", False):
                setattr(cls, call, _guarded(method, call, cls))

    @property
    def step_guard(self) -> StepGuard:
        """This wrapper's re-entry and failure state (see :mod:`zooport.envs.step_guard`)."""
        return self._guard

    # ------------------------------------------------------------------ pass-through

    @property
    def metadata(self) -> dict[str, Any]:
        """The wrapped env's metadata."""
        return self.env.metadata

    @property
    def render_mode(self) -> str | None:
        """The wrapped env's render mode."""
        return getattr(self.env, "render_mode", None)

    @property
    def agents(self) -> list[str]:
        """The live agents."""
        return self.env.agents

    @property
    def possible_agents(self) -> list[str]:
        """Every agent that may appear."""
        return self.env.possible_agents

    @override
    def observation_space(self, agent: str) -> spaces.Space:
        return self.env.observation_space(agent)

    @override
    def action_space(self, agent: str) -> spaces.Space:
        return self.env.action_space(agent)

    @property
    def observation_spaces(self) -> dict[str, spaces.Space]:
        """``observation_space(agent)`` for every possible agent."""
        return {a: self.observation_space(a) for a in self.possible_agents}

    @property
    def action_spaces(self) -> dict[str, spaces.Space]:
        """``action_space(agent)`` for every possible agent."""
        return {a: self.action_space(a) for a in self.possible_agents}

    @override
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        return self.env.reset(seed=seed, options=options)

    @override
    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        return self.env.step(actions)

    @override
    def state(self) -> np.ndarray:
        return self.env.state()

    @property
    def state_space(self) -> spaces.Space:
        """The wrapped env's ``state_space`` (AttributeError where it has none)."""
        return self.env.state_space

    @property
    @override
    def unwrapped(self) -> ParallelEnv:
        return self.env.unwrapped

    def __str__(self) -> str:
        return f"{type(self).__name__}<{self.env}>"

    def __repr__(self) -> str:
        return str(self)

    # ------------------------------------------------------------------ randomness

    @property
    def np_random(self) -> np.random.Generator:
        """This wrapper's own generator; the wrapped env's is never used.

        ``reset(seed=s)`` reseeds it from ``s``, the wrapper's class and its depth in the
        chain (so two stacked wrappers draw different streams); before any seed it comes
        from fresh entropy.
        """
        if self._np_random is None:
            self._reseed(None)
        return self._np_random  # type: ignore[return-value]  # _reseed set it

    def _reseed(self, seed: int | None) -> None:
        """Reseeds :attr:`np_random` when ``seed`` is given (or it was never made)."""
        seed = check_seed(seed, f"{type(self).__name__}.reset")
        if seed is not None or self._np_random is None:
            sequence = np.random.SeedSequence(seed, spawn_key=(self._seed_salt, self._depth))
            self._np_random = np.random.default_rng(sequence)


def _guarded(method: Callable[..., Any], call: str, owner: type) -> Callable[..., Any]:
    """``method`` (a wrapper's ``step`` or ``reset``) inside the wrapper's :class:`StepGuard`.

    Whether an exception poisons the wrapper is read from the wrapped env's guard: its count
    of completed calls moved, so the wrapped env stepped (or reset) and what it reported is
    lost with the exception.
    """
    finish = StepGuard.exit if call == "step" else StepGuard.reset_done

    @functools.wraps(method)
    def guarded(self: ParallelWrapper, *args: Any, **kwargs: Any) -> Any:
        guard = self._guard
        if guard.running == call and self._guard_entry is not owner:
            return method(self, *args, **kwargs)  # a subclass's call to super()'s method
        inner = getattr(self.env, "step_guard", None)
        before = inner.completed if inner is not None else -1
        guard.enter(call)
        self._guard_entry = owner
        try:
            result = method(self, *args, **kwargs)
        except BaseException as error:
            self._guard_entry = None
            guard.committed = inner is None or inner.completed != before
            guard.abort(error)
            raise
        self._guard_entry = None
        finish(guard)
        return result

    guarded._zooport_guarded = True  # type: ignore[attr-defined]  # a marker on the function
    return guarded


# The base class's own pass-through step and reset (__init_subclass__ guards subclasses').
ParallelWrapper.step = _guarded(ParallelWrapper.step, "step", ParallelWrapper)  # type: ignore[method-assign]
ParallelWrapper.reset = _guarded(ParallelWrapper.reset, "reset", ParallelWrapper)  # type: ignore[method-assign]


class ObservationMapper(ParallelWrapper):
    """A wrapper that changes the observations only: ``reset`` and ``step`` pass every other
    value through and hand the observations to :meth:`map_observations`, the one hook."""

    def map_observations(self, observations: dict[str, Any]) -> dict[str, Any]:
        """The observations the wrapper gives for the wrapped env's ``observations``."""
        raise NotImplementedError

    @override
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        observations, infos = self.env.reset(seed=seed, options=options)
        return self.map_observations(observations), infos

    @override
    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        return self.map_observations(observations), rewards, terminations, truncations, infos


#: Where :class:`PartsDelivery` wrappers put their parts.
DELIVERIES = ("observation", "info")


class PartsDelivery:
    """For wrappers that add named parts (messages, a global state, ...) to what an agent sees.

    With ``delivery="observation"`` the observation becomes a ``Dict`` holding the parts
    (``{"observation": obs, **parts}``, or the observation's own keys and the parts where it is
    a ``Dict`` already), and so does its space; with ``"info"`` the parts go to the agent's
    info and the space is the wrapped env's. A subclass sets ``delivery`` (checked by
    :meth:`_checked_delivery`) and gives :meth:`part_spaces`.
    """

    env: ParallelEnv
    delivery: str

    def part_spaces(self, agent: str) -> Mapping[str, spaces.Space]:
        """The spaces of the parts ``agent`` receives, by key."""
        raise NotImplementedError

    def _checked_delivery(self, delivery: Any) -> str:
        if not isinstance(delivery, str) or delivery not in DELIVERIES:
            raise ArgumentError(
                f"Expect delivery to be one of {list(DELIVERIES)}, actually: {delivery!r}"
            )
        return delivery

    def observation_space(self, agent: str) -> spaces.Space:
        """The wrapped env's observation space, with the parts where they are delivered so.

        Computed once per agent (spaces are static).

        Raises:
            SpecError: a part's key is already a key of the agent's observation.
        """
        cache: dict[str, spaces.Space] = self.__dict__.setdefault("_delivered_spaces", {})
        space = cache.get(agent)
        if space is None:
            space = self.env.observation_space(agent)
            if self.delivery == "observation":
                own = {"observation": space}
                if isinstance(space, spaces.Dict):
                    own = dict(space.spaces)
                parts = self.part_spaces(agent)
                clash = [k for k in parts if k in own]
                if clash:
                    raise SpecError(
                        f"{type(self).__name__}: agent {agent!r}'s observation already has "
                        f"keys {clash}; use delivery='info'"
                    )
                space = spaces.Dict({**own, **parts})
            cache[agent] = space
        return space

    def _with_parts(
        self,
        observations: dict[str, Any],
        infos: dict[str, dict[str, Any]],
        parts: Mapping[str, Mapping[str, Any]],
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """The step's observations and infos with each agent's ``parts[agent]`` delivered.

        The wrapped env's dicts are not changed: what changes is a new dict.
        """
        if self.delivery == "info":
            infos = dict(infos)
            for agent, extra in parts.items():
                infos[agent] = {**infos.get(agent, {}), **extra}
            return observations, infos
        delivered = {}
        for agent, obs in observations.items():
            extra = parts[agent]
            delivered[agent] = (
                {**obs, **extra} if isinstance(obs, dict) else {"observation": obs, **extra}
            )
        return delivered, infos


def behavior_of(env: Any, agent: str) -> str:
    """The behaviour of ``agent``: its zooport behaviour name, else its name before the last ``_``.

    Example:
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.envs.builtin.tag import Tag
        >>> behavior_of(PettingZooParallelEnv(Tag(seed=0)), "tagger_3")
        'Tagger?team=1'
        >>> behavior_of(None, "adversary_0"), behavior_of(None, "solo")
        ('adversary', 'solo')
    """
    behavior = _known_behavior(env, agent)
    if behavior is not None:
        return behavior
    head, sep, _ = agent.rpartition("_")
    return head if sep and head else agent


def _known_behavior(env: Any, agent: str) -> str | None:
    """``agent``'s behaviour as its zooport adapter knows it; None without one that does."""
    key_of = getattr(getattr(env, "unwrapped", None), "agent_key", None)
    if callable(key_of):
        try:
            return key_of(agent).behavior
        except KeyError:  # UnknownAgentError: a name the adapter does not know
            pass
    return None


class AgentSelector:
    """Decides, once per agent, whether a wrapper acts on it.

    Args:
        env: the env the agents belong to (for zooport behaviour names).
        spec: None (every agent); a str: a behaviour with its query string
            (``"Soccer?team=1"``: that behaviour only), an agent-name prefix
            (``"soccer_team1"``), or a behaviour name without query string, compared
            sanitised (``"tagger"``, ``"Soccer"``: every team of it); a collection of agent
            names; or a predicate ``agent -> bool``.
        what: the argument's name, for error messages.

    Example:
        >>> select = AgentSelector(None, "hunter")
        >>> select("hunter_0"), select("prey_1")
        (True, False)
        >>> AgentSelector(None, ["prey_1"])("prey_1")
        True
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.envs.builtin.soccer import Soccer
        >>> env = PettingZooParallelEnv(Soccer(seed=0))
        >>> [a for a in env.possible_agents if AgentSelector(env, "Soccer?team=1")(a)]
        ['soccer_team1_2', 'soccer_team1_3']
        >>> [a for a in env.possible_agents if AgentSelector(env, "soccer")(a)]
        ['soccer_team0_0', 'soccer_team0_1', 'soccer_team1_2', 'soccer_team1_3']
    """

    def __init__(self, env: Any, spec: AgentSpec, what: str = "agents") -> None:
        self.env = env
        self.spec = spec
        self._cache: dict[str, bool] = {}
        if spec is None:
            self._test: Callable[[str], bool] = _always
        elif isinstance(spec, str):
            self._test = functools.partial(_selected_by_name, env, spec)
        elif callable(spec):
            self._test = spec
        elif isinstance(spec, Collection) and all(isinstance(a, str) for a in spec):
            names = frozenset(spec)
            self._test = names.__contains__
        else:
            raise ArgumentTypeError(
                f"Expect {what} to be None, a behaviour name, a collection of agent names or "
                f"a callable agent -> bool, actually: {spec!r}"
            )

    def __call__(self, agent: str) -> bool:
        try:
            return self._cache[agent]
        except KeyError:
            chosen = self._cache[agent] = bool(self._test(agent))
            return chosen


def _always(agent: str) -> bool:
    return True


# The agent tests and team maps below are classes, not closures, so that wrappers holding
# them pickle with the standard library (a local lambda does not).


class _BehaviorOf:
    """``agent -> its behaviour`` (see :func:`behavior_of`): the default teams."""

    def __init__(self, env: Any) -> None:
        self.env = env

    def __call__(self, agent: str) -> Hashable:
        return behavior_of(self.env, agent)


class _TeamTable:
    """``agent -> team`` from a mapping; an agent in no team is an UnknownAgentError (a
    KeyError) naming them."""

    def __init__(self, table: Mapping[str, Hashable]) -> None:
        self.table = dict(table)

    def __call__(self, agent: str) -> Hashable:
        return look_up(self.table, agent, UnknownAgentError, lambda: (
            f"agent {agent!r} is in no team; teams given for {sorted(self.table)}"
        ))  # fmt: skip


def _selected_by_name(env: Any, spec: str, agent: str) -> bool:
    """Whether ``spec`` (see :class:`AgentSelector`) names ``agent``'s behaviour or prefix."""
    known = _known_behavior(env, agent)
    behavior = behavior_of(env, agent) if known is None else known
    if behavior == spec or agent.rpartition("_")[0] == spec:
        return True
    if known is not None and "?" in spec:
        # With its query string a behaviour is one team: "Soccer?team=0" is not "Soccer?team=1".
        return False
    return behavior_prefix(behavior) == behavior_prefix(spec)


class Teams:
    """Maps agents to teams: by behaviour (default), a mapping or a callable.

    Args:
        env: the env the agents belong to.
        teams: None (each behaviour is a team, see :func:`behavior_of`), a mapping
            ``agent -> team`` or a callable ``agent -> team``.

    Example:
        >>> teams = Teams(None)
        >>> teams.group(["hunter_0", "prey_0", "hunter_1"])
        {'hunter': ['hunter_0', 'hunter_1'], 'prey': ['prey_0']}
    """

    def __init__(
        self, env: Any, teams: Mapping[str, Hashable] | Callable[[str], Hashable] | None = None
    ) -> None:
        if teams is None:
            self._team_of: Callable[[str], Hashable] = _BehaviorOf(env)
        elif isinstance(teams, Mapping):
            self._team_of = _TeamTable(teams)
        elif callable(teams):
            self._team_of = teams
        else:
            raise ArgumentTypeError(
                f"Expect teams to be None, a mapping agent -> team or a callable, actually: "
                f"{teams!r}"
            )
        self._cache: dict[str, Hashable] = {}

    def __call__(self, agent: str) -> Hashable:
        try:
            return self._cache[agent]
        except KeyError:
            team = self._cache[agent] = self._team_of(agent)
            return team

    def group(self, agents: Collection[str]) -> dict[Hashable, list[str]]:
        """``{team: [agents, in the given order]}``, teams in order of first appearance."""
        groups: dict[Hashable, list[str]] = {}
        for agent in agents:
            groups.setdefault(self(agent), []).append(agent)
        return groups
