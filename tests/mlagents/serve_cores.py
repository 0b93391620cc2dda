"""A core for the `zooport serve` tests, which serve it as `path/to/serve_cores.py:Renumbered`."""

from __future__ import annotations

from zooport.envs.base_env import DecisionSteps, TerminalSteps
from zooport.envs.builtin.tag import Tag


class Renumbered(Tag):
    """Tag whose agent ids start at 100 more after each ``reset()``, as a core that numbers
    its agents afresh on reset does (BatchedEnv restarts them at 0)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.resets = 0

    def reset(self, seed=None):
        super().reset(seed)
        self.resets += 1

    def get_steps(self, behavior_name):
        d, t = super().get_steps(behavior_name)
        shift = 100 * self.resets
        return (
            DecisionSteps(d.obs, d.reward, d.agent_id + shift, d.action_mask, d.group_id,
                          d.group_reward),
            TerminalSteps(t.obs, t.reward, t.interrupted, t.agent_id + shift, t.group_id,
                          t.group_reward),
        )  # fmt: skip
