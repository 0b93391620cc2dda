"""The PettingZoo adapters' trajectories equal the raw core driven by hand.

For each core of :data:`~tests.support.probes.TRAJECTORY_CORES` (spawning, agents that are
not restarted, decision periods, hybrid actions, reordered rows, one behaviour in two
teams), the Parallel adapter stepped with :func:`~tests.support.probes.policy`, and the AEC
adapter a cycle at a time, report for every agent exactly what
:func:`~tests.support.probes.reference_rollout` computes from the raw core with plain
per-agent Python: observation, reward, terminated, truncated and whether it decided.
"""

from __future__ import annotations

import pytest

from zooport.adapters.pettingzoo_aec import PettingZooAECEnv
from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv

from tests.support.probes import (
    TRAJECTORY_CORES,
    agent_policy,
    assert_same_trajectory,
    reference_rollout,
)


def parallel_rollout(env, seed, steps):
    """Steps the Parallel adapter with the policy; records what each step reported."""
    obs, infos = env.reset(seed=seed)
    out = [{env.agent_key(a): (obs[a], 0.0, False, False, infos[a]["decided"]) for a in obs}]
    for t in range(steps):
        if not env.agents:
            break
        actions = {agent: agent_policy(env, agent, t) for agent in env.agents}
        obs, rewards, terminated, truncated, infos = env.step(actions)
        out.append(
            {
                env.agent_key(a): (obs[a], rewards[a], terminated[a], truncated[a],
                                   infos[a]["decided"])
                for a in obs
            }
        )  # fmt: skip
    return out


def aec_rollout(env, seed, steps):
    """Drives the AEC adapter a cycle at a time and records what each cycle produced."""
    env.reset(seed=seed)
    out = [
        {env.agent_key(a): (env.observe(a), 0.0, False, False, env.infos[a]["decided"])
         for a in env.agents}
    ]  # fmt: skip
    for t in range(steps):
        while env.agents and (env.terminations[env.agent_selection]
                              or env.truncations[env.agent_selection]):  # fmt: skip
            env.step(None)
        if not env.agents:
            break
        for agent in list(env.agents):
            assert env.agent_selection == agent
            env.step(agent_policy(env, agent, t))
        out.append(
            {
                env.agent_key(a): (env.observe(a), env.rewards[a], env.terminations[a],
                                   env.truncations[a], env.infos[a]["decided"])
                for a in env.agents
            }
        )  # fmt: skip
    return out


ROUTES = {
    "parallel": (PettingZooParallelEnv, parallel_rollout),
    "aec": (PettingZooAECEnv, aec_rollout),
}


@pytest.mark.parametrize("core", list(TRAJECTORY_CORES))
@pytest.mark.parametrize("route", list(ROUTES))
def test_trajectory_equals_the_raw_core_driven_by_hand(route, core):
    adapter, rollout = ROUTES[route]
    make = TRAJECTORY_CORES[core]
    expected = reference_rollout(make(), seed=11, steps=80)
    got = rollout(adapter(make()), seed=11, steps=80)
    assert_same_trajectory(got, expected)
    assert len(got) > 5
