"""Render modes and frames for every adapter: ``"human"`` shows the core's ``rgb_array`` picture."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.error import DependencyNotInstalled

from zooport.errors import ArgumentError, ZooportError

__all__ = ["check_render_mode", "visual_frame", "VectorHumanRendering", "HUMAN_VIA_MAKE", "Window"]

#: Where ``render_mode="human"`` is served for the slot family (its constructors refuse it).
HUMAN_VIA_MAKE = (
    "'human' shows the rgb_array pictures in a window: ask gym.make or gym.make_vec for it, "
    "or wrap a vector adapter in zooport.adapters.rendering.VectorHumanRendering"
)


def check_render_mode(
    render_mode: Any, modes: Sequence[str], where: str, *, human: str = ""
) -> None:
    """An ``ArgumentError`` unless ``render_mode`` is None or in ``modes`` (``human``: a hint)."""
    if render_mode is None or (isinstance(render_mode, str) and render_mode in modes):
        return
    hint = f"; {human}" if human and isinstance(render_mode, str) and render_mode == "human" else ""
    raise ArgumentError(
        f"{where}: expected render_mode in {[None, *modes]}, actually: {render_mode!r}{hint}"
    )


def visual_frame(observation: np.ndarray) -> np.ndarray:
    """An (H, W, 3) uint8 copy (never a view) of one visual observation (float 0..1 or uint8)."""
    if observation.dtype != np.uint8:
        observation = np.rint(np.clip(observation, 0.0, 1.0) * 255.0).astype(np.uint8)
    if observation.shape[-1] >= 3:
        return np.array(observation[..., :3])
    return np.repeat(observation[..., :1], 3, axis=-1)


class Window:
    """A pygame window showing rgb_array frames at ``fps`` (no pygame: DependencyNotInstalled)."""

    def __init__(self, fps: float) -> None:
        self.fps = fps
        self._screen: Any = None

    def show(self, frame: Any, where: str) -> None:
        """Shows ``frame`` ((H, W, 3) uint8); ``where`` names the env in the error for None."""
        try:
            import pygame
        except ImportError as error:
            raise DependencyNotInstalled(
                'render_mode="human" shows frames with pygame, not a dependency of zooport: '
                'pip install "pygame>=2.1"'
            ) from error
        if frame is None:
            raise ZooportError(f"{where} returned no picture from render() (its core draws none)")
        # pygame's surfaces are indexed (x, y): the picture's (row, column) transposed.
        surface = pygame.surfarray.make_surface(np.asarray(frame, np.uint8).transpose(1, 0, 2))
        if self._screen is None:
            pygame.init()  # the display too
            self._screen = pygame.display.set_mode(surface.get_size())
            self._clock = pygame.time.Clock()
        self._screen.blit(surface, (0, 0))
        pygame.event.pump()
        self._clock.tick(self.fps)
        pygame.display.flip()

    def close(self) -> None:
        if self._screen is not None:
            import pygame

            pygame.display.quit()
            self._screen = None


class VectorHumanRendering(gym.vector.VectorWrapper):
    """Shows a vector env's ONE ``rgb_array`` picture (not tiled) after each reset and step."""

    def __init__(self, env: gym.vector.VectorEnv) -> None:
        # First: Gymnasium 1.0's VectorEnv.__del__ closes a wrapper whose __init__ failed.
        self._window = Window(env.metadata.get("render_fps", 30))
        super().__init__(env)
        if env.render_mode != "rgb_array":
            raise ArgumentError(
                f"VectorHumanRendering: expected an env with render_mode='rgb_array', "
                f"actually: {env.render_mode!r}"
            )
        modes = [*env.metadata.get("render_modes", ()), "human"]
        self.metadata = {**env.metadata, "render_modes": modes}

    @property
    def render_mode(self) -> str:  # type: ignore[override]  # read-only: always "human"
        return "human"

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        return self._shown(self.env.reset(**kwargs))

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        return self._shown(self.env.step(actions))

    def _shown(self, result: Any) -> Any:
        self._window.show(self.env.render(), f"VectorHumanRendering: {self.env}")
        return result

    def render(self) -> None:
        """None: the picture is shown at every ``reset`` and ``step``."""

    def close(self, **kwargs: Any) -> None:
        self._window.close()
        self.env.close(**kwargs)
