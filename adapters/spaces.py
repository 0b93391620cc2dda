"""A behaviour's specs as Gymnasium spaces, batch by batch, and :class:`AgentSlots`, the step
rules both engines share: no terminal reward is lost; a slot without a decision keeps its obs."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from zooport.adapters.action_layout import ActionLayout, checked_discrete
from zooport.envs.base_env import BehaviorSpec, DecisionSteps, ObservationSpec, TerminalSteps
from zooport.errors import ObservationError, SpecError

__all__ = [
    "ObservationLayout", "ActionLayout", "AgentSlots", "Index", "observation_key",
    "checked_discrete",
]  # fmt: skip

_FLOAT32 = np.dtype(np.float32)
_BOOL = np.dtype(bool)  # an instance: numpy converts a type on every call
_NOT_A_NAME = re.compile(r"[^0-9A-Za-z_]+")
#: The per-agent fields of a core batch (besides obs, masks, interrupted) and their dtypes.
_FIELD_TYPES = {"agent_id": None, "reward": _FLOAT32, "group_id": None, "group_reward": _FLOAT32}


def observation_key(spec: ObservationSpec, index: int) -> str:
    """The Dict key of an observation: its spec name made identifier-safe, or ``obs_<i>``."""
    name = _NOT_A_NAME.sub("_", spec.name or "").strip("_")
    return name or f"obs_{index}"


class ObservationLayout:
    """How a behaviour's observation specs become one Gymnasium space, batch by batch
    (zero-size observations are left out of ``specs``); ``name`` is for error messages."""

    def __init__(
        self,
        specs: Sequence[ObservationSpec],
        *,
        uint8_visual: bool = False,
        allow_multiple_obs: bool = False,
        name: str = "",
    ) -> None:
        if not specs:
            raise SpecError(
                f"behavior {name!r}: a behaviour without observations cannot be given a space"
            )
        self.name = name
        self.all_specs = list(specs)
        self._shapes = [tuple(int(d) for d in s.shape) for s in self.all_specs]
        kept = [i for i, shape in enumerate(self._shapes) if math.prod(shape) > 0]
        if not kept:
            raise SpecError(
                f"behavior {name!r}: every observation is empty (shapes {self._shapes}); "
                "a behaviour without observations cannot be given a space"
            )
        # The core's observations that are part of the space; None when all of them are.
        self._kept: list[int] | None = None if len(kept) == len(self.all_specs) else kept
        self.specs = [self.all_specs[i] for i in kept]
        self.uint8_visual = uint8_visual
        self._visual = [len(s.shape) == 3 for s in self.specs]
        parts = [self._space(s, v) for s, v in zip(self.specs, self._visual, strict=True)]
        self.keys: list[str] | None = None
        if allow_multiple_obs or (len(parts) > 1 and any(len(s.shape) != 1 for s in self.specs)):
            self.keys = []
            for i, spec in zip(kept, self.specs, strict=True):
                key = observation_key(spec, i)
                self.keys.append(f"{key}_{i}" if key in self.keys else key)
            # Gymnasium's Dict sorts its keys; conversions follow the space's order.
            self.space: spaces.Space = spaces.Dict(dict(zip(self.keys, parts, strict=True)))
            self._order = [self.keys.index(k) for k in self.space.spaces]
        elif len(parts) == 1:
            self.space = parts[0]
        else:
            size = sum(s.shape[0] for s in self.specs)
            self.space = spaces.Box(-np.inf, np.inf, (size,), np.float32)
        #: One float observation, not a Dict: a batch is written into a buffer as it is.
        as_uint8 = self._visual[0] and uint8_visual
        self.plain = len(self.all_specs) == 1 and self.keys is None and not as_uint8

    def _space(self, spec: ObservationSpec, visual: bool) -> spaces.Box:
        shape = tuple(int(d) for d in spec.shape)
        if visual and self.uint8_visual:
            return spaces.Box(0, 255, shape, np.uint8)
        low, high = (0.0, 1.0) if visual else (-np.inf, np.inf)
        return spaces.Box(low, high, shape, np.float32)

    def _part(self, obs: np.ndarray, i: int, rows: np.ndarray | None) -> np.ndarray:
        if rows is not None:
            obs = obs[rows]
        if self._visual[i] and self.uint8_visual:
            return np.rint(np.clip(obs, 0.0, 1.0) * 255.0).astype(np.uint8)
        return np.array(obs, dtype=_FLOAT32, copy=True)

    def checked(self, steps: Any, terminal: bool = False, rows_known: bool = False) -> Any:
        """A core batch (TerminalSteps with ``terminal``) whose observations and per-agent
        fields match the specs and the agent count, as arrays; else an ObservationError.
        ``rows_known``: a ``BatchedEnv`` built the per-agent fields; only its hooks' are checked."""
        agent_id = steps.agent_id
        n = len(agent_id)
        if not n:
            return steps
        rows = (n,)
        # Arrays of the right shapes in a few comparisons; else the slow path says what is wrong.
        try:
            obs = steps.obs
            shapes = self._shapes
            if (
                (
                    rows_known
                    or agent_id.shape == rows
                    and steps.reward.shape == rows
                    and steps.group_id.shape == rows
                    and steps.group_reward.shape == rows
                )
                and len(obs) == len(shapes)
                and (
                    obs[0].shape == rows + shapes[0]
                    if len(shapes) == 1
                    else all(o.shape == rows + s for o, s in zip(obs, shapes, strict=True))
                )
            ):
                if terminal:
                    if rows_known or steps.interrupted.shape == rows:
                        return steps
                else:
                    masks = steps.action_mask
                    if masks is None or all(m.shape[:1] == rows for m in masks):
                        return steps
        except AttributeError:
            pass
        return self._checked_slowly(steps, terminal, n)

    def _checked_slowly(self, steps: Any, terminal: bool, n: int) -> Any:
        obs = steps.obs
        shapes = self._shapes
        if len(obs) != len(shapes):
            raise ObservationError(
                f"behavior {self.name!r}: {type(steps).__name__} has {len(obs)} observations, "
                f"expected {len(shapes)} (one per observation spec: "
                f"{[s.name for s in self.all_specs]})"
            )
        for i, (o, shape) in enumerate(zip(obs, shapes, strict=True)):
            what = f"behavior {self.name!r}: {type(steps).__name__} observation {i} "
            what += f"({self.all_specs[i].name!r})"
            try:
                given = np.shape(o)
            except ValueError:  # numpy cannot make one array of it (ragged lists)
                raise ObservationError(
                    f"{what} is not an array of one shape; expected {(n, *shape)}"
                ) from None
            if given[1:] == shape and given[:1] != (n,):
                raise ObservationError(
                    f"{what} has {given[0]} rows, but the batch has {n} agent ids"
                )
            if given[1:] != shape:
                raise ObservationError(
                    f"{what} has shape {given}, expected {(n, *shape)} ({n} agents x the spec's "
                    f"{shape})"
                )
        fields = [*_FIELD_TYPES, "interrupted"] if terminal else [*_FIELD_TYPES]
        given = {field: np.shape(getattr(steps, field)) for field in fields}
        masks = None if terminal else steps.action_mask
        for j, m in enumerate(() if masks is None else masks):
            given[f"action_mask[{j}]"] = np.shape(m)
        wrong = {
            f: shape for f, shape in given.items()
            if shape[:1] != (n,) or (len(shape) != 1 and not f.startswith("action_mask"))
        }  # fmt: skip
        if wrong:
            raise ObservationError(
                f"behavior {self.name!r}: {type(steps).__name__} has {n} agent ids but "
                + ", ".join(f"{f} of shape {shape}" for f, shape in wrong.items())
                + f"; expected ({n},) for each"
            )
        # Right shapes: lists (as in ML-Agents' tests) become arrays of the core's dtypes.
        arrays: dict[str, Any] = {
            f: np.asarray(getattr(steps, f), dtype=t) for f, t in _FIELD_TYPES.items()
        }
        arrays["obs"] = [o if type(o) is np.ndarray else np.asarray(o, _FLOAT32) for o in obs]
        if terminal:
            return TerminalSteps(interrupted=np.asarray(steps.interrupted, dtype=bool), **arrays)
        masks = steps.action_mask
        masks = None if masks is None else [np.asarray(m, dtype=bool) for m in masks]
        return DecisionSteps(action_mask=masks, **arrays)

    def convert(
        self, obs: Sequence[np.ndarray], rows: np.ndarray | None = None
    ) -> np.ndarray | dict[str, np.ndarray]:
        """A core batch as fresh consumer arrays; ``rows`` selects and orders the agents."""
        if self.plain and rows is None:
            return np.array(obs[0], dtype=_FLOAT32)  # _part's copy, without its checks
        if self._kept is not None:
            obs = [obs[i] for i in self._kept]
        if self.keys is not None:
            return {self.keys[i]: self._part(obs[i], i, rows) for i in self._order}
        if len(self.specs) == 1:
            return self._part(obs[0], 0, rows)
        return np.concatenate([self._part(o, i, rows) for i, o in enumerate(obs)], axis=1)

    def allocate(self, n: int) -> np.ndarray | dict[str, np.ndarray]:
        """A zero batch of ``n`` observations in the consumer layout."""
        if isinstance(self.space, spaces.Dict):
            return {
                k: np.zeros((n, *(s.shape or ())), s.dtype) for k, s in self.space.spaces.items()
            }
        return np.zeros((n, *(self.space.shape or ())), self.space.dtype)

    def write(
        self,
        buffer: np.ndarray | dict[str, np.ndarray],
        slots: np.ndarray | slice,
        obs: Sequence[np.ndarray],
        rows: np.ndarray | None = None,
    ) -> None:
        """Writes a converted core batch into ``buffer[slots]`` (checked: :meth:`checked`)."""
        if isinstance(buffer, dict):  # a Dict layout's (allocate() made it)
            for key, value in self.convert(obs, rows).items():  # type: ignore[union-attr]
                buffer[key][slots] = value
        elif self.plain:
            # One float observation: assignment casts to float32; no intermediate copy.
            buffer[slots] = obs[0] if rows is None else obs[0][rows]
        else:
            buffer[slots] = self.convert(obs, rows)

    @staticmethod
    def copy(buffer: np.ndarray | dict[str, np.ndarray]) -> np.ndarray | dict[str, np.ndarray]:
        """A fresh copy of a batch (so callers never hold an adapter's buffer)."""
        if isinstance(buffer, dict):
            return {k: v.copy() for k, v in buffer.items()}
        return buffer.copy()

    @staticmethod
    def take(buffer: np.ndarray | dict[str, np.ndarray], i: int) -> np.ndarray | dict[str, Any]:
        """Row ``i`` of a batch, as fresh arrays."""
        if isinstance(buffer, dict):
            return {k: v[i].copy() for k, v in buffer.items()}
        return buffer[i].copy()


#: Slots to write: an index array, or a slice when they are the first slots in order.
Index = slice | np.ndarray


class AgentSlots:
    """A behaviour's layouts (``obs_layout``, ``action_layout``) and the per-slot ``obs``, ``mask``
    (``mask_size`` wide, 0: no masks kept) and ``group_id`` that the engine allocates."""

    obs: Any
    mask: np.ndarray
    group_id: np.ndarray
    mask_size: int

    def __init__(self, name: str, spec: BehaviorSpec, layout: Any) -> None:
        self.name = name
        self.spec = spec
        self.obs_layout = ObservationLayout(
            spec.observation_specs,
            uint8_visual=layout.uint8_visual,
            allow_multiple_obs=layout.allow_multiple_obs,
            name=name,
        )
        self.action_layout = ActionLayout(
            spec.action_spec, flatten_branched=layout.flatten_branched, name=name
        )

    def _end_episodes(
        self,
        index: Index,
        terminal: TerminalSteps,
        rows: np.ndarray | None,
        reward: np.ndarray,
        group_reward: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
        *,
        keep_obs: bool = True,
    ) -> None:
        """The slots ``index`` (rows ``rows`` of ``terminal``) end their episodes: terminal
        rewards and flags, and with ``keep_obs`` their final observation as their last."""
        interrupted = np.asarray(terminal.interrupted, dtype=_BOOL)
        if rows is None:
            reward[index] = terminal.reward
            group_reward[index] = terminal.group_reward
        else:
            reward[index] = terminal.reward[rows]
            group_reward[index] = terminal.group_reward[rows]
            interrupted = interrupted[rows]
        truncated[index] = interrupted
        terminated[index] = ~interrupted
        if keep_obs:
            self.obs_layout.write(self.obs, index, terminal.obs, rows)

    def _take_decisions(
        self, index: Index, decision: DecisionSteps, rows: np.ndarray | None, count: int
    ) -> None:
        """The ``count`` slots ``index`` (rows ``rows`` of ``decision``) take their
        observation, mask (1 = allowed) and group id; the others keep theirs."""
        self.obs_layout.write(self.obs, index, decision.obs, rows)
        if self.mask_size:
            masks = decision.action_mask
            if rows is not None and masks is not None:
                masks = [np.asarray(m)[rows] for m in masks]
            self.mask[index] = self.action_layout.allowed_mask(masks, count)
        # mlagents_envs (0.28) hands group ids out as a list, not an array.
        self.group_id[index] = (
            decision.group_id if rows is None else np.asarray(decision.group_id)[rows]
        )
