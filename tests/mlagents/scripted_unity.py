"""A Unity simulation without Unity: ML-Agents' MockCommunicator, scripted.

Classes:
    ScriptedCommunicator: ML-Agents' own ``MockCommunicator`` with a scripted simulation:
        observations that change, per-agent rewards, episodes that end (terminated, or
        interrupted through ``max_step_reached``) with a restart in the same step, action
        masks, and a record of every action and side-channel payload Unity would receive.

    ScriptedUnityEnvironment: a real ``UnityEnvironment`` whose communicator is a
        ScriptedCommunicator made from its ``worker_id`` and port (ids ``5 + 10 * worker_id``
        onwards, the port as the ``extra`` observation's marker), which echoes what it receives
        on :data:`ECHO_CHANNEL_ID`: a Unity instance a worker process can build by itself.

Functions:
    build_unity: a real ``UnityEnvironment(file_name=None)`` over a given communicator,
        built by patching ``UnityEnvironment._get_communicator`` for the constructor.

Imported only where ``mlagents_envs`` is installed (see ``conftest.py``).
"""

from __future__ import annotations

import struct
import uuid
import warnings

import numpy as np

# protobuf 3.20's pure-Python descriptors warn (DeprecationWarning) when mlagents_envs'
# generated *_pb2 modules are imported; pytest turns warnings into errors.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from mlagents_envs.communicator_objects.agent_info_pb2 import AgentInfoProto
    from mlagents_envs.communicator_objects.command_pb2 import RESET
    from mlagents_envs.communicator_objects.observation_pb2 import (
        NONE as COMPRESSION_TYPE_NONE,
        ObservationProto,
    )
    from mlagents_envs.communicator_objects.unity_output_pb2 import UnityOutputProto
    from mlagents_envs.communicator_objects.unity_rl_output_pb2 import UnityRLOutputProto
    from mlagents_envs.environment import UnityEnvironment
    from mlagents_envs.mock_communicator import MockCommunicator

__all__ = [
    "BRAIN",
    "ECHO_CHANNEL_ID",
    "ScriptedCommunicator",
    "ScriptedUnityEnvironment",
    "build_unity",
]

BRAIN = "RealFakeBrain"  # MockCommunicator's behaviour name


class ScriptedCommunicator(MockCommunicator):
    """A deterministic simulation behind ML-Agents' ``MockCommunicator`` protocol.

    Agents ``ids`` walk along a line. Discrete (branches 3 and 2, MockCommunicator's):
    ``pos += (a0 - 1) * (1 + a1)``; action 2 of branch 0 is masked at ``pos >= 2`` and
    action 1 of branch 1 for even ids. Continuous (size 2): ``pos += 0.5 a0 + 0.25 a1``.
    Reward ``0.1 pos + 0.01 id``. An agent reaching ``pos >= 3`` is done; one that lived
    ``length + id % 3`` steps is done with ``max_step_reached``; either is restarted at 0
    in the same step (two AgentInfoProtos with its id, as Unity sends). Rows go out in
    descending id order. Two vector observations: ``state`` = (pos, t, id) and
    ``extra`` = (2 pos, marker), ``marker`` 1 by default.
    """

    def __init__(
        self,
        discrete_action: bool,
        num_agents: int = 3,
        *,
        length: int = 4,
        masks: bool = True,
        first_id: int = 5,
        marker: float = 1.0,
    ) -> None:
        super().__init__(discrete_action=discrete_action, num_agents=num_agents)
        self.ids = np.arange(first_id, first_id + num_agents)
        self.length = length
        self.marker = float(marker)
        self.masks = masks and discrete_action
        self.actions: list[dict[int, tuple[list[float], list[int]]]] = []
        self.side_channel_in: list[bytes] = []
        self.side_channel_out = b""  # sent with the next output, then cleared
        self._reset_state()

    def _reset_state(self) -> None:
        self.pos = np.zeros(len(self.ids), np.float32)
        self.t = np.zeros(len(self.ids), np.int64)
        self.done = np.zeros(len(self.ids), bool)
        self.max_step = np.zeros(len(self.ids), bool)
        self.final: tuple[np.ndarray, np.ndarray] | None = None
        self.reward = np.zeros(len(self.ids), np.float32)

    def initialize(self, inputs, poll_callback=None):
        output = super().initialize(inputs, poll_callback)
        capabilities = UnityEnvironment._get_capabilities_proto()
        output.rl_initialization_output.capabilities.CopyFrom(capabilities)
        return output

    def exchange(self, inputs, poll_callback=None):
        rl_input = inputs.rl_input
        self.side_channel_in.append(bytes(rl_input.side_channel))
        if rl_input.command == RESET:
            self._reset_state()
        else:
            received = {
                int(agent_id): (list(a.continuous_actions), list(a.discrete_actions))
                for agent_id, a in zip(
                    self._decision_order(), rl_input.agent_actions[BRAIN].value, strict=False
                )
            }
            self.actions.append(received)
            self._advance(received)
        output = UnityRLOutputProto(
            agentInfos=self._get_agent_infos(), side_channel=self.side_channel_out
        )
        self.side_channel_out = b""
        return UnityOutputProto(rl_output=output)

    def _decision_order(self) -> np.ndarray:
        return self.ids[::-1]

    def _advance(self, received) -> None:
        move = np.zeros(len(self.ids), np.float32)
        for i, agent_id in enumerate(self.ids):
            continuous, discrete = received.get(int(agent_id), ([0.0, 0.0], [1, 0]))
            if self.is_discrete:
                move[i] = (discrete[0] - 1) * (1 + discrete[1])
            else:
                move[i] = 0.5 * continuous[0] + 0.25 * continuous[1]
        self.pos = (self.pos + move).astype(np.float32)
        self.t += 1
        reward = (0.1 * self.pos + 0.01 * self.ids).astype(np.float32)
        goal = self.pos >= 3
        timeout = ~goal & (self.t >= self.length + self.ids % 3)
        self.done = goal | timeout
        self.max_step = timeout
        self.final = (self.pos.copy(), self.t.copy())
        self.reward = reward
        self.pos[self.done] = 0
        self.t[self.done] = 0

    def _observations(self, pos: float, t: float, agent_id: int) -> list:
        state = ObservationProto(
            float_data=ObservationProto.FloatData(data=[pos, t, float(agent_id)]),
            shape=[3],
            compression_type=COMPRESSION_TYPE_NONE,
            name="state",
        )
        extra = ObservationProto(
            float_data=ObservationProto.FloatData(data=[2 * pos, self.marker]),
            shape=[2],
            compression_type=COMPRESSION_TYPE_NONE,
            name="extra",
        )
        return [state, extra]

    def _mask(self, i: int) -> list[bool]:
        if not self.masks:
            return []
        # True = the action is NOT available (what C# sends; ML-Agents keeps the polarity).
        return [False, False, bool(self.pos[i] >= 2), False, bool(self.ids[i] % 2 == 0)]

    def _get_agent_infos(self):
        infos = []
        reward = self.reward
        for i in np.argsort(-self.ids):
            agent_id = int(self.ids[i])
            if self.done[i]:
                pos, t = self.final[0][i], self.final[1][i]
                infos.append(
                    AgentInfoProto(
                        reward=float(reward[i]),
                        done=True,
                        max_step_reached=bool(self.max_step[i]),
                        id=agent_id,
                        observations=self._observations(pos, t, agent_id),
                    )
                )
            infos.append(
                AgentInfoProto(
                    reward=0.0 if self.done[i] else float(reward[i]),
                    done=False,
                    id=agent_id,
                    observations=self._observations(self.pos[i], self.t[i], agent_id),
                    action_mask=self._mask(i),
                )
            )
        self.done[:] = False
        return {BRAIN: UnityRLOutputProto.ListAgentInfoProto(value=infos)}


def build_unity(communicator, side_channels=None) -> UnityEnvironment:
    """A real UnityEnvironment talking to ``communicator`` instead of a Unity process."""
    original = UnityEnvironment._get_communicator
    UnityEnvironment._get_communicator = staticmethod(lambda *args: communicator)
    try:
        with warnings.catch_warnings():
            # mlagents_envs 0.28 compares versions with distutils' StrictVersion.
            warnings.filterwarnings(
                "ignore", "distutils Version classes are deprecated", DeprecationWarning
            )
            return UnityEnvironment(
                file_name=None, worker_id=0, base_port=5004, side_channels=side_channels
            )
    finally:
        UnityEnvironment._get_communicator = original


#: The side channel a ScriptedUnityEnvironment echoes.
ECHO_CHANNEL_ID = uuid.UUID("e0e0e0e0-0000-4000-8000-0000000000ec")


class _EchoingCommunicator(ScriptedCommunicator):
    """Sends back, with each output, what it received on :data:`ECHO_CHANNEL_ID`."""

    def exchange(self, inputs, poll_callback=None):
        received = bytes(inputs.rl_input.side_channel)
        echo = bytearray()
        offset = 0
        while offset < len(received):
            channel_id = uuid.UUID(bytes_le=received[offset : offset + 16])
            (length,) = struct.unpack_from("<i", received, offset + 16)
            end = offset + 20 + length
            if channel_id == ECHO_CHANNEL_ID:
                echo += received[offset:end]
            offset = end
        self.side_channel_out = bytes(echo)
        return super().exchange(inputs, poll_callback)


class ScriptedUnityEnvironment(UnityEnvironment):
    """A real UnityEnvironment over a scripted simulation instead of a Unity process."""

    @staticmethod
    def _get_communicator(worker_id, base_port, timeout_wait):
        return _EchoingCommunicator(
            discrete_action=True, num_agents=3, first_id=5 + 10 * worker_id,
            marker=base_port + worker_id,
        )  # fmt: skip

    def __init__(self, *args, **kwargs):
        with warnings.catch_warnings():
            # mlagents_envs 0.28 compares versions with distutils' StrictVersion.
            warnings.filterwarnings(
                "ignore", "distutils Version classes are deprecated", DeprecationWarning
            )
            super().__init__(*args, **kwargs)
