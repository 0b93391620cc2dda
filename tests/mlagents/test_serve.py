"""``zooport serve`` against a real ``mlagents_envs`` 0.28 UnityEnvironment (the trainer's
side of ML-Agents' protocol, communication version 1.5.0), with no trainer and no Unity.

The server runs in its own process from the main venv (``ZOOPORT_SERVE_PYTHON``, which
``make test-mlagents`` sets): it needs current protobuf, this venv pins 3.20. Each server is
started before the UnityEnvironment listens, so each test also proves it waits (Editor mode).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from mlagents_envs.base_env import ActionTuple as MLActionTuple
from mlagents_envs.side_channel.environment_parameters_channel import (
    EnvironmentParametersChannel,
)
from mlagents_envs.side_channel.stats_side_channel import StatsSideChannel

from zooport.envs import default_registry
from zooport.envs.base_env import ActionTuple
from zooport.envs.core_pool import CorePool
from zooport.envs.side_channel import EnvironmentParametersChannel as ZPParameters

from tests.mlagents.scripted_unity import UnityEnvironment
from tests.support.paths import REPO

SERVE_PYTHON = os.environ.get("ZOOPORT_SERVE_PYTHON", str(REPO / ".venv" / "bin" / "python"))
pytestmark = pytest.mark.skipif(
    not os.path.exists(SERVE_PYTHON), reason=f"no serving Python at {SERVE_PYTHON}"
)
SERVE_ENV = {**os.environ, "PYTHONPATH": str(REPO)}
RENUMBERED = f"{REPO / 'tests' / 'mlagents' / 'serve_cores.py'}:Renumbered"
#: (registry id, kwargs) served step for step against the raw core: every built-in, plus Tag
#: with spawns, decision periods, reordering and truncation.
SHORT = {"Collector": {"max_steps": 50}, "Soccer": {"max_steps": 50}}  # so episodes end
CASES = [(name, SHORT.get(name, {})) for name in default_registry] + [
    ("Tag", {"spawn_every": 3, "max_steps": 25, "reorder_agents": True,
             "tagger_decision_period": 3}),
]  # fmt: skip


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _serve(spec: str, port: int, *args: str) -> subprocess.Popen:
    command = [SERVE_PYTHON, "-m", "zooport", "serve", spec, "--port", str(port), *args]
    return subprocess.Popen(command, env=SERVE_ENV, stderr=subprocess.PIPE, text=True)


def _unity(port: int, side_channels=None, timeout_wait: int = 60) -> UnityEnvironment:
    with warnings.catch_warnings():  # 0.28 compares versions with distutils' StrictVersion
        warnings.filterwarnings("ignore", "distutils Version classes", DeprecationWarning)
        return UnityEnvironment(
            file_name=None, base_port=port, side_channels=side_channels, timeout_wait=timeout_wait
        )


@pytest.fixture
def served():
    """``served(spec, *args, side_channels=None)`` -> (UnityEnvironment, server process)."""
    started = []

    def start(spec, *args, side_channels=None, timeout_wait=60):
        port = _free_port()
        proc = _serve(spec, port, *args)
        env = _unity(port, side_channels, timeout_wait)
        started.append((env, proc))
        return env, proc

    yield start
    for env, proc in started:
        if env._loaded:
            env.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        proc.stderr.close()


def _actions(rng, spec, decision) -> tuple[ActionTuple, MLActionTuple]:
    """Random actions among the unmasked ones, as zooport's and ML-Agents' ActionTuple."""
    n, action = len(decision), spec.action_spec
    continuous = rng.uniform(-1, 1, (n, action.continuous_size)).astype(np.float32)
    discrete = np.zeros((n, len(action.discrete_branches)), np.int32)
    for b, size in enumerate(action.discrete_branches):
        mask = (
            np.zeros((n, size), bool) if decision.action_mask is None else decision.action_mask[b]
        )
        for i in range(n):
            discrete[i, b] = rng.choice(np.flatnonzero(~mask[i]))
    return ActionTuple(continuous, discrete), MLActionTuple(continuous, discrete)


def _pooled_groups(steps, k):
    """The group ids ``zooport serve`` sends for a pool of ``k`` cores: group ``g > 0`` of core
    ``i`` (pool agent id ``a * k + i``) is ``(g - 1) * k + i + 1``, each core a training area."""
    ids, groups = np.asarray(steps.agent_id).tolist(), np.asarray(steps.group_id).tolist()
    return [(g - 1) * k + a % k + 1 if g else 0 for a, g in zip(ids, groups, strict=True)]


def _assert_same(name, ours, theirs, t, cores=1):
    where = f"{name} at step {t}"
    for kind, a, b in zip(("decision", "terminal"), ours, theirs, strict=True):
        assert len(a.obs) == len(b.obs), where
        for o, p in zip(a.obs, b.obs, strict=True):
            assert np.array_equal(_channel_first(o), p), (kind, where)
        assert _pooled_groups(a, cores) == np.asarray(b.group_id).tolist(), (kind, where)
        for field in ("reward", "agent_id", "group_reward"):
            assert np.array_equal(np.asarray(getattr(a, field)), np.asarray(getattr(b, field))), (
                kind, field, where,
            )  # fmt: skip
    mask, wire = ours[0].action_mask, theirs[0].action_mask
    if mask is None:  # no mask: ML-Agents reads all actions available
        assert wire is None or not any(m.any() for m in wire), where
    else:
        assert all(np.array_equal(m, w) for m, w in zip(mask, wire, strict=True)), where
    assert np.array_equal(ours[1].interrupted, theirs[1].interrupted), where


def _channel_first(obs):
    """A batch of cameras as the wire carries them: zooport's (H, W, C) as (C, H, W), the
    layout of com.unity.ml-agents 3 that mlagents-learn 1.1.0 reads. mlagents_envs 0.28 (of the
    channel-last Unity 2) reshapes an uncompressed observation to the shape sent, so it yields
    the camera channel first: the core's floats, transposed."""
    obs = np.asarray(obs, np.float32)
    return np.moveaxis(obs, 3, 1) if obs.ndim == 4 else obs


def _described(spec, wire=False):
    """An observation spec as plain values (zooport's and ML-Agents' enums differ); ``wire``:
    as the wire sends it (a camera channel first)."""
    order = (2, 0, 1) if wire and len(spec.shape) == 3 else range(len(spec.shape))
    return (
        tuple(spec.shape[i] for i in order),
        [int(spec.dimension_property[i]) for i in order],
        spec.observation_type.value,
        spec.name,
    )


def _drive_both(core, env, steps, seed=0):
    """Steps ``core`` and ``env`` with the same actions, comparing every behaviour's steps."""
    rng = np.random.default_rng(seed)
    specs = core.behavior_specs
    assert set(env.behavior_specs) == set(specs)
    for name, spec in specs.items():
        assert env.behavior_specs[name].action_spec == spec.action_spec
        assert [_described(o) for o in env.behavior_specs[name].observation_specs] == [
            _described(o, wire=True) for o in spec.observation_specs
        ]
    terminals = 0
    for t in range(steps):
        for name, spec in specs.items():
            ours = core.get_steps(name)
            _assert_same(name, ours, env.get_steps(name), t, getattr(core, "num_cores", 1))
            terminals += len(ours[1])
            mine, theirs = _actions(rng, spec, ours[0])
            core.set_actions(name, mine)
            env.set_actions(name, theirs)
        core.step()
        env.step()
    return terminals


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=[f"{n}{k or ''}" for n, k in CASES])
def test_every_builtin_yields_the_raw_cores_steps(served, name, kwargs):
    env, _ = served(name, "--kwargs", json.dumps(kwargs), "--seed", "3")
    core = default_registry.make(name, seed=3, **kwargs)
    core.reset()
    env.reset()
    assert _drive_both(core, env, 120) > 0  # episodes ended, so terminal steps were compared
    core.close()


def test_workers_serve_a_core_pool_seeded_per_core(served):
    env, _ = served("Tag", "--workers", "2", "--seed", "5")
    pool = CorePool([lambda i=i: default_registry.make("Tag", seed=5 + i) for i in range(2)])
    try:
        pool.reset()
        env.reset()
        _drive_both(pool, env, 40)
    finally:
        pool.close()


def test_stats_reach_the_trainer_and_environment_parameters_reach_the_core(served):
    stats, params = StatsSideChannel(), EnvironmentParametersChannel()
    params.set_float_parameter("gravity", -30.0)
    env, _ = served("BallBalance", side_channels=[stats, params])
    ours = ZPParameters()
    ours.set_float_parameter("gravity", -30.0)
    core = default_registry.make("BallBalance", seed=0, side_channels=[ours])
    core.reset()
    env.reset()
    _drive_both(core, env, 60)  # equal to the core that got gravity -30, which differs:
    cores = [default_registry.make("BallBalance", seed=0, side_channels=c) for c in ([], [ours])]
    ours.set_float_parameter("gravity", -30.0)
    for c in cores:
        c.reset()
    moved = []
    for _ in range(10):
        for c in cores:
            c.set_actions(
                "BallBalance",
                ActionTuple(np.full((len(c.get_steps("BallBalance")[0]), 2), 0.5, np.float32)),
            )
            c.step()
        moved.append([c.get_steps("BallBalance")[0].obs[0] for c in cores])
    assert any(not np.array_equal(a, b) for a, b in moved)
    received = stats.get_and_reset_stats()
    assert received["BallBalance/Fell"], received
    assert len(received["BallBalance/EpisodeLength"]) == len(received["BallBalance/Fell"])


def test_agent_ids_survive_a_forced_reset(served):
    env, _ = served(RENUMBERED)
    env.reset()
    names = sorted(env.behavior_specs)
    before: dict[str, set[int]] = {n: set() for n in names}
    for _ in range(3):  # no episode ends yet; Taggers decide every other step
        env.step()
        for n in names:
            before[n].update(env.get_steps(n)[0].agent_id.tolist())
    env.reset()  # the core numbered its agents from 100, now from 200
    after = {n: set(env.get_steps(n)[0].agent_id.tolist()) for n in names}
    assert after == before and all(after.values())
    for _ in range(30):  # episodes end and restart; the trainer still sees the first ids
        env.step()
        ids = [i for n in names for s in env.get_steps(n) for i in s.agent_id.tolist()]
        assert ids and max(ids) < 200


def _rl_input(command: int, actions=None):
    from mlagents_envs.communicator_objects.agent_action_pb2 import AgentActionProto
    from mlagents_envs.communicator_objects.unity_input_pb2 import UnityInputProto
    from mlagents_envs.communicator_objects.unity_message_pb2 import UnityMessageProto

    message = UnityMessageProto()
    message.header.status = 200
    rl_input = message.unity_input.rl_input
    rl_input.command = command
    for name, rows in (actions or {}).items():
        for row in rows:
            rl_input.agent_actions[name].value.append(AgentActionProto(discrete_actions=row))
    assert isinstance(message.unity_input, UnityInputProto)
    return message


def _send(env, message) -> None:
    """Answers the server's pending Exchange with ``message`` (bypassing UnityEnvironment)."""
    env._communicator.unity_to_external.parent_conn.send(message)


@pytest.mark.parametrize(
    ("rows", "expected"),
    [([[0], [1]], "sent 2 actions for behavior 'Basic'; expected one per decision agent, 1"),
     ([[0, 1]], "sent discrete_actions of length [2] for behavior 'Basic'; expected 1")],
)  # fmt: skip
def test_a_bad_action_message_is_an_action_error_naming_expected_and_given(served, rows, expected):
    env, proc = served("Basic")
    env.reset()
    _send(env, _rl_input(0, {"Basic": rows}))
    assert proc.wait(timeout=60) == 1
    assert expected in proc.stderr.read()


def test_quit_ends_the_server_cleanly(served):
    env, proc = served("Basic")
    env.reset()
    _send(env, _rl_input(2))
    assert proc.wait(timeout=60) == 0


def test_sigterm_ends_the_server_cleanly(served):
    env, proc = served("Soccer")
    env.reset()
    proc.send_signal(signal.SIGTERM)  # it waits for the trainer's next message
    assert proc.wait(timeout=60) == 0


def test_the_trainers_close_ends_the_server_cleanly(served):
    env, proc = served("Basic")
    env.reset()
    env.step()
    env.close()
    assert proc.wait(timeout=60) == 0
    assert "zooport serve: the trainer closed after 2 steps" in proc.stderr.read()


def test_a_trainer_that_dies_ends_the_server_with_a_message():
    port = _free_port()
    server = _serve("Basic", port, "--timeout", "600")
    trainer = subprocess.Popen([sys.executable, "-W", "ignore", "-c", textwrap.dedent(f"""
        import time
        from mlagents_envs.environment import UnityEnvironment
        env = UnityEnvironment(file_name=None, base_port={port})
        env.reset()
        print("ready", flush=True)
        time.sleep(600)
    """)], stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert trainer.stdout.readline() == "ready\n"
        trainer.kill()
        assert server.wait(timeout=60) == 1
        message = server.stderr.read()
        assert f"the trainer on localhost:{port} went away" in message, message
    finally:
        for proc in (trainer, server):
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        trainer.stdout.close()
        server.stderr.close()


def test_launched_as_an_executable_it_takes_mlagents_flags_and_seeds_from_the_worker_id(tmp_path):
    script = tmp_path / "served_ball_balance"
    script.write_text(
        f'#!/bin/sh\nPYTHONPATH="{REPO}" exec "{SERVE_PYTHON}" -m zooport serve BallBalance "$@"\n'
    )
    script.chmod(0o755)
    port = _free_port()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "distutils Version classes", DeprecationWarning)
        env = UnityEnvironment(
            file_name=str(script), worker_id=1, base_port=port - 1, no_graphics=True,
            log_folder=str(tmp_path), additional_args=["--seed", "2"], timeout_wait=60,
        )  # fmt: skip
    seed = 2 + (port - 5005) % 65536  # worker id port - 5005, as mlagents-learn numbers them
    try:
        core = default_registry.make("BallBalance", seed=seed)
        core.reset()
        env.reset()
        _drive_both(core, env, 30)
    finally:
        env.close()
    log = (tmp_path / "Player-1.log").read_text()
    assert f"zooport serve: BallBalance (1 core, seed {seed})" in log, log
