"""ai-traineree's task API over Gymnasium spaces: ``DataSpace``, flat-space sizes, the tasks' base
class, and ``GymTask`` (a ``gymnasium.Wrapper``: transforms, frame stacks, random starts)."""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import RecordConstructorArgs
from gymnasium.vector.utils import batch_space
from gymnasium.wrappers import RecordVideo
from typing_extensions import override

from zooport.envs.arguments import check_int, check_seed
from zooport.envs.capabilities import signature_parameters
from zooport.envs.step_guard import StepGuard
from zooport.errors import ArgumentError, ArgumentTypeError, SpecError, article

__all__ = [
    "DataSpace", "GymTask", "TRANSFORM_ARGUMENTS", "TaskBase", "action_size", "agent_action_space",
    "is_discrete", "observation_size",
]  # fmt: skip

_FLAT = (spaces.Box, spaces.MultiBinary, spaces.MultiDiscrete)


def policy_part(space: spaces.Space) -> spaces.Space:
    """The ``"observation"`` part of a mask-convention ``Dict``, else ``space``."""
    if isinstance(space, spaces.Dict) and set(space.spaces) == {"observation", "action_mask"}:
        return space["observation"]
    return space


def _condensed(bound: np.ndarray) -> Any:
    # One value where every element has it, else the elements as a nested list.
    flat = np.ravel(bound)
    return flat[0].item() if flat.size and (flat == flat[0]).all() else bound.tolist()


@dataclass
class DataSpace:
    """ai-traineree's ``DataSpace``; bounds are inclusive, one number where all share it."""

    dtype: str
    shape: tuple[int, ...]
    low: Any = None
    high: Any = None

    @staticmethod
    def from_int(size: int) -> DataSpace:
        """The integers ``0 .. size - 1``."""
        return DataSpace(dtype="int", shape=(size,), low=0, high=size - 1)

    @staticmethod
    def from_gym_space(space: spaces.Space) -> DataSpace:
        """The ``DataSpace`` of a flat Gymnasium space (a ``Discrete`` has shape ``(1,)``)."""
        space = policy_part(space)
        dtype = str(space.dtype)
        if isinstance(space, (spaces.Discrete, spaces.MultiDiscrete)):
            low = np.asarray(space.start)
            high = low + (space.n if isinstance(space, spaces.Discrete) else space.nvec) - 1
            return DataSpace(dtype, space.shape or (1,), _condensed(low), _condensed(high))
        if isinstance(space, spaces.MultiBinary):
            return DataSpace(dtype, space.shape, 0, 1)
        if isinstance(space, spaces.Box):
            return DataSpace(dtype, space.shape, _condensed(space.low), _condensed(space.high))
        raise SpecError(
            f"a DataSpace describes a flat space (Box, Discrete, MultiBinary, MultiDiscrete); "
            f"this space is {space}: read observation_space/action_space instead"
        )

    def to_feature(self) -> tuple[int, ...]:
        """The number of values of a 1-D integer space, else its shape (ai-traineree's rule)."""
        if self.dtype.startswith("int") and len(self.shape) == 1:
            return (int(self.high) - int(self.low) + 1,)
        return self.shape


class _Box(spaces.Box):
    def to_feature(self) -> tuple[int, ...]:
        return DataSpace.from_gym_space(self).to_feature()


class _Discrete(spaces.Discrete):
    to_feature = _Box.to_feature

    @property
    def low(self) -> int:
        return int(self.start)

    @property
    def high(self) -> int:  # inclusive, as a DataSpace has it
        return int(self.start + self.n - 1)


def agent_action_space(space: spaces.Space) -> spaces.Space:
    """A ``Discrete`` or ``Box`` as an equal space with ``to_feature()``, ``low`` and ``high``."""
    if type(space) is spaces.Discrete:
        return _Discrete(int(space.n), start=int(space.start))
    if type(space) is spaces.Box:
        return _Box(space.low, space.high, dtype=space.dtype)
    return space


def observation_size(space: spaces.Space) -> int:
    """The number of values in one observation of ``space``, flattened (``Discrete``: 1)."""
    return _size(policy_part(space), "obs_size", "observation", n_of_discrete=False)


def action_size(space: spaces.Space) -> int:
    """``n`` for a ``Discrete`` space, else the number of action values (product of the shape)."""
    return _size(space, "action_size", "action", n_of_discrete=True)


def _size(space: spaces.Space, what: str, kind: str, n_of_discrete: bool) -> int:
    if isinstance(space, spaces.Discrete):
        return int(space.n) if n_of_discrete else 1
    if isinstance(space, _FLAT):
        return int(np.prod(space.shape, dtype=np.int64))
    raise SpecError(
        f"{what} is the size of a flat {kind} space (Box, Discrete, MultiBinary, MultiDiscrete); "
        f"this {kind} space is {space}: read {kind}_space instead"
    )


def is_discrete(space: spaces.Space) -> bool:
    """True for ``Discrete`` and ``MultiDiscrete`` action spaces (ai-traineree's definition)."""
    return isinstance(space, (spaces.Discrete, spaces.MultiDiscrete))


class TaskBase:
    """The tasks' ``seed()`` and ``obs_size``/``action_size`` (over ``_agent_spaces()``)."""

    _next_seed: int | None = None

    def _agent_spaces(self) -> tuple[Mapping[str, spaces.Space], Mapping[str, spaces.Space]]:
        raise NotImplementedError

    def _take_seed(self, seed: int | None) -> int | None:
        # reset()'s seed (a bad one raises, changing nothing), else the one seed() gave since.
        seed = check_seed(seed, f"{type(self).__name__}.reset")
        if seed is None:
            seed, self._next_seed = self._next_seed, None
        return seed

    def seed(self, seed: int | None = None) -> None:
        """Seeds the next ``reset()`` (as ``reset(seed=...)`` does)."""
        self._next_seed = check_seed(seed, f"{type(self).__name__}.seed")

    def _one_size(self, what: str, by_agent: Mapping[str, Any], size: Callable[..., int]) -> int:
        # The size every agent's space shares; a SpecError listing them where they differ.
        by_size: dict[int, list[str]] = {}
        for name, space in by_agent.items():
            by_size.setdefault(size(space), []).append(name)
        if len(by_size) == 1:
            return next(iter(by_size))
        listed = ", ".join(
            f"{n} for {names[:5]}" + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            for n, names in by_size.items()
        )
        raise SpecError(
            f"{type(self).__name__}.{what}: its agents do not share one size: "
            f"{listed or 'no agents'}; ask each agent's observation_space/action_space instead"
        )

    @property
    def obs_size(self) -> int:
        """The number of values of each agent's observation, without a mask (``obs_size[0]``)."""
        return self._one_size("obs_size", self._agent_spaces()[0], observation_size)

    @property
    def action_size(self) -> int:
        """Each agent's ``Discrete`` ``n``, else its number of action values (``action_size.n``)."""
        return self._one_size("action_size", self._agent_spaces()[1], action_size)


#: What a ``state_transform``/``reward_transform`` may declare, by name.
TRANSFORM_ARGUMENTS = ("state", "action", "reward", "terminated", "truncated", "done", "info")


def _transform(
    function: Callable[..., Any] | None, role: str, value: str
) -> Callable[[dict[str, Any]], Any]:
    """``function`` as a function of the named values; without one, the ``value`` itself."""
    if function is None:
        return operator.itemgetter(value)
    if not callable(function):
        raise ArgumentTypeError(
            f"Expected {role} to be callable, actually: {type(function).__name__}"
        )
    found = signature_parameters(function)
    if found is None:  # a state_transform without a readable signature (max) gets the state
        if role != "state_transform":
            raise ArgumentTypeError(f"{role}: cannot read the signature of {function!r}")
        return functools.partial(_call, function, True, ())
    kind = inspect.Parameter
    by_position = (kind.POSITIONAL_ONLY, kind.VAR_POSITIONAL)
    parameters = list(found.values())
    # A state_transform's first parameter, positional and named otherwise, gets the state.
    first = parameters[0] if parameters else None
    positional = (
        role == "state_transform"
        and first is not None
        and first.kind <= kind.VAR_POSITIONAL
        and (first.kind in by_position or first.name not in TRANSFORM_ARGUMENTS)
    )
    if positional:
        parameters = parameters[1:]
    if any(p.kind is kind.VAR_KEYWORD for p in parameters):
        return functools.partial(_call, function, positional, TRANSFORM_ARGUMENTS)
    names = []
    for p in parameters:
        if p.name in TRANSFORM_ARGUMENTS and p.kind not in by_position:
            names.append(p.name)
        elif p.default is kind.empty and p.kind is not kind.VAR_POSITIONAL:
            raise ArgumentTypeError(
                f"{role} {getattr(function, '__qualname__', function)!r}: expected its required "
                f"parameters to be named among {list(TRANSFORM_ARGUMENTS)} (passed by name), "
                f"actually: {p.name!r}"
            )
    return functools.partial(_call, function, positional, tuple(names))


def _call(function: Callable[..., Any], positional: bool, names: Any, values: Any) -> Any:
    named = {k: values[k] for k in names}
    return function(values["state"], **named) if positional else function(**named)


def _space_of(value: Any, role: str) -> spaces.Space:
    if isinstance(value, Mapping):
        return spaces.Dict({key: _space_of(item, role) for key, item in value.items()})
    array = np.asarray(value)
    if np.issubdtype(array.dtype, np.floating):
        return spaces.Box(-np.inf, np.inf, array.shape, array.dtype)
    if np.issubdtype(array.dtype, np.integer):
        info = np.iinfo(array.dtype)
        return spaces.Box(info.min, info.max, array.shape, array.dtype)
    raise ArgumentTypeError(
        f"{role} returned {article(array.dtype)} value; its observation space cannot be inferred, "
        "pass observation_space="
    )


def _default_noop(space: spaces.Space) -> Any:
    if isinstance(space, spaces.Dict):
        parts = {key: _default_noop(sub) for key, sub in space.spaces.items()}
        return None if any(v is None for v in parts.values()) else parts
    if isinstance(space, (spaces.Discrete, spaces.MultiDiscrete)):  # the lowest action
        low = np.array(space.start, dtype=space.dtype)
        return low if low.ndim else int(low)
    if isinstance(space, spaces.Box):
        zero = np.zeros(space.shape, dtype=space.dtype)
        return zero if space.contains(zero) else None
    return None


def _values(state: Any, info: Any, step: tuple[Any, ...] = (None, 0.0, False, False)) -> Any:
    # What the transforms may ask for; ``step`` is (action, reward, terminated, truncated).
    action, reward, terminated, truncated = step
    values = (state, action, reward, terminated, truncated, terminated or truncated, info)
    return dict(zip(TRANSFORM_ARGUMENTS, values, strict=True))


class _Frames:
    """The last ``n`` frames of a Box or Dict-of-Box observation, oldest first, and their space."""

    def __init__(self, space: spaces.Space, n: int) -> None:
        parts: Any = space.spaces if isinstance(space, spaces.Dict) else {None: space}
        if not all(isinstance(sub, spaces.Box) for sub in parts.values()):
            raise ArgumentTypeError(
                f"stack_frames supports Box and Dict-of-Box observation spaces, actually: {space}"
            )
        self.buffers = {k: np.zeros((n, *sub.shape), sub.dtype) for k, sub in parts.items()}
        self.space = batch_space(space, n)

    def add(self, frame: Any, fill: bool) -> Any:
        for key, array in self.buffers.items():
            if not fill:  # the oldest frame leaves; a fill writes every row
                array[:-1] = array[1:]
            array[0 if fill else -1 :] = frame if key is None else frame[key]
        stacked = {key: array.copy() for key, array in self.buffers.items()}
        return stacked[None] if None in stacked else stacked


class GymTask(gym.Wrapper[Any, Any, Any, Any], RecordConstructorArgs, TaskBase):
    """A task on a Gymnasium environment: transforms, stacked frames and random starts.

    The transforms get what they declare, by name, of :data:`TRANSFORM_ARGUMENTS` (at reset
    ``action=None``, ``reward=0.0``, false flags); a first positional parameter named otherwise
    (``lambda s: s / 255``) gets the state. A ``Discrete`` task's action is cast with ``int()``.

    Args:
        env: a Gymnasium id (made with ``gym.make(env, **make_kwargs)``) or an env.
        state_transform: returns the observation the agent sees.
        reward_transform: returns the reward the agent gets.
        can_render: ``render()`` returns the env's frames (an id is made for ``"rgb_array"``).
        stack_frames: the last ``n`` frames on a new first axis, oldest first.
        skip_start_frames: each reset takes a random ``[0, n]`` ``noop_action`` steps.
        observation_space: of ``state_transform``'s results (default: inferred, unbounded).
        noop_action: the action skipped steps take (default: the lowest action, or zeros).
        video_episode_trigger: record every ``n``-th episode in ``video_folder`` (``RecordVideo``).
        **make_kwargs: ``gym.make`` keywords, only when ``env`` is an id.
    """

    def __init__(
        self,
        env: str | gym.Env,
        state_transform: Callable[..., Any] | None = None,
        reward_transform: Callable[..., SupportsFloat] | None = None,
        can_render: bool = True,
        stack_frames: int = 1,
        skip_start_frames: int = 0,
        *,
        observation_space: spaces.Space | None = None,
        noop_action: Any = None,
        video_episode_trigger: int | None = None,
        video_folder: str = "videos",
        **make_kwargs: Any,
    ) -> None:
        # What RecordConstructorArgs records: the arguments but the env and make's.
        recorded = {k: v for k, v in locals().items() if k not in ("self", "env", "make_kwargs")}
        self.stack_frames = check_int(stack_frames, "stack_frames", 1, where="GymTask")
        self.skip_start_frames = check_int(skip_start_frames, "skip_start_frames", where="GymTask")
        if isinstance(env, str):
            self.name = env
            made = None
            if can_render and "render_mode" not in make_kwargs:  # unless the env refuses it
                with contextlib.suppress(ArgumentError, TypeError):
                    made = gym.make(env, render_mode="rgb_array", **make_kwargs)
            env = made if made is not None else gym.make(env, **make_kwargs)
        elif make_kwargs:
            raise ArgumentTypeError(
                f"GymTask: gym.make keywords {sorted(make_kwargs)} need an env id, "
                f"actually got an instance of {type(env).__name__}"
            )
        elif not isinstance(env, gym.Env):
            raise ArgumentTypeError(
                f"Expected env to be a Gymnasium id or gymnasium.Env, actually: "
                f"{type(env).__name__}"
            )
        else:
            self.name = env.spec.id if env.spec is not None else "custom"
        if video_episode_trigger is not None:
            every = check_int(video_episode_trigger, "video_episode_trigger", 1, where="GymTask")
            env = RecordVideo(
                env, video_folder, lambda episode: episode % every == 0, name_prefix=self.name
            )
        RecordConstructorArgs.__init__(self, _disable_deepcopy=True, **recorded)
        gym.Wrapper.__init__(self, env)
        self.can_render = bool(can_render) and env.render_mode is not None
        self._transform_state = _transform(state_transform, "state_transform", "state")
        self._transform_reward = _transform(reward_transform, "reward_transform", "reward")
        if observation_space is not None and state_transform is None:
            raise ArgumentError("GymTask: observation_space= describes state_transform's results")
        frame_space = env.observation_space if state_transform is None else observation_space
        if frame_space is None:  # inferred from a sample of the transform's
            sample_space = copy.deepcopy(env.observation_space)
            sample_space.seed(0)
            sample = self._transform_state(_values(sample_space.sample(), {}))
            frame_space = _space_of(sample, "state_transform")
        self._frames = _Frames(frame_space, self.stack_frames) if self.stack_frames > 1 else None
        self.observation_space = self._frames.space if self._frames else frame_space
        if noop_action is None and self.skip_start_frames:
            noop_action = _default_noop(env.action_space)
            if noop_action is None:
                raise ArgumentError(
                    f"GymTask: no default no-op action for {env.action_space}; pass noop_action="
                )
        if noop_action is not None and not env.action_space.contains(noop_action):
            raise ArgumentError(
                f"Expect noop_action in {env.action_space}, actually: {noop_action!r}"
            )
        self.noop_action = noop_action
        self.action_space = agent_action_space(env.action_space)
        self._skip_rng = np.random.default_rng()
        self._cast_action = isinstance(env.action_space, spaces.Discrete)
        #: The task's re-entry and failure state.
        self.step_guard = StepGuard(type(self).__name__)

    @override
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Resets the env (with the :meth:`seed` given since, by default), skips the start."""
        seed = self._take_seed(seed)
        with self.step_guard.resetting():
            if seed is not None:
                self._skip_rng = np.random.default_rng(seed)
            obs, info = self.env.reset(seed=seed, options=options)
            for _ in range(int(self._skip_rng.integers(0, self.skip_start_frames + 1))):
                obs, _, terminated, truncated, info = self.env.step(self.noop_action)
                if terminated or truncated:
                    obs, info = self.env.reset()
                    break
            state = self._transform_state(_values(obs, info))
            if self._frames is not None:
                state = self._frames.add(state, fill=True)
        return state, info

    @override
    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Steps the env; returns the transformed (and stacked) observation and reward."""
        with self.step_guard.call("step"):
            # ai-traineree's int(action) on a Discrete task, for a float or a one-element array
            # (a tensor); what int() cannot cast (NaN, an infinity) goes on for the env to judge.
            if self._cast_action and (
                isinstance(action, float)
                or (hasattr(action, "__array__") and not isinstance(action, np.integer))
            ):
                array = np.asarray(action)
                if array.size == 1 and array.dtype.kind in "biuf" and np.isfinite(array).all():
                    action = int(array.reshape(()))
            obs, reward, terminated, truncated, info = self.env.step(action)
            self.step_guard.committed = True  # the env stepped: an exception now loses data
            values = _values(obs, info, (action, reward, terminated, truncated))
            new_reward = self._transform_reward(values)
            state = self._transform_state(values)
            if self._frames is not None:
                state = self._frames.add(state, fill=False)
        return state, new_reward, terminated, truncated, info

    @override
    def render(self) -> Any:
        """The wrapped env's frame when ``can_render``, else None."""
        return self.env.render() if self.can_render else None

    def _agent_spaces(self) -> tuple[dict[str, spaces.Space], dict[str, spaces.Space]]:
        return {self.name: self.observation_space}, {self.name: self.action_space}

    @property
    def is_discrete(self) -> bool:
        """True for a ``Discrete`` or ``MultiDiscrete`` action space."""
        return is_discrete(self.action_space)

    @property
    def obs_space(self) -> DataSpace:
        """ai-traineree's ``DataSpace`` of the observations the agent sees."""
        return DataSpace.from_gym_space(self.observation_space)

    @property
    def actual_obs_shape(self) -> tuple[int, ...]:
        """The shape of one observation as ``reset()`` and ``step()`` return it."""
        shape = policy_part(self.observation_space).shape
        if shape is None:
            raise SpecError(
                f"actual_obs_shape: the observations of {self.observation_space} have no one "
                "shape; read observation_space instead"
            )
        return shape

    @property
    def actual_obs_size(self) -> int:
        """The number of values of one observation, ``prod(actual_obs_shape)``."""
        return int(np.prod(self.actual_obs_shape, dtype=np.int64))
