"""``zooport serve``'s encoding of a core's steps, read back with the wire's own messages.

No trainer here: ``tests/mlagents/test_serve.py`` runs the server against ML-Agents' side.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from zooport.adapters import mlagents_serve as ms
from zooport.envs import default_registry

pb = pytest.importorskip("zooport.adapters._mlagents_wire_pb2")  # needs the mlagents extra


def test_relay_channels_are_the_four_channels_the_trainer_uses() -> None:
    ids = [str(c.channel_id)[:8] for c in ms.relay_channels()]
    assert ids == ["e951342c", "534c891e", "a1d8f7b7", "60ccf7d0"]


def _read_back(wire: ms._Behavior, decision: Any, terminal: Any) -> list[Any]:
    return list(pb.UnityRLOutputProto.ListAgentInfoProto.FromString(
        wire.write(decision, terminal, reset=False)
    ).value)  # fmt: skip


@pytest.mark.parametrize(("name", "kwargs"), [
    ("BallBalance", {"n_agents": 5}), ("GridWorld", {}), ("Tag", {"max_steps": 8}),
])  # fmt: skip
def test_agent_infos_carry_the_cores_steps(name: str, kwargs: dict[str, Any]) -> None:
    core = default_registry.make(name, seed=0, **kwargs)
    core.reset()
    rng = np.random.default_rng(0)
    wires = {b: ms._Behavior(b, spec, pb, 1) for b, spec in core.behavior_specs.items()}
    terminals = 0
    for _ in range(12):
        for behavior, wire in wires.items():
            decision, terminal = core.get_steps(behavior)
            infos = _read_back(wire, decision, terminal)
            terminals += len(terminal)
            for steps, done in ((terminal, True), (decision, False)):
                if not len(steps):
                    continue
                got, infos = infos[: len(steps)], infos[len(steps) :]
                assert [i.id for i in got] == steps.agent_id.tolist()
                assert [i.done for i in got] == [done] * len(steps)
                assert np.array_equal([i.reward for i in got], np.float32(steps.reward))
                assert [i.group_id for i in got] == np.asarray(steps.group_id).tolist()
                interrupted = steps.interrupted if done else np.zeros(len(steps), bool)
                assert [i.max_step_reached for i in got] == interrupted.tolist()
                for k, obs in enumerate(steps.obs):
                    sent = np.moveaxis(obs, 3, 1) if obs.ndim == 4 else obs  # cameras: C, H, W
                    floats = [i.observations[k].float_data.data for i in got]
                    assert np.array_equal(floats, np.float32(sent).reshape(len(steps), -1))
                mask = None if done else steps.action_mask
                if mask is not None:
                    wanted = np.concatenate(mask, axis=1).tolist()
                    assert [list(i.action_mask) for i in got] == wanted
            assert not infos
            spec = core.behavior_specs[behavior].action_spec
            core.set_actions(behavior, spec.random_action(len(decision), rng))
        core.step()
    core.close()
    assert terminals > 0 or name != "Tag"  # Tag's 8-step episodes end: terminal records too


def test_actions_that_do_not_fit_the_spec_are_an_action_error() -> None:
    core = default_registry.make("BallBalance", n_agents=2, seed=0)
    core.reset()
    wire = ms._Behavior("BallBalance", core.behavior_specs["BallBalance"], pb, 1)
    _read_back(wire, *core.get_steps("BallBalance"))
    message = pb.UnityRLInputProto()
    actions = message.agent_actions["BallBalance"].value
    actions.add(continuous_actions=[0.1, 0.2])
    with pytest.raises(ms.ActionError, match="sent 1 actions for behavior 'BallBalance'"):
        wire.set_actions(core, message.agent_actions)
    actions.add(continuous_actions=[0.3])
    with pytest.raises(ms.ActionError, match=r"continuous_actions of length \[1, 2\]"):
        wire.set_actions(core, message.agent_actions)
    actions[1].continuous_actions.append(0.4)
    wire.set_actions(core, message.agent_actions)
    core.step()
    assert len(core.get_steps("BallBalance")[0]) == 2
    core.close()
