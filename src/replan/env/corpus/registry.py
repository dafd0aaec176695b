"""Registration hooks for the domain code: implementations by tool name, start-state builders.

A tool's contract (description, schemas, preconditions, effects) is data in its domain's
``tools.json``; its implementation is the Python function registered here under the same name.
``load_corpus`` pairs the two and refuses a spec without an implementation or the reverse.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

StateBuilder = Callable[[int], dict[str, dict[str, dict[str, Any]]]]

_IMPLEMENTATIONS: dict[str, Callable[..., Any]] = {}
_STATE_BUILDERS: list[StateBuilder] = []


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


def implementation(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Register ``fn(args, ctx) -> output`` as the implementation of the tool named ``fn``."""
    if fn.__name__ in _IMPLEMENTATIONS:
        raise ValueError(f"corpus tool {fn.__name__!r} is implemented twice")
    _IMPLEMENTATIONS[fn.__name__] = fn
    return fn


def initial_state(fn: StateBuilder) -> StateBuilder:
    """Register ``fn(seed) -> {collection: {id: record}}`` contributing to the start state."""
    _STATE_BUILDERS.append(fn)
    return fn


def implementations() -> dict[str, Callable[..., Any]]:
    """Every registered implementation, by tool name (the domain modules must be imported)."""
    return dict(_IMPLEMENTATIONS)


def state_builders() -> tuple[StateBuilder, ...]:
    """Every registered start-state builder, in registration order."""
    return tuple(_STATE_BUILDERS)
