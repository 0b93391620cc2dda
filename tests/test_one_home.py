"""Helpers that existed in several copies now have one home each: seeding a core, reading a
signature, guarding a reset, checking reset arguments, lazy public names."""

from __future__ import annotations

import functools
import warnings
from unittest import mock

import pytest

import zooport.adapters.core_access as core_access
import zooport.cli.common as cli_common
from zooport.adapters import GymEnv, PettingZooParallelEnv
from zooport.envs.builtin.basic import Basic
from zooport.envs.builtin.tag import Tag
from zooport.envs.capabilities import (
    is_seedable,
    keyword_parameters,
    reset_core,
    signature_parameters,
    takes_positional,
)
from zooport.envs.step_guard import StepGuard
from zooport.errors import ArgumentTypeError, EnvNotResetError


class Counting(Basic):
    """Records the seeds its resets received."""

    def reset(self, seed=None):
        self.seeds = [*getattr(self, "seeds", []), seed]
        super().reset(seed=seed)


class Unseedable(Counting):
    seedable = False


def test_one_reset_core_for_adapters_and_command_line():
    """Two public reset_core functions (adapters' and the CLI's) used to test seedability
    differently; every caller now imports the one in zooport.envs.capabilities."""
    assert cli_common.reset_core is reset_core
    assert not hasattr(core_access, "reset_core")
    core = Counting()
    assert reset_core(core, 5) and reset_core(core) is False
    assert core.seeds == [5, None]
    # ``seedable`` is read from the instance (a CorePool knows it only once its cores are
    # built) and only ``True`` counts: an object answering every attribute is not seedable.
    flagged = Unseedable()
    assert not is_seedable(flagged)
    flagged.seedable = True
    assert is_seedable(flagged)
    assert not is_seedable(mock.Mock())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert reset_core(Unseedable(), 5) is False  # quiet by default (the command line)


def test_adapters_warn_once_where_a_seed_cannot_reach_the_core():
    class Quiet(Unseedable):
        pass

    env = GymEnv(Quiet())
    with pytest.warns(UserWarning, match="cannot be reseeded"):
        env.reset(seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env.reset(seed=2)  # once per core type
        PettingZooParallelEnv(Tag(seed=0)).reset(seed=3)  # seedable: no warning


def test_signatures_are_read_in_one_place():
    def factory(n_agents, *, seed=None):
        return n_agents

    assert keyword_parameters(factory) == {"n_agents", "seed"}
    assert keyword_parameters(functools.partial(factory, 1)) == {"seed"}  # bound by position
    assert keyword_parameters(lambda **kw: kw) is None and keyword_parameters(None) is None
    assert signature_parameters(len) is not None and signature_parameters(print) is not None
    assert takes_positional(lambda mode: mode) and not takes_positional(lambda *, mode: mode)


def test_a_reset_is_guarded_in_one_way():
    guard = StepGuard("Demo")
    with pytest.raises(KeyError), guard.resetting():
        raise KeyError("boom")
    with pytest.raises(EnvNotResetError, match="the last reset raised KeyError"):
        guard.enter("step")
    with guard.resetting():
        pass
    guard.enter("step")
    guard.exit()
    assert guard.completed == 2 and guard.failure is None


@pytest.mark.parametrize("options", [5, ["x"], {1: "x"}], ids=["int", "list", "non-str key"])
def test_reset_arguments_are_checked_alike_by_both_families(options):
    for env in (GymEnv(Basic()), PettingZooParallelEnv(Tag())):
        with pytest.raises(ArgumentTypeError, match=f"{type(env).__name__}.reset: expected"):
            env.reset(options=options)
