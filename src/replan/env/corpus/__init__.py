"""The tool corpus: deterministic tools across six domains and three categories.

Each domain is a package: its code, one module per section (the section's implementations and
the helpers only it uses), ``facts.py`` (what several sections share) and ``state.py`` (its start
state, where it has one), and its data (``tools.json``: kinds, tool specs, alternative groups;
``seeds.json``: seed tables). What several domains share is a corpus module (``timezones.py``);
no domain imports another's private helper. ``load_corpus()`` imports every domain once, reads
the data files and returns a :class:`Corpus` with the tool specs, the alternative groups, the
kinds vocabulary and the initial world state.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from replan.core.tools import ToolSpec
from replan.env.corpus.data import DomainFile, kind_entry, read_json
from replan.env.corpus.kinds import KINDS, Kind, register_kind
from replan.env.corpus.registry import (
    AlternativeGroup,
    StateBuilder,
    implementations,
    state_builders,
)
from replan.env.world import World, WorldState

#: Load order, which is the order of ``Corpus.tools`` (the suite generator walks it).
DOMAINS = ("financial", "travel", "shopping", "office", "general", "iot", "groups")


@dataclass(frozen=True)
class Corpus:
    tools: dict[str, ToolSpec]
    groups: dict[str, AlternativeGroup]
    kinds: dict[str, Kind]
    state_builders: tuple[StateBuilder, ...]

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
    """The corpus: the shared kinds, then each domain's data paired with its implementations."""
    for entry in read_json(__name__, "kinds.json")["kinds"]:
        register_kind(kind_entry(entry, f"{__name__}/kinds.json"))
    files = []
    for name in DOMAINS:
        package = f"{__name__}.{name}"
        importlib.import_module(package)  # registers implementations and start states
        files.append(DomainFile.load(package))
    impls = implementations()
    tools: dict[str, ToolSpec] = {}
    groups: dict[str, AlternativeGroup] = {}
    for f in files:
        for k in f.kinds:
            register_kind(k)
        for entry in f.tools:
            name = entry["name"]
            if name in tools:
                raise ValueError(f"corpus tool {name!r} is defined twice")
            if name not in impls:
                raise ValueError(f"corpus tool {name!r} ({f.package}) has no implementation")
            tools[name] = f.spec(entry, impls[name])
        for g in f.groups:
            if g.id in groups:
                raise ValueError(f"alternative group {g.id!r} is declared twice")
            groups[g.id] = g
    unspecified = sorted(set(impls) - set(tools))
    if unspecified:
        raise ValueError(f"implementations without a spec in any tools.json: {unspecified}")
    for gid, grp in groups.items():
        for name in grp.tools:
            if name not in tools:
                raise ValueError(f"group {gid!r} names unknown tool {name!r}")
            if tools[name].group != gid:
                raise ValueError(
                    f"tool {name!r} is in group {gid!r} but declares group {tools[name].group!r}"
                )
    return Corpus(tools=tools, groups=groups, kinds=dict(KINDS), state_builders=state_builders())


__all__ = ["AlternativeGroup", "Corpus", "load_corpus"]
