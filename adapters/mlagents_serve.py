"""Any zooport core served to ML-Agents' own trainer: :func:`serve_mlagents` plays the Unity
side of ML-Agents' gRPC protocol (communication version 1.5.0), so ``mlagents-learn`` (PPO, SAC,
MA-POCA, self-play) trains the core as it would a Unity build; ``zooport serve`` is its command
line. It needs the ``mlagents`` extra (grpcio and protobuf), in its own process: the trainer's
venv pins older ones.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from zooport.envs.base_env import ActionTuple, BaseEnvLike, BehaviorSpec
from zooport.envs.pool_worker import RelayChannel
from zooport.envs.side_channel.engine_configuration_channel import ENGINE_CONFIGURATION_CHANNEL_ID
from zooport.envs.side_channel.environment_parameters_channel import (
    ENVIRONMENT_PARAMETERS_CHANNEL_ID,
)
from zooport.envs.side_channel.float_properties_channel import FLOAT_PROPERTIES_CHANNEL_ID
from zooport.envs.side_channel.side_channel_manager import _append_frame, _parse_frames
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
_STEP, _RESET, _QUIT = 0, 1, 2
_CHANNEL_IDS = (
    ENGINE_CONFIGURATION_CHANNEL_ID,
    ENVIRONMENT_PARAMETERS_CHANNEL_ID,
    STATS_SIDE_CHANNEL_ID,
    FLOAT_PROPERTIES_CHANNEL_ID,
)


class _Stop(Exception):
    """SIGTERM arrived: end the session cleanly."""


def relay_channels() -> list[RelayChannel]:
    """The side channels to build a served core with: one relay per channel ML-Agents' trainer
    uses (engine configuration, environment parameters, statistics, float properties), which
    :func:`serve_mlagents` feeds with the trainer's bytes and empties towards it.

    Example:
        >>> [str(c.channel_id)[:8] for c in relay_channels()]
        ['e951342c', '534c891e', 'a1d8f7b7', '60ccf7d0']
    """
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
    """Connects to ``mlagents-learn`` on ``localhost:port`` as its Unity environment and lets
    it drive ``core`` until it closes the connection or sends QUIT, or SIGTERM arrives.

    Agents that decide appear as ML-Agents' non-terminal ``AgentInfoProto`` and those whose
    episode ended as terminal ones (``max_step_reached`` when interrupted), with the core's
    observations (uncompressed floats), action masks, groups and group rewards; the trainer's
    actions come back in the order of the last decision agents. Agent ids survive a forced
    RESET as a Unity agent's do: a core that renumbers its agents on ``reset()`` is mapped
    back onto the ids the trainer knows. The core is neither reset first nor closed.

    Args:
        core: any BaseEnv (a built-in, a ``BatchedEnv``, a ``CorePool``).
        port: the trainer's port: :data:`EDITOR_PORT`, or ``BASE_PORT + worker_id`` as
            ``mlagents-learn --env`` passes it (``--mlagents-port``).
        side_channels: the :func:`relay_channels` the core was built with; without them the
            trainer's side-channel messages are dropped and no statistics reach it.
        timeout: seconds the trainer may take to answer one step before the serve fails.
        wait: seconds to wait for the trainer to listen (None: until it does).
        name: the environment's name, as the trainer logs it.

    Returns:
        The number of RESET and STEP commands served.

    Raises:
        ZooportError: the trainer went away or stopped answering.
        ActionError: the trainer's actions do not fit the behaviour's action spec.
    """
    import grpc

    from zooport.adapters import _mlagents_wire_pb2

    pb: Any = _mlagents_wire_pb2
    session = _Session(core, side_channels, pb)
    channel = grpc.insecure_channel(
        f"localhost:{port}",
        options=[("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)],
    )
    call = channel.unary_unary(
        _EXCHANGE,
        request_serializer=pb.UnityMessageProto.SerializeToString,
        response_deserializer=pb.UnityMessageProto.FromString,
    )

    def exchange(message: Any, deadline: float | None, first: bool = False) -> Any:
        future = call.future(message, timeout=deadline, wait_for_ready=first)
        try:
            return future.result()
        except grpc.RpcError as exc:
            code = exc.code()
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                what = "did not listen" if first else "did not answer"
                raise ZooportError(
                    f"the trainer on localhost:{port} {what} within {deadline} s"
                ) from None
            raise ZooportError(
                f"the trainer on localhost:{port} went away ({code.name}: {exc.details()})"
            ) from None
        finally:
            future.cancel()

    served = 0
    with channel, _stop_on_sigterm():
        try:
            exchange(session.handshake(name), wait, first=True)
            message = exchange(pb.UnityMessageProto(header={"status": 200}), timeout)
            while message.header.status == 200:
                rl_input = message.unity_input.rl_input
                if rl_input.command == _QUIT:
                    break
                answer = session.answer(rl_input)
                served += 1
                message = exchange(answer, timeout)
        except _Stop:
            pass
    return served


@contextlib.contextmanager
def _stop_on_sigterm() -> Iterator[None]:
    """SIGTERM ends the session cleanly (main thread only: elsewhere signals go there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise _Stop

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _Session:
    """The Unity side's state between messages: which behaviours the trainer knows, each
    behaviour's last decision agents and the core-to-wire agent ids."""

    def __init__(self, core: BaseEnvLike, side_channels: Sequence[RelayChannel], pb: Any) -> None:
        self.core, self.pb = core, pb
        self.relays = {channel.channel_id: channel for channel in side_channels}
        self.behaviors = {name: _Behavior(name, spec) for name, spec in core.behavior_specs.items()}

    def handshake(self, name: str) -> Any:
        from zooport import __version__

        capabilities = dict.fromkeys(
            ("baseRLCapabilities", "hybridActions", "trainingAnalytics",
             "variableLengthObservation", "multiAgentGroups"), True,
        )  # fmt: skip
        return self.pb.UnityMessageProto(
            header={"status": 200},
            unity_output={"rl_initialization_output": {
                "name": name, "communication_version": COMMUNICATION_VERSION,
                "package_version": f"zooport {__version__}", "capabilities": capabilities,
            }},
        )  # fmt: skip

    def answer(self, rl_input: Any) -> Any:
        """Runs one RESET or STEP command; returns the message that answers it."""
        if rl_input.side_channel:
            for channel_id, payload in _parse_frames(rl_input.side_channel):
                relay = self.relays.get(channel_id)
                if relay is not None:  # as Unity, ignore channels nobody registered
                    relay.message_queue.append(payload)
        core = self.core
        if rl_input.command == _RESET:
            core.reset()
        else:
            for behavior in self.behaviors.values():
                behavior.set_actions(core, rl_input.agent_actions)
            core.step()
        message = self.pb.UnityMessageProto(header={"status": 200})
        output = message.unity_output
        infos = output.rl_output.agentInfos
        for behavior in self.behaviors.values():
            decision, terminal = core.get_steps(behavior.name)
            if len(decision) + len(terminal) == 0:
                behavior.decision_ids = behavior.decision_ids[:0]
                continue
            behavior.write(infos[behavior.name].value, decision, terminal,
                           rl_input.command == _RESET)  # fmt: skip
            if not behavior.announced:
                behavior.announce(output.rl_initialization_output.brain_parameters.add())
        sent = bytearray()
        for relay in self.relays.values():
            for payload in relay.received:
                _append_frame(sent, relay.channel_id, payload)
            relay.received = []
        output.rl_output.side_channel = bytes(sent)
        return message


class _Behavior:
    """One behaviour's spec as the wire describes it, and its agents between messages."""

    def __init__(self, name: str, spec: BehaviorSpec) -> None:
        self.name, self.spec = name, spec
        self.announced = False
        action = spec.action_spec
        self.continuous, self.branches = action.continuous_size, len(action.discrete_branches)
        self.observations = [
            {"shape": list(o.shape), "dimension_properties": [int(d) for d in o.dimension_property],
             "observation_type": o.observation_type.value, "name": o.name}
            for o in spec.observation_specs
        ]  # fmt: skip
        self.decision_ids = np.zeros(0, np.int64)  # wire ids of the last decision agents
        self.live: dict[int, None] = {}  # wire ids of agents in an episode, in order seen
        self.to_wire: dict[int, int] | None = None  # core id -> wire id; None: the same
        self.top = -1  # the highest wire id sent so far

    def announce(self, brain: Any) -> None:
        """Fills the ``BrainParametersProto`` that tells the trainer this behaviour."""
        action = self.spec.action_spec
        brain.brain_name, brain.is_training = self.name, True
        brain.action_spec.num_continuous_actions = action.continuous_size
        brain.action_spec.num_discrete_actions = self.branches
        brain.action_spec.discrete_branch_sizes.extend(action.discrete_branches)
        self.announced = True

    def set_actions(self, core: BaseEnvLike, agent_actions: Any) -> None:
        """Hands the trainer's actions for the last decision agents to the core."""
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
            rows = [getattr(a, field) for a in actions]
            if any(len(row) != size for row in rows):
                given = sorted({len(row) for row in rows})
                raise ActionError(
                    f"mlagents-learn sent {field} of length {given} for behavior "
                    f"{self.name!r}; expected {size} per agent"
                )
            if size:
                parts[field.split("_")[0]] = np.array(rows, dtype=dtype)
        core.set_actions(self.name, ActionTuple(**parts))

    def write(self, infos: Any, decision: Any, terminal: Any, reset: bool) -> None:
        """Appends an ``AgentInfoProto`` per terminal agent, then per decision agent."""
        check_agent_ids(self.name, decision, terminal)
        if reset:
            self._remap(np.asarray(decision.agent_id))
            self.live = {}
        for steps, done in ((terminal, True), (decision, False)):
            n = len(steps)
            if not n:
                continue
            ids = self._wire_ids(np.asarray(steps.agent_id))
            wire = ids.tolist()
            obs = [np.asarray(o, np.float32).reshape(n, -1).tolist() for o in steps.obs]
            rewards = np.asarray(steps.reward, np.float32).tolist()
            groups = np.asarray(steps.group_id).tolist()
            group_rewards = np.asarray(steps.group_reward, np.float32).tolist()
            if done:
                flags = np.asarray(steps.interrupted, bool).tolist()
                masks = None
                for agent in wire:
                    self.live.pop(agent, None)
            else:
                flags = [False] * n
                mask = steps.action_mask
                masks = None if mask is None else np.concatenate(mask, axis=1).tolist()
                self.decision_ids = ids
                self.live.update(dict.fromkeys(wire))
            observations = self.observations
            for i, agent in enumerate(wire):
                info = infos.add(
                    id=agent, reward=rewards[i], done=done, max_step_reached=flags[i],
                    group_id=groups[i], group_reward=group_rewards[i],
                    action_mask=None if masks is None else masks[i],
                )  # fmt: skip
                for spec, rows in zip(observations, obs, strict=True):
                    info.observations.add(float_data={"data": rows[i]}, **spec)

    def _wire_ids(self, core_ids: np.ndarray) -> np.ndarray:
        """The wire ids of core ids: the same unless a RESET renumbered the core's agents."""
        if self.to_wire is not None:
            to_wire = self.to_wire
            for agent in core_ids.tolist():
                if agent not in to_wire:
                    self.top += 1
                    to_wire[agent] = self.top
            core_ids = np.array([to_wire[a] for a in core_ids.tolist()], np.int64)
        if core_ids.size:
            self.top = max(self.top, int(core_ids.max()))
        return core_ids

    def _remap(self, fresh: np.ndarray) -> None:
        """After a RESET: the core's new decision agents take, in order, the wire ids of the
        agents whose episode was going on, so the trainer sees the same agents go on."""
        pairs = dict(zip(fresh.tolist(), self.live, strict=False))
        if self.to_wire is None and all(core == wire for core, wire in pairs.items()):
            return  # the core kept its ids
        self.to_wire = pairs
