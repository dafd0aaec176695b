"""A small DSL for writing the corpus: schema helpers, the ``@tool`` decorator, groups.

Every parameter and output field carries an ``x-kind`` (a semantic type such as ``city`` or
``flight_quote_id``, see :mod:`replan.env.corpus.kinds`). The suite generator chains tools by
matching an output field's kind to an input's kind, which is how generated tasks get real data
flow. JSON-Schema validators ignore ``x-`` keywords.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from replan.core.tools import Category, Domain, Effect, Precondition, ToolSpec

_REGISTRY: dict[str, ToolSpec] = {}
_GROUPS: dict[str, AlternativeGroup] = {}
_STATE_BUILDERS: list[Callable[[int], dict[str, dict[str, dict[str, Any]]]]] = []


@dataclass(frozen=True)
class AlternativeGroup:
    """Functionally equivalent ways to get one result.

    ``members`` are chains of tool names: ``[["a"], ["b"]]`` is 1-to-1, ``[["a"], ["b", "c"]]``
    is 1-to-N (one tool or a chain of N), ``[["a", "b"], ["c", "d"]]`` is N-to-N. Every chain
    takes the same input kinds and yields the same output kind.
    """

    id: str
    kind: Literal["1-1", "1-N", "N-N"]
    members: tuple[tuple[str, ...], ...]
    description: str = ""
    output_kind: str | None = None

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(t for chain in self.members for t in chain)


class s:  # a namespace of schema builders, read as `s.string(...)`
    """Schema builders. ``kind`` becomes ``x-kind``; ``desc`` becomes ``description``."""

    @staticmethod
    def _base(type_: str | None, desc: str, kind: str | None, **kw: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if type_:
            out["type"] = type_
        if desc:
            out["description"] = desc
        if kind:
            out["x-kind"] = kind
        out.update({k: v for k, v in kw.items() if v is not None})
        return out

    @staticmethod
    def string(
        desc: str = "",
        kind: str | None = None,
        *,
        pattern: str | None = None,
        fmt: str | None = None,
        min_len: int | None = None,
        max_len: int | None = None,
    ) -> dict[str, Any]:
        return s._base(
            "string", desc, kind, pattern=pattern, format=fmt, minLength=min_len, maxLength=max_len
        )

    @staticmethod
    def integer(
        desc: str = "",
        kind: str | None = None,
        *,
        minimum: int | None = None,
        maximum: int | None = None,
    ) -> dict[str, Any]:
        return s._base("integer", desc, kind, minimum=minimum, maximum=maximum)

    @staticmethod
    def number(
        desc: str = "",
        kind: str | None = None,
        *,
        minimum: float | None = None,
        maximum: float | None = None,
        exclusive_minimum: float | None = None,
    ) -> dict[str, Any]:
        return s._base(
            "number",
            desc,
            kind,
            minimum=minimum,
            maximum=maximum,
            exclusiveMinimum=exclusive_minimum,
        )

    @staticmethod
    def boolean(desc: str = "", kind: str | None = None) -> dict[str, Any]:
        return s._base("boolean", desc, kind)

    @staticmethod
    def enum(values: list[Any], desc: str = "", kind: str | None = None) -> dict[str, Any]:
        t = "string" if all(isinstance(v, str) for v in values) else None
        return s._base(t, desc, kind, enum=list(values))

    @staticmethod
    def date(desc: str = "", kind: str | None = "date") -> dict[str, Any]:
        return s._base("string", desc, kind, format="date")

    @staticmethod
    def email(desc: str = "", kind: str | None = "email") -> dict[str, Any]:
        return s._base("string", desc, kind, format="email")

    @staticmethod
    def array(
        items: dict[str, Any],
        desc: str = "",
        kind: str | None = None,
        *,
        min_items: int | None = None,
        max_items: int | None = None,
    ) -> dict[str, Any]:
        return s._base("array", desc, kind, items=items, minItems=min_items, maxItems=max_items)

    @staticmethod
    def obj(
        properties: dict[str, dict[str, Any]],
        desc: str = "",
        kind: str | None = None,
        *,
        required: list[str] | None = None,
    ) -> dict[str, Any]:
        return s._base(
            "object",
            desc,
            kind,
            properties=properties,
            required=required if required is not None else list(properties),
        )


def tool(
    *,
    domain: Domain,
    category: Category,
    description: str,
    params: dict[str, dict[str, Any]],
    returns: dict[str, Any],
    required: list[str] | None = None,
    group: str | None = None,
    preconditions: list[Precondition] | None = None,
    effects: list[Effect] | None = None,
    name: str | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated ``f(args, ctx) -> output`` as a corpus tool."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        tool_name = name or fn.__name__
        if tool_name in _REGISTRY:
            raise ValueError(f"corpus tool {tool_name!r} is defined twice")
        _REGISTRY[tool_name] = ToolSpec(
            name=tool_name,
            description=description,
            parameters={
                "type": "object",
                "properties": params,
                "required": list(params) if required is None else required,
            },
            returns=returns,
            category=category,
            domain=domain,
            group=group,
            preconditions=preconditions or [],
            effects=effects or [],
            implementation=fn,
        )
        return fn

    return deco


def alternatives(
    group_id: str,
    kind: Literal["1-1", "1-N", "N-N"],
    *members: list[str] | tuple[str, ...],
    description: str = "",
    output_kind: str | None = None,
) -> AlternativeGroup:
    """Declare an alternative group (call after the member tools are defined)."""
    if group_id in _GROUPS:
        raise ValueError(f"alternative group {group_id!r} is declared twice")
    grp = AlternativeGroup(
        id=group_id,
        kind=kind,
        members=tuple(tuple(m) for m in members),
        description=description,
        output_kind=output_kind,
    )
    _GROUPS[group_id] = grp
    return grp


def initial_state(fn: Callable[[int], dict[str, dict[str, dict[str, Any]]]]) -> Callable[..., Any]:
    """Register ``fn(seed) -> {collection: {id: record}}`` contributing to the start state."""
    _STATE_BUILDERS.append(fn)
    return fn


@dataclass
class _Registry:
    tools: dict[str, ToolSpec] = field(default_factory=lambda: _REGISTRY)
    groups: dict[str, AlternativeGroup] = field(default_factory=lambda: _GROUPS)
    state_builders: list[Callable[[int], dict[str, dict[str, dict[str, Any]]]]] = field(
        default_factory=lambda: _STATE_BUILDERS
    )


def registry() -> _Registry:
    return _Registry()
