"""ai-traineree's ``GymTask``, a ``gymnasium.Wrapper``: transforms, frame stacks, random starts."""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import operator
from collections.abc import Callable, Mapping
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import RecordConstructorArgs
from gymnasium.vector.utils import batch_space
from gymnasium.wrappers import RecordVideo
from typing_extensions import override

from zooport.adapters import task_api
from zooport.envs.arguments import check_int, check_seed
from zooport.envs.capabilities import signature_parameters
from zooport.envs.step_guard import StepGuard
from zooport.errors import ArgumentError, ArgumentTypeError, SpecError, article

__all__ = ["GymTask", "TRANSFORM_ARGUMENTS"]

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


def _discrete_action(action: Any) -> Any:
    # ai-traineree's int(action) on a Discrete task, for a float or a one-element array (a
    # tensor); what int() cannot cast (NaN, an infinity) goes on for the env to judge.
    if isinstance(action, float) or (
        hasattr(action, "__array__") and not isinstance(action, np.integer)
    ):
        array = np.asarray(action)
        if array.size == 1 and array.dtype.kind in "biuf" and np.isfinite(array).all():
            return int(array.reshape(()))
    return action


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


class GymTask(gym.Wrapper[Any, Any, Any, Any], RecordConstructorArgs, task_api.TaskBase):
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
        self.action_space = task_api.agent_action_space(env.action_space)
        self._skip_rng = np.random.default_rng()
        self._cast_action = isinstance(env.action_space, spaces.Discrete)
        #: The task's re-entry and failure state.
        self.step_guard = StepGuard(type(self).__name__)

    @override
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Resets the env (with the :meth:`seed` given since, by default), skips the start."""
        seed = check_seed(seed, "GymTask.reset")  # a bad seed raises, changing nothing
        with self.step_guard.resetting():
            seed = self._take_seed(seed)
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
            if self._cast_action:
                action = _discrete_action(action)
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
        return task_api.is_discrete(self.action_space)

    @property
    def obs_space(self) -> task_api.DataSpace:
        """ai-traineree's ``DataSpace`` of the observations the agent sees."""
        return task_api.DataSpace.from_gym_space(self.observation_space)

    @property
    def actual_obs_shape(self) -> tuple[int, ...]:
        """The shape of one observation as ``reset()`` and ``step()`` return it."""
        shape = task_api.policy_part(self.observation_space).shape
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
