"""Tag: a team of taggers chases a team of runners on a square arena."""

from typing import ClassVar

import numpy as np

from zooport.envs.arguments import check_bool, check_float, check_int
from zooport.envs.base_env import ActionSpec, ActionTuple, BehaviorSpec, ObservationSpec
from zooport.envs.batched_env import BatchedEnv, EnvDeclaration, StepResult
from zooport.envs.builtin import _common

__all__ = ["Tag"]

# Action k moves along _DIRECTIONS[k]: stay, up (+y), down (-y), left (-x), right (+x).
_DIRECTIONS = np.array([[0, 0], [0, 1], [0, -1], [-1, 0], [1, 0]], dtype=np.float32)
_PLACEMENT_CANDIDATES = 8
_RUNNER = "Runner?team=0"
_TAGGER = "Tagger?team=1"


class Tag(BatchedEnv):
    """Taggers chase runners on the arena [-1, 1] x [-1, 1], positions continuous.

    Agents accelerate in one of four directions or stay (5 actions), damped. A runner within
    ``tag_radius`` of a tagger is tagged: -1 and its episode terminates (else +0.01 a step); the
    nearest tagger earns +1 (else -0.01 a step), and every tagger's group reward is +1 per
    runner tagged. ``"Runner?team=0"`` (group 1) and ``"Tagger?team=1"`` (group 2) observe their
    position and velocity, then the nearest live opponents' relative positions with a present
    flag. ``restart_tagged`` restarts tagged runners in the same step (else they leave);
    ``spawn_every=k`` adds a runner every k steps, up to ``max_spawned`` more slots.
    """

    runner_behavior: ClassVar[str] = _RUNNER
    tagger_behavior: ClassVar[str] = _TAGGER
    runner_group_id: ClassVar[int] = 1
    tagger_group_id: ClassVar[int] = 2
    #: A trained tagger's mean episode reward against random runners (random taggers: -1.2).
    expected_reward: ClassVar[float] = 7.0
    max_episode_steps: ClassVar[int] = 200
    #: ``zooport/Tag-v0`` is one runner against a tagger that takes the zero action, "stay".
    declaration: ClassVar[EnvDeclaration] = EnvDeclaration(
        pettingzoo_name="tag_v0",
        gym_kwargs={"n_runners": 1, "n_taggers": 1, "behavior_name": _RUNNER},
        gym_threshold=False,
        agent_counts={_RUNNER: "n_runners", _TAGGER: "n_taggers"},
    )

    alive_reward: ClassVar[float] = 0.01
    time_penalty: ClassVar[float] = 0.01
    tag_reward: ClassVar[float] = 1.0
    runner_accel: ClassVar[float] = 0.05
    tagger_accel: ClassVar[float] = 0.065
    damping: ClassVar[float] = 0.5

    def __init__(
        self, *, seed: int | None = None, side_channels: _common.SideChannels = None,
        max_steps: int = max_episode_steps, reorder_agents: bool = False, n_runners: int = 3,
        n_taggers: int = 2, runner_decision_period: int = 1, tagger_decision_period: int = 2,
        spawn_every: int = 0, max_spawned: int = 4, restart_tagged: bool = True,
        observed_opponents: int = 2, tag_radius: float = 0.1,
    ) -> None:  # fmt: skip
        super().__init__(seed, side_channels, max_steps, reorder_agents)
        n_runners = check_int(n_runners, "n_runners", 1)
        self.n_taggers = n_taggers = check_int(n_taggers, "n_taggers", 1)
        runner_period = check_int(runner_decision_period, "runner_decision_period", 1)
        tagger_period = check_int(tagger_decision_period, "tagger_decision_period", 1)
        self.spawn_every = check_int(spawn_every, "spawn_every", 0)
        max_spawned = check_int(max_spawned, "max_spawned", 0)
        self.observed_opponents = check_int(observed_opponents, "observed_opponents", 1)
        self.restart_tagged = check_bool(restart_tagged, "restart_tagged")
        self.tag_radius = check_float(tag_radius, "tag_radius", above=0, below=2, kind="a float")
        self.runner_capacity = n_runners + (max_spawned if self.spawn_every else 0)
        obs = ObservationSpec.vector(4 + 3 * self.observed_opponents, "self_and_opponents")
        spec = BehaviorSpec([obs], ActionSpec.create_discrete((5,)))
        for behavior, count, capacity, period, group in (
            (_RUNNER, n_runners, self.runner_capacity, runner_period, self.runner_group_id),
            (_TAGGER, n_taggers, n_taggers, tagger_period, self.tagger_group_id),
        ):
            self._add_behavior(
                behavior, spec, count, capacity=capacity, decision_period=period,
                restart_finished=self.restart_tagged, group_id=group,
            )  # fmt: skip
        #: Simulation state, one row per slot (exposed for inspection and tests).
        self.runner_pos, self.runner_vel = np.zeros((2, self.runner_capacity, 2), np.float32)
        self.tagger_pos, self.tagger_vel = np.zeros((2, n_taggers, 2), np.float32)
        # Per behaviour: its positions, velocities, acceleration and its opponents' behaviour.
        self._bodies = {
            _RUNNER: (self.runner_pos, self.runner_vel, self.runner_accel, _TAGGER),
            _TAGGER: (self.tagger_pos, self.tagger_vel, self.tagger_accel, _RUNNER),
        }

    @property
    def global_state_shape(self) -> tuple[int]:
        """The shape of :meth:`global_state`: 5 values per runner slot and tagger slot."""
        return ((self.runner_capacity + self.n_taggers) * 5,)

    def global_state(self) -> np.ndarray:
        """All slots' (x, y, vx, vy, live), runner slots first; zeros for empty slots."""
        live = np.concatenate([self.active_slots(_RUNNER), self.active_slots(_TAGGER)])[:, None]
        state = np.block([[self.runner_pos, self.runner_vel], [self.tagger_pos, self.tagger_vel]])
        state = np.concatenate([state, live], axis=1)
        return np.where(live, state, np.float32(0)).reshape(-1)

    def _on_reset(self) -> None:
        self._t = 0
        self._taggers_placed = False  # in this episode

    def _reset_agents(self, behavior: str, slots: np.ndarray) -> None:
        pos, vel, _, opponent = self._bodies[behavior]
        others = self.active_slots(opponent)
        if behavior == _RUNNER:  # taggers not yet placed in this episode stand anywhere
            others &= self._taggers_placed
        self._taggers_placed |= behavior == _TAGGER
        # Of a few random spots per agent, the farthest from the opponents placed (any if none).
        shape = (slots.size, _PLACEMENT_CANDIDATES, 2)
        spots = self.np_random.uniform(-0.9, 0.9, size=shape).astype(np.float32)
        away = spots[:, :, None] - self._bodies[opponent][0][others][None, None]
        gap = np.linalg.norm(away, axis=-1).min(axis=-1, initial=np.inf)
        pos[slots] = spots[np.arange(slots.size), gap.argmax(axis=1)]
        vel[slots] = 0.0

    def _step(self, actions: dict[str, ActionTuple]) -> dict[str, StepResult]:
        runners, taggers = self.active_slots(_RUNNER), self.active_slots(_TAGGER)
        for behavior, live in ((_RUNNER, runners), (_TAGGER, taggers)):
            pos, vel, accel, _ = self._bodies[behavior]
            push = accel * _DIRECTIONS[actions[behavior].discrete[:, 0]]
            new_pos, new_vel = _common.damped_move(pos, vel, push, self.damping, 1.0)
            pos[live], vel[live] = new_pos[live], new_vel[live]
        gap = np.linalg.norm(self.runner_pos[:, None] - self.tagger_pos[None], axis=-1)
        gap = np.where(runners[:, None] & taggers[None], gap, np.inf)
        nearest = gap.argmin(axis=1)
        tagged = gap[np.arange(gap.shape[0]), nearest] <= self.tag_radius
        tags = np.bincount(nearest[tagged], minlength=self.n_taggers).astype(np.float32)
        runner_reward = np.where(tagged, -self.tag_reward, self.alive_reward).astype(np.float32)
        tagger_reward = (self.tag_reward * tags - self.time_penalty).astype(np.float32)
        group = np.full(self.n_taggers, self.tag_reward * np.float32(tags.sum()), np.float32)
        self._t += 1
        left = (runners & ~tagged).any()
        if self.spawn_every and self._t % self.spawn_every == 0 and taggers.any():
            left |= self._spawn(_RUNNER, 1).size > 0
        # Without restarts, the taggers' episodes end when no runner is left.
        taggers_done = np.full(self.n_taggers, not (self.restart_tagged or left))
        return {
            _RUNNER: StepResult(runner_reward, tagged, np.zeros_like(runner_reward)),
            _TAGGER: StepResult(tagger_reward, taggers_done, group),
        }

    def _observe(self, behavior: str, slots: np.ndarray) -> list[np.ndarray]:
        pos, vel, _, opponent = self._bodies[behavior]
        pos, vel = pos[slots], vel[slots]
        rel = self._bodies[opponent][0][None] - pos[:, None]  # (n, m, 2)
        live = np.broadcast_to(self.active_slots(opponent), rel.shape[:2])
        seen = _common.nearest_first(rel, live, self.observed_opponents)
        seen = seen.reshape(len(slots), 3 * self.observed_opponents)
        return [np.concatenate([pos, vel, seen], axis=1).astype(np.float32)]

    def _render(self) -> np.ndarray:
        size = 128
        image = np.full((size, size, 3), 235, np.uint8)
        radius = max(self.tag_radius / 2, 1.5 / size * 2)
        runners, taggers = self.active_slots(_RUNNER), self.active_slots(_TAGGER)
        _common.fill_arena_discs(image, self.runner_pos[runners], size, radius, (40, 90, 220))
        _common.fill_arena_discs(image, self.tagger_pos[taggers], size, radius, (220, 50, 40))
        return image
