"""Older generations of ML-Agents' ``BaseEnv`` API (``mlagents_envs`` 0.16 to 0.24) as the current
one, by duck typing and one conversion table (:attr:`LegacyBaseEnv.unmapped`: what was invented)."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any, NamedTuple, TypeVar

import numpy as np

from zooport.envs.base_env import (
    ActionSpec,
    ActionTuple,
    AgentId,
    BaseEnv,
    BehaviorMapping,
    BehaviorName,
    BehaviorSpec,
    DimensionProperty,
    ObservationSpec,
    ObservationType,
)
from zooport.envs.capabilities import signature_parameters
from zooport.envs.steps import COLUMN_DTYPES, DecisionSteps, TerminalSteps, decision_row
from zooport.errors import ArgumentTypeError, SpecError, UnknownBehaviorError, look_up

__all__ = ["LegacyBaseEnv", "LegacyApiWarning", "as_base_env", "is_legacy_env", "side_channels_of"]

S = TypeVar("S", DecisionSteps, TerminalSteps)
_REQUIRED = ("get_steps", "set_actions", "step", "reset", "close")


class LegacyApiWarning(UserWarning):
    """An older-generation environment was wrapped and some of its data had to be invented."""


def _action_spec_from_type(spec: Any) -> Any:
    """An ActionSpec from the ``action_type`` enum and ``action_shape`` of releases < 0.22."""
    action_type = getattr(spec, "action_type", None)
    kind = str(getattr(action_type, "name", action_type)).upper()
    shape = getattr(spec, "action_shape", None)
    if kind not in ("DISCRETE", "CONTINUOUS"):
        raise SpecError(
            "expected a spec with action_spec, or action_type DISCRETE or CONTINUOUS, "
            f"got action_type {action_type!r}"
        )
    discrete = kind == "DISCRETE"
    # A discrete shape is a tuple of branch sizes, a continuous one an int; None is neither.
    if shape is None or (np.ndim(shape) == 0) == discrete:
        expected = "a tuple of branch sizes" if discrete else "an int"
        raise SpecError(
            f"expected the action_shape of a {kind.lower()} spec to be {expected}, got {shape!r}"
        )
    return (
        ActionSpec.create_discrete(shape) if discrete else ActionSpec.create_continuous(int(shape))
    )


def _observations_from_shapes(spec: Any) -> list[Any]:
    """The observations of releases < 0.24: bare shapes (an int for a vector)."""
    shapes = getattr(spec, "observation_shapes", None)
    if shapes is None:
        raise SpecError(
            "expected a spec with observation_specs or observation_shapes, "
            f"got {type(spec).__name__} {spec!r}"
        )
    return [SimpleNamespace(shape=(s,) if np.ndim(s) == 0 else tuple(s)) for s in shapes]


# The one conversion table: each field the current API reads that an older generation lacks,
# what stands in for it there and, where that value is made up, what `unmapped` says. Release
# 0.15 and older (get_step_result) is another API, refused.
_NEWER_FIELDS: dict[str, tuple[Callable[[Any], Any], str]] = {
    # The env (0.17): 0.16 lists its behaviours with get_behavior_names/get_behavior_spec.
    "behavior_specs": (
        lambda env: {n: env.get_behavior_spec(n) for n in env.get_behavior_names()},
        "",
    ),
    # BehaviorSpec: bare observation shapes until 0.24, an ActionType enum until 0.22.
    "observation_specs": (_observations_from_shapes, ""),
    "action_spec": (_action_spec_from_type, ""),
    # ObservationSpec (a bare shape until 0.24; no name until 0.25).
    "dimension_property": (
        lambda obs: (DimensionProperty.UNSPECIFIED,) * len(obs.shape),
        "dimension properties (UNSPECIFIED)",
    ),
    "observation_type": (lambda obs: ObservationType.DEFAULT, "observation types (DEFAULT)"),
    "name": (lambda obs: None, "observation names (generated obs_0..obs_{last})"),
    # DecisionSteps/TerminalSteps: 0.16 says max_step for interrupted; no groups until 0.25.
    "interrupted": (lambda steps: getattr(steps, "max_step", None), ""),
    "group_id": (lambda steps: None, "group_id and group_reward (zeros where the steps have none)"),
}


def _read(old: Any, field: str, invented: set[str] | None = None) -> Any:
    """``old.<field>``, or the table's stand-in when ``old`` is of an older generation."""
    value = getattr(old, field, None)
    if value is None and field in _NEWER_FIELDS:
        older, note = _NEWER_FIELDS[field]
        value = older(old)
        if note and invented is not None:
            invented.add(field)
    return value


class _Behavior(NamedTuple):
    legacy_spec: Any
    spec: BehaviorSpec
    send: Callable[[ActionTuple], Any]  # an ActionTuple in the wrapped env's own format
    notes: list[str]


def _action_sender(spec: Any, action_spec: ActionSpec) -> Callable[[ActionTuple], Any]:
    """How actions reach the wrapped env: one ndarray until 0.23, then its own ActionTuple."""
    old_action_spec = getattr(spec, "action_spec", None)
    # 0.22 and later: action_spec.empty_action; before: the spec's create_empty_action.
    make = getattr(old_action_spec, "empty_action", None) or getattr(
        spec, "create_empty_action", None
    )
    template = None if make is None else make(0)
    if old_action_spec is not None and not isinstance(template, np.ndarray):
        factory = ActionTuple if template is None else type(template)
        return lambda a: factory(continuous=a.continuous.copy(), discrete=a.discrete.copy())
    if action_spec.continuous_size and action_spec.discrete_size:
        raise SpecError(
            f"a hybrid action spec ({action_spec}) cannot be sent as the one ndarray this env's "
            "empty_action() returns"
        )
    continuous = action_spec.continuous_size > 0
    default = np.float32 if continuous else np.int32
    dtype = template.dtype if isinstance(template, np.ndarray) else default
    # A fresh array: an old UnityEnvironment keeps a reference until step().
    return lambda a: np.array(a.continuous if continuous else a.discrete, dtype=dtype)


def _convert_behavior(name: str, old: Any) -> _Behavior:
    invented: set[str] = set()
    try:
        observations = []
        for i, o in enumerate(_read(old, "observation_specs")):
            kind = _read(o, "observation_type", invented)
            observations.append(
                ObservationSpec(
                    tuple(int(d) for d in o.shape),
                    tuple(
                        DimensionProperty(int(p)) for p in _read(o, "dimension_property", invented)
                    ),
                    ObservationType(getattr(kind, "value", kind)),
                    str(_read(o, "name", invented) or f"obs_{i}"),
                )
            )
        old_action_spec = _read(old, "action_spec")
        action_spec = ActionSpec.create_hybrid(
            int(old_action_spec.continuous_size), old_action_spec.discrete_branches
        )
        send = _action_sender(old, action_spec)
    except SpecError as error:
        raise SpecError(f"behavior {name!r}: {error}") from None
    if _steps_have_groups(old) is not True:
        invented.add("group_id")
    notes = [
        f"{name}: " + note.format(last=len(observations) - 1)
        for field, (_, note) in _NEWER_FIELDS.items()
        if field in invented
    ]
    return _Behavior(old, BehaviorSpec(observations, action_spec), send, notes)


def _steps_have_groups(legacy_spec: Any) -> bool | None:
    """Whether the DecisionSteps beside the spec's class take ``group_id`` (None: unknown)."""
    steps_class = getattr(sys.modules.get(type(legacy_spec).__module__), "DecisionSteps", None)
    if steps_class is None or steps_class is DecisionSteps:
        return None
    parameters = signature_parameters(steps_class)
    return None if parameters is None else "group_id" in parameters


def _convert_steps(kind: type[S], steps: Any, branches: tuple[int, ...]) -> S:
    columns: list[Any] = []
    for field in kind._step._fields:  # the order of kind's constructor
        value = _read(steps, field)
        if field == "obs":
            columns.append(list(value))
        elif field != "action_mask":
            dtype = COLUMN_DTYPES[field]
            columns.append(
                np.zeros(len(steps.agent_id), dtype) if value is None else np.asarray(value, dtype)
            )
        elif value is None or not branches:
            columns.append(None)
        elif isinstance(value, np.ndarray) and value.ndim == 2:
            # One concatenated (n, sum(branches)) matrix: split it per branch, as ML-Agents does.
            split = np.cumsum(branches)[:-1]
            columns.append(np.split(value.astype(bool, copy=False), split, axis=1))
        else:
            columns.append([np.asarray(m, dtype=bool) for m in value])
    return kind(*columns)


def side_channels_of(env: Any) -> list[Any]:
    """The side channels of ``env``: zooport's ``side_channels``, or a Unity build's."""
    channels = getattr(env, "side_channels", None)
    if channels is None:
        manager = getattr(env, "_side_channel_manager", None)
        channels = getattr(manager, "_side_channels_dict", {}).values()
    return list(channels)


def is_legacy_env(obj: Any) -> bool:
    """True when ``obj``'s behaviour specs have an older ``BaseEnv`` API (no spec yet: current);
    an object that is not BaseEnv-like is an ``ArgumentTypeError``."""
    if isinstance(obj, BaseEnv):
        return False
    if not hasattr(obj, "get_steps") and hasattr(obj, "get_step_result"):
        raise ArgumentTypeError(
            f"{type(obj).__name__} has the mlagents_envs <= 0.15 API (get_agent_groups / "
            "get_step_result / BatchedStepResult), which zooport does not support; "
            "expected a BaseEnv with behavior_specs and get_steps (mlagents_envs >= 0.16)"
        )
    missing = [name for name in _REQUIRED if not hasattr(obj, name)]
    if not hasattr(obj, "behavior_specs") and not (
        hasattr(obj, "get_behavior_names") and hasattr(obj, "get_behavior_spec")
    ):
        missing.insert(0, "behavior_specs")
    if missing:
        raise ArgumentTypeError(
            f"expected a BaseEnv-like object with behavior_specs (or get_behavior_names and "
            f"get_behavior_spec) and {list(_REQUIRED)}; {type(obj).__name__} lacks {missing}"
        )
    if not hasattr(obj, "behavior_specs"):
        return True  # only mlagents_envs 0.16 had get_behavior_names/get_behavior_spec
    return any(
        not hasattr(spec, "observation_specs")
        or not hasattr(spec, "action_spec")
        or _steps_have_groups(spec) is False
        for spec in obj.behavior_specs.values()
    )


def as_base_env(obj: Any, *, warn: bool = False) -> BaseEnv:
    """``obj``, or a :class:`LegacyBaseEnv` over it if its API is older (``warn=True``: with a
    :class:`LegacyApiWarning`); not BaseEnv-like: ``ArgumentTypeError``; bad spec: ``SpecError``."""
    if not is_legacy_env(obj):
        return obj
    env = LegacyBaseEnv(obj)
    if warn and env.unmapped:
        warnings.warn(
            f"{type(obj).__name__} has an older ML-Agents API; what zooport had to invent: "
            + "; ".join(env.unmapped),
            LegacyApiWarning,
            stacklevel=2,
        )
    return env


class LegacyBaseEnv(BaseEnv):
    """The current ``BaseEnv`` API over ``legacy_env``, written against an older one."""

    def __init__(self, env: Any) -> None:
        is_legacy_env(env)  # refuses what is not BaseEnv-like
        self.legacy_env = env
        self.seedable = bool(getattr(env, "seedable", False))  # as the wrapped env
        self._behaviors: dict[BehaviorName, _Behavior] = {}
        self._mapping = BehaviorMapping({})
        self._steps: dict[BehaviorName, tuple[Any, Any, DecisionSteps, TerminalSteps]] = {}
        self._pending: dict[BehaviorName, ActionTuple] = {}
        self._closed = False
        self._refresh_specs()

    def _refresh_specs(self) -> None:  # converts the specs added or changed since last call
        behaviors: dict[BehaviorName, _Behavior] = {}
        for name, spec in _read(self.legacy_env, "behavior_specs").items():
            known = self._behaviors.get(name)
            if known is None or not (known.legacy_spec is spec or known.legacy_spec == spec):
                known = _convert_behavior(name, spec)
            behaviors[name] = known
        if behaviors != self._behaviors:  # the same _Behavior objects unless a spec changed
            self._behaviors = behaviors
            self._mapping = BehaviorMapping({n: b.spec for n, b in behaviors.items()})

    def _behavior(self, name: BehaviorName) -> _Behavior:
        if isinstance(name, str) and name not in self._behaviors:
            self._refresh_specs()
        return look_up(self._behaviors, name, UnknownBehaviorError, lambda: (
            f"{type(self.legacy_env).__name__} has no behavior {name!r}; "
            f"behaviors: {list(self._behaviors)}"
        ))  # fmt: skip

    @property
    def behavior_specs(self) -> Mapping[BehaviorName, BehaviorSpec]:
        self._refresh_specs()
        return self._mapping

    @property
    def unmapped(self) -> tuple[str, ...]:
        """What the older API lacks and zooport invented, one line per behaviour and field."""
        return tuple(note for b in self._behaviors.values() for note in b.notes)

    def get_steps(self, behavior_name: BehaviorName) -> tuple[DecisionSteps, TerminalSteps]:
        branches = self._behavior(behavior_name).spec.action_spec.discrete_branches
        decision, terminal = self.legacy_env.get_steps(behavior_name)
        cached = self._steps.get(behavior_name)
        if cached is not None and cached[0] is decision and cached[1] is terminal:
            return cached[2], cached[3]
        converted = (
            _convert_steps(DecisionSteps, decision, branches),
            _convert_steps(TerminalSteps, terminal, branches),
        )
        self._steps[behavior_name] = (decision, terminal, *converted)
        return converted

    def reset(self, seed: int | None = None) -> None:
        """Resets the wrapped env, passing ``seed`` on where it is not None (``seedable``)."""
        self._pending.clear()
        self.legacy_env.reset() if seed is None else self.legacy_env.reset(seed=seed)

    def step(self) -> None:
        self._pending.clear()
        self.legacy_env.step()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.legacy_env.close()

    @property
    def closed(self) -> bool:
        return self._closed or bool(getattr(self.legacy_env, "closed", False))

    def set_actions(self, behavior_name: BehaviorName, action: ActionTuple) -> None:
        behavior = self._behavior(behavior_name)
        n = len(self.get_steps(behavior_name)[0])
        action = behavior.spec.action_spec._validate_action(action, n, behavior_name)
        self._pending[behavior_name] = action
        self.legacy_env.set_actions(behavior_name, behavior.send(action))

    def set_action_for_agent(
        self, behavior_name: BehaviorName, agent_id: AgentId, action: ActionTuple
    ) -> None:
        action_spec = self._behavior(behavior_name).spec.action_spec
        action = action_spec._validate_action(action, 1, behavior_name)
        decision = self.get_steps(behavior_name)[0]
        index = decision_row(behavior_name, decision, agent_id)
        pending = self._pending.get(behavior_name) or action_spec.empty_action(len(decision))
        continuous, discrete = pending.continuous.copy(), pending.discrete.copy()
        continuous[index], discrete[index] = action.continuous[0], action.discrete[0]
        self.set_actions(behavior_name, ActionTuple(continuous, discrete))

    @property
    def side_channels(self) -> list[Any]:
        """The wrapped env's side channels (a Unity build's, from its side-channel manager)."""
        return side_channels_of(self.legacy_env)

    @property
    def metadata(self) -> dict[str, Any]:
        return dict(getattr(self.legacy_env, "metadata", {}) or {})

    def render(self) -> Any:
        render = getattr(self.legacy_env, "render", None)
        if render is None:
            raise NotImplementedError(f"{type(self.legacy_env).__name__} does not render")
        return render()

    def __repr__(self) -> str:
        return f"LegacyBaseEnv({self.legacy_env!r})"
