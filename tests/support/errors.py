"""What every zooport error is also caught as, written out once for the tests that check it.

Constants:
    ERRORS: zooport error -> (the ML-Agents exception name it is caught as, the built-in
        exception it also is).
"""

from __future__ import annotations

from zooport import errors
from zooport.adapters.sb3_vec_env import SlotIndexError
from zooport.adapters.wrappers import WrapperOrderError
from zooport.cli.common import UsageError
from zooport.envs.checker import ConformanceError
from zooport.envs.registry import UnknownEnvironmentError
from zooport.envs.side_channel import SideChannelTypeError

__all__ = ["ERRORS"]

#: Written by hand, not read from the classes: this is what the tests expect them to be.
ERRORS: dict[type[errors.ZooportError], tuple[str, type[BaseException]]] = {
    errors.ActionError: ("UnityActionException", ValueError),
    errors.UnknownBehaviorError: ("UnityActionException", LookupError),
    errors.EnvClosedError: ("UnityEnvironmentException", RuntimeError),
    errors.CorePoolError: ("UnityEnvironmentException", RuntimeError),
    errors.SideChannelError: ("UnitySideChannelException", ValueError),
    SideChannelTypeError: ("UnitySideChannelException", TypeError),
    errors.ObservationError: ("UnityObservationException", ValueError),
    errors.UnknownAgentError: ("UnityException", KeyError),
    errors.ArgumentError: ("UnityException", ValueError),
    errors.ArgumentTypeError: ("UnityException", TypeError),
    SlotIndexError: ("UnityException", IndexError),
    errors.EnvNotResetError: ("UnityException", RuntimeError),
    errors.ReentrantCallError: ("UnityException", RuntimeError),
    errors.RegistryError: ("UnityException", LookupError),
    UnknownEnvironmentError: ("UnityException", KeyError),
    errors.SpecError: ("UnityException", ValueError),
    WrapperOrderError: ("UnityException", ValueError),
    ConformanceError: ("UnityException", AssertionError),
    UsageError: ("UnityException", Exception),
}
