"""What real Unity scenes do to a real ``mlagents_envs`` 0.28 UnityEnvironment, per adapter.

- Late behaviour specs: a scene whose agents have not requested a decision when it starts
  (``LateCommunicator``: the behaviour's parameters and agents arrive with the first
  exchange) has empty ``behavior_specs`` after construction. Every adapter steps it once, as
  ML-Agents' wrappers do, and then yields exactly what it yields over the same scene with its
  specs known at once; a scene that never reports a behaviour is a SpecError.
- A Unity process that dies or times out mid-step or mid-reset (``DyingCommunicator``): the
  adapter lets ML-Agents' own exception through (the same class, so ML-Agents code keeps
  catching it) with a note naming the adapter and the step.
- ``zooport.envs.exception`` against ``mlagents_envs.exception``: the same names, the same
  hierarchy; ``IncomingMessage`` reads with defaults against ML-Agents' own class.
"""

from __future__ import annotations

import struct
import warnings

import mlagents_envs.exception as ml_exception
import pytest
from gymnasium.utils.env_checker import data_equivalence
from mlagents_envs.side_channel.incoming_message import IncomingMessage as MLIncomingMessage

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from mlagents_envs.communicator_objects.unity_rl_initialization_output_pb2 import (
        UnityRLInitializationOutputProto,
    )

from zooport.envs import exception as zp_exception
from zooport.envs.side_channel import IncomingMessage
from zooport.errors import SpecError

from tests.mlagents.legacy_envs import base_env_module, make_legacy_env
from tests.mlagents.scripted_unity import ScriptedCommunicator
from tests.support.adapters import ADAPTERS
from tests.support.raw_cores import drive


class LateCommunicator(ScriptedCommunicator):
    """No agent has requested a decision when Unity starts: the first output lists the
    behaviour but no agent, so UnityEnvironment has no behaviour specs; the behaviour's
    parameters come again, with its agents, in the first exchange (never, with ``never``)."""

    def __init__(self, *args, never: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.never = never
        self.announced = False

    def initialize(self, inputs, poll_callback=None):
        output = super().initialize(inputs, poll_callback)
        self.brains = list(output.rl_initialization_output.brain_parameters)
        output.rl_output.ClearField("agentInfos")
        return output

    def exchange(self, inputs, poll_callback=None):
        output = super().exchange(inputs, poll_callback)
        if self.never:
            output.rl_output.ClearField("agentInfos")
        elif not self.announced:
            self.announced = True
            output.rl_initialization_output.CopyFrom(
                UnityRLInitializationOutputProto(brain_parameters=self.brains)
            )
        return output


class DyingCommunicator(ScriptedCommunicator):
    """The Unity process hangs (``how="timeout"``) or exits (``how="exit"``: no output,
    which UnityEnvironment reports as ``UnityCommunicatorStoppedException``) at exchange
    number ``die_at``."""

    def __init__(self, *args, die_at: int, how: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.die_at = die_at
        self.how = how
        self.exchanges = 0

    def exchange(self, inputs, poll_callback=None):
        self.exchanges += 1
        if self.exchanges >= self.die_at:
            if self.how == "timeout":
                raise ml_exception.UnityTimeOutException(
                    "The Unity environment took too long to respond."
                )
            return None
        return super().exchange(inputs, poll_callback)


# A Unity build cannot be reseeded; zooport warns once per core type (SB3VecEnv always
# passes a seed to its reset).
pytestmark = pytest.mark.filterwarnings("ignore:.*cannot be reseeded")


# ----------------------------------------------------------------------------- late specs


@pytest.mark.parametrize("adapter", list(ADAPTERS))
def test_every_adapter_steps_a_late_unity_scene_once(make_unity, adapter):
    n, make_adapter, _ = ADAPTERS[adapter]
    late = make_unity(LateCommunicator(True, n, length=5))
    assert not late.behavior_specs  # what ML-Agents' own wrappers step once for
    env = make_adapter(late)
    assert list(late.behavior_specs) == ["RealFakeBrain"]
    expected = drive(make_adapter(make_unity(ScriptedCommunicator(True, n, length=5))), 14,
                     reseed=False)  # fmt: skip
    assert data_equivalence(drive(env, 14, reseed=False), expected)


@pytest.mark.parametrize("adapter", ["GymEnv", "BehaviorVectorEnv", "PettingZooParallelEnv"])
def test_a_unity_scene_without_agents_after_one_step_is_a_spec_error(make_unity, adapter):
    n, make_adapter, _ = ADAPTERS[adapter]
    never = make_unity(LateCommunicator(True, n, never=True))
    with pytest.raises(SpecError, match=f"{adapter}: UnityEnvironment has no behaviors, even "):
        make_adapter(never)


class LateLegacy:
    """An env of an older ML-Agents release (not a zooport BaseEnv) whose behaviour specs
    are empty until its first step, which resets it (as a UnityEnvironment's first step)."""

    def __init__(self, env) -> None:
        self.env = env
        self.started = False

    @property
    def behavior_specs(self):
        if not self.started:
            return {}
        if hasattr(self.env, "behavior_specs"):
            return self.env.behavior_specs
        return {name: self.env.get_behavior_spec(name) for name in self.env.get_behavior_names()}

    def reset(self) -> None:
        self.started = True
        self.env.reset()

    def step(self) -> None:
        if not self.started:
            self.reset()
        else:
            self.env.step()

    def get_steps(self, behavior_name):
        return self.env.get_steps(behavior_name)

    def set_actions(self, behavior_name, action) -> None:
        self.env.set_actions(behavior_name, action)

    def set_action_for_agent(self, behavior_name, agent_id, action) -> None:
        self.env.set_action_for_agent(behavior_name, agent_id, action)

    def close(self) -> None:
        self.env.close()


@pytest.mark.parametrize("adapter", ["BehaviorVectorEnv", "PettingZooParallelEnv"])
@pytest.mark.parametrize("version", ["0.16.1", "0.19.0", "0.22.0", "0.24.0"])
def test_late_specs_of_an_older_mlagents_api_are_adopted_once_they_arrive(version, adapter):
    from zooport.envs.compat import LegacyBaseEnv

    mod = base_env_module(version)
    make_adapter = ADAPTERS[adapter].wrap
    late = LateLegacy(make_legacy_env(mod, True))
    env = make_adapter(late)
    assert isinstance(env.core, LegacyBaseEnv) and env.core.legacy_env is late
    expected = drive(make_adapter(make_legacy_env(mod, True)), 12, reseed=False)
    assert data_equivalence(drive(env, 12, reseed=False), expected)


# ----------------------------------------------------------------------------- process death

DEATHS = {
    "timeout": (ml_exception.UnityTimeOutException, "took too long to respond"),
    "exit": (ml_exception.UnityCommunicatorStoppedException, "Communicator has exited"),
}


@pytest.mark.parametrize("how", list(DEATHS))
@pytest.mark.parametrize("adapter", list(ADAPTERS))
def test_a_unity_process_that_dies_mid_step_is_mlagents_own_error(make_unity, adapter, how):
    n, make_adapter, engine = ADAPTERS[adapter]
    error_type, message = DEATHS[how]
    # Exchange 1 is the first reset; Unity dies at the third exchange, in a step.
    unity = make_unity(DyingCommunicator(True, n, length=50, die_at=3, how=how))
    env = make_adapter(unity)
    with pytest.raises(error_type, match=message) as info:
        drive(env, 10, reseed=False)
    assert type(info.value) is error_type  # ML-Agents' class itself, so its code catches it
    if engine in ("PettingZooParallelEnv", "PettingZooAECEnv", "MultiAgentTask"):
        step = "cycle 2 of the episode"
    else:
        # The vector adapters reset the core to count the slots and again in reset().
        vector = engine in ("BehaviorVectorEnv", "SB3VecEnv")
        step = f"step {1 if vector else 2} after reset"
    assert info.value.__notes__ == [f"zooport: raised by the core ({engine}.step(), {step})"]


@pytest.mark.parametrize("how", list(DEATHS))
@pytest.mark.parametrize("adapter", ["GymEnv", "BehaviorVectorEnv", "PettingZooParallelEnv"])
def test_a_unity_process_that_dies_in_reset_is_mlagents_own_error(make_unity, adapter, how):
    n, make_adapter, _ = ADAPTERS[adapter]
    error_type, message = DEATHS[how]
    unity = make_unity(DyingCommunicator(True, n, die_at=1, how=how))
    with pytest.raises(error_type, match=message) as info:
        drive(make_adapter(unity), 3, reseed=False)
    assert type(info.value) is error_type
    assert info.value.__notes__ == [f"zooport: raised by the core ({adapter}.reset())"]


# ----------------------------------------------------------------------------- ML-Agents' names


def test_exception_names_and_hierarchy_are_mlagents():
    ml_names = sorted(
        name for name, value in vars(ml_exception).items()
        if isinstance(value, type) and issubclass(value, Exception)
    )  # fmt: skip
    assert sorted(zp_exception.__all__) == ml_names
    for name in ml_names:
        ml_class, zp_class = getattr(ml_exception, name), getattr(zp_exception, name)
        assert [b.__name__ for b in zp_class.__bases__] == [b.__name__ for b in ml_class.__bases__]
    for worker in (0, 7):
        assert str(zp_exception.UnityWorkerInUseException(worker)) == str(
            ml_exception.UnityWorkerInUseException(worker)
        )


READS = {
    "read_bool": (struct.pack("<?", True), True),
    "read_int32": (struct.pack("<i", -7), 5),
    "read_float32": (struct.pack("<f", 0.25), -1.5),
    "read_float32_list": (struct.pack("<i2f", 2, 1.0, 2.0), [9.0]),
    "read_string": (struct.pack("<i3s", 3, b"abc"), "none"),
}


@pytest.mark.parametrize("read", list(READS))
def test_reads_with_defaults_behave_as_mlagents(read):
    payload, default = READS[read]
    for value in (default, None):
        ours, theirs = IncomingMessage(payload), MLIncomingMessage(payload)
        assert getattr(ours, read)(default_value=value) == getattr(theirs, read)(
            default_value=value
        )  # the value in the message
        assert getattr(ours, read)(default_value=value) == getattr(theirs, read)(
            default_value=value
        )  # at the end: the default (None, or [] for a list)
        assert getattr(ours, read)(value) == getattr(theirs, read)(value)
        assert ours.offset == theirs.offset == len(payload)
