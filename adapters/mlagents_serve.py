"""Any zooport core served to ML-Agents' own trainer: :func:`serve_mlagents` plays the Unity
side of ML-Agents' gRPC protocol (version 1.5.0), as ``zooport serve`` does. It needs the
``mlagents`` extra (grpcio, protobuf) in its own process: the trainer's venv pins older ones."""

from __future__ import annotations

import itertools
import operator
import signal
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from zooport.envs.base_env import ActionTuple, BaseEnvLike, BehaviorSpec
from zooport.envs.core_pool import CorePool
from zooport.envs.pool_worker import relay_in, relay_out
from zooport.envs.side_channel.engine_configuration_channel import ENGINE_CONFIGURATION_CHANNEL_ID
from zooport.envs.side_channel.environment_parameters_channel import (
    ENVIRONMENT_PARAMETERS_CHANNEL_ID,
)
from zooport.envs.side_channel.float_properties_channel import FLOAT_PROPERTIES_CHANNEL_ID
from zooport.envs.side_channel.raw_bytes_channel import RawBytesChannel as RelayChannel
from zooport.envs.side_channel.stats_side_channel import STATS_SIDE_CHANNEL_ID
from zooport.envs.steps import check_agent_ids
from zooport.errors import ActionError, ZooportError

__all__ = ["serve_mlagents", "relay_channels", "EDITOR_PORT", "BASE_PORT"]

#: The port ``mlagents-learn`` listens on without ``--env`` (Editor mode).
EDITOR_PORT = 5004
#: ``mlagents-learn --env=PATH`` starts worker ``i`` with ``--mlagents-port BASE_PORT + i``.
BASE_PORT = 5005
COMMUNICATION_VERSION = "1.5.0"
_EXCHANGE = "/communicator_objects.UnityToExternalProto/Exchange"
_RESET, _QUIT = 1, 2
_CHANNEL_IDS = (ENGINE_CONFIGURATION_CHANNEL_ID, ENVIRONMENT_PARAMETERS_CHANNEL_ID,
                STATS_SIDE_CHANNEL_ID, FLOAT_PROPERTIES_CHANNEL_ID)  # fmt: skip


class _Stop(Exception):
    pass


def relay_channels() -> list[RelayChannel]:
    """The side channels to build a served core with: a relay per channel the trainer uses."""
    return [RelayChannel(channel_id) for channel_id in _CHANNEL_IDS]


def serve_mlagents(
    core: BaseEnvLike,
    *,
    port: int = EDITOR_PORT,
    side_channels: Sequence[RelayChannel] = (),
    timeout: float = 300.0,
    wait: float | None = None,
    name: str = "zooport",
) -> int:
    """Lets ``mlagents-learn`` on ``localhost:port`` (:data:`EDITOR_PORT`, or ``BASE_PORT +
    worker_id``) drive ``core`` (neither reset first nor closed) as its Unity environment until
    it closes the connection or sends QUIT, or SIGTERM arrives; returns the RESET and STEP
    commands served. A CorePool's cores are training areas; a core that renumbers its agents
    on ``reset()`` is mapped back onto the ids the trainer knows. ``side_channels``: the
    :func:`relay_channels` the core was built with (else no statistics reach the trainer);
    ``timeout`` bounds each answer, ``wait`` the wait for the trainer (None: forever). A
    trainer that goes away or stops answering is a ZooportError; actions that do not fit the
    action spec are an ActionError."""
    import grpc

    from zooport import __version__
    from zooport.adapters import _mlagents_wire_pb2

    pb: Any = _mlagents_wire_pb2
    relays = {channel.channel_id: channel for channel in side_channels}
    cores = core.num_cores if isinstance(core, CorePool) else 1  # K training areas
    behaviors = [_Behavior(b, spec, pb, cores) for b, spec in core.behavior_specs.items()]
    # UnityRLInitializationOutputProto: name, versions, capabilities (fields 1, 4-7 true: base RL,
    # hybrid actions, training analytics, variable-length observations, multi-agent groups).
    init = _field(1, name.encode()) + _field(2, COMMUNICATION_VERSION.encode())
    init += _field(7, f"zooport {__version__}".encode())
    init += _field(8, b"\x08\x01\x20\x01\x28\x01\x30\x01\x38\x01")
    handshake = _STATUS_200 + _field(2, _field(2, init))
    # No message size limits. Waiting for the trainer: try every second (grpc backs off up to
    # 2 minutes, and mlagents-learn gives up after its --timeout-wait, 60 s).
    options = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1),
               ("grpc.initial_reconnect_backoff_ms", 250),
               ("grpc.max_reconnect_backoff_ms", 1000)]  # fmt: skip
    channel = grpc.insecure_channel(f"localhost:{port}", options=options)
    # No request serializer: the messages go out as bytes, built by hand.
    call = channel.unary_unary(_EXCHANGE, response_deserializer=pb.UnityMessageProto.FromString)

    def exchange(message: Any, deadline: float | None, first: bool = False) -> Any:
        try:  # a blocking call: grpc checks for signals (SIGTERM) while it waits
            return call(message, timeout=deadline, wait_for_ready=first)
        except grpc.RpcError as exc:
            code, trainer = exc.code(), f"the trainer on localhost:{port}"
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                what = "did not listen" if first else "did not answer"
                raise ZooportError(f"{trainer} {what} within {deadline} s") from None
            raise ZooportError(f"{trainer} went away ({code.name}: {exc.details()})") from None

    served = 0
    with channel:
        # SIGTERM ends the session cleanly; signals reach the main thread only.
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGTERM, _stop) if main else None
        try:
            exchange(handshake, wait, first=True)
            message = exchange(_STATUS_200, timeout)
            while message.header.status == 200:
                rl_input = message.unity_input.rl_input
                if rl_input.command == _QUIT:
                    break
                served += 1
                relay_in(relays, rl_input.side_channel)
                if rl_input.command == _RESET:
                    core.reset()
                else:
                    for behavior in behaviors:
                        behavior.set_actions(core, rl_input.agent_actions)
                    core.step()
                infos, brains = bytearray(), bytearray()
                for behavior in behaviors:
                    decision, terminal = core.get_steps(behavior.name)
                    if len(decision) + len(terminal) == 0:
                        behavior.decision_ids = behavior.decision_ids[:0]
                        continue
                    agents = behavior.write(decision, terminal, rl_input.command == _RESET)
                    infos += _field(2, _field(1, behavior.name.encode()) + _field(2, agents))
                    brains += behavior.brain  # the spec goes out with the first agents only
                    behavior.brain = b""
                output = _field(1, bytes(infos + _field(3, relay_out(relays))))
                if brains:
                    output += _field(2, bytes(brains))
                message = exchange(_STATUS_200 + _field(2, output), timeout)
        except _Stop:
            pass
        finally:
            if main:
                signal.signal(signal.SIGTERM, previous)
    return served


def _stop(signum: int, frame: Any) -> None:
    raise _Stop


class _Behavior:
    """One behaviour's spec on the wire, and its agents between messages."""

    def __init__(self, name: str, spec: BehaviorSpec, pb: Any, cores: int) -> None:
        self.name, self.cores = name, cores
        action = spec.action_spec
        self.continuous, self.branches = action.continuous_size, len(action.discrete_branches)
        brain = pb.BrainParametersProto(brain_name=name, is_training=True, action_spec={
            "num_continuous_actions": self.continuous, "num_discrete_actions": self.branches,
            "discrete_branch_sizes": action.discrete_branches,
        })  # fmt: skip
        self.brain = _field(5, brain.SerializeToString())  # UnityRLInitializationOutputProto's
        self.observations = []  # per observation: its bytes up to the floats, their size, a camera?
        for o in spec.observation_specs:
            # A camera goes out channel first, (H, W, C) -> (C, H, W), as a Unity build sends
            # it (com.unity.ml-agents 3): the only visual layout mlagents-learn has encoders for.
            image, size = len(o.shape) == 3, 4 * int(np.prod(o.shape))
            order = (2, 0, 1) if image else range(len(o.shape))
            proto = pb.ObservationProto(
                shape=[o.shape[i] for i in order],
                dimension_properties=[int(o.dimension_property[i]) for i in order],
                observation_type=o.observation_type.value,
                name=o.name,
            )
            # Then float_data (field 4): a FloatData whose packed floats (field 1) follow.
            floats = b"\x0a" + _varint(size)
            head = proto.SerializeToString() + b"\x22" + _varint(len(floats) + size) + floats
            self.observations.append((b"\x6a" + _varint(len(head) + size) + head, size, image))
        self.decision_ids = np.zeros(0, np.int64)  # wire ids of the last decision agents
        self.live: dict[int, None] = {}  # wire ids of agents in an episode, in order seen
        self.to_wire: dict[int, int] | None = None  # core id -> wire id; None: the same
        self.top = -1  # the highest wire id sent so far
        # Per record layout: its bytes with the tags in place, and where each value goes (a
        # fast path: building them each step costs about 4% of an answered step at N=64).
        self.layouts: dict[tuple[bool, int], tuple[np.ndarray, list[slice]]] = {}

    def set_actions(self, core: BaseEnvLike, agent_actions: Any) -> None:
        n = len(self.decision_ids)
        if not n or self.name not in agent_actions:
            return
        actions = agent_actions[self.name].value
        if len(actions) != n:
            raise ActionError(
                f"mlagents-learn sent {len(actions)} actions for behavior {self.name!r}; "
                f"expected one per decision agent, {n}"
            )
        parts: dict[str, np.ndarray] = {}
        for field, size, dtype in (("continuous_actions", self.continuous, np.float32),
                                   ("discrete_actions", self.branches, np.int32)):  # fmt: skip
            rows = list(map(operator.attrgetter(field), actions))
            if any(length != size for length in map(len, rows)):
                raise ActionError(
                    f"mlagents-learn sent {field} of length {sorted(set(map(len, rows)))} for "
                    f"behavior {self.name!r}; expected {size} per agent"
                )
            if size:
                flat = np.fromiter(itertools.chain.from_iterable(rows), dtype, n * size)
                parts[field.split("_")[0]] = flat.reshape(n, size)
        core.set_actions(self.name, ActionTuple(**parts))

    def write(self, decision: Any, terminal: Any, reset: bool) -> bytes:
        """A ``ListAgentInfoProto``'s bytes: a record per terminal, then per decision agent."""
        check_agent_ids(self.name, decision, terminal)
        if reset:
            # The core's new decision agents take, in order, the wire ids of the agents whose
            # episode was going on, so the trainer sees the same agents go on.
            pairs = dict(zip(np.asarray(decision.agent_id).tolist(), self.live, strict=False))
            if self.to_wire is not None or any(core != wire for core, wire in pairs.items()):
                self.to_wire = pairs  # else the core kept its ids
            self.live = {}
        out = b""
        for steps, done in ((terminal, True), (decision, False)):
            n = len(steps)
            if not n:
                continue
            ids = np.asarray(steps.agent_id)
            if self.to_wire is not None:  # a RESET renumbered the core's agents
                for agent in ids.tolist():  # a new agent takes the next wire id
                    self.top = max(self.top, self.to_wire.setdefault(agent, self.top + 1))
                ids = np.array([self.to_wire[a] for a in ids.tolist()], np.int64)
            self.top = max(self.top, int(ids.max()))
            if done:
                for agent in ids.tolist():
                    self.live.pop(agent, None)
                flags, mask = np.asarray(steps.interrupted), None
            else:
                self.decision_ids = ids
                self.live.update(dict.fromkeys(ids.tolist()))
                flags, mask = np.zeros(n, bool), steps.action_mask
            groups = np.asarray(steps.group_id, np.int64)
            if self.cores > 1:  # group g > 0 of core i goes out as (g - 1) * K + i + 1, as a
                # Unity scene's group ids are unique across its areas (0: none)
                core = np.asarray(steps.agent_id, np.int64) % self.cores  # pool id a * K + i
                groups = np.where(groups > 0, (groups - 1) * self.cores + core + 1, groups)
            # A record: its length, then each value after its tag (done, field 8, goes before
            # max_step_reached's tag); the tags are the same bytes in every row.
            pieces: list[Any] = [
                b"\x3d", _raw(steps.reward, "<f4", n), b"\x40" + bytes([done]) + b"\x48",
                _raw(flags, "u1", n), b"\x50", _varints(ids), b"\x70", _varints(groups),
                b"\x7d", _raw(steps.group_reward, "<f4", n),
            ]  # fmt: skip
            width = 0 if mask is None else sum(m.shape[1] for m in mask)
            if mask is not None and width:
                pieces += [b"\x5a" + _varint(width), _raw(np.concatenate(mask, axis=1), "u1", n)]
            for (head, size, image), o in zip(self.observations, steps.obs, strict=True):
                o = np.moveaxis(np.asarray(o), 3, 1) if image else o
                pieces += [head, _raw(o, "<f4", n).reshape(n, size)]
            values = pieces[1::2]
            if (done, width) not in self.layouts:
                heads = pieces[::2]
                body = sum(map(len, heads)) + sum(value.shape[1] for value in values)
                row, slots = bytearray(b"\x0a" + _varint(body)), []
                for head, value in zip(heads, values, strict=True):
                    row += head
                    slots.append(slice(len(row), len(row) + value.shape[1]))
                    row += bytes(value.shape[1])
                self.layouts[done, width] = (np.frombuffer(bytes(row), np.uint8), slots)
            template, slots = self.layouts[done, width]
            records = np.empty((n, template.size), np.uint8)
            records[:] = template
            for at, value in zip(slots, values, strict=True):
                records[:, at] = value
            out += records.tobytes()
        return out


_STATUS_200 = b"\x0a\x03\x08\xc8\x01"  # UnityMessageProto.header = {status: 200}


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes(out) + bytes([value])


def _field(number: int, payload: bytes) -> bytes:  # a message, string or bytes field
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _raw(values: Any, dtype: str, n: int) -> np.ndarray:  # one row of bytes per agent
    return np.ascontiguousarray(np.asarray(values).reshape(n, -1), dtype).view(np.uint8)


def _varints(values: Any) -> np.ndarray:
    """int32s as 10-byte varints (negative ones sign-extended, as protobuf encodes them)."""
    unsigned = np.asarray(values, np.int64).view(np.uint64)[:, None]
    groups = (unsigned >> (np.arange(10, dtype=np.uint64) * np.uint64(7))) & np.uint64(0x7F)
    groups[:, :9] |= np.uint64(0x80)
    return groups.astype(np.uint8)
