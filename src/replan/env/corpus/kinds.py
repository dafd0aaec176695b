"""Semantic kinds: the vocabulary that ties one tool's output to another tool's input.

A kind names what a value *means* (``city``, ``flight_quote_id``, ``usd_amount``), beyond its
JSON type. Each kind may list literal example values that a task can put in its query (for
kinds that only tools produce, such as booking ids, the list is empty). The shared vocabulary
is ``corpus/kinds.json``; each domain adds its own from its ``tools.json``, registered here by
:func:`replan.env.corpus.load_corpus`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

#: The corpus's one clock: every tool that needs "now" (current weather, news ages, timers, the
#: last scan of a device) reads this, so domains agree on what day it is. Date examples below
#: are all after it, as a user planning ahead would write them.
CORPUS_NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)


@dataclass(frozen=True)
class Kind:
    name: str
    description: str
    examples: tuple[Any, ...] = field(default_factory=tuple)

    @property
    def literal(self) -> bool:
        """True when a user can state a value of this kind in a query."""
        return bool(self.examples)

    @property
    def noun(self) -> str:
        """How a request names a value of this kind: its description without the article
        ("a confirmed hotel reservation" -> "confirmed hotel reservation")."""
        text = self.description.strip().rstrip(".")
        for article in ("a ", "an ", "the "):
            if text.startswith(article):
                return text[len(article) :].lstrip()
        return text


KINDS: dict[str, Kind] = {}


def register_kind(new: Kind) -> str:
    """Register a kind (idempotent for identical declarations) and return its name."""
    old = KINDS.get(new.name)
    if old is not None and old != new:
        raise ValueError(f"kind {new.name!r} declared twice with different content")
    KINDS[new.name] = new
    return new.name
