"""zooport: one batched multi-agent simulation, every RL library.

``zooport.envs`` holds the batched ``BaseEnv`` API (ML-Agents' names and semantics), side
channels, the registry, the ``BatchedEnv`` authoring base and the built-in environments.
``zooport.adapters`` turns any such core into a Gymnasium env, a Gymnasium or SB3 vector env,
or a PettingZoo Parallel/AEC env. ``zooport.checks`` runs every upstream checker on a core's
factory; ``zooport.cli`` is the ``zooport`` command line and the programs it runs (nothing
else imports it).

Importing zooport registers the built-in environments with Gymnasium (``zooport/<Name>-v0``)
and PettingZoo (``zooport/<name>-v0``) as soon as each is imported, imports neither itself,
and never touches the network; ``make``, ``WrapperSpec`` and ``has_wrapper`` load on first use.
"""

from __future__ import annotations

import os as _os

from zooport import errors as _errors

# Every zooport error, as zooport.<Name> (explicit re-exports: `X as X`).
from zooport.errors import (
    ActionError as ActionError,
    ArgumentError as ArgumentError,
    ArgumentTypeError as ArgumentTypeError,
    CorePoolError as CorePoolError,
    EnvClosedError as EnvClosedError,
    EnvNotResetError as EnvNotResetError,
    ObservationError as ObservationError,
    ReentrantCallError as ReentrantCallError,
    RegistryError as RegistryError,
    SideChannelError as SideChannelError,
    SpecError as SpecError,
    UnknownAgentError as UnknownAgentError,
    UnknownBehaviorError as UnknownBehaviorError,
    ZooportError as ZooportError,
)

# Run from a source checkout with a non-editable install, this directory shadows the
# installed package; the sibling envs/ and adapters/ directories are then the subpackages.
_checkout = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if _os.path.isfile(_os.path.join(_checkout, "envs", "base_env.py")) and _checkout not in __path__:
    __path__.append(_checkout)

__version__ = "0.1.0"

# Registration with Gymnasium (gym.make("zooport/Basic-v0"), and
# gym.make("zooport:zooport/Basic-v0") without a prior import) and PettingZoo happens when
# each is imported, not here: importing them would cost every ``import zooport.envs``.
# Imported after the __path__ line above, which a source checkout needs to find it.
from zooport._lazy import lazy_attributes as _lazy_attributes  # noqa: E402
from zooport.adapters.registration import register_when_imported as _register  # noqa: E402

_register()

# Gymnasium's wrappers package does the same: the adapters and wrappers (and with them
# gymnasium and pettingzoo) load when a name that needs them is first used.
__getattr__, __dir__ = _lazy_attributes(
    __name__,
    {
        "WrapperSpec": "zooport.adapters.wrappers.composition",
        "has_wrapper": "zooport.adapters.wrappers.composition",
        "make": "zooport.make_env",
    },
)

__all__ = ["WrapperSpec", "has_wrapper", "make", "__version__"]
__all__ += _errors.__all__
