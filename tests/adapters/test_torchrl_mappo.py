"""Multi-agent PPO (MAPPO) in TorchRL on zooport's Parallel env: BenchMARL's backend, trained.

BenchMARL builds its tasks on TorchRL's ``PettingZooWrapper``: one group per agent-name prefix
(``runner``, ``tagger``), per group a policy over each agent's observation and a centralised
critic over the whole group's, a ``ClipPPOLoss`` and GAE. The loop below is that recipe
(docs/recipes/torchrl.md) cut to a short budget; it trains, and the tests check what it
learned and that every group trained on zooport's own data.

TorchRL resets a Parallel env as soon as any agent is done (``done_on_any``), so the adapter
runs with ``termination_mode="any"``: the episode zooport reports is the episode TorchRL plays.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torchrl = pytest.importorskip("torchrl")

import torch  # noqa: E402
from tensordict.nn import TensorDictModule, TensorDictSequential  # noqa: E402
from torch import nn  # noqa: E402
from torch.distributions import Categorical  # noqa: E402
from torchrl.data import LazyTensorStorage, ReplayBuffer, SamplerWithoutReplacement  # noqa: E402
from torchrl.envs import PettingZooWrapper  # noqa: E402
from torchrl.envs.utils import ExplorationType, set_exploration_type  # noqa: E402
from torchrl.modules import MultiAgentMLP, ProbabilisticActor  # noqa: E402
from torchrl.objectives import ClipPPOLoss, ValueEstimators  # noqa: E402

from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv  # noqa: E402

with warnings.catch_warnings():
    # torchrl 0.14's collectors module defines classes its own deprecation hook warns about.
    warnings.filterwarnings("ignore", "Creating .* which inherits from WeightUpdaterBase")
    from torchrl.collectors import Collector
from zooport.envs.builtin import Basic, Tag  # noqa: E402

pytestmark = [
    # torchrl's PettingZoo wrapper warns whenever PettingZoo is not 1.24.3, the version its
    # CI tests; zooport needs PettingZoo >= 1.24 and the main venv runs a newer one.
    pytest.mark.filterwarnings(
        "ignore:PettingZoo in TorchRL is tested using version == 1.24.3:UserWarning"
    ),
    # torchrl 0.14 announces that its collector will add the InitTracker transform by itself
    # from 0.15 on; these policies have no recurrent state, so they need none.
    pytest.mark.filterwarnings("ignore:The env passed to Collector is missing transforms"),
]


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Networks this small gain nothing from threads, which only contend on a busy machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


FRAMES_PER_BATCH = 400
MINIBATCH = 100
EPOCHS = 4


def _wrap(core) -> PettingZooWrapper:
    return PettingZooWrapper(
        env=PettingZooParallelEnv(core, termination_mode="any"),
        use_mask=True,
        categorical_actions=True,
    )


class GroupMAPPO:
    """One group's policy (shared by its agents), centralised critic and PPO loss."""

    def __init__(self, env: PettingZooWrapper, group: str) -> None:
        n_agents = len(env.group_map[group])
        obs_dim = env.observation_spec[group, "observation"].shape[-1]
        n_actions = env.full_action_spec[group, "action"].space.n
        self.group = group

        def mlp(n_out: int, centralised: bool) -> MultiAgentMLP:
            return MultiAgentMLP(
                n_agent_inputs=obs_dim, n_agent_outputs=n_out, n_agents=n_agents,
                centralised=centralised, share_params=True, depth=1, num_cells=32,
                activation_class=nn.Tanh,
            )  # fmt: skip

        logits = TensorDictModule(
            mlp(n_actions, centralised=False),
            in_keys=[(group, "observation")],
            out_keys=[(group, "logits")],
        )
        self.policy = ProbabilisticActor(
            logits,
            in_keys={"logits": (group, "logits")},
            out_keys=[(group, "action")],
            distribution_class=Categorical,
            return_log_prob=True,
            log_prob_key=(group, "sample_log_prob"),
            spec=env.full_action_spec[group, "action"],
        )
        self.critic = TensorDictModule(
            mlp(1, centralised=True),
            in_keys=[(group, "observation")],
            out_keys=[(group, "state_value")],
        )
        self.loss = ClipPPOLoss(
            actor_network=self.policy, critic_network=self.critic, entropy_coeff=0.01,
            normalize_advantage=False,
        )  # fmt: skip
        self.loss.set_keys(
            reward=(group, "reward"), action=(group, "action"),
            sample_log_prob=(group, "sample_log_prob"), value=(group, "state_value"),
            done=(group, "done"), terminated=(group, "terminated"),
        )  # fmt: skip
        self.loss.make_value_estimator(ValueEstimators.GAE, gamma=0.99, lmbda=0.95)
        self.optimizer = torch.optim.Adam(self.loss.parameters(), lr=3e-3)

    def update(self, batch) -> float:
        """PPO epochs on one collected batch; returns the mean critic loss."""
        with torch.no_grad():
            self.loss.value_estimator(
                batch,
                params=self.loss.critic_network_params,
                target_params=self.loss.target_critic_network_params,
            )
        buffer = ReplayBuffer(
            storage=LazyTensorStorage(batch.numel()),
            sampler=SamplerWithoutReplacement(),
            batch_size=MINIBATCH,
        )
        buffer.extend(batch.reshape(-1))
        critic_losses = []
        for _ in range(EPOCHS * batch.numel() // MINIBATCH):
            losses = self.loss(buffer.sample())
            total = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
            total.backward()
            nn.utils.clip_grad_norm_(self.loss.parameters(), 1.0)
            self.optimizer.step()
            self.optimizer.zero_grad()
            critic_losses.append(losses["loss_critic"].item())
        return float(np.mean(critic_losses))


def train(core, iterations: int, seed: int = 0) -> tuple[PettingZooWrapper, dict, list[dict]]:
    """MAPPO with one ``GroupMAPPO`` per group; returns the env, the groups and statistics."""
    torch.manual_seed(seed)
    env = _wrap(core)
    env.set_seed(seed)
    groups = {group: GroupMAPPO(env, group) for group in env.group_map}
    policy = TensorDictSequential(*(g.policy for g in groups.values()))
    collector = Collector(
        env, policy, frames_per_batch=FRAMES_PER_BATCH, total_frames=FRAMES_PER_BATCH * iterations
    )
    history = []
    for batch in collector:
        stats = {"batch": batch}
        for name, group in groups.items():
            stats[name, "critic_loss"] = group.update(batch)
        history.append(stats)
        collector.update_policy_weights_()
    return env, groups, history


def _episode_returns(batch, group: str) -> np.ndarray:
    """The mean per-agent return of every episode that ended in the batch."""
    rewards = batch["next", group, "reward"].squeeze(-1).numpy()  # (T, n_agents)
    ends = batch["next", "done"].squeeze(-1).numpy()
    returns, running = [], np.zeros(rewards.shape[1])
    for t in range(len(rewards)):
        running += rewards[t]
        if ends[t]:
            returns.append(running.mean())
            running = np.zeros(rewards.shape[1])
    return np.asarray(returns)


def test_mappo_learns_basic():
    # Four agents, each on its own line, one shared policy; 4,000 agent-steps. At random they
    # lose about 0.01 a step; trained, each walks right to the large goal: 7 steps, return
    # 6 * -0.01 + (1 - 0.01) = 0.93 (Basic's expected reward is 0.9).
    _, groups, history = train(Basic(n_agents=4, seed=0), iterations=10)
    assert list(groups) == ["basic"]
    first = _episode_returns(history[0]["batch"], "basic")
    assert len(first) > 10 and first.mean() < 0
    assert all(np.isfinite(h["basic", "critic_loss"]) for h in history)
    env = _wrap(Basic(n_agents=4, seed=1))  # the collector closed the training env
    with set_exploration_type(ExplorationType.DETERMINISTIC), torch.no_grad():
        episode = env.rollout(50, groups["basic"].policy)
    assert episode["basic", "action"].unique().tolist() == [2]  # always right
    returns = episode["next", "basic", "reward"].sum(0).squeeze(-1).numpy()
    np.testing.assert_allclose(returns, [0.93] * 4, rtol=1e-5)
    assert episode.batch_size == (7,) and episode["next", "basic", "terminated"][-1].all()
    env.close()


def test_mappo_trains_each_group_of_a_two_behaviour_env_on_its_own_data():
    _, groups, history = train(Tag(seed=0), iterations=2)
    assert list(groups) == ["runner", "tagger"]
    batch = history[-1]["batch"]
    assert batch["runner", "observation"].shape == (FRAMES_PER_BATCH, 3, 10)
    assert batch["tagger", "observation"].shape == (FRAMES_PER_BATCH, 2, 10)
    for name in groups:
        assert np.isfinite(history[-1][name, "critic_loss"])
    # Each group's rewards are zooport's: runners decide every step and get +0.01 alive or -1
    # when tagged; taggers decide every second step and get 0 between decisions, the summed
    # -0.01 a step at a decision, +1 per tag (see Tag's docstring).
    runner = batch["next", "runner", "reward"].numpy()
    tagger = batch["next", "tagger", "reward"].numpy()
    assert set(np.unique(runner).astype(float).round(4)) <= {0.01, -1.0}
    assert set(np.unique(tagger).astype(float).round(4)) <= {0.0, -0.01, -0.02, 0.98, 0.99}
    assert batch["next", "done"].sum() >= 1  # at least one episode ended and was reset
