"""zooport: one batched multi-agent simulation, every RL library.

``zooport.envs`` holds the batched ``BaseEnv`` API (ML-Agents' names and semantics), side
channels, the registry, the ``BatchedEnv`` authoring base and the built-in environments.
``zooport.adapters`` turns any such core into a Gymnasium env, a Gymnasium or SB3 vector env,
or a PettingZoo Parallel/AEC env. ``zooport.checks`` runs every upstream checker on a core's
factory; ``zooport.cli`` is the ``zooport`` command line and the programs it runs (nothing
else imports it).

Importing zooport registers the built-in environments with Gymnasium (``zooport/<Name>-v0``)
and never touches the network.
"""

from __future__ import annotations

import os as _os

from zooport.errors import (
    ActionError,
    ArgumentError,
    ArgumentTypeError,
    EnvClosedError,
    EnvNotResetError,
    ObservationError,
    ReentrantCallError,
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

# Registration is local and cheap: Gymnasium ids (gym.make("zooport/Basic-v0"), and
# gym.make("zooport:zooport/Basic-v0") without a prior import) and PettingZoo entry points.
# Imported after the __path__ line above, which a source checkout needs to find them.
from zooport.adapters.pettingzoo_envs import (  # noqa: E402
    register_pettingzoo_envs as _register_pettingzoo,
)
from zooport.adapters.registration import (  # noqa: E402
    register_builtin_envs as _register_gymnasium,
)
from zooport.adapters.wrappers import WrapperSpec, has_wrapper  # noqa: E402
from zooport.make_env import make  # noqa: E402

_register_gymnasium()
_register_pettingzoo()

__all__ = [
    "ZooportError",
    "ActionError",
    "UnknownBehaviorError",
    "UnknownAgentError",
    "ArgumentError",
    "ArgumentTypeError",
    "EnvNotResetError",
    "EnvClosedError",
    "SideChannelError",
    "RegistryError",
    "SpecError",
    "ObservationError",
    "ReentrantCallError",
    "WrapperSpec",
    "has_wrapper",
    "make",
    "__version__",
]
