"""A generic Gymnasium env for the tests of zooport's Gymnasium tasks.

Classes:
    Ticker: observation ``[steps this episode, episodes started]``, reward = the action's sum,
        ends after ``length`` steps; it records every action it is given.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

__all__ = ["Ticker"]


class Ticker(gym.Env):
    """Observation [steps this episode, episodes started]; reward = action; ends at ``length``.

    Records every action it is given.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(self, length=5, render_mode=None, action_space=None):
        self.length = length
        self.render_mode = render_mode
        self.observation_space = spaces.Box(0, 1000, (2,), np.float32)
        self.action_space = action_space or spaces.Discrete(3)
        self.actions = []
        self.t = 0
        self.episode = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        self.episode += 1
        return self._obs(), {"episode": self.episode}

    def step(self, action):
        self.actions.append(action)
        self.t += 1
        done = self.t >= self.length
        reward = float(np.sum(action))
        return self._obs(), reward, done, False, {"t": self.t}

    def render(self):
        return np.full((2, 2, 3), self.t, np.uint8) if self.render_mode else None

    def _obs(self):
        return np.array([self.t, self.episode], np.float32)
