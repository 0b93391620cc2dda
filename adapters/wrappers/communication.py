"""Messages between agents (MATE's communication, made generic): :class:`MessageBus` delivers
what ``send_messages(env, messages)`` sent between two steps in the next step's observations or
infos; the channel wrappers of :mod:`~zooport.adapters.wrappers.channels` filter, drop or delay
them on the way. The outermost layer checks the messages and routes a broadcast to one message
per recipient; a recipient that does not report in the next step loses it, and ``reset`` drops
everything in flight. Randomness comes from each wrapper's own generator, seeded by
``reset(seed=...)``. Delays keep a heap of ``(release_step, sequence, message)``, so messages due
together leave in the order sent (MATE's heap compares messages and crashes there), at that step
even when nobody sends.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from typing_extensions import override

from zooport.adapters.wrappers.base import (
    ActionType,
    ParallelWrapper,
    PartsDelivery,
    check_once,
    get_wrapper,
)
from zooport.errors import (
    ArgumentError,
    ArgumentTypeError,
    SpecError,
    UnknownAgentError,
    ZooportError,
)

__all__ = ["Message", "CommunicationLayer", "MessageBus", "send_messages", "forward_down"]

_KEY = "messages"


@dataclass(frozen=True, eq=False)
class Message:
    """A message from ``sender`` to ``recipient`` (None: every other live agent).

    Messages compare by identity (content may be an array).

    Example:
        >>> Message("runner_0", None, [1.0, 0.0])
        Message(sender='runner_0', recipient=None, content=[1.0, 0.0])
    """

    sender: str
    recipient: str | None
    content: Any


class CommunicationLayer(ParallelWrapper[str, Any, ActionType]):
    """A wrapper that takes messages: the bus, or a channel on their way to it."""

    def send_messages(self, messages: Message | Iterable[Message]) -> None:
        """Checks and routes messages from the user, then takes them (see ``forward``)."""
        raise NotImplementedError

    def forward(self, messages: list[Message]) -> None:
        """Takes messages an outer layer already checked and routed."""
        raise NotImplementedError


class MessageBus(PartsDelivery, CommunicationLayer):
    """Carries messages sent between steps into the next step's observations or infos.

    Args:
        env: any PettingZoo Parallel env.
        delivery: ``"info"`` (default; ``info["messages"]``) or ``"observation"`` (a
            ``"messages"`` key: added to a ``Dict`` observation, else
            ``{"observation": ..., "messages": ...}``).
        content_space: a ``Box`` every message content must fit (shape and dtype); with it
            messages are delivered as a fixed-size encoding, which ``"observation"`` needs:
            ``{"content": (max_messages, *shape), "sender": (max_messages,) int,
            "count": int}``. ``sender`` is 1 + the sender's index in ``possible_agents`` at
            construction (0 = no message); rows past ``count`` are zeros. Without it, the
            info holds a list of :class:`Message`.
        max_messages: rows of the encoding (default: the number of possible agents); more
            messages to one agent in a step are cut to the first ones (counted in
            :attr:`overflowed`).

    Attributes:
        last_observations: the wrapped env's last observations (channels read positions
            from them).
        last_delivered: the messages delivered at the last reset/step, by recipient.
        message_space: the encoding's space (None without ``content_space``).

    Raises:
        WrapperOrderError: ``env`` has a MessageBus already.

    Example:
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.envs.builtin.tag import Tag
        >>> env = MessageBus(PettingZooParallelEnv(Tag(seed=0)))
        >>> _ = env.reset(seed=0)
        >>> env.send_messages(Message("runner_0", None, "hello"))
        >>> _, _, _, _, infos = env.step(dict.fromkeys(env.agents, 0))
        >>> infos["runner_1"]["messages"], infos["runner_0"]["messages"]
        ([Message(sender='runner_0', recipient='runner_1', content='hello')], [])
    """

    def __init__(
        self,
        env: ParallelEnv,
        *,
        delivery: str = "info",
        content_space: spaces.Box | None = None,
        max_messages: int | None = None,
    ) -> None:
        super().__init__(env)
        check_once(self, env)
        delivery = self._checked_delivery(delivery)
        if content_space is not None and not isinstance(content_space, spaces.Box):
            raise ArgumentTypeError(
                f"Expect content_space to be a Box or None, actually: {content_space}"
            )
        if delivery == "observation" and content_space is None:
            raise ArgumentError(
                "MessageBus(delivery='observation') needs content_space= (a Box): observations "
                "hold a fixed-size encoding"
            )
        self.delivery = delivery
        self.content_space = content_space
        self.senders = list(env.possible_agents)
        self._sender_index = {a: i + 1 for i, a in enumerate(self.senders)}
        if max_messages is None:
            max_messages = max(1, len(self.senders))
        if isinstance(max_messages, bool) or not isinstance(max_messages, int) or max_messages < 1:
            raise ArgumentError(
                f"Expect max_messages to be an int >= 1, actually: {max_messages!r}"
            )
        self.max_messages = max_messages
        self.message_space: spaces.Dict | None = None
        if content_space is not None:
            rows = (max_messages, *content_space.shape)
            self.message_space = spaces.Dict(
                {
                    "content": spaces.Box(
                        np.broadcast_to(content_space.low, rows),
                        np.broadcast_to(content_space.high, rows),
                        dtype=content_space.dtype,
                    ),
                    "sender": spaces.MultiDiscrete([len(self.senders) + 1] * max_messages),
                    "count": spaces.Discrete(max_messages + 1),
                }
            )
        self._outbox: list[Message] = []
        self.last_observations: dict[str, Any] = {}
        self.last_delivered: dict[str, list[Message]] = {}
        self.overflowed = 0

    def part_spaces(self, agent: str) -> Mapping[str, spaces.Space]:
        """``{"messages": message_space}`` (with ``delivery="observation"``)."""
        # delivery="observation" requires content_space, so the space exists there.
        return {} if self.message_space is None else {_KEY: self.message_space}

    def route(self, messages: Message | Iterable[Message]) -> list[Message]:
        """Checks messages and expands broadcasts, one message per recipient.

        Raises:
            UnknownAgentError: a sender that is not live, a recipient that is not possible.
            ArgumentError: content that does not fit ``content_space``.
            SpecError: with the encoding, a sender spawned after construction.
        """
        if isinstance(messages, Message):
            messages = (messages,)
        live = self.env.agents
        live_set = set(live)
        possible = set(self.env.possible_agents)
        space = self.content_space
        routed: list[Message] = []
        for message in messages:
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
                        f"construction {self.senders}; {sender!r} is not one of them"
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

    def send_messages(self, messages: Message | Iterable[Message]) -> None:
        """Queues messages for delivery at the next step (see :meth:`route`)."""
        self.forward(self.route(messages))

    def forward(self, messages: list[Message]) -> None:
        """Queues messages already routed by an outer layer."""
        self._outbox.extend(messages)

    def _encode(self, box: list[Message]) -> Any:
        space = self.message_space
        if self.content_space is None or space is None:  # both or neither: no encoding
            return box
        rows = self.max_messages
        content = np.zeros(space["content"].shape or (), dtype=self.content_space.dtype)
        sender = np.zeros(rows, dtype=np.int64)
        if len(box) > rows:
            self.overflowed += len(box) - rows
            box = box[:rows]
        for i, message in enumerate(box):
            content[i] = message.content
            sender[i] = self._sender_index[message.sender]
        return {"content": content, "sender": sender, "count": len(box)}

    def _deliver(
        self, observations: dict[str, Any], infos: dict[str, dict], messages: list[Message]
    ) -> tuple[dict[str, Any], dict[str, dict]]:
        self.last_observations = observations
        inbox: dict[str, list[Message]] = {a: [] for a in observations}
        for message in messages:
            box = inbox.get(message.recipient)  # type: ignore[arg-type]  # routed: a name, not None
            if box is not None:
                box.append(message)
        self.last_delivered = inbox
        parts = {agent: {_KEY: self._encode(box)} for agent, box in inbox.items()}
        return self._with_parts(observations, infos, parts)

    @override
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        self._outbox = []  # messages not delivered before a reset are dropped
        observations, infos = self.env.reset(seed=seed, options=options)
        return self._deliver(observations, infos, [])

    @override
    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        pending, self._outbox = self._outbox, []
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        observations, infos = self._deliver(observations, infos, pending)
        return observations, rewards, terminations, truncations, infos


def forward_down(env: Any, messages: list[Message]) -> None:
    """Hands routed messages to the outermost communication layer of ``env``'s chain."""
    layer = get_wrapper(env, CommunicationLayer)
    if layer is not None:
        layer.forward(messages)


def send_messages(env: Any, messages: Message | Iterable[Message]) -> None:
    """Sends messages through the outermost communication layer of ``env``'s ``.env`` chain.

    Raises:
        ZooportError: the chain holds no :class:`MessageBus`.

    Example:
        >>> from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
        >>> from zooport.adapters.wrappers.episode import TerminationPolicy
        >>> from zooport.envs.builtin.tag import Tag
        >>> env = TerminationPolicy(MessageBus(PettingZooParallelEnv(Tag(seed=0))))
        >>> _ = env.reset(seed=0)
        >>> send_messages(env, Message("tagger_3", "tagger_4", 7))
        >>> _, _, _, _, infos = env.step(dict.fromkeys(env.agents, 0))
        >>> [m.content for m in infos["tagger_4"]["messages"]]
        [7]
    """
    layer = get_wrapper(env, CommunicationLayer)
    if layer is None:
        raise ZooportError(f"{env} has no MessageBus in its .env chain to send messages through")
    layer.send_messages(messages)
