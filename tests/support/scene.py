"""A scripted scene: a BaseEnv that sends exactly the steps a test writes, hostile ones too.

Each frame maps a behaviour to ``(decision, terminal)`` rows: a frame's agent ids, rewards and
group ids are sent as given (repeated ids, float ids, group ids beyond int32), and a behaviour
that first appears in a later frame joins ``behavior_specs`` only then, as a Unity scene may.
``reset()`` shows frame 0, each ``step()`` the next (the last one repeats).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zooport.envs.base_env import ActionSpec, BaseEnv, BehaviorSpec, DecisionSteps, TerminalSteps

from tests.support.specs import obs_spec

__all__ = ["Rows", "Scene", "rows"]

SPEC = BehaviorSpec([obs_spec((2,))], ActionSpec.create_continuous(1))

#: One batch as ``(agent ids, rewards, group ids)``; arrays keep the dtype given.
Rows = tuple[Any, Any, Any]


def rows(ids: Sequence[Any], reward: Any = 0.0, group_id: Any = 0) -> Rows:
    """A batch of ``ids`` (their dtype as given) with one reward and group id for all."""
    ids = np.asarray(ids)
    n = ids.size
    return ids, np.full(n, reward, np.float32), np.full(n, group_id, np.int64)


class Scene(BaseEnv):
    """Plays ``frames``: each ``{behaviour: decision rows}`` or ``{behaviour: (decision
    rows, terminal rows)}``; every behaviour has :data:`SPEC`."""

    seedable = True  # nothing random: every seed gives the same frames

    def __init__(self, frames: Sequence[Mapping[str, Any]]) -> None:
        self.frames = list(frames)
        self.t = 0

    def _frame(self) -> Mapping[str, Any]:
        return self.frames[min(self.t, len(self.frames) - 1)]

    @property
    def behavior_specs(self) -> Mapping[str, BehaviorSpec]:
        seen = [b for frame in self.frames[: self.t + 1] for b in frame]
        return dict.fromkeys(seen, SPEC)

    def reset(self, seed: int | None = None) -> None:
        self.t = 0

    def step(self) -> None:
        self.t += 1

    def close(self) -> None:
        pass

    def set_actions(self, behavior_name: str, action: Any) -> None:
        pass

    def set_action_for_agent(self, behavior_name: str, agent_id: Any, action: Any) -> None:
        pass

    def get_steps(self, behavior_name: str) -> tuple[DecisionSteps, TerminalSteps]:
        entry = self._frame().get(behavior_name, (rows([]), rows([])))
        decision, terminal = entry if len(entry) == 2 else (entry, rows([]))
        ids, reward, group = decision
        obs = [np.stack([reward, np.asarray(ids, np.float32)], axis=1)]
        d = DecisionSteps(obs, reward, ids, None, group, np.zeros(len(ids), np.float32))
        ids, reward, group = terminal
        obs = [np.stack([reward, np.asarray(ids, np.float32)], axis=1)]
        t = TerminalSteps(
            obs, reward, np.zeros(len(ids), bool), ids, group, np.zeros(len(ids), np.float32)
        )
        return d, t
