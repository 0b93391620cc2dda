"""A stand-in for pygame that records the frames a window would show (no display needed)."""

from __future__ import annotations

import types

import numpy as np

__all__ = ["FakePygame"]


class FakePygame(types.ModuleType):
    """Records what would be shown in a window (no display needed)."""

    def __init__(self):
        super().__init__("pygame")
        shown = self.shown = []
        self.init = lambda: None

        class Surface:
            def __init__(self, array):
                self.array = np.asarray(array)

            def get_size(self):
                return self.array.shape[:2]

        class Window:
            def blit(self, surface, position):
                shown.append(surface.array.copy())

        self.surfarray = types.SimpleNamespace(make_surface=Surface)
        self.display = types.SimpleNamespace(
            init=lambda: None, set_mode=lambda size: Window(), flip=lambda: None,
            quit=lambda: shown.append("closed"),
        )  # fmt: skip
        self.time = types.SimpleNamespace(
            Clock=lambda: types.SimpleNamespace(tick=lambda fps: None)
        )
        self.event = types.SimpleNamespace(pump=lambda: None)
