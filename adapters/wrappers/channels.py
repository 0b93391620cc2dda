"""Channel wrappers: what happens to messages between the sender and the :class:`MessageBus`
beneath them (filtered, dropped, limited by range, silenced, delayed). A message meets the
channels from the outermost inwards, after the outermost layer routed a broadcast to one
message per recipient; see :mod:`zooport.adapters.wrappers.communication` for delivery.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from pettingzoo import ParallelEnv
from typing_extensions import override

from zooport.adapters.wrappers.agents import AgentSelector, AgentSpec
from zooport.adapters.wrappers.base import WrapperOrderError, get_wrapper
from zooport.adapters.wrappers.communication import (
    CommunicationLayer,
    Message,
    MessageBus,
    forward_down,
)
from zooport.errors import ArgumentError, ArgumentTypeError

__all__ = [
    "ExtraCommunicationDelays",
    "MessageChannel",
    "MessageFilter",
    "NoCommunication",
    "RandomMessageDropout",
    "RestrictedCommunicationRange",
]


class MessageChannel(CommunicationLayer):
    """A communication channel: :meth:`transmit` decides which messages pass inwards.

    Subclasses override :meth:`transmit` (a list of routed messages in, the ones that pass
    out). It needs a :class:`MessageBus` beneath it and may appear several times.

    Raises:
        WrapperOrderError: ``env`` has no :class:`MessageBus`.
    """

    def __init__(self, env: ParallelEnv) -> None:
        super().__init__(env)
        bus = get_wrapper(env, MessageBus)
        if bus is None:
            raise WrapperOrderError(
                f"{type(self).__name__} (wrapping {env}) requires a MessageBus beneath it "
                "(earlier in the wrappers list; first = innermost), but there is none"
            )
        self.bus: MessageBus = bus

    def send_messages(self, messages: Message | Iterable[Message]) -> None:
        """Routes messages (see :meth:`MessageBus.route`) and passes them through the channel."""
        self.forward(self.bus.route(messages))

    def forward(self, messages: list[Message]) -> None:
        """Takes messages routed by an outer layer through this channel."""
        kept = self.transmit(list(messages))
        if kept:
            forward_down(self.env, kept)

    def transmit(self, messages: list[Message]) -> list[Message]:
        """The messages that pass (all of them, here)."""
        return messages

    @override
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        self._reseed(seed)
        return self.env.reset(seed=seed, options=options)


class MessageFilter(MessageChannel):
    """Keeps, drops or replaces each message: ``fn(message) -> bool | Message``.

    ``True`` keeps the message, ``False`` drops it, a :class:`Message` replaces it (to add
    channel noise, say). May appear several times.

    Example:
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.envs.builtin.tag import Tag
        >>> bus = MessageBus(PettingZooParallelEnv(Tag(seed=0)))
        >>> env = MessageFilter(bus, lambda m: m.sender.startswith("tagger"))
        >>> _ = env.reset(seed=0)
        >>> env.send_messages([Message("runner_0", "tagger_3", 1),
        ...                    Message("tagger_4", "tagger_3", 2)])
        >>> _ = env.step(dict.fromkeys(env.agents, 0))
        >>> [m.content for m in bus.last_delivered["tagger_3"]]
        [2]
    """

    def __init__(self, env: ParallelEnv, fn: Callable[[Message], bool | Message]) -> None:
        super().__init__(env)
        if not callable(fn):
            raise ArgumentTypeError(
                f"Expect fn to be a callable message -> bool | Message, actually: {fn!r}"
            )
        self.fn = fn

    @override
    def transmit(self, messages: list[Message]) -> list[Message]:
        kept = []
        for message in messages:
            verdict = self.fn(message)
            if verdict is True:
                kept.append(message)
            elif isinstance(verdict, Message):
                kept.append(verdict)
            elif verdict is not False:
                raise ArgumentTypeError(
                    f"MessageFilter: fn({message!r}) returned {verdict!r}; expected True, False "
                    "or a Message"
                )
        return kept


class RandomMessageDropout(MessageChannel):
    """Drops each message (per recipient) with probability ``p``, from its own generator.

    Example:
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.envs.builtin.tag import Tag
        >>> env = RandomMessageDropout(MessageBus(PettingZooParallelEnv(Tag(seed=0))), 1.0)
        >>> _ = env.reset(seed=0)
        >>> env.send_messages(Message("runner_0", None, 1))
        >>> _, _, _, _, infos = env.step(dict.fromkeys(env.agents, 0))
        >>> infos["runner_1"]["messages"]
        []
    """

    def __init__(self, env: ParallelEnv, p: float) -> None:
        super().__init__(env)
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
            raise ArgumentError(f"Expect p to be a probability in [0, 1], actually: {p!r}")
        self.p = float(p)

    @override
    def transmit(self, messages: list[Message]) -> list[Message]:
        if not messages:
            return messages
        keep = self.np_random.random(len(messages)) >= self.p
        return [m for m, k in zip(messages, keep.tolist(), strict=True) if k]


class RestrictedCommunicationRange(MessageChannel):
    """Drops messages between agents farther apart than ``r`` (Euclidean).

    Args:
        env: an env with a :class:`MessageBus` beneath.
        r: the range (> 0).
        position_fn: ``(agent, observation) -> position`` (array-like), called with the
            observation the bus last received for the agent (the wrapped env's own).
            A message whose sender or recipient has no observation is dropped.

    Example:
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.envs.builtin.tag import Tag
        >>> bus = MessageBus(PettingZooParallelEnv(Tag(seed=0)))
        >>> env = RestrictedCommunicationRange(bus, 0.7, lambda agent, obs: obs[:2])
        >>> obs, _ = env.reset(seed=0)
        >>> np.linalg.norm(obs["runner_0"][:2] - obs["runner_1"][:2]).round(2)
        np.float32(0.64)
        >>> env.send_messages(Message("runner_0", None, "near?"))
        >>> _ = env.step(dict.fromkeys(env.agents, 0))
        >>> sorted(a for a, box in bus.last_delivered.items() if box)
        ['runner_1']
    """

    def __init__(self, env: ParallelEnv, r: float, position_fn: Callable[[str, Any], Any]) -> None:
        super().__init__(env)
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not 0 < r < np.inf:
            raise ArgumentError(f"Expect r to be a finite range > 0, actually: {r!r}")
        if not callable(position_fn):
            raise ArgumentTypeError(
                f"Expect position_fn to be a callable (agent, observation) -> position, "
                f"actually: {position_fn!r}"
            )
        self.r = float(r)
        self.position_fn = position_fn

    @override
    def transmit(self, messages: list[Message]) -> list[Message]:
        if not messages:
            return messages
        seen = self.bus.last_observations
        where: dict[str, np.ndarray | None] = {}
        for agent in {m.sender for m in messages} | {_recipient(m) for m in messages}:
            obs = seen.get(agent)
            where[agent] = (
                None if obs is None else np.asarray(self.position_fn(agent, obs), np.float64)
            )
        kept = []
        for message in messages:
            a, b = where[message.sender], where[_recipient(message)]
            if a is not None and b is not None and np.linalg.norm(a - b) <= self.r:
                kept.append(message)
        return kept


class NoCommunication(MessageChannel):
    """Drops every message sent by or to an agent of ``group`` (default: every agent).

    ``group`` selects agents as :class:`~zooport.adapters.wrappers.agents.AgentSelector` does:
    a behaviour or agent-name prefix, a collection of names, or a predicate.

    Example:
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.envs.builtin.tag import Tag
        >>> bus = MessageBus(PettingZooParallelEnv(Tag(seed=0)))
        >>> env = NoCommunication(bus, "runner")
        >>> _ = env.reset(seed=0)
        >>> env.send_messages([Message("tagger_3", None, 0)])
        >>> _ = env.step(dict.fromkeys(env.agents, 0))
        >>> sorted(a for a, box in bus.last_delivered.items() if box)
        ['tagger_4']
    """

    def __init__(self, env: ParallelEnv, group: AgentSpec = None) -> None:
        super().__init__(env)
        self.group = AgentSelector(env, group, "group")

    @override
    def transmit(self, messages: list[Message]) -> list[Message]:
        group = self.group
        return [m for m in messages if not (group(m.sender) or group(_recipient(m)))]


class ExtraCommunicationDelays(MessageChannel):
    """Holds each message ``delay`` extra steps: an int, or ``fn(message, rng) -> int``.

    A message sent before step ``t + 1`` reaches the wrapped env's channels before step
    ``t + 1 + delay`` (delay 0 passes it at once). ``rng`` is this wrapper's generator.
    Messages due at one step leave in the order they were sent, at that step whether or not
    anybody sends.

    Example:
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.envs.builtin.tag import Tag
        >>> bus = MessageBus(PettingZooParallelEnv(Tag(seed=0)))
        >>> env = ExtraCommunicationDelays(bus, 2)
        >>> _ = env.reset(seed=0)
        >>> env.send_messages([Message("runner_0", "runner_1", i) for i in range(3)])
        >>> arrivals = []
        >>> for _ in range(4):
        ...     _ = env.step(dict.fromkeys(env.agents, 0))
        ...     arrivals.append([m.content for m in bus.last_delivered["runner_1"]])
        >>> arrivals
        [[], [], [0, 1, 2], []]
    """

    def __init__(
        self, env: ParallelEnv, delay: int | Callable[[Message, np.random.Generator], int] = 1
    ) -> None:
        super().__init__(env)
        if not callable(delay) and not _is_delay(delay):
            raise ArgumentError(
                f"Expect delay to be an int >= 0 or a callable (message, rng) -> int, "
                f"actually: {delay!r}"
            )
        self.delay = delay
        self._heap: list[tuple[int, int, Message]] = []
        self._clock = 0
        self._sequence = 0

    @property
    def pending(self) -> int:
        """Messages held back."""
        return len(self._heap)

    @override
    def forward(self, messages: list[Message]) -> None:
        now = []
        for message in messages:
            delay = self.delay(message, self.np_random) if callable(self.delay) else self.delay
            if not _is_delay(delay):
                raise ArgumentError(
                    f"ExtraCommunicationDelays: delay({message!r}) returned {delay!r}; "
                    "expected an int >= 0"
                )
            if delay == 0:
                now.append(message)
            else:
                heapq.heappush(self._heap, (self._clock + int(delay), self._sequence, message))
                self._sequence += 1
        if now:
            forward_down(self.env, now)

    @override
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        self._heap = []
        self._clock = 0
        return super().reset(seed=seed, options=options)

    @override
    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        heap, due = self._heap, []
        while heap and heap[0][0] <= self._clock:
            due.append(heapq.heappop(heap)[2])
        if due:
            forward_down(self.env, due)
        result = self.env.step(actions)
        self._clock += 1
        return result


def _is_delay(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and bool(value >= 0)


def _recipient(message: Message) -> str:
    """A routed message's recipient: ``MessageBus.route`` expands broadcasts (None) into one
    message per recipient before any channel sees them."""
    assert message.recipient is not None
    return message.recipient
