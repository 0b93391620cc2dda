"""The case table of the standing bad-input matrix (``tests/test_bad_inputs.py``).

Every public entry point (core ``BaseEnv`` methods, ``ActionTuple``, each adapter's
constructor, ``reset``, ``step``, spaces, ``state``, ``action_masks``, the wrappers,
``zooport.make``, ``gym.make`` ids, the registry, side channels, the checkers) meets each
class of bad input in :data:`KINDS`. A :class:`Case` says what is called, which zooport
error must come out, which built-in exception it must also be, what its message must name
(the expected and the given), and how the environment is used correctly afterwards: that use
must give exactly what an untouched twin of the environment gives, so a rejected input
leaves nothing behind.

The command line's rows are :data:`CLI_CASES`. A row that another branch fixes may be marked
``xfail`` with that branch in its reason, so that it turns green when the branch merges.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

import zooport
from zooport.adapters.gym_env import GymEnv
from zooport.adapters.multi_agent_task import MultiAgentTask
from zooport.adapters.pettingzoo_aec import PettingZooAECEnv
from zooport.adapters.pettingzoo_parallel import PettingZooParallelEnv
from zooport.adapters.sb3_vec_env import SB3VecEnv, SlotIndexError
from zooport.adapters.vector_env import BehaviorVectorEnv
from zooport.adapters.wrappers import (
    DiscretizeActions,
    FoldAgents,
    MessageBus,
    ParallelWrapper,
    RandomMessageDropout,
    RewardShaping,
    SingleAgentView,
    TeamReward,
    TerminationPolicy,
    WrapperOrderError,
    apply_wrappers,
)
from zooport.envs.base_env import ActionTuple, DecisionSteps, TerminalSteps
from zooport.envs.builtin import BallBalance, Basic, Collector, GridWorld, Tag
from zooport.envs.checker import check_base_env
from zooport.envs.registry import UnknownEnvironmentError, default_registry
from zooport.envs.side_channel import (
    EngineConfigurationChannel,
    EnvironmentParametersChannel,
    IncomingMessage,
    OutgoingMessage,
    SideChannelTypeError,
    StatsSideChannel,
)
from zooport.errors import (
    ActionError,
    ArgumentError,
    ArgumentTypeError,
    EnvClosedError,
    EnvNotResetError,
    ObservationError,
    ReentrantCallError,
    RegistryError,
    SideChannelError,
    SpecError,
    UnknownAgentError,
    UnknownBehaviorError,
    ZooportError,
)

from tests.support.errors import ERRORS
from tests.support.raw_cores import CoreProxy, with_rows
from tests.support.scene import Scene, rows as scene_rows

__all__ = ["Case", "CLI_CASES", "CASES", "KINDS", "POOL_CASES", "entry_points"]

#: The classes of bad input; every row is one of them.
KINDS = (
    "wrong type", "shape", "dtype", "rank", "range", "non-finite", "unknown name",
    "stale name", "order", "before reset", "after close", "re-entrant",
)  # fmt: skip

#: What a re-entrant call's message names: the call and the one already running.
REENTERED = ("was called while", "running")

RUNNER, TAGGER = "Runner?team=0", "Tagger?team=1"

#: The built-in exception each zooport error must also be.
BUILTIN: dict[type[ZooportError], type[BaseException]] = {
    error: builtin for error, (_, builtin) in ERRORS.items()
}


@dataclass(frozen=True)
class Case:
    """One bad input at one entry point.

    Attributes:
        entry: the public entry point (``"GymEnv.step"``).
        kind: one of :data:`KINDS`.
        given: the bad input, short (part of the test id).
        make: a fresh environment (or anything the call needs); deterministic, so that a
            second call makes the untouched twin.
        call: does the bad thing to what ``make`` gave.
        error: the zooport error expected (the test also asserts ``BUILTIN[error]``).
        says: fragments the message must contain: what was expected and what was given.
        after: a correct use afterwards, returning data; it must equal the twin's. None
            where nothing is left to use (constructors, closed environments).
        xfail: the reason a row fails until another branch merges, or None.
        twin: makes the untouched twin, when ``make`` arms something the twin must not
            have (a hook that calls back in, a step that fails); None: ``make`` again.
    """

    entry: str
    kind: str
    given: str
    make: Callable[[], Any]
    call: Callable[[Any], Any]
    error: type[ZooportError]
    says: tuple[str, ...]
    after: Callable[[Any], Any] | None = None
    xfail: str | None = None
    twin: Callable[[], Any] | None = None

    @property
    def builtin(self) -> type[BaseException]:
        return BUILTIN[self.error]

    @property
    def id(self) -> str:
        return f"{self.entry}[{self.kind}: {self.given}]"


def entry_points(cases: list[Case]) -> list[str]:
    """The distinct entry points of ``cases``, in order of appearance."""
    return list(dict.fromkeys(case.entry for case in cases))


# ---------------------------------------------------------------------- makers and uses


def _reset(env: Any, seed: int = 0) -> Any:
    env.reset(seed=seed)
    return env


def nothing() -> None:
    """``make`` of rows whose call builds what it needs (constructors)."""


def zeros_of(space: spaces.Space) -> Any:
    """The all-zero (first) action of ``space``."""
    if isinstance(space, spaces.Dict):
        return {key: zeros_of(sub) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Discrete):
        return int(space.start)
    return np.zeros(space.shape, space.dtype)


def core_tag() -> Tag:
    return _reset(Tag(seed=0))


def core_ball() -> BallBalance:
    return _reset(BallBalance(n_agents=3, seed=0))


def core_step(core: Any) -> dict[str, Any]:
    """Zero actions for every behaviour, one step; the steps as plain arrays."""
    for name, spec in core.behavior_specs.items():
        decision, _ = core.get_steps(name)
        core.set_actions(name, spec.action_spec.empty_action(len(decision)))
    core.step()
    out = {}
    for name in core.behavior_specs:
        decision, terminal = core.get_steps(name)
        out[name] = (
            decision.obs, decision.reward, decision.agent_id,
            terminal.obs, terminal.reward, terminal.agent_id,
        )  # fmt: skip
    return out


def core_fresh(core: Any) -> dict[str, Any]:
    core.reset(seed=0)
    return core_step(core)


def space_step(env: Any) -> Any:
    """One step of the zero action of ``env.action_space`` (a Gymnasium env's action, or a
    Gymnasium vector env's batch)."""
    return env.step(zeros_of(env.action_space))


def space_fresh(env: Any) -> Any:
    return env.reset(seed=0), space_step(env)


def gym_basic() -> GymEnv:
    return _reset(GymEnv(Basic(seed=0)))


def gym_grid_rgb() -> GymEnv:
    return _reset(GymEnv(GridWorld(n_agents=1), render_mode="rgb_array"))


def gym_ball() -> GymEnv:
    return _reset(GymEnv(BallBalance(n_agents=1, seed=0)))


def gym_collector() -> GymEnv:
    return _reset(GymEnv(Collector(n_agents=1, seed=0)))


def vec_ball() -> BehaviorVectorEnv:
    return _reset(BehaviorVectorEnv(BallBalance(n_agents=3, seed=0)))


def vec_grid() -> BehaviorVectorEnv:
    return _reset(BehaviorVectorEnv(GridWorld(n_agents=2, seed=0)))


def sb3_ball() -> SB3VecEnv:
    env = SB3VecEnv(BallBalance(n_agents=3, seed=0))
    env.seed(0)
    env.reset()
    return env


def sb3_grid() -> SB3VecEnv:
    env = SB3VecEnv(GridWorld(n_agents=2, seed=0))
    env.seed(0)
    env.reset()
    return env


def sb3_step(env: Any) -> Any:
    return env.step(np.stack([zeros_of(env.action_space)] * env.num_envs))


def sb3_fresh(env: Any) -> Any:
    env.seed(0)
    return env.reset(), sb3_step(env)


def par_tag(**options: Any) -> PettingZooParallelEnv:
    return _reset(PettingZooParallelEnv(Tag(seed=0), **options))


def par_ball() -> PettingZooParallelEnv:
    return _reset(PettingZooParallelEnv(BallBalance(n_agents=2, seed=0)))


def par_collector() -> PettingZooParallelEnv:
    return _reset(PettingZooParallelEnv(Collector(n_agents=2, seed=0)))


def par_step(env: Any) -> Any:
    return env.step({agent: zeros_of(env.action_space(agent)) for agent in env.agents})


def par_fresh(env: Any) -> Any:
    return env.reset(seed=0), par_step(env)


def aec_tag(**options: Any) -> PettingZooAECEnv:
    return _reset(PettingZooAECEnv(Tag(seed=0), **options))


def aec_collector() -> PettingZooAECEnv:
    return _reset(PettingZooAECEnv(Collector(n_agents=2, seed=0)))


def aec_cycle(env: Any) -> Any:
    """One full cycle (every agent acts once, zero actions); what every agent sees after."""
    for _ in range(len(env.agents)):
        obs, reward, terminated, truncated, info = env.last()
        agent = env.agent_selection
        env.step(None if terminated or truncated else zeros_of(env.action_space(agent)))
    return {agent: env.observe(agent) for agent in env.agents}, dict(env.rewards)


def aec_fresh(env: Any) -> Any:
    env.reset(seed=0)
    return aec_cycle(env)


def aec_last_turn(action: Any) -> Callable[[Any], Any]:
    """Every agent of the cycle but the last acts correctly; the last gives ``action``."""

    def call(env: Any) -> None:
        for _ in range(len(env.agents) - 1):
            env.step(zeros_of(env.action_space(env.agent_selection)))
        env.step(action)

    return call


def task_tag(**options: Any) -> MultiAgentTask:
    task = MultiAgentTask(Tag(seed=0), **options)
    task.reset(seed=0)
    return task


def task_step(task: Any) -> Any:
    return task.step_all({agent: 0 for agent in task.agents})


def task_fresh(task: Any) -> Any:
    return task.reset(seed=0), task_step(task)


def closed(make: Callable[[], Any]) -> Callable[[], Any]:
    """``make``, then ``close()``."""

    def build() -> Any:
        env = make()
        env.close()
        return env

    return build


def all_agents(value: Any) -> Callable[[Any], Any]:
    """A Parallel step giving every live agent ``value``."""
    return lambda env: env.step(dict.fromkeys(env.agents, value))


def first_agent(value: Any) -> Callable[[Any], Any]:
    """A Parallel step giving the first live agent ``value``, the others a zero action."""

    def call(env: Any) -> Any:
        actions = {agent: zeros_of(env.action_space(agent)) for agent in env.agents}
        actions[env.agents[0]] = value
        return env.step(actions)

    return call


def hybrid(**parts: Any) -> dict[str, Any]:
    return {"continuous": np.zeros(2, np.float32), "discrete": 0, **parts}


def spawned_then_reset() -> PettingZooParallelEnv:
    """Tag spawning a runner (``runner_5``) at step 3, reset before step 3 of the next episode."""
    env = PettingZooParallelEnv(Tag(seed=0, spawn_every=3))
    env.reset(seed=0)
    for _ in range(3):
        par_step(env)
    assert "runner_5" in env.possible_agents
    env.reset(seed=0)
    return env


def aec_after_everyone_left() -> PettingZooAECEnv:
    """One cycle with ``max_cycles=1``: every agent truncated and, with ``None``, gone."""
    env = aec_tag(max_cycles=1)
    aec_cycle(env)
    while env.agents:
        env.step(None)
    return env


def aec_with_dead_agents() -> PettingZooAECEnv:
    """Every agent truncated, none gone yet; an action for one of them is refused on request
    (by default it is ignored, as actions for finished agents are)."""
    env = aec_tag(max_cycles=1, stale_actions="raise")
    aec_cycle(env)
    return env


# ---------------------------------------------------------------------- hooks for re-entry


class _StepHook:
    """A core whose ``_step`` first runs ``hook``, once (a user's core calling back in)."""

    hook: Callable[[], Any] | None = None

    def _step(self, actions):
        hook, self.hook = self.hook, None
        if hook is not None:
            hook()
        return super()._step(actions)


class _Hooked(_StepHook, BallBalance):
    """BallBalance with a step hook."""


class _HookedTag(_StepHook, Tag):
    """Tag with a step hook."""


class _FailAt:
    """A core whose ``_step`` raises once, after ``fail_at`` steps."""

    fail_at = -1

    def _step(self, actions):
        self.fail_at -= 1
        if self.fail_at == 0:
            raise RuntimeError("boom: the physics exploded")
        return super()._step(actions)


class _Failing(_FailAt, BallBalance):
    """BallBalance that fails at a step."""


class _FailingTag(_FailAt, Tag):
    """Tag that fails at a step."""


class _CallbackStats(StatsSideChannel):
    """A statistics channel whose callback runs ``hook`` once."""

    hook: Callable[[], Any] | None = None

    def on_message_received(self, msg):
        hook, self.hook = self.hook, None
        if hook is not None:
            hook()
        super().on_message_received(msg)


def vec_hooked() -> BehaviorVectorEnv:
    return _reset(BehaviorVectorEnv(_Hooked(n_agents=3, seed=0)))


def vec_reentered_from_core() -> BehaviorVectorEnv:
    env = vec_hooked()
    env.core.hook = lambda: space_step(env)
    return env


def par_hooked() -> PettingZooParallelEnv:
    return _reset(PettingZooParallelEnv(_HookedTag(seed=0)))


def par_reentered_from_core() -> PettingZooParallelEnv:
    env = par_hooked()
    env.core.hook = lambda: par_step(env)
    return env


def vec_with_channel() -> BehaviorVectorEnv:
    channel = _CallbackStats()
    return _reset(BehaviorVectorEnv(BallBalance(n_agents=3, seed=0, side_channels=[channel])))


def vec_reentered_from_channel() -> BehaviorVectorEnv:
    env = vec_with_channel()
    env.side_channels[0].hook = lambda: env.reset(seed=1)
    return env


def step_until_channel_fires(env: Any) -> None:
    """Steps until BallBalance sends its first statistic (an episode ends) to the callback."""
    stats = env.side_channels[0]
    for _ in range(500):
        space_step(env)
        if stats.hook is None:
            return
    raise AssertionError("the side-channel callback never ran")


def fold_plain() -> FoldAgents:
    return _reset(FoldAgents(PettingZooParallelEnv(Tag(seed=0)), _zero_policy, behavior="tagger"))


def _zero_policy(observation: Any) -> int:
    return 0


def fold_reentered_from_policy() -> FoldAgents:
    base = PettingZooParallelEnv(Tag(seed=0))
    holder: dict[str, Any] = {}

    def policy(observation: Any) -> int:
        if holder.pop("armed", False):
            par_step(holder["env"])
        return 0

    env = FoldAgents(base, policy, behavior="tagger")
    holder["env"], holder["armed"] = env, True
    env.reset(seed=0)
    holder["armed"] = True
    return env


def vec_failing_core() -> BehaviorVectorEnv:
    return _reset(BehaviorVectorEnv(_Failing(n_agents=3, seed=0)))


def vec_failing() -> BehaviorVectorEnv:
    env = vec_failing_core()
    env.core.fail_at = 1
    return env


def par_failing_core() -> PettingZooParallelEnv:
    return _reset(PettingZooParallelEnv(_FailingTag(seed=0)))


def par_failing() -> PettingZooParallelEnv:
    env = par_failing_core()
    env.core.fail_at = 1
    return env


def step_after_failure(step: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """The step that raised the user's error is caught; the next step must refuse."""

    def call(env: Any) -> Any:
        try:
            step(env)
        except RuntimeError as error:
            assert "boom" in str(error)
        return step(env)

    return call


# ---------------------------------------------------------------------- the table

# The table keeps one case a line or two, so it reads as a table; the formatter would
# spread each over a dozen lines.
# fmt: off

C = Case
WRONG, SHAPE, DTYPE, RANK, RANGE, NONFINITE = KINDS[:6]
UNKNOWN, STALE, ORDER, BEFORE, CLOSED, REENTRANT = KINDS[6:]
SEED = ("seed", "None or an int >= 0")
OPTIONS = ("options", "None or a dict with str keys")


def after_close(entry: str, make: Callable[[], Any], call: Callable[[Any], Any]) -> Case:
    """The row of ``entry`` called on an env ``make`` built and closed: an EnvClosedError
    naming ``close()`` (the same expectation for every entry point)."""
    return C(entry, CLOSED, "after close", closed(make), call, EnvClosedError, ("close()",))


CASES: list[Case] = [
    # ------------------------------------------------------------ core (BatchedEnv)
    C("BatchedEnv()", RANGE, "seed=-1", nothing, lambda _: Tag(seed=-1), ArgumentError,
      (*SEED, "got -1")),
    C("BatchedEnv()", WRONG, "seed=[1, 2]", nothing, lambda _: Tag(seed=[1, 2]),
      ArgumentTypeError, (*SEED, "list [1, 2]")),
    C("BatchedEnv()", WRONG, "seed=1.5", nothing, lambda _: Basic(seed=1.5), ArgumentTypeError,
      (*SEED, "float 1.5")),
    C("BatchedEnv()", WRONG, "max_steps='x'", nothing, lambda _: Tag(max_steps="x"),
      ArgumentTypeError, ("Tag: Expect max_steps to be an int", "'x'")),
    C("BatchedEnv()", RANGE, "max_steps=-1", nothing, lambda _: Basic(max_steps=-1),
      ArgumentError, ("Basic: Expect max_steps >= 0", "-1")),
    C("BatchedEnv()", WRONG, "side_channels=5", nothing, lambda _: BallBalance(side_channels=5),
      SideChannelTypeError, ("side_channels", "list of side channels", "int")),
    C("BatchedEnv()", WRONG, "side_channels=[5]", nothing,
      lambda _: BallBalance(side_channels=[5]), SideChannelTypeError,
      ("side_channels[0]", "SideChannel", "int")),
    C("BallBalance()", RANGE, "n_agents=0", nothing, lambda _: BallBalance(n_agents=0),
      ArgumentError, ("n_agents >= 1", "0")),
    C("BallBalance()", WRONG, "n_agents='3'", nothing, lambda _: BallBalance(n_agents="3"),
      ArgumentTypeError, ("n_agents", "int", "'3'")),
    C("BallBalance()", RANGE, "n_agents=2**40", nothing, lambda _: BallBalance(n_agents=2**40),
      ArgumentError, ("n_agents <= 2147483647", str(2**40))),
    C("BatchedEnv()", WRONG, "reorder_agents=[]", nothing,
      lambda _: Basic(reorder_agents=np.zeros(0)), ArgumentTypeError,
      ("reorder_agents", "bool", "ndarray")),
    C("Tag()", RANGE, "tag_radius=5", nothing, lambda _: Tag(tag_radius=5.0), ArgumentError,
      ("0 < tag_radius < 2", "5.0")),
    C("Tag()", WRONG, "restart_tagged='no'", nothing, lambda _: Tag(restart_tagged="no"),
      ArgumentTypeError, ("restart_tagged", "bool", "'no'")),
    C("Collector()", RANGE, "reach=3", nothing, lambda _: Collector(reach=3.0), ArgumentError,
      ("reach", "3.0")),
    C("GridWorld()", RANGE, "n_agents=0", nothing, lambda _: GridWorld(n_agents=0),
      ArgumentError, ("n_agents", "1", "0")),
    C("BaseEnv.reset", RANGE, "seed=-1", core_tag, lambda env: env.reset(seed=-1), ArgumentError,
      ("Tag.reset", *SEED, "got -1"), core_step),
    C("BaseEnv.reset", WRONG, "seed=[1, 2]", core_tag, lambda env: env.reset(seed=[1, 2]),
      ArgumentTypeError, ("Tag.reset", *SEED, "list [1, 2]"), core_step),
    C("BaseEnv.reset", WRONG, "seed=True", core_tag, lambda env: env.reset(seed=True),
      ArgumentTypeError, (*SEED, "bool True"), core_step),
    C("BaseEnv.set_actions", WRONG, "ndarray", core_tag,
      lambda env: env.set_actions(RUNNER, np.zeros((3, 1), np.int32)), ActionError,
      ("ActionTuple", "ndarray"), core_step),
    C("BaseEnv.set_actions", SHAPE, "2 rows for 3 agents", core_tag,
      lambda env: env.set_actions(RUNNER, ActionTuple(discrete=np.zeros((2, 1), np.int32))),
      ActionError, ("(3, 1)", "(2, 1)"), core_step),
    C("BaseEnv.set_actions", RANGE, "discrete 5 of 5", core_tag,
      lambda env: env.set_actions(RUNNER, ActionTuple(discrete=[[5], [0], [0]])), ActionError,
      ("[0, 4]", "got 5"), core_step),
    C("BaseEnv.set_actions", RANGE, "discrete -1", core_tag,
      lambda env: env.set_actions(RUNNER, ActionTuple(discrete=[[0], [-1], [0]])), ActionError,
      ("[0, 4]", "got -1"), core_step),
    C("BaseEnv.set_actions", NONFINITE, "continuous nan", core_ball,
      lambda env: env.set_actions("BallBalance", ActionTuple(continuous=np.full((3, 2), np.nan))),
      ActionError, ("finite", "nan"), core_step),
    C("BaseEnv.set_actions", SHAPE, "3 continuous of 2", core_ball,
      lambda env: env.set_actions("BallBalance", ActionTuple(continuous=np.zeros((3, 3)))),
      ActionError, ("(3, 2)", "(3, 3)"), core_step),
    C("BaseEnv.set_actions", UNKNOWN, "behaviour 'Nope'", core_tag,
      lambda env: env.set_actions("Nope", ActionTuple(discrete=[[0]])), UnknownBehaviorError,
      ("'Nope'", RUNNER), core_step),
    C("BaseEnv.set_action_for_agent", UNKNOWN, "agent 99", core_tag,
      lambda env: env.set_action_for_agent(RUNNER, 99, ActionTuple(discrete=[[0]])),
      UnknownAgentError, ("99", "[0, 1, 2]"), core_step),
    C("BaseEnv.set_action_for_agent", WRONG, "agent [1]", core_tag,
      lambda env: env.set_action_for_agent(RUNNER, [1], ActionTuple(discrete=[[0]])),
      UnknownAgentError, ("[1]", "[0, 1, 2]"), core_step),
    C("BaseEnv.get_steps", UNKNOWN, "behaviour 'Nope'", core_tag,
      lambda env: env.get_steps("Nope"), UnknownBehaviorError, ("'Nope'", RUNNER), core_step),
    C("BaseEnv.get_steps", WRONG, "behaviour ['x']", core_tag,
      lambda env: env.get_steps(["x"]), UnknownBehaviorError, ("['x']", RUNNER), core_step),
    C("DecisionSteps[agent]", UNKNOWN, "agent 99", core_tag,
      lambda env: env.get_steps(RUNNER)[0][99], UnknownAgentError, ("99", "[0, 1, 2]"),
      core_step),
    C("BaseEnv.step", BEFORE, "no reset", lambda: Tag(seed=0), lambda env: env.step(),
      EnvNotResetError, ("reset()",), core_fresh),
    C("BaseEnv.get_steps", BEFORE, "no reset", lambda: Tag(seed=0),
      lambda env: env.get_steps(RUNNER), EnvNotResetError, ("reset()",), core_fresh),
    C("BaseEnv.set_actions", BEFORE, "no reset", lambda: Tag(seed=0),
      lambda env: env.set_actions(RUNNER, ActionTuple(discrete=[[0]])), EnvNotResetError,
      ("reset()",), core_fresh),
    after_close("BaseEnv.step", core_tag, lambda env: env.step()),
    after_close("BaseEnv.reset", core_tag, lambda env: env.reset()),
    after_close("BaseEnv.behavior_specs", core_tag, lambda env: env.behavior_specs),
    after_close("BaseEnv.get_steps", core_tag, lambda env: env.get_steps(RUNNER)),
    # ------------------------------------------------------------ ActionTuple
    C("ActionTuple()", RANK, "discrete rank 1", nothing,
      lambda _: ActionTuple(discrete=np.zeros(3, np.int32)), ActionError, ("rank 2", "rank 1")),
    C("ActionTuple()", DTYPE, "discrete str", nothing, lambda _: ActionTuple(discrete=[["a"]]),
      ActionError, ("integer discrete actions", "<U1")),
    C("ActionTuple()", DTYPE, "discrete 1.5", nothing, lambda _: ActionTuple(discrete=[[1.5]]),
      ActionError, ("integer discrete actions", "non-integral")),
    C("ActionTuple()", RANGE, "discrete 2**40", nothing, lambda _: ActionTuple(discrete=[[2**40]]),
      ActionError, ("int32 range", str(2**40))),
    C("ActionTuple()", SHAPE, "ragged continuous", nothing,
      lambda _: ActionTuple(continuous=[[1.0], [1.0, 2.0]]), ActionError,
      ("rectangular array", "list")),
    C("ActionTuple()", SHAPE, "rows disagree", nothing,
      lambda _: ActionTuple(continuous=np.zeros((2, 1)), discrete=np.zeros((3, 1), np.int32)),
      ActionError, ("3 rows", "2")),
    # ------------------------------------------------------------ GymEnv
    C("GymEnv()", UNKNOWN, "render_mode='human'", nothing,
      lambda _: GymEnv(Basic(), render_mode="human"), ArgumentError,
      ("render_mode", "'rgb_array'", "'human'")),
    C("GymEnv()", UNKNOWN, "behavior_name='Nope'", nothing,
      lambda _: GymEnv(Tag(n_runners=1, n_taggers=1), "Nope"), UnknownBehaviorError,
      ("'Nope'", RUNNER)),
    C("GymEnv()", WRONG, "env=5", nothing, lambda _: GymEnv(5), ArgumentTypeError,
      ("BaseEnv", "int")),
    C("GymEnv()", WRONG, "render_mode=[]", nothing,
      lambda _: GymEnv(Basic(), render_mode=np.zeros(0)), ArgumentError,
      ("render_mode", "'rgb_array'", "array([]")),
    C("GymEnv()", WRONG, "behavior_name=5", nothing, lambda _: GymEnv(Basic(), 5),
      ArgumentTypeError, ("behavior_name", "['Basic']", "int 5")),
    C("GymEnv()", RANGE, "action_space_seed=-1", nothing,
      lambda _: GymEnv(Basic(), action_space_seed=-1), ArgumentError,
      ("action_space_seed", *SEED, "-1")),
    C("GymEnv()", SHAPE, "3 agents", nothing, lambda _: GymEnv(BallBalance(n_agents=3)),
      SpecError, ("one agent", "3 agents")),
    C("GymEnv.reset", RANGE, "seed=-1", gym_basic, lambda env: env.reset(seed=-1), ArgumentError,
      ("GymEnv.reset", *SEED, "-1"), space_fresh),
    C("GymEnv.reset", WRONG, "seed='0'", gym_basic, lambda env: env.reset(seed="0"),
      ArgumentTypeError, (*SEED, "str '0'"), space_fresh),
    C("GymEnv.reset", WRONG, "options=5", gym_basic, lambda env: env.reset(options=5),
      ArgumentTypeError, (*OPTIONS, "int 5"), space_fresh),
    C("GymEnv.reset", WRONG, "options={1: 2}", gym_basic, lambda env: env.reset(options={1: 2}),
      ArgumentTypeError, (*OPTIONS, "[1]"), space_fresh),
    C("GymEnv.step", RANK, "[[1]] for Discrete", gym_basic, lambda env: env.step([[1]]),
      ActionError, ("shape ()", "(1, 1)"), space_step),
    C("GymEnv.step", RANGE, "3 for Discrete(3)", gym_basic, lambda env: env.step(3), ActionError,
      ("[0, 2]", "got 3"), space_step),
    C("GymEnv.step", RANGE, "-1", gym_basic, lambda env: env.step(-1), ActionError,
      ("[0, 2]", "got -1"), space_step),
    C("GymEnv.step", RANGE, "2**32 + 1", gym_basic, lambda env: env.step(2**32 + 1), ActionError,
      ("4294967297",), space_step),
    C("GymEnv.step", NONFINITE, "inf", gym_basic, lambda env: env.step(float("inf")),
      ActionError, ("inf",), space_step),
    C("GymEnv.step", NONFINITE, "nan", gym_basic, lambda env: env.step(float("nan")),
      ActionError, ("integer discrete actions in [0, 2]", "nan"), space_step),
    C("GymEnv.step", DTYPE, "'a'", gym_basic, lambda env: env.step("a"), ActionError,
      ("integer", "<U1"), space_step),
    C("GymEnv.step", DTYPE, "1.5", gym_basic, lambda env: env.step(1.5), ActionError,
      ("integer discrete actions in [0, 2]", "1.5"), space_step),
    C("GymEnv.step", WRONG, "None", gym_basic, lambda env: env.step(None), ActionError,
      ("integer", "object"), space_step),
    C("GymEnv.step", SHAPE, "3 values for Box(2)", gym_ball, lambda env: env.step(np.zeros(3)),
      ActionError, ("(2,)", "(3,)"), space_step),
    C("GymEnv.step", SHAPE, "ragged list", gym_ball, lambda env: env.step([[0.0], [0.0, 0.0]]),
      ActionError, ("Box(-1.0, 1.0, (2,), float32)", "list"), space_step),
    C("GymEnv.step", NONFINITE, "nan continuous", gym_ball,
      lambda env: env.step(np.array([np.nan, 0.0], np.float32)), ActionError,
      ("finite", "nan"), space_step),
    C("GymEnv.step", DTYPE, "str continuous", gym_ball, lambda env: env.step(np.array(["a", "b"])),
      ActionError, ("numeric", "<U1"), space_step),
    C("GymEnv.step", UNKNOWN, "hybrid extra key", gym_collector,
      lambda env: env.step(hybrid(extra=0)), ActionError,
      ("['continuous', 'discrete']", "'extra'"), space_step),
    C("GymEnv.step", WRONG, "hybrid as ndarray", gym_collector,
      lambda env: env.step(np.zeros(3)), ActionError, ("dict action", "ndarray"), space_step),
    C("GymEnv.step", BEFORE, "no reset", lambda: GymEnv(Basic(seed=0)), lambda env: env.step(1),
      EnvNotResetError, ("reset()",), space_fresh),
    after_close("GymEnv.step", gym_basic, lambda env: env.step(1)),
    after_close("GymEnv.reset", gym_basic, lambda env: env.reset()),
    after_close("GymEnv.action_masks", gym_basic, lambda env: env.action_masks()),
    after_close("GymEnv.render", gym_grid_rgb, lambda env: env.render()),
    # ------------------------------------------------------------ BehaviorVectorEnv
    C("BehaviorVectorEnv()", UNKNOWN, "render_mode='human'", nothing,
      lambda _: BehaviorVectorEnv(BallBalance(), render_mode="human"), ArgumentError,
      ("render_mode", "'rgb_array'", "'human'")),
    C("BehaviorVectorEnv()", UNKNOWN, "behavior_name='Nope'", nothing,
      lambda _: BehaviorVectorEnv(Tag(), "Nope"), UnknownBehaviorError, ("'Nope'", RUNNER)),
    C("BehaviorVectorEnv()", UNKNOWN, "no behavior_name, two behaviours", nothing,
      lambda _: BehaviorVectorEnv(Tag()), UnknownBehaviorError, ("behavior_name=", RUNNER)),
    C("BehaviorVectorEnv.reset", RANGE, "seed=-1", vec_ball, lambda env: env.reset(seed=-1),
      ArgumentError, ("BehaviorVectorEnv.reset", *SEED, "-1"), space_fresh),
    C("BehaviorVectorEnv.reset", WRONG, "options=5", vec_ball, lambda env: env.reset(options=5),
      ArgumentTypeError, (*OPTIONS, "int 5"), space_fresh),
    C("BehaviorVectorEnv.step", SHAPE, "ragged list", vec_ball,
      lambda env: env.step([[0.0, 0.0], [0.0], [0.0, 0.0]]), ActionError,
      ("batch of 3 actions", "list"), space_step),
    C("BehaviorVectorEnv.step", SHAPE, "2 rows for 3 slots", vec_ball,
      lambda env: env.step(np.zeros((2, 2))), ActionError, ("(3, 2)", "(2, 2)"), space_step),
    C("BehaviorVectorEnv.step", RANK, "rank 1", vec_ball, lambda env: env.step(np.zeros(3)),
      ActionError, ("(3, 2)", "(3,)"), space_step),
    C("BehaviorVectorEnv.step", NONFINITE, "nan", vec_ball,
      lambda env: env.step(np.full((3, 2), np.nan)), ActionError, ("finite", "nan"), space_step),
    C("BehaviorVectorEnv.step", DTYPE, "str", vec_ball,
      lambda env: env.step(np.full((3, 2), "a")), ActionError, ("numeric", "<U1"), space_step),
    C("BehaviorVectorEnv.step", WRONG, "None", vec_ball, lambda env: env.step(None), ActionError,
      ("(3, 2)", "shape ()"), space_step),
    C("BehaviorVectorEnv.step", RANGE, "5 of Discrete(5)", vec_grid,
      lambda env: env.step(np.array([5, 0])), ActionError, ("[0, 4]", "got 5"), space_step),
    C("BehaviorVectorEnv.step", RANK, "[[1], [1]] for Discrete", vec_grid,
      lambda env: env.step(np.array([[1], [1]])), ActionError, ("(2,)", "(2, 1)"), space_step),
    C("BehaviorVectorEnv.step", RANGE, "2**32 + 1", vec_grid,
      lambda env: env.step(np.array([2**32 + 1, 0])), ActionError, ("4294967297",), space_step),
    C("BehaviorVectorEnv.step", NONFINITE, "inf", vec_grid,
      lambda env: env.step(np.array([np.inf, 0.0])), ActionError, ("inf",), space_step),
    after_close("BehaviorVectorEnv.step", vec_ball, lambda env: env.step(np.zeros((3, 2)))),
    after_close("BehaviorVectorEnv.reset", vec_ball, lambda env: env.reset()),
    after_close("BehaviorVectorEnv.action_masks", vec_grid, lambda env: env.action_masks()),
    C("BehaviorVectorEnv.step", REENTRANT, "from a core hook", vec_reentered_from_core,
      space_step, ReentrantCallError, REENTERED, space_fresh, twin=vec_hooked),
    C("BehaviorVectorEnv.reset", REENTRANT, "from a side-channel callback",
      vec_reentered_from_channel, step_until_channel_fires, ReentrantCallError, REENTERED,
      space_fresh, twin=vec_with_channel),
    C("BehaviorVectorEnv.step", BEFORE, "after a mid-step exception", vec_failing,
      step_after_failure(space_step), EnvNotResetError, ("boom",), space_fresh,
      twin=vec_failing_core),
    # ------------------------------------------------------------ SB3VecEnv
    C("SB3VecEnv()", UNKNOWN, "render_mode='human'", nothing,
      lambda _: SB3VecEnv(BallBalance(), render_mode="human"), ArgumentError,
      ("render_mode", "'human'")),
    C("SB3VecEnv.step", WRONG, "None", sb3_ball, lambda env: env.step(None), ActionError,
      ("(3, 2)", "shape ()"), sb3_step),
    C("SB3VecEnv.step", SHAPE, "2 rows for 3 envs", sb3_ball,
      lambda env: env.step(np.zeros((2, 2))), ActionError, ("(3, 2)", "(2, 2)"), sb3_step),
    C("SB3VecEnv.step", SHAPE, "ragged list", sb3_ball,
      lambda env: env.step([[0.0, 0.0], [0.0], [0.0, 0.0]]), ActionError,
      ("batch of 3 actions", "list"), sb3_step),
    C("SB3VecEnv.step", RANGE, "5 of Discrete(5)", sb3_grid,
      lambda env: env.step(np.array([5, 0])), ActionError, ("[0, 4]", "got 5"), sb3_step),
    C("SB3VecEnv.step", RANGE, "2**32 + 1", sb3_grid,
      lambda env: env.step(np.array([2**32 + 1, 0])), ActionError, ("4294967297",), sb3_step),
    C("SB3VecEnv.step", NONFINITE, "inf", sb3_grid,
      lambda env: env.step(np.array([np.inf, 0.0])), ActionError, ("inf",), sb3_step),
    C("SB3VecEnv.seed", RANGE, "-1", sb3_ball, lambda env: env.seed(-1), ArgumentError,
      ("SB3VecEnv.seed", *SEED, "-1"), sb3_fresh),
    C("SB3VecEnv.reset", WRONG, "set_options(5)", sb3_ball,
      lambda env: (env.set_options(5), env.reset()), ArgumentTypeError, (*OPTIONS, "int 5"),
      sb3_fresh),
    C("SB3VecEnv.get_attr", RANGE, "indices=[7]", sb3_ball,
      lambda env: env.get_attr("n_agents", indices=[7]), SlotIndexError, ("[0, 2]", "[7]"),
      sb3_step),
    C("SB3VecEnv.env_method", WRONG, "method name 5", sb3_ball,
      lambda env: env.env_method(5), ArgumentTypeError, ("attribute name (str)", "int 5"),
      sb3_step),
    C("SB3VecEnv.set_attr", SHAPE, "indices=[0]", sb3_ball,
      lambda env: env.set_attr("n_agents", 3, indices=[0]), ArgumentError,
      ("all 3 indices", "[0]"), sb3_step),
    after_close("SB3VecEnv.step", sb3_ball, lambda env: env.step(np.zeros((3, 2)))),
    after_close("SB3VecEnv.action_masks", sb3_grid, lambda env: env.action_masks()),
    C("SB3VecEnv.env_method", CLOSED, "action_masks after close", closed(sb3_grid),
      lambda env: env.env_method("action_masks"), EnvClosedError, ("close()",)),
    # ------------------------------------------------------------ PettingZooParallelEnv
    C("PettingZooParallelEnv()", UNKNOWN, "termination_mode='most'", nothing,
      lambda _: PettingZooParallelEnv(Tag(), termination_mode="most"), ArgumentError,
      ("'any', 'majority', 'all'", "'most'")),
    C("PettingZooParallelEnv()", RANGE, "termination_mode=1.5", nothing,
      lambda _: PettingZooParallelEnv(Tag(), termination_mode=1.5), ArgumentError,
      ("(0, 1]", "1.5")),
    C("PettingZooParallelEnv()", WRONG, "termination_mode=3", nothing,
      lambda _: PettingZooParallelEnv(Tag(), termination_mode=3), ArgumentTypeError,
      ("'any', 'majority', 'all'", "3")),
    C("PettingZooParallelEnv()", RANGE, "max_cycles=0", nothing,
      lambda _: PettingZooParallelEnv(Tag(), max_cycles=0), ArgumentError,
      ("max_cycles", "int >= 1", "0")),
    C("PettingZooParallelEnv()", WRONG, "max_cycles='x'", nothing,
      lambda _: PettingZooParallelEnv(Tag(), max_cycles="x"), ArgumentTypeError,
      ("max_cycles", "int >= 1", "'x'")),
    C("PettingZooParallelEnv()", UNKNOWN, "default_action='one'", nothing,
      lambda _: PettingZooParallelEnv(Tag(), default_action="one"), ArgumentError,
      ("'zero'", "'one'")),
    C("PettingZooParallelEnv()", WRONG, "default_action=5", nothing,
      lambda _: PettingZooParallelEnv(Tag(), default_action=5), ArgumentTypeError,
      ("'zero'", "5")),
    C("PettingZooParallelEnv()", UNKNOWN, "default_action for 'Nope'", nothing,
      lambda _: PettingZooParallelEnv(Tag(), default_action={"Nope": 0}), ArgumentError,
      ("['Nope']", RUNNER)),
    C("PettingZooParallelEnv()", RANGE, "default_action 9", nothing,
      lambda _: PettingZooParallelEnv(Tag(), default_action={RUNNER: 9}), ActionError,
      ("Discrete(5)", "9")),
    C("PettingZooParallelEnv()", UNKNOWN, "render_mode='ansi'", nothing,
      lambda _: PettingZooParallelEnv(Tag(), render_mode="ansi"), ArgumentError,
      ("render_mode", "'rgb_array'", "'human'", "'ansi'")),
    C("PettingZooParallelEnv()", UNKNOWN, "stale_actions='warn'", nothing,
      lambda _: PettingZooParallelEnv(Tag(), stale_actions="warn"), ArgumentError,
      ("stale_actions", "'ignore'", "'warn'")),
    C("PettingZooParallelEnv()", WRONG, "agent_name=5", nothing,
      lambda _: PettingZooParallelEnv(Tag(), agent_name=5), ArgumentTypeError,
      ("agent_name", "callable", "5")),
    C("PettingZooParallelEnv.reset", RANGE, "seed=-1", par_tag, lambda env: env.reset(seed=-1),
      ArgumentError, ("PettingZooParallelEnv.reset", *SEED, "-1"), par_fresh),
    C("PettingZooParallelEnv.reset", WRONG, "seed=[1, 2]", par_tag,
      lambda env: env.reset(seed=[1, 2]), ArgumentTypeError, (*SEED, "list [1, 2]"), par_fresh),
    C("PettingZooParallelEnv.reset", WRONG, "options=5", par_tag,
      lambda env: env.reset(options=5), ArgumentTypeError, (*OPTIONS, "int 5"), par_fresh),
    C("PettingZooParallelEnv.step", WRONG, "a list", par_tag, lambda env: env.step([0] * 5),
      ActionError, ("dict of actions", "list"), par_step),
    C("PettingZooParallelEnv.step", SHAPE, "a live agent left out", par_tag,
      lambda env: env.step(dict.fromkeys(env.agents[1:], 0)), ActionError,
      ("every live agent", "runner_0"), par_step),
    C("PettingZooParallelEnv.step", UNKNOWN, "agent 'ghost_0'", par_tag,
      lambda env: env.step({**dict.fromkeys(env.agents, 0), "ghost_0": 0}), ActionError,
      ("'ghost_0'", "live agents"), par_step),
    C("PettingZooParallelEnv.step", RANK, "[[1]] for Discrete", par_tag, all_agents([[1]]),
      ActionError, ("Discrete(5)", "[[1]]"), par_step),
    C("PettingZooParallelEnv.step", RANGE, "5 of Discrete(5)", par_tag, first_agent(5),
      ActionError, ("'runner_0'", "Discrete(5)", "got 5"), par_step),
    C("PettingZooParallelEnv.step", DTYPE, "'x'", par_tag, first_agent("x"), ActionError,
      ("'runner_0'", "Discrete(5)", "'x'"), par_step),
    C("PettingZooParallelEnv.step", RANGE, "2**32 + 1", par_tag, first_agent(2**32 + 1),
      ActionError, ("Runner?team=0", "4294967297"), par_step),
    C("PettingZooParallelEnv.step", RANGE, "2**32 + 1 as a float", par_tag,
      first_agent(float(2**32 + 1)), ActionError, ("4294967297",), par_step),
    C("PettingZooParallelEnv.step", NONFINITE, "inf", par_tag, first_agent(float("inf")),
      ActionError, ("inf",), par_step),
    C("PettingZooParallelEnv.step", WRONG, "hybrid as ndarray", par_collector,
      first_agent(np.zeros(3)), ActionError, ("['continuous', 'discrete']", "ndarray"),
      par_step),
    C("PettingZooParallelEnv.step", UNKNOWN, "hybrid extra key", par_collector,
      first_agent(hybrid(extra=0)), ActionError, ("['continuous', 'discrete']", "'extra'"),
      par_step),
    C("PettingZooParallelEnv.step", NONFINITE, "hybrid continuous nan", par_collector,
      first_agent(hybrid(continuous=np.array([np.nan, 0.0], np.float32))), ActionError,
      ("'collector_0'", "not finite"), par_step),
    C("PettingZooParallelEnv.step", RANGE, "hybrid discrete 2**32 + 1", par_collector,
      first_agent(hybrid(discrete=2**32 + 1)), ActionError, ("4294967297",), par_step),
    C("PettingZooParallelEnv.action_space", UNKNOWN, "'runner_999'", par_tag,
      lambda env: env.action_space("runner_999"), UnknownAgentError,
      ("agent of the episode", "'runner_999'"), par_step),
    C("PettingZooParallelEnv.action_space", WRONG, "['x']", par_tag,
      lambda env: env.action_space(["x"]), UnknownAgentError, ("agent of the episode", "['x']"),
      par_step),
    C("PettingZooParallelEnv.observation_space", UNKNOWN, "'ghost'", par_tag,
      lambda env: env.observation_space("ghost"), UnknownAgentError,
      ("agent of the episode", "'ghost'"), par_step),
    C("PettingZooParallelEnv.action_space", STALE, "a runner spawned last episode",
      spawned_then_reset, lambda env: env.action_space("runner_5"), UnknownAgentError,
      ("agent of the episode", "'runner_5'"), par_step),
    C("PettingZooParallelEnv.agent_key", UNKNOWN, "'ghost_1'", par_tag,
      lambda env: env.agent_key("ghost_1"), UnknownAgentError, ("'ghost_1'", "prefix"), par_step),
    C("PettingZooParallelEnv.max_cycles", RANGE, "= 0", par_tag,
      lambda env: setattr(env, "max_cycles", 0), ArgumentError, ("max_cycles", "0"), par_step),
    C("PettingZooParallelEnv.termination_mode", UNKNOWN, "= 'most'", par_tag,
      lambda env: setattr(env, "termination_mode", "most"), ArgumentError, ("'most'",),
      par_step),
    C("PettingZooParallelEnv.step", BEFORE, "no reset",
      lambda: PettingZooParallelEnv(Tag(seed=0)), lambda env: env.step({}), EnvNotResetError,
      ("reset()",), par_fresh),
    C("PettingZooParallelEnv.state", BEFORE, "no reset",
      lambda: PettingZooParallelEnv(Tag(seed=0)), lambda env: env.state(), EnvNotResetError,
      ("reset()",), par_fresh),
    C("PettingZooParallelEnv.step", BEFORE, "episode over", lambda: par_tag(max_cycles=1),
      lambda env: (par_step(env), env.step({})), EnvNotResetError, ("episode is over",),
      par_fresh),
    after_close("PettingZooParallelEnv.step", par_tag,
                lambda env: env.step(dict.fromkeys(env.agents, 0))),
    after_close("PettingZooParallelEnv.reset", par_tag, lambda env: env.reset()),
    after_close("PettingZooParallelEnv.state", par_tag, lambda env: env.state()),
    after_close("PettingZooParallelEnv.render", functools.partial(par_tag, render_mode="rgb_array"),
                lambda env: env.render()),
    C("PettingZooParallelEnv.step", REENTRANT, "from a core hook", par_reentered_from_core,
      par_step, ReentrantCallError, REENTERED, par_fresh, twin=par_hooked),
    C("PettingZooParallelEnv.step", BEFORE, "after a mid-step exception", par_failing,
      step_after_failure(par_step), EnvNotResetError, ("boom",), par_fresh,
      twin=par_failing_core),
    # ------------------------------------------------------------ PettingZooAECEnv
    C("PettingZooAECEnv.reset", RANGE, "seed=-1", aec_tag, lambda env: env.reset(seed=-1),
      ArgumentError, ("PettingZooAECEnv.reset", *SEED, "-1"), aec_cycle),
    C("PettingZooAECEnv.reset", WRONG, "options={1: 2}", aec_tag,
      lambda env: env.reset(options={1: 2}), ArgumentTypeError, (*OPTIONS, "[1]"), aec_cycle),
    C("PettingZooAECEnv.step", WRONG, "None for a live agent", aec_tag,
      lambda env: env.step(None), ActionError, ("'runner_0'", "needs an action", "None"),
      aec_cycle),
    C("PettingZooAECEnv.step", RANGE, "5 at the cycle's end", aec_tag, aec_last_turn(5),
      ActionError, ("Discrete(5)", "got 5"), aec_cycle),
    C("PettingZooAECEnv.step", DTYPE, "'x' at the cycle's end", aec_tag, aec_last_turn("x"),
      ActionError, ("Discrete(5)", "'x'"), aec_cycle),
    C("PettingZooAECEnv.step", RANGE, "2**32 + 1 at the cycle's end", aec_tag,
      aec_last_turn(2**32 + 1), ActionError, ("Tagger?team=1", "4294967297"), aec_cycle),
    C("PettingZooAECEnv.step", RANGE, "2**32 + 1 as a float at the cycle's end", aec_tag,
      aec_last_turn(float(2**32 + 1)), ActionError, ("4294967297",), aec_cycle),
    C("PettingZooAECEnv.step", NONFINITE, "inf at the cycle's end", aec_tag,
      aec_last_turn(float("inf")), ActionError, ("inf",), aec_cycle),
    C("PettingZooAECEnv.step", WRONG, "hybrid as ndarray", aec_collector,
      aec_last_turn(np.zeros(3)), ActionError, ("['continuous', 'discrete']", "ndarray"),
      aec_cycle),
    C("PettingZooAECEnv.step", UNKNOWN, "hybrid extra key", aec_collector,
      aec_last_turn(hybrid(extra=0)), ActionError, ("['continuous', 'discrete']", "'extra'"),
      aec_cycle),
    C("PettingZooAECEnv.step", STALE, "an action for a finished agent", aec_with_dead_agents,
      lambda env: env.step(0), ActionError, ("has finished", "None", "got 0")),
    C("PettingZooAECEnv.observe", UNKNOWN, "'ghost'", aec_tag, lambda env: env.observe("ghost"),
      UnknownAgentError, ("'ghost'", "runner_0"), aec_cycle),
    C("PettingZooAECEnv.action_space", UNKNOWN, "'runner_999'", aec_tag,
      lambda env: env.action_space("runner_999"), UnknownAgentError, ("'runner_999'",),
      aec_cycle),
    C("PettingZooAECEnv.step", BEFORE, "no reset", lambda: PettingZooAECEnv(Tag(seed=0)),
      lambda env: env.step(0), EnvNotResetError, ("reset()",), aec_fresh),
    C("PettingZooAECEnv.last", BEFORE, "no reset", lambda: PettingZooAECEnv(Tag(seed=0)),
      lambda env: env.last(), EnvNotResetError, ("reset()",), aec_fresh),
    C("PettingZooAECEnv.step", CLOSED, "first turn after close", closed(aec_tag),
      lambda env: env.step(0), EnvClosedError, ("close()",)),
    C("PettingZooAECEnv.step", CLOSED, "mid-cycle close",
      lambda: aec_tag(), lambda env: (env.step(0), env.close(), env.step(0)), EnvClosedError,
      ("close()",)),
    after_close("PettingZooAECEnv.last", aec_tag, lambda env: env.last()),
    after_close("PettingZooAECEnv.observe", aec_tag, lambda env: env.observe("runner_0")),
    after_close("PettingZooAECEnv.state", aec_tag, lambda env: env.state()),
    # ------------------------------------------------------------ MultiAgentTask
    C("MultiAgentTask()", UNKNOWN, "termination_mode='most'", nothing,
      lambda _: MultiAgentTask(Tag(), termination_mode="most"), ArgumentError, ("'most'",)),
    C("MultiAgentTask()", RANGE, "max_cycles=0", nothing,
      lambda _: MultiAgentTask(Tag(), max_cycles=0), ArgumentError, ("max_cycles", "0")),
    C("MultiAgentTask.reset", RANGE, "seed=-1", task_tag, lambda task: task.reset(seed=-1),
      ArgumentError, ("MultiAgentTask.reset", *SEED, "-1"), task_step),
    C("MultiAgentTask.seed", RANGE, "-1", task_tag, lambda task: task.seed(-1), ArgumentError,
      ("MultiAgentTask.seed", *SEED, "-1"), task_fresh),
    C("MultiAgentTask.step", UNKNOWN, "position 99", task_tag, lambda task: task.step(0, 99),
      UnknownAgentError, ("[0, 4]", "99"), task_step),
    C("MultiAgentTask.step", UNKNOWN, "name 'ghost'", task_tag,
      lambda task: task.step(0, "ghost"), UnknownAgentError, ("'ghost'", "runner_0"), task_step),
    C("MultiAgentTask.step", WRONG, "agent ['x']", task_tag, lambda task: task.step(0, ["x"]),
      UnknownAgentError, ("agent name (str) or a position", "['x']"), task_step),
    C("MultiAgentTask.step_all", WRONG, "a list", task_tag, lambda task: task.step_all([0] * 5),
      ActionError, ("dict of actions", "list"), task_step),
    C("MultiAgentTask.step_all", RANGE, "5 of Discrete(5)", task_tag,
      lambda task: task.step_all(dict.fromkeys(task.agents, 5)), ActionError,
      ("Discrete(5)", "got 5"), task_step),
    C("MultiAgentTask.observation_space", UNKNOWN, "'runner_999'", task_tag,
      lambda task: task.observation_space("runner_999"), UnknownAgentError, ("'runner_999'",),
      task_step),
    C("MultiAgentTask.step", BEFORE, "no reset", lambda: MultiAgentTask(Tag(seed=0)),
      lambda task: task.step(0, 0), EnvNotResetError, ("reset()",), task_fresh),
    after_close("MultiAgentTask.step", task_tag, lambda task: task.step(0, 0)),
    after_close("MultiAgentTask.last", task_tag, lambda task: task.last(0)),
    # ------------------------------------------------------------ wrappers
    C("ParallelWrapper()", WRONG, "a GymEnv", nothing,
      lambda _: ParallelWrapper(GymEnv(Basic())), ArgumentTypeError,
      ("ParallelEnv", "GymEnv")),
    C("TerminationPolicy()", UNKNOWN, "mode='most'", par_tag,
      lambda env: TerminationPolicy(env, "most"), ArgumentError, ("'any', 'majority'", "'most'"),
      par_step),
    C("TeamReward()", UNKNOWN, "reduction='median'", par_tag,
      lambda env: TeamReward(env, "median"), ArgumentError, ("'sum'", "'median'"), par_step),
    C("TeamReward()", WRONG, "source=5", par_tag, lambda env: TeamReward(env, source=5),
      ArgumentTypeError, ("source", "5"), par_step),
    # The mistake is in the configuration, so the environment cannot step until rebuilt.
    C("TeamReward.step", UNKNOWN, "source='gold'",
      lambda: _reset(TeamReward(par_tag(), source="gold")), par_step, ArgumentError,
      ("every agent's info", "'gold'")),
    C("RandomMessageDropout()", RANGE, "p=2", lambda: MessageBus(par_tag()),
      lambda env: RandomMessageDropout(env, 2.0), ArgumentError, ("[0, 1]", "2.0"), par_step),
    C("FoldAgents()", WRONG, "policy=5", par_tag,
      lambda env: FoldAgents(env, 5, behavior="tagger"), ArgumentTypeError,
      ("callable", "5"), par_step),
    C("FoldAgents()", UNKNOWN, "behavior='nobody'", par_tag,
      lambda env: FoldAgents(env, "random", behavior="nobody"), ArgumentError,
      ("folds none", "'nobody'"), par_step),
    C("DiscretizeActions()", RANGE, "levels=1", par_ball,
      lambda env: DiscretizeActions(env, levels=1), ArgumentError, ("levels", ">= 2", "1"),
      par_step),
    C("DiscretizeActions()", WRONG, "no Box action", par_collector,
      lambda env: DiscretizeActions(env), ArgumentError, ("Box action space", "collector_0"),
      par_step),
    C("RewardShaping()", UNKNOWN, "coefficient for 'nope'", par_tag,
      lambda env: RewardShaping(env, {"time": lambda data: 0.0}, {"nope": 1.0}), ArgumentError,
      ("'nope'", "'time'"), par_step),
    C("SingleAgentView()", UNKNOWN, "agent 'ghost'", par_tag,
      lambda env: SingleAgentView(env, "ghost"), UnknownAgentError, ("'ghost'", "runner_0"),
      par_step),
    C("SingleAgentView.reset", RANGE, "seed=-1",
      lambda: SingleAgentView(PettingZooParallelEnv(Tag(seed=0)), "tagger_3"),
      lambda env: env.reset(seed=-1), ArgumentError, ("SingleAgentView.reset", *SEED, "-1"),
      lambda env: (env.reset(seed=0), env.step(0))),
    C("TeamReward.reset", RANGE, "seed=-1", lambda: TeamReward(par_tag()),
      lambda env: env.reset(seed=-1), ArgumentError, (*SEED, "-1"), par_fresh),
    C("RandomMessageDropout.reset", RANGE, "seed=-1",
      lambda: RandomMessageDropout(MessageBus(par_tag()), 0.5), lambda env: env.reset(seed=-1),
      ArgumentError, ("RandomMessageDropout.reset", *SEED, "-1"), par_fresh),
    C("apply_wrappers", WRONG, "wrappers=[5]", par_tag, lambda env: apply_wrappers(env, [5]),
      ArgumentTypeError, ("wrappers[0]", "5"), par_fresh),
    C("apply_wrappers", UNKNOWN, "api='rllib'", par_tag,
      lambda env: apply_wrappers(env, [], api="rllib"), ArgumentError, ("'parallel'", "'rllib'"),
      par_fresh),
    C("RandomMessageDropout()", ORDER, "without MessageBus", par_tag,
      lambda env: RandomMessageDropout(env, 0.5), WrapperOrderError,
      ("RandomMessageDropout", "MessageBus"), par_fresh),
    C("FoldAgents.step", REENTRANT, "from a policy", fold_reentered_from_policy, par_step,
      ReentrantCallError, REENTERED, par_fresh, twin=fold_plain),
    # ------------------------------------------------------------ zooport.make, gym.make
    C("zooport.make", UNKNOWN, "'Tga'", nothing, lambda _: zooport.make("Tga"),
      UnknownEnvironmentError, ("'Tga'", "['Tag']")),
    C("zooport.make", UNKNOWN, "'zooport/Tag-v3'", nothing,
      lambda _: zooport.make("zooport/Tag-v3"), RegistryError, ("version 0", "v3")),
    C("zooport.make", WRONG, "id=3", nothing, lambda _: zooport.make(3), RegistryError,
      ("environment id str", "3")),
    C("zooport.make", UNKNOWN, "api='rllib'", nothing, lambda _: zooport.make("Tag", api="rllib"),
      ArgumentError, ("'parallel'", "'rllib'")),
    C("zooport.make", UNKNOWN, "speed=2", nothing, lambda _: zooport.make("Tag", speed=2),
      ArgumentTypeError, ("['speed']", "n_runners")),
    C("zooport.make", WRONG, "api=['gym']", nothing,
      lambda _: zooport.make("Tag", api=np.array(["gym"])), ArgumentError,
      ("'parallel'", "array(['gym']")),
    C("zooport.make", WRONG, "wrappers=5", nothing, lambda _: zooport.make("Tag", wrappers=5),
      ArgumentTypeError, ("list of wrapper", "5")),
    C("zooport.make", RANGE, "num_envs=0", nothing,
      lambda _: zooport.make("BallBalance", api="vector", num_envs=0), ArgumentError,
      ("num_envs", "positive int", "0")),
    C("gym.make", RANGE, "n_agents=0", nothing,
      lambda _: gym.make("zooport/Basic-v0", n_agents=0), ArgumentError, ("n_agents", "0")),
    C("gym.make", UNKNOWN, "colour=1", nothing, lambda _: gym.make("zooport/Basic-v0", colour=1),
      ArgumentTypeError, ("['colour']", "n_agents")),
    C("gym.make", RANGE, "reset(seed=-1)",
      lambda: _reset(gym.make("zooport/Basic-v0", seed=0)), lambda env: env.reset(seed=-1),
      ArgumentError, (*SEED, "-1"), space_fresh),
    C("gym.make_vec", RANGE, "num_envs=0", nothing,
      lambda _: gym.make_vec("zooport/BallBalance-v0", num_envs=0,
                             vectorization_mode="vector_entry_point"),
      ArgumentError, ("num_envs", "positive int", "0")),
    # ------------------------------------------------------------ registry
    C("default_registry[id]", UNKNOWN, "'Basc'", nothing, lambda _: default_registry["Basc"],
      UnknownEnvironmentError, ("'Basc'", "['Basic']")),
    C("RegistryEntry.make", UNKNOWN, "colour=1", nothing,
      lambda _: default_registry["Basic"].make(colour=1), ArgumentTypeError,
      ("['colour']", "n_agents")),
    # ------------------------------------------------------------ side channels
    C("EnvironmentParametersChannel.set_float_parameter", WRONG, "value 'x'", nothing,
      lambda _: EnvironmentParametersChannel().set_float_parameter("g", "x"),
      SideChannelTypeError, ("float", "'x'")),
    C("EngineConfigurationChannel.set_configuration_parameters", WRONG, "time_scale='fast'",
      nothing,
      lambda _: EngineConfigurationChannel().set_configuration_parameters(time_scale="fast"),
      SideChannelTypeError, ("time_scale", "'fast'")),
    C("OutgoingMessage.write_int32", RANGE, "2**40", nothing,
      lambda _: OutgoingMessage().write_int32(2**40), SideChannelError,
      ("int32", str(2**40))),
    C("IncomingMessage.read_int32", SHAPE, "2 bytes", nothing,
      lambda _: IncomingMessage(b"\x00\x01").read_int32(), SideChannelError, ("4", "2")),
    # ------------------------------------------------------------ checkers
    C("check_base_env", RANGE, "steps=-1", core_tag, lambda env: check_base_env(env, steps=-1),
      ArgumentError, ("steps", "-1"), core_step),
]


def _run_checkers(**kwargs: Any) -> Any:
    from zooport.checks import run_checkers

    return run_checkers(Basic, **kwargs)


CASES += [
    C("run_checkers", UNKNOWN, "only=['nope']", nothing, lambda _: _run_checkers(only=["nope"]),
      ArgumentError, ("checker names", "['nope']")),
    C("run_checkers", RANGE, "timeout=1e10", nothing, lambda _: _run_checkers(timeout=1e10),
      ArgumentError, ("timeout", "2147483647", "10000000000.0")),
    C("run_checkers", RANGE, "seed=-1", nothing, lambda _: _run_checkers(seed=-1),
      ArgumentError, (*SEED, "-1")),
]



# ---------------------------------------------------------------------- CorePool (pool rows)
# Kept apart from CASES (whose size the README states): test_bad_input runs both.


def _pool_ball() -> Any:
    from zooport.envs.core_pool import CorePool

    return CorePool([functools.partial(BallBalance, n_agents=2)] * 2)


def _pool_of(**kwargs: Any) -> Any:
    from zooport.envs.core_pool import CorePool

    return CorePool([BallBalance], **kwargs)


def _pool_make(**kwargs: Any) -> Any:
    return zooport.make("BallBalance", api="vector", **kwargs)


POOL_CASES: list[Case] = [
    C("zooport.make", WRONG, "pool_options=5", nothing,
      lambda _: _pool_make(workers=2, pool_options=5), ArgumentTypeError,
      ("pool_options", "'mode'", "'spin'", "int 5")),
    C("zooport.make", UNKNOWN, "pool_options={'nope': 1}", nothing,
      lambda _: _pool_make(workers=2, pool_options={"nope": 1}), ArgumentTypeError,
      ("pool_options keys among", "'timeout'", "['nope']")),
    C("zooport.make", ORDER, "pool_options without workers", nothing,
      lambda _: _pool_make(pool_options={"mode": "async"}), ArgumentError,
      ("pool_options={'mode': 'async'}", "workers=K")),
    C("CorePool", RANGE, "spin=1e9", nothing,
      lambda _: _pool_of(spin=1e9), ArgumentError, ("0 <= spin < 1.0", "1000000000.0")),
    C("CorePool.pool_agent_id", RANGE, "2**40", _pool_ball,
      lambda pool: pool.pool_agent_id(0, 2**40), ArgumentError,
      ("core_agent_id", "1073741823", "1099511627776"),
      lambda pool: pool.pool_agent_id(1, 3)),
]


# ------------------------------------------------------------ scenes that send bad steps
# (the PettingZoo adapters; the Gymnasium and vector rows are in their own block)


def _scene(adapter: Callable[..., Any], *frames: dict[str, Any]) -> Callable[[], Any]:
    return lambda: adapter(Scene(frames))


def _reset_scene(adapter: Callable[..., Any], *frames: dict[str, Any]) -> Callable[[], Any]:
    return lambda: _reset(adapter(Scene(frames)))


def _scene_step(env: Any) -> Any:
    actions = {agent: np.zeros(1, np.float32) for agent in env.agents}
    return env.step(actions) if isinstance(env, PettingZooParallelEnv) else aec_cycle(env)


_DUPLICATE_END = {"B": (scene_rows([1]), scene_rows([0, 0]))}
_LATE = {"B": scene_rows([0, 1]), "C": scene_rows([7])}

for _adapter in (PettingZooParallelEnv, PettingZooAECEnv):
    _name = _adapter.__name__
    CASES += [
        C(f"{_name}.reset", RANGE, "scene: DecisionSteps ids [0, 1, 1]",
          _scene(_adapter, {"B": scene_rows([0, 1, 1])}), lambda env: env.reset(),
          ObservationError, ("'B'", "repeat in DecisionSteps", "[1]")),
        C(f"{_name}.step", RANGE, "scene: TerminalSteps ids [0, 0]",
          _reset_scene(_adapter, {"B": scene_rows([0, 1])}, _DUPLICATE_END), _scene_step,
          ObservationError, ("'B'", "repeat in TerminalSteps", "[0]")),
        C(f"{_name}.reset", DTYPE, "scene: agent ids [0.5, 1.5]",
          _scene(_adapter, {"B": scene_rows([0.5, 1.5])}), lambda env: env.reset(),
          ObservationError, ("'B'", "integer agent ids", "float64", "[0.5, 1.5]")),
        C(f"{_name}.step", UNKNOWN, "scene: behaviour 'C' after reset",
          _reset_scene(_adapter, {"B": scene_rows([0, 1])}, _LATE), _scene_step, SpecError,
          ("['B']", "['C']")),
    ]


# ------------------------------------------------------------ scenes that send bad steps
# (the slot family: GymEnv, BehaviorVectorEnv, SB3VecEnv; the PettingZoo rows are their own)


class SlotScene(CoreProxy):
    """``inner``, whose steps of ``behavior`` become ``edit(decision, terminal)`` from the first
    step after a reset on (or from the start with ``at_reset``); with ``late``, behaviour
    ``"Late"`` joins ``behavior_specs`` at that step, as a Unity scene's may."""

    def __init__(self, inner: Any, behavior: str, edit: Callable[..., Any] | None = None, *,
                 at_reset: bool = False, late: bool = False) -> None:
        super().__init__(inner)
        self.behavior, self.edit, self.at_reset, self.late = behavior, edit, at_reset, late
        self.stepped = False

    @property
    def behavior_specs(self) -> Any:
        specs = dict(self.inner.behavior_specs)
        if self.late and self.stepped:
            specs["Late"] = specs[self.behavior]
        return specs

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.stepped = False

    def step(self) -> None:
        super().step()
        self.stepped = True

    def get_steps(self, behavior_name: str) -> Any:
        steps = self.inner.get_steps(behavior_name)
        if self.edit is None or behavior_name != self.behavior:
            return steps
        return self.edit(*steps) if self.stepped or self.at_reset else steps


def _repeat_last_id(decision: Any, terminal: Any) -> Any:
    """DecisionSteps ids ``[0, 1, 1]`` (a one-agent batch gets a second row for agent 0)."""
    if len(decision) == 1:
        decision = _rows(decision, [0, 0])
    ids = np.array(decision.agent_id)
    ids[-1] = ids[-2]
    return with_rows(decision, agent_id=ids), terminal


def _float_ids(decision: Any, terminal: Any) -> Any:
    return with_rows(decision, agent_id=np.asarray(decision.agent_id) + 0.5), terminal


def _agent_0_ends_twice(decision: Any, terminal: Any) -> Any:
    """Agent 0 twice in TerminalSteps, with rewards 5 and 7."""
    rows = _rows(decision, [0, 0])
    ended = TerminalSteps(rows.obs, np.array([5.0, 7.0], np.float32), np.zeros(2, bool),
                          rows.agent_id, rows.group_id, rows.group_reward)
    return decision, ended


def _rows(steps: Any, rows: list[int]) -> Any:
    masks = None if steps.action_mask is None else [m[rows] for m in steps.action_mask]
    return DecisionSteps([o[rows] for o in steps.obs], steps.reward[rows],
                         np.asarray(steps.agent_id)[rows], masks, steps.group_id[rows],
                         steps.group_reward[rows])


def _slot_scene(adapter: Callable[..., Any], edit: Any = None, **scene: Any) -> Callable[[], Any]:
    """The adapter over a scene of three BallBalance agents (one for GymEnv), reset."""
    n = 1 if adapter is GymEnv else 3

    def make() -> Any:
        env = adapter(SlotScene(BallBalance(n_agents=n, seed=0), "BallBalance", edit, **scene))
        if adapter is SB3VecEnv:
            env.reset()
            return env
        return _reset(env)

    return make


def _slot_step(env: Any) -> Any:
    if isinstance(env, SB3VecEnv):
        return env.step(np.zeros((env.num_envs, 2), np.float32))
    return env.step(zeros_of(env.action_space))


for _adapter in (GymEnv, BehaviorVectorEnv, SB3VecEnv):
    _name = _adapter.__name__
    CASES += [
        C(f"{_name}.step", RANGE, "scene: DecisionSteps ids [0, 1, 1]",
          _slot_scene(_adapter, _repeat_last_id), _slot_step, ObservationError,
          ("'BallBalance'", "repeat in DecisionSteps", "[0]" if _adapter is GymEnv else "[1]")),
        C(f"{_name}.step", RANGE, "scene: TerminalSteps ids [0, 0]",
          _slot_scene(_adapter, _agent_0_ends_twice), _slot_step, ObservationError,
          ("'BallBalance'", "repeat in TerminalSteps", "[0]")),
        C(f"{_name}.step", DTYPE, "scene: agent ids + 0.5",
          _slot_scene(_adapter, _float_ids), _slot_step, ObservationError,
          ("'BallBalance'", "integer agent ids", "float64", "0.5")),
        C(f"{_name}.step", UNKNOWN, "scene: behaviour 'Late' after reset",
          _slot_scene(_adapter, late=True), _slot_step, SpecError,
          ("['Late']", "'BallBalance'")),
        C(f"{_name}()", DTYPE, "scene: agent ids + 0.5 at reset", nothing,
          lambda _, a=_adapter: a(SlotScene(BallBalance(n_agents=1 if a is GymEnv else 3),
                                            "BallBalance", _float_ids, at_reset=True)),
          ObservationError, ("'BallBalance'", "integer agent ids", "float64")),
    ]


#: ``(argv, message fragments, early)``: each must print one line on stderr and exit 2; an
#: ``early`` one before any work starts (no environment built, no training run), the others
#: once the factory has shown what it makes.
CLI_CASES: list[tuple[list[str], list[str], bool]] = [
    (["play", "Basic", "--record", "/no/such/directory/x.gif"],
     ["--record", "existing directory", "/no/such/directory/x.gif"], True),
    (["play", "Basic", "--record", "out.png"], ["--record", "['.gif']", "out.png"], True),
    (["play", "Basic", "--record", "."], ["--record", "a file name", "the directory '.'"], True),
    (["play", "Basic", "--seed", "-1"], ["--seed", "an int >= 0", "-1"], True),
    (["play", "Basic", "--seed", "x"], ["--seed", "an int >= 0", "'x'"], True),
    (["train", "Basic", "--plot", "/no/such/directory/curve.png"],
     ["--plot", "existing directory", "/no/such/directory/curve.png"], True),
    (["train", "Basic", "--plot", "curve.nope"], ["--plot", "'.png'", "curve.nope"], True),
    (["train", "Basic", "--eval-episodes", "-1"], ["--eval-episodes", "an int >= 0", "-1"], True),
    (["train", "Basic", "--seed", "-3"], ["--seed", "an int >= 0", "-3"], True),
    (["check", "Basic", "--timeout", "1e10"], ["--timeout", "2147483647", "10000000000.0"], True),
    (["check", "Basic", "--timeout", "inf"], ["--timeout", "2147483647", "inf"], True),
    (["check", "Basic", "--seed", "-1"], ["--seed", "an int >= 0", "-1"], True),
    (["info", "Basic", "--kwargs", '{"speed": 2}'], ["['speed']", "n_agents"], True),
    (["bench", "--json", "/no/such/directory/bench.json"],
     ["--json", "existing directory", "/no/such/directory/bench.json"], True),
    (["train", "Basic", "--save", "/no/such/directory/model.zip"],
     ["--save", "existing directory", "/no/such/directory/model.zip"], True),
    (["train", "Basic", "--save", "model.pt"], ["--save", "['.zip']", "model.pt"], True),
    (["train", "Basic", "--resume", "/no/such/model.zip"],
     ["--resume", "zooport train --save", "/no/such/model.zip"], True),
    (["play", "Basic", "--model", "/no/such/model.zip"],
     ["--model", "zooport train --save", "/no/such/model.zip"], True),
    (["check", "/no/such/my_env.py:MyEnv"], ["an existing Python file", "/no/such/my_env.py"],
     True),
    (["info", "os:getcwd"], ["os:getcwd", "BaseEnv", "str"], False),
    (["play", "os:getcwd", "--api", "gym"], ["os:getcwd", "BaseEnv", "str"], False),
    (["play", "os:getcwd"], ["os:getcwd", "BaseEnv", "str"], False),
    (["train", "os:getcwd"], ["os:getcwd", "BaseEnv", "str"], False),
]
# fmt: on
