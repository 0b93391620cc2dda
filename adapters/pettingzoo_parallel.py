"""A batched core as a PettingZoo ``ParallelEnv`` (every behaviour's agents step at once), and what
both PettingZoo adapters share."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from typing_extensions import override

from zooport.adapters.agent_group import AgentGroup
from zooport.adapters.agent_names import AgentNaming
from zooport.adapters.core_access import (
    adopt_core,
    can_render,
    checked_reset_arguments,
    render_core,
)
from zooport.adapters.multi_agent_driver import AgentsStep, DriverControls
from zooport.adapters.options import PettingZooOptions, TerminationMode, listing_options
from zooport.adapters.rendering import Window, check_render_mode
from zooport.envs.arguments import check_seed
from zooport.envs.base_env import BaseEnvLike
from zooport.errors import EnvNotResetError, ZooportError

__all__ = ["PettingZooCommon", "PettingZooParallelEnv", "UnityParallelEnv", "flat_observations"]


class PettingZooCommon(DriverControls):
    """Spaces, state, rendering, closing and options shared by both PettingZoo adapters."""

    def __init__(
        self,
        core: BaseEnvLike,
        *,
        uint8_visual: bool = False,
        flatten_branched: bool = False,
        allow_multiple_obs: bool = False,
        termination_mode: TerminationMode | str | float = "all",
        max_cycles: int | None = None,
        action_masks: bool | None = None,
        mask_in_info: bool = False,
        default_action: str | Mapping[str, Any] | None = None,
        agent_name: AgentNaming = None,
        stale_actions: str = "ignore",
        render_mode: str | None = None,
        name: str | None = None,
    ) -> None:
        """Serves every behaviour of ``core`` (a BaseEnv the adapter owns) as PettingZoo agents.

        Args:
            core: a core with no behaviours yet (a Unity scene) is stepped once first.
            uint8_visual: visual observations as uint8 0..255 instead of float32 0..1.
            flatten_branched: several discrete branches as one ``Discrete``.
            allow_multiple_obs: observations always as a ``Dict`` keyed by observation name.
            termination_mode: ``"any"``, ``"majority"``, ``"all"`` or a fraction in (0, 1].
            max_cycles: core steps after which live agents are truncated; None: no limit.
            action_masks: masks for discrete actions; None: unless the core has none.
            mask_in_info: the mask in ``info["action_mask"]``, not in the observation.
            default_action: for a live agent given none: None (raise), ``"zero"``, a dict.
            agent_name: None, ``"pettingzoo"``, ``"mlagents"`` or ``(behaviour, id) -> str``.
            stale_actions: ``"ignore"`` (counted) or ``"raise"``: actions for finished agents.
            render_mode: None, ``"rgb_array"`` or ``"human"`` (a pygame window).
            name: ``metadata["name"]`` and ``str(env)``; None: ``zooport_<core class>``.
        """
        given = locals()  # the parameters, which are the options' fields
        options = PettingZooOptions(**{key: given[key] for key in PettingZooOptions.names()})
        core = adopt_core(core)
        modes = ["rgb_array", "human"] if can_render(core) else []
        check_render_mode(render_mode, modes, f"{type(self).__name__} over {type(core).__name__}")
        self.options, self.render_mode = options, render_mode
        fps = (getattr(core, "metadata", None) or {}).get("render_fps", 30)
        self.metadata = {
            "name": name or f"zooport_{type(core).__name__.lower()}",
            "render_modes": modes,
            "render_fps": fps,
            "is_parallelizable": True,
        }
        self._window = Window(fps) if render_mode == "human" else None
        # For wrappers (SuperSuit's frame_skip_v0), reseeded by a seeded reset().
        self.np_random = np.random.default_rng()
        self._start_driver(core, options)
        self._clear()

    def _clear(self) -> None:  # the AEC adapter's own episode state
        pass

    def _reseed(self, seed: Any, options: Any) -> int | None:
        seed = checked_reset_arguments(seed, options, f"{type(self).__name__}.reset")
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
        return seed

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of ``agent``'s behaviour (one object per behaviour)."""
        return self._driver.group_of(agent).action_space

    @functools.cached_property
    def state_space(self) -> spaces.Box:
        """The space of :meth:`state` (the core's, else the observation spaces' bounds)."""
        driver, global_state = self._driver, getattr(self.core, "global_state", None)
        if callable(global_state):
            space = getattr(self.core, "global_state_space", None)
            if not isinstance(space, spaces.Box):
                shape = getattr(self.core, "global_state_shape", None)
                if shape is None:
                    driver.discover()
                    shape = np.shape(global_state())
                space = spaces.Box(-np.inf, np.inf, tuple(int(d) for d in shape), np.float32)
        else:
            driver.discover()
            flat: list[Any] = [spaces.flatten_space(g.obs_layout.space) for g in driver.groups]
            pairs = list(zip(flat, driver.first_counts or [], strict=True))
            low = np.concatenate([np.tile(b.low, c) for b, c in pairs])
            space = spaces.Box(low, np.concatenate([np.tile(b.high, c) for b, c in pairs]))
        return space

    def state(self) -> np.ndarray:
        """The core's ``global_state()``, else the flat observations of the first reset's agents
        (zeros for one not live)."""
        driver = self._driver
        driver.check_open()
        if driver.first_counts is None:
            raise EnvNotResetError(f"{type(self).__name__}: call reset() before state()")
        global_state = getattr(self.core, "global_state", None)
        if callable(global_state):
            return np.array(global_state(), dtype=self.state_space.dtype, copy=True)
        pairs = zip(driver.groups, driver.first_counts, strict=True)
        return np.concatenate([flat_observations(g, count).reshape(-1) for g, count in pairs])

    def _show(self) -> None:
        if self._window is not None:
            self._window.show(render_core(self.core), type(self).__name__)

    def render(self) -> np.ndarray | None:
        """The core's rgb_array picture; None for ``"human"`` and, with a warning, for None."""
        if self.render_mode is None:
            warnings.warn(
                f"{type(self).__name__}.render() was called with render_mode=None; pass "
                "render_mode='rgb_array' at construction",
                stacklevel=2,
            )
            return None
        self._driver.check_open()
        if self.render_mode == "human":
            return None
        frame = render_core(self.core)
        if frame is None:
            raise ZooportError(f"{type(self.core).__name__} returned no picture from render()")
        return np.array(frame, dtype=np.uint8, copy=True)

    def close(self) -> None:
        """Closes the window and the core; calling it again does nothing."""
        if self._window is not None:
            self._window.close()
        self._driver.close()


@listing_options
class PettingZooParallelEnv(PettingZooCommon, ParallelEnv[str, Any, Any]):
    """Any BaseEnv as a PettingZoo ``ParallelEnv`` (options: ``PettingZooCommon``'s).

    Example:
        >>> from zooport.envs.builtin.tag import Tag
        >>> env = PettingZooParallelEnv(Tag(seed=0), termination_mode="any")
        >>> obs, infos = env.reset(seed=1)
        >>> obs, rewards, terminations, truncations, infos = env.step(dict.fromkeys(env.agents, 0))
        >>> round(rewards["runner_0"], 2), rewards["tagger_3"], infos["tagger_3"]["decided"]
        (0.01, 0.0, False)
    """

    @override
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """Resets the core (reseeded with ``seed``) and returns ``(observations, infos)``."""
        result = self._driver.reset(self._reseed(seed, options))
        self._show()
        return result

    @override
    def step(self, actions: dict[str, Any]) -> AgentsStep:
        """One action per live agent in, the step's five dicts out."""
        result = self._driver.step(actions)
        self._show()
        return result


class UnitySeed(PettingZooCommon):
    """ML-Agents' ``(env, seed=None)``: behaviour i's action space is seeded with ``seed + i``."""

    def __init__(self, env: BaseEnvLike, seed: int | None = None, **options: Any) -> None:
        seed = check_seed(seed, f"{type(self).__name__}(seed=...)")
        super().__init__(env, **options)
        if seed is not None:
            for i, group in enumerate(self._driver.groups):
                group.action_space.seed(seed + i)


class UnityParallelEnv(UnitySeed, PettingZooParallelEnv):
    """ML-Agents' ``UnityParallelEnv(env, seed=None)``: ``seed`` seeds the action spaces only."""


def flat_observations(group: AgentGroup, count: int) -> np.ndarray:
    """The first ``count`` slots' observations flattened, zeros for agents not live."""
    parts = list(group.obs.values()) if isinstance(group.obs, dict) else [group.obs]
    m = min(count, group.n)
    out = np.zeros((count, sum(int(np.prod(p.shape[1:])) for p in parts)), np.float32)
    if m:
        out[:m] = np.concatenate([p[:m].reshape(m, -1) for p in parts], axis=1)
        out[:m][~group.live[:m]] = 0.0
    return out
