"""The metric registry: a metric is per-episode feedback plus a summary over records.

A metric family is one file in this package (or a plugin, see :mod:`replan.core.registry`)::

    @metric("mine", feedback=mine_feedback, summarize=summarize_mine, load=MineRecord.from_dict,
            keys={"mine.score": "what it measures"}, columns=(Column("mine", "mine.mean"),))
    def mine_record(ctx: EpisodeContext) -> MineRecord:
        ...

Scoring an episode (:func:`replan.evaluators.score_one`) computes every registered metric's
record from one :class:`EpisodeContext` (the episode replayed once); its feedback is what the
store, LangSmith and ``replan score`` receive; ``summarize(records, seed=, n_boot=, failures=)``
gives the aggregates (``{key: estimate}``); the LangSmith evaluators and the run table's columns
are generated from the registry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from replan.core.registry import Registry
from replan.core.task import Task
from replan.core.trace import Episode, Verdict
from replan.evaluators.stats import Feedback


@dataclass(frozen=True)
class EpisodeContext:
    """What a metric's record is computed from: the episode, its task (if known), its success
    as the checker decides it, the verdicts of its calls (replayed from the task's initial state,
    or as recorded: ``source``) and an optional LLM judge."""

    episode: Episode
    task: Task | None
    success: bool | None
    verdicts: Sequence[Verdict]
    source: str
    judge: Any = None


#: a column value meaning "not defined for these runs": the row leaves the column out
OMIT = object()


@dataclass(frozen=True)
class UnitView:
    """What a column is computed from: one unit's aggregates (``score_records``), its
    non-failed scores, its infrastructure failures and the interval settings."""

    aggregate: Mapping[str, Any]
    scores: Sequence[Any]
    failures: int
    seed: int
    n_boot: int


@dataclass(frozen=True)
class Column:
    """A column of the run table and the report's summary: its ``label``, its ``value`` for a
    unit (an estimate dict, ``None`` when undefined, or :data:`OMIT` when the metric does not
    apply to these runs), a ``description`` (the report's tooltip), whether lower is better,
    whether it is shown only when some row has a value (``optional``), the report's digits and
    ``note(estimate, row)`` (the report cell's small print)."""

    label: str
    value: Callable[[UnitView], Any]
    description: str = ""
    lower_is_better: bool = False
    optional: bool = False
    digits: int = 2
    note: Callable[[Mapping[str, Any], Mapping[str, Any]], str] | None = None


@dataclass(frozen=True)
class Paired:
    """A paired comparison of two agents on the same (task, seed) pairs (:func:`compare`, the
    report's deltas): its ``key`` in the result, its ``words`` in the report, the per-run
    ``value`` read from the family's record (``None``: not defined for this run), the ``test``
    (``"mcnemar"`` for a yes/no value, ``"bootstrap"`` for a number; ``boot_key`` seeds its
    resampling) and whether lower is better."""

    key: str
    words: str
    value: Callable[[Any], Any]
    test: Literal["mcnemar", "bootstrap"] = "bootstrap"
    boot_key: str = ""
    lower_is_better: bool = False


@dataclass(frozen=True)
class Metric:
    """A metric family: its ``name`` (the prefix of its feedback keys), the per-episode
    ``record``, the ``feedback`` of a record, the ``summarize`` of many records, ``load`` /
    ``dump`` of a record as JSON data (stored with the episode), the documented feedback
    ``keys``, the run-table ``columns``, the :class:`EpisodeScore` attribute it is read as, its
    ``order`` among the families and its ``paired`` comparisons (feedback, evaluators and columns follow it; ties keep the
    registration order)."""

    name: str
    record: Callable[[EpisodeContext], Any]
    feedback: Callable[[Any], list[Feedback]]
    summarize: Callable[..., dict[str, Any]]
    load: Callable[[Mapping[str, Any]], Any]
    dump: Callable[[Any], dict[str, Any]] = dataclasses.asdict
    keys: Mapping[str, str] = field(default_factory=dict)
    columns: tuple[Column, ...] = ()
    attribute: str = ""
    order: int = 100
    paired: tuple[Paired, ...] = ()
    #: ``summarize`` also receives ``failed=``: the records of the runs that failed for the
    #: infrastructure (to count each as a failed run where it belongs, e.g. in its cell)
    failed_records: bool = False


#: every metric family, built-in (``replan.evaluators``' modules) and plugged in
METRICS: Registry[Metric] = Registry("metric", "replan.evaluators")


def metric(
    name: str,
    *,
    feedback: Callable[[Any], list[Feedback]],
    summarize: Callable[..., dict[str, Any]],
    load: Callable[[Mapping[str, Any]], Any],
    dump: Callable[[Any], dict[str, Any]] = dataclasses.asdict,
    keys: Mapping[str, str] | None = None,
    columns: Sequence[Column] = (),
    attribute: str = "",
    order: int = 100,
    paired: Sequence[Paired] = (),
    failed_records: bool = False,
) -> Callable[[Callable[[EpisodeContext], Any]], Callable[[EpisodeContext], Any]]:
    """Register the decorated record function as metric family ``name`` (see :class:`Metric`)."""

    def deco(record: Callable[[EpisodeContext], Any]) -> Callable[[EpisodeContext], Any]:
        METRICS.register(
            name,
            Metric(
                name,
                record,
                feedback,
                summarize,
                load,
                dump,
                dict(keys or {}),
                tuple(columns),
                attribute or name,
                order,
                tuple(paired),
                failed_records,
            ),
            module=record.__module__,
        )
        return record

    return deco


def metrics() -> list[Metric]:
    """Every registered metric family, by ``order``, then in registration order."""
    return sorted((m for _, m in METRICS.items()), key=lambda m: m.order)


def columns() -> list[Column]:
    """Every registered column: the always-shown ones, then the optional ones, each group in
    registration order (the run table's and the report's order)."""
    cols = [c for m in metrics() for c in m.columns]
    return [c for c in cols if not c.optional] + [c for c in cols if c.optional]


def paired_metrics() -> list[tuple[Metric, Paired]]:
    """Every registered paired comparison with its family, families in order."""
    return [(m, p) for m in metrics() for p in m.paired]


def n_note(est: Mapping[str, Any] | None, row: Mapping[str, Any]) -> str:
    """A report note giving an estimate's sample size (``n = 12``), none when undefined."""
    return f"n = {est.get('n')}" if est and est.get("value") is not None else ""


__all__ = [
    "METRICS",
    "OMIT",
    "Column",
    "EpisodeContext",
    "Metric",
    "Paired",
    "UnitView",
    "columns",
    "metric",
    "metrics",
    "n_note",
    "paired_metrics",
]
