"""sde-auto: deterministic, judge-free estimates of S2, S3, S4, E1, E3 and D4 (see the package
docstring for how each is decided)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from replan.core import linre
from replan.core.plan import RESPONSE, ROOT, Plan, PlanNode, iter_references
from replan.core.tools import ToolSpec, canonical_json
from replan.core.trace import Step
from replan.env.corpus import load_corpus
from replan.env.replay import replay
from replan.env.verifier import textual_references, verify
from replan.evaluators.prefix import task_world_or_none
from replan.evaluators.sde.context import (
    ReplanContext,
    parse_version,
)
from replan.evaluators.sde.items import (
    S2_CODES,
    S3_CODES,
)

_IMPACT_WORDS = linre.compile(
    r"downstream|depend|affect|subsequent|later (?:step|node|call)s?|blocked|cascad|propagat|"
    r"下游|依赖|影响|后续",
    linre.I,
)
_RESPONSE_WORDS = linre.compile(r"\bresponse\b|final answer|\breply\b|回复|响应|最终", linre.I)


def _stands_alone(word: str, text: str) -> bool:
    """Whether ``word`` occurs in ``text`` with no word character just before or after it."""
    if word not in text:
        return False
    pattern = linre.compile(
        linre.escape(word), not_after=r"\w", followed_by=r"\W|$", overlapping=True
    )
    return pattern.search(text) is not None


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


def _grade(findings: list[Any] | None, codes: Any, clean: str) -> tuple[float | None, str]:
    """0 for an error among the findings with ``codes``, 0.5 for a warning, else 1 (``clean``)."""
    if findings is None:
        return None, "no parsed plan or no tool specs"
    fs = [f for f in findings if f.code in codes]
    f = next((f for f in fs if f.severity == "error"), None)
    if f is not None:
        return 0.0, f"{f.code.value} at node {f.node}: {f.message}"
    if fs:
        return 0.5, f"{fs[0].code.value} at node {fs[0].node}: {fs[0].message}"
    return 1.0, clean


def auto_s2(findings: list[Any] | None) -> tuple[float | None, str]:
    return _grade(findings, S2_CODES, "no dependency finding on pending nodes")


def auto_s3(findings: list[Any] | None) -> tuple[float | None, str]:
    return _grade(findings, S3_CODES, "tool names, parameter names and values fit the schemas")


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
        # executed = the world accepted the call, as the executor marks it (an injected error
        # it returned is the replanner's to notice; D1-D5 judge that, not the statuses)
        ran_ok = (s is not None and s.verdict.ok) or (
            s is None and n.id in inherited  # history the replanner was handed as done
        )
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
        g = parse_version(ctx.episode.plans[0])
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
        if len(nids) == 1 and _stands_alone(tool.lower(), low):
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
