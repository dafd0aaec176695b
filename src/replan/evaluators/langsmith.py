"""Every replan metric as a LangSmith evaluator, every aggregate as a summary evaluator.

Data contract: the target's outputs carry the Episode (key ``"episode"``: an Episode, its dict
or its JSON text); the example's inputs or reference outputs carry the Task (key ``"task"``,
same forms; optional — without it the recorded verdicts are used). Evaluators take
``(inputs, outputs, reference_outputs)`` and return ``{"results": [{"key", "score",
"comment"}, ...]}``, so they run in ``langsmith.evaluate(...)`` online or fully offline
(``upload_results=False``).

Stable feedback keys (:data:`FEEDBACK_KEYS` describes each):

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
from replan.evaluators import score_one, score_records
from replan.evaluators.perturbation import toolmaze_feedback
from replan.evaluators.prefix import prefix_feedback
from replan.evaluators.sde import SDEJudge, sde_feedback
from replan.evaluators.stats import N_BOOT, Feedback

FEEDBACK_KEYS: dict[str, str] = {
    "prefix.fed": "first error depth: 1-based index of the first non-executable call (none if clean)",
    "prefix.clean": "1 if every call was executable in the state the earlier calls produced",
    "prefix.calls": "number of tool calls in the run",
    "prefix.auc": "(FED - 1)/n, 1 for a clean run: this run's AUC-PEC term",
    "prefix.first_error_type": "ParaRecover error type of the first non-executable call",
    "toolmaze.success": "task success (the task's checker)",
    "toolmaze.exposed": "1 if the injected fault reached the agent",
    "toolmaze.recovered": "1 if the agent recovered from the fault (exposed runs only)",
    "toolmaze.c_rec": "recovery cost 1 - c*/max(c, c*)·succ (exposed runs only)",
    "toolmaze.sentinel_propagated": "1 if a corrupted (sentinel) value reached an accepted later "
    "call or the answer",
    "sde.S5": "the scored replan parses into a valid DAG",
    "sde.E5": "S·min(1, G/T): problem-solving efficacy in rounds",
    "sde.tool_use_efficiency": "tool-use efficiency, replan's own formula (seed 001 names it, "
    "does not define it): S·min(1, gt calls / actual calls)",
    "sde.invalid_dags": "replanner outputs of this run that fail S5",
    "sde.auto.<item>": "deterministic estimate of an SDE item (S2, S3, S4, E1, E3, D4)",
    "sde.<item>": "LLM-judged SDE item S1-S4, D1-D5, E1-E4 (1 / 0.5 / 0; missing if the judge failed)",
    "sde.SI|DR|ES|Avg": "SDE dimensions (mean of items x 100) and their mean",
    "prefix.ter": "share of runs with no invalid call",
    "prefix.auc_pec": "mean of (FED - 1)/n, 1 for clean runs",
    "prefix.rr": "success rate among runs with an invalid call (comment: eligible count)",
    "prefix.success": "success rate",
    "prefix.pec.<k>": "share of all runs valid through call k and of length >= k",
    "prefix.cpec.<k>": "the same among runs of length >= k",
    "toolmaze.tsr[.<mode>]": "task success rate (per mode: macro over C1-C4; overall: over cells)",
    "toolmaze.prr[.<mode>]": "perturbation recovery rate among exposed runs (macro over cells)",
    "toolmaze.rc[.<mode>]": "mean of pert·C_rec (per C x P cell, then macro over cells)",
    "toolmaze.avg": "(mean TSR + mean PRR + 1 - mean RC) / 3 over the C x P cells",
    "sde.pass@1": "success rate",
    "sde.invalid_dag_rate": "share of replanner outputs failing S5",
}


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
    return score_one(episode_of(outputs), task_of(inputs, reference_outputs), judge=judge)


def prefix_evaluator(
    inputs: dict, outputs: dict, reference_outputs: dict
) -> dict[str, list[dict[str, Any]]]:
    """``prefix.*`` feedback of one run (replayed against the task's world)."""

    return _results(prefix_feedback(_scored(inputs, outputs, reference_outputs).prefix))


def toolmaze_evaluator(
    inputs: dict, outputs: dict, reference_outputs: dict
) -> dict[str, list[dict[str, Any]]]:
    """``toolmaze.*`` feedback of one run."""

    return _results(toolmaze_feedback(_scored(inputs, outputs, reference_outputs).recovery))


def sde_evaluator(
    inputs: dict, outputs: dict, reference_outputs: dict
) -> dict[str, list[dict[str, Any]]]:
    """``sde.*`` script and sde-auto feedback of one run (no judge)."""

    return _results(sde_feedback(_scored(inputs, outputs, reference_outputs).sde))


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


EVALUATORS = [prefix_evaluator, toolmaze_evaluator, sde_evaluator]


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
    scores = [
        score_one(episode_of(o), task_of(i, r))
        for i, o, r in zip(inputs, outputs, reference_outputs, strict=True)
    ]
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


def prefix_summary(
    inputs: list[dict], outputs: list[dict], reference_outputs: list[dict]
) -> dict[str, list[dict[str, Any]]]:
    """TER, AUC-PEC, RR (with eligible count), success, PEC(k) and cPEC(k)."""
    return {"results": _family(_aggregate(inputs, outputs, reference_outputs), "prefix.")}


def toolmaze_summary(
    inputs: list[dict], outputs: list[dict], reference_outputs: list[dict]
) -> dict[str, list[dict[str, Any]]]:
    """TSR overall and per mode, PRR and RC per perturbed mode, and Avg."""
    return {"results": _family(_aggregate(inputs, outputs, reference_outputs), "toolmaze.")}


def sde_summary(
    inputs: list[dict], outputs: list[dict], reference_outputs: list[dict]
) -> dict[str, list[dict[str, Any]]]:
    """Pass@1, invalid-DAG rate, E5, tool-use efficiency and the sde-auto item means."""
    return {"results": _family(_aggregate(inputs, outputs, reference_outputs), "sde.")}


SUMMARY_EVALUATORS = [prefix_summary, toolmaze_summary, sde_summary]


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
