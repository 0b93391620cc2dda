"""mlagents-learn (this venv) training cores that ``zooport serve`` (the main venv) serves.

The trainer runs as a user runs it: ``examples/mlagents_learn/learn.py`` with one of the
configs beside it, in a subprocess whose console summaries are read as they come, so a run
can stop (SIGINT: ML-Agents saves and exports the model, then exits) once it has what a test
needs. ``zooport serve`` runs from ``ZOOPORT_SERVE_PYTHON`` (the Makefile passes the main venv's
python): mlagents-envs 1.1.0 pins protobuf < 3.21, zooport's wire code needs protobuf >= 7.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "examples" / "mlagents_learn"
LEARN = CONFIGS / "learn.py"
#: One console summary: "[INFO] Soccer. Step: 4000. Time Elapsed: ... Mean Reward: 0.100. ...".
_SUMMARY = re.compile(r"\] (?P<behavior>[^.\]]+)\. Step: (?P<step>\d+)\.")


def zooport_python() -> str:
    """The python that runs ``zooport serve``: ZOOPORT_SERVE_PYTHON, else the checkout's .venv."""
    python = os.environ.get("ZOOPORT_SERVE_PYTHON") or str(REPO / ".venv" / "bin" / "python")
    if not Path(python).is_file():
        pytest.fail(f"no python for `zooport serve` at {python}: set ZOOPORT_SERVE_PYTHON")
    return python


def serve_command(env: str, *options: str) -> list[str]:
    """``zooport serve ENV OPTIONS...`` as the main venv runs it."""
    return [zooport_python(), "-m", "zooport", "serve", env, *options]


def write_launcher(path: Path, env: str, *options: str) -> Path:
    """An executable for ``mlagents-learn --env=path``: it execs ``zooport serve`` with the
    options given here, then whatever mlagents-learn appends (``--mlagents-port``, ``-logFile``,
    ``--env-args``'s)."""
    path.write_text(f'#!/bin/sh\nexec {shlex.join(serve_command(env, *options))} "$@"\n')
    path.chmod(0o755)
    return path


@dataclass
class Summary:
    """One console summary of a behaviour: step, mean reward, mean group reward, ELO."""

    behavior: str
    step: int
    reward: float | None
    group_reward: float | None
    elo: float | None


@dataclass
class Run:
    """What one ``mlagents-learn`` run printed and wrote."""

    results: Path
    returncode: int
    output: str
    summaries: list[Summary] = field(default_factory=list)
    seconds: float = 0.0

    def status(self) -> dict:
        """``run_logs/training_status.json`` (ELO, checkpoints), written when a run ends."""
        return json.loads((self.results / "run_logs" / "training_status.json").read_text())


def learn(
    config: str,
    results_dir: Path,
    run_id: str,
    *args: str,
    stop: Callable[[Summary], bool] | None = None,
    timeout: float = 900,
    cwd: Path | None = None,
) -> Run:
    """Runs ``learn.py CONFIG --run-id RUN_ID --results-dir ... ARGS`` and returns its run.

    ``stop(summary)`` true sends SIGINT, as Ctrl-C does: ML-Agents then saves and exports the
    model and exits 0. A run still going after ``timeout`` seconds is killed and fails the test.
    """
    command = [
        sys.executable, str(LEARN), str(CONFIGS / config), f"--run-id={run_id}",
        f"--results-dir={results_dir}", "--force", "--torch-device=cpu", *args,
    ]  # fmt: skip
    start = time.monotonic()
    proc = subprocess.Popen(
        command,
        cwd=cwd or results_dir,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    lines: list[str] = []
    summaries: list[Summary] = []
    stopped = False
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            found = _SUMMARY.search(line.rstrip())
            if found is None:
                continue
            summary = Summary(
                found["behavior"], int(found["step"]), _value("Mean Reward", line),
                _value("Mean Group Reward", line), _value("ELO", line),
            )  # fmt: skip
            summaries.append(summary)
            print(line.rstrip(), flush=True)
            if stop is not None and not stopped and stop(summary):
                proc.send_signal(signal.SIGINT)
                stopped = True
        proc.wait()
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
    output = "".join(lines)
    assert time.monotonic() - start < timeout, f"mlagents-learn ran past {timeout} s:\n{output}"
    return Run(results_dir / run_id, proc.returncode, output, summaries, time.monotonic() - start)


def _value(name: str, line: str) -> float | None:
    """The number after ``name: `` in a summary line, or None."""
    found = re.search(rf"{name}: (-?[\d.]+)\.", line)
    return None if found is None else float(found[1])


class Server:
    """``zooport serve`` started by the test (Editor mode), stopped at the end."""

    def __init__(self, env: str, *options: str, log: Path) -> None:
        self.log = log
        self._file = log.open("w")
        self.proc = subprocess.Popen(
            serve_command(env, *options), stdout=self._file, stderr=subprocess.STDOUT
        )

    def stop(self, timeout: float = 60) -> int:
        """Waits for the server to exit by itself (its trainer closed), else terminates it."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            return self.proc.wait(30)
        finally:
            self._file.close()

    def output(self) -> str:
        return self.log.read_text()


def scalars(events_dir: Path, tag: str) -> list[tuple[int, float]]:
    """(step, value) of one TensorBoard scalar over every event file in ``events_dir``."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    found: list[tuple[int, float]] = []
    for path in sorted(events_dir.glob("events.out.tfevents.*")):
        accumulator = EventAccumulator(str(path), size_guidance={"scalars": 0})
        accumulator.Reload()
        if tag in accumulator.Tags()["scalars"]:
            found.extend((e.step, e.value) for e in accumulator.Scalars(tag))
    return sorted(found)


def first(summaries: Sequence[Summary], reward: float) -> Summary | None:
    """The first summary whose mean reward is at least ``reward``."""
    return next((s for s in summaries if s.reward is not None and s.reward >= reward), None)
