"""zooport.make: ids, adapters per api, keyword splitting, wrappers applied and validated."""

from __future__ import annotations

import functools

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from pettingzoo.utils.conversions import parallel_to_aec_wrapper

from zooport import make, resolve_id
from zooport.adapters.gym_env import GymEnv
from zooport.adapters.pettingzoo_aec import PettingZooAECEnv
from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.adapters.registration import make_adapter
from zooport.adapters.vector_env import BehaviorVectorEnv
from zooport.adapters.wrappers import (
    CentralisedObservation,
    DiscretizeActions,
    FoldAgents,
    GymDiscretizeActions,
    Message,
    MessageBus,
    RandomMessageDropout,
    RescaleObservations,
    SingleAgentView,
    TeamReward,
    TerminationPolicy,
    VectorDiscretizeActions,
    WrapperOrderError,
    WrapperSpec,
    get_wrapper,
    send_messages,
)
from zooport.envs.builtin.tag import Tag
from zooport.errors import RegistryError

from tests.support.checkers import check_gym, run_parallel_api_test
from tests.support.wrappers import random_actions, rollout


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("Tag", "Tag"),
        ("zooport/Tag-v0", "Tag"),
        ("zooport/tag-v0", "Tag"),
        ("zooport/grid_world-v0", "GridWorld"),
        ("ball_balance", "BallBalance"),
        ("zooport/Collector", "Collector"),
    ],
)
def test_ids(given, expected):
    assert resolve_id(given) == expected


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("zooport/Tag-v1", "version 0, not v1"),
        ("mate/Tag-v0", "not namespace 'mate'"),
        ("Tga", r"did you mean \['Tag'\]"),
        (3, "Expect an environment id str"),
    ],
)
def test_bad_ids(given, message):
    with pytest.raises(RegistryError, match=message):
        make(given)


def test_parallel_splits_kwargs_and_equals_the_direct_construction():
    env = make("zooport/Tag-v0", seed=0, n_runners=2, max_cycles=6, termination_mode="any")
    direct = PettingZooParallelEnv(Tag(seed=0, n_runners=2), max_cycles=6, termination_mode="any")
    assert type(env) is PettingZooParallelEnv and env.max_cycles == 6
    assert env.possible_agents == ["runner_0", "runner_1", "tagger_2", "tagger_3"]
    assert data_equivalence(rollout(env, 4, 10), rollout(direct, 4, 10))


def test_unknown_keywords_list_the_valid_ones():
    with pytest.raises(TypeError) as error:
        make("Tag", n_runner=2)
    message = str(error.value)
    assert "unknown keyword arguments ['n_runner']" in message
    assert "'n_runners'" in message and "'max_cycles'" in message
    with pytest.raises(TypeError, match="the adapter takes .*action_space_seed"):
        make("Basic", api="gym", max_cycles=3)
    with pytest.raises(ValueError, match="Expect api to be one of"):
        make("Tag", api="rllib")
    with pytest.raises(ValueError, match="Expect api to be one of"):
        make_adapter("Tag", "rllib", {})


def test_wrappers_apply_in_order_first_innermost_in_every_item_form():
    env = make(
        "Tag",
        seed=0,
        max_cycles=30,
        wrappers=[
            MessageBus,
            functools.partial(RandomMessageDropout, p=0.2),
            WrapperSpec(FoldAgents, "random", behavior="tagger"),
            lambda inner: TeamReward(inner, "mean"),
            WrapperSpec(TerminationPolicy, "any"),
        ],
    )
    assert str(env) == (
        "TerminationPolicy<TeamReward<FoldAgents<RandomMessageDropout<MessageBus<zooport_tag>>>>>"
    )
    assert env.possible_agents == ["runner_0", "runner_1", "runner_2"]
    env.reset(seed=0)
    send_messages(env, Message("runner_0", None, "go"))
    env.step(dict.fromkeys(env.agents, 0))
    assert get_wrapper(env, MessageBus).last_delivered  # routed through dropout to the bus
    run_parallel_api_test(env)


def test_bad_orders_fail_and_close_what_was_built():
    built = []

    def spy(env):
        built.append(env)
        return env

    with pytest.raises(WrapperOrderError, match="RandomMessageDropout .* requires a MessageBus"):
        make("Tag", wrappers=[spy, WrapperSpec(RandomMessageDropout, 0.1)])
    with pytest.raises(WrapperOrderError, match="FoldAgents .* wraps PettingZoo Parallel envs"):
        make("Tag", api="gym", wrappers=[spy, WrapperSpec(FoldAgents, "random", behavior="tag")])
    assert [env.core.closed for env in built] == [True, True]


def test_a_failing_wrapper_closes_the_env():
    built = []

    def boom(env):
        built.append(env)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        make("Tag", wrappers=[boom])
    assert built[0].core.closed


def test_a_failing_close_does_not_hide_the_wrapper_error(monkeypatch):
    def broken_close(self):
        raise OSError("close failed")

    def bad_wrapper(env):
        raise ValueError("the wrapper's own error")

    monkeypatch.setattr(PettingZooParallelEnv, "close", broken_close)
    with pytest.raises(ValueError, match="the wrapper's own error"):
        make("Tag", wrappers=[bad_wrapper])


def test_aec_native_and_after_zooport_wrappers():
    env = make("Tag", api="aec", seed=0, max_cycles=3)
    assert type(env) is PettingZooAECEnv
    env = make("Tag", api="aec", seed=0, max_cycles=3, wrappers=[TeamReward])
    assert isinstance(env.env, parallel_to_aec_wrapper) and isinstance(env.env.env, TeamReward)
    env.reset(seed=0)
    turns = 0
    for _agent in env.agent_iter():
        _, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else 0)
        turns += 1
    assert turns == 5 * 3 + 5  # three cycles of five agents, then each leaves with None


def test_gym_uses_single_agent_defaults_and_gym_forms():
    env = make("Tag", api="gym", seed=0)
    assert type(env) is GymEnv and env.behavior_name == "Runner?team=0"
    env = make(
        "BallBalance",
        api="gym",
        seed=0,
        wrappers=[WrapperSpec(DiscretizeActions, 3), RescaleObservations],
    )
    assert isinstance(env.env, GymDiscretizeActions) and env.action_space == gym.spaces.Discrete(9)
    check_gym(env)


def test_vector_with_and_without_num_envs():
    envs = make("BallBalance", api="vector", seed=0, n_agents=2)
    assert type(envs) is BehaviorVectorEnv and envs.num_envs == 2
    envs = make("BallBalance", api="vector", num_envs=4, wrappers=[DiscretizeActions])
    assert isinstance(envs, VectorDiscretizeActions) and envs.action_space.shape == (4,)
    envs.reset(seed=0)
    envs.step(np.zeros(4, np.int64))


def test_single_agent_view_then_gymnasium_wrappers():
    env = make(
        "Tag",
        seed=0,
        wrappers=[
            CentralisedObservation,
            WrapperSpec(SingleAgentView, "runner_0"),
            gym.wrappers.FlattenObservation,
        ],
    )
    assert isinstance(env, gym.wrappers.FlattenObservation)
    assert env.observation_space.shape == (10 + 25 + 40 + 20,)  # own, state, others, actions
    check_gym(env)


def test_readme_style_example_runs():
    env = make(
        "Tag",
        seed=0,
        max_cycles=50,
        wrappers=[
            MessageBus,
            WrapperSpec(RandomMessageDropout, 0.1),
            WrapperSpec(TeamReward, "mean"),
            WrapperSpec(TerminationPolicy, "majority"),
        ],
    )
    observations, infos = env.reset(seed=0)
    rng = np.random.default_rng(0)
    while env.agents:
        send_messages(env, [Message(a, None, 1.0) for a in env.agents if a.startswith("tagger")])
        observations, rewards, terminations, truncations, infos = env.step(
            random_actions(env, observations, infos, rng)
        )
        teams = {a[:6]: r for a, r in rewards.items()}
        assert all(rewards[a] == teams[a[:6]] for a in rewards)  # team rewards shared
