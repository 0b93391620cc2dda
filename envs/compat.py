"""Older generations of ML-Agents' ``BaseEnv`` API, presented as the current one.

Classes:
    LegacyBaseEnv: a :class:`~zooport.envs.base_env.BaseEnv` over an environment written
        against an older ``mlagents_envs.base_env`` (a Unity build driven by an old
        ``mlagents_envs``, or a user's own old-style env).
    LegacyApiWarning: what ``as_base_env(..., warn=True)`` warns with.

Functions:
    as_base_env: returns a current-API environment unchanged, wraps an older one.
    is_legacy_env: True when :func:`as_base_env` would wrap the object.

Everything is duck typing: nothing here imports ``mlagents_envs``. The generations, by the
``mlagents_envs`` release that introduced them (release 0.15 and older, with
``get_step_result``/``BatchedStepResult``, is a different API and is refused):

- 0.16: ``BehaviorSpec(observation_shapes, action_type, action_shape)`` with an
  ``ActionType`` enum (members ``DISCRETE``/``CONTINUOUS``), ``create_empty_action``;
  ``set_actions(name, ndarray)`` with int32 ``(n, branches)`` or float32 ``(n, size)``;
  ``TerminalSteps.max_step``; ``get_behavior_names()``/``get_behavior_spec(name)`` where
  later releases have the ``behavior_specs`` mapping.
- 0.17: the ``behavior_specs`` mapping, ``TerminalSteps.interrupted`` (was ``max_step``),
  ``create_random_action``; ``ActionType`` lasts until 0.21.
- 0.22: ``BehaviorSpec(observation_shapes, action_spec)`` (``ActionSpec``, still plain ndarray
  actions); 0.23: ``ActionTuple``; 0.24: ``observation_specs`` (``ObservationSpec`` without
  ``name``).
- 0.25: ``DecisionSteps``/``TerminalSteps`` with ``group_id`` and ``group_reward`` - the
  current API, returned unchanged.

Each part is mapped on its own: observation shapes become ``ObservationSpec`` named
``obs_0``, ``obs_1``... with ``DimensionProperty.UNSPECIFIED`` dimensions, ``max_step``
becomes ``interrupted``, missing group ids and group rewards are zeros, and an
``ActionTuple`` is converted to whatever the wrapped env takes (the dtype of its own
``create_empty_action``/``empty_action``). What had to be invented is listed in
:attr:`LegacyBaseEnv.unmapped`.
"""

from __future__ import annotations

import enum
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np

from zooport.envs.actions import ActionSpec, ActionTuple
from zooport.envs.base_env import BaseEnv
from zooport.envs.capabilities import signature_parameters
from zooport.envs.specs import (
    AgentId,
    BehaviorMapping,
    BehaviorName,
    BehaviorSpec,
    DimensionProperty,
    ObservationSpec,
    ObservationType,
)
from zooport.envs.steps import DecisionSteps, TerminalSteps
from zooport.errors import ArgumentTypeError, SpecError, UnknownAgentError, UnknownBehaviorError

__all__ = ["LegacyBaseEnv", "LegacyApiWarning", "as_base_env", "is_legacy_env"]

_REQUIRED = ("get_steps", "set_actions", "step", "reset", "close")


class LegacyApiWarning(UserWarning):
    """An older-generation environment was wrapped and some of its data had to be invented."""


class _ActionMode(enum.Enum):
    """How the wrapped env takes its actions."""

    NDARRAY = "ndarray"  # one 2-D array: discrete (n, branches) or continuous (n, size)
    TUPLE = "tuple"  # an object with .continuous and .discrete (its own ActionTuple)


class _Behavior:
    """What a behaviour of the wrapped env needs: its specs, old and new, and action format."""

    __slots__ = ("legacy_spec", "spec", "mode", "dtype", "factory", "notes")

    def __init__(
        self,
        legacy_spec: Any,
        spec: BehaviorSpec,
        mode: _ActionMode,
        dtype: np.dtype | None,
        factory: Callable[..., Any] | None,
        notes: list[str],
    ) -> None:
        self.legacy_spec = legacy_spec
        self.spec = spec
        self.mode = mode
        self.dtype = dtype
        self.factory = factory
        self.notes = notes


# ----------------------------------------------------------------------------- detection


def _has_spec_getters(obj: Any) -> bool:
    """mlagents_envs 0.16: ``get_behavior_names()`` and ``get_behavior_spec(name)``."""
    return hasattr(obj, "get_behavior_names") and hasattr(obj, "get_behavior_spec")


def _check_env_like(obj: Any) -> None:
    if not hasattr(obj, "get_steps") and hasattr(obj, "get_step_result"):
        raise ArgumentTypeError(
            f"{type(obj).__name__} has the mlagents_envs <= 0.15 API (get_agent_groups / "
            "get_step_result / BatchedStepResult), which zooport does not support; "
            "expected a BaseEnv with behavior_specs and get_steps (mlagents_envs >= 0.16)"
        )
    missing = [name for name in _REQUIRED if not hasattr(obj, name)]
    if not hasattr(obj, "behavior_specs") and not _has_spec_getters(obj):
        missing.insert(0, "behavior_specs")
    if missing:
        raise ArgumentTypeError(
            f"expected a BaseEnv-like object with behavior_specs (or get_behavior_names and "
            f"get_behavior_spec) and {list(_REQUIRED)}; {type(obj).__name__} lacks {missing}"
        )


def _legacy_specs(obj: Any) -> Mapping[str, Any]:
    """The behaviour specs of ``obj``, from ``behavior_specs`` or 0.16's getters."""
    if hasattr(obj, "behavior_specs"):
        return obj.behavior_specs
    return {name: obj.get_behavior_spec(name) for name in obj.get_behavior_names()}


def _steps_have_groups(legacy_spec: Any) -> bool | None:
    """Whether the DecisionSteps beside the spec's class take ``group_id`` (None: unknown)."""
    module = sys.modules.get(type(legacy_spec).__module__)
    steps_class = getattr(module, "DecisionSteps", None)
    if steps_class is None or steps_class is DecisionSteps:
        return None
    parameters = signature_parameters(steps_class)
    return None if parameters is None else "group_id" in parameters


def _spec_is_legacy(spec: Any) -> bool:
    if not hasattr(spec, "observation_specs") or not hasattr(spec, "action_spec"):
        return True
    return _steps_have_groups(spec) is False


def is_legacy_env(obj: Any) -> bool:
    """True when ``obj`` uses an older ``BaseEnv`` API that :func:`as_base_env` wraps.

    A zooport :class:`~zooport.envs.base_env.BaseEnv` (including a :class:`LegacyBaseEnv`)
    is never legacy; otherwise the behaviour specs decide (an env with no behaviour yet is
    taken as current).
    """
    if isinstance(obj, BaseEnv):
        return False
    _check_env_like(obj)
    if not hasattr(obj, "behavior_specs"):
        return True  # only mlagents_envs 0.16 had get_behavior_names/get_behavior_spec
    return any(_spec_is_legacy(spec) for spec in obj.behavior_specs.values())


def as_base_env(obj: Any, *, warn: bool = False) -> BaseEnv:
    """Returns ``obj`` if it has the current API, else a :class:`LegacyBaseEnv` over it.

    Args:
        obj: a zooport ``BaseEnv``, an ``mlagents_envs`` ``UnityEnvironment`` of any
            release since 0.16, or any object with the same methods.
        warn: issue a :class:`LegacyApiWarning` that lists what could not be mapped
            (it is always available as :attr:`LegacyBaseEnv.unmapped`).

    Raises:
        ArgumentTypeError: ``obj`` is not a BaseEnv-like object, or has the pre-0.16 API.
        SpecError: a behaviour spec that cannot be read (e.g. an unknown ``action_type``).

    Example:
        >>> from zooport.envs.builtin.basic import Basic
        >>> core = Basic()
        >>> as_base_env(core) is core
        True
    """
    if not is_legacy_env(obj):
        return obj
    wrapper_type = _SeedableLegacyBaseEnv if getattr(obj, "seedable", False) else LegacyBaseEnv
    env = wrapper_type(obj)
    if warn and env.unmapped:
        warnings.warn(
            f"{type(obj).__name__} has an older ML-Agents API; what zooport had to invent: "
            + "; ".join(env.unmapped),
            LegacyApiWarning,
            stacklevel=2,
        )
    return env


# ----------------------------------------------------------------------------- conversion


def _observation_specs(name: str, legacy_spec: Any, notes: list[str]) -> list[ObservationSpec]:
    specs = getattr(legacy_spec, "observation_specs", None)
    if specs is not None:
        result = []
        for i, s in enumerate(specs):
            shape = tuple(int(d) for d in s.shape)
            observation_type = getattr(s, "observation_type", ObservationType.DEFAULT)
            result.append(
                ObservationSpec(
                    shape,
                    tuple(DimensionProperty(int(p)) for p in s.dimension_property),
                    ObservationType(getattr(observation_type, "value", observation_type)),
                    str(getattr(s, "name", None) or f"obs_{i}"),
                )
            )
        if result and not hasattr(specs[0], "name"):  # 0.24's ObservationSpec has no name
            notes.append(f"{name}: observation names (generated obs_0..obs_{len(result) - 1})")
        return result
    shapes = getattr(legacy_spec, "observation_shapes", None)
    if shapes is None:
        raise SpecError(
            f"behavior {name!r}: expected a spec with observation_specs or observation_shapes, "
            f"got {type(legacy_spec).__name__} {legacy_spec!r}"
        )
    result = []
    for i, shape in enumerate(shapes):
        shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)
        result.append(
            ObservationSpec(
                shape,
                (DimensionProperty.UNSPECIFIED,) * len(shape),
                ObservationType.DEFAULT,
                f"obs_{i}",
            )
        )
    if result:
        notes.append(
            f"{name}: observation names (generated obs_0..obs_{len(result) - 1}), "
            "dimension properties (UNSPECIFIED) and observation types (DEFAULT)"
        )
    return result


def _empty_action_of(legacy_action_spec: Any, method: str) -> Any:
    make = getattr(legacy_action_spec, method, None)
    if make is None:
        return None
    return make(0)


def _action_spec(name: str, legacy_spec: Any) -> tuple[ActionSpec, _ActionMode, Any, Any]:
    """The current ActionSpec, how actions are sent, their ndarray dtype, a tuple factory."""
    legacy_action_spec = getattr(legacy_spec, "action_spec", None)
    if legacy_action_spec is not None:
        spec = ActionSpec.create_hybrid(
            int(legacy_action_spec.continuous_size),
            tuple(int(b) for b in legacy_action_spec.discrete_branches),
        )
        template = _empty_action_of(legacy_action_spec, "empty_action")
        if isinstance(template, np.ndarray):
            if spec.continuous_size and spec.discrete_size:
                raise SpecError(
                    f"behavior {name!r}: a hybrid action spec ({spec}) cannot be sent as the "
                    "one ndarray this env's empty_action() returns"
                )
            return spec, _ActionMode.NDARRAY, template.dtype, None
        factory = type(template) if template is not None else ActionTuple
        return spec, _ActionMode.TUPLE, None, factory
    action_type = getattr(legacy_spec, "action_type", None)
    kind = str(getattr(action_type, "name", action_type)).upper()
    shape: Any = getattr(legacy_spec, "action_shape", None)
    default: np.dtype[Any]
    # None (no action_shape) is neither a tuple nor an int: the SpecErrors below name it.
    if kind == "DISCRETE":
        if shape is None or np.ndim(shape) == 0:
            raise SpecError(
                f"behavior {name!r}: expected the action_shape of a discrete spec to be a tuple "
                f"of branch sizes, got {shape!r}"
            )
        spec = ActionSpec.create_discrete(tuple(int(b) for b in shape))
        default = np.dtype(np.int32)
    elif kind == "CONTINUOUS":
        if shape is None or np.ndim(shape) != 0:
            raise SpecError(
                f"behavior {name!r}: expected the action_shape of a continuous spec to be an "
                f"int, got {shape!r}"
            )
        spec = ActionSpec.create_continuous(int(shape))
        default = np.dtype(np.float32)
    else:
        raise SpecError(
            f"behavior {name!r}: expected a spec with action_spec, or action_type DISCRETE or "
            f"CONTINUOUS, got action_type {action_type!r}"
        )
    template = _empty_action_of(legacy_spec, "create_empty_action")
    dtype = template.dtype if isinstance(template, np.ndarray) else default
    return spec, _ActionMode.NDARRAY, dtype, None


def _convert_behavior(name: str, legacy_spec: Any) -> _Behavior:
    notes: list[str] = []
    observation_specs = _observation_specs(name, legacy_spec, notes)
    action_spec, mode, dtype, factory = _action_spec(name, legacy_spec)
    if _steps_have_groups(legacy_spec) is not True:
        notes.append(f"{name}: group_id and group_reward (zeros where the steps have none)")
    return _Behavior(
        legacy_spec, BehaviorSpec(observation_specs, action_spec), mode, dtype, factory, notes
    )


def _zeros_if_none(values: Any, n: int, dtype: type) -> np.ndarray:
    if values is None:
        return np.zeros(n, dtype=dtype)
    return np.asarray(values, dtype=dtype)


def _masks(mask: Any, branches: tuple[int, ...]) -> list[np.ndarray] | None:
    if mask is None or not branches:
        return None
    if isinstance(mask, np.ndarray) and mask.ndim == 2:
        # One concatenated (n, sum(branches)) matrix: split it per branch, as ML-Agents does.
        return np.split(mask.astype(bool, copy=False), np.cumsum(branches)[:-1], axis=1)
    return [np.asarray(m, dtype=bool) for m in mask]


def _decision_steps(steps: Any, spec: BehaviorSpec) -> DecisionSteps:
    agent_id = np.asarray(steps.agent_id, dtype=np.int32)
    n = agent_id.shape[0]
    return DecisionSteps(
        obs=list(steps.obs),
        reward=np.asarray(steps.reward, dtype=np.float32),
        agent_id=agent_id,
        action_mask=_masks(steps.action_mask, spec.action_spec.discrete_branches),
        group_id=_zeros_if_none(getattr(steps, "group_id", None), n, np.int32),
        group_reward=_zeros_if_none(getattr(steps, "group_reward", None), n, np.float32),
    )


def _terminal_steps(steps: Any) -> TerminalSteps:
    agent_id = np.asarray(steps.agent_id, dtype=np.int32)
    n = agent_id.shape[0]
    interrupted = getattr(steps, "interrupted", None)
    if interrupted is None:
        # mlagents_envs 0.16 named the truncation flag max_step.
        interrupted = getattr(steps, "max_step", None)
    return TerminalSteps(
        obs=list(steps.obs),
        reward=np.asarray(steps.reward, dtype=np.float32),
        interrupted=_zeros_if_none(interrupted, n, bool),
        agent_id=agent_id,
        group_id=_zeros_if_none(getattr(steps, "group_id", None), n, np.int32),
        group_reward=_zeros_if_none(getattr(steps, "group_reward", None), n, np.float32),
    )


# ----------------------------------------------------------------------------- the wrapper


class LegacyBaseEnv(BaseEnv):
    """The current ``BaseEnv`` API over an environment written against an older one.

    Made by :func:`as_base_env` (every adapter calls it on the core it is given). Specs are
    converted once per behaviour, steps once per batch the wrapped env returns, actions on
    every ``set_actions`` (validated as zooport validates them, then sent in the wrapped
    env's own format). ``set_action_for_agent`` is built on the wrapped env's
    ``set_actions`` (the pending batch with that agent's row replaced), so it works the
    same on every generation.

    Args:
        env: the older-generation environment.

    Attributes:
        legacy_env: the wrapped environment.

    Example:
        >>> import enum
        >>> from typing import NamedTuple
        >>> import numpy as np
        >>> class ActionType(enum.Enum):
        ...     DISCRETE = 0
        ...     CONTINUOUS = 1
        >>> class OldSpec(NamedTuple):
        ...     observation_shapes: list
        ...     action_type: ActionType
        ...     action_shape: tuple
        >>> class OldSteps(NamedTuple):
        ...     obs: list
        ...     reward: np.ndarray
        ...     agent_id: np.ndarray
        ...     action_mask: list | None = None
        >>> class OldEnv:
        ...     behavior_specs = {"Walker": OldSpec([(3,)], ActionType.DISCRETE, (2,))}
        ...     sent = None
        ...     def reset(self): pass
        ...     def step(self): pass
        ...     def close(self): pass
        ...     def set_actions(self, name, action): self.sent = action
        ...     def get_steps(self, name):
        ...         steps = OldSteps([np.zeros((1, 3), np.float32)], np.ones(1), np.array([7]))
        ...         return steps, OldSteps([np.zeros((0, 3), np.float32)], np.zeros(0),
        ...                                np.zeros(0, np.int32))
        >>> env = as_base_env(OldEnv())
        >>> env.behavior_specs["Walker"].observation_specs[0].name
        'obs_0'
        >>> env.reset()
        >>> decision, terminal = env.get_steps("Walker")
        >>> decision.agent_id.tolist(), decision.group_id.tolist(), terminal.interrupted.shape
        ([7], [0], (0,))
        >>> env.set_actions("Walker", ActionTuple(discrete=np.array([[1]])))
        >>> env.legacy_env.sent, env.legacy_env.sent.dtype
        (array([[1]], dtype=int32), dtype('int32'))
    """

    #: Adapters reseed cores that declare this; see :class:`_SeedableLegacyBaseEnv`.
    seedable: ClassVar[bool] = False

    def __init__(self, env: Any) -> None:
        _check_env_like(env)
        self.legacy_env = env
        self._behaviors: dict[BehaviorName, _Behavior] = {}
        self._mapping = BehaviorMapping({})
        self._steps: dict[BehaviorName, tuple[Any, Any, DecisionSteps, TerminalSteps]] = {}
        self._pending: dict[BehaviorName, ActionTuple] = {}
        self._closed = False
        self._refresh_specs()

    # ------------------------------------------------------------------ specs

    def _refresh_specs(self) -> None:
        changed = False
        legacy_specs = _legacy_specs(self.legacy_env)
        for name, legacy_spec in legacy_specs.items():
            known = self._behaviors.get(name)
            if known is None or not (
                known.legacy_spec is legacy_spec or known.legacy_spec == legacy_spec
            ):
                self._behaviors[name] = _convert_behavior(name, legacy_spec)
                changed = True
        if changed or len(self._behaviors) != len(legacy_specs):
            for name in [n for n in self._behaviors if n not in legacy_specs]:
                del self._behaviors[name]
            self._mapping = BehaviorMapping({n: b.spec for n, b in self._behaviors.items()})

    def _behavior(self, name: BehaviorName) -> _Behavior:
        behavior = self._behaviors.get(name) if isinstance(name, str) else None
        if behavior is None:
            self._refresh_specs()
            behavior = self._behaviors.get(name) if isinstance(name, str) else None
        if behavior is None:
            raise UnknownBehaviorError(
                f"{type(self.legacy_env).__name__} has no behavior {name!r}; "
                f"behaviors: {list(self._behaviors)}"
            )
        return behavior

    @property
    def behavior_specs(self) -> Mapping[BehaviorName, BehaviorSpec]:
        """The behaviours in the current API (the same objects until a spec changes)."""
        self._refresh_specs()
        return self._mapping

    @property
    def unmapped(self) -> tuple[str, ...]:
        """What the older API does not have and zooport generated, one line per behaviour."""
        return tuple(note for b in self._behaviors.values() for note in b.notes)

    # ------------------------------------------------------------------ steps

    def get_steps(self, behavior_name: BehaviorName) -> tuple[DecisionSteps, TerminalSteps]:
        behavior = self._behavior(behavior_name)
        decision, terminal = self.legacy_env.get_steps(behavior_name)
        cached = self._steps.get(behavior_name)
        if cached is not None and cached[0] is decision and cached[1] is terminal:
            return cached[2], cached[3]
        converted = (_decision_steps(decision, behavior.spec), _terminal_steps(terminal))
        self._steps[behavior_name] = (decision, terminal, *converted)
        return converted

    def reset(self) -> None:
        self._pending.clear()
        self.legacy_env.reset()

    def step(self) -> None:
        self._pending.clear()
        self.legacy_env.step()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.legacy_env.close()

    @property
    def closed(self) -> bool:
        """True once ``close()`` was called on this wrapper or the wrapped env says so."""
        return self._closed or bool(getattr(self.legacy_env, "closed", False))

    # ------------------------------------------------------------------ actions

    def set_actions(self, behavior_name: BehaviorName, action: ActionTuple) -> None:
        behavior = self._behavior(behavior_name)
        n = len(self.get_steps(behavior_name)[0])
        action = behavior.spec.action_spec._validate_action(action, n, behavior_name)
        self._pending[behavior_name] = action
        self._send(behavior_name, behavior, action)

    def set_action_for_agent(
        self, behavior_name: BehaviorName, agent_id: AgentId, action: ActionTuple
    ) -> None:
        behavior = self._behavior(behavior_name)
        action_spec = behavior.spec.action_spec
        action = action_spec._validate_action(action, 1, behavior_name)
        decision = self.get_steps(behavior_name)[0]
        index = decision.agent_id_to_index.get(agent_id)
        if index is None:
            raise UnknownAgentError(
                f"behavior {behavior_name!r}: agent {agent_id!r} did not request a decision at "
                f"the last step; agents that did: {decision.agent_id.tolist()}"
            )
        pending = self._pending.get(behavior_name)
        if pending is None:
            pending = action_spec.empty_action(len(decision))
        continuous = np.array(pending.continuous, dtype=np.float32)
        discrete = np.array(pending.discrete, dtype=np.int32)
        if action_spec.continuous_size:
            continuous[index] = action.continuous[0]
        if action_spec.discrete_size:
            discrete[index] = action.discrete[0]
        batch = ActionTuple(continuous=continuous, discrete=discrete)
        self._pending[behavior_name] = batch
        self._send(behavior_name, behavior, batch)

    def _send(self, name: BehaviorName, behavior: _Behavior, action: ActionTuple) -> None:
        spec = behavior.spec.action_spec
        if behavior.mode is _ActionMode.NDARRAY:
            part = action.continuous if spec.continuous_size else action.discrete
            # A fresh array: an old UnityEnvironment keeps a reference until step().
            self.legacy_env.set_actions(name, np.array(part, dtype=behavior.dtype))
            return
        n = len(action)
        continuous = action.continuous if spec.continuous_size else np.zeros((n, 0), np.float32)
        discrete = action.discrete if spec.discrete_size else np.zeros((n, 0), np.int32)
        factory = behavior.factory
        assert factory is not None  # every behaviour sent as a tuple has its tuple class
        self.legacy_env.set_actions(
            name, factory(continuous=continuous.copy(), discrete=discrete.copy())
        )

    # ------------------------------------------------------------------ the rest

    @property
    def side_channels(self) -> list[Any]:
        """The wrapped env's side channels (a Unity build's, from its side-channel manager)."""
        channels = getattr(self.legacy_env, "side_channels", None)
        if channels is None:
            manager = getattr(self.legacy_env, "_side_channel_manager", None)
            channels = getattr(manager, "_side_channels_dict", {}).values()
        return list(channels)

    @property
    def metadata(self) -> dict[str, Any]:
        """The wrapped env's ``metadata`` (render modes, fps), or an empty dict."""
        return dict(getattr(self.legacy_env, "metadata", {}) or {})

    def render(self) -> Any:
        """The wrapped env's picture; ``NotImplementedError`` if it cannot render."""
        render = getattr(self.legacy_env, "render", None)
        if render is None:
            raise NotImplementedError(f"{type(self.legacy_env).__name__} does not render")
        return render()

    def __repr__(self) -> str:
        return f"LegacyBaseEnv({self.legacy_env!r})"


class _SeedableLegacyBaseEnv(LegacyBaseEnv):
    """A :class:`LegacyBaseEnv` over an env whose ``reset`` takes ``seed``."""

    seedable: ClassVar[bool] = True

    def reset(self, seed: int | None = None) -> None:
        self._pending.clear()
        if seed is None:
            self.legacy_env.reset()
        else:
            self.legacy_env.reset(seed=seed)
