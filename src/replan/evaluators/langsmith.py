"""Every replan metric as a LangSmith evaluator, every aggregate as a summary evaluator.

Data contract: the target's outputs carry the Episode (key ``"episode"``: an Episode, its dict
or its JSON text); the example's inputs or reference outputs carry the Task (key ``"task"``,
same forms; optional — without it the recorded verdicts are used). Evaluators take
``(inputs, outputs, reference_outputs)`` and return ``{"results": [{"key", "score",
"comment"}, ...]}``, so they run in ``langsmith.evaluate(...)`` online or fully offline
(``upload_results=False``).

The evaluators are generated from the metric registry (:mod:`replan.evaluators.metric`): one
per-run and one summary evaluator per family (:func:`evaluators`, :func:`summary_evaluators`;
``EVALUATORS`` / ``SUMMARY_EVALUATORS`` are the same lists), so a registered family is
evaluated like the built-in ones. Stable feedback keys of the built-in families
(:data:`FEEDBACK_KEYS` describes each):

per run   ``prefix.fed`` ``prefix.clean`` ``prefix.calls`` ``prefix.auc``
          ``prefix.first_error_type`` (a ``value``: the ParaRecover type) ·
          ``toolmaze.success`` ``toolmaze.exposed`` ``toolmaze.recovered`` ``toolmaze.c_rec``
          ``toolmaze.sentinel_propagated`` ·
          ``sde.S5`` ``sde.E5`` ``sde.tool_use_efficiency`` ``sde.invalid_dags``
          ``sde.auto.{S2,S3,S4,E1,E3,D4}`` · with a judge ``sde.{S1..S4,D1..D5,E1..E4}``
          ``sde.SI`` ``sde.DR`` ``sde.ES`` ``sde.Avg``
summary   ``prefix.ter`` ``prefix.auc_pec`` ``prefix.rr`` ``prefix.success`` ``prefix.pec.<k>``
          ``prefix.cpec.<k>`` · ``toolmaze.tsr`` ``toolmaze.tsr.<mode>`` ``toolmaze.prr.<mode>``
          ``toolmaze.rc.<mode>`` ``toolmaze.avg`` · ``sde.pass@1`` ``sde.invalid_dag_rate``
          ``sde.E5`` ``sde.tool_use_efficiency`` ``sde.auto.<item>`` (+ judged items and
          dimensions when a judge ran)

A summary score's comment carries its 95% interval and sample size.
:func:`send_feedback` attaches per-run feedback to a run already in LangSmith (one traced
outside ``replan run``); ``replan run --langsmith`` does not use it: after the local results it
runs ``langsmith.evaluate`` with the evaluators above over the stored episodes
(:mod:`replan.runner.langsmith`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from replan.core.task import Task
from replan.core.trace import Episode
from replan.evaluators import EpisodeScore, score_one, score_records
from replan.evaluators.metric import METRICS, Metric, metrics
from replan.evaluators.sde import SDEJudge, sde_feedback
from replan.evaluators.stats import N_BOOT, Feedback


def _load(value: Any, cls: type, what: str) -> Any:
    if value is None or isinstance(value, cls):
        return value
    try:
        if isinstance(value, (str, bytes)):
            return cls.model_validate_json(value)  # type: ignore[attr-defined]
        return cls.model_validate(value)  # type: ignore[attr-defined]
    except Exception as exc:
        raise ValueError(f"{what} is not a valid {cls.__name__}: {exc}") from exc


def episode_of(outputs: Mapping[str, Any] | None) -> Episode:
    """The Episode in a target's outputs (key ``"episode"``)."""
    if not outputs or "episode" not in outputs:
        raise ValueError("the target's outputs have no 'episode' key")
    return _load(outputs["episode"], Episode, "outputs['episode']")


def task_of(
    inputs: Mapping[str, Any] | None, reference_outputs: Mapping[str, Any] | None = None
) -> Task | None:
    """The Task in the example's inputs or reference outputs (key ``"task"``), if any."""
    for where, d in (("inputs", inputs), ("reference_outputs", reference_outputs)):
        if d and d.get("task") is not None:
            return _load(d["task"], Task, f"{where}['task']")
    return None


def _results(feedback: Sequence[Feedback]) -> dict[str, list[dict[str, Any]]]:
    return {"results": [f.to_dict() for f in feedback]}


def _scored(inputs: Any, outputs: Any, reference_outputs: Any, judge: Any = None) -> Any:
    """The run's score: rebuilt from the records a target hands over (``outputs["records"]``,
    what the results store holds for the episode, so an upload scores nothing again), else
    scored here."""
    episode, task = episode_of(outputs), task_of(inputs, reference_outputs)
    records = outputs.get("records") if isinstance(outputs, Mapping) else None
    if judge is None and isinstance(records, Mapping):
        try:
            return EpisodeScore.from_records(episode, task, records)
        except (KeyError, TypeError, ValueError):
            pass  # records of other families (another replan, a plugin): score the run
    return score_one(episode, task, judge=judge)


def run_evaluator(m: Metric) -> Callable[[dict, dict, dict], dict[str, list[dict[str, Any]]]]:
    """The LangSmith evaluator of metric family ``m``: its feedback on one run
    (``<name>_evaluator``; the SDE one without a judge)."""

    def evaluator(
        inputs: dict, outputs: dict, reference_outputs: dict
    ) -> dict[str, list[dict[str, Any]]]:
        scored = _scored(inputs, outputs, reference_outputs)
        return _results(m.feedback(scored.by_metric[m.name]))

    evaluator.__name__ = evaluator.__qualname__ = f"{m.name}_evaluator"
    evaluator.__doc__ = f"``{m.name}.*`` feedback of one run."
    return evaluator


def make_sde_judge_evaluator(
    model: Any, *, attempts: int = 3, wait_s: float = 0.5
) -> Callable[[dict, dict, dict], dict[str, list[dict[str, Any]]]]:
    """An evaluator adding the 13 LLM-judged SDE items (and the dimensions) with ``model``."""

    judge = SDEJudge(model, attempts=attempts, wait_s=wait_s)

    def sde_judge_evaluator(
        inputs: dict, outputs: dict, reference_outputs: dict
    ) -> dict[str, list[dict[str, Any]]]:
        rec = _scored(inputs, outputs, reference_outputs, judge=judge).sde
        return _results([f for f in sde_feedback(rec) if not f.key.startswith("sde.auto.")])

    return sde_judge_evaluator


# -- summary evaluators ------------------------------------------------------------------------
def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


def _summary_result(key: str, est: Mapping[str, Any]) -> dict[str, Any] | None:
    if not isinstance(est, Mapping) or est.get("value") is None or "method" not in est:
        return None  # undefined here, or a count rather than an estimate
    extra = "".join(
        f", {k}={est[k]}" for k in ("eligible", "exposed", "missing", "rc_unknown") if k in est
    )
    return {
        "key": key,
        "score": float(est["value"]),
        "comment": f"95% CI [{_fmt(est.get('low'))}, {_fmt(est.get('high'))}] "
        f"({est.get('method', '')}, n={est.get('n')}{extra})",
    }


def _aggregate(
    inputs: Sequence[dict], outputs: Sequence[dict], reference_outputs: Sequence[dict]
) -> dict[str, Any]:
    scores = [_scored(i, o, r) for i, o, r in zip(inputs, outputs, reference_outputs, strict=True)]
    return score_records(scores, n_boot=N_BOOT)


def _family(agg: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    out = []
    for key, est in agg.items():
        if not key.startswith(prefix):
            continue
        if key == "prefix.pec":
            for row in est:
                for name in ("pec", "cpec"):
                    r = _summary_result(f"prefix.{name}.{row['k']}", row[name])
                    if r:
                        out.append(r)
            continue
        r = _summary_result(key, est)
        if r:
            out.append(r)
    return out


def summary_evaluator(m: Metric) -> Callable[[list, list, list], dict[str, list[dict[str, Any]]]]:
    """The LangSmith summary evaluator of metric family ``m``: every aggregate whose key starts
    with ``<name>.``, with its interval in the comment (``<name>_summary``)."""

    def summary(
        inputs: list[dict], outputs: list[dict], reference_outputs: list[dict]
    ) -> dict[str, list[dict[str, Any]]]:
        return {"results": _family(_aggregate(inputs, outputs, reference_outputs), f"{m.name}.")}

    summary.__name__ = summary.__qualname__ = f"{m.name}_summary"
    summary.__doc__ = f"The ``{m.name}.*`` aggregates over the runs, with their 95% intervals."
    return summary


def evaluators() -> list[Callable[..., Any]]:
    """One per-run evaluator per registered metric family (plugins included)."""
    return [run_evaluator(m) for m in metrics()]


def summary_evaluators() -> list[Callable[..., Any]]:
    """One summary evaluator per registered metric family (plugins included)."""
    return [summary_evaluator(m) for m in metrics()]


def feedback_keys() -> dict[str, str]:
    """Every registered family's documented feedback keys and what each means."""
    return {k: v for m in metrics() for k, v in m.keys.items()}


def __getattr__(name: str) -> Any:
    """``EVALUATORS``, ``SUMMARY_EVALUATORS``, ``FEEDBACK_KEYS`` and ``<family>_evaluator`` /
    ``<family>_summary`` (``prefix_evaluator``, ``toolmaze_summary``, ...), generated from the
    metric registry when asked."""
    if name == "EVALUATORS":
        return evaluators()
    if name == "SUMMARY_EVALUATORS":
        return summary_evaluators()
    if name == "FEEDBACK_KEYS":
        return feedback_keys()
    for suffix, make in (("_evaluator", run_evaluator), ("_summary", summary_evaluator)):
        family = METRICS.find(name.removesuffix(suffix)) if name.endswith(suffix) else None
        if family is not None:
            return make(family)
    raise AttributeError(f"module 'replan.evaluators.langsmith' has no attribute {name!r}")


# -- posting feedback --------------------------------------------------------------------------
def send_feedback(
    client: Any,
    run_id: Any,
    feedback: Sequence[Feedback],
    *,
    trace_id: Any = None,
    session_id: Any = None,
) -> list[str]:
    """Attach each :class:`Feedback` to the LangSmith run ``run_id`` (``client.create_feedback``,
    one item each); returns the feedback ids.

    ``session_id`` is the run's project: LangSmith needs it for run-level feedback (the client
    deprecates leaving it out). With ``trace_id`` (the run's root) the client may batch the
    items and send them in the background, so they can arrive after this returns; without it
    each item is its own request.
    """
    ids = []
    for f in feedback:
        made = client.create_feedback(
            run_id=run_id,
            trace_id=trace_id,
            key=f.key,
            score=f.score,
            value=f.value,
            comment=f.comment or None,
            session_id=session_id,
        )
        ids.append(str(made.id))
    return ids


def example_payload(episode: Episode, task: Task | None = None) -> dict[str, Any]:
    """``{"inputs": {"task": ...}, "outputs": {"episode": ...}}`` as JSON-ready dicts."""
    return {
        "inputs": {"task": json.loads(task.model_dump_json())} if task is not None else {},
        "outputs": {"episode": json.loads(episode.to_json())},
    }
