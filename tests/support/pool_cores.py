"""Cores and helpers for the CorePool tests, importable by the pool's worker processes.

Workers are fresh interpreters (spawn, forkserver) that unpickle their factories by
reference, so the cores the tests pool live in this importable module (``tests`` is a
package whose parent, the checkout, is on ``sys.path`` when pytest runs, and the start
method passes ``sys.path`` on).

Classes:
    LedgerCore: integer rewards, and each observation carries the agent's cumulative earned
        reward since the last reset, so any consumer can check that every reward the core
        paid reached it; optional decision periods, random episode ends, action masks and
        a random sleep per step (to vary which cores answer first in async mode).
    FaultyCore: a BallBalance that raises, dies, hangs, or fails to close at a chosen step.
    GatedCore: a LedgerCore whose steps wait for a file to exist.
    SpecsAfterReset: a LedgerCore with no behaviour until it is reset.
    OldGenerationLedger: a LedgerCore behind mlagents_envs 0.16's API.
    LateSpecCore: a core whose second behaviour appears after its first step (a Unity scene).
    WideCore: a LedgerCore whose agent count grows from step to step (spawning), to make the
        pool's buffers grow.

Functions:
    fast: the pool options of the tests that build many pools (forkserver, preloaded).
    ledger_factories: factories of K ledger cores.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import threading
import time
import uuid
from typing import Any, ClassVar

import numpy as np

from zooport.envs.base_env import (
    ActionSpec,
    ActionTuple,
    BehaviorMapping,
    BehaviorSpec,
)
from zooport.envs.batched_env import BatchedEnv, StepResult
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.side_channel import OutgoingMessage, StatsAggregationMethod

from tests.support.old_api import (
    ActionType,
    OldBehaviorSpec,
    OldDecisionSteps,
    OldTerminalStepsMaxStep,
)
from tests.support.specs import obs_spec

#: The id of the raw-bytes channel LedgerCore echoes.
RAW_ID = uuid.UUID("0f0f0f0f-0000-4000-8000-00000000ec40")

_PRELOAD = ["zooport.envs.core_pool", "zooport.envs.builtin", "tests.support.pool_cores"]


def fast() -> dict[str, Any]:
    """Pool options for tests that build many pools: forkserver with zooport preloaded, so a
    worker starts in milliseconds (the default ``spawn`` is covered by the other tests)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return {}
    multiprocessing.get_context("forkserver").set_forkserver_preload(_PRELOAD)
    return {"start_method": "forkserver"}


class LedgerCore(BatchedEnv):
    """Agents earn ``1 + action + bonus`` per step; observation ``(earned so far, own id,
    steps)``. ``bonus`` is the environment parameter ``"bonus"`` (default 0); each step also
    records the statistic ``"Ledger/steps"`` (1, summed) and echoes what it received on the
    raw-bytes channel :data:`RAW_ID`.

    ``earned`` is everything the agent earned since the last ``reset()``. BatchedEnv pays an
    agent all it earned since its previous decision with each decision or terminal step, so
    at every report ``observation[0]`` is exactly the sum of the rewards reported to that
    agent since the reset (small integers: exact in float32).

    Args:
        n_agents: agents of the behaviour ``"Ledger"``.
        period: decision period.
        end_probability: chance per agent and step that its episode ends (restarted at once).
        max_steps: episode cap (interrupted).
        jitter: each step sleeps a random time in ``[0, jitter)`` seconds (its own generator,
            so the data do not depend on it).
        branches: the size of the one discrete branch (action 2 is masked for odd slots).
        seed, side_channels: as for BatchedEnv.
    """

    behavior_name: ClassVar[str] = "Ledger"

    def __init__(
        self,
        *,
        n_agents: int = 3,
        period: int = 1,
        end_probability: float = 0.1,
        max_steps: int = 0,
        jitter: float = 0.0,
        branches: int = 3,
        seed: int | None = None,
        side_channels: Any = None,
    ) -> None:
        super().__init__(seed=seed, side_channels=side_channels, max_steps=max_steps)
        spec = BehaviorSpec([obs_spec((3,), "ledger")], ActionSpec.create_discrete((branches,)))
        self._add_behavior(self.behavior_name, spec, n_agents, decision_period=period)
        self.n_agents = n_agents
        self.end_probability = end_probability
        self.jitter = jitter
        self._sleep_rng = np.random.default_rng(None if seed is None else seed + 1000)
        self.earned = np.zeros(n_agents, np.float32)
        self.steps = 0

    def _on_reset(self) -> None:
        self.earned[:] = 0
        self.steps = 0

    def _reset_agents(self, behavior: str, slots: np.ndarray) -> None:
        pass  # an agent keeps its ledger across its episodes

    def _step(self, actions: dict[str, ActionTuple]) -> dict[str, StepResult]:
        if self.jitter:
            time.sleep(self.jitter * self._sleep_rng.random())
        self.steps += 1
        bonus = self.environment_parameter("bonus", 0.0)
        reward = (1 + bonus + actions[self.behavior_name].discrete[:, 0]).astype(np.float32)
        self.earned += reward
        self.record_stat("Ledger/steps", 1.0, StatsAggregationMethod.SUM)
        for channel_id, payload in self._channels.unhandled_messages:
            if channel_id == RAW_ID:  # echo raw bytes, as a custom Unity channel might
                echo = OutgoingMessage()
                echo.set_raw_bytes(payload)
                self._channels.queue_message(RAW_ID, echo)
        ended = self.np_random.random(self.n_agents) < self.end_probability
        return {self.behavior_name: StepResult(reward, ended)}

    def _observe(self, behavior: str, slots: np.ndarray) -> list[np.ndarray]:
        ids = self._behaviors[behavior].ids[slots]
        steps = np.full(slots.size, self.steps, np.float32)
        return [np.stack([self.earned[slots], ids.astype(np.float32), steps], axis=1)]

    def _render(self) -> np.ndarray:
        # 600x600 pixels (more than a pipe's buffer), the colour from the seed and the step.
        colour = (self._seed or 0) * 16 + self.steps
        return np.full((600, 600, 3), colour % 256, dtype=np.uint8)

    def _action_mask(self, behavior: str, slots: np.ndarray) -> list[np.ndarray]:
        # Action 2 is not available to odd slots (True = NOT available, ML-Agents' polarity).
        branches = self._behaviors[behavior].spec.action_spec.discrete_branches
        mask = np.zeros((slots.size, branches[0]), bool)
        mask[:, 2] = slots % 2 == 1
        return [mask]


class WideCore(LedgerCore):
    """A LedgerCore with ``capacity`` slots that spawns ``grow`` agents every step."""

    def __init__(self, *, n_agents: int = 2, capacity: int = 64, grow: int = 3, **kwargs: Any):
        BatchedEnv.__init__(self, seed=kwargs.pop("seed", None))
        spec = BehaviorSpec([obs_spec((3,), "ledger")], ActionSpec.create_discrete((3,)))
        self._add_behavior(self.behavior_name, spec, n_agents, capacity=capacity)
        self.n_agents = capacity
        self.end_probability = 0.0
        self.jitter = 0.0
        self.grow = grow
        self.earned = np.zeros(capacity, np.float32)
        self.steps = 0

    def _reset_agents(self, behavior: str, slots: np.ndarray) -> None:
        self.earned[slots] = 0  # only spawned agents start here: no episode ends

    def _step(self, actions: dict[str, ActionTuple]) -> dict[str, StepResult]:
        result = super()._step(actions)
        self._spawn(self.behavior_name, self.grow)
        return result


class FaultyCore(BallBalance):
    """A BallBalance that misbehaves at step ``at`` (counted from construction).

    ``how``: ``"raise"`` (a ValueError), ``"die"`` (``os._exit(3)``), ``"hang"`` (sleeps an
    hour), ``"raise_on_close"`` (``close()`` raises), ``"unpicklable_error"`` (raises an
    exception that cannot be pickled).
    """

    def __init__(self, *, at: int | None = None, how: str = "raise", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.at = at
        self.how = how
        self.count = 0

    def step(self) -> None:
        self.count += 1
        if self.count == self.at:
            if self.how == "raise":
                raise ValueError(f"the simulation broke at step {self.count}")
            if self.how == "die":
                os._exit(3)
            if self.how == "hang":
                time.sleep(3600)
            if self.how == "unpicklable_error":
                raise UnpicklableError(lambda: None)
        super().step()

    def close(self) -> None:
        super().close()
        if self.how == "raise_on_close":
            raise RuntimeError("close failed")


class UnpicklableError(Exception):
    """An exception holding a lambda: it cannot cross a pipe."""

    def __init__(self, payload: Any) -> None:
        super().__init__("an error that cannot be pickled")
        self.payload = payload


class SpecsAfterReset(LedgerCore):
    """A LedgerCore with no behaviour until its first reset (a Unity scene's late specs)."""

    @property
    def behavior_specs(self) -> BehaviorMapping:
        return super().behavior_specs if self._was_reset else BehaviorMapping({})


class GatedCore(LedgerCore):
    """A LedgerCore whose steps wait until the file ``gate`` exists (a core that is slow
    for exactly as long as a test wants)."""

    def __init__(self, *, gate: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.gate = gate

    def _step(self, actions: dict[str, ActionTuple]) -> dict[str, StepResult]:
        while not os.path.exists(self.gate):
            time.sleep(0.005)
        return super()._step(actions)


class ClosingCore(LedgerCore):
    """A LedgerCore that appends a line to the file ``log`` when it is closed."""

    def __init__(self, *, log: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.log = log

    def close(self) -> None:
        with open(self.log, "a") as file:
            file.write("closed\n")
        super().close()


class OldGenerationLedger:
    """A LedgerCore behind mlagents_envs 0.16's API: ``observation_shapes``, ``ActionType``,
    ndarray actions, no group ids, ``TerminalSteps.max_step``, no seeding."""

    def __init__(self, **kwargs: Any) -> None:
        self.core = LedgerCore(**kwargs)
        self.behavior_specs = {"Ledger": OldBehaviorSpec([(3,)], ActionType.DISCRETE, (3,))}

    def reset(self) -> None:
        self.core.reset()

    def step(self) -> None:
        self.core.step()

    def close(self) -> None:
        self.core.close()

    def set_actions(self, name: str, action: np.ndarray) -> None:
        self.core.set_actions(name, ActionTuple(discrete=action))

    def get_steps(self, name: str) -> tuple[OldDecisionSteps, OldTerminalStepsMaxStep]:
        decision, terminal = self.core.get_steps(name)
        return (
            OldDecisionSteps(decision.obs, decision.reward, decision.agent_id,
                             decision.action_mask),
            OldTerminalStepsMaxStep(terminal.obs, terminal.reward, terminal.interrupted,
                                    terminal.agent_id),
        )  # fmt: skip


class NoPicture(LedgerCore):
    """A LedgerCore that cannot render."""

    def _render(self) -> np.ndarray:
        raise NotImplementedError("NoPicture has no picture")


def plain_ledger() -> LedgerCore:
    """A factory without a ``side_channels`` keyword."""
    return LedgerCore()


def failing_factory(**kwargs: Any) -> Any:
    """A factory that raises, as a broken build path would."""
    raise FileNotFoundError("builds/Missing: no such build")


class LateSpecCore(LedgerCore):
    """A LedgerCore whose behaviour ``"Late"`` (2 agents) is declared at its first step."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.late_spec = BehaviorSpec([obs_spec((2,), "late")], ActionSpec.create_continuous(1))

    def step(self) -> None:
        if "Late" not in self._behaviors:
            self._add_behavior("Late", self.late_spec, 2)
            b = self._behaviors["Late"]
            b.active[:2] = True
            b.ids[:2] = [100, 101]
            self._publish(b, np.arange(2), None)
        super().step()

    def _step(self, actions: dict[str, ActionTuple]) -> dict[str, StepResult]:
        results = super()._step(actions)
        if "Late" in actions:
            results["Late"] = StepResult(np.ones(2, np.float32), np.zeros(2, bool))
        return results

    def _observe(self, behavior: str, slots: np.ndarray) -> list[np.ndarray]:
        if behavior == "Late":
            return [np.ones((slots.size, 2), np.float32)]
        return super()._observe(behavior, slots)

    def _action_mask(self, behavior: str, slots: np.ndarray) -> list[np.ndarray] | None:
        return None if behavior == "Late" else super()._action_mask(behavior, slots)


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (Linux: /proc; else a signal 0)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stream:
            return stream.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


PATIENCE = 30.0  # seconds a test waits for what a healthy pool does at once


def gone(pids: list[int], patience: float = PATIENCE) -> bool:
    """Whether every process of ``pids`` has exited within ``patience`` seconds."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        if not any(alive(pid) for pid in pids):
            return True
        time.sleep(0.05)
    return False


@contextlib.contextmanager
def stepping_on_a_gate(tmp_path: Any, before: Any = None) -> Any:
    """A reset pool of a LedgerCore and a GatedCore whose step, started (after ``before``)
    on another thread, waits for core 1's gate; yields ``(pool, release)``, where ``release()``
    opens the gate and joins the step."""
    from zooport.envs.core_pool import CorePool

    gate = tmp_path / "gate"
    pool = CorePool([LedgerCore, functools.partial(GatedCore, gate=str(gate))], **fast())
    try:
        gate.touch()
        pool.reset(seed=0)
        gate.unlink()
        if before is not None:
            before(pool)
        stepping = threading.Thread(target=pool.step)
        stepping.start()
        deadline = time.monotonic() + PATIENCE
        while pool._guard.running != "step" and time.monotonic() < deadline:
            time.sleep(0.01)  # the other thread's step is waiting for core 1

        def release() -> None:
            gate.touch()
            stepping.join(PATIENCE)

        yield pool, release
    finally:
        gate.touch()
        pool.close()


def ledger_factories(k: int, **kwargs: Any) -> list[Any]:
    """``k`` factories of ``LedgerCore(**kwargs)``."""
    return [functools.partial(LedgerCore, **kwargs) for _ in range(k)]
