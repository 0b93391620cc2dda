"""The one small exception hierarchy every zooport error derives from.

Classes:
    ZooportError: the root; catch this to catch anything zooport raises on purpose.
    ActionError: an action of the wrong rank, batch size, dtype, range or part.
    UnknownBehaviorError: a behaviour name the environment does not have.
    UnknownAgentError: an agent id that is not in the behaviour's current steps.
    EnvNotResetError: ``get_steps``/``step`` before the first ``reset``.
    EnvClosedError: any call after ``close``.
    SideChannelError: a malformed, truncated or unexpected side-channel message.
    RegistryError: an unknown registry id or a bad registry file.
    SpecError: a spec or observation the adapters cannot represent.
    ArgumentError: a bad argument value (out of range, an unknown choice).
    ArgumentTypeError: an argument of the wrong type (also a ``TypeError``).
    CorePoolError: a core of a ``CorePool`` died, hung or raised; the pool needs ``close()``.

Each also derives from the built-in exception a Python user would try first
(``ValueError``, ``LookupError``/``KeyError``, ``RuntimeError``), so ``except ValueError``
keeps working.
"""

from __future__ import annotations

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
    "ArgumentError",
    "ArgumentTypeError",
    "CorePoolError",
]


class ZooportError(Exception):
    """Base class of every error zooport raises on purpose."""


class ActionError(ZooportError, ValueError):
    """An action does not match the behaviour's ``ActionSpec``."""


class UnknownBehaviorError(ZooportError, LookupError):
    """A behaviour name that the environment does not have."""


class UnknownAgentError(ZooportError, KeyError):
    """An agent id that is not part of the behaviour's current steps.

    A ``KeyError`` as in ML-Agents, so ``except KeyError`` around ``steps[agent_id]`` works.
    """

    def __str__(self) -> str:
        # KeyError quotes its argument; an error message reads better without quotes.
        return str(self.args[0]) if self.args else ""


class EnvNotResetError(ZooportError, RuntimeError):
    """The environment was used before its first ``reset()``."""


class EnvClosedError(ZooportError, RuntimeError):
    """The environment was used after ``close()``."""


class SideChannelError(ZooportError, ValueError):
    """A side-channel message is malformed, truncated or addressed to no channel."""


class RegistryError(ZooportError, LookupError):
    """An unknown registry identifier or an unreadable registry file."""


class SpecError(ZooportError, ValueError):
    """A behaviour spec or observation that cannot be represented as asked."""


class ArgumentError(ZooportError, ValueError):
    """An argument zooport cannot take: a value out of range or an unknown choice."""


class ArgumentTypeError(ArgumentError, TypeError):
    """An argument of the wrong type; also a ``TypeError``, so either ``except`` works."""


class CorePoolError(ZooportError, RuntimeError):
    """A core of a :class:`~zooport.envs.core_pool.CorePool` failed, or the pool cannot do
    what was asked of it.

    A fault (a worker that died, did not answer within the pool's timeout, or whose core
    raised) names the core index and the original error (also chained as ``__cause__`` when
    it could be sent between processes); after one the pool raises this on every call but
    ``close()``.

    Attributes:
        core_index: the core that failed, or None when the error concerns the whole pool.
    """

    def __init__(self, message: str, core_index: int | None = None) -> None:
        super().__init__(message)
        self.core_index = core_index
