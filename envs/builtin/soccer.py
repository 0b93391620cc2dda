"""Soccer: two teams of one behaviour play football on a small pitch (SoccerTwos' layout)."""

from typing import ClassVar

import numpy as np

from zooport.envs.arguments import check_bool, check_float, check_int
from zooport.envs.base_env import ActionSpec, ActionTuple, BehaviorSpec, ObservationSpec
from zooport.envs.batched_env import BatchedEnv, EnvDeclaration, StepResult
from zooport.envs.builtin import _common

__all__ = ["Soccer"]

_TEAMS = ("Soccer?team=0", "Soccer?team=1")
#: Each team sees and acts in its own frame: team 1's is team 0's turned by 180 degrees.
_FRAME = np.array([1.0, -1.0], dtype=np.float32)
#: Per branch, action k pushes along _PUSH[k] in the team's frame: 0 none, 1 +, 2 -.
_PUSH = np.array([0.0, 1.0, -1.0], dtype=np.float32)
_HALF_WIDTH = 0.6  # the pitch is [-1, 1] x [-0.6, 0.6]
_GOAL_HALF_WIDTH = 0.25  # goal mouths: |y| < 0.25 at x = -1 (team 0's) and x = +1 (team 1's)
_PLAYER_RADIUS = 0.06
_BALL_RADIUS = 0.04
_KICKOFF_X = (0.2, 0.8)  # players start this far from the centre line, in their own half
_KICKOFF_Y = 0.45


class Soccer(BatchedEnv):
    """Two teams of ``team_size`` players push a ball into the other team's goal.

    Team 0 defends x = -1 of the pitch [-1, 1] x [-0.6, 0.6]; players accelerate on two axes
    (two branches of 3: none, +, -), damped, and kick the ball they touch. Each team
    (``"Soccer?team=0"``, group 1; ``"Soccer?team=1"``, group 2) sees and acts in its own
    frame (team 1's turned 180 degrees). A goal ends every episode, +1 group reward to the
    scorers and -1 to the others (also each own reward if ``individual_rewards``), and all
    restart at a new kickoff with the same ids. ``shaping=c`` adds ``c * (phi' - phi)`` to
    own rewards, ``phi`` being the ball's x in the team's frame minus the distance to it.
    """

    behavior_names: ClassVar[tuple[str, str]] = _TEAMS
    group_ids: ClassVar[tuple[int, int]] = (1, 2)
    #: A trained team's mean episode reward per agent against a random team (PPO, shaping=1).
    expected_reward: ClassVar[float] = 0.7
    max_episode_steps: ClassVar[int] = 200
    #: ``zooport/Soccer-v0`` is one player against one who stands where it kicked off.
    declaration: ClassVar[EnvDeclaration] = EnvDeclaration(
        pettingzoo_name="soccer_v0",
        gym_kwargs={"team_size": 1, "behavior_name": _TEAMS[0]},
        gym_threshold=False,
        agent_counts=dict.fromkeys(_TEAMS, "team_size"),
    )

    goal_reward: ClassVar[float] = 1.0
    player_accel: ClassVar[float] = 0.03
    player_damping: ClassVar[float] = 0.6
    kick_speed: ClassVar[float] = 0.08
    max_ball_speed: ClassVar[float] = 0.15
    ball_friction: ClassVar[float] = 0.94

    def __init__(
        self, *, seed: int | None = None, side_channels: _common.SideChannels = None,
        max_steps: int = max_episode_steps, reorder_agents: bool = False, team_size: int = 2,
        individual_rewards: bool = True, shaping: float = 0.0,
    ) -> None:  # fmt: skip
        super().__init__(seed, side_channels, max_steps, reorder_agents)
        self.team_size = n = check_int(team_size, "team_size", 1)
        self.individual_rewards = check_bool(individual_rewards, "individual_rewards")
        self.shaping = check_float(shaping, "shaping")
        obs = ObservationSpec.vector(8 + 2 * (2 * n - 1), "players_and_ball")
        spec = BehaviorSpec([obs], ActionSpec.create_discrete((3, 3)))
        for behavior, group in zip(_TEAMS, self.group_ids, strict=True):
            self._add_behavior(behavior, spec, n, group_id=group)
        #: Simulation state in team 0's frame: (team, slot, xy) for players, (xy,) for the ball.
        self.player_pos, self.player_vel = np.zeros((2, 2, n, 2), np.float32)
        self.ball_pos, self.ball_vel = np.zeros((2, 2), np.float32)
        # For each slot, the slots of its teammates.
        self._mates = np.array([np.delete(np.arange(n), i) for i in range(n)]).reshape(n, n - 1)

    @property
    def global_state_shape(self) -> tuple[int]:
        """The shape of :meth:`global_state`: the ball's 4 values and 4 per player."""
        return (4 + 8 * self.team_size,)

    def global_state(self) -> np.ndarray:
        """The ball's (x, y, vx, vy), then each player's, team 0 first, in team 0's frame."""
        players = np.concatenate([self.player_pos, self.player_vel], axis=-1).reshape(-1)
        return np.concatenate([self.ball_pos, self.ball_vel, players]).astype(np.float32)

    def _reset_agents(self, behavior: str, slots: np.ndarray) -> None:
        team = _TEAMS.index(behavior)
        x = self.np_random.uniform(*_KICKOFF_X, size=slots.size)
        y = self.np_random.uniform(-_KICKOFF_Y, _KICKOFF_Y, size=slots.size)
        # Team 0 kicks off from the left half, team 1 from the right (x > 0).
        self.player_pos[team, slots] = np.stack([x * (2 * team - 1), y], axis=1)
        self.player_vel[team, slots] = 0.0
        if team == 0:
            # Both teams always restart together: the ball is reset once, with team 0.
            self.ball_pos[:], self.ball_vel[:] = 0.0, 0.0

    def _step(self, actions: dict[str, ActionTuple]) -> dict[str, StepResult]:
        potential = self._potential() if self.shaping else None
        # Players: damped acceleration by their pushes, stopping at the touch lines.
        push = np.stack([actions[b].discrete for b in _TEAMS])  # (team, slot, branch)
        accel = _PUSH[push] * _FRAME[:, None, None] * self.player_accel  # team 0's frame
        limit = np.array([1.0, _HALF_WIDTH], np.float32) - _PLAYER_RADIUS
        self.player_pos[...], self.player_vel[...] = _common.damped_move(
            self.player_pos, self.player_vel, accel, self.player_damping, limit
        )
        scorer = self._move_ball()
        n = self.team_size
        # (team, slot): +goal_reward to the scorers, -goal_reward to the others, 0 without goal.
        outcome = [0.0] * 2 if scorer is None else [1.0 if t == scorer else -1.0 for t in (0, 1)]
        group = np.repeat(self.goal_reward * np.array(outcome, np.float32), n).reshape(2, n)
        reward = group.copy() if self.individual_rewards else np.zeros_like(group)
        if potential is not None:
            reward += self.shaping * (self._potential() - potential)
        over = np.full(n, scorer is not None)
        return {b: StepResult(reward[t], over.copy(), group[t]) for t, b in enumerate(_TEAMS)}

    def _potential(self) -> np.ndarray:
        """(team, slot): the ball's x in the team's frame minus the player's distance to it."""
        gap = np.linalg.norm(self.player_pos - self.ball_pos, axis=-1)
        return (self.ball_pos[0] * _FRAME[:, None] - gap).astype(np.float32)

    def _move_ball(self) -> int | None:
        """Kicks, rolls and bounces the ball; returns the team that scored, or None."""
        away = self.ball_pos - self.player_pos.reshape(-1, 2)
        gap = np.linalg.norm(away, axis=1)
        touching = gap < _PLAYER_RADIUS + _BALL_RADIUS
        if touching.any():
            # Each touching player sends the ball away from itself; the kicks add up.
            direction = away[touching] / np.maximum(gap[touching, None], 1e-6)
            vel = self.ball_vel + self.kick_speed * direction.sum(axis=0)
            speed = float(np.linalg.norm(vel))
            if speed > self.max_ball_speed:
                vel *= self.max_ball_speed / speed
            self.ball_vel[...] = vel
        ball = self.ball_pos + self.ball_vel
        self.ball_vel *= np.float32(self.ball_friction)
        in_mouth = abs(float(ball[1])) < _GOAL_HALF_WIDTH
        if in_mouth and abs(float(ball[0])) >= 1.0:
            self.ball_pos[...] = ball
            return 0 if ball[0] > 0 else 1
        # Off the walls; within a goal mouth the ball may cross the end line (into the goal).
        end = 1.0 + _BALL_RADIUS if in_mouth else 1.0 - _BALL_RADIUS
        limits = np.array([end, _HALF_WIDTH - _BALL_RADIUS], np.float32)
        out = np.abs(ball) > limits
        self.ball_pos[...] = np.clip(ball, -limits, limits)
        self.ball_vel[out] *= -1
        return None

    def _observe(self, behavior: str, slots: np.ndarray) -> list[np.ndarray]:
        team, k = _TEAMS.index(behavior), slots.size
        own = self.player_pos[team, slots]  # (k, 2)
        mates = self.player_pos[team][self._mates[slots]] - own[:, None]  # (k, n - 1, 2)
        opponents = self.player_pos[1 - team][None] - own[:, None]  # (k, n, 2)
        others = np.concatenate([mates, opponents], axis=1).reshape(k, -1)
        ball = [self.ball_pos - own, np.broadcast_to(self.ball_vel, (k, 2))]
        parts = [own, self.player_vel[team, slots], *ball, others]
        return [(np.concatenate(parts, axis=1) * _FRAME[team]).astype(np.float32)]

    def _render(self) -> np.ndarray:
        scale, margin = 80, 6
        width = int(2 * scale) + 2 * margin
        height = int(2 * _HALF_WIDTH * scale) + 2 * margin
        image = np.full((height, width, 3), 40, np.uint8)
        image[margin:-margin, margin:-margin] = (50, 140, 60)
        mouth = 2 * _GOAL_HALF_WIDTH * scale
        top = height / 2 - mouth / 2
        _common.fill_rects(image, [top, top], [0, width - margin], mouth, margin, (230, 230, 230))
        image[margin:-margin, width // 2 - 1 : width // 2 + 1] = (200, 220, 200)  # centre line
        discs = (
            (self.player_pos[0], _PLAYER_RADIUS, (40, 90, 220)),
            (self.player_pos[1], _PLAYER_RADIUS, (150, 60, 200)),
            (self.ball_pos[None], _BALL_RADIUS, (250, 250, 250)),
        )
        for xy, radius, colour in discs:
            rows, cols = height / 2 - xy[:, 1] * scale, width / 2 + xy[:, 0] * scale
            _common.fill_circles(image, rows, cols, radius * scale, colour)
        return image
