"""zooport: one batched multi-agent simulation, every RL library.

``zooport.envs`` holds the batched ``BaseEnv`` API (ML-Agents' names and semantics), side
channels, the registry, the ``BatchedEnv`` authoring base and the built-in environments.
``zooport.adapters`` turns any such core into a Gymnasium env, a Gymnasium or SB3 vector env,
or a PettingZoo Parallel/AEC env.

Importing zooport registers the built-in environments with Gymnasium (``zooport/<Name>-v0``)
and never touches the network.
"""

from __future__ import annotations

import os as _os

from zooport.errors import (
    ActionError,
    EnvClosedError,
    EnvNotResetError,
    RegistryError,
    SideChannelError,
    SpecError,
    UnknownAgentError,
    UnknownBehaviorError,
    ZooportError,
)

# Run from a source checkout with a non-editable install, this directory shadows the
# installed package; the sibling envs/ and adapters/ directories are then the subpackages.
_checkout = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if _os.path.isfile(_os.path.join(_checkout, "envs", "base_env.py")) and _checkout not in __path__:
    __path__.append(_checkout)

__version__ = "0.1.0"

__all__ = [
    "ZooportError",
    "ActionError",
    "UnknownBehaviorError",
    "UnknownAgentError",
    "EnvNotResetError",
    "EnvClosedError",
    "SideChannelError",
    "RegistryError",
    "SpecError",
    "__version__",
]
