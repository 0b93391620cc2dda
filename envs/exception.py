"""ML-Agents' exception names, so code written against ``mlagents_envs.exception`` ports.

Classes (ML-Agents' hierarchy: each derives from ``UnityException`` alone):
    UnityException: the root; every :class:`~zooport.errors.ZooportError` is one.
    UnityEnvironmentException: starting, using or closing the environment failed;
        :class:`~zooport.errors.EnvClosedError` is one.
    UnityCommunicationException: the communication with the simulation failed.
    UnityCommunicatorStoppedException: the simulation exited.
    UnityTimeOutException: the simulation did not answer in time.
    UnitySideChannelException: a side channel or message is wrong;
        :class:`~zooport.errors.SideChannelError` is one.
    UnityActionException: actions that cannot be sent; :class:`~zooport.errors.ActionError`
        and :class:`~zooport.errors.UnknownBehaviorError` are ones.
    UnityObservationException: observations that cannot be received as declared;
        :class:`~zooport.errors.ObservationError` is one.
    UnityWorkerInUseException: a worker's port is in use (built from the worker id).
    UnityPolicyException: a trainer-side policy error.

``from mlagents_envs.exception import UnityActionException`` becomes
``from zooport.envs.exception import UnityActionException``, and the ``except`` clauses keep
catching what zooport raises: a bad action is still a ``UnityActionException``. zooport's
errors stay ``ZooportError`` subclasses and the built-in exceptions they were
(``ValueError``, ``KeyError``, ...).

These are zooport's own classes (nothing imports ``mlagents_envs``). A real
``mlagents_envs`` UnityEnvironment raises ML-Agents' classes, which the adapters let through
unchanged, with a note naming the adapter and the call (see
:func:`zooport.adapters.core_access.note_core_failure`): catch those by their
``mlagents_envs.exception`` names.

Example:
    >>> from zooport.envs.builtin.basic import Basic
    >>> from zooport.envs.base_env import ActionTuple
    >>> import numpy as np
    >>> env = Basic()
    >>> env.reset()
    >>> try:
    ...     env.set_actions("Basic", ActionTuple(discrete=np.array([[7]], dtype=np.int32)))
    ... except UnityActionException as error:
    ...     print(type(error).__name__, isinstance(error, ValueError))
    ActionError True
"""

from __future__ import annotations

from zooport.errors import (
    UnityActionException,
    UnityCommunicationException,
    UnityCommunicatorStoppedException,
    UnityEnvironmentException,
    UnityException,
    UnityObservationException,
    UnityPolicyException,
    UnitySideChannelException,
    UnityTimeOutException,
    UnityWorkerInUseException,
)

__all__ = [
    "UnityException",
    "UnityEnvironmentException",
    "UnityCommunicationException",
    "UnityCommunicatorStoppedException",
    "UnityObservationException",
    "UnityActionException",
    "UnityTimeOutException",
    "UnitySideChannelException",
    "UnityWorkerInUseException",
    "UnityPolicyException",
]
