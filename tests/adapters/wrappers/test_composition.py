"""Composition: the explicit base wrapper, WrapperSpec, the constructors' placement checks,
apply_wrappers' kinds and forms, has_wrapper."""

from __future__ import annotations

import functools

import gymnasium as gym
import numpy as np
import pytest
import supersuit
from pettingzoo.utils.conversions import parallel_to_aec

from zooport.adapters.gym_env import GymEnv
from zooport.adapters.vector_env import BehaviorVectorEnv
from zooport.adapters.wrappers import (
    AgentSelector,
    CentralisedObservation,
    DiscretizeActions,
    FoldAgents,
    GymDiscretizeActions,
    MessageBus,
    MessageFilter,
    ParallelWrapper,
    RandomMessageDropout,
    RescaleObservations,
    SharedVisibility,
    SingleAgentView,
    TeamReward,
    Teams,
    TerminationPolicy,
    WrapperOrderError,
    WrapperSpec,
    apply_wrappers,
    get_wrapper,
    has_wrapper,
)
from zooport.adapters.wrappers.base import behavior_of
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.errors import ReentrantCallError

from tests.support.wrappers import MiniPursuit, check_contract, mini, tag

# ---------------------------------------------------------------------- the base wrapper


def test_base_wrapper_has_no_implicit_forwarding():
    assert all("__getattr__" not in vars(cls) for cls in ParallelWrapper.__mro__)
    env = ParallelWrapper(tag())
    with pytest.raises(AttributeError):
        env.core  # noqa: B018 - reached explicitly through env.unwrapped.core
    assert env.unwrapped.core is env.env.core


@pytest.mark.parametrize("factory", [tag, mini])
def test_base_wrapper_passes_every_member_through(factory):
    inner = factory()
    env = ParallelWrapper(inner)
    assert env.possible_agents == inner.possible_agents
    for agent in env.possible_agents:
        assert env.observation_space(agent) is inner.observation_space(agent)
        assert env.action_space(agent) is inner.action_space(agent)
    assert env.observation_spaces == {a: inner.observation_space(a) for a in env.possible_agents}
    assert env.metadata is inner.metadata and env.render_mode is None
    assert env.state_space is inner.state_space and env.unwrapped is inner
    obs, _ = env.reset(seed=1)
    assert env.agents == inner.agents and set(obs) == set(env.agents)
    np.testing.assert_array_equal(env.state(), inner.state())
    assert str(env) == f"ParallelWrapper<{inner}>"
    check_contract(lambda: ParallelWrapper(factory()))


def test_a_subclass_changes_observations_and_infos_through_map_step():
    class Tagged(ParallelWrapper):
        def map_step(self, observations, infos, actions):
            return {a: -o for a, o in observations.items()}, {
                a: {"acted": a in actions} for a in infos
            }

    raw, env = mini(), Tagged(mini())
    (raw_obs, _), (obs, infos) = raw.reset(seed=2), env.reset(seed=2)
    assert all(np.array_equal(obs[a], -raw_obs[a]) for a in raw_obs)
    assert not any(info["acted"] for info in infos.values())  # {} at reset
    actions = {a: 0 for a in raw.agents}
    raw_obs, raw_rewards, *_ = raw.step(actions)
    obs, rewards, _, _, infos = env.step(actions)
    assert all(np.array_equal(obs[a], -raw_obs[a]) for a in raw_obs) and rewards == raw_rewards
    assert all(info["acted"] for info in infos.values())


def test_render_and_close_pass_through_the_chain():
    env = apply_wrappers(tag(render_mode="rgb_array"), [TeamReward, ParallelWrapper])
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and env.render_mode == "rgb_array"
    env.close()
    env.close()  # idempotent, as the adapter's
    assert env.unwrapped.core.closed


def test_base_wrapper_rejects_what_is_not_a_parallel_env():
    with pytest.raises(TypeError, match="aec_to_parallel"):
        ParallelWrapper(parallel_to_aec(mini()))
    with pytest.raises(TypeError, match="wraps a PettingZoo ParallelEnv, actually: GymEnv"):
        ParallelWrapper(GymEnv(BallBalance(n_agents=1)))


def test_state_space_is_absent_where_the_env_has_none():
    inner = mini()
    del inner.state_space
    assert not hasattr(ParallelWrapper(inner), "state_space")


def test_behavior_of_selectors_and_teams_without_an_env():
    assert (behavior_of(None, "adversary_0"), behavior_of(None, "solo")) == ("adversary", "solo")
    select = AgentSelector(None, "hunter")
    assert (select("hunter_0"), select("prey_1"), AgentSelector(None, ["prey_1"])("prey_1")) == (
        True,
        False,
        True,
    )
    assert Teams(None).group(["hunter_0", "prey_0", "hunter_1"]) == {
        "hunter": ["hunter_0", "hunter_1"],
        "prey": ["prey_0"],
    }


# ---------------------------------------------------------------------- WrapperSpec


def test_wrapper_spec_applies_its_arguments():
    spec = WrapperSpec(TerminationPolicy, "any", end_live_as="terminated")
    env = spec(mini())
    assert isinstance(env, TerminationPolicy) and env.end_live_as == "terminated"
    assert env.rule == "any"
    assert repr(spec) == "WrapperSpec(TerminationPolicy, 'any', end_live_as='terminated')"
    with pytest.raises(TypeError, match="actually: 3"):
        WrapperSpec(3)


# ---------------------------------------------------------------------- placement


def test_a_channel_without_a_bus_beneath_names_both_wrappers():
    with pytest.raises(WrapperOrderError) as error:
        apply_wrappers(mini(), [TeamReward, WrapperSpec(RandomMessageDropout, 0.1), MessageBus])
    message = str(error.value)
    assert "RandomMessageDropout (wrapping TeamReward<mini_pursuit_v0>) requires a MessageBus" in (
        message
    )
    apply_wrappers(mini(), [TeamReward, MessageBus, WrapperSpec(RandomMessageDropout, 0.1)])


def test_shared_visibility_over_changed_observations_names_both_wrappers():
    with pytest.raises(WrapperOrderError) as error:
        apply_wrappers(mini(), [RescaleObservations, TeamReward, SharedVisibility])
    message = str(error.value)
    assert "SharedVisibility must not wrap RescaleObservations" in message
    assert "put SharedVisibility before RescaleObservations" in message
    with pytest.raises(WrapperOrderError, match="must not wrap CentralisedObservation"):
        SharedVisibility(CentralisedObservation(mini()))
    apply_wrappers(mini(), [SharedVisibility, RescaleObservations, CentralisedObservation])


def test_a_second_copy_is_refused_and_stackable_ones_are_not():
    with pytest.raises(WrapperOrderError, match="DiscretizeActions appears twice"):
        apply_wrappers(
            mini(), [DiscretizeActions, TeamReward, functools.partial(DiscretizeActions)]
        )
    stacked = WrapperSpec(MessageFilter, bool)
    apply_wrappers(mini(), [MessageBus, stacked, stacked])


def test_hand_built_chains_are_held_to_the_same_rules():
    with pytest.raises(WrapperOrderError, match="MessageFilter .* requires a MessageBus"):
        MessageFilter(mini(), bool)
    with pytest.raises(WrapperOrderError, match="TerminationPolicy appears twice"):
        TerminationPolicy(ParallelWrapper(TerminationPolicy(mini())))
    with pytest.raises(WrapperOrderError, match="must not wrap RescaleObservations"):
        SharedVisibility(RescaleObservations(mini()))


def test_parallel_only_wrappers_are_rejected_for_gym_and_vector():
    one = GymEnv(BallBalance(n_agents=1, seed=0))
    with pytest.raises(WrapperOrderError) as error:
        apply_wrappers(one, [WrapperSpec(FoldAgents, "random", behavior="prey")], api="gym")
    assert "FoldAgents (wrappers[0]) wraps PettingZoo Parallel envs" in str(error.value)
    assert "a single-agent gymnasium.Env (api='gym')" in str(error.value)
    many = BehaviorVectorEnv(BallBalance(n_agents=2, seed=0))
    with pytest.raises(WrapperOrderError, match="MessageBus .* gymnasium VectorEnv"):
        apply_wrappers(many, [MessageBus], api="vector")
    env = apply_wrappers(one, [DiscretizeActions, RescaleObservations], api="gym")
    assert isinstance(env.env, GymDiscretizeActions) and has_wrapper(env, RescaleObservations)
    envs = apply_wrappers(many, [DiscretizeActions, RescaleObservations], api="vector")
    assert has_wrapper(envs, DiscretizeActions) and has_wrapper(envs, RescaleObservations)


def test_single_agent_view_switches_the_kind_to_gym():
    env = apply_wrappers(mini(), [TeamReward, SingleAgentView, gym.wrappers.FlattenObservation])
    assert isinstance(env, gym.wrappers.FlattenObservation) and has_wrapper(env, TeamReward)
    with pytest.raises(WrapperOrderError, match="FlattenObservation .* wraps a single-agent"):
        apply_wrappers(mini(), [gym.wrappers.FlattenObservation, SingleAgentView])
    with pytest.raises(WrapperOrderError, match="TeamReward .* wraps PettingZoo Parallel"):
        apply_wrappers(mini(), [SingleAgentView, TeamReward])
    with pytest.raises(WrapperOrderError, match="SingleAgentView .* api='aec' does not give"):
        apply_wrappers(mini(), [SingleAgentView], api="aec")
    env = apply_wrappers(MiniPursuit(seed=0), [SingleAgentView, WrapperSpec(DiscretizeActions, 3)])
    assert isinstance(env, GymDiscretizeActions) and env.action_space == gym.spaces.Discrete(9)
    assert has_wrapper(env, DiscretizeActions) and has_wrapper(env, SingleAgentView)


def test_aec_api_takes_zooport_wrappers_first_then_converts():
    env = apply_wrappers(mini(), [TeamReward, supersuit.clip_reward_v0], api="aec")
    assert isinstance(env.unwrapped, MiniPursuit) and has_wrapper(env, TeamReward)
    env.reset(seed=0)
    assert env.agent_selection == "hunter_0"
    with pytest.raises(WrapperOrderError, match="for api='aec' the zooport wrappers must come"):
        apply_wrappers(mini(), [supersuit.clip_reward_v0, TeamReward], api="aec")
    with pytest.raises(TypeError, match="needs the Parallel adapter"):
        apply_wrappers(parallel_to_aec(mini()), [TeamReward], api="aec")


def test_bad_lists_and_items():
    with pytest.raises(TypeError, match=r"wrappers\[1\]: expect a wrapper class"):
        apply_wrappers(mini(), [TeamReward, 5])
    with pytest.raises(TypeError, match="Expect wrappers to be a list"):
        apply_wrappers(mini(), TeamReward)
    with pytest.raises(ValueError, match="Expect api to be one of"):
        apply_wrappers(mini(), [], api="rllib")


# ---------------------------------------------------------------------- chains


def test_apply_wrappers_puts_the_first_innermost_and_has_wrapper_walks_env():
    env = apply_wrappers(mini(), [MessageBus, WrapperSpec(RandomMessageDropout, 0.5), TeamReward])
    assert str(env) == "TeamReward<RandomMessageDropout<MessageBus<mini_pursuit_v0>>>"
    assert get_wrapper(env, MessageBus) is env.env.env
    assert get_wrapper(env, ParallelWrapper) is env  # the outermost match
    assert not has_wrapper(env, FoldAgents) and not has_wrapper(env.env.env, TeamReward)
    padded = supersuit.black_death_v3(env)  # a SuperSuit (BaseParallelWrapper) layer on top
    assert has_wrapper(padded, MessageBus)


def test_each_wrapper_draws_from_its_own_generator():
    env = apply_wrappers(
        mini(),
        [
            MessageBus,
            WrapperSpec(RandomMessageDropout, 0.5),
            WrapperSpec(RandomMessageDropout, 0.5),
        ],
    )
    outer, inner = env, env.env
    env.reset(seed=4)
    first = (outer.np_random.random(3).tolist(), inner.np_random.random(3).tolist())
    env.reset(seed=4)
    assert (outer.np_random.random(3).tolist(), inner.np_random.random(3).tolist()) == first
    assert first[0] != first[1]  # stacked copies draw different streams
    env.reset()  # no seed: the generator goes on
    assert outer.np_random.random(3).tolist() != first[0]
    plain = [TeamReward(mini()), ParallelWrapper(mini())]  # no reset of their own: seeded too
    for wrapper in plain:
        wrapper.reset(seed=4)
    draws = [w.np_random.random(3).tolist() for w in plain]
    for wrapper in plain:
        wrapper.reset(seed=4)
    assert [w.np_random.random(3).tolist() for w in plain] == draws


def test_a_chain_has_one_guard_entered_once_where_the_user_calls():
    env = apply_wrappers(tag(), [MessageBus, WrapperSpec(RandomMessageDropout, 0.5), TeamReward])
    layers = [env, env.env, env.env.env]
    assert all(layer.step_guard is env.step_guard for layer in layers)
    assert env.step_guard is not env.unwrapped.step_guard  # the adapter guards itself
    env.reset(seed=0)
    env.step(dict.fromkeys(env.agents, 0))
    assert env.step_guard.completed == 2  # one reset and one step, not one per layer
    env.env.step(dict.fromkeys(env.agents, 0))  # an inner layer is still callable directly
    assert env.step_guard.completed == 3 and env.step_guard.layer is None


def test_a_policy_stepping_an_inner_layer_mid_step_is_refused():
    holder = {}

    def policy(observation):
        holder["inner"].step({})
        return 0

    holder["inner"] = inner = FoldAgents(tag(), policy, behavior="tagger")
    env = TeamReward(inner)
    env.reset(seed=0)
    with pytest.raises(ReentrantCallError, match=r"FoldAgents.step\(\) was called while its step"):
        env.step(dict.fromkeys(env.agents, 0))
