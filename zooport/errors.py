"""zooport's exceptions and ML-Agents' (as :mod:`zooport.envs.exception`). Each ZooportError is
also the built-in and the ML-Agents exception that a user would catch for it."""

from __future__ import annotations

TYPE_CHECKING = False  # typing (with re and enum) would be most of `import zooport`
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, TypeVar

    _Value = TypeVar("_Value")

__all__ = [
    "ZooportError", "ActionError", "UnknownBehaviorError", "UnknownAgentError",
    "ArgumentError", "ArgumentTypeError", "EnvNotResetError", "EnvClosedError",
    "SideChannelError", "RegistryError", "SpecError", "ObservationError", "ReentrantCallError",
    "CorePoolError",
]  # fmt: skip


class UnityException(Exception):
    """Any error of an ML-Agents-style environment (the root of ML-Agents' exceptions)."""


class UnityEnvironmentException(UnityException):
    """Starting, using or closing the environment failed (e.g. used after ``close()``)."""


class UnityCommunicationException(UnityException):
    """The communication with the simulation failed."""


class UnityCommunicatorStoppedException(UnityException):
    """The communicator stopped (the simulation exited)."""


class UnityObservationException(UnityException):
    """Observations that cannot be received as declared."""


class UnityActionException(UnityException):
    """Actions that cannot be sent as given."""


class UnityTimeOutException(UnityException):
    """The simulation did not answer in time."""


class UnitySideChannelException(UnityException):
    """A side channel or side-channel message is wrong."""


class UnityWorkerInUseException(UnityException):
    """The port of a worker id is still in use (built, as in ML-Agents, from the worker id)."""

    MESSAGE_TEMPLATE = (
        "Couldn't start socket communication because worker number {} is still in use. You may "
        "need to manually close a previously opened environment or use a different worker number."
    )

    def __init__(self, worker_id: object) -> None:
        self.worker_id = worker_id
        super().__init__(self.MESSAGE_TEMPLATE.format(worker_id))

    def __reduce__(self) -> tuple[type, tuple[object]]:
        # The one constructor argument is the worker id, not the message (pickle, copy).
        return type(self), (self.worker_id,)


class UnityPolicyException(UnityException):
    """A policy (trainer-side) error."""


class ZooportError(UnityException):
    """Base class of every error zooport raises on purpose (a ``UnityException``)."""


class ActionError(ZooportError, UnityActionException, ValueError):
    """An action does not match the behaviour's ``ActionSpec`` (a ``UnityActionException``)."""


class UnknownBehaviorError(ZooportError, UnityActionException, LookupError):
    """A behaviour name that the environment does not have (as ML-Agents, an action error)."""


class UnknownAgentError(ZooportError, KeyError):
    """An agent id that is not part of the behaviour's current steps (a ``KeyError``)."""

    def __str__(self) -> str:
        # KeyError quotes its argument; an error message reads better without quotes.
        return str(self.args[0]) if self.args else ""


class ArgumentError(ZooportError, ValueError):
    """An argument zooport cannot take: a value out of range, an unknown choice or keyword."""


class ArgumentTypeError(ArgumentError, TypeError):
    """An argument of the wrong type; also a ``TypeError``, so either ``except`` works."""


class EnvNotResetError(ZooportError, RuntimeError):
    """The environment was used before its first ``reset()``."""


class EnvClosedError(ZooportError, UnityEnvironmentException, RuntimeError):
    """The environment was used after ``close()`` (a ``UnityEnvironmentException``)."""


class SideChannelError(ZooportError, UnitySideChannelException, ValueError):
    """A side-channel message is malformed, truncated or addressed to no channel."""


class RegistryError(ZooportError, LookupError):
    """An unknown registry identifier or an unreadable registry file."""


class SpecError(ZooportError, ValueError):
    """A behaviour spec or observation that cannot be represented as asked."""


class ObservationError(SpecError, UnityObservationException):
    """Observations from the core that disagree with their behaviour's spec."""


class ReentrantCallError(ZooportError, RuntimeError):
    """``step`` or ``reset`` was entered while another ``step``/``reset`` of the env ran."""


class CorePoolError(ZooportError, UnityEnvironmentException, RuntimeError):
    """A core of a ``CorePool`` failed (``core_index``; None: the whole pool) or cannot comply."""

    def __init__(self, message: str, core_index: int | None = None) -> None:
        super().__init__(message)
        self.core_index = core_index


def look_up(
    table: Mapping[Any, _Value], key: Any, error: type[ZooportError], message: Callable[[], str]
) -> _Value:
    """``table[key]``, or where ``key`` is missing or unhashable ``error(message())``."""
    try:
        return table[key]
    except (KeyError, TypeError):
        raise error(message()) from None


def article(word: object) -> str:
    """``word`` after its article, for messages: "an int", "an 8-byte", "a Unity build"."""
    text = str(word)
    lower = text.lower()
    vowel = lower[:1] in "aeiou" and not lower.startswith(("uni", "use", "one"))
    eight = lower.startswith("8") or (lower[:2] in ("11", "18") and not lower[2:3].isdigit())
    return f"{'an' if vowel or eight else 'a'} {text}"


def a_type(value: Any) -> str:
    """``value``'s type name after its article: "an int", "a NoneType"."""
    return article(type(value).__name__)
