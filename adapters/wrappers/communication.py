"""Messages between agents (MATE's communication): a bus and channels over it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from zooport.errors import (
    ArgumentError,
    ArgumentTypeError,
    SpecError,
    UnknownAgentError,
    ZooportError,
)

from .base import (
    AgentSelector,
    AgentSpec,
    Infos,
    ParallelWrapper,
    PartsDelivery,
    PerAgent,
    ResetReturn,
    StepReturn,
    WrapperOrderError,
    _chain,
    expect,
    get_wrapper,
)


@dataclass(frozen=True, eq=False)
class Message:
    """A message from ``sender`` to ``recipient`` (None: every other live agent)."""

    sender: str
    recipient: str | None
    content: Any


class CommunicationLayer(ParallelWrapper[str, Any, Any]):
    """A wrapper that takes messages: the bus, or a channel on their way to it."""

    bus: MessageBus

    def send_messages(self, messages: Message | Iterable[Message]) -> None:
        """Checks and routes messages (see :meth:`MessageBus.route`), then takes them."""
        _pass_in(self, self.bus.route(messages))

    def transmit(self, messages: list[Message]) -> list[Message]:
        """The checked and routed ``messages`` this layer passes inwards now."""
        return messages


def _pass_in(env: Any, messages: list[Message]) -> None:
    for layer in _chain(env):  # each communication layer, outermost first, down to the bus
        if messages and isinstance(layer, CommunicationLayer):
            messages = layer.transmit(messages)


def send_messages(env: Any, messages: Message | Iterable[Message]) -> None:
    """Sends messages through the outermost communication layer of ``env``'s ``.env`` chain."""
    layer = get_wrapper(env, CommunicationLayer)
    if layer is None:
        raise ZooportError(f"{env} has no MessageBus in its .env chain to send messages through")
    layer.send_messages(messages)


class MessageBus(PartsDelivery, CommunicationLayer):
    """Delivers messages sent between steps in the next step's infos or observations."""

    def __init__(
        self,
        env: ParallelEnv,
        *,
        delivery: str = "info",
        content_space: spaces.Box | None = None,
        max_messages: int | None = None,
    ) -> None:
        super().__init__(env, delivery)
        ok = content_space is None or isinstance(content_space, spaces.Box)
        expect(ok, "content_space", "a Box or None", content_space, ArgumentTypeError)
        if delivery == "observation" and content_space is None:
            raise ArgumentError(
                "MessageBus(delivery='observation') needs content_space= (a Box): observations "
                "hold a fixed-size encoding"
            )
        self.bus, self.content_space = self, content_space
        self._sender_index = {a: i for i, a in enumerate(env.possible_agents, start=1)}
        max_messages = max(1, len(self._sender_index)) if max_messages is None else max_messages
        ok = isinstance(max_messages, int) and not isinstance(max_messages, bool)
        expect(ok and max_messages >= 1, "max_messages", "an int >= 1", max_messages)
        self.max_messages = max_messages
        self.message_space: spaces.Dict | None = None
        if content_space is not None:
            rows = (max_messages, *content_space.shape)
            low, high = (np.broadcast_to(b, rows) for b in (content_space.low, content_space.high))
            content = spaces.Box(low, high, dtype=content_space.dtype)
            senders = spaces.MultiDiscrete([len(self._sender_index) + 1] * max_messages)
            count = spaces.Discrete(max_messages + 1)
            self.message_space = spaces.Dict(
                {"content": content, "sender": senders, "count": count}
            )
        self._outbox: list[Message] = []
        self.last_observations: dict[str, Any] = {}
        self.last_delivered: dict[str, list[Message]] = {}
        self.overflowed = 0

    def part_spaces(self, agent: str) -> Mapping[str, spaces.Space]:
        return {} if self.message_space is None else {"messages": self.message_space}

    def route(self, messages: Message | Iterable[Message]) -> list[Message]:
        """Checks messages and expands broadcasts, one message per recipient."""
        live = self.env.agents
        live_set, possible = set(live), set(self.env.possible_agents)
        space = self.content_space
        routed: list[Message] = []
        for message in (messages,) if isinstance(messages, Message) else messages:
            if not isinstance(message, Message):
                raise ArgumentTypeError(f"Expect Message objects, actually: {message!r}")
            sender, content = message.sender, message.content
            if sender not in live_set:
                raise UnknownAgentError(
                    f"message sender {sender!r} is not a live agent; live agents: {live}"
                )
            if space is not None:
                if sender not in self._sender_index:
                    raise SpecError(
                        f"the fixed-size encoding numbers senders by the possible agents at "
                        f"construction {list(self._sender_index)}; {sender!r} is not one of them"
                    )
                content = np.array(content, dtype=space.dtype)
                if content.shape != space.shape:
                    raise ArgumentError(
                        f"message from {sender!r}: expected content of shape {space.shape} "
                        f"(content_space {space}), actually: {content.shape}"
                    )
            if message.recipient is None:
                routed.extend(Message(sender, r, content) for r in live if r != sender)
            elif message.recipient not in possible:
                raise UnknownAgentError(
                    f"message recipient {message.recipient!r} is not a possible agent; "
                    f"possible agents: {sorted(possible)}"
                )
            else:
                routed.append(Message(sender, message.recipient, content))
        return routed

    def transmit(self, messages: list[Message]) -> list[Message]:
        self._outbox.extend(messages)
        return []

    def _encode(self, box: list[Message]) -> Any:
        if self.content_space is None or self.message_space is None:
            return box
        content = np.zeros(self.message_space["content"].shape or (), self.content_space.dtype)
        sender = np.zeros(self.max_messages, dtype=np.int64)
        self.overflowed += max(0, len(box) - self.max_messages)
        box = box[: self.max_messages]
        for i, message in enumerate(box):
            content[i] = message.content
            sender[i] = self._sender_index[message.sender]
        return {"content": content, "sender": sender, "count": len(box)}

    def map_step(self, observations: PerAgent, infos: Infos, actions: PerAgent) -> ResetReturn:
        self.last_observations = observations
        inbox: dict[Any, list[Message]] = {a: [] for a in observations}
        for message in self._outbox:
            inbox.get(message.recipient, []).append(message)
        self._outbox, self.last_delivered = [], inbox
        parts = {agent: {"messages": self._encode(box)} for agent, box in inbox.items()}
        return self._with_parts(observations, infos, parts)

    def reset(self, seed: int | None = None, options: dict | None = None) -> ResetReturn:
        self._outbox = []  # messages not delivered before a reset are dropped
        return super().reset(seed=seed, options=options)


class MessageChannel(CommunicationLayer):
    """A channel over a :class:`MessageBus`: :meth:`transmit` decides which messages pass."""

    def __init__(self, env: ParallelEnv) -> None:
        super().__init__(env)
        bus = get_wrapper(env, MessageBus)
        if bus is None:
            raise WrapperOrderError(
                f"{type(self).__name__} (wrapping {env}) requires a MessageBus beneath it "
                "(earlier in the wrappers list; first = innermost), but there is none"
            )
        self.bus = bus


class MessageFilter(MessageChannel):
    """Keeps, drops or replaces each message: ``fn(message)`` gives True, False or a Message."""

    def __init__(self, env: ParallelEnv, fn: Callable[[Message], bool | Message]) -> None:
        super().__init__(env)
        expect(callable(fn), "fn", "a callable message -> bool | Message", fn, ArgumentTypeError)
        self.fn = fn

    def transmit(self, messages: list[Message]) -> list[Message]:
        verdicts = [(message, self.fn(message)) for message in messages]
        for message, verdict in verdicts:
            if verdict is not True and verdict is not False and not isinstance(verdict, Message):
                raise ArgumentTypeError(
                    f"MessageFilter: fn({message!r}) returned {verdict!r}; expected True, False "
                    "or a Message"
                )
        return [message if v is True else v for message, v in verdicts if v is not False]


class RandomMessageDropout(MessageChannel):
    """Drops each message (per recipient) with probability ``p``, from its own generator."""

    def __init__(self, env: ParallelEnv, p: float) -> None:
        super().__init__(env)
        ok = isinstance(p, (int, float)) and not isinstance(p, bool) and 0.0 <= p <= 1.0
        expect(ok, "p", "a probability in [0, 1]", p)
        self.p = float(p)

    def transmit(self, messages: list[Message]) -> list[Message]:
        keep = self.np_random.random(len(messages)) >= self.p
        return [m for m, k in zip(messages, keep, strict=True) if k]


class RestrictedCommunicationRange(MessageChannel):
    """Drops messages between agents farther apart than ``r`` (by ``position_fn``)."""

    def __init__(self, env: ParallelEnv, r: float, position_fn: Callable[[str, Any], Any]) -> None:
        super().__init__(env)
        ok = isinstance(r, (int, float)) and not isinstance(r, bool) and 0 < r < np.inf
        expect(ok, "r", "a finite range > 0", r)
        wanted = "a callable (agent, observation) -> position"
        expect(callable(position_fn), "position_fn", wanted, position_fn, ArgumentTypeError)
        self.r = float(r)
        self.position_fn = position_fn

    def transmit(self, messages: list[Message]) -> list[Message]:
        seen = self.bus.last_observations
        where: dict[Any, Any] = {
            a: np.asarray(self.position_fn(a, seen[a]), np.float64)
            for a in {m.sender for m in messages} | {m.recipient for m in messages}
            if a in seen and seen[a] is not None
        }
        placed = [m for m in messages if m.sender in where and m.recipient in where]
        return [m for m in placed if np.linalg.norm(where[m.sender] - where[m.recipient]) <= self.r]


class NoCommunication(MessageChannel):
    """Drops every message sent by or to an agent of ``group`` (default: every agent)."""

    def __init__(self, env: ParallelEnv, group: AgentSpec = None) -> None:
        super().__init__(env)
        self.group = AgentSelector(env, group, "group")

    def transmit(self, messages: list[Message]) -> list[Message]:
        group = self.group  # a routed message's recipient is a name, not None
        return [m for m in messages if not (group(m.sender) or group(str(m.recipient)))]


#: A delay: an int >= 0, or a callable (message, rng) -> int.
Delay = int | Callable[[Message, np.random.Generator], int]


class ExtraCommunicationDelays(MessageChannel):
    """Holds each message ``delay`` extra steps: an int, or ``fn(message, rng) -> int``."""

    def __init__(self, env: ParallelEnv, delay: Delay = 1) -> None:
        super().__init__(env)
        ok = callable(delay) or _is_delay(delay)
        expect(ok, "delay", "an int >= 0 or a callable (message, rng) -> int", delay)
        self.delay = delay
        self._due: dict[int, list[Message]] = {}  # by step; each list in the order sent
        self._clock = 0

    @property
    def pending(self) -> int:
        return sum(map(len, self._due.values()))

    def transmit(self, messages: list[Message]) -> list[Message]:
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
                self._due.setdefault(self._clock + int(delay), []).append(message)
        return now

    def reset(self, seed: int | None = None, options: dict | None = None) -> ResetReturn:
        self._due, self._clock = {}, 0
        return super().reset(seed=seed, options=options)

    def step(self, actions: dict[str, Any]) -> StepReturn:
        _pass_in(self.env, self._due.pop(self._clock, []))  # every earlier step's are gone
        result = self.env.step(actions)
        self._clock += 1
        return result


def _is_delay(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and bool(value >= 0)
