"""PettingZoo's ``env``, ``parallel_env`` and ``raw_env`` (``env``) for
``zooport/tag-v0``: keywords go to the adapter or to
:class:`zooport.envs.builtin.tag.Tag` by name.

Example:
    >>> from zooport.adapters.pettingzoo_envs import tag_v0
    >>> env = tag_v0.parallel_env(seed=0)
    >>> observations, infos = env.reset(seed=0)
    >>> str(env), list(observations) == env.agents == env.possible_agents
    ('tag_v0', True)
"""

from __future__ import annotations

from typing import Any

from zooport.adapters.registration import make_adapter


def env(**kwargs: Any) -> Any:
    """A new Tag as a PettingZoo AEC environment."""
    return make_adapter("Tag", "aec", {"name": "tag_v0", **kwargs})


def parallel_env(**kwargs: Any) -> Any:
    """A new Tag as a PettingZoo Parallel environment."""
    return make_adapter("Tag", "parallel", {"name": "tag_v0", **kwargs})


raw_env = env
