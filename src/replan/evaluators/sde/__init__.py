"""ParaRecover's SDE rubric (seeds 000/001, DESIGN §5) and its judge-free execution metrics.

The unit of the rubric is one **replan**: the replanner's thought and updated DAG, given the
previous plan and the tool results of the last wave. In an Episode the replan scored is the
first replanner :class:`~replan.core.trace.PlanVersion` written after the first failing step
(a call that was not ``ok`` or met an injected fault); with no failure, the first replanner
output (pass ``plan_index`` to score another). Episodes without replanner output get only the
execution metrics.

*Which steps a replan saw.* Rounds are wave indices. If every replanner output has a round
greater than the first wave's, a plan's round counts the waves run before it (the steps it saw
are those with a smaller round); otherwise a replan's round is the wave it follows (it saw the
steps with round ≤ its own). The *last wave* is the latest round among the steps it saw.

Items and how each is decided:

- **S5** (script): the replan parses with :meth:`Plan.parse` — JSON found, unique ids, deps
  exist, acyclic, root and response present. 1 or 0.
- **E5** (script): S·min(1, G/T) with G = ``Task.optimal_rounds`` (for an episode scored without
  its task, ``round_gt`` in its metadata), T = rounds already executed in
  the instance (``rounds_executed`` in the episode's metadata, else ``Task.replan_point``,
  default 0; +1 when ``Task.rounds_include_response``) + the
  episode's rounds, S = success. A replan that fails S5, a run that hits a budget or ends any way
  other than ``answered``, or an unsuccessful run scores **0** (the upstream code is
  inconsistent; we are not). A replan that *gives up* (it drops a pending call node of the previous
  plan without a replacement, whatever its words; :func:`replan.env.checker.abandoned_calls`)
  ends ``gave_up``: E5 presupposes a
  finished, valid recovery, so it scores 0 and the run does not count for Pass@1. T = 0 with
  success reads as ratio 1. Undefined without G.
- **S1–S4, D1–D5, E1–E4** (LLM judge, :class:`SDEJudge`): three prompts (one per dimension
  group) with the rubric's 1 / 0.5 / 0 anchors; the model answers through
  ``with_structured_output`` into pydantic models, never scraped text. A reply that fails
  validation (or a model error) is retried (tenacity); after the last attempt the group's
  items are recorded as **missing**, never as 0.
- **sde-auto** (deterministic, judge-free estimates of what a program can decide):
  S2 (dependency findings of the static verifier on pending nodes: error → 0, warnings only →
  0.5), S3 (tool/parameter findings on pending nodes → 0), S4 (node statuses against what ran:
  a node marked done that did not run cleanly, or a done response with calls pending → 0; a
  node that ran cleanly left pending with the same call → 0.5; a node with no step that the
  previous plan already marked done — history handed to the replanner, as in a ParaRecover
  instance — counts as run), E1 (plan edit distance: edits
  outside the faulty nodes, their descendants, the response and new nodes → 0.5 when at most
  max(1, 25% of the previous call nodes), else 0; a faulty call kept unchanged → 0), E3 (goal
  coverage: share of the gold plan's tools — or, without one, the first plan's — that the
  updated plan covers, directly or by an alternative of the same group, on a path to the
  response or already run: all → 1, at least half → 0.5), D4 (nodes the thought names, by id
  or tool, against the true descendants of the failed node in the previous plan: one named →
  1; impact acknowledged in words only → 0.5).

Aggregation: SI / DR / ES = mean of the five items of the dimension × 100 and Avg = their mean.
**Missing items are left out of the mean** (never counted as 0) and counted in
``missing_items``; a dimension with no item is undefined, and Avg is the mean of the defined
dimensions. Dimensions need the judge: sde-auto items are reported item by item
(``sde.auto.S2`` ...) and, when both ran, their agreement with the judge (EMA, MAE).

Execution metrics: **Pass@1** = success rate; **invalid-DAG rate** = share of replanner outputs
that fail S5 (pooled over episodes; an infrastructure failure — model error, crash, timeout — is
never a replanner output, and :func:`replan.evaluators.score_records` leaves such runs out of
every process metric while counting them as failed runs in Pass@1); **tool-use efficiency** = S·min(1, gt calls / actual calls),
gt = ``Task.min_calls`` (c*; an episode scored without its task may carry it as
``funcall_times_gt`` in its metadata), actual = calls already
executed in the instance (``calls_executed`` in the episode's metadata, else
``Task.replan_point``, default 0) + the episode's calls.

Judge calibration (:func:`calibrate`, :func:`load_labels`): EMA and MAE per item against human
labels, with the human and model means (the shape of ParaRecover's Table 5); the ``overall`` row
is the mean of the per-item values.

The package along those seams: ``items`` (items, dimensions, verifier codes), ``context`` (the
replan scored and what it saw), ``script`` (E5, tool-use efficiency), ``auto`` (sde-auto),
``judge`` (the LLM judge; the rubric's prose is the data file ``rubric.toml``), ``record``
(per-run record, feedback, aggregation), ``calibration`` (against human labels).
"""

from __future__ import annotations

from replan.evaluators.sde.auto import (
    auto_d4,
    auto_e1,
    auto_e3,
    auto_s2,
    auto_s3,
    auto_s4,
    named_nodes,
    plan_edits,
    sde_auto,
)
from replan.evaluators.sde.calibration import (
    calibrate,
    judge_scores,
    load_labels,
)
from replan.evaluators.sde.context import (
    ReplanContext,
    is_replanner_output,
    parse_version,
    replan_context,
    select_replan,
    task_tools,
)
from replan.evaluators.sde.items import (
    ALLOWED,
    AUTO_ITEMS,
    D_ITEMS,
    DIMENSIONS,
    E_ITEMS,
    ITEMS,
    JUDGED_ITEMS,
    S2_CODES,
    S3_CODES,
    S_ITEMS,
    SCRIPT_ITEMS,
)
from replan.evaluators.sde.judge import (
    RUBRIC,
    DiagnosticReasoning,
    EvolutionaryStrategy,
    ItemScore,
    JudgeReplyInvalid,
    JudgeResult,
    SDEJudge,
    StructuralIntegrity,
    judge_inputs,
    judge_messages,
    load_rubric,
)
from replan.evaluators.sde.record import (
    SDERecord,
    sde_feedback,
    sde_record,
    summarize_sde,
)
from replan.evaluators.sde.script import (
    e5_score,
    tool_use_efficiency,
)

__all__ = [
    "ALLOWED",
    "AUTO_ITEMS",
    "DIMENSIONS",
    "D_ITEMS",
    "E_ITEMS",
    "ITEMS",
    "JUDGED_ITEMS",
    "RUBRIC",
    "S2_CODES",
    "S3_CODES",
    "SCRIPT_ITEMS",
    "S_ITEMS",
    "DiagnosticReasoning",
    "EvolutionaryStrategy",
    "ItemScore",
    "JudgeReplyInvalid",
    "JudgeResult",
    "ReplanContext",
    "SDEJudge",
    "SDERecord",
    "StructuralIntegrity",
    "auto_d4",
    "auto_e1",
    "auto_e3",
    "auto_s2",
    "auto_s3",
    "auto_s4",
    "calibrate",
    "e5_score",
    "is_replanner_output",
    "judge_inputs",
    "judge_messages",
    "judge_scores",
    "load_labels",
    "load_rubric",
    "named_nodes",
    "parse_version",
    "plan_edits",
    "replan_context",
    "sde_auto",
    "sde_feedback",
    "sde_record",
    "select_replan",
    "summarize_sde",
    "task_tools",
    "tool_use_efficiency",
]
