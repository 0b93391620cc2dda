"""The base of zooport's PettingZoo Parallel wrappers (explicit pass-through, one step guard per
chain, a seeded generator per wrapper), and finding a wrapper in a chain.

Why not ``pettingzoo.utils.BaseParallelWrapper``: it forwards every missing attribute through
``__getattr__``, so each ``env.agents`` read in a training loop is a failed lookup per layer
(about 10x slower through three layers), and a wrapper silently answers with inner attributes
its own transformation made wrong. :class:`ParallelWrapper` subclasses ``ParallelEnv`` and
defines every member it passes through; anything else is reached through ``env.unwrapped`` or
:func:`get_wrapper`.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from typing_extensions import override

from zooport.envs.arguments import check_seed
from zooport.envs.step_guard import StepGuard
from zooport.errors import (
    ArgumentError,
    ArgumentTypeError,
    SpecError,
    ZooportError,
)

__all__ = [
    "ActionType",
    "AgentID",
    "ObsType",
    "ParallelWrapper",
    "ObservationMapper",
    "PartsDelivery",
    "RendersAndClosesInner",
    "DELIVERIES",
    "WrapperOrderError",
    "check_once",
    "get_wrapper",
    "has_wrapper",
    "wrapper_chain",
]


# A wrapper's agent, observation and action types, as PettingZoo's ParallelEnv declares them.
AgentID = TypeVar("AgentID")
ObsType = TypeVar("ObsType")
ActionType = TypeVar("ActionType")


class WrapperOrderError(ZooportError, ValueError):
    """A wrapper where it cannot stand (a channel without a bus beneath, a second copy, ...)."""


def wrapper_chain(env: Any) -> Iterator[Any]:
    """``env``, then each layer inside it (its ``.env``, or ``.aec_env`` for PettingZoo's
    ``aec_to_parallel``, which SuperSuit's Parallel wrappers end in), down to the core."""
    for _ in range(1000):  # a cycle of .env references ends here
        if env is None:
            return
        yield env
        inner = getattr(env, "env", None)
        env = getattr(env, "aec_env", None) if inner is None else inner


def get_wrapper(env: Any, cls: type) -> Any | None:
    """The outermost layer of ``env`` that is a ``cls`` (or its gym/vector form), or None.

    Example:
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.envs.builtin.tag import Tag
        >>> inner = ParallelWrapper(PettingZooParallelEnv(Tag(seed=0)))
        >>> get_wrapper(ParallelWrapper(inner), ParallelWrapper).env is inner
        True
    """
    for layer in wrapper_chain(env):
        form_of = getattr(type(layer), "form_of", None)
        if isinstance(layer, cls) or (form_of is not None and issubclass(form_of, cls)):
            return layer
    return None


def has_wrapper(env: Any, cls: type) -> bool:
    """True when ``cls`` (or its gym/vector form) is a layer of ``env``'s ``.env`` chain.

    Example:
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.envs.builtin.tag import Tag
        >>> env = ParallelWrapper(PettingZooParallelEnv(Tag(seed=0)))
        >>> has_wrapper(env, ParallelWrapper), has_wrapper(env.env, ParallelWrapper)
        (True, False)
    """
    return get_wrapper(env, cls) is not None


def check_once(wrapper: Any, env: Any) -> None:
    """Refuses a second ``type(wrapper)`` in ``env``'s chain, for wrappers that make no sense twice.

    Raises:
        WrapperOrderError: ``env`` has one already.
    """
    name = type(wrapper).__name__
    if any(type(layer) is type(wrapper) for layer in wrapper_chain(env)):
        raise WrapperOrderError(f"{name} appears twice: {env} has one already; apply it once")


class RendersAndClosesInner:
    """A mixin for wrappers: ``render()`` and ``close()`` are the wrapped env's (``self.env``)."""

    env: Any

    def render(self) -> Any:
        """The wrapped env's frame."""
        return self.env.render()

    def close(self) -> None:
        """Closes the wrapped env."""
        self.env.close()


class ParallelWrapper(
    RendersAndClosesInner,
    ParallelEnv[AgentID, ObsType, ActionType],
    Generic[AgentID, ObsType, ActionType],
):
    """A PettingZoo Parallel env wrapping another; every member passes through explicitly.

    Subclasses override what they change (``reset``, ``step``, the spaces, ...); a rule
    about their neighbours (a bus beneath, not twice) is a check in their constructor.

    A wrapper is neither re-entrant nor thread-safe. The wrappers of one chain share one
    :class:`~zooport.envs.step_guard.StepGuard`, entered by the layer the user calls (each
    layer's call to the next one in passes straight through): a ``step``/``reset`` entered
    while one runs raises :class:`~zooport.errors.ReentrantCallError`, and an exception after
    the env beneath the chain completed its step (a shaping function, a policy) loses that
    step's outputs, so later steps raise :class:`~zooport.errors.EnvNotResetError` naming it
    until ``reset()``; one raised before (a bad action) changes nothing. Over an env without a
    ``step_guard`` (not zooport's) any exception counts as after. A subclass's own ``step`` and
    ``reset`` are guarded alike.

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

    def __init__(self, env: ParallelEnv) -> None:
        if not isinstance(env, ParallelEnv):
            hint = ""
            if isinstance(env, AECEnv):
                hint = " (convert an AEC env with pettingzoo.utils.aec_to_parallel first)"
            raise ArgumentTypeError(
                f"{type(self).__name__} wraps a PettingZoo ParallelEnv, actually: "
                f"{type(env).__name__}{hint}"
            )
        self.env = env
        self._np_random: np.random.Generator | None = None
        self._seed_salt = zlib.crc32(type(self).__qualname__.encode())
        self._depth = sum(1 for _ in wrapper_chain(env))
        if isinstance(env, ParallelWrapper):  # one guard for the chain
            self.step_guard: StepGuard = env.step_guard
            self._beneath: Any = env._beneath
        else:
            self.step_guard = StepGuard(type(self).__name__)
            self._beneath = env  # whose own step_guard tells whether it stepped

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for call in ("step", "reset"):
            if call in cls.__dict__:
                setattr(cls, call, _guarded(cls.__dict__[call], call))

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
    def agents(self) -> list[AgentID]:
        """The live agents."""
        return self.env.agents

    @property
    def possible_agents(self) -> list[AgentID]:
        """Every agent that may appear."""
        return self.env.possible_agents

    @override
    def observation_space(self, agent: AgentID) -> spaces.Space:
        return self.env.observation_space(agent)

    @override
    def action_space(self, agent: AgentID) -> spaces.Space:
        return self.env.action_space(agent)

    @property
    def observation_spaces(self) -> dict[AgentID, spaces.Space]:
        """``observation_space(agent)`` for every possible agent."""
        return {a: self.observation_space(a) for a in self.possible_agents}

    @property
    def action_spaces(self) -> dict[AgentID, spaces.Space]:
        """``action_space(agent)`` for every possible agent."""
        return {a: self.action_space(a) for a in self.possible_agents}

    @override
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[AgentID, ObsType], dict[AgentID, dict[str, Any]]]:
        return self.env.reset(seed=seed, options=options)

    @override
    def step(self, actions: dict[AgentID, ActionType]) -> tuple[dict, dict, dict, dict, dict]:
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


def _guarded(method: Callable[..., Any], call: str) -> Callable[..., Any]:
    """``method`` (a wrapper's ``step`` or ``reset``) under the chain's guard.

    The layer the user called enters the guard; a call from the running layer to the one it
    wraps, or to ``super()``'s method, passes through. Whether an exception poisons the chain
    is read from the env beneath it: its count of completed calls moved, so it stepped and
    what it reported is lost with the exception.
    """

    @functools.wraps(method)
    def guarded(self: ParallelWrapper, *args: Any, **kwargs: Any) -> Any:
        guard = self.step_guard
        running = guard.layer
        # The running layer calling the one it wraps, or a subclass's method calling super()'s
        # (a re-entrant call reaches type(self)'s own method, refused below).
        if running is not None and (
            running.env is self or (running is self and getattr(type(self), call) is not guarded)
        ):
            guard.layer = self
            try:
                return method(self, *args, **kwargs)
            finally:
                guard.layer = running
        beneath = getattr(self._beneath, "step_guard", None)
        before = beneath.completed if beneath is not None else -1
        guard.owner = type(self).__name__
        guard.enter(call)
        guard.layer = self
        try:
            result = method(self, *args, **kwargs)
        except BaseException as error:
            guard.layer = None
            guard.committed = beneath is None or beneath.completed != before
            guard.abort(error)
            raise
        guard.layer = None
        if call == "step":
            guard.exit()
        else:
            guard.reset_done()
        return result

    return guarded


ParallelWrapper.step = _guarded(ParallelWrapper.step, "step")  # type: ignore[method-assign]
ParallelWrapper.reset = _guarded(ParallelWrapper.reset, "reset")  # type: ignore[method-assign]


class ObservationMapper(ParallelWrapper[str, Any, ActionType]):
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
