"""The 14 ParaRecover error types as deterministic injectors, and the ``pararecover-synth`` suite.

An injector takes a correct plan (a ToolMaze gold path) and returns a flawed copy with exactly one
error of its type, the node where the error sits, and — for the two tool-response types — the
result the call returned. Each is a pure function of (plan, tools, rng); the same seed gives the
same flaw. The eleven *static* types change the plan itself, in a way the static verifier
(``replan.env.verifier.verify``) can see; ``Tool_select_Error`` (a same-group or look-alike tool
in place of the right one) is semantic: its arguments may even fit, so no verifier can be sure
without the task; ``Null_Error`` and ``Timeout_Error`` live in the last wave's results.

``pararecover-synth`` rebuilds the ParaRecover setting from ToolMaze tasks with exact ground
truth: the replanner sees the plan after ``k`` rounds (nodes run in earlier rounds are ``done``,
with their results in their description; the nodes of round ``k`` are still ``pending`` and their
results form the last wave, ``fun_call``). LEVEL-1 puts one error in the latest round; LEVEL-2 puts
one error in each of two or three rounds, the earlier ones unnoticed and propagated (a failed call
was taken as done, and what depended on it ran on its bad output). Error types follow the paper's
balance (seed 000, Table 10 for LEVEL-1, Table 11 per round for LEVEL-2). ``Task.optimal_rounds``
(G, the upstream ``round_gt``) counts the gold plan's call waves plus the response round, and
``Task.min_calls`` (the upstream ``funcall_times_gt``) its calls — the conventions of the
upstream files (a chain of six calls has G = 7).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from replan.core.plan import ROOT, Plan, PlanNode, iter_references
from replan.core.task import ReplanPoint, Task
from replan.core.taxonomy import ErrorType
from replan.core.tools import ToolSpec, canonical_json
from replan.core.trace import Call
from replan.env.corpus import load_corpus
from replan.env.mistakes import (
    PARARECOVER,
    add_dependency,
    drop_param,
    duplicate_call,
    invalidate_param,
    misspell_tool,
    referenced_nodes,
    remove_call,
    rename_param,
    replace_node,
    retype_param,
    select_wrong_tool,
    swap_dependency,
    unordered_calls,
    with_deps,
    wrong_dependencies,
)
from replan.env.verifier import orders_state
from replan.env.waves import run_wave
from replan.env.world import ExecResult, World, WorldState, stable_seed
from replan.suites.pararecover import PROTOCOL_BUDGETS, error_type_views
from replan.suites.suite import csv_option, suite
from replan.suites.toolmaze import generate
from replan.suites.toolmaze.frozen import read_frozen_suite
from replan.suites.toolmaze.levels import GUIDED, LEVELS, PER_LEVEL
from replan.suites.versions import frozen_file, read_frozen, read_frozen_stats

SUITE = "pararecover-synth"

#: types an injector writes into the plan and the static verifier can flag with that type
STATIC_TYPES: tuple[ErrorType, ...] = (
    ErrorType.PARAMETER_MISSING,
    ErrorType.PARAMETER_INVALID,
    ErrorType.PARAMETER_ERROR,
    ErrorType.TYPE_ERROR,
    ErrorType.TOOL_NAME_ERROR,
    ErrorType.TOOLCALL_MISSING,
    ErrorType.TOOLCALL_REDUNDANCY,
    ErrorType.DEPENDENCE_ERROR,
    ErrorType.DEPENDENCE_NULL,
    ErrorType.SERIAL_ERROR,
    ErrorType.PARALLELISM_ERROR,
)
#: the tool-response types: the plan is right, the call's result is empty or timed out
RESPONSE_TYPES: tuple[ErrorType, ...] = (ErrorType.NULL_ERROR, ErrorType.TIMEOUT_ERROR)

#: LEVEL-1 error type counts (ParaRecover Table 10)
LEVEL1_COUNTS: dict[ErrorType, int] = {
    ErrorType.PARAMETER_MISSING: 333,
    ErrorType.PARAMETER_INVALID: 341,
    ErrorType.PARAMETER_ERROR: 276,
    ErrorType.TYPE_ERROR: 322,
    ErrorType.TOOL_NAME_ERROR: 258,
    ErrorType.TOOL_SELECT_ERROR: 266,
    ErrorType.TOOLCALL_MISSING: 307,
    ErrorType.TOOLCALL_REDUNDANCY: 296,
    ErrorType.DEPENDENCE_ERROR: 278,
    ErrorType.DEPENDENCE_NULL: 252,
    ErrorType.SERIAL_ERROR: 407,
    ErrorType.PARALLELISM_ERROR: 268,
    ErrorType.NULL_ERROR: 210,
    ErrorType.TIMEOUT_ERROR: 219,
}
#: LEVEL-2 error type counts per round (ParaRecover Table 11: rounds 1, 2, 3)
LEVEL2_COUNTS: dict[ErrorType, tuple[int, int, int]] = {
    ErrorType.PARAMETER_MISSING: (429, 443, 198),
    ErrorType.PARAMETER_INVALID: (528, 544, 204),
    ErrorType.PARAMETER_ERROR: (428, 416, 187),
    ErrorType.TYPE_ERROR: (598, 553, 197),
    ErrorType.TOOL_NAME_ERROR: (554, 485, 181),
    ErrorType.TOOL_SELECT_ERROR: (435, 370, 177),
    ErrorType.TOOLCALL_MISSING: (558, 554, 203),
    ErrorType.TOOLCALL_REDUNDANCY: (540, 530, 206),
    ErrorType.DEPENDENCE_ERROR: (449, 483, 208),
    ErrorType.DEPENDENCE_NULL: (395, 417, 203),
    ErrorType.SERIAL_ERROR: (506, 494, 191),
    ErrorType.PARALLELISM_ERROR: (353, 397, 214),
    ErrorType.NULL_ERROR: (394, 456, 189),
    ErrorType.TIMEOUT_ERROR: (426, 451, 191),
}
#: share of LEVEL-2 instances with a third erroneous round (2750 of 6593)
LEVEL2_THIRD_ROUND = 2750 / 6593

TIMEOUT_RESULT = "Error: request timed out after 30 s (no response from the service)"
NULL_RESULT: dict[str, Any] = {}


@dataclass
class Injection:
    """One injected error: the flawed plan, where the error sits, and what changed."""

    error_type: ErrorType
    plan: Plan
    node: str  # the node a finding about this error names
    detail: str
    result: Any = None  # the recorded result of ``node``'s call (Null_Error / Timeout_Error)
    extra_tools: list[str] = field(default_factory=list)  # tools the flaw brings in (select)


# ---------------------------------------------------------------------------------------------
# helpers on plans
def _replace(plan: Plan, node: PlanNode) -> Plan:
    return Plan(nodes=replace_node(plan.nodes, node), thought=plan.thought)


def _referenced(node: PlanNode, ids: Sequence[str]) -> set[str]:
    return set(referenced_nodes(node, ids))


def _pending_calls(plan: Plan, allowed: Iterable[str] | None) -> list[PlanNode]:
    allow = set(allowed) if allowed is not None else None
    return [n for n in plan.call_nodes if n.status != "done" and (allow is None or n.id in allow)]


def _layer_of(plan: Plan) -> dict[str, int]:
    return {nid: i for i, layer in enumerate(plan.layers()) for nid in layer}


def _literal_params(node: PlanNode, spec: ToolSpec, ids: Sequence[str]) -> list[str]:
    return [
        k
        for k, v in node.args.items()
        if k in spec.param_names and not list(iter_references(v, ids))
    ]


# ---------------------------------------------------------------------------------------------
# the injectors: the mutations of :mod:`replan.env.mistakes` in the PARARECOVER style, at the
# first candidate node where the flaw is a clean instance of its type
def inject(
    plan: Plan,
    error_type: ErrorType | str,
    tools: Mapping[str, ToolSpec],
    rng: random.Random,
    *,
    nodes: Iterable[str] | None = None,
    corpus_tools: Mapping[str, ToolSpec] | None = None,
) -> Injection | None:
    """Inject one error of ``error_type`` into ``plan`` at one of ``nodes`` (default: any
    pending call); ``None`` when the plan has no place for it.

    ``tools`` are the tools the agent has; ``corpus_tools`` (optional) is where a look-alike
    tool for ``Tool_select_Error`` may come from when the agent's tools have none.
    """
    et = ErrorType(error_type)
    fn = _INJECTORS[et]
    cands = _pending_calls(plan, nodes)
    rng.shuffle(cands)
    return fn(plan, cands, tools, rng, corpus_tools or tools)


def _with_args(et: ErrorType, plan: Plan, n: PlanNode, args: dict[str, Any], detail: str):
    return Injection(et, _replace(plan, n.model_copy(update={"args": args})), n.id, detail)


def _param_missing(plan, cands, tools, rng, _ct):
    for n in cands:
        spec = tools.get(n.tool or "")
        args = drop_param(n.args, spec, rng) if spec is not None else None
        if args is None:
            continue
        (p,) = set(n.args) - set(args)
        detail = f"dropped required parameter {p!r} of {n.tool}"
        return _with_args(ErrorType.PARAMETER_MISSING, plan, n, args, detail)
    return None


def _changed_value(n: PlanNode, args: dict[str, Any]) -> str:
    p = next(k for k in args if args[k] is not n.args[k])
    return f"{n.tool}.{p}: {canonical_json(n.args[p])} -> {canonical_json(args[p])}"


def _param_invalid(plan, cands, tools, rng, _ct):
    for n in cands:
        spec = tools.get(n.tool or "")
        if spec is None or not spec.check_names(n.args).ok:
            continue
        keys = _literal_params(n, spec, plan.ids)
        args = invalidate_param(n.args, spec, rng, PARARECOVER, keys=keys)
        if args is not None:
            return _with_args(ErrorType.PARAMETER_INVALID, plan, n, args, _changed_value(n, args))
    return None


def _param_error(plan, cands, tools, rng, _ct):
    for n in cands:
        spec = tools.get(n.tool or "")
        args = rename_param(n.args, spec, rng, PARARECOVER) if spec is not None else None
        if args is None:
            continue
        (p,) = set(n.args) - set(args)
        (new,) = set(args) - set(n.args)
        detail = f"{n.tool}: parameter {p!r} written as {new!r}"
        return _with_args(ErrorType.PARAMETER_ERROR, plan, n, args, detail)
    return None


def _type_error(plan, cands, tools, rng, _ct):
    for n in cands:
        spec = tools.get(n.tool or "")
        if spec is None:
            continue
        keys = _literal_params(n, spec, plan.ids)
        args = retype_param(n.args, spec, rng, PARARECOVER, keys=keys)
        if args is not None:
            return _with_args(ErrorType.TYPE_ERROR, plan, n, args, _changed_value(n, args))
    return None


def _tool_name_error(plan, cands, tools, rng, ct):
    known = set(tools) | set(ct)
    for n in cands:
        new = misspell_tool(n.tool or "", known, rng, PARARECOVER)
        if new is None:
            continue
        return Injection(
            ErrorType.TOOL_NAME_ERROR,
            _replace(plan, n.model_copy(update={"tool": new})),
            n.id,
            f"tool {n.tool!r} written as {new!r}",
        )
    return None


def _tool_select_error(plan, cands, tools, rng, ct):
    for n in cands:
        new = select_wrong_tool(n.tool or "", ct, rng, PARARECOVER)
        if new is None:
            continue
        group = ct[n.tool or ""].group
        kind = "alternative" if group and ct[new].group == group else "look-alike"
        return Injection(
            ErrorType.TOOL_SELECT_ERROR,
            _replace(plan, n.model_copy(update={"tool": new})),
            n.id,
            f"{n.tool} replaced by the {kind} {new}",
            extra_tools=[] if new in tools else [new],
        )
    return None


def _toolcall_missing(plan, cands, tools, rng, _ct):
    ids = plan.ids
    for n in cands:
        users = [
            m
            for m in plan.call_nodes
            if m.id != n.id and m.status != "done" and n.id in _referenced(m, ids)
        ]
        if not users:
            continue
        try:
            flawed = Plan.from_nodes(remove_call(plan.nodes, n.id, PARARECOVER), plan.thought)
        except ValueError:
            continue
        return Injection(
            ErrorType.TOOLCALL_MISSING,
            flawed,
            sorted(users, key=lambda x: flawed.ids.index(x.id))[0].id,
            f"removed the call {n.id} ({n.tool}) that node {users[0].id} needs",
        )
    return None


def _toolcall_redundancy(plan, cands, tools, rng, _ct):
    for n in cands:
        nodes, new_id = duplicate_call(plan.nodes, n.id)
        return Injection(
            ErrorType.TOOLCALL_REDUNDANCY,
            Plan.from_nodes(nodes, plan.thought),
            new_id,
            f"node {new_id} repeats node {n.id} ({n.tool})",
        )
    return None


def _carries_state(tools: Mapping[str, ToolSpec], w: PlanNode, m: PlanNode) -> bool:
    """Whether ``m`` waiting for ``w`` is needed for state (then the edge is no flaw)."""
    return orders_state(tools.get(w.tool or ""), tools.get(m.tool or ""))


def _dependence_error(plan, cands, tools, rng, _ct):
    ids = plan.ids
    for m in cands:
        used = sorted(d for d in m.deps if d in _referenced(m, ids))
        if not used:
            continue
        src = rng.choice(used)
        refs = _referenced(m, ids)
        wrong = [
            w
            for w in wrong_dependencies(plan.nodes, m.id, src)
            if src not in plan.ancestors(w)
            and w not in refs
            and not _carries_state(tools, plan.node(w), m)
        ]
        if not wrong:
            continue
        w = rng.choice(wrong)
        flawed = _replace(plan, swap_dependency(m, src, w))
        # the source must not stay an ancestor through another route
        if src in flawed.ancestors(m.id):
            continue
        return Injection(
            ErrorType.DEPENDENCE_ERROR,
            flawed,
            m.id,
            f"node {m.id} depends on {w} instead of {src}, whose output it uses",
        )
    return None


def _dependence_null(plan, cands, tools, rng, _ct):
    ids = plan.ids
    for m in cands:
        used = sorted(d for d in m.deps if d in _referenced(m, ids))
        rng.shuffle(used)
        for src in used:
            flawed = _replace(plan, with_deps(m, [d for d in m.deps if d != src]))
            if src in flawed.ancestors(m.id):
                continue
            layer = _layer_of(flawed)
            if layer[src] == layer[m.id]:
                continue  # that would read as running in parallel: a Parallelism_Error
            return Injection(
                ErrorType.DEPENDENCE_NULL,
                flawed,
                m.id,
                f"node {m.id} lost its dependency on {src}, whose output it uses",
            )
    return None


def _parallelism_error(plan, cands, tools, rng, _ct):
    ids = plan.ids
    for m in cands:
        used = sorted(d for d in m.deps if d in _referenced(m, ids) and d != ROOT)
        rng.shuffle(used)
        refs = _referenced(m, ids)
        layer0 = _layer_of(plan)
        for src in used:
            s = plan.node(src)
            # m moves up beside src: it drops src (and whatever it waits for no earlier than
            # src) and keeps only dependencies it really uses, so the flaw is the missing edge
            # to a producer in the same wave, not a dependency on something it never reads
            deps = [d for d in m.deps if d != src and layer0.get(d, 0) < layer0[src]]
            deps += [d for d in s.deps if d in refs]
            flawed = _replace(plan, with_deps(m, deps))
            if src in flawed.ancestors(m.id):
                continue
            layer = _layer_of(flawed)
            if layer[src] != layer[m.id]:
                continue
            return Injection(
                ErrorType.PARALLELISM_ERROR,
                flawed,
                m.id,
                f"node {m.id} runs in parallel with {src}, whose output it needs",
            )
    return None


def _serial_error(plan, cands, tools, rng, _ct):
    for m in cands:
        others = [
            w
            for w in unordered_calls(plan.nodes, m.id)
            if not _carries_state(tools, plan.node(w), m)
        ]
        if not others:
            continue
        w = rng.choice(others)
        return Injection(
            ErrorType.SERIAL_ERROR,
            _replace(plan, add_dependency(m, w, PARARECOVER)),
            m.id,
            f"node {m.id} waits for {w}, whose output it never uses",
        )
    return None


def _response_error(kind: ErrorType):
    def fn(plan, cands, tools, rng, _ct):
        if not cands:
            return None
        n = cands[0]
        return Injection(
            kind,
            plan,
            n.id,
            f"the call {n.id} ({n.tool}) returned "
            + ("an empty result" if kind is ErrorType.NULL_ERROR else "a timeout"),
            result=NULL_RESULT if kind is ErrorType.NULL_ERROR else TIMEOUT_RESULT,
        )

    return fn


_INJECTORS = {
    ErrorType.PARAMETER_MISSING: _param_missing,
    ErrorType.PARAMETER_INVALID: _param_invalid,
    ErrorType.PARAMETER_ERROR: _param_error,
    ErrorType.TYPE_ERROR: _type_error,
    ErrorType.TOOL_NAME_ERROR: _tool_name_error,
    ErrorType.TOOL_SELECT_ERROR: _tool_select_error,
    ErrorType.TOOLCALL_MISSING: _toolcall_missing,
    ErrorType.TOOLCALL_REDUNDANCY: _toolcall_redundancy,
    ErrorType.DEPENDENCE_ERROR: _dependence_error,
    ErrorType.DEPENDENCE_NULL: _dependence_null,
    ErrorType.SERIAL_ERROR: _serial_error,
    ErrorType.PARALLELISM_ERROR: _parallelism_error,
    ErrorType.NULL_ERROR: _response_error(ErrorType.NULL_ERROR),
    ErrorType.TIMEOUT_ERROR: _response_error(ErrorType.TIMEOUT_ERROR),
}
assert set(_INJECTORS) == set(ErrorType)


# ---------------------------------------------------------------------------------------------
# simulating rounds of a (flawed) plan
@dataclass
class RoundRun:
    """The rounds a plan ran before the replanner is asked (the instance's history)."""

    rounds: list[list[str]]  # node ids per round, in order
    results: dict[str, Any]  # node id -> what its call returned (output or error)
    ok: dict[str, bool]
    args: dict[str, dict[str, Any]]  # node id -> resolved arguments (as called)
    state: WorldState


def run_round(
    plan: Plan,
    world: World,
    out: RoundRun,
    *,
    forced: Mapping[str, Any] | None = None,
) -> list[str]:
    """Run one frontier round of ``plan`` after the rounds in ``out`` (updated in place).

    Every call of the round is taken as done whatever it returned — an agent that did not
    notice — so later rounds run on bad outputs, as errors propagate. The calls of a round run in
    parallel: none sees another's output. ``forced`` maps node ids to results that replace their
    outputs (an empty result, a timeout) without running them. Returns the round's node ids.
    """
    forced = forced or {}

    def visit(nid: str, call: Call, res: ExecResult, _again: Callable[[], ExecResult]) -> bool:
        out.ok[nid] = res.ok
        out.args[nid] = dict(res.resolved_args or call.args)
        out.results[nid] = res.observation if res.ok else f"Error: {res.verdict.message}"
        return True  # every call of the round runs, whatever the others returned

    done = [n for r in out.rounds for n in r]
    wave = run_wave(plan, world, done, out.results, visit, skip=forced)
    if not wave.calls:
        return []
    out.rounds.append(wave.calls)
    for nid in wave.calls:
        if nid in forced:
            out.results[nid], out.ok[nid] = forced[nid], False
            out.args[nid] = dict(plan.node(nid).args)
    out.state = world.state
    return wave.calls


def run_rounds(
    plan: Plan,
    world: World,
    k: int,
    *,
    forced: Mapping[str, Any] | None = None,
) -> RoundRun:
    """Run ``k`` frontier rounds of ``plan`` (see :func:`run_round`)."""
    out = RoundRun(rounds=[], results={}, ok={}, args={}, state=world.state)
    for _ in range(k):
        if not run_round(plan, world, out, forced=forced):
            break
    return out


def _short(value: Any, limit: int = 240) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------------------------------------
# the synthetic suite
def _apportion(weights: Mapping[ErrorType, float], n: int) -> list[ErrorType]:
    """``n`` types in the proportions of ``weights`` (largest remainder)."""
    total = sum(weights.values())
    raw = {t: n * w / total for t, w in weights.items()}
    base = {t: int(v) for t, v in raw.items()}
    left = n - sum(base.values())
    for t, _ in sorted(raw.items(), key=lambda kv: (-(kv[1] - int(kv[1])), kv[0].value))[:left]:
        base[t] += 1
    return [t for t in ErrorType for _ in range(base.get(t, 0))]


@dataclass
class _Slot:
    level: str
    types: list[ErrorType]  # one per erroneous round, in round order


def _slots(n1: int, n2: int, rng: random.Random) -> list[_Slot]:
    slots = [_Slot("LEVEL-1", [t]) for t in _apportion(dict(LEVEL1_COUNTS), n1)]
    n_third = round(n2 * LEVEL2_THIRD_ROUND)
    r1 = _apportion({t: c[0] for t, c in LEVEL2_COUNTS.items()}, n2)
    r2 = _apportion({t: c[1] for t, c in LEVEL2_COUNTS.items()}, n2)
    r3 = _apportion({t: c[2] for t, c in LEVEL2_COUNTS.items()}, n_third)
    for lst in (r1, r2, r3):
        rng.shuffle(lst)
    for i in range(n2):
        types = [r1[i], r2[i]] + ([r3[i]] if i < n_third else [])
        slots.append(_Slot("LEVEL-2", types))
    rng.shuffle(slots)
    return slots


#: types whose flaw is in the call itself: the call fails in the round the flaw is written for
_CALL_LEVEL = {
    ErrorType.PARAMETER_MISSING,
    ErrorType.PARAMETER_INVALID,
    ErrorType.PARAMETER_ERROR,
    ErrorType.TYPE_ERROR,
    ErrorType.TOOL_NAME_ERROR,
    ErrorType.TOOL_SELECT_ERROR,
    ErrorType.TOOLCALL_REDUNDANCY,
    ErrorType.NULL_ERROR,
    ErrorType.TIMEOUT_ERROR,
}


def _build_instance(
    base: Task, slot: _Slot, rng: random.Random, corpus: Any
) -> tuple[Plan, RoundRun, list[Injection], list[int]] | None:
    """Write ``slot``'s errors into ``base``'s gold plan, each in a strictly later round, and
    run the history to the round of the last one (``k``); returns the rounds the errors were
    written for as well.

    The plan evolves as in a real run: rounds before an error's round run the plan as it was
    then; the error is written into the plan's pending part (by the replan before its round),
    and from that round on the flawed plan runs. A call-level error sits in a call of its round
    (the call fails there, its output is wrong); a dependency or ordering error is written into
    a node not yet run. Returns (final plan, history, injections, error rounds) or ``None``.
    """
    gold = Plan.parse(base.gold_plan)
    assert isinstance(gold, Plan)
    tools = {t: corpus.tools[t] for t in base.tools}
    world = World(dict(corpus.tools), corpus.initial_state(base.world_seed), seed=base.world_seed)
    history = RoundRun(rounds=[], results={}, ok={}, args={}, state=world.state)
    plan = gold
    injections: list[Injection] = []
    rounds_of: list[int] = []
    forced: dict[str, Any] = {}
    for i, et in enumerate(slot.types):
        later = len(slot.types) - i - 1
        remaining = plan.depth - len(history.rounds)  # rounds left if nothing moves
        if remaining - later < 1:
            return None
        # more rounds of the current plan before this error's round, leaving room for the rest
        for _ in range(rng.randrange(remaining - later)):
            if not run_round(plan, world, history, forced=forced):
                return None
        done = {n for r in history.rounds for n in r}
        frontier, _ = plan.next_wave(done)
        pending = [n.id for n in plan.call_nodes if n.id not in done]
        sites = frontier if et in _CALL_LEVEL else pending
        flawed_nodes = {x.node for x in injections}  # one error per node: no conflated flaws
        sites = [n for n in sites if n not in flawed_nodes]
        inj = inject(plan, et, tools, rng, nodes=sites, corpus_tools=corpus.tools)
        if inj is None:
            return None
        if et is not ErrorType.TOOLCALL_MISSING and inj.plan.get(inj.node) is None:
            return None
        injections.append(inj)
        rounds_of.append(len(history.rounds) + 1)  # the round this flawed plan first runs
        plan = inj.plan
        if inj.error_type in RESPONSE_TYPES:
            forced[inj.node] = inj.result
        # this error's round runs now; the next error comes in a later round
        if later and not run_round(plan, world, history, forced=forced):
            return None
    # the last round: the flawed plan's frontier runs and becomes the last wave
    if not run_round(plan, world, history, forced=forced):
        return None
    assert rounds_of[-1] == len(history.rounds)
    last = injections[-1]
    done_before = {n for r in history.rounds[:-1] for n in r}
    if last.node in done_before:
        return None  # the latest error must sit in the latest round or after it
    if last.error_type in _CALL_LEVEL and last.node not in history.rounds[-1]:
        return None
    if slot.level == "LEVEL-1" and any(
        not history.ok.get(n, True) for r in history.rounds[:-1] for n in r
    ):
        return None  # LEVEL-1: nothing went wrong before the latest round
    return plan, history, injections, rounds_of


def _instance_plan(flawed: Plan, history: RoundRun) -> Plan:
    """The plan as the replanner reads it: earlier rounds done (results in desc), round k
    pending."""
    earlier = {n for r in history.rounds[:-1] for n in r}
    nodes = []
    for n in flawed.nodes:
        if n.id in earlier:
            res = _short(history.results.get(n.id))
            n = n.model_copy(
                update={"status": "done", "desc": f"{n.desc}. Execution result: {res}"}
            )
        elif n.id != ROOT:
            n = n.model_copy(update={"status": "pending"})
        nodes.append(n)
    return Plan(nodes=nodes, thought=flawed.thought)


def generate_synth(
    seed: int = 0,
    n_level1: int = 400,
    n_level2: int = 400,
    corpus: Any = None,
    toolmaze_seed: int = 0,
) -> list[Task]:
    """The ``pararecover-synth`` suite: ``n_level1`` LEVEL-1 and ``n_level2`` LEVEL-2 instances
    built from ToolMaze gold paths, with the paper's balance of error types.

    Each error-type slot takes the next base task (in a seeded order) that has a place for it;
    a slot no task can host is dropped (``stats`` reports the realised counts).
    """

    # the base tasks: toolmaze-guided's frozen NP instances when they are the ones the
    # generator would give (the pinned seed and the shipped corpus), else generated (minutes)
    bases = None
    if corpus is None:
        bases = read_frozen_suite(toolmaze_seed, LEVELS, ["NP"], PER_LEVEL, name=GUIDED)
    corpus = corpus or load_corpus()
    if bases is None:
        bases = generate(seed=toolmaze_seed, modes=["NP"], corpus=corpus)
    rng = random.Random(stable_seed(SUITE, seed))
    order = list(range(len(bases)))
    rng.shuffle(order)
    out: list[Task] = []
    cursor = 0
    counters = {"LEVEL-1": 0, "LEVEL-2": 0}
    for slot in _slots(n_level1, n_level2, rng):
        built = None
        for step in range(len(bases)):
            base = bases[order[(cursor + step) % len(order)]]
            srng = random.Random(stable_seed(SUITE, seed, slot.level, counters[slot.level], step))
            built = _build_instance(base, slot, srng, corpus)
            if built is not None:
                cursor = (cursor + step + 1) % len(order)
                break
        if built is None:
            continue
        flawed, history, injections, err_rounds = built
        counters[slot.level] += 1
        out.append(
            _to_task(base, slot, flawed, history, injections, err_rounds, counters[slot.level])
        )
    return out


def _to_task(
    base: Task,
    slot: _Slot,
    flawed: Plan,
    history: RoundRun,
    injections: list[Injection],
    err_rounds: list[int],
    number: int,
) -> Task:
    gold = Plan.parse(base.gold_plan)
    assert isinstance(gold, Plan)
    plan = _instance_plan(flawed, history)
    last_wave = history.rounds[-1] if history.rounds else []
    fun_call = [
        {
            "name": plan.node(n).tool,
            "arguments": history.args.get(n, {}),
            "results": history.results.get(n),
        }
        for n in last_wave
    ]
    tools = list(base.tools)
    for inj in injections:
        for t in inj.extra_tools:
            if t not in tools:
                tools.append(t)
    level_tag = "L1" if slot.level == "LEVEL-1" else "L2"
    k = len(history.rounds)
    return Task(
        task_id=f"{SUITE}-{level_tag}-{number:04d}",
        suite=SUITE,
        query=base.query,
        tools=tools,
        level=slot.level,
        mode="NP",
        world_seed=base.world_seed,  # a run from the query starts in the corpus start state
        gold_plan=base.gold_plan,
        valid_paths=[[n.tool or "" for n in gold.call_nodes]],
        optimal_rounds=gold.depth + 1,
        min_calls=len(gold.call_nodes),
        rounds_include_response=True,  # G counts tool-call waves + 1 response round
        replan_point=ReplanPoint(
            rounds_executed=k,
            calls_executed=sum(len(r) for r in history.rounds),
            plan=json.dumps(plan.to_pararecover(), ensure_ascii=False),
            last_wave=fun_call,
            # a call that failed (or was forced to) never counts as run, whatever the plan says
            outputs={n: history.results[n] for r in history.rounds for n in r if history.ok[n]},
            # the world after the history: where a replan's continuation runs
            state=history.state.to_dict(),
        ),
        checker=base.checker,
        metadata={
            "source_task": base.base_id,
            "error_types": [i.error_type.value for i in injections],
            "error_rounds": err_rounds,
            "error_nodes": [i.node for i in injections],
            "error_details": [i.detail for i in injections],
        },
    )


def synth_stats(tasks: Sequence[Task]) -> dict[str, Any]:
    """Counts per level and error type (LEVEL-2 per round), and mean G / gt calls."""
    out: dict[str, Any] = {}
    for level in ("LEVEL-1", "LEVEL-2"):
        ts = [t for t in tasks if t.level == level]
        by_round: dict[str, dict[str, int]] = {}
        for t in ts:
            for i, et in enumerate(t.metadata["error_types"], start=1):
                key = "types" if level == "LEVEL-1" else f"round_{i}"
                by_round.setdefault(key, {})
                by_round[key][et] = by_round[key].get(et, 0) + 1
        out[level] = {
            "instances": len(ts),
            **{k: dict(sorted(v.items())) for k, v in sorted(by_round.items())},
            "mean_round_gt": round(sum(t.optimal_rounds or 0 for t in ts) / len(ts), 2)
            if ts
            else 0,
            "mean_funcall_times_gt": round(sum(t.min_calls or 0 for t in ts) / len(ts), 2)
            if ts
            else 0,
            "mean_rounds_executed": round(
                sum(t.replan_point.rounds_executed if t.replan_point else 0 for t in ts) / len(ts),
                2,
            )
            if ts
            else 0,
        }
    return out


__all__ = [
    "LEVEL1_COUNTS",
    "LEVEL2_COUNTS",
    "RESPONSE_TYPES",
    "STATIC_TYPES",
    "SUITE",
    "Injection",
    "RoundRun",
    "generate_synth",
    "inject",
    "run_rounds",
    "synth_stats",
]


# ---------------------------------------------------------------------------------------------
# export in the upstream file format
def to_records(tasks: Sequence[Task], corpus: Any = None) -> list[dict[str, Any]]:
    """``pararecover-synth`` tasks as records of the upstream ``.jsonl`` files.

    LEVEL-1 records carry ``tag``, LEVEL-2 records ``tag_1``..``tag_3`` (one per erroneous
    round); ``plan``, ``tool_list`` and ``fun_call`` are JSON strings, as in the augmented file.
    :func:`replan.suites.pararecover.parse_record` reads them back.
    """
    if corpus is None:
        corpus = load_corpus()
    out = []
    for i, t in enumerate(tasks, start=1):
        meta = t.metadata
        point = t.replan_point
        if point is None or point.plan is None:
            raise ValueError(f"task {t.task_id} has no replan point: not a {SUITE} task")
        tool_list = [
            {
                "name": name,
                "description": corpus.tools[name].description,
                "parameters": {
                    k: {kk: vv for kk, vv in v.items() if not kk.startswith("x-")}
                    for k, v in corpus.tools[name].parameters["properties"].items()
                },
                "required": list(corpus.tools[name].parameters["required"]),
            }
            for name in t.tools
            if name in corpus.tools
        ]
        rec: dict[str, Any] = {
            "id": i,
            "query_id": t.task_id,
            "query": t.query,
            "tool_list": json.dumps(tool_list, ensure_ascii=False),
            "plan": point.plan,
            "error_reason": "; ".join(meta.get("error_details") or []),
            "funcall_times_gt": str(t.min_calls),
            "round_gt": str(t.optimal_rounds),
        }
        types = list(meta["error_types"])
        if t.level == "LEVEL-1":
            rec["tag"] = types[0]
        else:
            for j in range(3):
                rec[f"tag_{j + 1}"] = types[j] if j < len(types) else None
        rec["fun_call"] = json.dumps(
            [c.model_dump() for c in point.last_wave], ensure_ascii=False, default=str
        )
        out.append(rec)
    return out


# ---------------------------------------------------------------------------------------------
# the suite as replan run, replan suites and load_suite see it
def _stats(*, seed: int = 0, progress: Any = None) -> dict[str, Any]:
    """The whole suite (frozen at the pinned seed, generated otherwise), counted
    (:func:`synth_stats`); at the pinned seed, the counts stored when it was frozen."""
    frozen = read_frozen_stats(SUITE, {"seed": seed})
    if frozen is not None:
        return {"suite": SUITE, "seed": seed, **frozen}
    if progress is not None and frozen_file(SUITE, {"seed": seed}) is None:
        progress("generating the pararecover-synth suite", 0, 0)
    return {"suite": SUITE, "seed": seed, **synth_stats(load(seed=seed))}


@suite(
    SUITE,
    description="ParaRecover-style replan points with known errors, from ToolMaze gold paths",
    start="replan_point",
    default_designs=("replanner_loop",),
    stats=_stats,
    stats_view=lambda report: error_type_views(
        SUITE, {k: v for k, v in report.items() if k.startswith("LEVEL")}
    ),
    budgets=PROTOCOL_BUDGETS,
)
def load(
    *,
    n_level1: int = 400,
    n_level2: int = 400,
    levels: Iterable[str] | str | None = None,
    limit: int | None = None,
    seed: int = 0,
    version: str | int | None = None,
) -> list[Task]:
    """The ``pararecover-synth`` suite: :func:`generate_synth` (read from the pinned version's
    frozen file at the default seed and sizes), then ``levels`` and ``limit``. ``version``: an
    earlier version kept as its frozen file (``-S version=3``), at the default seed and sizes."""
    defining = {"seed": int(seed), "n_level1": int(n_level1), "n_level2": int(n_level2)}
    older = None if version in (None, "") else str(version)
    path = frozen_file(SUITE, {**defining, "version": older})
    if older is not None and path is None:
        raise ValueError(
            f"{SUITE} version {older} is kept as its frozen file only: seed 0, 400 + 400"
        )
    tasks = read_frozen(path) if path is not None else generate_synth(**defining)
    wanted = {lv.upper() for lv in csv_option(levels) or ()}
    if wanted:
        tasks = [t for t in tasks if (t.level or "").upper() in wanted]
    return tasks[: int(limit)] if limit is not None else tasks
