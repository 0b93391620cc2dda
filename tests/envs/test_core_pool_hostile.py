"""CorePool against a hostile user: a parent killed mid-step, a fork, a second thread, Ctrl-C
in close(), out-of-range arguments, bad agent ids and wide group ids, a script without the
``__main__`` guard, and semaphore names left in /dev/shm."""

from __future__ import annotations

import functools
import gc
import os
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

from zooport.envs.base_env import ActionTuple
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.core_pool import POOL_OPTIONS, CorePool, check_pool_options
from zooport.errors import (
    ArgumentError,
    ArgumentTypeError,
    CorePoolError,
    EnvClosedError,
    ReentrantCallError,
)

from tests.support.pool_cores import PATIENCE, LedgerCore, alive, fast, gone, stepping_on_a_gate

_STUCK = """
import os, time
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.core_pool import CorePool


class Stuck(BallBalance):
    def step(self):
        if {how!r} == "spin":
            while True:  # a core busy in Python, never back in the worker's loop
                pass
        time.sleep(3600)  # a core hung in a call


if __name__ == "__main__":
    pool = CorePool([Stuck, Stuck], local_core=False, timeout=None)
    pool.reset()
    print(" ".join(map(str, pool.worker_pids)), flush=True)
    pool.step()
"""


@pytest.mark.parametrize("how", ["hang", "spin"])
def test_workers_exit_when_the_parent_is_killed_inside_a_step(how, tmp_path):
    script = tmp_path / "stuck.py"
    script.write_text(_STUCK.format(how=how))
    with subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True,
    ) as program:  # fmt: skip
        try:
            pids = [int(p) for p in program.stdout.readline().split()]
            assert len(pids) == 2, program.stderr.read()
            time.sleep(1.0)  # both cores are inside their step now
            assert all(alive(pid) for pid in pids)
            program.kill()
            program.wait(PATIENCE)
            assert gone(pids), f"workers {pids} outlived their killed pool ({how})"
        finally:
            if program.poll() is None:
                program.kill()


_UNGUARDED = """
import functools
from zooport.envs.builtin.ball_balance import BallBalance
from zooport.envs.core_pool import CorePool

pool = CorePool([functools.partial(BallBalance, n_agents=2)] * 2)
pool.close()
"""


def test_a_script_without_the_main_guard_is_told_so(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(_UNGUARDED)
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0
    assert "CorePoolError" in result.stderr
    assert 'lacks the `if __name__ == "__main__":` guard' in result.stderr, result.stderr


def test_a_forked_child_cannot_use_the_parents_pool():
    pool = CorePool([functools.partial(LedgerCore, end_probability=0.0)] * 2, **fast())
    try:
        pool.reset(seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # fork of a threaded process
            pid = os.fork()
        if pid == 0:  # the child: every call is refused, close() too
            refused = 0
            for call in (pool.step, pool.reset, pool.close):
                try:
                    call()
                except CorePoolError as error:
                    refused += "belongs to process" in str(error)
                except BaseException:
                    pass
            os._exit(refused)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 3
        # The parent's cores were not stepped behind its back.
        pool.step()
        np.testing.assert_array_equal(pool.get_steps("Ledger")[0].obs[0][:, 2], np.ones(6))
    finally:
        pool.close()


def test_actions_and_steps_from_a_second_thread_during_a_step_are_refused(tmp_path):
    def set_ones(pool):
        pool.set_actions("Ledger", ActionTuple(discrete=np.ones((6, 1), np.int32)))

    with stepping_on_a_gate(tmp_path, before=set_ones) as (pool, release):
        one = ActionTuple(discrete=np.zeros((1, 1), np.int32))
        for call in (
            lambda: pool.set_actions("Ledger", ActionTuple(discrete=np.zeros((6, 1), np.int32))),
            lambda: pool.set_action_for_agent("Ledger", 1, one),
            lambda: pool.get_steps("Ledger"),
        ):
            with pytest.raises(ReentrantCallError, match="was called while its step"):
                call()
        release()
        # The actions set before the step reached every core (action 1 is counted in obs 3).
        decision, _ = pool.get_steps("Ledger")
        assert len(decision) == 6


def test_ctrl_c_in_close_leaves_close_retryable(monkeypatch):
    pool = CorePool([BallBalance] * 3, **fast())
    pids = pool.worker_pids
    original = pool._workers.close

    def interrupted(*args, **kwargs):
        monkeypatch.setattr(pool._workers, "close", original)
        raise KeyboardInterrupt

    monkeypatch.setattr(pool._workers, "close", interrupted)
    with pytest.raises(KeyboardInterrupt):
        pool.close()
    assert not pool.closed
    with pytest.raises(CorePoolError, match="close\\(\\) was interrupted; call close\\(\\) again"):
        pool.step()
    pool.close()
    assert pool.closed and gone(pids)
    with pytest.raises(EnvClosedError):
        pool.step()


def test_nothing_is_left_in_dev_shm_after_close():
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm here")
    before = set(os.listdir("/dev/shm"))
    gc.disable()  # close() itself must free everything, not a later collection
    try:
        pool = CorePool([BallBalance] * 3, mode="async", **fast())
        pool.reset()
        pool.step()
        pool.close()
        left = {name for name in set(os.listdir("/dev/shm")) - before if "psm_" in name
                or name.startswith("sem.")}  # fmt: skip
        assert left == set()
    finally:
        gc.enable()


def test_pool_agent_ids_stay_within_int32():
    pool = CorePool([BallBalance] * 2, **fast())
    try:
        assert pool.pool_agent_id(1, 2**30 - 1) == 2**31 - 1
        assert pool.pool_agent_id(0, -(2**30)) == -(2**31)
        with pytest.raises(ArgumentError, match="core_agent_id.*1099511627776"):
            pool.pool_agent_id(0, 2**40)
        with pytest.raises(ArgumentError, match="core_agent_id"):
            pool.pool_agent_id(1, 2**30)
    finally:
        pool.close()


def test_spin_beyond_a_second_is_refused_with_the_range():
    with pytest.raises(ArgumentError, match=r"0 <= spin < 1.0, actually: 1000000000.0"):
        CorePool([BallBalance], spin=1e9)


def test_pool_options_are_checked_and_need_workers():
    assert set(POOL_OPTIONS) | {"core_fns", "side_channels"} == set(
        CorePool.__init__.__code__.co_varnames[1 : CorePool.__init__.__code__.co_argcount
                                               + CorePool.__init__.__code__.co_kwonlyargcount]
    )  # fmt: skip
    with pytest.raises(ArgumentTypeError, match=r"mapping of CorePool arguments .*'mode'.*int 5"):
        check_pool_options(5, 2)
    with pytest.raises(ArgumentTypeError, match=r"keys among \['mode', .*\['nope'\]"):
        check_pool_options({"nope": 1}, 2)
    with pytest.raises(ArgumentError, match=r"without workers=K"):
        check_pool_options({"mode": "async"}, None)
    assert check_pool_options(None, None) == {} and check_pool_options({}, None) == {}
    import zooport

    with pytest.raises(ArgumentError, match=r"without workers=K"):
        zooport.make("BallBalance", api="vector", pool_options={"mode": "async"})
    with pytest.raises(ArgumentTypeError, match=r"keys among"):
        zooport.make("BallBalance", api="vector", workers=2, pool_options={"nope": 1})


class _BadIds(BallBalance):
    """A BallBalance whose steps are rewritten: repeated or float ids, or int64 group ids."""

    def __init__(self, *, bad: str = "", **kwargs):
        super().__init__(**kwargs)
        self.bad = bad

    def get_steps(self, behavior_name):
        decision, terminal = super().get_steps(behavior_name)
        if self.bad == "repeat":
            decision.agent_id = np.zeros_like(decision.agent_id)
        elif self.bad == "float":
            decision.agent_id = decision.agent_id.astype(np.float64) + 0.5
        elif self.bad == "wide_groups":
            decision.group_id = np.full(len(decision), 2**40 + 3, np.int64)
        return decision, terminal


@pytest.mark.parametrize("local_core", [True, False])
@pytest.mark.parametrize(("bad", "says"), [("repeat", "agent ids repeat"),
                                           ("float", "expected integer agent ids")])  # fmt: skip
def test_the_pool_refuses_repeated_and_float_agent_ids(local_core, bad, says):
    factories = [functools.partial(_BadIds, n_agents=2, bad=bad)] * 2
    pool = CorePool(factories, local_core=local_core, **fast())
    try:
        with pytest.raises(CorePoolError, match=says):
            pool.reset()
    finally:
        pool.close()


def test_group_ids_beyond_int32_keep_their_value():
    factories = [functools.partial(_BadIds, n_agents=2, bad="wide_groups")] * 3
    pool = CorePool(factories, **fast())
    try:
        pool.reset()
        decision, _ = pool.get_steps("BallBalance")
        assert decision.group_id.tolist() == [2**40 + 3] * 6
    finally:
        pool.close()


def _pool_calls(k: int, steps: int = 20) -> int:
    """Python function calls the pool's process makes in ``steps`` rounds of get_steps,
    set_actions and step over K trivial cores in workers, the wait loop left out."""
    from zooport.cli.bench.trivial_core import TrivialCore
    from zooport.envs.pool_handles import Workers

    factory = functools.partial(TrivialCore, n_agents=4, terminate=False)
    # A long spin: the workers stay awake between steps, as they do when steps come fast.
    pool = CorePool([factory] * k, local_core=False, spin=0.5, **fast())
    wait = Workers.wait.__code__
    calls = inside = 0

    def count(frame, event, arg):
        nonlocal calls, inside
        if event == "call":
            if inside or frame.f_code is wait:
                inside += 1
            else:
                calls += 1
        elif event == "return" and inside:
            inside -= 1

    try:
        pool.reset(seed=0)
        name = next(iter(pool.behavior_specs))
        action_spec = pool.behavior_specs[name].action_spec
        for _ in range(3):  # the segments are made and attached
            pool.step()
        sys.setprofile(count)
        try:
            for _ in range(steps):
                decision, _ = pool.get_steps(name)
                pool.set_actions(name, action_spec.empty_action(len(decision)))
                pool.step()
        finally:
            sys.setprofile(None)
    finally:
        pool.close()
    return calls


def test_the_pools_python_work_per_step_does_not_grow_with_the_cores():
    two, eight = _pool_calls(2), _pool_calls(8)
    assert max(two, eight) / min(two, eight) <= 1.25, (two, eight)
