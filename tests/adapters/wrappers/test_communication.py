"""The message bus and channel wrappers: delivery timing, encodings, routing, each channel by
hand, delays (ties, release without senders), seeding, and the shared contract."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import data_equivalence

from zooport.adapters.wrappers import (
    ExtraCommunicationDelays,
    Message,
    MessageBus,
    MessageFilter,
    NoCommunication,
    RandomMessageDropout,
    RestrictedCommunicationRange,
    TeamReward,
    send_messages,
)
from zooport.errors import SpecError, UnknownAgentError, ZooportError

from tests.support.wrappers import check_contract, grid_world, mini, random_actions, tag

HUNTER_MOVES = {"hunter_0": np.zeros(2, np.float32), "hunter_1": np.zeros(2, np.float32)}


def still(env):
    """Actions that keep every agent where it is."""
    return {a: HUNTER_MOVES.get(a, 0) for a in env.agents}


def inbox(bus):
    return {a: [(m.sender, m.content) for m in box] for a, box in bus.last_delivered.items() if box}


# ---------------------------------------------------------------------- the bus


def test_broadcasts_and_direct_messages_arrive_in_the_next_step_only():
    env = MessageBus(mini())
    _, infos = env.reset(seed=0)
    assert all(info["messages"] == [] for info in infos.values())
    env.send_messages([Message("hunter_0", None, "all"), Message("prey_1", "hunter_0", "hi")])
    _, _, _, _, infos = env.step(still(env))
    assert inbox(env) == {
        "hunter_0": [("prey_1", "hi")],
        "hunter_1": [("hunter_0", "all")],
        "prey_0": [("hunter_0", "all")],
        "prey_1": [("hunter_0", "all")],
    }
    assert infos["hunter_1"]["messages"][0].recipient == "hunter_1"
    _, _, _, _, infos = env.step(still(env))
    assert all(info["messages"] == [] for info in infos.values())
    env.send_messages(Message("hunter_0", "hunter_1", 1))
    env.reset(seed=0)  # in-flight messages are dropped
    env.step(still(env))
    assert inbox(env) == {}


def test_route_checks_senders_recipients_and_content():
    env = MessageBus(mini(), content_space=spaces.Box(-1, 1, (2,), np.float32))
    env.reset(seed=0)
    with pytest.raises(UnknownAgentError, match="sender 'wolf_0' is not a live agent"):
        env.send_messages(Message("wolf_0", None, [0, 0]))
    with pytest.raises(UnknownAgentError, match="recipient 'wolf_0' is not a possible agent"):
        env.send_messages(Message("prey_0", "wolf_0", [0, 0]))
    with pytest.raises(ValueError, match=r"expected content of shape \(2,\).*actually: \(3,\)"):
        env.send_messages(Message("prey_0", None, [0, 0, 0]))
    with pytest.raises(TypeError, match="Expect Message objects"):
        env.send_messages([("prey_0", None, [0, 0])])


def test_fixed_size_encoding_in_the_observation():
    content = spaces.Box(-1, 1, (2,), np.float32)
    env = MessageBus(mini(), delivery="observation", content_space=content, max_messages=2)
    space = env.observation_space("hunter_0")
    assert space["observation"] is env.env.observation_space("hunter_0")
    assert space["messages"]["sender"] == spaces.MultiDiscrete([5, 5])
    assert space["messages"]["count"] == spaces.Discrete(3)
    obs, _ = env.reset(seed=0)
    assert obs["prey_0"]["messages"]["count"] == 0 and space.contains(obs["hunter_0"])
    env.send_messages(
        [
            Message(s, "hunter_0", [i / 10, -i / 10])
            for i, s in enumerate(["prey_1", "hunter_1", "prey_0"])
        ]
    )
    obs, *_ = env.step(still(env))
    encoded = obs["hunter_0"]["messages"]
    assert encoded["count"] == 2 and encoded["sender"].tolist() == [4, 2]  # 1 + index
    np.testing.assert_allclose(encoded["content"], [[0.0, 0.0], [0.1, -0.1]])
    assert env.overflowed == 1 and obs["hunter_1"]["messages"]["count"] == 0
    assert space.contains(obs["hunter_0"])


def test_encoding_joins_a_dict_observation_and_can_go_to_the_info():
    content = spaces.Box(0, 1, (1,), np.float32)
    grid = MessageBus(grid_world(), delivery="observation", content_space=content)
    assert set(grid.observation_space("gridworld_0").spaces) == {
        "action_mask",
        "observation",
        "messages",
    }
    env = MessageBus(tag(), content_space=content)
    assert env.observation_space("runner_0") is env.env.observation_space("runner_0")
    env.reset(seed=0)
    send_messages(env, Message("tagger_4", "tagger_3", [1.0]))
    _, _, _, _, infos = env.step(dict.fromkeys(env.agents, 0))
    assert infos["tagger_3"]["messages"]["count"] == 1
    assert infos["tagger_3"]["messages"]["sender"][0] == 5


def test_bus_errors():
    with pytest.raises(ValueError, match="needs content_space"):
        MessageBus(mini(), delivery="observation")
    with pytest.raises(ValueError, match="delivery to be one of \\['observation', 'info'\\]"):
        MessageBus(mini(), delivery="radio")
    with pytest.raises(ValueError, match="max_messages to be an int >= 1"):
        MessageBus(mini(), max_messages=0)
    spawning = MessageBus(tag(spawn_every=1), content_space=spaces.Box(0, 1, (1,)))
    spawning.reset(seed=0)
    spawning.step(dict.fromkeys(spawning.agents, 0))
    with pytest.raises(SpecError, match="'runner_5' is not one of them"):
        spawning.send_messages(Message("runner_5", None, [0.0]))
    with pytest.raises(ZooportError, match="has no MessageBus"):
        send_messages(mini(), Message("prey_0", None, 0))


def test_messages_to_agents_that_left_are_lost():
    env = MessageBus(mini(catch=1.0))  # prey_1 is caught in the first step
    env.reset(seed=0)
    env.step(still(env))
    assert "prey_1" not in env.agents
    env.send_messages(Message("prey_0", "prey_1", "lost"))
    env.step(still(env))
    assert inbox(env) == {}


@pytest.mark.parametrize("factory", [tag, mini])
@pytest.mark.parametrize("delivery", ["info", "observation"])
def test_bus_contract(factory, delivery):
    content = spaces.Box(-1, 1, (3,), np.float32)
    check_contract(lambda: MessageBus(factory(), delivery=delivery, content_space=content))


# ---------------------------------------------------------------------- channels


def test_message_filter_keeps_drops_and_replaces():
    def fn(message):
        if message.sender == "prey_0":
            return False
        return Message(message.sender, message.recipient, "noisy") if message.content == 2 else True

    env = MessageFilter(MessageBus(mini()), fn)
    env.reset(seed=0)
    env.send_messages(
        [
            Message("prey_0", "hunter_0", 1),
            Message("prey_1", "hunter_0", 2),
            Message("hunter_1", "hunter_0", 3),
        ]
    )
    env.step(still(env))
    assert inbox(env.bus) == {"hunter_0": [("prey_1", "noisy"), ("hunter_1", 3)]}
    bad = MessageFilter(MessageBus(mini()), lambda m: 1)
    bad.reset(seed=0)
    with pytest.raises(TypeError, match="returned 1; expected True, False or a Message"):
        bad.send_messages(Message("prey_0", None, 0))


def test_dropout_is_seeded_per_wrapper_and_leaves_the_env_generator_alone():
    def delivered(seed, p=0.5):
        env = RandomMessageDropout(MessageBus(mini()), p)
        obs, _ = env.reset(seed=seed)
        got, observations = [], [obs]
        for _ in range(6):
            send_messages(env, [Message(a, None, a) for a in env.agents])
            obs, *_ = env.step(still(env))
            got.append(inbox(env.bus))
            observations.append(obs)
        return got, observations

    first, observations = delivered(1)
    assert data_equivalence(first, delivered(1)[0]) and first != delivered(2)[0]
    counts = [len(v) for step in first for v in step.values()]
    assert 0 < sum(counts) < 6 * 12  # some of the 12 per step dropped, some not
    raw = mini()
    raw_obs = [raw.reset(seed=1)[0]] + [raw.step(still(raw))[0] for _ in range(6)]
    assert data_equivalence(observations, raw_obs)  # the env's noise draws are untouched
    assert sum(len(v) for s in delivered(1, p=0.0)[0] for v in s.values()) == 6 * 12
    assert delivered(1, p=1.0)[0] == [{}] * 6
    with pytest.raises(ValueError, match="probability in \\[0, 1\\], actually: 1.5"):
        RandomMessageDropout(MessageBus(mini()), 1.5)


def test_range_restriction_by_hand():
    env = RestrictedCommunicationRange(MessageBus(mini()), 0.8, lambda agent, obs: obs[:2])
    obs, _ = env.reset(seed=3)  # prey_0 0.35 and prey_1 0.72 away from hunter_0, hunter_1 1.43
    env.send_messages(Message("hunter_0", None, "ping"))
    env.step(still(env))
    here = obs["hunter_0"][:2]
    near = sorted(
        a for a in ("hunter_1", "prey_0", "prey_1") if np.linalg.norm(obs[a][:2] - here) <= 0.8
    )
    assert sorted(inbox(env.bus)) == near == ["prey_0", "prey_1"]
    with pytest.raises(ValueError, match="finite range > 0"):
        RestrictedCommunicationRange(MessageBus(mini()), 0, lambda a, o: o)
    with pytest.raises(TypeError, match="position_fn to be a callable"):
        RestrictedCommunicationRange(MessageBus(mini()), 1.0, None)


def test_no_communication_for_a_group_or_everyone():
    env = NoCommunication(MessageBus(mini()), "prey")
    env.reset(seed=0)
    env.send_messages([Message("hunter_0", None, 1), Message("prey_0", "hunter_1", 2)])
    env.step(still(env))
    assert inbox(env.bus) == {"hunter_1": [("hunter_0", 1)]}
    env = NoCommunication(MessageBus(mini()))
    env.reset(seed=0)
    env.send_messages(Message("hunter_0", None, 1))
    env.step(still(env))
    assert inbox(env.bus) == {}


def test_delays_release_on_time_in_send_order_without_new_sends():
    env = ExtraCommunicationDelays(MessageBus(mini()), 2)
    env.reset(seed=0)
    arrivals = []
    for t in range(6):
        if t in (0, 1):  # equal release steps for the messages of one step
            env.send_messages([Message("prey_0", "hunter_0", (t, i)) for i in range(3)])
        env.step(still(env))
        arrivals.append([m.content for m in env.bus.last_delivered.get("hunter_0", [])])
    assert arrivals == [[], [], [(0, 0), (0, 1), (0, 2)], [(1, 0), (1, 1), (1, 2)], [], []]
    env.send_messages(Message("prey_0", "hunter_0", "late"))
    env.reset(seed=0)
    assert env.pending == 0


def test_random_delays_use_the_wrappers_generator():
    def arrivals(seed):
        env = ExtraCommunicationDelays(MessageBus(mini()), lambda m, rng: int(rng.integers(4)))
        env.reset(seed=seed)
        env.send_messages([Message("prey_0", "hunter_0", i) for i in range(8)])
        out = []
        for _ in range(5):
            env.step(still(env))
            out.append([m.content for m in env.bus.last_delivered["hunter_0"]])
        return out

    assert arrivals(0) == arrivals(0) and arrivals(0) != arrivals(1)
    assert sorted(sum(arrivals(0), [])) == list(range(8)) and arrivals(0)[4] == []
    with pytest.raises(ValueError, match="delay to be an int >= 0"):
        ExtraCommunicationDelays(MessageBus(mini()), -1)
    bad = ExtraCommunicationDelays(MessageBus(mini()), lambda m, rng: 0.5)
    bad.reset(seed=0)
    with pytest.raises(ValueError, match="returned 0.5; expected an int >= 0"):
        bad.send_messages(Message("prey_0", None, 0))


def test_channels_apply_outermost_first():
    delayed_then_dropped = RandomMessageDropout(ExtraCommunicationDelays(MessageBus(mini()), 2), 1)
    dropped_first = ExtraCommunicationDelays(RandomMessageDropout(MessageBus(mini()), 1.0), 2)
    for env in (delayed_then_dropped, dropped_first):
        env.reset(seed=0)
        send_messages(TeamReward(env), Message("prey_0", None, 0))
    assert delayed_then_dropped.env.pending == 0  # dropped before it reached the delay queue
    assert dropped_first.pending == 3  # held, to be dropped when released


@pytest.mark.parametrize("factory", [tag, mini])
def test_channel_contract(factory):
    def make():
        env = MessageBus(factory())
        env = MessageFilter(env, lambda m: True)
        env = RandomMessageDropout(env, 0.3)
        env = RestrictedCommunicationRange(env, 1.0, lambda agent, obs: obs[:2])
        env = NoCommunication(env, [])
        return ExtraCommunicationDelays(env, lambda m, rng: int(rng.integers(3)))

    record = check_contract(make)
    env = make()  # and with traffic on the channels
    obs, infos = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(8):
        if not env.agents:
            break
        env.send_messages([Message(a, None, 1) for a in env.agents])
        obs, _, _, _, infos = env.step(random_actions(env, obs, infos, rng))
    assert record
