"""The standing bad-input matrix: every public entry point x every class of bad input.

Each row of :data:`bad_inputs_cases.CASES` must raise its zooport error, which must also be
the built-in exception a Python user would catch, with a message that names what was
expected and what was given; a correct use of the environment afterwards must give exactly
what an untouched twin gives. The command line's rows (:data:`bad_inputs_cases.CLI_CASES`)
must print one line and exit 2 before any work starts.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

import zooport.cli.play
import zooport.cli.targets
import zooport.cli.training
from zooport.adapters.gym_env import GymEnv
from zooport.adapters.sb3_vec_env import SB3VecEnv
from zooport.adapters.vector_env import BehaviorVectorEnv
from zooport.cli.app import main
from zooport.envs.builtin import BallBalance, Tag
from zooport.errors import ZooportError

from tests.support.bad_inputs import (
    CASES,
    CLI_CASES,
    KINDS,
    POOL_CASES,
    Case,
    SlotScene,
    entry_points,
)
from tests.support.raw_cores import with_rows


def _param(case: Case):
    marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
    return pytest.param(case, id=case.id, marks=marks)


def test_the_table_covers_every_kind_and_has_unique_rows():
    assert len({case.id for case in CASES}) == len(CASES)
    assert {case.kind for case in CASES} == set(KINDS)
    assert all(case.kind in KINDS for case in CASES)
    # A row waiting for another branch names it.
    assert all(case.xfail is None or "branch" in case.xfail for case in CASES)
    # The README states the size; keep it honest.
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    stated = re.search(
        r"(\d+) cases over (\d+) public entry\s+points.*?(\d+) kinds of bad input.*?plus (\d+)\s+"
        r"command-line cases",
        readme,
        flags=re.S,
    )
    assert stated is not None
    assert tuple(map(int, stated.groups())) == (
        len(CASES),
        len(entry_points(CASES)),
        len(KINDS),
        len(CLI_CASES),
    )


@pytest.mark.parametrize("case", [_param(case) for case in CASES + POOL_CASES])
def test_bad_input(case: Case):
    env = case.make()
    try:
        with warnings.catch_warnings():
            # A Unity-like warning (an unseedable core) is not what these rows test.
            warnings.simplefilter("ignore", DeprecationWarning)
            with pytest.raises(ZooportError) as caught:
                case.call(env)
        error = caught.value
        assert isinstance(error, case.error), f"{type(error).__name__}: {error}"
        assert isinstance(error, case.builtin), type(error).__mro__
        message = str(error)
        assert message.strip(), "the error has no message"
        for fragment in case.says:
            assert fragment in message, (fragment, message)
        if case.after is not None:
            twin = (case.twin or case.make)()
            try:
                assert data_equivalence(case.after(env), case.after(twin))
            finally:
                _close(twin)
    finally:
        _close(env)


def _close(env):
    close = getattr(env, "close", None)
    if callable(close):
        try:
            close()
        except ZooportError:
            pass


@pytest.mark.parametrize(
    ("argv", "fragments", "early"), CLI_CASES, ids=[" ".join(case[0]) for case in CLI_CASES]
)
def test_cli_user_error(capsys, monkeypatch, argv, fragments, early):
    # --record and --plot first ask for their extra (zooport[plots]); the version-floor venv
    # installs no extras, so there the path checks behind that are not reached.
    if "--record" in argv:
        pytest.importorskip("PIL", reason="--record needs zooport[plots]")
    if "--plot" in argv:
        pytest.importorskip("matplotlib", reason="--plot needs zooport[plots]")
    if early:
        # Nothing is built, stepped or trained before the argument is found to be wrong.
        def no_work(*args, **kwargs):
            raise AssertionError("the run started before the mistake was found")

        monkeypatch.setattr(zooport.cli.play, "_build_adapter", no_work)
        monkeypatch.setattr(zooport.cli.training, "_training_env", no_work)
        monkeypatch.setattr(zooport.cli.targets.Target, "make", no_work)
    code = main(["--plain", *argv])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("zooport: error: "), err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


# ---------------------------------------------------------------------- single findings


def test_empty_terminal_steps_are_not_one_shared_object():
    core = Tag(seed=0)
    core.reset(seed=0)
    for name, spec in core.behavior_specs.items():
        core.set_actions(name, spec.action_spec.empty_action(len(core.get_steps(name)[0])))
    core.step()
    _, terminal = core.get_steps("Runner?team=0")
    assert len(terminal) == 0
    # A consumer changing one step's (empty) TerminalSteps...
    terminal.agent_id = np.array([7], np.int32)
    terminal.obs.append(np.ones((1, 3), np.float32))
    for name, spec in core.behavior_specs.items():
        core.set_actions(name, spec.action_spec.empty_action(len(core.get_steps(name)[0])))
    core.step()
    _, later = core.get_steps("Runner?team=0")
    # ...changes no other step's.
    assert later is not terminal
    assert len(later) == 0 and later.agent_id.tolist() == []
    assert len(later.obs) == len(core.behavior_specs["Runner?team=0"].observation_specs)


def test_seed_check_accepts_numpy_integers_everywhere():
    from zooport.adapters.gym_env import GymEnv
    from zooport.envs.builtin import Basic

    env = GymEnv(Basic(seed=0))
    first = env.reset(seed=np.int64(3))
    again = env.reset(seed=3)
    assert data_equivalence(first, again)


# ---------------------------------------------------------------------- scene values kept
# (what a scene may send that is no mistake: the PettingZoo adapters pass it on unchanged)


@pytest.mark.parametrize("adapter", ["PettingZooParallelEnv", "PettingZooAECEnv"])
def test_group_ids_beyond_int32_are_kept(adapter):
    import zooport.adapters as adapters

    from tests.support.scene import Scene, rows

    big = 2**40 + 1
    env = getattr(adapters, adapter)(Scene([{"B": rows([0, 1], group_id=big)}]))
    _, infos = env.reset() or (None, env.infos)
    assert [info["group_id"] for info in infos.values()] == [big, big]


# ---------------------------------------------------------------------- scenes (slot family)
# A scene's group ids beyond int32 are no error: the slot family keeps their value.


@pytest.mark.parametrize("adapter", [GymEnv, BehaviorVectorEnv, SB3VecEnv])
def test_slot_family_keeps_group_ids_beyond_int32(adapter):
    group = 2**40 + 1  # int32 made it 1

    def large_groups(decision, terminal):
        return with_rows(decision, group_id=np.full(len(decision), group, np.int64)), terminal

    n = 1 if adapter is GymEnv else 3
    env = adapter(SlotScene(BallBalance(n_agents=n, seed=0), "BallBalance", large_groups))
    if adapter is SB3VecEnv:
        env.reset()
        env.step(np.zeros((n, 2), np.float32))
        assert env._slots.group_id.tolist() == [group] * n  # SB3's infos carry no group id
    else:
        env.reset(seed=0)
        *_, info = env.step(np.zeros((n, 2) if n > 1 else 2, np.float32))
        assert np.asarray(info["group_id"]).tolist() == ([group] * n if n > 1 else group)
    env.close()
