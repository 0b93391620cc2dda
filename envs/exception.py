"""ML-Agents' exception names (``mlagents_envs.exception``), with its hierarchy: zooport's errors
are instances of them, so ``except`` clauses written against ML-Agents keep catching what
zooport raises (a real ``UnityEnvironment`` raises ML-Agents' own classes, let through).

Example:
    >>> import numpy as np
    >>> from zooport.envs.builtin.basic import Basic
    >>> from zooport.envs.base_env import ActionTuple
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
