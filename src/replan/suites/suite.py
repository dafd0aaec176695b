"""The :class:`Suite` object and the suite registry.

A suite is one file: its loader, decorated with :func:`suite`, says everything the rest of replan
needs (``replan run``, ``replan suites list|stats``, :func:`replan.load_suite` and the runner
dispatch on these fields, never on a suite's name)::

    @suite("my-suite", description="...", default_designs=("react",))
    def load(*, limit: int | None = None, seed: int = 0) -> list[Task]:
        ...

The loader's keyword parameters are the suite's options; one without a default is required.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from replan.core.registry import Registry
from replan.core.task import Task

#: where a suite's instances start: a fresh run, or mid-run at the replanner (ParaRecover)
Start = Literal["fresh", "replan_point"]

#: ``stratifier(tasks, per_cell)``: the default subset of a run without ``--limit``
Stratifier = Callable[[Sequence[Task], int], list[Task]]
#: ``subset_options(levels, modes, limit, per_cell)``: load options that generate only what a
#: run with that filter, limit and subset size needs
SubsetOptions = Callable[[Sequence[str], Sequence[str], int | None, int], dict[str, Any]]
#: ``progress(label, done, total)``: how far a statistics computation is
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class StatsTable:
    """One table of ``replan suites stats`` (plain data; the CLI draws it)."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Suite:
    """A benchmark suite as the CLI, the runner and the Python API see it.

    ``load(**options)`` returns the task instances; ``options`` are its keyword parameters and
    ``requires`` those without a default (``requires_help`` says where to get them).
    ``start`` is ``"replan_point"`` when instances start mid-run at the replanner (only designs
    with a replanner run them). ``default_designs`` run when ``--agents`` is not given (empty:
    every registered design). ``levels`` are the ``--filter`` levels beside the modes.
    ``stratifier`` picks the default subset (``--per-cell`` tasks per cell) and
    ``subset_options`` narrows what ``load`` generates for it. ``stats(progress=..., **opts)``
    returns the ``replan suites stats --json`` object and ``stats_view`` turns it into tables
    and lines for the terminal. ``budgets`` are the agent budgets of the suite's protocol
    (``replan.nodes.config.AgentConfig`` fields), under those a run gives itself: ParaRecover's
    one replan from the replan point is ``{"max_replans": 1}``.
    """

    name: str
    description: str
    load: Callable[..., list[Task]]
    options: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    requires_help: str = ""
    start: Start = "fresh"
    default_designs: tuple[str, ...] = ()
    levels: tuple[str, ...] = ()
    stratifier: Stratifier | None = None
    subset_options: SubsetOptions | None = None
    stats: Callable[..., dict[str, Any]] | None = None
    stats_view: Callable[[dict[str, Any]], list[StatsTable | str]] | None = None
    stats_options: tuple[str, ...] = field(default=())
    budgets: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        """The ``replan suites list --json`` row."""
        return {
            "name": self.name,
            "description": self.description,
            "options": list(self.options),
            "requires": self.requires[0] if self.requires else None,
            "start": self.start,
            "designs": list(self.default_designs),
        }


#: every suite, built-in (``replan.suites``' modules) and plugged in
SUITES: Registry[Suite] = Registry("suite", "replan.suites", first=("toolmaze",))


def suite(
    name: str,
    *,
    description: str,
    requires_help: str = "",
    start: Start = "fresh",
    default_designs: Sequence[str] = (),
    levels: Sequence[str] = (),
    stratifier: Stratifier | None = None,
    subset_options: SubsetOptions | None = None,
    stats: Callable[..., dict[str, Any]] | None = None,
    stats_view: Callable[[dict[str, Any]], list[StatsTable | str]] | None = None,
    budgets: Mapping[str, Any] | None = None,
) -> Callable[[Callable[..., list[Task]]], Callable[..., list[Task]]]:
    """Register the decorated loader as suite ``name`` (see :class:`Suite` for the fields)."""

    def deco(load: Callable[..., list[Task]]) -> Callable[..., list[Task]]:
        params = [
            p
            for p in inspect.signature(load).parameters.values()
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        stats_params = inspect.signature(stats).parameters if stats else {}
        SUITES.register(
            name,
            Suite(
                name=name,
                description=description,
                load=load,
                options=tuple(p.name for p in params),
                requires=tuple(p.name for p in params if p.default is p.empty),
                requires_help=requires_help,
                start=start,
                default_designs=tuple(default_designs),
                levels=tuple(levels),
                stratifier=stratifier,
                subset_options=subset_options,
                stats=stats,
                stats_view=stats_view,
                stats_options=tuple(k for k in stats_params if k != "progress"),
                budgets=dict(budgets or {}),
            ),
            module=load.__module__,
        )
        return load

    return deco


def get_suite(name: str) -> Suite:
    """The suite named ``name``; an unknown name is a ``ValueError`` naming the known ones."""
    found = SUITES.find(name)
    if found is None:
        raise ValueError(f"unknown suite {name!r}; known suites: {sorted(SUITES.names())}")
    return found


def csv_option(values: Iterable[str] | str | None) -> list[str] | None:
    """An option given as a list or as ``"a,b"`` text, stripped; ``None`` stays ``None``."""
    if values is None:
        return None
    if isinstance(values, str):
        values = [v for v in values.split(",") if v.strip()]
    return [v.strip() for v in values]


def per_cell_subset(tasks: Sequence[Task], per_cell: int) -> list[Task]:
    """The first ``per_cell`` tasks of each level × mode cell, cells in sorted order (a
    :data:`Stratifier` for suites whose figures average over cells)."""
    cells: dict[tuple[str | None, str], list[Task]] = {}
    for t in tasks:
        cells.setdefault((t.level, t.mode), []).append(t)
    return [t for cell in sorted(cells, key=str) for t in cells[cell][:per_cell]]


__all__ = [
    "SUITES",
    "StatsTable",
    "Suite",
    "csv_option",
    "get_suite",
    "per_cell_subset",
    "suite",
]
