"""BaseEnvLike: the Protocol adapters type their core with.

Two halves. At run time, the Protocol's members are BaseEnv's abstract members with the same
signatures (a member added to one and not the other fails here). Statically, `make typecheck`
runs mypy over this module too: the assignments in the ``_fits_*`` functions below are
errors if a BatchedEnv, a CorePool or a hand-written class stops fitting the Protocol (delete
``close`` from ``_MinimalCore`` and mypy reports the assignment in
``_fits_a_hand_written_class``).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping

from zooport.envs.base_env import (
    ActionTuple,
    AgentId,
    BaseEnv,
    BaseEnvLike,
    BehaviorName,
    BehaviorSpec,
    DecisionSteps,
    TerminalSteps,
)
from zooport.envs.batched_env import BatchedEnv
from zooport.envs.builtin.tag import Tag
from zooport.envs.core_pool import CorePool


class _MinimalCore:
    """A core written by hand against the API, subclassing nothing."""

    def __init__(self, core: BaseEnv) -> None:
        self._core = core

    @property
    def behavior_specs(self) -> Mapping[BehaviorName, BehaviorSpec]:
        return self._core.behavior_specs

    def reset(self) -> None:
        self._core.reset()

    def step(self) -> None:
        self._core.step()

    def get_steps(self, behavior_name: BehaviorName) -> tuple[DecisionSteps, TerminalSteps]:
        return self._core.get_steps(behavior_name)

    def set_actions(self, behavior_name: BehaviorName, action: ActionTuple) -> None:
        self._core.set_actions(behavior_name, action)

    def set_action_for_agent(
        self, behavior_name: BehaviorName, agent_id: AgentId, action: ActionTuple
    ) -> None:
        self._core.set_action_for_agent(behavior_name, agent_id, action)

    def close(self) -> None:
        self._core.close()


def _fits_a_batched_env(env: BatchedEnv) -> BaseEnvLike:
    return env


def _fits_a_core_pool(pool: CorePool) -> BaseEnvLike:
    return pool


def _fits_a_hand_written_class(core: _MinimalCore) -> BaseEnvLike:
    return core


def _members(cls: type) -> dict[str, object]:
    return {
        name: value
        for name, value in vars(cls).items()
        if not name.startswith("_") and (callable(value) or isinstance(value, property))
    }


def test_the_protocol_has_exactly_base_envs_abstract_members() -> None:
    assert set(_members(BaseEnvLike)) == set(BaseEnv.__abstractmethods__)


def test_each_member_has_base_envs_signature() -> None:
    for name, member in _members(BaseEnvLike).items():
        base = vars(BaseEnv)[name]
        if isinstance(member, property):
            assert isinstance(base, property), name
            member, base = member.fget, base.fget
        assert inspect.signature(member) == inspect.signature(base), name  # type: ignore[arg-type]


def test_a_hand_written_core_drives_like_the_core_it_wraps() -> None:
    wrapped = _MinimalCore(Tag(seed=0))
    core = _fits_a_hand_written_class(wrapped)
    core.reset()
    name = sorted(core.behavior_specs)[0]
    decision, _ = core.get_steps(name)
    assert len(decision) > 0
    core.set_actions(name, core.behavior_specs[name].action_spec.empty_action(len(decision)))
    core.step()
    assert _fits_a_batched_env(Tag(seed=0)).behavior_specs.keys() == core.behavior_specs.keys()
    core.close()
