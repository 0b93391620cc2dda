"""The cores' rows of one step as the pool's DecisionSteps and TerminalSteps.

Classes:
    Part: one core's rows of a behaviour's DecisionSteps or TerminalSteps.

Functions:
    merge_steps: every core's :class:`Part` of a behaviour as one DecisionSteps and one
        TerminalSteps.
    pool_ids: a core's agent ids as pool agent ids.
    split_actions: the pool's actions for a behaviour as each core's rows (the reverse).

Rows of core 0 come first, then core 1's, and so on; agent ``a`` of core ``i`` (of K) is
pool agent ``a * K + i``. Each core's part carries pool ids already: a worker writes them
itself, so the pool's process has less to do while the workers wait. Views of a worker's
shared memory are copied (the next step overwrites them); a core in the pool's own process
hands over its own arrays when it is the only part, as it would in-process. A part with no
row is left out.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from zooport.envs.base_env import ActionTuple, BehaviorSpec, DecisionSteps, TerminalSteps
from zooport.errors import SpecError

__all__ = ["Part", "merge_steps", "pool_ids", "split_actions"]

_INT32_MIN, _INT32_MAX = int(np.iinfo(np.int32).min), int(np.iinfo(np.int32).max)


class Part(NamedTuple):
    """One core's rows of a behaviour's DecisionSteps or TerminalSteps.

    ``core`` is the core's index; ``agent_id`` holds pool ids (:func:`pool_ids`). ``mask``
    is a ``(n, sum of branches)`` bool array (a worker's), a list of per-branch arrays (a
    local core's) or None; ``interrupted`` is None for decisions. ``shared`` says the arrays
    are views of shared memory that the next step overwrites (copy them).
    """

    core: int
    n: int
    obs: list[np.ndarray]
    reward: np.ndarray
    agent_id: np.ndarray
    group_id: np.ndarray
    group_reward: np.ndarray
    mask: Any
    interrupted: np.ndarray | None
    shared: bool


def merge_steps(
    name: str,
    spec: BehaviorSpec,
    parts: list[tuple[Part | None, Part | None]],
    empty_terminal: TerminalSteps | None = None,
) -> tuple[DecisionSteps, TerminalSteps]:
    """The pool's ``(DecisionSteps, TerminalSteps)`` of behaviour ``name``.

    Args:
        name: the behaviour (for error messages).
        spec: its spec (for empty batches and the mask's branches).
        parts: ``(decision part, terminal part)`` of each core that answered, in core order
            (None where a core has no such behaviour).
        empty_terminal: when no core has a terminal step, a new batch of its (size 0)
            arrays is returned, as a BatchedEnv does; None: a new empty one.

    Raises:
        SpecError: the cores' observations differ in shape.
    """
    decisions = [d for d, _ in parts if d is not None and d.n]
    terminals = [t for _, t in parts if t is not None and t.n]
    if decisions:
        decision = DecisionSteps(
            obs=_join_obs(name, decisions),
            reward=_join([p.reward for p in decisions], decisions),
            agent_id=_join([p.agent_id for p in decisions], decisions),
            action_mask=_join_masks(spec, decisions),
            group_id=_join([p.group_id for p in decisions], decisions),
            group_reward=_join([p.group_reward for p in decisions], decisions),
        )
    else:
        decision = DecisionSteps.empty(spec)
    if terminals:
        terminal = TerminalSteps(
            obs=_join_obs(name, terminals),
            reward=_join([p.reward for p in terminals], terminals),
            interrupted=_join([p.interrupted for p in terminals], terminals),
            agent_id=_join([p.agent_id for p in terminals], terminals),
            group_id=_join([p.group_id for p in terminals], terminals),
            group_reward=_join([p.group_reward for p in terminals], terminals),
        )
    else:
        e = empty_terminal
        # A fresh object every step, as BatchedEnv's: a consumer that changes one step's
        # TerminalSteps never changes another step's (only the size-0 arrays are shared).
        terminal = TerminalSteps.empty(spec) if e is None else TerminalSteps(
            list(e.obs), e.reward, e.interrupted, e.agent_id, e.group_id, e.group_reward
        )  # fmt: skip
    return decision, terminal


def _join(arrays: list[Any], parts: list[Part]) -> np.ndarray:
    """One array of the parts' rows: shared-memory views copied, a local core's passed."""
    if len(arrays) == 1:
        array = arrays[0]
        return array.copy() if parts[0].shared else array
    return np.concatenate(arrays)


def _join_obs(name: str, parts: list[Part]) -> list[np.ndarray]:
    joined = []
    for j in range(len(parts[0].obs)):
        arrays = [p.obs[j] for p in parts]
        try:
            joined.append(_join(arrays, parts))
        except ValueError:
            shapes = {p.core: np.shape(a)[1:] for p, a in zip(parts, arrays, strict=True)}
            raise SpecError(
                f"behavior {name!r}: observation {j} has a different shape per core "
                f"({shapes}, by core index); every core of a pool must agree"
            ) from None
    return joined


def pool_ids(name: str, ids: Any, k: int, index: int, out: np.ndarray | None = None) -> np.ndarray:
    """Core ``index``'s agent ids (of a pool of ``k``) as pool ids, ``id * k + index``, int32.

    Args:
        name: the behaviour (for the error message).
        ids: the core's ids (any integer array).
        k: the number of cores in the pool.
        index: the core's index.
        out: where to write them (an int32 array of the same length); None: a new array.

    Raises:
        SpecError: a pool id would leave int32.

    Example:
        >>> pool_ids("B", np.array([0, 1, 5], np.int32), 3, 2).tolist()
        [2, 5, 17]
    """
    ids = np.asarray(ids)
    if out is None:
        out = np.empty(ids.shape, np.int32)
    if not ids.size:
        return out
    if k == 1 and ids.dtype == np.int32:  # a pool of one keeps int32 ids as they are
        out[...] = ids
        return out
    # The range is checked on the core's ids, so the arithmetic below cannot overflow: at
    # once when every id is in [0, high] (one pass; read as unsigned, a negative id is
    # huge), else exactly.
    high = (_INT32_MAX - index) // k
    if not (ids.dtype.kind in "iu" and ids.view(f"u{ids.dtype.itemsize}").max() <= high):
        _check_range(name, ids, k, index, -((index - _INT32_MIN) // k), high)
    if k == 1:
        out[...] = ids
    else:
        np.multiply(ids, k, out=out, casting="unsafe")
    if index:
        out += index
    return out


def _check_range(name: str, ids: np.ndarray, k: int, index: int, low: int, high: int) -> None:
    smallest, largest = ids.min(), ids.max()
    if smallest < low or largest > high:
        raise SpecError(
            f"behavior {name!r}: the pool ids (core id * {k} + core index) of core {index}'s "
            f"agents (ids {smallest}..{largest}) go beyond int32; cores of a pool of {k} must keep "
            f"their ids within +-{_INT32_MAX // k}"
        )


def _join_masks(spec: BehaviorSpec, parts: list[Part]) -> list[np.ndarray] | None:
    branches = tuple(spec.action_spec.discrete_branches)
    if not branches or all(p.mask is None for p in parts):
        return None
    if len(parts) == 1 and not parts[0].shared:
        return parts[0].mask  # a local core's own list, as in-process
    width = sum(branches)
    rows = []
    for part in parts:
        if part.mask is None:  # this core sent none: every action available
            rows.append(np.zeros((part.n, width), dtype=bool))
        elif isinstance(part.mask, np.ndarray):
            rows.append(part.mask)
        else:
            rows.append(np.concatenate([np.asarray(m, dtype=bool) for m in part.mask], axis=1))
    full = np.concatenate(rows) if len(rows) > 1 else rows[0].copy()
    return np.split(full, np.cumsum(branches)[:-1], axis=1)


def split_actions(action: ActionTuple, counts: list[int]) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(continuous, discrete)`` rows of each core, ``counts[i]`` rows for core ``i``.

    ``action`` was validated for ``sum(counts)`` agents; a part the behaviour does not have
    (no continuous or no discrete actions) comes out as ``(rows, 0)`` arrays.

    Example:
        >>> action = ActionTuple(np.arange(6, dtype=np.float32).reshape(3, 2))
        >>> [(c.tolist(), d.shape) for c, d in split_actions(action, [2, 0, 1])]
        [([[0.0, 1.0], [2.0, 3.0]], (2, 0)), ([], (0, 0)), ([[4.0, 5.0]], (1, 0))]
    """
    n = sum(counts)
    continuous, discrete = action.continuous, action.discrete
    if continuous.shape[0] != n:
        continuous = np.zeros((n, 0), np.float32)
    if discrete.shape[0] != n:
        discrete = np.zeros((n, 0), np.int32)
    rows = []
    start = 0
    for count in counts:
        end = start + count
        rows.append((continuous[start:end], discrete[start:end]))
        start = end
    return rows
