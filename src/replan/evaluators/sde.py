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
- **E5** (script): S·min(1, G/T) with G = ``Task.optimal_rounds``, T = rounds already executed in
  the instance (``rounds_executed`` in the episode's or task's metadata, default 0) + the
  episode's rounds, S = success. A replan that fails S5, a run that hits a budget or ends any way
  other than ``answered``, or an unsuccessful run scores **0** (the upstream code is
  inconsistent; we are not). A replan that *gives up* (its response says the task cannot be
  completed; :func:`replan.graphs.replan_point.gives_up`) ends ``gave_up``: E5 presupposes a
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
gt = ``Task.min_calls`` (or ``funcall_times_gt`` in the task's metadata), actual = calls already
executed in the instance (``calls_executed`` metadata, default 0) + the episode's calls.

Judge calibration (:func:`calibrate`, :func:`load_labels`): EMA and MAE per item against human
labels, with the human and model means (the shape of ParaRecover's Table 5); the ``overall`` row
is the mean of the per-item values.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field, field_validator

from replan.core.plan import RESPONSE, ROOT, ParseFailure, Plan, PlanNode, iter_references
from replan.core.task import Task
from replan.core.taxonomy import VerdictCode
from replan.core.tools import ToolSpec, canonical_json
from replan.core.trace import FAILURE_END_REASONS, EndReason, Episode, PlanVersion, Step
from replan.core.wire import format_observation, render_tools
from replan.env.corpus import load_corpus
from replan.env.replay import replay
from replan.env.verifier import textual_references, verify
from replan.evaluators.prefix import task_world_or_none
from replan.evaluators.stats import (
    N_BOOT,
    Feedback,
    bootstrap_mean,
    estimate_from_samples,
    resample_sums,
    rng_for,
    wilson,
)

S_ITEMS = ("S1", "S2", "S3", "S4", "S5")
D_ITEMS = ("D1", "D2", "D3", "D4", "D5")
E_ITEMS = ("E1", "E2", "E3", "E4", "E5")
DIMENSIONS: dict[str, tuple[str, ...]] = {"SI": S_ITEMS, "DR": D_ITEMS, "ES": E_ITEMS}
ITEMS = S_ITEMS + D_ITEMS + E_ITEMS
SCRIPT_ITEMS = ("S5", "E5")
JUDGED_ITEMS = tuple(i for i in ITEMS if i not in SCRIPT_ITEMS)
AUTO_ITEMS = ("S2", "S3", "S4", "E1", "E3", "D4")
ALLOWED = (0.0, 0.5, 1.0)

#: verifier codes that are dependency problems (S2) and tool/parameter problems (S3)
S2_CODES = frozenset(
    {
        VerdictCode.DEPENDENCY_MISSING,
        VerdictCode.WRONG_DEPENDENCY,
        VerdictCode.UNNEEDED_DEPENDENCY,
        VerdictCode.PARALLEL_CONFLICT,
        VerdictCode.MISSING_CALL,
    }
)
S3_CODES = frozenset(
    {
        VerdictCode.UNKNOWN_TOOL,
        VerdictCode.MISSING_PARAM,
        VerdictCode.UNKNOWN_PARAM,
        VerdictCode.TYPE_MISMATCH,
        VerdictCode.INVALID_VALUE,
        VerdictCode.PRECONDITION_FAILED,
        VerdictCode.UNBOUND_REFERENCE,
        VerdictCode.WRONG_TOOL,
    }
)
_IMPACT_WORDS = re.compile(
    r"downstream|depend|affect|subsequent|later (?:step|node|call)s?|blocked|cascad|propagat|"
    r"下游|依赖|影响|后续",
    re.I,
)
_RESPONSE_WORDS = re.compile(r"\bresponse\b|final answer|\breply\b|回复|响应|最终", re.I)


# ----------------------------------------------------------------------------------------------
# the replan under evaluation
@dataclass
class ReplanContext:
    """Everything the rubric looks at for one replan of one episode."""

    episode: Episode
    task: Task | None
    target: PlanVersion
    previous: PlanVersion | None
    before: list[Step]  # steps that ran before the replan was written
    window: list[Step]  # the last wave before the replan
    parsed: Plan | ParseFailure
    prev_plan: Plan | None
    tools: dict[str, ToolSpec]

    @property
    def failed_steps(self) -> list[Step]:
        """Steps of the last wave that failed or met an injected fault."""
        return [s for s in self.window if not s.verdict.ok or s.perturbation is not None]

    @property
    def failed_nodes(self) -> set[str]:
        return {s.call.node_id for s in self.failed_steps if s.call.node_id}


def _parse_version(pv: PlanVersion) -> Plan | ParseFailure:
    return Plan.parse(pv.text if pv.text.strip() else pv.plan)


def _counts_waves_before(episode: Episode) -> bool:
    """True when a plan's round counts the waves run before it (see the module docstring)."""
    if not episode.steps:
        return True
    first_wave = min(s.round for s in episode.steps)
    return all(pv.round > first_wave for pv in episode.plans if pv.source == "replanner")


def _steps_before(episode: Episode, pv: PlanVersion, waves_before: bool) -> list[Step]:
    if waves_before:
        return [s for s in episode.steps if s.round < pv.round]
    return [s for s in episode.steps if s.round <= pv.round]


def _step_failed(s: Step) -> bool:
    return not s.verdict.ok or s.perturbation is not None


def is_replanner_output(episode: Episode, pv: PlanVersion) -> bool:
    """Whether ``pv`` is something the replanner wrote. In a run that failed for the
    infrastructure (model error, crash, timeout) an empty replanner version is the failure, not
    an output: it never counts as an invalid DAG."""
    if pv.source != "replanner":
        return False
    return bool(pv.text.strip()) or episode.end_reason.value not in FAILURE_END_REASONS


def select_replan(episode: Episode) -> int | None:
    """Index (in ``episode.plans``) of the replan to score: the first replanner output after
    the first failing step, else the first replanner output; ``None`` without one."""
    replans = [i for i, pv in enumerate(episode.plans) if is_replanner_output(episode, pv)]
    if not replans:
        return None
    waves_before = _counts_waves_before(episode)
    for i in replans:
        if any(_step_failed(s) for s in _steps_before(episode, episode.plans[i], waves_before)):
            return i
    return replans[0]


def task_tools(task: Task | None, episode: Episode | None = None) -> dict[str, ToolSpec]:
    """Tool specs for a task: corpus tools it names, plus a ParaRecover ``tool_list`` carried in
    ``task.metadata`` (``tool_list``). Without a task: corpus tools the episode uses."""

    corpus = load_corpus()
    out: dict[str, ToolSpec] = {}
    if task is not None:
        out.update({t: corpus.tools[t] for t in task.tools if t in corpus.tools})
        tl = task.metadata.get("tool_list")
        if tl:
            out.update({t.name: t for t in ToolSpec.from_pararecover(tl)})
    elif episode is not None:
        names = {s.call.tool for s in episode.steps}
        for pv in episode.plans:
            if isinstance(pv.plan, Mapping):
                for n in pv.plan.get("tasks", []) or []:
                    if isinstance(n, Mapping) and n.get("name"):
                        names.add(str(n["name"]))
        out.update({t: corpus.tools[t] for t in names if t in corpus.tools})
    return out


def replan_context(
    episode: Episode, task: Task | None = None, plan_index: int | None = None
) -> ReplanContext | None:
    """The replan to score with its inputs; ``None`` when the episode has no replanner output."""
    idx = select_replan(episode) if plan_index is None else plan_index
    if idx is None:
        return None
    if not 0 <= idx < len(episode.plans):
        raise ValueError(
            f"episode {episode.episode_id}: no plan version {idx} (it has {len(episode.plans)})"
        )
    target = episode.plans[idx]
    previous = episode.plans[idx - 1] if idx > 0 else None
    before = _steps_before(episode, target, _counts_waves_before(episode))
    last = max((s.round for s in before), default=None)
    window = [s for s in before if s.round == last] if last is not None else []
    prev_plan = _parse_version(previous) if previous is not None else None
    return ReplanContext(
        episode=episode,
        task=task,
        target=target,
        previous=previous,
        before=before,
        window=window,
        parsed=_parse_version(target),
        prev_plan=prev_plan if isinstance(prev_plan, Plan) else None,
        tools=task_tools(task, episode),
    )


# ----------------------------------------------------------------------------------------------
# script items and execution metrics
def _meta(episode: Episode, task: Task | None, key: str) -> Any:
    if key in episode.metadata:
        return episode.metadata[key]
    return task.metadata.get(key) if task is not None else None


def e5_score(
    episode: Episode, task: Task | None, s5: float | None, success: bool | None
) -> tuple[float | None, str]:
    """E5 = S·min(1, G/T) with the zero rules of the module docstring; (score, why)."""
    g = task.optimal_rounds if task is not None else None
    if g is None:
        g = _meta(episode, task, "round_gt")
    if g is None:
        return None, "no optimal round count G for this task"
    if s5 == 0:
        return 0.0, "the replan does not parse"
    if episode.end_reason is not EndReason.ANSWERED:
        return 0.0, f"the run ended with {episode.end_reason.value}"
    if not success:
        return 0.0, "the run did not succeed"
    t = int(_meta(episode, task, "rounds_executed") or 0) + episode.rounds
    if _meta(episode, task, "rounds_include_response"):
        # ParaRecover's round_gt counts the response as a round (a chain of six calls has 7):
        # count T the same way, so that a perfect run scores 1
        t += 1
    ratio = 1.0 if t == 0 else min(1.0, int(g) / t)
    return ratio, f"G={g}, T={t}"


def tool_use_efficiency(
    episode: Episode, task: Task | None, success: bool | None
) -> tuple[float | None, str]:
    """S·min(1, gt calls / actual calls); (score, why)."""
    gt = task.min_calls if task is not None else None
    if gt is None:
        gt = _meta(episode, task, "funcall_times_gt")
    if gt is None:
        return None, "no ground-truth call count for this task"
    actual = int(_meta(episode, task, "calls_executed") or 0) + len(episode.steps)
    if not success:
        return 0.0, "the run did not succeed"
    ratio = 1.0 if actual == 0 else min(1.0, int(gt) / actual)
    return ratio, f"gt={gt}, actual={actual}"


# ----------------------------------------------------------------------------------------------
# sde-auto
def _pending_findings(ctx: ReplanContext) -> list[Any] | None:
    if not isinstance(ctx.parsed, Plan) or not ctx.tools:
        return None
    world = _world_before(ctx)
    pending = {n.id for n in ctx.parsed.nodes if n.status != "done"}
    return [f for f in verify(ctx.parsed, ctx.tools, world) if f.node in pending]


def _world_before(ctx: ReplanContext) -> Any:
    """The task's world in the state the replan's pending nodes will run in (or ``None``)."""
    if ctx.task is None:
        return None

    world = task_world_or_none(ctx.task)
    if world is None:
        return None
    try:
        rp = replay(ctx.episode.model_copy(update={"steps": ctx.before}), world)
    except RuntimeError:
        return None
    return world.__class__(world.tools, rp.final_state, seed=world.seed)


def auto_s2(findings: list[Any] | None) -> tuple[float | None, str]:
    if findings is None:
        return None, "no parsed plan or no tool specs"
    fs = [f for f in findings if f.code in S2_CODES]
    if any(f.severity == "error" for f in fs):
        f = next(f for f in fs if f.severity == "error")
        return 0.0, f"{f.code.value} at node {f.node}: {f.message}"
    if fs:
        return 0.5, f"{fs[0].code.value} at node {fs[0].node}: {fs[0].message}"
    return 1.0, "no dependency finding on pending nodes"


def auto_s3(findings: list[Any] | None) -> tuple[float | None, str]:
    if findings is None:
        return None, "no parsed plan or no tool specs"
    fs = [f for f in findings if f.code in S3_CODES]
    if any(f.severity == "error" for f in fs):
        f = next(f for f in fs if f.severity == "error")
        return 0.0, f"{f.code.value} at node {f.node}: {f.message}"
    if fs:
        return 0.5, f"{fs[0].code.value} at node {fs[0].node}: {fs[0].message}"
    return 1.0, "tool names, parameter names and values fit the schemas"


def _same_call(node: PlanNode, step: Step) -> bool:
    return node.tool == step.call.tool and canonical_json(node.args) == canonical_json(
        step.call.args
    )


def auto_s4(ctx: ReplanContext) -> tuple[float | None, str]:
    """Node statuses against what really ran before the replan."""
    if not isinstance(ctx.parsed, Plan):
        return None, "the replan does not parse"
    latest: dict[str, Step] = {}
    for s in ctx.before:
        if s.call.node_id:
            latest[s.call.node_id] = s
    plan = ctx.parsed
    pending_calls = [n.id for n in plan.call_nodes if n.status != "done"]
    resp = plan.get(RESPONSE)
    if resp is not None and resp.status == "done" and pending_calls:
        return 0.0, f"response marked done while {pending_calls[0]} is pending"
    inherited = (
        {n.id for n in ctx.prev_plan.call_nodes if n.status == "done"}
        if ctx.prev_plan is not None
        else set()
    )
    stale = None
    for n in plan.call_nodes:
        s = latest.get(n.id)
        ran_ok = (
            s is not None
            and s.verdict.ok
            and (s.perturbation is None or not s.perturbation.explicit)
        ) or (s is None and n.id in inherited)  # history the replanner was handed as done
        if n.status == "done" and not ran_ok:
            what = "never ran" if s is None else "failed"
            return 0.0, f"node {n.id} is marked done but {what}"
        if n.status != "done" and ran_ok and s is not None and _same_call(n, s):
            implicit = s.perturbation is not None
            if not implicit and stale is None:
                stale = n.id
    if stale is not None:
        return 0.5, f"node {stale} ran cleanly but is left pending with the same call"
    return 1.0, "statuses match what ran"


def _faulty_nodes(ctx: ReplanContext) -> tuple[set[str], set[str]]:
    """(faulty nodes of the previous plan, those whose last call failed by the agent's fault).

    Faulty = failed or perturbed in the last wave, or with an error finding of the static
    verifier while pending. Only a runtime agent error makes "kept unchanged" a failure to
    address the issue (an unchanged node after a transient fault is a legitimate retry)."""
    faulty = set(ctx.failed_nodes)
    agent = {
        s.call.node_id for s in ctx.failed_steps if s.call.node_id and s.verdict.code.is_agent_error
    }
    if ctx.prev_plan is not None and ctx.tools:
        for f in verify(ctx.prev_plan, ctx.tools):
            node = ctx.prev_plan.get(f.node)
            if f.severity == "error" and node is not None and node.status != "done":
                faulty.add(f.node)  # a static fault widens what may be edited
    return faulty, agent


def plan_edits(prev: Plan, new: Plan) -> dict[str, set[str]]:
    """Node-level edit sets between two plans (root excluded; status changes are not edits)."""
    p = {n.id: n for n in prev.nodes if n.id != ROOT}
    q = {n.id: n for n in new.nodes if n.id != ROOT}

    def sig(n: PlanNode) -> str:
        return canonical_json([n.tool, n.args, n.positional, sorted(n.deps)])

    return {
        "added": set(q) - set(p),
        "removed": set(p) - set(q),
        "modified": {i for i in set(p) & set(q) if sig(p[i]) != sig(q[i])},
    }


def auto_e1(ctx: ReplanContext) -> tuple[float | None, str]:
    """Modification minimality from the plan edit distance."""
    if not isinstance(ctx.parsed, Plan) or ctx.prev_plan is None:
        return None, "no previous or no parsed updated plan"
    prev, new = ctx.prev_plan, ctx.parsed
    faulty, agent = _faulty_nodes(ctx)
    edits = plan_edits(prev, new)
    distance = sum(len(v) for v in edits.values())
    for nid in sorted(agent):
        a, b = prev.get(nid), new.get(nid)
        if a is not None and b is not None and nid not in edits["modified"]:
            return 0.0, f"faulty node {nid} is kept unchanged (edit distance {distance})"
    allowed = set(faulty) | {RESPONSE}
    for nid in faulty:
        if nid in prev.ids:
            allowed |= prev.descendants(nid)
    unjustified = (edits["removed"] | edits["modified"]) - allowed
    if not faulty:
        unjustified |= edits["added"]
    limit = max(1, math.floor(0.25 * len(prev.call_nodes)))
    detail = (
        f"edit distance {distance} (added {sorted(edits['added'])}, removed "
        f"{sorted(edits['removed'])}, modified {sorted(edits['modified'])}); faulty "
        f"{sorted(faulty)}"
    )
    if not unjustified:
        return 1.0, detail
    if len(unjustified) <= limit:
        return 0.5, f"unjustified edits {sorted(unjustified)}; " + detail
    return 0.0, f"unjustified edits {sorted(unjustified)}; " + detail


def _equivalents(tool: str, tools: Mapping[str, ToolSpec]) -> set[str]:
    corpus = load_corpus()
    out = {tool}
    spec = tools.get(tool) or corpus.tools.get(tool)
    if spec is not None and spec.group:
        grp = corpus.groups.get(spec.group)
        out |= set(grp.tools) if grp is not None else set()
        out |= {t for t, s in tools.items() if s.group == spec.group}
    return out


def auto_e3(ctx: ReplanContext) -> tuple[float | None, str]:
    """Goal coverage of the updated plan against the gold (else the first) plan."""
    if not isinstance(ctx.parsed, Plan):
        return None, "the replan does not parse"
    goal_plan: Plan | None = None
    source = "gold plan"
    if ctx.task is not None and ctx.task.gold_plan:
        g = Plan.parse(ctx.task.gold_plan)
        goal_plan = g if isinstance(g, Plan) else None
    if goal_plan is None and ctx.episode.plans:
        g = _parse_version(ctx.episode.plans[0])
        goal_plan, source = (g if isinstance(g, Plan) else None), "first plan"
    if goal_plan is None:
        return None, "no gold plan and no parsable first plan"
    goal = sorted({n.tool for n in goal_plan.call_nodes if n.tool})
    if not goal:
        return None, f"the {source} has no tool calls"
    new = ctx.parsed
    feeding = new.ancestors(RESPONSE) if RESPONSE in new.ids else set()
    have = {n.tool for n in new.call_nodes if n.id in feeding and n.tool}
    have |= {s.call.tool for s in ctx.before if s.verdict.ok and s.perturbation is None}
    covered = [t for t in goal if _equivalents(t, ctx.tools) & have]
    share = len(covered) / len(goal)
    missing = sorted(set(goal) - set(covered))
    detail = f"covers {len(covered)}/{len(goal)} tools of the {source}" + (
        f"; missing {missing}" if missing else ""
    )
    return (1.0 if share == 1 else 0.5 if share >= 0.5 else 0.0), detail


def named_nodes(thought: str, plan: Plan) -> set[str]:
    """Plan nodes the thought names: by id (``node 3``, ``task 2.1``, ``3的``, ``${3...}``) or
    by the node's tool name when that tool occurs once in the plan."""

    ids = plan.ids
    found = textual_references(thought, ids)
    found |= {r.node for r in iter_references(thought, ids) if r.node in ids}
    by_tool: dict[str, list[str]] = {}
    for n in plan.call_nodes:
        if n.tool:
            by_tool.setdefault(n.tool, []).append(n.id)
    low = thought.lower()
    for tool, nids in by_tool.items():
        if len(nids) == 1 and re.search(rf"(?<![\w]){re.escape(tool.lower())}(?![\w])", low):
            found.add(nids[0])
    return found


def auto_d4(ctx: ReplanContext) -> tuple[float | None, str]:
    """Impact scope: does the thought name a true descendant of the failed node?"""
    failed = ctx.failed_nodes
    if not failed:
        return None, "no failed node in the last wave"
    ref = ctx.prev_plan or (ctx.parsed if isinstance(ctx.parsed, Plan) else None)
    if ref is None:
        return None, "no plan to read dependencies from"
    failed = {f for f in failed if f in ref.ids}
    if not failed:
        return None, "the failed node is not in the previous plan"
    desc: set[str] = set()
    for f in failed:
        desc |= ref.descendants(f)
    desc -= failed
    thought = ctx.target.thought or (ctx.parsed.thought if isinstance(ctx.parsed, Plan) else "")
    named = named_nodes(thought, ref) & desc
    inner = desc - {RESPONSE}
    if inner and named & inner:
        return 1.0, f"names affected node(s) {sorted(named & inner)} of {sorted(inner)}"
    if not inner and _RESPONSE_WORDS.search(thought):
        return 1.0, "names the response as the affected step"
    if _IMPACT_WORDS.search(thought):
        return 0.5, f"acknowledges impact without naming an affected node of {sorted(inner)}"
    return 0.0, f"no affected node named (true descendants {sorted(desc)})"


def sde_auto(ctx: ReplanContext) -> dict[str, tuple[float | None, str]]:
    """The deterministic item estimates: item -> (score or None, reason)."""
    findings = _pending_findings(ctx)
    return {
        "S2": auto_s2(findings),
        "S3": auto_s3(findings),
        "S4": auto_s4(ctx),
        "E1": auto_e1(ctx),
        "E3": auto_e3(ctx),
        "D4": auto_d4(ctx),
    }


# ----------------------------------------------------------------------------------------------
# the LLM judge
class ItemScore(BaseModel):
    """One rubric item: a score of exactly 1, 0.5 or 0, and the reason for it."""

    score: float = Field(description="exactly one of 1, 0.5, 0")
    reason: str = Field(description="one or two sentences citing the evidence")

    @field_validator("score", mode="before")
    @classmethod
    def _number(cls, v: Any) -> Any:
        if isinstance(v, str):
            try:
                return float(v.strip())
            except ValueError as exc:
                raise ValueError(f"score must be 1, 0.5 or 0, got {v!r}") from exc
        return v

    @field_validator("score")
    @classmethod
    def _anchor(cls, v: float) -> float:
        if v not in ALLOWED:
            raise ValueError(f"score must be 1, 0.5 or 0, got {v}")
        return float(v)


class StructuralIntegrity(BaseModel):
    """Scores for S1-S4 of the SDE rubric."""

    S1: ItemScore
    S2: ItemScore
    S3: ItemScore
    S4: ItemScore


class DiagnosticReasoning(BaseModel):
    """Scores for D1-D5 of the SDE rubric."""

    D1: ItemScore
    D2: ItemScore
    D3: ItemScore
    D4: ItemScore
    D5: ItemScore


class EvolutionaryStrategy(BaseModel):
    """Scores for E1-E4 of the SDE rubric."""

    E1: ItemScore
    E2: ItemScore
    E3: ItemScore
    E4: ItemScore


_JUDGE_ROLE = (
    "You are a strict, conservative evaluator of a replanner in a tool-using agent. The "
    "replanner saw its previous plan (a DAG of tool calls) and the results of the last wave of "
    "calls, then wrote a thought and an updated plan. Score each item exactly 1, 0.5 or 0 by "
    "the anchors below, defaulting to the lower score when in doubt, and give a short reason "
    "that cites the evidence (node ids, tool names, parameters, error messages)."
)

RUBRIC: dict[str, tuple[type[BaseModel], str]] = {
    "structural": (
        StructuralIntegrity,
        """Dimension: Structural Integrity (a script adds S5, parsability, separately).
S1 Thought-DAG consistency: are the repairs, downstream handling and progress the thought claims really in the updated DAG?
  1: key repairs and nodes in the thought correspond one-to-one to the DAG. 0.5: partly, with omissions, misalignments or claims only in the thought. 0: clearly inconsistent.
S2 Topological dependency: are dependencies, order and upstream/downstream links right, so the DAG really executes? Parallel nodes must not depend on each other; sequential nodes need a real data link.
  1: correct dependencies, executable. 0.5: minor dependency issues or risks, main chain understandable. 0: obvious dependency errors or not executable.
S3 Tool call legality: do tool names, parameter names and value formats comply with the tool list?
  1: all legal and accurate. 0.5: minor non-standard formats or risks, still usable. 0: invalid tools, wrong parameter names, missing required parameters or illegal values.
S4 State advancement: are the statuses of executed, unexecuted, failed-and-retained and response nodes right given what ran?
  1: statuses match the real execution. 0.5: minor status irregularities. 0: status errors that would mislead the executor.""",
    ),
    "diagnostic": (
        DiagnosticReasoning,
        """Dimension: Diagnostic Reasoning (of the thought).
D1 Plan evidence anchoring: does the thought cite and correctly read specific nodes, dependencies, statuses of the previous plan?
  1: cites verifiable node ids, upstream/downstream nodes or statuses and reasons from them. 0.5: partial references without verifiable ids or precise evidence. 0: general talk, barely uses the plan.
D2 Tool evidence anchoring: does it cite and correctly read error messages, return values, parameter names or tool behaviour from the results?
  1: names exact tools, parameters, error fields or values and explains them. 0.5: notices an abnormality without specific details. 0: no concrete tool evidence, or misreads it.
D3 Root cause localization: does it find the fundamental cause rather than the symptom?
  1: locates the real cause (invalid parameter, faulty dependency, wrong state, faulty or lying tool). 0.5: roughly locates it but stays superficial ("execution failed", "adjust parameters"). 0: wrong or no root cause.
D4 Impact scope recognition: does it recognise the downstream nodes, dependency chains and response affected by the error?
  1: names at least one affected downstream node, chain or the response. 0.5: acknowledges impact without naming what is affected. 0: no affected scope identified.
D5 Evidence sufficiency and restraint: is the reasoning supported by facts without fabrication?
  1: at least two independent verifiable pieces of evidence (plan and tool results), notices remaining risks, separates real causes from misleading ones. 0.5: partly. 0: speculation, fabrication or no verification.""",
    ),
    "evolutionary": (
        EvolutionaryStrategy,
        """Dimension: Evolutionary Strategy (of the updated plan; a script adds E5, efficacy, separately).
E1 Modification minimality: does the replan change only what is necessary?
  1: only the essential nodes and dependencies change, each tied to a specific error. 0.5: right direction but with redundant or excessive changes. 0: uncontrolled rewriting, or the key issue left unaddressed.
E2 Recovery closure: does it fix the failure and also the affected downstream nodes, parameters, statuses and response chain?
  1: a complete closed loop, affected downstream handled explicitly. 0.5: partial fix with gaps downstream. 0: no executable closed loop.
E3 Goal persistence: does the updated plan still fully serve the user's original task?
  1: original goals fully kept, with a complete path to the response. 0.5: basic goals kept but partial coverage or minor drift. 0: noticeable deviation or a core objective dropped.
E4 Strategy necessity: do added, removed or reordered steps and dependencies have a clear practical need?
  1: every adjustment justified and necessary. 0.5: most reasonable, a few unnecessary. 0: critical adjustments serve no purpose (mechanical rewriting).""",
    ),
}


def _dump(value: Any, limit: int = 6000) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 20] + " ...[truncated]"


def judge_inputs(ctx: ReplanContext) -> str:
    """The evidence block every judge prompt shows."""
    tools = render_tools(ctx.tools.values()) if ctx.tools else "(tool specifications unknown)"
    prev = ctx.previous
    prev_text = (
        _dump(prev.plan if prev.plan is not None else prev.text) if prev is not None else "(none)"
    )
    results = []
    for s in ctx.window:
        obs = json.loads(
            format_observation(s.call.node_id, s.call.tool, s.call.args, s.observation)
        )
        if not s.verdict.ok:
            obs["verdict"] = {"code": s.verdict.code.value, "message": s.verdict.message}
        results.append(json.dumps(obs, ensure_ascii=False, default=str))
    new = ctx.target
    query = ctx.episode.query or (ctx.task.query if ctx.task is not None else "")
    return (
        f"## Original user task\n{query}\n\n## Available tools (one JSON per line)\n{tools}\n\n"
        f"## Previous plan\n{prev_text}\n\n## Results of the previous plan's last wave\n"
        + ("\n".join(_dump(r, 1500) for r in results) or "(none)")
        + f"\n\n## Replanner thought\n{new.thought or '(none)'}\n\n## Updated plan\n"
        + _dump(new.plan if new.plan is not None else new.text)
    )


def judge_messages(group: str, ctx: ReplanContext) -> list[Any]:
    """System + human messages for one dimension group."""
    # late: scoring loads no LangChain; only a judge that calls a model needs messages
    from langchain_core.messages import HumanMessage, SystemMessage

    _, anchors = RUBRIC[group]
    return [
        SystemMessage(content=f"{_JUDGE_ROLE}\n\n{anchors}"),
        HumanMessage(content=judge_inputs(ctx) + "\n\nScore every item of this dimension."),
    ]


class JudgeReplyInvalid(Exception):
    """The judge's reply did not validate against the item schema."""


@dataclass
class JudgeResult:
    scores: dict[str, float | None] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # group -> last error
    attempts: dict[str, int] = field(default_factory=dict)


class SDEJudge:
    """An LLM judge for the 13 judged SDE items, through structured output.

    ``attempts`` tries per dimension group (a reply failing validation or a model error is
    retried with exponential backoff starting at ``wait_s``); after the last one the group's
    items are missing (``None``) and the error is kept in :attr:`JudgeResult.errors`.
    """

    def __init__(self, model: Any, *, attempts: int = 3, wait_s: float = 0.5):
        if not hasattr(model, "with_structured_output"):
            raise TypeError(f"the judge needs a LangChain chat model, got {type(model).__name__}")
        self.model = model
        self.attempts = max(1, attempts)
        self.wait_s = wait_s
        self._runnables: dict[str, Any] = {}

    def _structured(self, group: str) -> Any:
        if group not in self._runnables:
            schema, _ = RUBRIC[group]
            try:
                self._runnables[group] = self.model.with_structured_output(schema, include_raw=True)
            except NotImplementedError as exc:
                raise TypeError(
                    f"judge model {type(self.model).__name__} does not support structured "
                    "output (with_structured_output)"
                ) from exc
        return self._runnables[group]

    def _ask(self, group: str, messages: list[Any]) -> tuple[BaseModel, int]:
        # late: only a judge that calls a model retries
        from tenacity import (
            Retrying,
            retry_if_exception_type,
            stop_after_attempt,
            wait_exponential,
            wait_none,
        )

        runnable = self._structured(group)
        tries = 0
        for attempt in Retrying(
            stop=stop_after_attempt(self.attempts),
            wait=wait_exponential(multiplier=self.wait_s, max=30) if self.wait_s else wait_none(),
            retry=retry_if_exception_type(Exception),
            reraise=True,
        ):
            with attempt:
                tries += 1
                out = runnable.invoke(messages)
                parsed = out.get("parsed") if isinstance(out, Mapping) else out
                if isinstance(out, Mapping) and out.get("parsing_error") is not None:
                    raise JudgeReplyInvalid(str(out["parsing_error"]))
                if not isinstance(parsed, BaseModel):
                    raise JudgeReplyInvalid(f"no structured reply (got {type(parsed).__name__})")
                return parsed, tries
        raise AssertionError("unreachable")  # pragma: no cover

    def judge(self, ctx: ReplanContext) -> JudgeResult:
        """Score the 13 judged items of one replan."""
        res = JudgeResult()
        for group, (schema, _) in RUBRIC.items():
            items = list(schema.model_fields)
            self._structured(group)  # a model without structured output is a setup error
            try:
                parsed, tries = self._ask(group, judge_messages(group, ctx))
            except Exception as exc:
                res.errors[group] = f"{type(exc).__name__}: {exc}"
                res.attempts[group] = self.attempts
                for item in items:
                    res.scores[item] = None
                    res.reasons[item] = f"missing: judge failed after {self.attempts} attempts"
                continue
            res.attempts[group] = tries
            for item in items:
                s: ItemScore = getattr(parsed, item)
                res.scores[item] = s.score
                res.reasons[item] = s.reason
        return res


# ----------------------------------------------------------------------------------------------
# per-run record
@dataclass
class SDERecord:
    """What one episode contributes to the ParaRecover metrics."""

    episode_id: str
    success: bool | None
    plan_index: int | None = None
    replans: int = 0
    invalid_replans: int = 0
    script: dict[str, float | None] = field(default_factory=dict)  # S5, E5
    script_reasons: dict[str, str] = field(default_factory=dict)
    tool_use_efficiency: float | None = None
    auto: dict[str, float | None] = field(default_factory=dict)
    auto_reasons: dict[str, str] = field(default_factory=dict)
    judge: JudgeResult | None = None

    def items(self) -> dict[str, float | None]:
        """The rubric items for the dimensions: judged items plus the script items."""
        out: dict[str, float | None] = {i: None for i in ITEMS}
        if self.judge is not None:
            out.update({k: v for k, v in self.judge.scores.items() if k in out})
        out.update({k: v for k, v in self.script.items() if k in out})
        return out

    def dimensions(self) -> dict[str, float | None]:
        """SI, DR, ES (× 100) and Avg; ``None`` without the judge or when all items missing."""
        if self.judge is None:
            return {"SI": None, "DR": None, "ES": None, "Avg": None}
        items = self.items()
        out: dict[str, float | None] = {}
        for dim, names in DIMENSIONS.items():
            vals = [items[i] for i in names if items[i] is not None]
            out[dim] = 100 * sum(vals) / len(vals) if vals else None  # type: ignore[arg-type]
        dims = [v for v in out.values() if v is not None]
        out["Avg"] = sum(dims) / len(dims) if dims else None
        return out

    @property
    def missing_items(self) -> int:
        if self.judge is None:
            return 0
        return sum(1 for i in JUDGED_ITEMS if self.judge.scores.get(i) is None)


def sde_record(
    episode: Episode,
    task: Task | None = None,
    *,
    success: bool | None = None,
    judge: SDEJudge | None = None,
    auto: bool = True,
    plan_index: int | None = None,
) -> SDERecord:
    """Score one episode: script items, execution metrics, sde-auto and (optionally) the judge."""
    succ = episode.success if success is None else success
    replans = [pv for pv in episode.plans if is_replanner_output(episode, pv)]
    invalid = sum(1 for pv in replans if not isinstance(_parse_version(pv), Plan))
    rec = SDERecord(
        episode_id=episode.episode_id,
        success=succ,
        replans=len(replans),
        invalid_replans=invalid,
    )
    ctx = replan_context(episode, task, plan_index)
    s5: float | None = None
    if ctx is not None:
        rec.plan_index = episode.plans.index(ctx.target)
        s5 = 1.0 if isinstance(ctx.parsed, Plan) else 0.0
        rec.script["S5"] = s5
        rec.script_reasons["S5"] = (
            "parses: acyclic, unique ids, deps exist, root and response present"
            if s5
            else f"{ctx.parsed.code}: {ctx.parsed.reason}"  # type: ignore[union-attr]
        )
    e5, why = e5_score(episode, task, s5, succ)
    rec.script["E5"] = e5
    rec.script_reasons["E5"] = why
    rec.tool_use_efficiency, _ = tool_use_efficiency(episode, task, succ)
    if ctx is not None and auto:
        for item, (score, reason) in sde_auto(ctx).items():
            rec.auto[item] = score
            rec.auto_reasons[item] = reason
    if ctx is not None and judge is not None:
        rec.judge = judge.judge(ctx)
    return rec


def sde_feedback(rec: SDERecord) -> list[Feedback]:
    """Per-run feedback: ``sde.S5``, ``sde.E5``, ``sde.tool_use_efficiency``,
    ``sde.invalid_dags``, ``sde.auto.<item>``, and with the judge ``sde.<item>`` and
    ``sde.SI`` / ``sde.DR`` / ``sde.ES`` / ``sde.Avg``."""
    out: list[Feedback] = []
    for item in SCRIPT_ITEMS:
        if rec.script.get(item) is not None:
            out.append(Feedback(f"sde.{item}", rec.script[item], rec.script_reasons.get(item, "")))
    if rec.tool_use_efficiency is not None:
        out.append(
            Feedback("sde.tool_use_efficiency", rec.tool_use_efficiency, "S·min(1, gt/actual)")
        )
    if rec.replans:
        out.append(
            Feedback(
                "sde.invalid_dags",
                float(rec.invalid_replans),
                f"{rec.invalid_replans} of {rec.replans} replanner outputs fail S5",
            )
        )
    for item, score in rec.auto.items():
        out.append(Feedback(f"sde.auto.{item}", score, rec.auto_reasons.get(item, "")))
    if rec.judge is not None:
        for item in JUDGED_ITEMS:
            out.append(
                Feedback(f"sde.{item}", rec.judge.scores.get(item), rec.judge.reasons.get(item, ""))
            )
        for dim, v in rec.dimensions().items():
            out.append(Feedback(f"sde.{dim}", v, f"{rec.missing_items} judged item(s) missing"))
    return out


# ----------------------------------------------------------------------------------------------
# aggregation
def _agreement(pairs: Sequence[tuple[float, float]], key: str, seed: int, n_boot: int) -> dict:
    ema = wilson(sum(1 for a, b in pairs if a == b), len(pairs)).to_dict()
    mae = bootstrap_mean(
        [abs(a - b) for a, b in pairs], key=key, seed=seed, n_boot=n_boot
    ).to_dict()
    return {"n": len(pairs), "ema": ema, "mae": mae}


def summarize_sde(
    records: Sequence[SDERecord], *, seed: int = 0, n_boot: int = N_BOOT
) -> dict[str, Any]:
    """Aggregates over runs (keys ``sde.pass@1``, ``sde.invalid_dag_rate``, ``sde.E5``,
    ``sde.tool_use_efficiency``, ``sde.auto.<item>``, and with the judge ``sde.<item>``,
    ``sde.SI`` / ``sde.DR`` / ``sde.ES`` / ``sde.Avg`` and ``sde.agreement.<item>``)."""
    out: dict[str, Any] = {}
    n = len(records)
    out["sde.pass@1"] = wilson(sum(1 for r in records if r.success), n).to_dict()
    out["sde.invalid_dag_rate"] = wilson(
        sum(r.invalid_replans for r in records), sum(r.replans for r in records)
    ).to_dict()
    for key, vals in (
        ("sde.S5", [r.script.get("S5") for r in records]),
        ("sde.E5", [r.script.get("E5") for r in records]),
        ("sde.tool_use_efficiency", [r.tool_use_efficiency for r in records]),
    ):
        got = [v for v in vals if v is not None]
        if got:
            out[key] = bootstrap_mean(got, key=key, seed=seed, n_boot=n_boot).to_dict()
    for item in AUTO_ITEMS:
        got = [r.auto[item] for r in records if r.auto.get(item) is not None]
        if got:
            out[f"sde.auto.{item}"] = bootstrap_mean(
                got, key=f"sde.auto.{item}", seed=seed, n_boot=n_boot
            ).to_dict()
    judged = [r for r in records if r.judge is not None]
    if not judged:
        return out
    for item in JUDGED_ITEMS:
        got = [r.judge.scores[item] for r in judged if r.judge.scores.get(item) is not None]  # type: ignore[union-attr]
        est = bootstrap_mean(got, key=f"sde.{item}", seed=seed, n_boot=n_boot).to_dict()
        est["missing"] = len(judged) - len(got)
        out[f"sde.{item}"] = est
    dims = [r.dimensions() for r in judged]
    rows = np.zeros((len(judged), 6))
    for i, d in enumerate(dims):
        for j, name in enumerate(("SI", "DR", "ES")):
            v = d[name]
            rows[i, 2 * j] = 0.0 if v is None else v
            rows[i, 2 * j + 1] = 0.0 if v is None else 1.0
    point: list[float] = []
    for name in ("SI", "DR", "ES"):
        got = [d[name] for d in dims if d[name] is not None]
        est = bootstrap_mean(got, key=f"sde.{name}", seed=seed, n_boot=n_boot).to_dict()
        out[f"sde.{name}"] = est
        if est["value"] is not None:
            point.append(est["value"])
    avg = sum(point) / len(point) if point else None
    sums, _ = resample_sums(rows, n_boot, rng_for(seed, "sde.Avg"))
    with np.errstate(invalid="ignore", divide="ignore"):
        per_dim = np.stack(
            [
                np.where(sums[:, 2 * j + 1] > 0, sums[:, 2 * j] / sums[:, 2 * j + 1], np.nan)
                for j in range(3)
            ],
            axis=1,
        )
    defined = ~np.isnan(per_dim)
    samples = np.where(
        defined.any(axis=1),
        np.nansum(per_dim, axis=1) / np.maximum(defined.sum(axis=1), 1),
        np.nan,
    )
    out["sde.Avg"] = estimate_from_samples(avg, samples, len(judged)).to_dict()
    out["sde.Avg"]["missing_items"] = sum(r.missing_items for r in judged)
    for item in AUTO_ITEMS:
        pairs = [
            (r.judge.scores[item], r.auto[item])  # type: ignore[union-attr]
            for r in judged
            if r.judge.scores.get(item) is not None and r.auto.get(item) is not None  # type: ignore[union-attr]
        ]
        if pairs:
            out[f"sde.agreement.{item}"] = _agreement(
                pairs,
                f"sde.agreement.{item}",
                seed,
                n_boot,  # type: ignore[arg-type]
            )
    return out


# ----------------------------------------------------------------------------------------------
# judge calibration against human labels
def _score_value(v: Any, where: str) -> float | None:
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: score {v!r} is not a number") from exc
    if f not in ALLOWED and not (where.endswith("S5") and f in (0.0, 1.0)):
        raise ValueError(f"{where}: score {f} is not one of 1, 0.5, 0")
    return f


def _add_row(out: dict[str, dict[str, float]], row: Mapping[str, Any], where: str) -> None:
    rid = row.get("id", row.get("episode_id", row.get("instance_id")))
    if rid is None or str(rid).strip() == "":
        raise ValueError(f"{where}: no id (columns id / episode_id / instance_id)")
    rid = str(rid).strip()
    if "item" in row:
        item = str(row["item"]).strip()
        if item not in ITEMS:
            raise ValueError(f"{where}: unknown item {item!r}")
        v = _score_value(row.get("score"), f"{where} {item}")
        if v is not None:
            out.setdefault(rid, {})[item] = v
        return
    for item in ITEMS:
        for col in (item, f"{item}_score"):
            if col in row:
                v = _score_value(row[col], f"{where} {item}")
                if v is not None:
                    out.setdefault(rid, {})[item] = v


def load_labels(path: str | Path) -> dict[str, dict[str, float]]:
    """Item scores per instance from a CSV or JSONL file: id -> item -> score.

    Wide rows (``id, S1, S2, ...`` or ``S1_score`` ...) or long rows (``id, item, score``).
    Errors name the file and line.
    """
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    out: dict[str, dict[str, float]] = {}
    if p.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        for ln, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{p}:{ln}: not valid JSON: {exc.msg}") from exc
            if not isinstance(row, Mapping):
                raise ValueError(f"{p}:{ln}: expected a JSON object")
            _add_row(out, row, f"{p}:{ln}")
    else:
        reader = csv.DictReader(io.StringIO(text))
        for ln, row in enumerate(reader, start=2):
            _add_row(out, row, f"{p}:{ln}")
    return out


def calibrate(
    human: Mapping[str, Mapping[str, float]],
    model: Mapping[str, Mapping[str, float | None]],
    items: Iterable[str] = JUDGED_ITEMS,
) -> dict[str, Any]:
    """EMA, MAE, human mean and model mean per item over instances both scored, and overall.

    Each item also carries the 95% intervals of its EMA (Wilson) and MAE (bootstrap).
    ``overall`` averages the per-item values (items with no pair are left out), as
    ParaRecover's Table 5 reports.
    """
    table: dict[str, Any] = {}
    for item in items:
        pairs = [
            (float(h[item]), float(model[i][item]))  # type: ignore[arg-type]
            for i, h in human.items()
            if item in h and i in model and model[i].get(item) is not None
        ]
        if not pairs:
            continue
        n = len(pairs)
        ema = wilson(sum(1 for a, b in pairs if a == b), n)
        mae = bootstrap_mean([abs(a - b) for a, b in pairs], key=f"calibrate.{item}")
        table[item] = {
            "n": n,
            "ema": ema.value,
            "mae": mae.value,
            "human_mean": sum(a for a, _ in pairs) / n,
            "model_mean": sum(b for _, b in pairs) / n,
            "ema_interval": [ema.low, ema.high],
            "mae_interval": [mae.low, mae.high],
        }
    if table:
        table["overall"] = {
            k: sum(row[k] for row in table.values()) / len(table)
            for k in ("ema", "mae", "human_mean", "model_mean")
        } | {"n": sum(row["n"] for row in table.values())}
    return table


def judge_scores(records: Iterable[SDERecord]) -> dict[str, dict[str, float | None]]:
    """Judge item scores per episode id, in the shape :func:`calibrate` takes."""
    return {r.episode_id: dict(r.judge.scores) for r in records if r.judge is not None}
