"""The one small exception hierarchy every zooport error derives from, and ML-Agents' names.

Classes:
    UnityException: the root of ML-Agents' exception names and hierarchy, published as
        :mod:`zooport.envs.exception`, with its subclasses ``UnityEnvironmentException``,
        ``UnityCommunicationException``, ``UnityCommunicatorStoppedException``,
        ``UnityTimeOutException``, ``UnitySideChannelException``, ``UnityActionException``,
        ``UnityObservationException``, ``UnityWorkerInUseException`` and
        ``UnityPolicyException``.
    ZooportError: the root; catch this to catch anything zooport raises on purpose.
    ActionError: an action of the wrong rank, batch size, dtype, range or part.
    UnknownBehaviorError: a behaviour name the environment does not have.
    UnknownAgentError: an agent id that is not in the behaviour's current steps.
    ArgumentError: a bad argument value (out of range, an unknown choice or keyword).
    ArgumentTypeError: an argument of the wrong type (also a ``TypeError``).
    EnvNotResetError: ``get_steps``/``step`` before the first ``reset``.
    EnvClosedError: any call after ``close``.
    SideChannelError: a malformed, truncated or unexpected side-channel message.
    RegistryError: an unknown registry id or a bad registry file.
    SpecError: a spec or observation the adapters cannot represent.
    ObservationError: observations that disagree with their spec (shape, count, rows).
    ReentrantCallError: ``step``/``reset`` entered while another of the same env runs.
    CorePoolError: a core of a ``CorePool`` died, hung or raised; the pool needs ``close()``.

Functions:
    look_up: ``table[key]``, or a zooport error where the key is missing or unhashable (the
        one form of a lookup with a typed error, for zooport's modules).
    a_type: a value's type name after its article ("an int"), for messages.

Each also derives from the built-in exception a Python user would try first
(``ValueError``, ``LookupError``/``KeyError``, ``RuntimeError``), so ``except ValueError``
keeps working, and from the ML-Agents exception that corresponds (every ``ZooportError`` is
a ``UnityException``; a bad action a ``UnityActionException``, a side-channel error a
``UnitySideChannelException``, observations that disagree with their spec a
``UnityObservationException``, use after ``close()`` a ``UnityEnvironmentException``), so
code written against ``mlagents_envs`` catches them under the names it already uses.
"""

from __future__ import annotations

# typing (with re and enum) would be most of `import zooport`; the annotations need it only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, TypeVar

    _Value = TypeVar("_Value")

# The Unity names are defined below and published by zooport.envs.exception, their public
# home (as mlagents_envs.exception); these are zooport's own errors.
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
    "CorePoolError",
]

# ML-Agents' names (mlagents_envs.exception), same hierarchy: each derives from
# UnityException alone. Defined here, on the ground floor, so that zooport's own errors can
# derive from them without importing upward; zooport.envs.exception publishes them.


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
    """The port of a worker id is still in use; built, as in ML-Agents, from the worker id."""

    MESSAGE_TEMPLATE = (
        "Couldn't start socket communication because worker number {} is still in use. "
        "You may need to manually close a previously opened environment "
        "or use a different worker number."
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
    """A behaviour name that the environment does not have.

    A ``UnityActionException``, as ML-Agents raises for a behaviour name it does not know.
    """


class UnknownAgentError(ZooportError, KeyError):
    """An agent id that is not part of the behaviour's current steps.

    A ``KeyError`` as in ML-Agents, so ``except KeyError`` around ``steps[agent_id]`` works.
    """

    def __str__(self) -> str:
        # KeyError quotes its argument; an error message reads better without quotes.
        return str(self.args[0]) if self.args else ""


class ArgumentError(ZooportError, ValueError):
    """An argument zooport cannot take: a value out of range, an unknown choice or keyword.

    Raised by constructors, ``reset`` and setters; the message names the argument, what was
    expected and what was given.
    """


class ArgumentTypeError(ArgumentError, TypeError):
    """An argument of the wrong type; also a ``TypeError``, so either ``except`` works.

    Example:
        >>> try:
        ...     raise ArgumentTypeError("Expect seed to be None or an int >= 0, actually: 'x'")
        ... except TypeError as error:
        ...     isinstance(error, ValueError), isinstance(error, ZooportError)
        (True, True)
    """


class EnvNotResetError(ZooportError, RuntimeError):
    """The environment was used before its first ``reset()``."""


class EnvClosedError(ZooportError, UnityEnvironmentException, RuntimeError):
    """The environment was used after ``close()`` (a ``UnityEnvironmentException``)."""


class SideChannelError(ZooportError, UnitySideChannelException, ValueError):
    """A side-channel message is malformed, truncated or addressed to no channel.

    A ``UnitySideChannelException``, as in ML-Agents.
    """


class RegistryError(ZooportError, LookupError):
    """An unknown registry identifier or an unreadable registry file."""


class SpecError(ZooportError, ValueError):
    """A behaviour spec or observation that cannot be represented as asked."""


class ObservationError(SpecError, UnityObservationException):
    """Observations from the core that disagree with their behaviour's spec.

    A wrong shape, a wrong number of observations, or a batch whose rows disagree with its
    agent ids; the message names the behaviour, the observation (index and name), and the
    expected and given shapes. A ``UnityObservationException``.
    """


class ReentrantCallError(ZooportError, RuntimeError):
    """``step`` or ``reset`` was entered while another ``step``/``reset`` of the env ran.

    From a side-channel callback, a core hook, a wrapper's policy or a second thread: an env
    is neither re-entrant nor thread-safe.
    """


class CorePoolError(ZooportError, UnityEnvironmentException, RuntimeError):
    """A core of a :class:`~zooport.envs.core_pool.CorePool` failed, or the pool cannot do
    what was asked of it (a ``UnityEnvironmentException``, as a Unity process that died is).

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


def look_up(
    table: Mapping[Any, _Value], key: Any, error: type[ZooportError], message: Callable[[], str]
) -> _Value:
    """``table[key]``; where ``key`` is missing or unhashable, ``error(message())``.

    The ``KeyError`` or ``TypeError`` is not chained: the typed error says what was asked and
    what there is. ``message`` is called only on a miss, so it may be costly to build.

    Example:
        >>> look_up({"a": 1}, "a", UnknownAgentError, lambda: "no such agent")
        1
        >>> look_up({"a": 1}, ["b"], UnknownAgentError, lambda: "no agent ['b']; agents: ['a']")
        Traceback (most recent call last):
        ...
        zooport.errors.UnknownAgentError: no agent ['b']; agents: ['a']
    """
    try:
        return table[key]
    except (KeyError, TypeError):
        raise error(message()) from None


def article(word: object) -> str:
    """``word`` after its article, for messages: "an int", "a list", "an 8-byte".

    Example:
        >>> article("int"), article("list"), article("8-byte"), article("Unity build")
        ('an int', 'a list', 'an 8-byte', 'a Unity build')
    """
    text = str(word)
    lower = text.lower()
    vowel = lower[:1] in "aeiou" and not lower.startswith(("uni", "use", "one"))
    eight = lower.startswith("8") or (lower[:2] in ("11", "18") and not lower[2:3].isdigit())
    return f"{'an' if vowel or eight else 'a'} {text}"


def a_type(value: Any) -> str:
    """``value``'s type name after its article: "an int", "a NoneType".

    Example:
        >>> a_type(3), a_type([])
        ('an int', 'a list')
    """
    return article(type(value).__name__)
