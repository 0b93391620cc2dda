"""Train RLlib PPO on zooport's two-behaviour ``Tag`` env, one policy per behaviour.

The short version::

    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv
    from ray.tune.registry import register_env
    from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
    from zooport.envs.builtin import Tag

    class TagEnv(ParallelPettingZooEnv):  # see "Workarounds" below
        def step(self, actions):
            obs, rewards, terminateds, truncateds, infos = super().step(actions)
            if not self.par_env.agents and not terminateds["__all__"]:
                truncateds["__all__"] = True
            return obs, rewards, terminateds, truncateds, infos

    register_env("tag", lambda cfg: TagEnv(PettingZooParallelEnv(Tag(restart_tagged=False))))
    config = (PPOConfig().environment("tag").env_runners(num_env_runners=2)
              .multi_agent(policies={"runner", "tagger"},
                           policy_mapping_fn=lambda agent, episode, **kw: agent.split("_")[0]))
    algo = config.build_algo()
    print(algo.train()["env_runners"]["module_episode_returns_mean"])

This script does the same with command-line options, a printed reward trend, and agents
mapped to policies through the adapter's public name map rather than by string splitting.

What happens: the ``Tag`` core has two behaviours, ``"Runner?team=0"`` (3 runners, deciding
every step) and ``"Tagger?team=1"`` (2 taggers, deciding every second step).
:class:`~zooport.adapters.pettingzoo_parallel.PettingZooParallelEnv` names their agents
``runner_0 .. runner_2`` and ``tagger_3``, ``tagger_4``; RLlib's ``ParallelPettingZooEnv``
turns that into a ``MultiAgentEnv``; agents map to the RLModules ``"runner"`` and ``"tagger"``
by :class:`~zooport.adapters.agent_names.AgentNames` (name -> behaviour). A tagged runner
leaves the episode and the arena (``Tag(restart_tagged=False)``: terminated, reward -1);
when no runner is left the taggers' episodes end too (terminated), otherwise every agent
still there is truncated at ``--max-steps``.
Sampling runs in ``--num-env-runners`` separate Ray worker processes (EnvRunner actors),
learning in this process. RLlib's new API stack (RLModule, Learner, EnvRunner, the default
in Ray 2.60) is used.

Run it::

    python examples/rllib_tag.py                   # 2 env runners, 15 iterations
    python examples/rllib_tag.py --short           # a tiny run for CI (~1 minute)
    ZOOPORT_EXAMPLE_SHORT=1 python examples/rllib_tag.py

Each iteration prints the environment steps so far and the mean episode return of each
policy (summed over that policy's agents in an episode): the taggers' return rises as they
learn to chase, the runners' falls with it (the game is competitive).

On a multi-node Ray cluster: start Ray on the head node (``ray start --head``) and on each
worker node (``ray start --address=<head-ip>:6379``), install zooport and the same
``ray[rllib]`` on every node, then run this script on the head node with
``--address auto`` (or ``RAY_ADDRESS=auto``, or ``--address <head-ip>:6379`` from a machine
in the cluster) and as many ``--num-env-runners`` as the cluster has spare CPUs: the env
runners, each with its own ``Tag`` core, are spread over the nodes; nothing else changes.
Without an address, Ray starts a local one-machine cluster.

Workarounds (Ray 2.60.0):

- ``ParallelPettingZooEnv.step`` sets ``terminateds["__all__"]`` only when every agent
  reporting in that step terminated, and ``truncateds["__all__"]`` only when every one was
  truncated. When the last agents finish in one step with a mix of the two (a runner tagged
  in the very step the others hit the time limit), neither is set, RLlib keeps stepping an
  env with no agents left, and the PettingZoo env rightly refuses. :class:`TagEnv` marks the
  episode truncated once the PettingZoo env has no agents left.
- ``ParallelPettingZooEnv`` reads ``possible_agents`` once, at construction, so agents that a
  core spawns during an episode (``Tag(spawn_every=...)``) are unknown to RLlib; this
  example keeps spawning off.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from typing import Any

# Ray reports anonymous usage statistics over the network unless told not to.
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import ray  # noqa: E402
from ray.rllib.algorithms.ppo import PPOConfig  # noqa: E402
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig  # noqa: E402
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec  # noqa: E402
from ray.rllib.core.rl_module.rl_module import RLModuleSpec  # noqa: E402
from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv  # noqa: E402
from ray.tune.registry import register_env  # noqa: E402

from zooport.adapters.agent_names import AgentNames, behavior_prefix  # noqa: E402
from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv  # noqa: E402
from zooport.envs.builtin import Tag  # noqa: E402

__all__ = ["ENV_NAME", "POLICIES", "TagEnv", "make_env", "policy_for_agent", "build_config"]

ENV_NAME = "zooport_tag"
#: Tag's behaviours, as a Unity build would name them (see Tag's docstring).
BEHAVIORS = ("Runner?team=0", "Tagger?team=1")
#: Agent name -> (behaviour, agent id), the adapter's default naming for these behaviours.
AGENT_NAMES = AgentNames(BEHAVIORS)
#: One RLModule (policy) per behaviour, named by the behaviour's agent-name prefix.
POLICIES = {behavior: behavior_prefix(behavior) for behavior in BEHAVIORS}

SHORT = {"iterations": 2, "batch": 256, "minibatch": 128, "epochs": 2, "max_steps": 40}
FULL = {"iterations": 15, "batch": 4000, "minibatch": 500, "epochs": 6, "max_steps": 200}


class TagEnv(ParallelPettingZooEnv):
    """RLlib's ``ParallelPettingZooEnv`` that ends the episode when no agent is left.

    See "Workarounds" in the module docstring: RLlib's ``__all__`` flags miss an episode
    whose last agents finish in one step, some terminated and some truncated.
    """

    def step(self, action_dict: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        obs, rewards, terminateds, truncateds, infos = super().step(action_dict)
        if not self.par_env.agents and not (terminateds["__all__"] or truncateds["__all__"]):
            truncateds["__all__"] = True
        return obs, rewards, terminateds, truncateds, infos


def make_env(env_config: dict[str, Any]) -> TagEnv:
    """One ``Tag`` core behind the PettingZoo adapter and RLlib's wrapper.

    ``env_config`` is RLlib's ``EnvContext``: ``seed`` and ``max_steps`` come from this
    script; ``worker_index`` and ``vector_index`` give every copy its own seed.
    """
    seed = env_config.get("seed")
    if seed is not None:
        worker = getattr(env_config, "worker_index", 0)
        vector = getattr(env_config, "vector_index", 0)
        seed = int(seed) + 1000 * worker + vector
    max_steps = int(env_config.get("max_steps", Tag.max_episode_steps))
    # Tagged runners leave the arena: the core's episode is the PettingZoo episode (with
    # restarts, the adapter would play restarted runners with no-op actions until the end).
    core = Tag(seed=seed, max_steps=max_steps, restart_tagged=False)
    return TagEnv(PettingZooParallelEnv(core))


def policy_for_agent(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """RLlib's ``policy_mapping_fn``: the RLModule of an agent's behaviour."""
    return POLICIES[AGENT_NAMES.lookup(agent_id).behavior]


def build_config(
    *, short: bool, num_env_runners: int, seed: int = 0, max_steps: int | None = None
) -> PPOConfig:
    """The PPO configuration: one RLModule per behaviour, sampling in worker processes.

    Also registers :func:`make_env` with Ray's env registry as :data:`ENV_NAME`.
    """
    register_env(ENV_NAME, make_env)
    size = SHORT if short else FULL
    modules = sorted(POLICIES.values())
    return (
        PPOConfig()
        .environment(
            ENV_NAME,
            env_config={"seed": seed, "max_steps": max_steps or size["max_steps"]},
        )
        .env_runners(
            num_env_runners=num_env_runners,
            num_envs_per_env_runner=1,
            num_cpus_per_env_runner=1,
            rollout_fragment_length="auto",
        )
        .multi_agent(
            policies=set(modules),
            policy_mapping_fn=policy_for_agent,
            policies_to_train=modules,
        )
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={module: RLModuleSpec() for module in modules}
            ),
            model_config=DefaultModelConfig(fcnet_hiddens=[64, 64], vf_share_layers=False),
        )
        .training(
            train_batch_size_per_learner=size["batch"],
            minibatch_size=size["minibatch"],
            num_epochs=size["epochs"],
            lr=3e-4,
            gamma=0.99,
        )
        .debugging(seed=seed)
    )


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    """The numbers this script prints from one ``algo.train()`` result."""
    runners = result.get("env_runners", {})
    learners = result.get("learners", {})
    per_module = runners.get("module_episode_returns_mean", {})
    row = {
        "iteration": result.get("training_iteration"),
        "env_steps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
        "episodes": int(runners.get("num_episodes_lifetime", 0)),
        "episode_return_mean": runners.get("episode_return_mean", math.nan),
    }
    for module in sorted(POLICIES.values()):
        row[f"{module}_return"] = per_module.get(module, math.nan)
        row[f"{module}_steps_trained"] = int(
            learners.get(module, {}).get("num_module_steps_trained_lifetime", 0)
        )
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", action="store_true", help="a tiny run for CI")
    parser.add_argument("--iterations", type=int, default=None)
    parser.add_argument("--num-env-runners", type=int, default=None)
    parser.add_argument("--max-steps", type=int, default=None, help="Tag's episode cap")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--address",
        default=None,
        help="a Ray cluster to join ('auto', 'host:6379'); default: RAY_ADDRESS, else local",
    )
    args = parser.parse_args(argv)
    short = args.short or os.environ.get("ZOOPORT_EXAMPLE_SHORT") == "1"
    size = SHORT if short else FULL
    iterations = args.iterations or size["iterations"]
    num_env_runners = args.num_env_runners or (1 if short else 2)

    if args.address or os.environ.get("RAY_ADDRESS"):
        ray.init(address=args.address)  # None: Ray reads RAY_ADDRESS
    else:
        ray.init(include_dashboard=False)
    config = build_config(
        short=short, num_env_runners=num_env_runners, seed=args.seed, max_steps=args.max_steps
    )
    algo = config.build_algo()
    print(
        f"PPO on Tag: modules {sorted(POLICIES.values())}, {num_env_runners} env runner "
        f"process(es), {iterations} iterations of {size['batch']} env steps"
    )
    header = f"{'iter':>4} {'env steps':>9} {'episodes':>8} {'runner':>8} {'tagger':>8} {'s':>6}"
    print(header)
    start = time.perf_counter()
    rows = []
    try:
        for _ in range(iterations):
            row = summarize(algo.train())
            rows.append(row)
            print(
                f"{row['iteration']:>4} {row['env_steps']:>9} {row['episodes']:>8} "
                f"{row['runner_return']:>8.3f} {row['tagger_return']:>8.3f} "
                f"{time.perf_counter() - start:>6.1f}",
                flush=True,
            )
    finally:
        algo.stop()
        ray.shutdown()
    first, last = rows[0], rows[-1]
    print(
        f"reward trend: runner {first['runner_return']:.3f} -> {last['runner_return']:.3f}, "
        f"tagger {first['tagger_return']:.3f} -> {last['tagger_return']:.3f}"
    )
    finite = all(math.isfinite(row[f"{m}_return"]) for row in rows for m in POLICIES.values())
    trained = all(last[f"{m}_steps_trained"] > 0 for m in POLICIES.values())
    if not (finite and trained):
        print("FAILED: a policy has no finite episode return or was not trained", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
