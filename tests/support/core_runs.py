"""Driving a raw core (any BaseEnv) by hand, for the tests of the built-in environments.

Functions:
    random_rollout: seeded random actions for every behaviour; every step's arrays, flat.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["random_rollout"]


def random_rollout(env: Any, n_steps: int, action_seed: int) -> list[np.ndarray]:
    """Steps a reset ``env`` ``n_steps`` times with seeded random actions for every agent
    that decides; returns what every step reported, flattened into one list of arrays
    (per behaviour: the decision and terminal steps' observations, rewards, agent ids,
    group ids and group rewards, and which terminal steps were interrupted)."""
    rng = np.random.default_rng(action_seed)
    record = []
    for _ in range(n_steps):
        for name, spec in env.behavior_specs.items():
            decision, terminal = env.get_steps(name)
            for steps in (decision, terminal):
                record += [*steps.obs, steps.reward, steps.agent_id, steps.group_id]
                record.append(steps.group_reward)
            record.append(terminal.interrupted)
            env.set_actions(name, spec.action_spec.random_action(len(decision), rng))
        env.step()
    return record
