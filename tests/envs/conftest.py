"""Fixtures the tests of ``zooport.envs`` share.

Fixtures:
    pools: a list a test appends every ``CorePool`` it makes to; each is closed at the test's
        end, whether it passed or not (the upstream checkers do not always close their env).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from zooport.envs.core_pool import CorePool


@pytest.fixture
def pools() -> Iterator[list[CorePool]]:
    made: list[CorePool] = []
    yield made
    for pool in made:
        pool.close()
