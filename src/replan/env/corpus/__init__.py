"""The tool corpus: deterministic tools across six domains and three categories.

``load_corpus()`` imports every domain module once and returns a :class:`Corpus` with the tool
specs, the alternative groups, the kinds vocabulary and the initial world state.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from replan.core.tools import ToolSpec
from replan.env.corpus.kinds import KINDS, Kind
from replan.env.corpus.registry import AlternativeGroup, registry
from replan.env.world import World, WorldState

DOMAIN_MODULES = ("financial", "travel", "shopping", "office", "iot", "general", "groups")


@dataclass(frozen=True)
class Corpus:
    tools: dict[str, ToolSpec]
    groups: dict[str, AlternativeGroup]
    kinds: dict[str, Kind]
    state_builders: tuple[Any, ...]

    def initial_state(self, seed: int = 0) -> WorldState:
        """The start state: every domain's seeded records (accounts, devices, slots, ...)."""
        cols: dict[str, dict[str, dict[str, Any]]] = {}
        for build in self.state_builders:
            for col, recs in build(seed).items():
                if col in cols and set(cols[col]) & set(recs):
                    raise ValueError(f"collection {col!r} gets the same record id twice")
                cols.setdefault(col, {}).update(recs)
        return WorldState(collections=cols)

    def world(self, seed: int = 0, tools: Iterable[str] | None = None, faults: Any = None) -> World:
        """A fresh world over all tools (or the named subset) in the start state."""
        specs = self.tools if tools is None else {n: self.tools[n] for n in tools}
        return World(specs, self.initial_state(seed), seed=seed, faults=faults)

    def group_of(self, tool: str) -> AlternativeGroup | None:
        gid = self.tools[tool].group
        return self.groups.get(gid) if gid else None


@lru_cache(maxsize=1)
def load_corpus() -> Corpus:
    for mod in DOMAIN_MODULES:
        try:
            importlib.import_module(f"replan.env.corpus.{mod}")
        except ModuleNotFoundError as exc:
            if exc.name != f"replan.env.corpus.{mod}":
                raise
    reg = registry()
    for gid, grp in reg.groups.items():
        for name in grp.tools:
            if name not in reg.tools:
                raise ValueError(f"group {gid!r} names unknown tool {name!r}")
            if reg.tools[name].group != gid:
                raise ValueError(
                    f"tool {name!r} is in group {gid!r} but declares group "
                    f"{reg.tools[name].group!r}"
                )
    return Corpus(
        tools=dict(reg.tools),
        groups=dict(reg.groups),
        kinds=dict(KINDS),
        state_builders=tuple(reg.state_builders),
    )


__all__ = ["AlternativeGroup", "Corpus", "load_corpus"]
