"""The driver family (Parallel, AEC, MultiAgentTask): signatures and docstrings that match one
options class, which the splitters read; the engines import no front end; public
capabilities."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

from zooport.adapters import MultiAgentTask, PettingZooAECEnv, PettingZooParallelEnv
from zooport.adapters.multi_agent_driver import MultiAgentDriver
from zooport.adapters.options import DriverOptions, PettingZooOptions
from zooport.adapters.registration import make_adapter
from zooport.envs import BatchedEnv
from zooport.envs.builtin.basic import Basic
from zooport.envs.builtin.grid_world import GridWorld
from zooport.envs.builtin.tag import Tag
from zooport.errors import ArgumentTypeError

from tests.support.paths import REPO

ADAPTERS = REPO / "adapters"
FRONT_ENDS = {
    "gym_env", "vector_env", "sb3_vec_env", "pettingzoo_parallel", "pettingzoo_aec",
    "multi_agent_task", "task_api", "registration",
}  # fmt: skip
ENGINES = (
    "behavior_slots", "agent_group", "multi_agent_driver", "options", "spaces",
    "core_access", "rendering",
)  # fmt: skip


def _imported_modules(path: Path) -> set[str]:
    """Every zooport.adapters module ``path`` imports, at module level or in a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found.update(n.split(".")[2] for n in names if n.startswith("zooport.adapters."))
    return found


@pytest.mark.parametrize("engine", ENGINES)
def test_the_shared_modules_import_no_front_end(engine):
    assert not _imported_modules(ADAPTERS / f"{engine}.py") & FRONT_ENDS


def test_adapters_reach_no_private_member_of_a_core_or_driver():
    """Capabilities are public (``BatchedEnv.has_action_masks``/``can_render``,
    ``MultiAgentDriver.ready``): no adapter reads ``x._action_mask``, ``x._render`` or
    ``x._ready`` of another object."""
    private = {"_action_mask", "_render", "_ready"}
    reaches = []
    for path in sorted(ADAPTERS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in private
                and not (isinstance(node.value, ast.Name) and node.value.id == "self")
            ):
                reaches.append(f"{path.name}:{node.lineno} .{node.attr}")
    assert reaches == []


def test_batched_env_capabilities():
    class Plain(Basic):
        _render = BatchedEnv._render

    assert GridWorld().has_action_masks and not Tag().has_action_masks
    assert Basic().can_render and not Plain().can_render
    # The adapters read them: no masks where the core has none, no rgb_array without pictures.
    assert PettingZooParallelEnv(Plain()).metadata["render_modes"] == []
    tag = PettingZooParallelEnv(Tag(seed=0))
    assert not isinstance(tag.reset(seed=0)[0]["runner_0"], dict)  # no mask beside it


# A value other than the default for every option, accepted by Tag.
VALUES = {
    "uint8_visual": True, "flatten_branched": True, "allow_multiple_obs": True,
    "termination_mode": "majority", "max_cycles": 3, "action_masks": False, "mask_in_info": True,
    "default_action": "zero", "agent_name": "mlagents", "stale_actions": "raise",
    "render_mode": "rgb_array", "name": "tag",
}  # fmt: skip


@pytest.mark.parametrize("adapter", [PettingZooParallelEnv, PettingZooAECEnv])
def test_pettingzoo_signatures_and_docs_match_the_options(adapter):
    parameters = inspect.signature(adapter).parameters
    assert list(parameters) == ["core", *PettingZooOptions.names()]
    for name, default in PettingZooOptions.defaults().items():
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert parameters[name].default == default
        assert f"        {name}: " in adapter.__init__.__doc__  # the shared constructor's
    for name, value in VALUES.items():  # each parameter reaches its own field
        assert adapter(Tag(seed=0), **{name: value}).options == PettingZooOptions(**{name: value})
    env = adapter(Tag(seed=0), max_cycles=3, name="tag", stale_actions="raise")
    assert env.options == PettingZooOptions(max_cycles=3, name="tag", stale_actions="raise")
    assert env.max_cycles == 3 and str(env) == "tag" and env.stale_actions == "raise"
    with pytest.raises(ArgumentTypeError, match="unexpected keyword argument 'max_cycle'"):
        adapter(Tag(), max_cycle=3)
    with pytest.raises(ArgumentTypeError, match="positional"):
        adapter(Tag(), None)


def test_the_entry_points_split_by_the_same_names():
    from zooport.adapters.pettingzoo_envs import tag_v0

    env = tag_v0.parallel_env(n_runners=1, max_cycles=2, stale_actions="raise")
    assert env.possible_agents == ["runner_0", "tagger_1", "tagger_2"]
    assert env.options == PettingZooOptions(max_cycles=2, stale_actions="raise", name="tag_v0")
    with pytest.raises(ArgumentTypeError) as error:
        make_adapter("Tag", "aec", {"n_runner": 1})
    assert f"the adapter takes {list(PettingZooOptions.names())}" in str(error.value)
    assert set(DriverOptions.names()) < set(PettingZooOptions.names())


def test_multi_agent_task_keeps_the_seeds_positional_order_and_default():
    parameters = inspect.signature(MultiAgentTask).parameters
    assert list(parameters)[:5] == [
        "env", "uint8_visual", "flatten_branched", "allow_multiple_obs", "termination_mode",
    ]  # fmt: skip
    assert parameters["termination_mode"].default == "any"
    assert set(parameters) == {"env", *DriverOptions.names()}
    assert "options are the PettingZoo adapters'" in MultiAgentTask.__doc__
    for name, default in DriverOptions.defaults().items():
        assert f"        {name}: " in PettingZooParallelEnv.__init__.__doc__
        if name != "termination_mode":
            assert parameters[name].default == default
    task = MultiAgentTask(GridWorld(n_agents=2, seed=0), True, False, True, "all")
    assert task.options == DriverOptions(uint8_visual=True, allow_multiple_obs=True)
    assert task.observation_space(0)["observation"]["camera"].dtype == np.uint8
    assert task.options.termination_mode == "all"
    assert MultiAgentTask(Tag()).options.termination_mode == "any"
    for name in DriverOptions.names():  # each parameter reaches its own field
        task = MultiAgentTask(Tag(seed=0), **{name: VALUES[name]})
        assert task.options == DriverOptions(**{"termination_mode": "any", name: VALUES[name]})
    with pytest.raises(ArgumentTypeError, match="unexpected keyword argument 'max_cycle'"):
        MultiAgentTask(Tag(), max_cycle=3)


def test_the_driver_says_when_it_is_ready():
    driver = MultiAgentDriver(Tag(seed=0))
    assert not driver.ready
    driver.discover()  # finds the agents, but a step still needs a reset
    assert not driver.ready and driver.possible_agents
    driver.reset(seed=0)
    assert driver.ready
    driver.close()
    assert not driver.ready
