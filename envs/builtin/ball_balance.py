"""A 3DBall-like task: tilt a platform to keep a ball on it."""

import math
from typing import ClassVar

import numpy as np

from zooport.envs.arguments import check_float, check_int
from zooport.envs.base_env import ActionSpec, ActionTuple, BehaviorSpec, ObservationSpec
from zooport.envs.batched_env import BatchedEnv, EnvDeclaration, StepResult
from zooport.envs.builtin import _common

__all__ = ["BallBalance"]

_SUBSTEPS = 5
_DT = 0.1 / _SUBSTEPS  # a step is 0.1 simulated seconds, in 5 physics substeps
_SUBSTEP_FRACTIONS = (np.arange(1, _SUBSTEPS + 1) / _SUBSTEPS)[:, None, None]
_TILT_RATE = math.radians(4.0)  # tilt change per step at action +-1; the tilt stops at 0.5
_MAX_TILT = 0.5
_INITIAL_TILT = math.radians(10.0)  # an episode's tilts are uniform in +-10 degrees
_INITIAL_SPREAD = 1.5  # and its ball is at rest within +-1.5
_EDGE = 3.0  # the ball falls off when its centre leaves [-3, 3] on either platform axis
_DRAG = 0.2  # rolling resistance: a force -_DRAG * scale * velocity
_ROLLING = 5.0 / 7.0  # a solid sphere rolling without slipping: 5/7 of a point mass's accel


class BallBalance(BatchedEnv):
    """Unity ML-Agents' 3DBall, vectorised: each agent tilts a platform to balance a ball.

    Reward +0.1 a step while the ball stays within +-3 on both platform axes, else -1 and
    the episode terminates. Observation ``"ball_state"``, (8,): the platform's rotation about
    z and x, the ball's relative position and velocity; two continuous actions in [-1, 1],
    the tilt rates. ``EnvironmentParametersChannel`` keys ``"gravity"``, ``"mass"`` and
    ``"scale"`` are read as each episode starts (the keywords are the defaults); finished
    episodes record ``"BallBalance/EpisodeLength"``, ``".../EpisodeReward"`` and ``".../Fell"``.
    """

    behavior_name: ClassVar[str] = "BallBalance"
    #: A trained PPO policy's mean episode reward (the cap is 20; random actions earn 1.7).
    expected_reward: ClassVar[float] = 18.0
    max_episode_steps: ClassVar[int] = 200
    declaration: ClassVar[EnvDeclaration] = EnvDeclaration(
        pettingzoo_name="ball_balance_v0", gym_kwargs={"n_agents": 1}
    )

    def __init__(
        self, *, n_agents: int = 12, seed: int | None = None,
        side_channels: _common.SideChannels = None, max_steps: int = max_episode_steps,
        reorder_agents: bool = False, mass: float = 1.0, gravity: float = 9.81, scale: float = 1.0,
    ) -> None:  # fmt: skip
        self.n_agents = n = check_int(n_agents, "n_agents", 1)
        given = {"mass": mass, "gravity": gravity, "scale": scale}
        self._defaults = {key: check_float(v, key, above=0) for key, v in given.items()}
        super().__init__(seed, side_channels, max_steps, reorder_agents)
        obs = ObservationSpec.vector(8, "ball_state")
        spec = BehaviorSpec([obs], ActionSpec.create_continuous(2))
        self._add_behavior(self.behavior_name, spec, n)
        # Tilt columns (about z, about x); ball position and velocity in the platform, (x, z).
        self._tilt, self._position, self._velocity = np.zeros((3, n, 2), dtype=np.float64)
        self._params = {key: np.full(n, value) for key, value in self._defaults.items()}
        self._episode_length = np.zeros(n, dtype=np.int64)
        self._episode_reward = np.zeros(n, dtype=np.float64)

    def _on_reset(self) -> None:
        # An episode cut short by reset() is not a finished episode: no statistics.
        self._episode_length[:] = 0

    def _reset_agents(self, behavior: str, slots: np.ndarray) -> None:
        finished = slots[self._episode_length[slots] > 0]
        fell = (np.abs(self._position[finished]) > _EDGE).any(axis=1)
        # One statistic per finished episode, as each Unity agent records its own.
        for slot, fall in zip(finished.tolist(), fell.tolist(), strict=True):
            self.record_stat("BallBalance/EpisodeLength", int(self._episode_length[slot]))
            self.record_stat("BallBalance/EpisodeReward", float(self._episode_reward[slot]))
            self.record_stat("BallBalance/Fell", float(fall))
        self._episode_length[slots] = 0
        self._episode_reward[slots] = 0.0
        for key, default in self._defaults.items():
            # A sampler draws a fresh value per read: one read per agent, as in Unity.
            values = [self.environment_parameter(key, default) for _ in range(slots.size)]
            self._params[key][slots] = values
        k = slots.size
        self._tilt[slots] = self.np_random.uniform(-_INITIAL_TILT, _INITIAL_TILT, (k, 2))
        self._position[slots] = self.np_random.uniform(-_INITIAL_SPREAD, _INITIAL_SPREAD, (k, 2))
        self._velocity[slots] = 0.0

    def _step(self, actions: dict[str, ActionTuple]) -> dict[str, StepResult]:
        action = np.clip(actions[self.behavior_name].continuous, -1.0, 1.0).astype(np.float64)
        # The tilt turns at a constant rate within a step, so the clipped tilt of every
        # substep is one array expression: (substeps, n, 2).
        turned = self._tilt + _SUBSTEP_FRACTIONS * (action * _TILT_RATE)
        tilts = np.clip(turned, -_MAX_TILT, _MAX_TILT)
        sin, cos = np.sin(tilts), np.cos(tilts)
        # Gravity's component in the platform plane, R^T (0, -g, 0) for R = Rz Rx: (-sz, cz sx).
        accel = np.empty_like(tilts)
        accel[..., 0] = -sin[..., 0]
        accel[..., 1] = cos[..., 0] * sin[..., 1]
        accel *= (_ROLLING * self._params["gravity"])[:, None]
        keep = 1.0 - (_DRAG * self._params["scale"] / self._params["mass"])[:, None] * _DT
        position, velocity = self._position, self._velocity
        for substep in range(_SUBSTEPS):  # semi-implicit Euler: velocity first
            velocity *= keep
            velocity += accel[substep] * _DT
            position += velocity * _DT
        self._tilt = tilts[-1]
        fell = np.asarray((np.abs(position) > _EDGE).any(axis=1))
        reward = np.where(fell, -1.0, 0.1)
        self._episode_length += 1
        self._episode_reward += reward
        return {self.behavior_name: StepResult(reward.astype(np.float32), fell)}

    def _observe(self, behavior: str, slots: np.ndarray) -> list[np.ndarray]:
        tilt = self._tilt[slots]
        height = 0.5 + 0.5 * self._params["scale"][slots]  # the platform's and the ball's
        sin_z, cos_z = np.sin(tilt[:, 0]), np.cos(tilt[:, 0])
        sin_x, cos_x = np.sin(tilt[:, 1]), np.cos(tilt[:, 1])
        obs = np.empty((slots.size, 8), dtype=np.float32)
        obs[:, :2] = tilt
        # R (x, y, z) for R = Rz Rx (platform to world), of the position and the velocity.
        vectors = ((obs[:, 2:5], self._position, height), (obs[:, 5:8], self._velocity, 0.0))
        for out, plane, y in vectors:
            x, z = plane[slots, 0], plane[slots, 1]
            y1 = y * cos_x - z * sin_x
            out[:, 0] = x * cos_z - y1 * sin_z
            out[:, 1] = x * sin_z + y1 * cos_z
            out[:, 2] = y * sin_x + z * cos_x
        return [obs]

    def _render(self) -> np.ndarray:
        size, n = 64, self.n_agents
        pixels_per_unit = size / (2 * (_EDGE + 0.5))
        centre = size / 2
        images = np.full((n, size, size, 3), 30, dtype=np.uint8)
        lo, hi = round(centre - _EDGE * pixels_per_unit), round(centre + _EDGE * pixels_per_unit)
        # Tilt shows as colour: red for rotation about z, blue for rotation about x.
        shade = 150 + 100 * np.clip(self._tilt / _MAX_TILT, -1, 1)
        platform = np.stack([shade[:, 0], np.full(n, 150.0), shade[:, 1]], axis=1)
        images[:, lo:hi, lo:hi] = platform.astype(np.uint8)[:, None, None, :]
        balls = centre + self._position * pixels_per_unit  # (col, row) per ball
        radii = 0.5 * self._params["scale"] * pixels_per_unit
        for image, (col, row), radius in zip(images, balls, radii, strict=True):
            _common.fill_circles(image, row, col, radius, (255, 140, 0))
        return _common.tile(images)
