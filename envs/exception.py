"""ML-Agents' exception names (``mlagents_envs.exception``): zooport's errors are instances of
them, so ``except`` clauses written against ML-Agents keep catching what zooport raises."""

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
    "UnityException", "UnityEnvironmentException", "UnityCommunicationException",
    "UnityCommunicatorStoppedException", "UnityObservationException", "UnityActionException",
    "UnityTimeOutException", "UnitySideChannelException", "UnityWorkerInUseException",
    "UnityPolicyException",
]  # fmt: skip
