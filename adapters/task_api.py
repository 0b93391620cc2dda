"""ai-traineree's task API over Gymnasium spaces: ``DataSpace``, flat-space sizes, ``TaskBase``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from zooport.envs.arguments import check_seed
from zooport.errors import SpecError

__all__ = [
    "DataSpace", "TaskBase", "action_size", "agent_action_space", "is_discrete",
    "observation_size",
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
        # reset()'s seed, else the one seed() gave since.
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
