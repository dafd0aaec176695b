"""``replan.evaluate_in_place``: your agent, your tools, your tasks — under NP and P1–P4.

For every task × mode × seed (and every agent, when several are given) the agent runs once with
the one tool wrapper's session activated (:mod:`replan.env.tool_wrapper`): calls are recorded and
judged against each tool's own args schema, and the mode's seeded fault is injected. Each run
becomes an :class:`~replan.core.trace.Episode`, is scored once by replan's evaluators and stored
with its feedback in the same results store as ``replan run`` (``OUT/results.sqlite``), so
``replan report OUT`` works on it. The printed table gives per mode: TSR and PRR with 95%
intervals (PRR over *exposed* runs only — a fault that never fired is "not exposed", never
"recovered"), RC where a task gives ``min_calls``, TER / AUC-PEC / mean FED, and the paired
comparison against the clean baseline (NP) on the same (task, seed) pairs: McNemar on success
and a paired-bootstrap interval of the success difference.

Decisions:

- **Agent or factory.** A callable without ``invoke`` is a factory ``make_agent(tools)``: it
  gets the wrapped tools (:func:`~replan.env.tool_wrapper.wrap_tools`) and is called once per
  episode. An agent object must already route its tool calls through
  :class:`~replan.inplace.middleware.FaultInjectionMiddleware` or wrapped tools; a run whose
  agent made tool calls that nothing recorded stops with a message saying so.
- **A fault that escapes the agent** (the injected exception propagates out of the graph,
  e.g. ``create_agent`` without a retry or error handler) ends the episode ``gave_up``: it is
  the agent's own outcome under the fault, not an infrastructure failure, so it counts in PRR.
- **Victims.** The fault's target is the task's ``target``, else ``target=``, else every
  tool as one group (the first tool the agent calls is the victim); ``groups`` declares
  alternative groups (a transient fault is recovered by re-invoking the victim or any member).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.errors import GraphRecursionError

from replan.core.aio import call_outside_loop
from replan.core.task import MODES, Checker, FaultSetup, Task
from replan.core.taxonomy import VerdictCode
from replan.core.trace import Call, EndReason, Episode, Step, Usage, Verdict
from replan.env.tool_faults import ANY_TOOL, FaultSchedule, InjectedFault
from replan.env.tool_wrapper import FaultSession, activate, as_base_tool, async_only, wrap_tools
from replan.evaluators import EpisodeScore
from replan.evaluators.perturbation import recovery_record
from replan.evaluators.prefix import prefix_record, summarize_prefix
from replan.evaluators.sde import sde_record
from replan.evaluators.stats import N_BOOT, bootstrap_mean, mcnemar, paired_bootstrap, wilson
from replan.inplace.tasks import InPlaceTask, load_tasks
from replan.inplace.verdicts import (
    aimed,
    carried_corruption,
    check_declared_field,
    check_field_syntax,
    check_named_field,
    clean_profile,
    judge_undetermined,
)
from replan.nodes.llm import describe_error
from replan.suites.versions import custom_identity

SUITE = "inplace"
PERTURBED = ("P1", "P2", "P3", "P4")


def _modes(modes: str | Sequence[str]) -> list[str]:
    wanted = [m.strip() for m in modes.split(",")] if isinstance(modes, str) else list(modes)
    bad = [m for m in wanted if m not in MODES]
    if bad:
        raise ValueError(f"unknown mode(s) {bad}; expected some of {list(MODES)}")
    return ["NP", *[m for m in MODES[1:] if m in wanted]]  # the clean baseline always runs


def _agents(agent_or_factory: Any, name: str | None) -> dict[str, Any]:
    if isinstance(agent_or_factory, Mapping):
        if not agent_or_factory:
            raise ValueError("evaluate_in_place: no agent given")
        return {str(k): v for k, v in agent_or_factory.items()}
    label = (
        name
        or getattr(agent_or_factory, "name", None)
        or getattr(agent_or_factory, "__name__", None)
    )
    if not isinstance(label, str) or not label or label == "LangGraph":
        label = "agent"
    return {label: agent_or_factory}


def _final_answer(messages: Sequence[Any]) -> str | None:
    for m in reversed(messages):
        if isinstance(m, AIMessage):
            if m.tool_calls:
                return None
            text = m.text if hasattr(m, "text") else str(m.content)
            return text or None
    return None


def _messages_of(state: Any, where: str) -> list[Any]:
    if isinstance(state, Mapping) and isinstance(state.get("messages"), list):
        return state["messages"]
    raise ValueError(
        f"{where}: the agent returned {type(state).__name__}, not a state with a 'messages' list; "
        "evaluate_in_place runs message-based agents (create_agent, a StateGraph with messages)"
    )


def _tool_calls_made(messages: Sequence[Any]) -> dict[str, int]:
    """call id -> model turn (1-based) for every tool call the agent's model issued."""
    out: dict[str, int] = {}
    turn = 0
    for m in messages:
        if isinstance(m, AIMessage):
            turn += 1
            for tc in m.tool_calls:
                if tc.get("id"):
                    out[str(tc["id"])] = turn
    return out


def with_unknown_tool_calls(
    steps: Sequence[Step], messages: Sequence[Any], names: set[str]
) -> list[Step]:
    """``steps`` plus a step for each call the model made to a tool that does not exist (a
    ``ToolNode`` answers those itself, so no tool and no wrapper ever sees them), in the
    conversation's order, renumbered: such a call is the agent's error (``unknown_tool``)."""
    recorded = {s.call.call_id for s in steps if s.call.call_id}
    out = list(steps)
    after: dict[str, int] = {}  # call id -> its position in ``out``
    for i, s in enumerate(out):
        if s.call.call_id:
            after[s.call.call_id] = i
    last = -1
    replies = {
        m.tool_call_id: (m.text if hasattr(m, "text") else str(m.content))
        for m in messages
        if isinstance(m, ToolMessage)
    }
    added = False
    for m in messages:
        if not isinstance(m, AIMessage):
            continue
        for tc in m.tool_calls:
            cid = str(tc.get("id") or "")
            if cid in after:
                last = max(last, after[cid])
                continue
            if tc["name"] in names or cid in recorded or not cid:
                continue
            step = Step(
                index=0,
                call=Call(tool=tc["name"], args=dict(tc.get("args") or {}), call_id=cid),
                verdict=Verdict(
                    code=VerdictCode.UNKNOWN_TOOL, message=f"no tool named {tc['name']!r}"
                ),
                observation={"error": replies.get(cid, "")[:300]},
            )
            last += 1
            out.insert(last, step)
            after = {x.call.call_id: i for i, x in enumerate(out) if x.call.call_id}
            added = True
    if not added:
        return out
    first = steps[0].index if steps else 0
    return [s.model_copy(update={"index": first + i}) for i, s in enumerate(out)]


@dataclass
class _Job:
    design: str
    agent: Any
    task: InPlaceTask
    core: Task
    mode: str
    seed: int
    schedule: FaultSchedule | None


def _describe(exc: BaseException) -> str:
    return describe_error(exc)


def run_episode(
    job: _Job,
    tools: Sequence[Any],
    *,
    use_async: bool,
    recursion_limit: int,
    clean: Mapping[str, Any] | None = None,
) -> Episode:
    """Run one task in one mode and seed; never raises for the agent's own failure.

    ``clean``: the record of the same task's clean run (:func:`~replan.inplace.verdicts.clean_profile`):
    an implicit fault is aimed at what it consumed, and the episode carries it for scoring."""
    schedule = aimed(job.schedule, clean) if job.schedule is not None else None
    faults = schedule.for_episode(job.task.id, job.seed) if schedule is not None else None
    session = FaultSession(faults)
    where = f"task {job.task.id!r} ({job.mode}, seed {job.seed}, agent {job.design!r})"
    cfg = {"recursion_limit": recursion_limit, "configurable": {"thread_id": uuid.uuid4().hex}}
    state: Any = None
    reason: EndReason | None = None
    error: str | None = None
    t0 = time.perf_counter()

    def go() -> Any:
        with activate(session):
            agent = job.agent
            if not hasattr(agent, "invoke"):
                agent = agent(wrap_tools(tools))
            if use_async:
                return asyncio.run(agent.ainvoke(job.task.agent_input(), cfg))
            return agent.invoke(job.task.agent_input(), cfg)

    try:
        state = call_outside_loop(go)
    except GraphRecursionError as exc:
        reason, error = EndReason.STEP_BUDGET, _describe(exc)
    except InjectedFault as exc:
        reason = EndReason.GAVE_UP
        error = f"an injected fault propagated out of the agent: {_describe(exc)}"
    except Exception as exc:
        reason, error = EndReason.CRASHED, _describe(exc)
    wall = time.perf_counter() - t0
    messages = _messages_of(state, where) if reason is None else []
    made = _tool_calls_made(messages)
    if made and not session.steps:
        raise ValueError(
            f"{where}: the agent made {len(made)} tool call(s) but none was recorded: build it "
            "with replan.FaultInjectionMiddleware() in create_agent(middleware=[...]) or with "
            "replan.wrap_tools(tools), or pass a factory make_agent(tools) instead"
        )
    steps = [
        s.model_copy(update={"round": made.get(s.call.call_id or "", s.round)})
        for s in with_unknown_tool_calls(session.steps, messages, {t.name for t in tools})
    ]
    answer = _final_answer(messages) if reason is None else None
    if reason is None:
        reason = EndReason.ANSWERED if answer else EndReason.GAVE_UP
        if answer is None:
            error = "the agent ended without a final answer"
    success, why = False, error or "no answer"
    if reason is EndReason.ANSWERED:
        success, why = job.task.judge(state, answer)
        form = carried_corruption(steps, answer, job.task.query, clean)
        if form is not None:
            success, why = False, f"the answer carries an injected (sentinel) value: {form}"
    episode = Episode(
        episode_id=uuid.uuid4().hex,
        task_id=job.core.task_id,
        suite=SUITE,
        design=job.design,
        model="user",
        seed=job.seed,
        mode=job.mode,
        query=job.task.query,
        steps=steps,
        final_answer=answer,
        end_reason=reason,
        error=error,
        success=success,
        usage=Usage(
            model_calls=sum(1 for m in messages if isinstance(m, AIMessage)),
            tool_calls=len(steps),
            wall_time_s=wall,
        ),
        metadata={
            "base_id": job.task.id,
            "check": why,
            "notes": dict(session.notes),
            "task": job.core.model_dump(mode="json"),
            **({"clean_run": dict(clean)} if clean is not None else {}),
        },
    )
    return episode


def carried_sentinel(steps: Sequence[Step], answer: str | None) -> Any:
    """How ``answer`` carries an injected corrupted value (any recognised form), or ``None``."""
    return carried_corruption(steps, answer, None)


# -- scoring -------------------------------------------------------------------------------------
class _Groups:
    """The corpus-shaped view of the user's alternative groups (for recovery_record)."""

    def __init__(self, groups: Mapping[str, Sequence[str]]):
        self.groups = {k: SimpleNamespace(tools=list(v)) for k, v in groups.items()}


def score_episode_inplace(episode: Episode, task: Task, groups: Mapping[str, Sequence[str]]) -> Any:
    """Every per-run record of one in-place episode: prefix from the recorded verdicts (the
    tools are yours, not replan's corpus), recovery with your alternative groups."""
    return EpisodeScore(
        episode,
        task,
        {
            "prefix": prefix_record(episode, None),
            "toolmaze": recovery_record(
                episode, task, success=episode.success, corpus=_Groups(groups)
            ),
            "sde": sde_record(episode, task, success=episode.success),
        },
    )


def _est(e: Any) -> dict[str, Any]:
    return e.to_dict() if hasattr(e, "to_dict") else dict(e)


def mode_table(
    scores: Sequence[Any], *, seed: int = 0, n_boot: int = N_BOOT
) -> dict[str, dict[str, Any]]:
    """Per mode: TSR, PRR (exposed / not exposed), RC, TER, AUC-PEC, FED and the paired
    comparison with NP on the same (task, seed) pairs."""
    by_mode: dict[str, list[Any]] = {}
    for s in scores:
        by_mode.setdefault(s.episode.mode or "NP", []).append(s)
    base = {
        (s.episode.metadata.get("base_id"), s.episode.seed): bool(s.episode.success)
        for s in by_mode.get("NP", [])
    }
    out: dict[str, dict[str, Any]] = {}
    for mode in [m for m in MODES if m in by_mode]:
        ss = by_mode[mode]
        n = len(ss)
        row: dict[str, Any] = {
            "runs": n,
            "tsr": _est(wilson(sum(bool(s.episode.success) for s in ss), n)),
        }
        pre = summarize_prefix([s.prefix for s in ss], seed=seed, n_boot=n_boot)
        row["ter"] = pre["prefix.ter"]
        row["auc_pec"] = pre["prefix.auc_pec"]
        row["fed_mean"] = pre["prefix.fed_mean"]
        row["pec"] = pre["prefix.pec"]
        row["first_error_types"] = pre["prefix.first_error_types"]
        if mode in PERTURBED:
            exposed = [s.recovery for s in ss if s.recovery.exposed]
            decided = [r for r in exposed if r.counts_for_prr]
            prr = _est(wilson(sum(1 for r in decided if r.recovered), len(decided)))
            prr["exposed"] = len(exposed)
            prr["not_exposed"] = n - len(exposed)
            prr["not_consumed"] = sum(1 for r in exposed if r.verdict == "not consumed")
            prr["undetermined"] = sum(1 for r in exposed if r.verdict == "undetermined")
            prr["judged"] = sum(1 for r in exposed if r.judged)
            row["prr"] = prr
            terms = [s.recovery.rc_term for s in ss]
            defined = [t for t in terms if t is not None]
            rc = _est(bootstrap_mean(defined, key=f"inplace.rc.{mode}", seed=seed, n_boot=n_boot))
            rc["rc_unknown"] = len(terms) - len(defined)
            row["rc"] = rc if defined else None
            pairs = [
                (base[k], bool(s.episode.success))
                for s in ss
                if (k := (s.episode.metadata.get("base_id"), s.episode.seed)) in base
            ]
            if pairs:
                a = [p[0] for p in pairs]
                b = [p[1] for p in pairs]
                row["vs_np"] = {
                    "mcnemar": mcnemar(a, b),
                    "tsr_delta": paired_bootstrap(
                        [float(x) for x in b],
                        [float(x) for x in a],
                        key=f"inplace.delta.{mode}",
                        seed=seed,
                        n_boot=n_boot,
                    ),
                }
        out[mode] = row
    return out


# -- results ---------------------------------------------------------------------------------------
_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": lambda a, b: a >= b,
    ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b,
    "<": lambda a, b: a < b,
    "==": lambda a, b: abs(a - b) < 1e-12,
}


def _delta(vs: Mapping[str, Any] | None) -> str:
    """'+0.10 [-0.05, +0.25] p=0.500'; no interval where too few pairs give none."""
    d = vs["tsr_delta"] if vs else None
    if not d or d.get("difference") is None:
        return ""
    text = f"{d['difference']:+.2f} "
    if d.get("low") is not None and d.get("high") is not None:
        text += f"[{d['low']:+.2f}, {d['high']:+.2f}] "
    p = vs["mcnemar"].get("p_value") if vs else None
    return text + (f"p={p:.3f}" if p is not None else "")


def _decided(prr: Mapping[str, Any]) -> str:
    """' (n of m exp.)', and how many of the n an LLM judge decided."""
    judged = f", {prr['judged']} judged" if prr.get("judged") else ""
    return f" ({prr['n']} of {prr['exposed']} exp.{judged})"


def _fmt(est: Mapping[str, Any] | None, extra: str = "") -> str:
    if not est or est.get("value") is None:
        return "–" + extra
    text = f"{est['value']:.2f}"
    if est.get("low") is not None and est.get("high") is not None:
        text += f" [{est['low']:.2f}, {est['high']:.2f}]"
    return text + extra


@dataclass
class InPlaceResults:
    """What :func:`evaluate_in_place` produced: episodes, per-design per-mode tables, and
    assertions for tests (``assert_prr``, ``assert_tsr``, ``assert_exposed``)."""

    out_dir: Path
    experiment_id: str
    episodes: list[Episode]
    tables: dict[str, dict[str, dict[str, Any]]]
    notes: dict[str, str] = field(default_factory=dict)
    scores: dict[str, Any] = field(default_factory=dict, repr=False)  # episode id -> EpisodeScore

    # -- lookups -----------------------------------------------------------------------------
    def _design(self, design: str | None) -> str:
        if design is None:
            if len(self.tables) != 1:
                raise ValueError(f"name the agent: design= one of {sorted(self.tables)}")
            return next(iter(self.tables))
        if design not in self.tables:
            raise ValueError(f"no agent named {design!r}; have {sorted(self.tables)}")
        return design

    def _modes(self, design: str, mode: str | None, perturbed: bool) -> list[str]:
        table = self.tables[design]
        if mode is not None:
            if mode not in table:
                raise ValueError(f"mode {mode} was not run; have {sorted(table)}")
            return [mode]
        return [m for m in table if (m in PERTURBED) or not perturbed]

    def _episodes(self, design: str, modes: Sequence[str]) -> list[Episode]:
        return [e for e in self.episodes if e.design == design and e.mode in modes]

    def prr(self, mode: str | None = None, design: str | None = None) -> dict[str, Any]:
        """PRR (Wilson 95%) over the exposed runs of ``mode`` (default: P1–P4 pooled)."""
        d = self._design(design)
        modes = self._modes(d, mode, perturbed=True)
        if len(modes) == 1:
            return dict(self.tables[d][modes[0]]["prr"])
        rows = [self.tables[d][m]["prr"] for m in modes]
        decided = sum(r["n"] for r in rows)
        rec = sum(round((r["value"] or 0) * r["n"]) for r in rows)
        est = _est(wilson(rec, decided))
        for k in ("exposed", "not_exposed", "not_consumed", "undetermined", "judged"):
            est[k] = sum(r.get(k, 0) for r in rows)
        return est

    def tsr(self, mode: str | None = None, design: str | None = None) -> dict[str, Any]:
        """TSR (Wilson 95%) of ``mode`` (default: every run)."""
        d = self._design(design)
        eps = self._episodes(d, self._modes(d, mode, perturbed=False))
        return _est(wilson(sum(bool(e.success) for e in eps), len(eps)))

    def compare(
        self, a: str, b: str, mode: str = "P1", *, seed: int = 0, n_boot: int = N_BOOT
    ) -> dict[str, Any]:
        """Agent ``a`` vs ``b`` under ``mode`` on the same (task, seed) runs: McNemar and a
        paired-bootstrap interval of the difference in recovery (runs exposed in both) and in
        success (all pairs)."""

        def index(design: str) -> dict[tuple[Any, int], Any]:
            return {
                (e.metadata.get("base_id"), e.seed): self.scores[e.episode_id]
                for e in self._episodes(self._design(design), [mode])
                if e.episode_id in self.scores
            }

        ia, ib = index(a), index(b)
        keys = sorted(set(ia) & set(ib), key=str)
        out: dict[str, Any] = {"pairs": len(keys)}
        for what, get, keep in (
            ("recovered", lambda s: bool(s.recovery.recovered), lambda s: s.recovery.exposed),
            ("success", lambda s: bool(s.episode.success), lambda s: True),
        ):
            ks = [k for k in keys if keep(ia[k]) and keep(ib[k])]
            xa = [get(ia[k]) for k in ks]
            xb = [get(ib[k]) for k in ks]
            out[what] = {
                "mcnemar": mcnemar(xa, xb),
                "difference": paired_bootstrap(
                    [float(x) for x in xa],
                    [float(x) for x in xb],
                    key=f"inplace.compare.{what}",
                    seed=seed,
                    n_boot=n_boot,
                ),
            }
        return out

    # -- assertions ------------------------------------------------------------------------------
    def _check(self, what: str, est: Mapping[str, Any], op: str, value: float, where: str) -> None:
        if op not in _OPS:
            raise ValueError(f"assert_{what.lower()}: op must be one of {list(_OPS)}, got {op!r}")
        if est.get("value") is None:
            if what == "PRR" and est.get("exposed"):
                why = (
                    f"none of the {est['exposed']} exposed run(s) was decided "
                    f"({est.get('not_consumed', 0)} not consumed: the corrupted value was never "
                    f"used; {est.get('undetermined', 0)} undetermined), so this test tested nothing"
                )
            elif what == "PRR":
                why = (
                    "no run was exposed to the fault (the agent never called the victim), so "
                    "this test tested nothing"
                )
            else:
                why = "no runs"
            raise AssertionError(f"{what} {where} is undefined: {why}")
        if not _OPS[op](float(est["value"]), float(value)):
            extra = (
                f", {est.get('exposed')} exposed, {est.get('not_exposed')} not exposed"
                if what == "PRR"
                else ""
            )
            raise AssertionError(
                f"{what} {where} = {_fmt(est)} (n={est.get('n')}{extra}) is not {op} {value}; "
                f"episodes in {self.out_dir}"
            )

    def assert_prr(
        self, op: str, value: float, *, mode: str | None = None, design: str | None = None
    ) -> None:
        """Fail unless PRR ``op`` ``value`` (and unless some run was exposed to the fault)."""
        d = self._design(design)
        where = f"of {d!r} under {'+'.join(self._modes(d, mode, perturbed=True))}"
        self._check("PRR", self.prr(mode, design), op, value, where)

    def assert_tsr(
        self, op: str, value: float, *, mode: str | None = None, design: str | None = None
    ) -> None:
        """Fail unless TSR ``op`` ``value``."""
        where = f"of {self._design(design)!r} under {mode or 'all modes'}"
        self._check("TSR", self.tsr(mode, design), op, value, where)

    def assert_exposed(self, *, mode: str | None = None, design: str | None = None) -> None:
        """Fail unless every perturbed run met its fault (proof the test tested something)."""
        d = self._design(design)
        missed = [
            f"{e.metadata.get('base_id')} {e.mode} seed {e.seed}"
            for e in self._episodes(d, self._modes(d, mode, perturbed=True))
            if not any(s.perturbation is not None for s in e.steps)
        ]
        if missed:
            raise AssertionError(
                f"{len(missed)} run(s) of {d!r} were not exposed to their fault (the victim was "
                f"never called): {', '.join(missed[:5])}{' …' if len(missed) > 5 else ''}"
            )

    # -- display ---------------------------------------------------------------------------------
    def rows(self) -> list[dict[str, str]]:
        """The printed table as rows of strings."""
        out = []
        for design, table in self.tables.items():
            for mode, r in table.items():
                prr = r.get("prr")
                vs = r.get("vs_np")
                out.append(
                    {
                        "agent": design,
                        "mode": mode,
                        "runs": str(r["runs"]),
                        "TSR": _fmt(r["tsr"]),
                        "PRR": _fmt(prr, _decided(prr)) if prr else "",
                        "not exposed": str(prr["not_exposed"]) if prr else "",
                        "not consumed": str(prr.get("not_consumed", 0)) if prr else "",
                        "undetermined": str(prr.get("undetermined", 0)) if prr else "",
                        "RC": _fmt(r.get("rc")) if mode in PERTURBED else "",
                        "TER": _fmt(r["ter"]),
                        "AUC-PEC": _fmt(r["auc_pec"]),
                        "FED": _fmt(r["fed_mean"]),
                        "ΔTSR vs NP": _delta(vs),
                    }
                )
        return out

    def table(self) -> str:
        """The table as plain text."""
        from rich.console import Console
        from rich.table import Table

        t = Table(title="replan in place: your agent under NP and P1–P4 (95% intervals)")
        rows = self.rows()
        cols = list(rows[0]) if rows else []
        for c in cols:
            t.add_column(c, justify="left" if c in ("agent", "mode") else "right")
        for r in rows:
            t.add_row(*(r[c] for c in cols))
        console = Console(width=200, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
        console.print(t)
        return console.export_text()

    def __str__(self) -> str:
        return self.table()


# -- the entry point --------------------------------------------------------------------------------
def _core_task(
    task: InPlaceTask, mode: str, names: Sequence[str], schedule: FaultSchedule | None
) -> Task:
    faults = schedule.for_episode(task.id, 0) if schedule is not None else None
    declared = faults is not None and faults.profile.group not in (None, ANY_TOOL)
    # a permanent fault on a tool with no declared alternative leaves no valid path: the
    # recovery is a stop, judged from what the run did (evaluators.perturbation._stop), not
    # from the answer's words, so the checker carries no ``graceful`` phrase rule
    return Task(
        task_id=f"{task.id}/{mode}",
        suite=SUITE,
        query=task.query,
        # namespaced: your tools are not replan's corpus, so no scorer replays them there
        tools=[f"inplace:{n}" for n in names],
        mode=mode,  # type: ignore[arg-type]
        base_id=task.id,
        min_calls=task.min_calls,
        perturbation=faults.profile if faults is not None else None,
        faults=FaultSetup(victim_tools=list(faults.group_tools) if declared else []),
        checker=Checker(),
    )


def _writer_lock(out_dir: Path) -> Any:
    """The store's one-writer lock (where this replan has one)."""
    import contextlib

    try:
        from replan.runner.store import WriterLock
    except ImportError:  # an older store without the lock
        return contextlib.nullcontext()
    return WriterLock(out_dir)


def _experiment_id(config: Mapping[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()
    return f"inplace-{digest[:12]}"


def evaluate_in_place(
    agent_or_factory: Any,
    tools: Sequence[Any],
    tasks: Any,
    *,
    modes: str | Sequence[str] = ("NP", "P1", "P2", "P3", "P4"),
    seeds: int = 1,
    out: str | Path = "replan-inplace",
    target: str | None = None,
    groups: Mapping[str, Sequence[str]] | None = None,
    kind: str | None = None,
    field: str | None = None,
    deliver: str = "raise",
    schedule_seed: int = 0,
    min_calls: int | None = None,
    name: str | None = None,
    model: str = "user",
    recursion_limit: int = 50,
    resume: bool = True,
    show: bool = True,
    seed: int = 0,
    n_boot: int = N_BOOT,
    judge: Any = None,
) -> InPlaceResults:
    """Run your agent on your tasks under the clean baseline and each mode; store, score, print.

    ``agent_or_factory``: a compiled agent instrumented with
    :class:`~replan.inplace.middleware.FaultInjectionMiddleware` (or wrapped tools), a factory
    ``make_agent(tools)``, or a dict ``{label: agent or factory}`` to compare several.
    ``tools``: your tools (``BaseTool`` or plain functions). ``tasks``: see
    :func:`~replan.inplace.tasks.load_tasks`. ``seeds`` repeats each (task, mode) with a new
    fault draw. ``judge`` (a chat model, e.g. your agent's, or ``judge(question) -> str``)
    decides the runs whose recovery the run itself cannot decide (*undetermined*); its
    verdicts are labelled judged (:func:`~replan.inplace.verdicts.judge_undetermined`).
    ``min_calls`` (or a task's own) turns on RC; ``model`` labels the runs (the store key). Episodes already in ``out`` are
    skipped when ``resume`` (same agent label, task, mode and seed).
    """
    from replan.runner.store import SUITE_RECORD, FeedbackRow, ResultsStore, episode_key

    if seeds < 1:
        raise ValueError(f"seeds must be >= 1, got {seeds}")
    check_field_syntax(field)
    base_tools = [as_base_tool(t, f"tools[{i}]") for i, t in enumerate(tools)]
    if not base_tools:
        raise ValueError("evaluate_in_place: no tools given")
    names = [t.name for t in base_tools]
    if len(set(names)) != len(names):
        raise ValueError(f"evaluate_in_place: tool names repeat: {names}")
    groups = {k: list(v) for k, v in (groups or {}).items()}
    for g, members in groups.items():
        unknown = [m for m in members if m not in names]
        if unknown:
            raise ValueError(f"group {g!r} names tools that were not given: {unknown}")
    task_list = load_tasks(tasks)
    if min_calls is not None:
        for t in task_list:
            if t.min_calls is None:
                t.min_calls = min_calls
    mode_list = _modes(modes)
    agents = _agents(agent_or_factory, name)
    use_async = any(async_only(t) for t in base_tools)

    jobs: list[_Job] = []
    cores: dict[str, Task] = {}
    for t in task_list:
        for mode in mode_list:
            sched = None
            if mode != "NP":
                sched = FaultSchedule(
                    mode=mode,
                    target=t.target or target,
                    groups=groups,
                    tools=tuple(names),
                    kind=kind,
                    field=field,
                    seed=schedule_seed,
                    deliver=deliver,  # type: ignore[arg-type]
                )
                sched.victims()  # a bad target stops here, before anything runs
                check_declared_field(field, sched, base_tools)  # so does a field it cannot have
            core = _core_task(t, mode, names, sched)
            cores[core.task_id] = core
            for design, agent in agents.items():
                for s in range(seeds):
                    jobs.append(_Job(design, agent, t, core, mode, s, sched))

    jobs.sort(key=lambda j: j.mode != "NP")  # clean runs first: the perturbed ones use them
    config = {
        "suite": SUITE,
        "tools": names,
        "tasks": [t.id for t in task_list],
        "modes": mode_list,
        "seeds": seeds,
        "agents": sorted(agents),
        "target": target,
        "groups": groups,
        "kind": kind,
        "field": field,
        "deliver": deliver,
        "schedule_seed": schedule_seed,
    }
    exp = _experiment_id(config)
    out_dir = Path(out)
    all_groups = dict(groups)
    scored: dict[str, Any] = {}
    notes_before: dict[str, str] = {}
    with _writer_lock(out_dir), ResultsStore(out_dir) as store:
        # the tasks are the user's own: recorded as a custom suite with their content digest
        ident = custom_identity(SUITE, list(cores.values()))
        record = {**ident, "tasks": len(cores), "tasks_digest": ident["digest"]}
        store.ensure_experiment(exp, {**config, SUITE_RECORD: record})
        store.save_tasks(cores.values())
        done = store.done_keys(exp) if resume else set()
        clean: dict[tuple[str, str, int], Episode] = {}
        if done:
            for e in store.episodes(exp):
                if e.suite == SUITE and e.mode == "NP":
                    clean[(str(e.metadata.get("base_id")), e.design, e.seed)] = e
        checked = False
        for job in jobs:
            if job.mode != "NP" and not checked:
                checked = True  # a named field no clean output holds stops here, before P1-P4
                scheds = {j.schedule.victims()[0]: j.schedule for j in jobs if j.schedule}
                for sched in scheds.values():
                    note = check_named_field(field, sched, list(clean.values()))
                    if note:
                        notes_before[field or ""] = note
            key = episode_key(job.core.task_id, job.design, model, job.seed)
            if key in done:
                continue
            np_ep = clean.get((job.task.id, job.design, job.seed))
            ep = run_episode(
                job,
                base_tools,
                use_async=use_async,
                recursion_limit=recursion_limit,
                clean=clean_profile(np_ep) if np_ep is not None and job.mode != "NP" else None,
            )
            if job.mode == "NP":
                clean[(job.task.id, job.design, job.seed)] = ep
            ep.model = model
            sc = score_episode_inplace(ep, job.core, all_groups)
            if judge is not None and sc.recovery.verdict == "undetermined":
                decided = judge_undetermined(ep, sc.recovery, judge)
                if decided is not None:  # kept on the episode, so every later scoring agrees
                    ep.metadata["judged"] = decided
                    sc = score_episode_inplace(ep, job.core, all_groups)
            scored[ep.episode_id] = sc
            rows = [
                FeedbackRow(key=f.key, score=f.score, comment=f.comment or "", value=f.value)
                for f in sc.feedback()
            ]
            store.save_episode(exp, ep, rows)
        episodes = [e for e in store.episodes(exp) if e.suite == SUITE]

    by_design: dict[str, list[Any]] = {}
    notes: dict[str, str] = dict(notes_before)
    for e in episodes:
        notes.update(e.metadata.get("notes") or {})
        core = cores.get(e.task_id)
        if core is None:
            continue
        sc = scored.get(e.episode_id) or score_episode_inplace(e, core, all_groups)
        by_design.setdefault(e.design, []).append(sc)
    tables = {
        d: mode_table(scores, seed=seed, n_boot=n_boot) for d, scores in sorted(by_design.items())
    }
    all_scores = {s.episode.episode_id: s for ss in by_design.values() for s in ss}
    results = InPlaceResults(out_dir, exp, episodes, tables, notes, all_scores)
    crashed = [e for e in episodes if e.end_reason is EndReason.CRASHED]
    if crashed:
        results.notes["crashed"] = (
            f"{len(crashed)} episode(s) crashed (counted as failures); the first: "
            f"{crashed[0].task_id} ({crashed[0].design}, seed {crashed[0].seed}): {crashed[0].error}"
        )
    if show:
        print(results.table())
        for note in results.notes.values():
            print(f"note: {note}")
    return results


__all__ = ["InPlaceResults", "evaluate_in_place", "mode_table", "score_episode_inplace"]
