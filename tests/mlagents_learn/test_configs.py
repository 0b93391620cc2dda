"""The guide's files: a valid mlagents-learn config per built-in, and the plot script.

- Every ``examples/mlagents_learn/*.yaml`` is read by mlagents 1.1.0's own ``RunOptions``, and
  its behaviours are exactly a built-in's, as the trainer names them (``Soccer?team=0`` is
  the behaviour ``Soccer`` of team 0); every built-in has one.
- ``plot_rewards.read_scalars`` (no TensorBoard needed) reads what torch's ``SummaryWriter``
  (ML-Agents' writer) wrote, exactly as TensorBoard's ``EventAccumulator`` does.
"""

from __future__ import annotations

import json
import re
import subprocess
import warnings

import pytest
import yaml

from tests.mlagents_learn.runs import CONFIGS, scalars, zooport_python
from tests.support.paths import load_script

# mlagents imports pkg_resources (deprecated by setuptools 80) and mlagents_envs' *_pb2
# modules (protobuf 3.20's pure-Python descriptors warn); pytest makes warnings errors.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    warnings.filterwarnings("ignore", "pkg_resources is deprecated", UserWarning)
    from mlagents.plugins.trainer_type import register_trainer_plugins
    from mlagents.trainers.settings import RunOptions

    register_trainer_plugins()  # what mlagents-learn does before reading a config

CONFIG_FILES = sorted(CONFIGS.glob("*.yaml"))


def _camel(stem: str) -> str:
    return "".join(part.title() for part in stem.split("_"))


@pytest.fixture(scope="module")
def builtin_behaviors() -> dict[str, list[str]]:
    """Each built-in's behaviour names, from zooport in its own venv."""
    code = (
        "import json\nfrom zooport.envs import builtin\n"
        "print(json.dumps({n: list(getattr(builtin, n)().behavior_specs) "
        "for n in builtin.BUILTINS}))"
    )
    done = subprocess.run([zooport_python(), "-c", code], check=True, capture_output=True)
    return json.loads(done.stdout)


def test_there_is_a_config_per_builtin(builtin_behaviors):
    assert sorted(_camel(p.stem) for p in CONFIG_FILES) == sorted(builtin_behaviors)


@pytest.mark.parametrize("path", CONFIG_FILES, ids=lambda p: p.name)
def test_each_config_is_mlagents_learns_and_names_the_builtins_behaviors(path, builtin_behaviors):
    raw = yaml.safe_load(path.read_text())
    options = RunOptions.from_dict(raw)
    served = {re.sub(r"\?team=\d+$", "", name) for name in builtin_behaviors[_camel(path.stem)]}
    assert set(options.behaviors) == served
    assert set(raw["behaviors"]) == served  # no behaviour left to the trainer's defaults
    # The header names the command that serves the built-in.
    assert f"zooport serve {_camel(path.stem)}" in path.read_text()


def test_plot_script_reads_scalars_as_tensorboard_does(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # protobuf 3.20's descriptors
        from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(tmp_path))
    for step, value in [(4096, 1.5), (8192, -0.25), (12288, 19.75)]:
        writer.add_scalar("Environment/Cumulative Reward", value, step)
        writer.add_scalar("Policy/Entropy", value * 2, step)
    writer.close()
    plot = load_script(CONFIGS / "plot_rewards.py", "plot_rewards")
    tag = "Environment/Cumulative Reward"
    assert plot.read_scalars(tmp_path, tag) == scalars(tmp_path, tag)
    assert plot.read_scalars(tmp_path, tag) == [(4096, 1.5), (8192, -0.25), (12288, 19.75)]
