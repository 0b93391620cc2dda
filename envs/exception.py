"""ML-Agents' exception names (``mlagents_envs.exception``), with its hierarchy: zooport's errors
are instances of them (a bad action is an ``ActionError``, also a ``UnityActionException`` and a
``ValueError``), so ``except`` clauses written against ML-Agents keep catching what zooport
raises; a real ``UnityEnvironment`` raises ML-Agents' own classes, let through."""

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
