"""Walking a JSON value down to its leaves: the one flattener every layer uses.

Tool outputs, call arguments and answers are nested objects and arrays; the checker, the
evaluators, the suite generator, the verifier and the simulated model all need their scalar
leaves with the path to each. ``max_items`` caps how many items of each array are visited
(long result lists would otherwise dominate); tuples count as arrays (in-memory arguments).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

Path = tuple[str, ...]


def is_mapping(value: Any) -> bool:
    """``isinstance(value, Mapping)``, answered first for a plain ``dict`` (what parsed JSON
    holds): the ABC check costs about ten times more, and the walks over JSON values (leaves,
    schemas, plan depth) made millions of them in a run (issue 32: a few % of its CPU)."""
    return type(value) is dict or isinstance(value, Mapping)


def json_leaves(
    value: Any, *, max_items: int | None = None, path: Path = ()
) -> Iterator[tuple[Path, Any]]:
    """Every leaf of ``value`` (``None`` included) with its path of keys and array indices
    (as strings), depth first in document order; an empty object or array has no leaf."""
    if is_mapping(value):
        for k, v in value.items():
            yield from json_leaves(v, max_items=max_items, path=(*path, str(k)))
    elif isinstance(value, (list, tuple)):
        items = value if max_items is None else value[:max_items]
        for i, v in enumerate(items):
            yield from json_leaves(v, max_items=max_items, path=(*path, str(i)))
    else:
        yield path, value


def scalar_leaves(value: Any, max_items: int = 20) -> list[tuple[Path, Any]]:
    """The non-null leaves of a tool output with their paths (arrays: their first ``max_items``
    items): the facts an output states."""
    return [(p, v) for p, v in json_leaves(value, max_items=max_items) if v is not None]
