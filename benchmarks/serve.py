"""``python benchmarks/serve.py``: what ``zooport serve`` costs per step on the serving side.

A stand-in trainer (a gRPC server in this process, speaking the same wire format) answers every
step with N actions at once; ``zooport serve BallBalance`` runs in a child process, whose CPU
time (user + system, from ``os.wait4``) is read for two run lengths, so start-up cancels out.
The raw core's CPU per step (``get_steps``, ``set_actions``, ``step``, in this process) is the
baseline; the difference per agent-step is what the protocol adds (the issue's target: at most
25 us per agent-step at N = 64). Needs the ``mlagents`` extra.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import numpy as np

from zooport.adapters import _mlagents_wire_pb2 as pb
from zooport.envs.base_env import ActionTuple
from zooport.envs.builtin.ball_balance import BallBalance

ROOT = Path(__file__).resolve().parents[1]


class StandInTrainer:
    """Answers the handshake, a RESET, ``steps`` STEPs of fixed actions, then closes (400)."""

    def __init__(self, n: int, steps: int) -> None:
        step = pb.UnityMessageProto(header={"status": 200})
        actions = step.unity_input.rl_input.agent_actions["BallBalance"].value
        for _ in range(n):
            actions.add(continuous_actions=[0.3, -0.2])
        self.replies = [
            pb.UnityMessageProto(header={"status": 200}, unity_input={"rl_initialization_input": {
                "seed": 0, "communication_version": "1.5.0", "num_areas": 1}}),
            pb.UnityMessageProto(header={"status": 200}, unity_input={"rl_input": {"command": 1}}),
            *[step] * steps,
            pb.UnityMessageProto(header={"status": 400}),
        ]  # fmt: skip
        self.count = 0
        self.done = threading.Event()

    def exchange(self, request: object, context: object) -> object:
        reply = self.replies[self.count]
        self.count += 1
        if self.count == len(self.replies):
            self.done.set()
        return reply


def served_cpu(n: int, steps: int) -> float:
    """CPU seconds of a ``zooport serve`` process that served ``steps`` steps."""
    with socket.socket() as s:
        s.bind(("localhost", 0))
        port = s.getsockname()[1]
    trainer = StandInTrainer(n, steps)
    server = grpc.server(ThreadPoolExecutor(max_workers=2))
    handler = grpc.unary_unary_rpc_method_handler(
        trainer.exchange,
        request_deserializer=pb.UnityMessageProto.FromString,
        response_serializer=pb.UnityMessageProto.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        [
            grpc.method_handlers_generic_handler(
                "communicator_objects.UnityToExternalProto", {"Exchange": handler}
            )
        ]  # fmt: skip
    )
    server.add_insecure_port(f"localhost:{port}")
    server.start()
    command = [sys.executable, "-m", "zooport", "serve", "BallBalance", "--port", str(port),
               "--kwargs", json.dumps({"n_agents": n})]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    server.stop(None)
    if proc.returncode != 0 or not trainer.done.is_set():
        raise RuntimeError(f"zooport serve exited {proc.returncode} after {trainer.count} messages")
    return usage.ru_utime + usage.ru_stime


def raw_cpu(n: int, steps: int) -> float:
    """CPU seconds of ``steps`` raw steps of the same core, as the server drives it."""
    core = BallBalance(n_agents=n, seed=0)
    core.reset()
    actions = ActionTuple(np.tile(np.float32([0.3, -0.2]), (n, 1)))
    start = time.process_time()
    for _ in range(steps):
        core.get_steps("BallBalance")
        core.set_actions("BallBalance", actions)
        core.step()
    return time.process_time() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[8, 64], help="agent counts")
    parser.add_argument("--steps", type=int, default=2000, help="steps of the longer run")
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print("| N | raw us/step | served us/step | added us/agent-step | served/raw |")
    print("|---|---|---|---|---|")
    for n in args.n:
        short, long = args.steps // 4, args.steps
        served = (served_cpu(n, long) - served_cpu(n, short)) / (long - short)
        raw = min(raw_cpu(n, long) for _ in range(3)) / long
        print(f"| {n} | {raw * 1e6:.0f} | {served * 1e6:.0f} | {(served - raw) / n * 1e6:.1f} "
              f"| {served / raw:.1f}x |")  # fmt: skip


if __name__ == "__main__":
    main()
