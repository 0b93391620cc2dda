"""The adapters' constructor options, each declared once as a field of a frozen dataclass.

Classes:
    LayoutOptions: how a behaviour's specs become spaces (both families).
    SlotOptions: the slot family's options (``BehaviorVectorEnv``, ``SB3VecEnv``).
    GymOptions: ``SlotOptions`` plus ``action_space_seed`` (``GymEnv``).
    DriverOptions: the driver family's engine options (``MultiAgentDriver``,
        ``MultiAgentTask``).
    PettingZooOptions: ``DriverOptions`` plus ``render_mode`` and ``name`` (the PettingZoo
        adapters and their entry points).

Functions:
    takes_options: builds a constructor's signature and the options part of its class
        docstring from an options class, and the options object from the call's arguments.

A field's name, default, type and documentation exist once, here: every adapter signature
(``inspect.signature``), every class docstring's ``Args`` and every option splitter
(``gym.make``, ``gym.make_vec``, the PettingZoo entry points, ``zooport.make``) reads them.
The values are checked by the code that uses them (the engines), where the message can name
the adapter; an options object is plain data. Nothing here imports an adapter.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from zooport.errors import ArgumentTypeError

if TYPE_CHECKING:
    from zooport.adapters.agent_names import AgentNaming
    from zooport.adapters.termination import TerminationMode

__all__ = [
    "LayoutOptions",
    "SlotOptions",
    "GymOptions",
    "DriverOptions",
    "PettingZooOptions",
    "option",
    "takes_options",
]

#: Where a class docstring takes its generated option docs (a line of its own in ``Args:``).
OPTIONS_MARKER = "{options}"


def option(default: Any, doc: str) -> Any:
    """A dataclass field with a default and the sentence that documents it."""
    return dataclasses.field(default=default, metadata={"doc": " ".join(doc.split())})


@dataclasses.dataclass(frozen=True)
class LayoutOptions:
    """How a behaviour's specs become Gymnasium spaces (see :mod:`zooport.adapters.spaces`)."""

    uint8_visual: bool = option(
        False, "visual observations as uint8 0..255 (rounded) instead of float32 0..1."
    )
    flatten_branched: bool = option(
        False,
        "several discrete branches as one ``Discrete`` over every combination of them "
        "(instead of a ``MultiDiscrete``).",
    )
    allow_multiple_obs: bool = option(
        False,
        "observations always as a ``Dict`` keyed by observation name; otherwise vector "
        "observations are concatenated in spec order, and any other mix is still a ``Dict``.",
    )

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names, in declaration order.

        Example:
            >>> SlotOptions.names()
            ('uint8_visual', 'flatten_branched', 'allow_multiple_obs', 'behavior_name',
             'render_mode')
        """
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """Each option's default."""
        return {f.name: f.default for f in dataclasses.fields(cls)}

    @classmethod
    def docs(cls, indent: int = 8, width: int = 96) -> str:
        """The options as the lines of a Google-style ``Args:`` section."""
        lines = []
        for f in dataclasses.fields(cls):
            text = f"{f.name}: {f.metadata['doc']}"
            lines.append(
                textwrap.fill(
                    text,
                    width=width,
                    initial_indent=" " * indent,
                    subsequent_indent=" " * (indent + 4),
                    break_on_hyphens=False,
                )
            )
        return "\n".join(lines)


@dataclasses.dataclass(frozen=True)
class SlotOptions(LayoutOptions):
    """The options of the slot family: one behaviour's agents as slots."""

    behavior_name: str | None = option(
        None,
        "the behaviour whose agents are served (the slots of the vector adapters); needed "
        "only when the core has several.",
    )
    render_mode: str | None = option(
        None,
        'None or ``"rgb_array"``, fixed at construction: ``render()`` returns the core\'s '
        "picture (a ``GymEnv`` over a core that draws none: its first visual observation; "
        "the vector adapters: one picture of all agents, not one per slot). "
        '``"human"`` is served by ``gym.make``/``gym.make_vec``, which show those frames '
        "in a window.",
    )


@dataclasses.dataclass(frozen=True)
class GymOptions(SlotOptions):
    """The options of ``GymEnv``: the slot family's, plus the action space's seed."""

    action_space_seed: int | None = option(
        None,
        "seeds ``action_space`` (for ``action_space.sample()``), as ML-Agents' wrapper does; "
        "the core is seeded by ``reset(seed=...)``.",
    )


@dataclasses.dataclass(frozen=True)
class DriverOptions(LayoutOptions):
    """The options of the driver family's engine: every behaviour's agents by name."""

    termination_mode: TerminationMode | str | float = option(
        "all",
        '``"any"``, ``"majority"``, ``"all"``, a ``TerminationMode`` or a fraction in '
        "(0, 1]: how many of the episode's agents must have finished to end it (see "
        ":mod:`zooport.adapters.termination`). Writable.",
    )
    max_cycles: int | None = option(
        None,
        "cycles (core steps asked for) after which every live agent is truncated; None: no "
        "limit. Writable.",
    )
    action_masks: bool | None = option(
        None,
        "give the agents of behaviours with discrete branches an action mask (int8, 1 = "
        "allowed); None decides per behaviour: yes, unless the core is a ``BatchedEnv`` "
        "without action masks.",
    )
    mask_in_info: bool = option(
        False,
        'the mask goes to ``info["action_mask"]`` and the observation space stays the '
        'behaviour\'s own, instead of ``{"observation", "action_mask"}``.',
    )
    default_action: str | Mapping[str, Any] | None = option(
        None,
        "what a live agent without an action (or given None) does: None raises an "
        '``ActionError`` naming the agents; ``"zero"`` takes the core\'s zero action; '
        "``{behaviour: action}`` takes that action.",
    )
    agent_name: AgentNaming = option(
        None,
        'the naming scheme: None or ``"pettingzoo"`` (``<prefix>_<agent_id>``, the team '
        'joining the prefix where behaviours share a name), ``"mlagents"`` '
        "(``<behaviour>?agent_id=<id>``, as ML-Agents' wrappers), or a callable "
        "``(behaviour, agent_id) -> str`` (see :mod:`zooport.adapters.agent_names`).",
    )
    stale_actions: str = option(
        "ignore",
        '``"ignore"`` or ``"raise"``: what an action for an agent that finished earlier in '
        "the episode does: dropped and counted in ``ignored_actions``, as PettingZoo's own "
        "environments drop it, or an ``ActionError``. Writable.",
    )


@dataclasses.dataclass(frozen=True)
class PettingZooOptions(DriverOptions):
    """The options of the PettingZoo adapters: the engine's, plus rendering and a name."""

    render_mode: str | None = option(
        None,
        'None, ``"rgb_array"`` (the core\'s picture) or ``"human"`` (that picture in a pygame '
        "window after every reset and step), fixed at construction.",
    )
    name: str | None = option(
        None, '``metadata["name"]`` (and ``str(env)``); None: ``zooport_<core class>``.'
    )


def takes_options(
    options: type[LayoutOptions],
    *,
    leading: Sequence[str],
    positional: Sequence[str] = (),
    defaults: Mapping[str, Any] | None = None,
) -> Callable[[type], type]:
    """A class decorator: the constructor takes ``options``'s fields as keyword arguments.

    The class's ``__init__`` is written as ``__init__(self, <leading>, options)``; the
    decorated one takes the leading parameters, then the ``positional`` options (by position
    or keyword, in that order), then every other option by keyword only, builds the options
    object and passes it on. Its ``__signature__`` says so, and ``{options}`` on a line of the
    class docstring's ``Args:`` becomes one entry per option.

    Args:
        options: the options class.
        leading: the constructor's own parameters before the options (``["env"]``).
        positional: options that may also be given by position, in that order.
        defaults: option defaults that differ from the class's (``termination_mode="any"``).

    Raises:
        ArgumentTypeError: (when constructing) an unknown keyword, a missing or repeated
            argument, or too many positional ones; the message lists the options.

    Example:
        >>> @takes_options(SlotOptions, leading=["env"], positional=["behavior_name"])
        ... class Probe:
        ...     '''A probe.
        ...
        ...     Args:
        ...         env: a core.
        ...         {options}
        ...     '''
        ...     def __init__(self, env, options):
        ...         self.options = options
        >>> Probe("core", "Ball", render_mode="rgb_array").options.behavior_name
        'Ball'
        >>> [str(p) for p in inspect.signature(Probe).parameters.values()][:3]
        ['env', "behavior_name: 'str | None' = None", "uint8_visual: 'bool' = False"]
    """
    defaults = dict(defaults or {})
    names = options.names()
    unknown = [n for n in (*positional, *defaults) if n not in names]
    if unknown:
        raise ArgumentTypeError(f"{options.__name__} has no options {unknown}")
    kind = inspect.Parameter
    fields = {f.name: f for f in dataclasses.fields(options)}
    parameters = [kind("self", kind.POSITIONAL_OR_KEYWORD)]
    parameters += [kind(n, kind.POSITIONAL_OR_KEYWORD) for n in leading]
    order = [*positional, *(n for n in names if n not in positional)]
    for n in order:
        parameters.append(
            kind(
                n,
                kind.POSITIONAL_OR_KEYWORD if n in positional else kind.KEYWORD_ONLY,
                default=defaults.get(n, fields[n].default),
                annotation=fields[n].type,
            )
        )
    signature = inspect.Signature(parameters, return_annotation="None")

    def decorate(cls: type) -> type:
        init = cls.__init__  # type: ignore[misc]  # the class's constructor, wrapped once

        @functools.wraps(init)
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            try:
                bound = signature.bind(self, *args, **kwargs)
            except TypeError as error:
                raise ArgumentTypeError(
                    f"{cls.__name__}(): {error}; it takes {list(leading)} and the options "
                    f"{list(order)}"
                ) from None
            bound.apply_defaults()
            values = bound.arguments
            values.pop("self")
            lead = [values.pop(n) for n in leading]
            init(self, *lead, options(**values))

        __init__.__signature__ = signature  # type: ignore[attr-defined]  # inspect reads it
        cls.__init__ = __init__  # type: ignore[misc]  # the generated constructor
        if cls.__doc__ and OPTIONS_MARKER in cls.__doc__:
            cls.__doc__ = _document(cls.__doc__, options, defaults)
        cls.options_class = options  # type: ignore[attr-defined]  # set on the decorated class
        return cls

    return decorate


def _document(doc: str, options: type[LayoutOptions], defaults: Mapping[str, Any]) -> str:
    """``doc`` with its ``{options}`` line replaced by the options' entries."""
    lines = doc.split("\n")
    for i, line in enumerate(lines):
        if line.strip() == OPTIONS_MARKER:
            indent = len(line) - len(line.lstrip())
            text = options.docs(indent=indent)
            for name, value in defaults.items():
                text += f"\n{' ' * indent}(``{name}`` defaults to ``{value!r}`` here.)"
            lines[i] = text
            return "\n".join(lines)
    return doc  # pragma: no cover - the marker was found above
