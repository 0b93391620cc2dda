"""How a built-in environment is registered, declared on its class."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Protocol

from zooport.errors import ArgumentError

__all__ = ["EnvDeclaration", "DeclaredEnvClass"]

_MODULE_NAME = re.compile(r"^[a-z][a-z0-9_]*_v\d+$")


@dataclasses.dataclass(frozen=True)
class EnvDeclaration:
    """How a built-in environment is registered: ``pettingzoo_name`` names its PettingZoo
    module ``zooport.adapters.pettingzoo_envs.<name>`` (None: single-agent); ``gym_kwargs``
    make its ``zooport/<Name>-v0`` id serve one agent; ``gym_threshold``: ``expected_reward``
    is that id's ``reward_threshold``; ``agent_counts`` maps a behaviour to the keyword that
    sets its agent count (``num_envs`` of ``gym.make_vec``), ``n_agents`` where unlisted."""

    pettingzoo_name: str | None = None
    gym_kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    gym_threshold: bool = True
    agent_counts: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        name = self.pettingzoo_name
        if name is not None and not (isinstance(name, str) and _MODULE_NAME.match(name)):
            raise ArgumentError(
                f"Expect pettingzoo_name to be None or a module name like 'tag_v0', actually: "
                f"{name!r}"
            )
        # Read-only views: the record is shared by every instance of the class.
        object.__setattr__(self, "gym_kwargs", MappingProxyType(dict(self.gym_kwargs)))
        object.__setattr__(self, "agent_counts", MappingProxyType(dict(self.agent_counts)))

    @property
    def pettingzoo_id(self) -> str | None:
        """``zooport/<name>-v<version>`` (or None)."""
        if self.pettingzoo_name is None:
            return None
        base, _, version = self.pettingzoo_name.rpartition("_v")
        return f"zooport/{base}-v{version}"

    def agent_count_keyword(self, behavior: str | None) -> str:
        """The constructor keyword that sets ``behavior``'s agent count (``n_agents``)."""
        return self.agent_counts.get(behavior or "", "n_agents")


class DeclaredEnvClass(Protocol):
    """A built-in environment's class as the registration code reads it (a static type)."""

    declaration: EnvDeclaration
    expected_reward: float
    max_episode_steps: int
    __module__: str
    __qualname__: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
