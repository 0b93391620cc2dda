"""Small cores for the multi-agent adapter tests, and a by-hand reference loop.

``Probe`` has two behaviours whose rewards, episode lengths, decision periods, masks and
spawning are set by arguments, so that every adapter output can be computed by hand.
``reference_rollout`` drives a raw core with plain per-agent Python (no adapter code) and
records what a PettingZoo agent should see; the adapter tests compare against it with
``assert_same_trajectory``. The cores' own tests are in ``tests/test_support.py``.

Classes:
    Probe: runners (discrete) and walkers (continuous or hybrid) with hand-computable outputs.
    MaskedProbe: a Probe with action masks on its odd runner slots.

Functions:
    policy: a deterministic consumer action for (behaviour, agent id, step).
    agent_policy: :func:`policy`'s action for an adapter's agent.
    reference_rollout: what each PettingZoo agent should see, from the raw core.
    assert_same_trajectory: an adapter's trajectory equals the reference.

Constants:
    TRAJECTORY_CORES: the cores on which every multi-agent adapter's trajectory must equal
        the reference.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from zooport.envs import BatchedEnv, StepResult
from zooport.envs.base_env import (
    ActionSpec,
    ActionTuple,
    BehaviorSpec,
)
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.builtin.soccer import Soccer
from zooport.envs.builtin.tag import Tag

from tests.support.specs import obs_spec

RUNNER = "Runner?team=0"
WALKER = "Walker"


class Probe(BatchedEnv):
    """Runners (discrete) and walkers (continuous or hybrid) with hand-computable outputs.

    Slot i of a behaviour earns ``base + i`` per step (runners base 1, walkers base 10);
    runners also earn a group reward of 0.5 per step (group id 1; walkers group 0). Slot i
    terminates when its episode reaches ``lengths[i]`` steps (0 = never). The observation is
    ``[steps in the episode, slot, agent id]``. ``applied[b]`` records, per core step, the
    action each slot received (continuous for walkers, discrete for runners). No masks (see
    :class:`MaskedProbe`).
    """

    def __init__(
        self,
        runner_lengths=(0, 0),
        walker_lengths=(0,),
        *,
        runner_period=1,
        walker_period=1,
        branches=(3,),
        hybrid=False,
        spawn_at=0,
        restart=True,
        **kw,
    ):
        super().__init__(**kw)
        obs = obs_spec((3,), "state")
        self.lengths = {}
        self.applied: dict[str, list[np.ndarray]] = {RUNNER: [], WALKER: []}
        self.behaviors = []
        n_r = len(runner_lengths)
        if n_r:
            capacity = n_r + (1 if spawn_at else 0)
            spec = BehaviorSpec([obs], ActionSpec.create_discrete(tuple(branches)))
            self._add_behavior(
                RUNNER, spec, n_r, capacity=capacity, decision_period=runner_period,
                restart_finished=restart, group_id=1,
            )  # fmt: skip
            self.lengths[RUNNER] = np.array([*runner_lengths, 0][:capacity])
            self.behaviors.append(RUNNER)
        if len(walker_lengths):
            action = (
                ActionSpec.create_hybrid(2, (2,)) if hybrid else ActionSpec.create_continuous(2)
            )
            self._add_behavior(
                WALKER, BehaviorSpec([obs], action), len(walker_lengths),
                decision_period=walker_period, restart_finished=restart,
            )  # fmt: skip
            self.lengths[WALKER] = np.array(walker_lengths)
        self.count = {b: np.zeros(len(v), np.float32) for b, v in self.lengths.items()}
        self.spawn_at = spawn_at
        self.t = 0
        self.resets = 0
        self.closed_calls = 0

    def _on_reset(self):
        self.t = 0
        self.resets += 1
        for v in self.applied.values():
            v.clear()

    def _reset_agents(self, behavior, slots):
        self.count[behavior][slots] = 0

    def _step(self, actions):
        self.t += 1
        out = {}
        for b, count in self.count.items():
            a = actions[b]
            self.applied[b].append((a.discrete if b == RUNNER else a.continuous).copy())
            count += 1
            base = 1.0 if b == RUNNER else 10.0
            reward = (base + np.arange(count.size)).astype(np.float32)
            done = (self.lengths[b] > 0) & (count >= self.lengths[b])
            group = np.full(count.size, 0.5 if b == RUNNER else 0.0, np.float32)
            out[b] = StepResult(reward, done, group)
        if self.spawn_at and self.t == self.spawn_at:
            self._spawn(RUNNER, 1)
        return out

    def _observe(self, behavior, slots):
        ids = self._behaviors[behavior].ids[slots]
        return [np.stack([self.count[behavior][slots], slots, ids], axis=1).astype(np.float32)]

    def _render(self):
        return np.full((4, 6, 3), self.t, np.uint8)

    def close(self):
        self.closed_calls += 1
        super().close()


class MaskedProbe(Probe):
    """A Probe whose odd runner slots may not take the last action of the first branch."""

    def _action_mask(self, behavior, slots):
        if behavior != RUNNER:
            return None
        spec = self.behavior_specs[RUNNER].action_spec
        masks = [np.zeros((slots.size, b), bool) for b in spec.discrete_branches]
        masks[0][:, -1] = slots % 2 == 1
        return masks


def policy(behavior: str, agent_id: int, t: int, spec: ActionSpec) -> Any:
    """A deterministic consumer action for (behaviour, agent id, step)."""
    if spec.continuous_size and spec.discrete_size:
        return {
            "continuous": np.array([0.1 * agent_id, -0.05 * t], np.float32),
            "discrete": (agent_id + t) % spec.discrete_branches[0],
        }
    if spec.continuous_size:
        return np.array([0.1 * agent_id, -0.05 * t][: spec.continuous_size], np.float32)
    if len(spec.discrete_branches) == 1:
        return (3 * agent_id + t) % spec.discrete_branches[0]
    return np.array([(agent_id + t + j) % b for j, b in enumerate(spec.discrete_branches)])


def agent_policy(env: Any, agent: str, t: int, specs: Any = None) -> Any:
    """:func:`policy`'s action at step ``t`` for ``agent`` of an adapter or task (its
    ``agent_key``); ``specs`` are the core's behaviour specs (default ``env.core``'s)."""
    key = env.agent_key(agent)
    specs = env.core.behavior_specs if specs is None else specs
    return policy(key.behavior, key.agent_id, t, specs[key.behavior].action_spec)


def _core_row(value: Any, spec: ActionSpec) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(value, dict):
        return np.asarray(value["continuous"], np.float32), np.atleast_1d(value["discrete"])
    if spec.continuous_size:
        return np.asarray(value, np.float32), np.zeros(0, np.int32)
    return np.zeros(0, np.float32), np.atleast_1d(value).astype(np.int32)


def reference_rollout(
    core: Any, seed: int, steps: int, act: Callable[..., Any] = policy
) -> list[dict[tuple[str, int], tuple]]:
    """What each PettingZoo agent should see, from a raw core driven by plain Python.

    Returns one dict per step (the first is the reset) mapping (behaviour, agent id) to
    ``(obs, reward, terminated, truncated, decided)`` for every agent that reports. Agents
    that finished are driven with zero actions; the episode ends when no agent is live
    (termination mode "all", no max_cycles).
    """
    core.reset(seed=seed)
    behaviors = list(core.behavior_specs)
    specs = {b: core.behavior_specs[b].action_spec for b in behaviors}
    last_obs: dict[tuple[str, int], np.ndarray] = {}
    seen: set[tuple[str, int]] = set()
    record = {}
    decisions = {}
    for b in behaviors:
        decision, _ = core.get_steps(b)
        decisions[b] = decision
        for i, agent_id in enumerate(decision.agent_id.tolist()):
            key = (b, agent_id)
            last_obs[key] = decision.obs[0][i].copy()
            seen.add(key)
            record[key] = (last_obs[key], 0.0, False, False, True)
    out = [record]
    for t in range(steps):
        if not last_obs:
            break
        for b in behaviors:
            decision = decisions[b]
            if not len(decision):
                continue
            spec = specs[b]
            cont, disc = [], []
            for agent_id in decision.agent_id.tolist():
                if (b, agent_id) in last_obs:
                    c, d = _core_row(act(b, agent_id, t, spec), spec)
                else:
                    c = np.zeros(spec.continuous_size, np.float32)
                    d = np.zeros(spec.discrete_size, np.int32)
                cont.append(c)
                disc.append(d)
            core.set_actions(
                b,
                ActionTuple(
                    continuous=np.array(cont, np.float32).reshape(len(cont), -1),
                    discrete=np.array(disc, np.int32).reshape(len(disc), -1),
                ),
            )
        live_at_start = list(last_obs)
        while True:
            core.step()
            report = {}
            for b in behaviors:
                decision, terminal = core.get_steps(b)
                decisions[b] = decision
                for i, agent_id in enumerate(terminal.agent_id.tolist()):
                    key = (b, agent_id)
                    if key in last_obs:
                        interrupted = bool(terminal.interrupted[i])
                        report[key] = (
                            terminal.obs[0][i].copy(), float(terminal.reward[i]),
                            not interrupted, interrupted, False,
                        )  # fmt: skip
                        del last_obs[key]
                for i, agent_id in enumerate(decision.agent_id.tolist()):
                    key = (b, agent_id)
                    if key not in seen:  # spawned
                        seen.add(key)
                        last_obs[key] = decision.obs[0][i].copy()
                        live_at_start.append(key)
                    if key in last_obs and key not in report:
                        last_obs[key] = decision.obs[0][i].copy()
                        report[key] = (last_obs[key], float(decision.reward[i]), False, False, True)
            if report:
                break
        record = {}
        for key in live_at_start:
            record[key] = report.get(key, (last_obs.get(key), 0.0, False, False, False))
        out.append(record)
    return out


def assert_same_trajectory(got: list[dict], expected: list[dict]) -> None:
    """An adapter's trajectory (keyed like :func:`reference_rollout`'s) equals the reference."""
    assert len(got) == len(expected)
    for t, (step, ref) in enumerate(zip(got, expected, strict=True)):
        assert list(step) == list(ref) or set(step) == set(ref), f"step {t}: agents differ"
        for key, (obs, reward, terminated, truncated, decided) in ref.items():
            g = step[key]
            assert np.array_equal(g[0], obs), f"step {t} {key}: observation"
            assert (g[1], g[2], g[3], g[4]) == (reward, terminated, truncated, decided), (
                f"step {t} {key}: {g[1:]} != {(reward, terminated, truncated, decided)}"
            )


#: Cores whose trajectory through each multi-agent adapter must equal
#: :func:`reference_rollout`'s: spawning, agents that are not restarted, decision periods,
#: hybrid actions, rows in another order than the ids, one behaviour in two teams.
TRAJECTORY_CORES: dict[str, Callable[[], Any]] = {
    "tag-spawn": lambda: Tag(seed=5, spawn_every=7, max_steps=60, tag_radius=0.3),
    "tag-no-restart": lambda: Tag(
        seed=5, restart_tagged=False, runner_decision_period=3, tag_radius=0.3
    ),
    "ballbalance": lambda: BallBalance(n_agents=5, seed=5, max_steps=40),
    "probe": lambda: Probe((3, 0, 5), (0, 6), walker_period=2, spawn_at=4, max_steps=9),
    "probe-hybrid-reordered": lambda: Probe((3, 0), (4,), hybrid=True, reorder_agents=True, seed=2),
    "soccer-two-teams": lambda: Soccer(seed=5, max_steps=25),
    "soccer-two-teams-reordered": lambda: Soccer(seed=5, max_steps=25, reorder_agents=True),
}
