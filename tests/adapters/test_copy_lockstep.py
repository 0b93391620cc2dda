"""Every adapter and wrapper, copied, continues in lockstep with the original (issue 13).

Each env is copied by stdlib ``pickle``, ``cloudpickle`` and ``copy.deepcopy``, before its
first reset, right after a reset and in the middle of an episode (for AEC, in the middle of
a cycle), and then the original and the copy are driven with the same actions: every
observation, reward, flag and info must be equal, step after step, across episode ends and
resets. A copy that shares state with its original (a buffer, a core) or that lost a link
between its own buffers (the PettingZoo adapters used to double-count rewards: AgentGroup's
step outputs were views that a copy turned into arrays nobody cleared) drifts and fails.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

import zooport
from zooport.adapters import (
    BehaviorVectorEnv,
    GymEnv,
    GymTask,
    MultiAgentTask,
    PettingZooAECEnv,
    PettingZooParallelEnv,
    PettingZooTask,
)
from zooport.adapters.pettingzoo_envs import collector_v0, tag_v0
from zooport.adapters.sb3_vec_env import SB3VecEnv
from zooport.adapters.wrappers import (
    CentralisedObservation,
    DiscretizeActions,
    ExtraCommunicationDelays,
    FoldAgents,
    IndividualDone,
    Message,
    MessageBus,
    MessageFilter,
    NoCommunication,
    RandomMessageDropout,
    RescaleObservations,
    RestrictedCommunicationRange,
    RewardShaping,
    SharedVisibility,
    SingleAgentView,
    TeamReward,
    TerminationPolicy,
    WrapperSpec,
    get_wrapper,
    send_messages,
)
from zooport.adapters.wrappers.action import GymDiscretizeActions, VectorDiscretizeActions
from zooport.adapters.wrappers.communication import CommunicationLayer
from zooport.adapters.wrappers.observation import (
    GymRescaleObservations,
    VectorRescaleObservations,
)
from zooport.envs.builtin import BallBalance, Basic, Collector, GridWorld, Tag

from tests.support.branches import Branches
from tests.support.wrappers import Scouts, random_action

STEPS = 16  # steps after the copy: episodes end and restart within it (max_cycles, tags)
WARMUP = 5  # steps before a mid-episode copy


def by_pickle(env: Any) -> Any:
    return pickle.loads(pickle.dumps(env))


def by_cloudpickle(env: Any) -> Any:
    return cloudpickle.loads(cloudpickle.dumps(env))


COPIES = {"pickle": by_pickle, "cloudpickle": by_cloudpickle, "deepcopy": copy.deepcopy}


def plain(data: Any) -> Any:
    """Data with messages as tuples (a Message compares by identity) for comparison."""
    if isinstance(data, Message):
        return ("message", data.sender, data.recipient, plain(data.content))
    if isinstance(data, dict):
        return {k: plain(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return (
            type(data)(plain(v) for v in data)
            if not hasattr(data, "_fields")
            else tuple(plain(v) for v in data)
        )
    return data


# ---------------------------------------------------------------------- drivers
#
# A driver resets and steps one kind of env with actions drawn from a generator it is given;
# it resets by itself when the episode ends (with a seed drawn from the same generator), so
# that the original and the copy, driven with equal generators, must report equal data.


class Driver:
    """Resets with a seed drawn from the generator; ``step`` resets by itself once the
    episode is ``over``, and otherwise ``act``s (the one hook each kind of env fills in)."""

    def reset(self, env: Any, rng: np.random.Generator) -> Any:
        return env.reset(seed=_seed(rng))

    def over(self, env: Any) -> bool:
        return not env.agents

    def step(self, env: Any, rng: np.random.Generator) -> Any:
        if self.over(env):
            return ("reset", self.reset(env, rng))
        return self.act(env, rng)

    def act(self, env: Any, rng: np.random.Generator) -> Any:
        raise NotImplementedError


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(1_000))


class GymDriver(Driver):
    def reset(self, env, rng):
        self.ended = False
        return super().reset(env, rng)

    def over(self, env):
        return getattr(self, "ended", True)  # also before the first reset

    def act(self, env, rng):
        out = env.step(random_action(env.action_space, rng))
        self.ended = bool(out[2] or out[3])
        return out


class VectorDriver(Driver):
    def over(self, env):
        return False  # a vector env resets its slots itself

    def act(self, env, rng):
        space = env.single_action_space
        return env.step(np.stack([random_action(space, rng) for _ in range(env.num_envs)]))


class SB3Driver(VectorDriver):
    def reset(self, env, rng):
        env.seed(_seed(rng))
        return env.reset()

    def act(self, env, rng):
        space = env.action_space
        return env.step(np.stack([random_action(space, rng) for _ in range(env.num_envs)]))


class ParallelDriver(Driver):
    """Sends a message from every agent before each step when the env has a MessageBus."""

    def act(self, env, rng):
        if get_wrapper(env, CommunicationLayer) is not None:
            send_messages(env, [Message(a, None, float(rng.random())) for a in env.agents])
        return env.step({a: random_action(env.action_space(a), rng) for a in env.agents})


class AECDriver(Driver):
    """One turn per step; the copy may be taken in the middle of a cycle."""

    def reset(self, env, rng):
        super().reset(env, rng)
        return env.last()

    def act(self, env, rng):
        agent = env.agent_selection
        *_, terminated, truncated, _ = env.last()
        action = None if terminated or truncated else random_action(env.action_space(agent), rng)
        env.step(action)
        return agent, env.last() if env.agents else None, dict(env.rewards)


class TaskDriver(Driver):
    """MultiAgentTask: the first live agent acts with step(), the rest with step_all()."""

    def over(self, env):
        return not env.agents or env.game_over

    def act(self, env, rng):
        first, *others = env.agents
        spaces = env.action_spaces
        single = env.step(random_action(spaces[first], rng), first)
        if not others:  # the one live agent completed the cycle
            return single, None
        return single, env.step_all({a: random_action(spaces[a], rng) for a in others})


class PettingZooTaskDriver(Driver):
    def act(self, env, rng):
        if env.is_parallel:
            return env.step({a: random_action(env.env.action_space(a), rng) for a in env.agents})
        agent = env.env.agent_selection
        done = env.dones.get(agent, False)
        return env.step(None if done else random_action(env.env.action_space(agent), rng))


GYM, VECTOR, SB3, PARALLEL, AEC = GymDriver, VectorDriver, SB3Driver, ParallelDriver, AECDriver


# ---------------------------------------------------------------------- what is copied


def alive(data) -> dict[str, float]:
    """A RewardShaping component (module-level, so stdlib pickle finds it)."""
    return dict.fromkeys(data.agents, 1.0)


def keep_even(message: Message) -> bool:
    """A MessageFilter function: keeps messages whose content rounds to an even tenth."""
    return int(message.content * 10) % 2 == 0


def position(agent: str, observation: Any) -> Any:
    """A RestrictedCommunicationRange position: the observation's first two features."""
    return np.asarray(observation)[:2]


def tag(**kwargs: Any) -> Tag:
    return Tag(**{"seed": 0, "spawn_every": 3, "max_steps": 40, **kwargs})


def par(core: Any = None, **kwargs: Any) -> PettingZooParallelEnv:
    return PettingZooParallelEnv(core if core is not None else tag(), **kwargs)


def bus(**kwargs: Any) -> MessageBus:
    return MessageBus(par(**kwargs))


ADAPTERS: dict[str, tuple[Callable[[], Any], type[Driver]]] = {
    "GymEnv": (lambda: GymEnv(Basic(seed=0)), GYM),
    "GymEnv-hybrid": (lambda: GymEnv(Collector(seed=0, n_agents=1, max_steps=15)), GYM),
    "GymTask": (lambda: GymTask(GymEnv(Basic(seed=0)), stack_frames=2, skip_start_frames=2), GYM),
    "BehaviorVectorEnv": (lambda: BehaviorVectorEnv(BallBalance(n_agents=4, seed=0)), VECTOR),
    "BehaviorVectorEnv-MultiDiscrete": (lambda: BehaviorVectorEnv(Branches(seed=0)), VECTOR),
    "SB3VecEnv": (lambda: SB3VecEnv(GridWorld(n_agents=3, seed=0)), SB3),
    "Parallel-Tag-spawning": (lambda: par(termination_mode="any"), PARALLEL),
    "Parallel-Collector": (lambda: par(Collector(seed=0, n_agents=3, max_steps=15)), PARALLEL),
    "Parallel-GridWorld-masks": (lambda: par(GridWorld(n_agents=2, seed=0)), PARALLEL),
    "AEC-Tag-spawning": (lambda: PettingZooAECEnv(tag(), termination_mode="any"), AEC),
    "MultiAgentTask": (lambda: MultiAgentTask(tag(), max_cycles=12), TaskDriver),
    "PettingZooTask-parallel": (lambda: PettingZooTask(par(max_cycles=12)), PettingZooTaskDriver),
    "PettingZooTask-aec": (
        lambda: PettingZooTask(PettingZooAECEnv(tag(), max_cycles=12)),
        PettingZooTaskDriver,
    ),
    "gym.make": (lambda: gym.make("zooport/Basic-v0", seed=0), GYM),
    "gym.make_vec": (
        lambda: gym.make_vec(
            "zooport/BallBalance-v0", num_envs=3, vectorization_mode="vector_entry_point", seed=0
        ),
        VECTOR,
    ),
    "tag_v0.parallel_env": (lambda: tag_v0.parallel_env(seed=0, spawn_every=3), PARALLEL),
    "tag_v0.env": (lambda: tag_v0.env(seed=0, max_cycles=15), AEC),
    "collector_v0.parallel_env": (lambda: collector_v0.parallel_env(seed=0, n_agents=2), PARALLEL),
    "zooport.make-parallel": (lambda: zooport.make("Tag", seed=0, max_cycles=20), PARALLEL),
    "zooport.make-aec": (lambda: zooport.make("Tag", api="aec", seed=0, max_cycles=20), AEC),
    "zooport.make-gym": (lambda: zooport.make("Basic", api="gym", seed=0), GYM),
    "zooport.make-vector": (
        lambda: zooport.make("BallBalance", api="vector", seed=0, n_agents=3),
        VECTOR,
    ),
}

WRAPPERS: dict[str, tuple[Callable[[], Any], type[Driver]]] = {
    "DiscretizeActions": (
        lambda: DiscretizeActions(par(BallBalance(n_agents=3, seed=0)), 3),
        PARALLEL,
    ),
    "GymDiscretizeActions": (
        lambda: GymDiscretizeActions(GymEnv(BallBalance(n_agents=1, seed=0)), 3),
        GYM,
    ),
    "VectorDiscretizeActions": (
        lambda: VectorDiscretizeActions(BehaviorVectorEnv(BallBalance(n_agents=3, seed=0)), 3),
        VECTOR,
    ),
    "RescaleObservations": (
        lambda: RescaleObservations(par(GridWorld(n_agents=2, seed=0))),
        PARALLEL,
    ),
    "GymRescaleObservations": (
        lambda: GymRescaleObservations(GymEnv(GridWorld(n_agents=1, seed=0))),
        GYM,
    ),
    "VectorRescaleObservations": (
        lambda: VectorRescaleObservations(BehaviorVectorEnv(GridWorld(n_agents=2, seed=0))),
        VECTOR,
    ),
    "CentralisedObservation": (
        lambda: CentralisedObservation(par(), include=("observations", "actions")),
        PARALLEL,
    ),
    "SharedVisibility": (
        lambda: SharedVisibility(par(Scouts(seed=0, max_steps=10))),
        PARALLEL,
    ),
    "RewardShaping": (
        lambda: RewardShaping(par(), {"alive": alive}, {"alive": 0.5}, "mean"),
        PARALLEL,
    ),
    "TeamReward": (lambda: TeamReward(par(), "mean"), PARALLEL),
    "TerminationPolicy": (lambda: TerminationPolicy(par(), "majority"), PARALLEL),
    "IndividualDone": (lambda: IndividualDone(par()), PARALLEL),
    "FoldAgents": (lambda: FoldAgents(par(), "random", behavior="runner"), PARALLEL),
    "SingleAgentView": (lambda: SingleAgentView(par(), "tagger_3"), GYM),
    "MessageBus": (bus, PARALLEL),
    "MessageFilter": (lambda: MessageFilter(bus(), keep_even), PARALLEL),
    "RandomMessageDropout": (lambda: RandomMessageDropout(bus(), 0.5), PARALLEL),
    "RestrictedCommunicationRange": (
        lambda: RestrictedCommunicationRange(bus(), 0.8, position),
        PARALLEL,
    ),
    "NoCommunication": (lambda: NoCommunication(bus(), "runner"), PARALLEL),
    "ExtraCommunicationDelays": (lambda: ExtraCommunicationDelays(bus(), 2), PARALLEL),
    "README chain": (
        lambda: zooport.make(
            "Tag",
            seed=0,
            max_cycles=30,
            wrappers=[
                MessageBus,
                WrapperSpec(RandomMessageDropout, 0.1),
                WrapperSpec(ExtraCommunicationDelays, 1),
                WrapperSpec(FoldAgents, "random", behavior="runner"),
                WrapperSpec(TeamReward, "mean"),
                WrapperSpec(TerminationPolicy, "majority"),
            ],
        ),
        PARALLEL,
    ),
}

ENVS = {**ADAPTERS, **WRAPPERS}


def lockstep(name: str, means: str, phase: str) -> None:
    make, driver_class = ENVS[name]
    original, driver = make(), driver_class()
    rng = np.random.default_rng(12345)
    if phase != "before reset":
        driver.reset(original, rng)
    if phase == "mid-episode":
        for _ in range(WARMUP):
            driver.step(original, rng)
    clone = COPIES[means](original)
    clone_driver, clone_rng = copy.deepcopy(driver), copy.deepcopy(rng)
    if phase == "before reset":
        first = driver.reset(original, rng)
        assert data_equivalence(plain(first), plain(clone_driver.reset(clone, clone_rng)))
    for i in range(STEPS):
        expected = plain(driver.step(original, rng))
        got = plain(clone_driver.step(clone, clone_rng))
        assert data_equivalence(expected, got), f"{name}: the copy drifted at step {i}"
    original.close()
    clone.close()


@pytest.mark.parametrize("phase", ["before reset", "after reset", "mid-episode"])
@pytest.mark.parametrize("means", sorted(COPIES))
@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_a_copied_adapter_continues_in_lockstep(name, means, phase):
    lockstep(name, means, phase)


@pytest.mark.parametrize("phase", ["before reset", "after reset", "mid-episode"])
@pytest.mark.parametrize("means", sorted(COPIES))
@pytest.mark.parametrize("name", sorted(WRAPPERS))
def test_a_copied_wrapper_continues_in_lockstep(name, means, phase):
    lockstep(name, means, phase)


def test_a_copy_is_independent_of_its_original():
    """Stepping the copy leaves the original where it was (no shared core or buffer)."""
    original = par(Tag(seed=0))
    original.reset(seed=0)
    clone = by_pickle(original)
    assert clone.core is not original.core
    actions = dict.fromkeys(clone.agents, 0)
    for _ in range(3):
        clone.step(actions)
    twin = par(Tag(seed=0))
    twin.reset(seed=0)
    assert data_equivalence(original.step(actions), twin.step(actions))


def test_the_issue_example_a_copied_tag_pays_what_the_original_pays():
    """issue 13: after 100 steps a clone of Tag reported tagger_3's total as -2.00 (-1.00)."""
    original = PettingZooParallelEnv(Tag(seed=0))
    original.reset(seed=0)
    clone = copy.deepcopy(original)
    totals: list[dict[str, float]] = [{}, {}]
    for _ in range(100):
        if not original.agents:
            break
        actions = dict.fromkeys(original.agents, 0)
        for env, total in zip((original, clone), totals, strict=True):
            for agent, reward in env.step(actions)[1].items():
                total[agent] = total.get(agent, 0.0) + reward
    assert totals[0] == totals[1]
    assert round(totals[1]["tagger_3"], 2) == -1.0
