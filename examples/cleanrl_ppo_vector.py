"""CleanRL-style PPO (continuous actions) over ``BehaviorVectorEnv``: the fastest route.

One file, CleanRL's structure (arguments, ``make_env``, ``Agent``, rollout, GAE, clipped
update, ``SPS`` and ``episodic_return`` on stdout). The N agents of ``BallBalance`` (12 by
default, like Unity's 3DBall) are the N slots of one Gymnasium vector env over a single
batched core: one vector step is one numpy step of all platforms, with no subprocesses and
no per-agent Python loop.

Two things differ from CleanRL's ``ppo_continuous_action.py`` because the adapter offers
them: autoreset is SAME_STEP (``metadata["autoreset_mode"]``), so the observation after a
done is already the next episode's first one; and a time-limit truncation's final
observation is in ``info["final_obs"]``, so the value of the state the agent was in is
bootstrapped into the last reward instead of being cut to zero.

Run it::

    python examples/cleanrl_ppo_vector.py                        # 100k steps, ~1-2 minutes
    python examples/cleanrl_ppo_vector.py --short                # two tiny updates, for CI
    ZOOPORT_EXAMPLE_SHORT=1 python examples/cleanrl_ppo_vector.py

The full run fails (exit code 1) unless the last episodic return reaches BallBalance's
expected reward (18; the cap is 20): with the defaults it gets there after about 35k steps.

Episode statistics come from Gymnasium's ``RecordEpisodeStatistics`` vector wrapper; it
honours SAME_STEP autoreset from gymnasium 1.4 on (older versions leave the first step of
each episode after the first out of the statistics, not out of training).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import sys
import time

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
from torch.distributions.normal import Normal

from zooport.adapters.vector_env import BehaviorVectorEnv
from zooport.envs.builtin import BallBalance


@dataclasses.dataclass
class Args:
    """The hyperparameters (CleanRL's names); each is also a ``--flag`` on the command line."""

    seed: int = 1
    """seed of the environment, numpy, torch and random"""
    torch_deterministic: bool = True
    """if toggled, ``torch.backends.cudnn.deterministic=True``"""
    num_agents: int = 12
    """BallBalance platforms = vector slots"""
    max_steps: int = 200
    """the per-agent episode cap of BallBalance"""
    total_timesteps: int = 100_000
    """total agent steps of the experiment"""
    learning_rate: float = 3e-4
    """the learning rate of the optimizer"""
    num_steps: int = 256
    """the number of steps per slot in each rollout"""
    anneal_lr: bool = True
    """anneal the learning rate linearly to zero"""
    gamma: float = 0.99
    """the discount factor gamma"""
    gae_lambda: float = 0.95
    """the lambda of the generalised advantage estimation"""
    num_minibatches: int = 8
    """the number of minibatches per epoch"""
    update_epochs: int = 8
    """the number of epochs over each rollout"""
    norm_adv: bool = True
    """normalise advantages per minibatch"""
    clip_coef: float = 0.2
    """the surrogate clipping coefficient"""
    clip_vloss: bool = True
    """clip the value loss as in the PPO paper"""
    ent_coef: float = 0.0
    """the entropy coefficient"""
    vf_coef: float = 0.5
    """the value function coefficient"""
    max_grad_norm: float = 0.5
    """the maximum norm for gradient clipping"""
    target_kl: float | None = None
    """stop an update's epochs early above this approximate KL"""

    # Filled in at run time.
    short: bool = False
    """the CI-size run (``--short``): no reward check at the end"""
    batch_size: int = 0
    minibatch_size: int = 0
    num_iterations: int = 0


#: ``--short`` (or ``ZOOPORT_EXAMPLE_SHORT=1``): two small updates, episodes of 40 steps.
SHORT = {
    "num_steps": 48,
    "total_timesteps": 2 * 48 * 12,
    "max_steps": 40,
    "update_epochs": 2,
    "num_minibatches": 4,
}


def parse_args(argv: list[str] | None = None) -> Args:
    """CleanRL uses ``tyro``; plain argparse over the same dataclass keeps this one file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", action="store_true", help="two tiny updates (CI)")
    for field in dataclasses.fields(Args):
        if field.name in ("short", "batch_size", "minibatch_size", "num_iterations"):
            continue
        flag = "--" + field.name.replace("_", "-")
        if field.type in (bool, "bool"):
            parser.add_argument(flag, type=lambda s: s.lower() in ("1", "true", "yes"))
        elif field.name == "target_kl":
            parser.add_argument(flag, type=float)
        else:
            parser.add_argument(flag, type=type(field.default))
    namespace = parser.parse_args(argv)
    short = namespace.short or os.environ.get("ZOOPORT_EXAMPLE_SHORT") == "1"
    given = {k: v for k, v in vars(namespace).items() if k != "short" and v is not None}
    args = Args(**{**(SHORT if short else {}), **given}, short=short)
    args.batch_size = args.num_agents * args.num_steps
    args.minibatch_size = args.batch_size // args.num_minibatches
    args.num_iterations = max(1, args.total_timesteps // args.batch_size)
    return args


def make_env(args: Args) -> gym.vector.VectorEnv:
    """One BallBalance core, its agents as the slots of a vector env, CleanRL's wrappers."""
    core = BallBalance(n_agents=args.num_agents, seed=args.seed, max_steps=args.max_steps)
    envs = BehaviorVectorEnv(core)
    envs = gym.wrappers.vector.RecordEpisodeStatistics(envs)
    # The policy's Gaussian samples leave [-1, 1]; BallBalance takes actions in [-1, 1].
    return gym.wrappers.vector.ClipAction(envs)


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias_const: float = 0.0) -> nn.Linear:
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    """CleanRL's separate actor and critic MLPs, with a state-independent log std."""

    def __init__(self, envs: gym.vector.VectorEnv) -> None:
        super().__init__()
        obs_size = int(np.prod(envs.single_observation_space.shape))
        act_size = int(np.prod(envs.single_action_space.shape))
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_size, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 1), std=1.0),
        )
        self.actor_mean = nn.Sequential(
            layer_init(nn.Linear(obs_size, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, act_size), std=0.01),
        )
        self.actor_logstd = nn.Parameter(torch.zeros(1, act_size))

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x)

    def get_action_and_value(
        self, x: torch.Tensor, action: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        action_mean = self.actor_mean(x)
        action_std = torch.exp(self.actor_logstd.expand_as(action_mean))
        probs = Normal(action_mean, action_std)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action).sum(1), probs.entropy().sum(1), self.critic(x)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    torch.set_num_threads(1)  # a 64-unit MLP: threads only add overhead
    device = torch.device("cpu")

    envs = make_env(args)
    assert isinstance(envs.single_action_space, gym.spaces.Box), "continuous actions only"
    agent = Agent(envs).to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    n = args.num_agents
    obs = torch.zeros((args.num_steps, n, *envs.single_observation_space.shape))
    actions = torch.zeros((args.num_steps, n, *envs.single_action_space.shape))
    logprobs = torch.zeros((args.num_steps, n))
    rewards = torch.zeros((args.num_steps, n))
    dones = torch.zeros((args.num_steps, n))
    values = torch.zeros((args.num_steps, n))

    global_step = 0
    start_time = time.time()
    next_obs, _ = envs.reset(seed=args.seed)
    next_obs = torch.tensor(next_obs, device=device)
    next_done = torch.zeros(n, device=device)
    recent_returns: list[float] = []

    for iteration in range(1, args.num_iterations + 1):
        if args.anneal_lr:
            frac = 1.0 - (iteration - 1.0) / args.num_iterations
            optimizer.param_groups[0]["lr"] = frac * args.learning_rate

        episode_returns: list[float] = []
        episode_lengths: list[int] = []
        for step in range(args.num_steps):
            global_step += n
            obs[step] = next_obs
            dones[step] = next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
                values[step] = value.flatten()
            actions[step] = action
            logprobs[step] = logprob

            next_obs_np, reward, terminations, truncations, infos = envs.step(action.numpy())
            reward = torch.tensor(reward, dtype=torch.float32)
            if truncations.any():
                # A time limit is not a failure: bootstrap from the state the agent was in.
                slots = np.flatnonzero(truncations)
                final = np.stack(infos["final_obs"][slots])
                with torch.no_grad():
                    final_value = agent.get_value(torch.tensor(final)).flatten()
                reward[slots] += args.gamma * final_value
            rewards[step] = reward
            next_done = torch.tensor(np.logical_or(terminations, truncations), dtype=torch.float32)
            next_obs = torch.tensor(next_obs_np, device=device)

            if "_episode" in infos:
                finished = infos["_episode"]
                episode_returns.extend(infos["episode"]["r"][finished].tolist())
                episode_lengths.extend(infos["episode"]["l"][finished].tolist())

        # Generalised advantage estimation (SAME_STEP autoreset: dones[t] marks obs[t] as
        # the first observation of a new episode, exactly CleanRL's convention).
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = 0
            for t in reversed(range(args.num_steps)):
                if t == args.num_steps - 1:
                    nextnonterminal = 1.0 - next_done
                    nextvalues = next_value
                else:
                    nextnonterminal = 1.0 - dones[t + 1]
                    nextvalues = values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
                advantages[t] = lastgaelam
            returns = advantages + values

        b_obs = obs.reshape((-1, *envs.single_observation_space.shape))
        b_logprobs = logprobs.reshape(-1)
        b_actions = actions.reshape((-1, *envs.single_action_space.shape))
        b_advantages = advantages.reshape(-1)
        b_returns = returns.reshape(-1)
        b_values = values.reshape(-1)

        b_inds = np.arange(args.batch_size)
        clipfracs = []
        for _epoch in range(args.update_epochs):
            np.random.shuffle(b_inds)
            for begin in range(0, args.batch_size, args.minibatch_size):
                mb_inds = b_inds[begin : begin + args.minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                    b_obs[mb_inds], b_actions[mb_inds]
                )
                logratio = newlogprob - b_logprobs[mb_inds]
                ratio = logratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())

                mb_advantages = b_advantages[mb_inds]
                if args.norm_adv:
                    mb_advantages = (mb_advantages - mb_advantages.mean()) / (
                        mb_advantages.std() + 1e-8
                    )
                pg_loss1 = -mb_advantages * ratio
                pg_loss2 = -mb_advantages * torch.clamp(
                    ratio, 1 - args.clip_coef, 1 + args.clip_coef
                )
                pg_loss = torch.max(pg_loss1, pg_loss2).mean()

                newvalue = newvalue.view(-1)
                if args.clip_vloss:
                    v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
                    v_clipped = b_values[mb_inds] + torch.clamp(
                        newvalue - b_values[mb_inds], -args.clip_coef, args.clip_coef
                    )
                    v_loss_clipped = (v_clipped - b_returns[mb_inds]) ** 2
                    v_loss = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
                else:
                    v_loss = 0.5 * ((newvalue - b_returns[mb_inds]) ** 2).mean()

                entropy_loss = entropy.mean()
                loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
            if args.target_kl is not None and approx_kl > args.target_kl:
                break

        sps = int(global_step / (time.time() - start_time))
        if episode_returns:
            recent_returns = episode_returns
            print(
                f"iteration={iteration}, global_step={global_step}, SPS={sps}, "
                f"episodes={len(episode_returns)}, "
                f"episodic_return={np.mean(episode_returns):.3f}, "
                f"episodic_length={np.mean(episode_lengths):.1f}, "
                f"clipfrac={np.mean(clipfracs):.3f}",
                flush=True,
            )
        else:
            print(f"iteration={iteration}, global_step={global_step}, SPS={sps}", flush=True)

    envs.close()
    seconds = time.time() - start_time
    final = float(np.mean(recent_returns)) if recent_returns else float("nan")
    print(
        f"BallBalance x{n}: {global_step} steps in {seconds:.1f} s "
        f"({int(global_step / seconds)} SPS); last episodic_return={final:.3f} "
        f"(expected reward {BallBalance.expected_reward})"
    )
    if not args.short and not final >= BallBalance.expected_reward:
        print(f"FAILED: the return {final:.3f} is below the expected reward", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
