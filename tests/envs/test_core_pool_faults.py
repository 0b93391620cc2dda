"""CorePool faults and clean-up: every failure is a CorePoolError naming the core, in bounded
time, and no worker outlives its pool (close, garbage collection, exit, Ctrl-C, SIGKILL).

The orphan tests run a small script in a subprocess (a user's program), take the worker pids
it prints, end it the way a user would, and wait (generously) for those workers to be gone.
"""

from __future__ import annotations

import functools
import gc
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from zooport.envs.base_env import ActionTuple
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.core_pool import CorePool
from zooport.errors import CorePoolError, EnvClosedError

from tests.support.pool_cores import (
    PATIENCE,
    ClosingCore,
    FaultyCore,
    LedgerCore,
    alive,
    failing_factory,
    fast,
    gone,
)

#: Generous: a loaded 2-CPU machine may take seconds to start or reap a process.


def _faulty_pool(how: str, at: int = 3, local_core: bool | None = None, **options):
    factories = [
        functools.partial(FaultyCore, n_agents=2, at=at if i == 1 else None, how=how)
        for i in range(2)
    ]
    return CorePool(factories, local_core=local_core, **{**fast(), **options})


def _run_until_fault(pool, steps=10):
    pool.reset(seed=0)
    for _ in range(steps):
        pool.step()


def test_a_raising_core_names_the_core_and_the_error():
    pool = _faulty_pool("raise")
    try:
        with pytest.raises(CorePoolError) as caught:
            _run_until_fault(pool)
        error = caught.value
        assert error.core_index == 1
        message = str(error)
        assert message.startswith("core 1 (FaultyCore, worker pid ")
        assert "raised ValueError during step: the simulation broke at step 3" in message
        assert "the worker's traceback" in message and "pool_cores.py" in message
        assert isinstance(error.__cause__, ValueError)
        # the pool is unusable now, and says why
        for call in (pool.step, pool.reset, lambda: pool.get_steps("BallBalance")):
            with pytest.raises(CorePoolError, match="unusable after a failure .*core 1"):
                call()
    finally:
        pool.close()
    pool.close()


def test_a_raising_core_in_this_process_is_core_0():
    factories = [functools.partial(FaultyCore, n_agents=2, at=2), BallBalance]
    pool = CorePool(factories, **fast())
    try:
        with pytest.raises(CorePoolError, match=r"core 0 \(FaultyCore, in this process\) raised "
                                                r"ValueError during step") as caught:  # fmt: skip
            _run_until_fault(pool)
        assert isinstance(caught.value.__cause__, ValueError)
    finally:
        pool.close()


def test_an_error_that_cannot_be_pickled_still_arrives_as_text():
    pool = _faulty_pool("unpicklable_error")
    try:
        with pytest.raises(CorePoolError, match="UnpicklableError during step") as caught:
            _run_until_fault(pool)
        assert caught.value.__cause__ is None
        assert "an error that cannot be pickled" in str(caught.value)
    finally:
        pool.close()


@pytest.mark.parametrize("local_core", [True, False])
def test_a_dying_worker_is_a_fault_not_an_eof_error(local_core):
    pool = _faulty_pool("die", local_core=local_core)
    try:
        with pytest.raises(CorePoolError, match=r"core 1 .*exited with code 3 during step"):
            _run_until_fault(pool)
    finally:
        pool.close()


def test_a_worker_killed_from_outside_is_a_fault():
    pool = CorePool([BallBalance] * 2, **fast())
    try:
        pool.reset(seed=0)
        os.kill(pool.worker_pids[0], signal.SIGKILL)
        with pytest.raises(CorePoolError, match="was killed by SIGKILL"):
            for _ in range(100):
                pool.step()
    finally:
        pool.close()


def test_a_hung_worker_is_stopped_after_the_timeout():
    pool = _faulty_pool("hang", timeout=2.0)
    pid = pool.worker_pids[0]
    try:
        began = time.monotonic()
        with pytest.raises(CorePoolError, match=r"no answer to step within the timeout of 2.0 s"):
            _run_until_fault(pool)
        assert time.monotonic() - began < 2.0 + PATIENCE  # bounded, not a hang
        assert not alive(pid)
    finally:
        pool.close()


def test_a_hung_worker_in_async_mode_is_noticed_too():
    pool = _faulty_pool("hang", mode="async", timeout=2.0)
    try:
        with pytest.raises(CorePoolError, match="no answer to step within the timeout"):
            pool.reset(seed=0)
            for _ in range(100_000):  # core 0 keeps answering; core 1 is waited for meanwhile
                pool.step()
    finally:
        pool.close()


def test_a_factory_that_raises_or_cannot_be_sent():
    with pytest.raises(CorePoolError, match=r"core 1 \(\?, worker pid \d+\) raised "
                                            r"FileNotFoundError during building its core: "
                                            r"builds/Missing"):  # fmt: skip
        CorePool([BallBalance, failing_factory], **fast())
    with pytest.raises(CorePoolError, match=r"core 0: its factory raised FileNotFoundError"):
        CorePool([failing_factory, BallBalance], **fast())
    lock = threading.Lock()
    with pytest.raises(CorePoolError, match=r"core_fns\[1\] .* cannot be sent to a worker"):
        CorePool([BallBalance, functools.partial(BallBalance, seed=lock)])


def test_lambdas_work_through_cloudpickle():
    pool = CorePool([BallBalance, lambda: BallBalance(n_agents=2)], **fast())
    try:
        pool.reset()
        assert len(pool.get_steps("BallBalance")[0]) == 14
    finally:
        pool.close()


def test_close_reports_a_core_whose_close_raised_after_closing_every_other():
    factories = [BallBalance, functools.partial(FaultyCore, how="raise_on_close"), BallBalance]
    pool = CorePool(factories, local_core=False, **fast())
    pids = pool.worker_pids
    with pytest.raises(CorePoolError, match=r"core 1 .*RuntimeError during close: close failed"):
        pool.close()
    assert gone(pids)
    pool.close()  # already closed: nothing more to report
    with pytest.raises(EnvClosedError):
        pool.step()


def test_close_right_after_a_step_closes_every_core(tmp_path):
    # A worker that read the pool's next command (close) as the one it had just answered
    # exited without closing its core.
    log = tmp_path / "closed"
    factory = functools.partial(ClosingCore, log=str(log), n_agents=3, end_probability=0.0)
    for local in (True, False) * 15:
        pool = CorePool([factory] * 2, local_core=local, **fast())
        pool.reset(seed=0)
        pool.step()
        pool.close()
    assert log.read_text().count("closed") == 60


def test_garbage_collection_stops_the_workers():
    pool = CorePool([BallBalance] * 3, **fast())
    pool.reset()
    pids = pool.worker_pids
    assert len(pids) == 2 and all(alive(pid) for pid in pids)
    del pool
    gc.collect()
    assert gone(pids)


def test_close_while_a_step_is_running_in_async_mode():
    factories = [LedgerCore, functools.partial(LedgerCore, jitter=0.5)]
    pool = CorePool(factories, mode="async", **fast())
    pids = pool.worker_pids
    pool.reset()
    pool.step()  # core 1 is still asleep in its step
    pool.close()
    assert gone(pids)


_SCRIPT = """
import functools, os, sys, time
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.core_pool import CorePool

if __name__ == "__main__":
    pool = CorePool([functools.partial(BallBalance, n_agents=2)] * 3, start_method={method!r})
    pool.reset(seed=0)
    print(" ".join(map(str, pool.worker_pids)), flush=True)
    {ending}
"""

_ENDINGS = {
    # a program that forgets close() and exits normally
    "exit": "pass",
    # a program that drops its pool and goes on
    "drop": "del pool; import gc; gc.collect(); print('dropped', flush=True); time.sleep(60)",
    # Ctrl-C while training (the terminal sends SIGINT to the whole process group)
    "sigint": "while True: pool.step()",
    # a program killed from outside: the workers notice their parent is gone
    "sigkill": "time.sleep(60)",
}


@pytest.mark.parametrize("ending", sorted(_ENDINGS))
def test_no_orphan_workers(ending, tmp_path):
    method = "spawn" if ending in ("sigint", "sigkill") else fast().get("start_method", "spawn")
    script = tmp_path / "user_program.py"
    source = _SCRIPT.format(method=method, ending=_ENDINGS[ending])
    script.write_text(textwrap.dedent(source))
    with subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True,
    ) as program:  # fmt: skip
        try:
            _end_and_check(program, ending)
        finally:
            if program.poll() is None:
                program.kill()


def _end_and_check(program, ending):
    pids = [int(p) for p in program.stdout.readline().split()]
    assert len(pids) == 2, program.stderr.read()
    if ending == "drop":
        assert program.stdout.readline().strip() == "dropped"
    elif ending == "sigint":
        time.sleep(0.5)
        os.killpg(program.pid, signal.SIGINT)  # the whole group, as a terminal does
    elif ending == "sigkill":
        program.kill()
    if ending != "drop":
        program.wait(timeout=PATIENCE)
    assert gone(pids), f"workers {pids} outlived their pool ({ending})"
    if ending == "sigint":
        stderr = program.stderr.read()
        assert "KeyboardInterrupt" in stderr
        assert stderr.count("Traceback") == 1, stderr  # the workers said nothing


def test_actions_are_not_mixed_up_after_an_interrupt(monkeypatch):
    # A KeyboardInterrupt while waiting for a worker leaves the cores' state unknown: the
    # pool refuses to go on rather than hand out a step that may be off by one.
    pool = CorePool([LedgerCore, functools.partial(LedgerCore, jitter=0.3)], **fast())
    try:
        pool.reset()
        original = pool._workers.wait

        def interrupted(*args):
            raise KeyboardInterrupt

        monkeypatch.setattr(pool._workers, "wait", interrupted)
        with pytest.raises(KeyboardInterrupt):
            pool.step()
        monkeypatch.setattr(pool._workers, "wait", original)
        with pytest.raises(CorePoolError, match="KeyboardInterrupt while the cores were running"):
            pool.set_actions("Ledger", ActionTuple(discrete=np.zeros((6, 1), np.int32)))
    finally:
        pool.close()


def test_close_reports_the_local_core_whose_close_raised():
    factories = [functools.partial(FaultyCore, how="raise_on_close"), BallBalance]
    pool = CorePool(factories, local_core=True, **fast())
    pids = pool.worker_pids
    with pytest.raises(CorePoolError, match=r"core 0 .*RuntimeError during close: close failed"):
        pool.close()
    assert gone(pids)
    assert pool.closed
