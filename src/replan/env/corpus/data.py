"""The corpus as data: a small typed loader for the files that ship beside the domain code.

Each domain package holds ``tools.json`` (its kinds, its tool specs and its alternative groups,
in declaration order) and, when it has any, ``seeds.json`` (the seed tables its implementations
read: reference rates, catalogues, city tables, ...). ``corpus/kinds.json`` holds the shared
vocabulary. The code keeps only what computes: implementations, private helpers, start states.
The loader builds plain dataclasses and the core contracts (``ToolSpec``, ``Precondition``,
``Effect`` validate themselves): no model classes of its own, so loading stays cheap.
"""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from replan.core.tools import Domain, ToolSpec
from replan.env.corpus.kinds import Kind
from replan.env.corpus.registry import AlternativeGroup


def read_json(package: str, name: str) -> Any:
    """The JSON file ``name`` shipped beside ``package``'s ``__init__.py`` (package imported)."""
    path = Path(sys.modules[package].__file__ or "").parent / name
    return json.loads(path.read_text(encoding="utf-8"))


def _fields(entry: Mapping[str, Any], required: set[str], optional: set[str], where: str) -> None:
    """Refuse an entry with a missing or an unknown key (a typo must not pass silently)."""
    missing, unknown = required - set(entry), set(entry) - required - optional
    if missing or unknown:
        raise ValueError(f"{where}: missing keys {sorted(missing)}, unknown keys {sorted(unknown)}")


def kind_entry(entry: Mapping[str, Any], where: str) -> Kind:
    """One semantic kind: name, meaning, and literal examples a query may state."""
    _fields(entry, {"name", "description"}, {"examples"}, where)
    return Kind(entry["name"], entry["description"], tuple(entry.get("examples", ())))


def _group_entry(entry: Mapping[str, Any], where: str) -> AlternativeGroup:
    _fields(entry, {"id", "kind", "members"}, {"description", "output_kind"}, where)
    if entry["kind"] not in ("1-1", "1-N", "N-N"):
        raise ValueError(f"{where}: group kind {entry['kind']!r} is not 1-1, 1-N or N-N")
    return AlternativeGroup(
        id=entry["id"],
        kind=entry["kind"],
        members=tuple(tuple(chain) for chain in entry["members"]),
        description=entry.get("description", ""),
        output_kind=entry.get("output_kind"),
    )


_TOOL_REQUIRED = {"name", "category", "description", "params", "returns"}
_TOOL_OPTIONAL = {"domain", "group", "required", "preconditions", "effects"}


@dataclass(frozen=True)
class DomainFile:
    """A domain's ``tools.json``: its kinds, tool entries and alternative groups, in order.

    A tool entry is the tool's contract; ``required`` defaults to every parameter and
    ``domain`` to the file's. :meth:`spec` pairs an entry with its implementation.
    """

    package: str
    domain: Domain
    kinds: tuple[Kind, ...]
    tools: tuple[Mapping[str, Any], ...]
    groups: tuple[AlternativeGroup, ...]

    @classmethod
    def load(cls, package: str) -> DomainFile:
        raw = read_json(package, "tools.json")
        where = f"{package}/tools.json"
        _fields(raw, {"domain"}, {"kinds", "tools", "groups"}, where)
        for i, t in enumerate(raw.get("tools", [])):
            _fields(t, _TOOL_REQUIRED, _TOOL_OPTIONAL, f"{where}: tools[{i}]")
        return cls(
            package=package,
            domain=raw["domain"],
            kinds=tuple(kind_entry(k, where) for k in raw.get("kinds", [])),
            tools=tuple(raw.get("tools", [])),
            groups=tuple(_group_entry(g, where) for g in raw.get("groups", [])),
        )

    def spec(self, entry: Mapping[str, Any], implementation: Callable[..., Any]) -> ToolSpec:
        """The :class:`ToolSpec` of one tool entry, with its implementation."""
        params = entry["params"]
        return ToolSpec(
            name=entry["name"],
            description=entry["description"],
            parameters={
                "type": "object",
                "properties": params,
                "required": entry.get("required", list(params)),
            },
            returns=entry["returns"],
            category=entry["category"],
            domain=entry.get("domain", self.domain),
            group=entry.get("group"),
            preconditions=entry.get("preconditions", []),
            effects=entry.get("effects", []),
            implementation=implementation,
        )


class _Mismatch(TypeError):
    """A value that is not of its declared type; ``path`` says where inside the table."""

    def __init__(self, message: str, path: str = ""):
        super().__init__(message)
        self.message, self.path = message, path

    def inside(self, step: str) -> _Mismatch:
        return _Mismatch(self.message, step + self.path)


def as_type(value: Any, type_: Any, where: str = "value") -> Any:
    """Parsed JSON ``value`` rebuilt as ``type_``: containers take their Python type (tuples,
    sets, integer keys), scalars must already have theirs (an int where a float is declared is
    an error, not a conversion), so a table reads back exactly as it was written."""
    try:
        return _converter(type_)(value)
    except _Mismatch as exc:
        raise TypeError(f"{where}{exc.path}: {exc.message}") from None


Converter = Callable[[Any], Any]


@cache
def _converter(type_: Any) -> Converter:
    """One converter per declared type, built once: loading many tables stays cheap."""
    if type_ is Any:
        return lambda v: v
    origin, args = get_origin(type_), get_args(type_)
    if type_ is None or type_ is type(None) or (origin is None and isinstance(type_, type)):
        want = type(None) if type_ is None else type_

        def scalar(v: Any) -> Any:
            if type(v) is not want:
                raise _Mismatch(f"expected {want.__name__}, got {v!r}")
            return v

        return scalar
    if origin in (Union, types.UnionType):
        options = [_converter(a) for a in args]

        def union(v: Any) -> Any:
            for option in options:
                try:
                    return option(v)
                except _Mismatch:
                    continue
            raise _Mismatch(f"{v!r} is none of {type_}")

        return union
    if origin is dict:
        int_keys, value_of = args[0] is int, _converter(args[1])

        def mapping(v: Any) -> Any:
            if not isinstance(v, dict):
                raise _Mismatch(f"expected a JSON object for {type_}, got {v!r}")
            out = {}
            for k, x in v.items():
                try:
                    out[int(k) if int_keys else k] = value_of(x)
                except _Mismatch as exc:
                    raise exc.inside(f"[{k!r}]") from None
            return out

        return mapping
    if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        items = [_converter(a) for a in args]

        def fixed(v: Any) -> Any:
            if not isinstance(v, list) or len(v) != len(items):
                raise _Mismatch(f"expected a JSON array of {len(items)} items, got {v!r}")
            out = []
            for i, (x, item) in enumerate(zip(v, items, strict=True)):
                try:
                    out.append(item(x))
                except _Mismatch as exc:
                    raise exc.inside(f"[{i}]") from None
            return tuple(out)

        return fixed
    if origin in (tuple, list, set, frozenset):
        item, build = _converter(args[0]), origin

        def sequence(v: Any) -> Any:
            if not isinstance(v, list):
                raise _Mismatch(f"expected a JSON array for {type_}, got {v!r}")
            out = []
            for i, x in enumerate(v):
                try:
                    out.append(item(x))
                except _Mismatch as exc:
                    raise exc.inside(f"[{i}]") from None
            return out if build is list else build(out)

        return sequence
    raise TypeError(f"unsupported table type {type_}")


class SeedTables:
    """A domain's ``seeds.json``; :meth:`table` returns one table validated to its Python type.

    The type restores what JSON cannot say (tuples, sets, integer keys) through
    :func:`as_type`, so an implementation reads exactly the values of the literal tables it
    replaced.
    """

    def __init__(self, source: str, tables: dict[str, Any]):
        self.source = source
        self._tables = tables

    @classmethod
    def load(cls, package: str, name: str = "seeds.json") -> SeedTables:
        """The tables of ``package``'s ``name`` (a domain's ``seeds.json`` by default)."""
        return cls(f"{package}/{name}", read_json(package, name))

    def table(self, name: str, type_: Any) -> Any:
        """Table ``name`` as ``type_`` (for example ``dict[str, tuple[str, float]]``)."""
        if name not in self._tables:
            raise KeyError(f"{self.source} has no table {name!r}")
        return as_type(self._tables[name], type_, f"{self.source}:{name}")
