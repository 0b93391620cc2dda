"""What ML-Agents code does with the core API, and zooport must take as ML-Agents does.

- ``DecisionSteps``/``TerminalSteps`` built from Python lists (``agent_id=list(range(n))``,
  as ML-Agents' own test environments build them) iterate, support ``in``, ``get`` and
  ``[agent_id]``; before, each raised ``AttributeError: 'list' object has no attribute
  'tolist'``.
- ``IncomingMessage`` reads with a ``default_value`` return it at the end of the message as
  ML-Agents documents, ``read_float32_list(default_value=None)`` giving ``[]`` (before, a
  ``TypeError``). The same reads on ML-Agents' own class are compared in
  ``tests/mlagents/test_unity_scenes.py``.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from zooport.envs.base_env import DecisionStep, DecisionSteps, TerminalStep, TerminalSteps
from zooport.envs.side_channel import IncomingMessage, SideChannelTypeError
from zooport.errors import SideChannelError, UnknownAgentError


def _decisions():
    return DecisionSteps(
        obs=[np.arange(6, dtype=np.float32).reshape(3, 2)],
        reward=[0.5, 1.5, 2.5],
        agent_id=[10, 11, 12],
        action_mask=[np.array([[False, True]] * 3)],
        group_id=[0, 1, 1],
        group_reward=[0.0, 0.25, 0.25],
    )


def _terminals():
    return TerminalSteps(
        obs=[[[1.0, 2.0], [3.0, 4.0]]],
        reward=[-1.0, 1.0],
        interrupted=[False, True],
        agent_id=[4, 7],
        group_id=[2, 2],
        group_reward=[0.0, 3.0],
    )


def test_decision_steps_from_lists_iterate_contain_and_index():
    steps = _decisions()
    assert len(steps) == 3
    assert list(steps) == [10, 11, 12]
    assert 11 in steps and 13 not in steps and np.int32(12) in steps and "x" not in steps
    assert steps.agent_id_to_index == {10: 0, 11: 1, 12: 2}
    step = steps[11]
    assert isinstance(step, DecisionStep)
    assert step.obs[0].tolist() == [2.0, 3.0] and step.reward == 1.5 and step.agent_id == 11
    assert step.action_mask[0].tolist() == [False, True]
    assert (step.group_id, step.group_reward) == (1, 0.25)
    assert steps.get(13) is None and steps.get(10).reward == 0.5
    assert dict(steps.items())[12].reward == 2.5
    with pytest.raises(UnknownAgentError, match=r"agent_id 13 is not present .* \[10, 11, 12\]"):
        steps[13]


def test_terminal_steps_from_lists_iterate_contain_and_index():
    steps = _terminals()
    assert list(steps) == [4, 7] and 7 in steps and 5 not in steps
    step = steps[7]
    assert isinstance(step, TerminalStep)
    assert step.obs[0] == [3.0, 4.0] and step.reward == 1.0 and step.interrupted is True
    assert (step.agent_id, step.group_id, step.group_reward) == (7, 2, 3.0)
    with pytest.raises(KeyError):
        steps[5]


def test_steps_from_tuples_and_numpy_scalars():
    steps = DecisionSteps([np.zeros((2, 1))], np.zeros(2), (np.int32(3), np.int32(5)), None,
                          np.zeros(2), np.zeros(2))  # fmt: skip
    assert list(steps) == [3, 5] and all(type(i) is int for i in steps)
    assert steps[5].agent_id == 5


# ------------------------------------------------------------------ IncomingMessage defaults

# read -> (what the payload holds, the value read back)
READS = {
    "read_bool": (struct.pack("<?", True), True),
    "read_int32": (struct.pack("<i", -7), -7),
    "read_float32": (struct.pack("<f", 0.25), 0.25),
    "read_float32_list": (struct.pack("<i2f", 2, 1.0, 2.0), [1.0, 2.0]),
    "read_string": (struct.pack("<i3s", 3, b"abc"), "abc"),
}
DEFAULTS = {
    "read_bool": True,
    "read_int32": 42,
    "read_float32": -1.5,
    "read_float32_list": [9.0],
    "read_string": "none",
}


@pytest.mark.parametrize("read", list(READS))
def test_each_read_returns_its_default_only_at_the_end(read):
    payload, value = READS[read]
    msg = IncomingMessage(payload)
    assert getattr(msg, read)(default_value=DEFAULTS[read]) == value  # present: read
    assert msg.offset == len(payload)
    assert getattr(msg, read)(DEFAULTS[read]) == DEFAULTS[read]  # positional, at the end
    assert getattr(msg, read)(default_value=DEFAULTS[read]) == DEFAULTS[read]
    # ML-Agents: None is returned as given, except for a list, where None means [].
    assert getattr(msg, read)(default_value=None) == ([] if read == "read_float32_list" else None)
    assert msg.offset == len(payload)  # defaults never move the offset
    with pytest.raises(SideChannelError, match="0 remain"):
        getattr(msg, read)()  # no default at the end: zooport's strict read


def test_float_list_default_is_a_fresh_list_and_must_be_a_sequence():
    msg = IncomingMessage(b"")
    first, second = msg.read_float32_list(None), msg.read_float32_list(None)
    first.append(1.0)
    assert second == []
    assert msg.read_float32_list((1.0, 2.0)) == [1.0, 2.0]
    with pytest.raises(SideChannelTypeError, match="a sequence of floats or None, got int"):
        msg.read_float32_list(default_value=5)
