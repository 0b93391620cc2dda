"""The names ``from zooport import *`` gives, and where ML-Agents' exception names live.

``zooport/__init__.py`` re-exports zooport's errors with ``from zooport.errors import *`` (type
checkers read a star import as re-exporting ``errors.__all__``) and adds that list to ``__all__``;
``make typecheck`` checks this module, so a re-export a checker cannot see fails the lint.
"""

from __future__ import annotations

import zooport
import zooport.envs.exception
import zooport.errors
from zooport import CorePoolError, ReentrantCallError, ZooportError

# Written out here on purpose: the test is that the package's lists say the same.
ZOOPORT_ERRORS = set(
    "ZooportError ActionError UnknownBehaviorError UnknownAgentError ArgumentError "
    "ArgumentTypeError EnvNotResetError EnvClosedError SideChannelError RegistryError "
    "SpecError ObservationError ReentrantCallError CorePoolError".split()
)


def test_star_import_gives_every_zooport_error_and_the_top_level_names() -> None:
    namespace: dict[str, object] = {}
    exec("from zooport import *", namespace)
    names = set(namespace) - {"__builtins__"}
    assert names == ZOOPORT_ERRORS | {"WrapperSpec", "has_wrapper", "make", "__version__"}
    for name in ZOOPORT_ERRORS:
        assert namespace[name] is getattr(zooport.errors, name)
    assert issubclass(CorePoolError, ZooportError) and issubclass(ReentrantCallError, ZooportError)


def test_the_unity_names_are_published_by_envs_exception_not_zooport_errors() -> None:
    assert set(zooport.errors.__all__) == ZOOPORT_ERRORS
    for name in zooport.envs.exception.__all__:
        assert name.startswith("Unity")
        assert getattr(zooport.envs.exception, name) is getattr(zooport.errors, name)
