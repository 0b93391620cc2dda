"""How adapters reach any core by duck typing: specs, stepping, rendering, reset arguments."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from zooport.envs.arguments import check_seed
from zooport.envs.base_env import BaseEnv, BaseEnvLike, BehaviorSpec
from zooport.envs.compat import as_base_env as adopt_core, is_legacy_env, side_channels_of
from zooport.envs.step_guard import StepGuard
from zooport.errors import ArgumentTypeError, SpecError, ZooportError

__all__ = [
    "EngineMembers", "adopt_core", "adopt_core_with_specs", "can_render",
    "checked_reset_arguments", "note_core_failure", "render_core", "side_channels_of",
]  # fmt: skip

MAX_IDLE_STEPS = 100_000


def note_core_failure(error: BaseException, where: str) -> None:
    """Notes ``where`` on a core's non-zooport ``error``, which propagates unchanged."""
    if not isinstance(error, ZooportError):  # what add_note does, on Python 3.10 too
        note = f"zooport: raised by the core ({where})"
        error.__notes__ = [*getattr(error, "__notes__", ()), note]  # type: ignore[attr-defined]  # 3.11+ in the stubs


def can_render(core: BaseEnvLike) -> bool:
    """Whether ``core`` draws pictures: its ``can_render`` flag, else a ``render`` method."""
    flag = getattr(core, "can_render", None)
    return flag if isinstance(flag, bool) else callable(getattr(core, "render", None))


def render_core(core: BaseEnvLike) -> np.ndarray | None:
    """The core's own rgb_array picture, or None where the core cannot render."""
    render = getattr(core, "render", None)
    if render is None:
        return None
    try:
        frame = render()
    except NotImplementedError:
        return None
    return None if frame is None else np.asarray(frame)


def adopt_core_with_specs(
    env: BaseEnvLike, adapter: str
) -> tuple[BaseEnvLike, Mapping[str, BehaviorSpec]]:
    """:func:`adopt_core` and its specs; a core with none yet is stepped once, as in ML-Agents."""
    core = adopt_core(env)
    if not len(core.behavior_specs):
        try:
            core.step()
        except Exception as error:
            note_core_failure(error, f"{adapter}() construction (the core had no behaviors yet)")
            raise
        if not len(core.behavior_specs):
            raise SpecError(
                f"{adapter}: {type(core).__name__} has no behaviors, even after one step (a "
                "Unity scene reports a behavior once one of its agents requests a decision; is "
                "an agent with this behavior active in the scene?)"
            )
        if core is env and not isinstance(env, BaseEnv) and is_legacy_env(env):
            core = adopt_core(env)
    return core, core.behavior_specs


def checked_reset_arguments(seed: Any, options: Any, where: str) -> int | None:
    """``reset(seed=..., options=...)`` checked (options: None or a str-keyed mapping); the seed."""
    seed = check_seed(seed, where)
    if options is not None and not isinstance(options, Mapping):
        got = f"{type(options).__name__} {options!r}"
    elif bad := [key for key in options or () if not isinstance(key, str)]:
        got = f"keys {bad!r}"
    else:
        return seed
    raise ArgumentTypeError(
        f"{where}: expected options to be None or a dict with str keys, got {got}"
    )


class EngineMembers:
    """A front end's ``step_guard`` and ``side_channels``, read from its ``_engine``."""

    _engine: Any

    @property
    def step_guard(self) -> StepGuard:
        """The adapter's re-entry and failure state."""
        return self._engine.guard

    @property
    def side_channels(self) -> list[Any]:
        """The core's side channels."""
        return side_channels_of(self._engine.core)
