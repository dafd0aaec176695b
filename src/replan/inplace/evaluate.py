"""``replan.evaluate_in_place``: your agent, your tools, your tasks — under NP and P1–P4.

For every task × mode × seed (and every agent, when several are given) the agent runs once with
the one tool wrapper's session activated (:mod:`replan.env.tool_wrapper`): calls are recorded and
judged against each tool's own args schema, and the mode's seeded fault is injected. Each run
becomes an :class:`~replan.core.trace.Episode`, is scored once by every registered metric
family (:func:`replan.evaluators.score_one`, a plugged-in metric included) and stored with its
feedback and records in the same results store as ``replan run`` (``OUT/results.sqlite``), so
``replan report OUT`` works on it. The printed table gives per agent and mode every column of
the metric registry -- the numbers ``replan run`` and ``replan report`` print, from the same
``score_records`` (TSR; PRR over *exposed* runs only, a fault that never fired is "not exposed",
never "recovered"; RC where a task gives ``min_calls``; TER, AUC-PEC, ...) -- and the paired
comparison against the clean baseline (NP) on the same (task, seed) pairs: McNemar on success
and a paired-bootstrap interval of the success difference.

Decisions:

- **Agent or factory.** A callable with neither ``invoke`` nor ``ainvoke`` is a factory
  ``make_agent(tools)``: it gets the wrapped tools (:func:`~replan.env.tool_wrapper.wrap_tools`)
  and is called once per episode. An agent object must already route its tool calls through
  :class:`~replan.inplace.middleware.FaultInjectionMiddleware` or wrapped tools; a run whose
  agent made tool calls that nothing recorded stops with a message saying so.
- **A fault that escapes the agent** (the injected exception propagates out of the graph,
  e.g. ``create_agent`` without a retry or error handler) ends the episode ``gave_up``: it is
  the agent's own outcome under the fault, not an infrastructure failure, so it counts in PRR.
- **Victims.** The fault's target is the task's ``target``, else ``target=``, else every
  tool as one group (the first tool the agent calls is the victim); ``groups`` declares
  alternative groups (a transient fault is recovered by re-invoking the victim or any member).
- **One thread per episode, a deadline.** Each episode (its ``setup`` hook and the agent) runs
  in a daemon thread of its own, so a hung agent is left behind at ``episode_timeout`` and
  recorded as ``timeout`` (an async agent's task is cancelled as well); ``teardown`` runs after
  every episode, also after a crash or a timeout. Crashes and timeouts are infrastructure
  failures, as in ``replan run``: failed runs in TSR, left out of the process metrics, run
  again on a resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import inspect
import json
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.errors import GraphRecursionError

from replan.core.task import MODES, Checker, FaultSetup, Task
from replan.core.taxonomy import VerdictCode
from replan.core.trace import Call, EndReason, Episode, Step, Usage, Verdict
from replan.env.tool_faults import ANY_TOOL, FaultSchedule, InjectedFault
from replan.env.tool_wrapper import FaultSession, activate, as_base_tool, async_only, wrap_tools
from replan.evaluators import (
    EpisodeScore,
    compare_scores,
    is_failure,
    score_one,
    score_records,
    scoring_stamp,
)
from replan.evaluators.metric import OMIT, UnitView, columns
from replan.evaluators.stats import N_BOOT, Estimate, mcnemar, paired_bootstrap
from replan.inplace.tasks import InPlaceTask, check_run_config, load_tasks
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
from replan.runner.options import DEFAULT_EPISODE_TIMEOUT_S
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
        "for a graph whose state is not a messages list pass transcript=callable(state) -> its "
        "messages (or its final answer as text)"
    )


def _transcript(state: Any, transcript: Callable[[Any], Any] | None, where: str) -> list[Any]:
    """The run's messages: ``state["messages"]``, or what the ``transcript`` adapter makes of the
    final state (messages in LangChain or OpenAI form, or the final answer as text)."""
    if transcript is None:
        return _messages_of(state, where)
    try:
        raw = transcript(state)
    except Exception as exc:
        raise ValueError(f"{where}: transcript(state) raised {_describe(exc)}") from exc
    if raw is None:
        return []
    if isinstance(raw, str):
        return [AIMessage(content=raw)] if raw.strip() else []
    from replan.inplace.traces import TraceError, to_messages

    try:
        return to_messages(raw, f"{where}: transcript(state)") if raw else []
    except TraceError as exc:
        raise ValueError(str(exc)) from exc


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


def is_agent(obj: Any) -> bool:
    """A runnable agent (``invoke`` or ``ainvoke``), as opposed to a factory ``make_agent(tools)``."""
    return callable(getattr(obj, "invoke", None)) or callable(getattr(obj, "ainvoke", None))


def _async_node(node: Any) -> bool:
    """A compiled graph's node with a coroutine and no sync function (an ``async def`` node).
    Read from the attributes themselves: a node's runnable may answer any attribute lookup."""
    attrs = getattr(getattr(node, "bound", None), "__dict__", None) or {}
    return "afunc" in attrs and attrs.get("afunc") is not None and attrs.get("func") is None


def needs_async(agent: Any, tools: Sequence[Any]) -> bool:
    """Whether the agent can only run under ``ainvoke``: it has no ``invoke``, a graph node of it
    is async-only (an ``async def`` node), or one of the tools is."""
    if not callable(getattr(agent, "invoke", None)):
        return True
    nodes = getattr(agent, "nodes", None)
    if isinstance(nodes, Mapping) and any(_async_node(n) for n in nodes.values()):
        return True
    return any(async_only(t) for t in tools)


@dataclass(frozen=True)
class EpisodeInfo:
    """What the ``setup`` and ``teardown`` hooks of :func:`evaluate_in_place` receive: the task,
    mode, seed and agent label of the episode about to run (or that ran)."""

    task: InPlaceTask
    mode: str
    seed: int
    agent: str


def _call_hook(hook: Callable[..., Any], info: EpisodeInfo) -> Any:
    """``hook(info)``, or ``hook()`` for a hook that takes no argument."""
    try:
        params = inspect.signature(hook).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: give it the info
        return hook(info)
    positional = [
        p
        for p in params
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    return hook(info) if positional else hook()


class _HookError(Exception):
    """A setup hook failed (the episode did not run)."""


@dataclass
class _Outcome:
    finished: bool = False
    value: Any = None
    error: BaseException | None = None
    cancel: Callable[[], None] | None = None


def run_bounded(fn: Callable[[_Outcome], Any], timeout: float | None) -> _Outcome:
    """Run ``fn(outcome)`` in a daemon thread (this context's variables copied) and wait at most
    ``timeout`` seconds. Past the deadline the thread is abandoned (``finished`` stays false)
    after ``outcome.cancel`` -- set by an async run to cancel its task -- is called: a sync
    agent cannot be stopped from outside, but it can no longer hold the evaluation up."""
    out = _Outcome()
    ctx = contextvars.copy_context()

    def target() -> None:
        try:
            out.value = ctx.run(fn, out)
        except BaseException as exc:  # SystemExit too: it fails this episode only
            out.error = exc
        out.finished = True

    worker = threading.Thread(target=target, name="replan-inplace-episode", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        if out.cancel is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                out.cancel()
        return _Outcome(finished=False, cancel=out.cancel)
    return out


@dataclass
class EpisodeJob:
    """One in-place episode to run: the agent under a design name, the user's task, the replan
    task it is scored against (:func:`core_task`), the fault mode, seed and schedule."""

    design: str
    agent: Any
    task: InPlaceTask
    core: Task
    mode: str
    seed: int
    schedule: FaultSchedule | None


def _describe(exc: BaseException) -> str:
    return describe_error(exc)


def invoke_config(recursion_limit: int, *configs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The config one episode is invoked with: a fresh ``thread_id`` and ``recursion_limit``,
    then each of ``configs`` in turn (the evaluation's ``config=``, then the task's own); their
    ``configurable`` values are merged, every other key replaced."""
    cfg: dict[str, Any] = {"recursion_limit": recursion_limit}
    configurable: dict[str, Any] = {"thread_id": uuid.uuid4().hex}
    for extra in configs:
        for k, v in (extra or {}).items():
            if k == "configurable":
                configurable.update(v)
            else:
                cfg[k] = v
    cfg["configurable"] = configurable
    return cfg


@dataclass(frozen=True)
class EpisodeOptions:
    """How :func:`run_episode` runs an agent (the evaluation's options, the same every episode)."""

    recursion_limit: int = 50
    use_async: bool = False  # always ainvoke; otherwise when needs_async says so
    timeout: float | None = None  # seconds per episode (setup and agent); None: no deadline
    setup: Callable[..., Any] | None = None
    teardown: Callable[..., Any] | None = None
    config: Mapping[str, Any] | None = None
    transcript: Callable[[Any], Any] | None = None


def run_episode(
    job: EpisodeJob,
    tools: Sequence[Any],
    *,
    use_async: bool = False,
    recursion_limit: int = 50,
    options: EpisodeOptions | None = None,
    clean: Mapping[str, Any] | None = None,
) -> Episode:
    """Run one task in one mode and seed; never raises for the agent's own failure (a crash,
    an escaped fault, a timeout), nor for a failing ``setup`` or ``teardown`` hook.

    ``clean``: the record of the same task's clean run (:func:`~replan.inplace.verdicts.clean_profile`):
    an implicit fault is aimed at what it consumed, and the episode carries it for scoring."""
    opts = options or EpisodeOptions(recursion_limit=recursion_limit, use_async=use_async)
    schedule = aimed(job.schedule, clean) if job.schedule is not None else None
    faults = schedule.for_episode(job.task.id, job.seed) if schedule is not None else None
    session = FaultSession(faults)
    where = f"task {job.task.id!r} ({job.mode}, seed {job.seed}, agent {job.design!r})"
    info = EpisodeInfo(job.task, job.mode, job.seed, job.design)
    cfg = invoke_config(opts.recursion_limit, opts.config, job.task.config)
    inp = job.task.agent_input(as_state=opts.transcript is not None)
    state: Any = None
    reason: EndReason | None = None
    error: str | None = None
    t0 = time.perf_counter()

    def go(out: _Outcome) -> Any:
        if opts.setup is not None:
            try:
                _call_hook(opts.setup, info)
            except Exception as exc:
                raise _HookError(f"setup failed: {_describe(exc)}") from exc
        with activate(session):
            agent = job.agent
            if not is_agent(agent):
                agent = agent(wrap_tools(tools))
            if not (opts.use_async or needs_async(agent, tools)):
                return agent.invoke(inp, cfg)

            async def main() -> Any:
                loop, task = asyncio.get_running_loop(), asyncio.current_task()
                assert task is not None
                out.cancel = lambda: loop.call_soon_threadsafe(task.cancel)
                return await agent.ainvoke(inp, cfg)

            return asyncio.run(main())

    run = run_bounded(go, opts.timeout)
    exc = run.error
    if not run.finished:
        reason = EndReason.TIMEOUT
        error = (
            f"{where}: no result within the episode deadline of {opts.timeout:g} s "
            "(episode_timeout=); abandoned"
        )
    elif exc is None:
        state = run.value
    elif isinstance(exc, _HookError):
        reason, error = EndReason.CRASHED, str(exc)
    elif isinstance(exc, GraphRecursionError):
        reason, error = EndReason.STEP_BUDGET, _describe(exc)
    elif isinstance(exc, InjectedFault):
        reason = EndReason.GAVE_UP
        error = f"an injected fault propagated out of the agent: {_describe(exc)}"
    elif isinstance(exc, asyncio.CancelledError):
        reason, error = EndReason.CRASHED, "the agent's run was cancelled"
    else:
        reason, error = EndReason.CRASHED, _describe(exc)
    wall = time.perf_counter() - t0
    teardown_error = None
    if opts.teardown is not None:  # after every episode, failed or timed out ones included
        done = run_bounded(lambda _: _call_hook(opts.teardown, info), opts.timeout)  # type: ignore[arg-type]
        if not done.finished:
            teardown_error = f"teardown did not finish within {opts.timeout:g} s"
        elif done.error is not None:
            teardown_error = f"teardown failed: {_describe(done.error)}"
    messages = _transcript(state, opts.transcript, where) if reason is None else []
    made = _tool_calls_made(messages)
    recorded = list(session.steps)  # a snapshot: an abandoned run may still be recording
    if made and not recorded:
        raise ValueError(
            f"{where}: the agent made {len(made)} tool call(s) but none was recorded: build it "
            "with replan.FaultInjectionMiddleware() in create_agent(middleware=[...]) or with "
            "replan.wrap_tools(tools), or pass a factory make_agent(tools) instead"
        )
    steps = [
        s.model_copy(update={"round": made.get(s.call.call_id or "", s.round)})
        for s in with_unknown_tool_calls(recorded, messages, {t.name for t in tools})
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
    metadata: dict[str, Any] = {
        "base_id": job.task.id,
        "check": why,
        "notes": dict(session.notes),
        "task": job.core.model_dump(mode="json"),
        **({"clean_run": dict(clean)} if clean is not None else {}),
    }
    if teardown_error is not None:
        metadata["teardown_error"] = teardown_error
    return Episode(
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
        metadata=metadata,
    )


def carried_sentinel(steps: Sequence[Step], answer: str | None) -> Any:
    """How ``answer`` carries an injected corrupted value (any recognised form), or ``None``."""
    return carried_corruption(steps, answer, None)


# -- scoring -------------------------------------------------------------------------------------
def _split(scores: Sequence[EpisodeScore]) -> tuple[list[EpisodeScore], int]:
    """The scores of the runs that ran to a verdict of the agent's own, and how many failed for
    the infrastructure (crash, timeout: :func:`~replan.evaluators.is_failure`)."""
    ok = [s for s in scores if not is_failure(s.episode)]
    return ok, len(scores) - len(ok)


def aggregate(
    scores: Sequence[EpisodeScore], *, seed: int = 0, n_boot: int = N_BOOT
) -> dict[str, Any]:
    """Every registered metric family's aggregates over ``scores`` and the run table's columns:
    ``score_records`` and the registry's columns, exactly as ``replan run`` and ``replan report``
    compute them (a plugged-in metric included). Keys: ``runs``, ``failures``, ``aggregate``
    (``score_records``' result) and ``columns`` (column label -> estimate)."""
    ok, failures = _split(scores)
    agg = score_records(scores, seed=seed, n_boot=n_boot)
    view = UnitView(agg, ok, failures, seed, n_boot)
    cols = {c.label: v for c in columns() if (v := c.value(view)) is not OMIT}
    return {"runs": len(scores), "failures": failures, "aggregate": agg, "columns": cols}


def _prr(agg: Mapping[str, Any], key: str) -> dict[str, Any]:
    """The registry's PRR estimate ``key`` (``toolmaze.prr`` or ``toolmaze.prr.<mode>``) with
    the counts that say what it covers, from the same aggregate's per-mode cells: ``exposed``,
    ``decided`` (its denominator), ``not_consumed``, ``undetermined``, ``judged`` (decided by
    an LLM judge) and ``not_exposed``."""
    est = dict(agg.get(key) or Estimate(None, None, None, 0, "bootstrap").to_dict())
    by_mode = (agg.get("tables") or {}).get("toolmaze.by_mode") or {}
    modes = [key.rsplit(".", 1)[1]] if key.count(".") == 2 else list(PERTURBED)
    cells = [by_mode[m]["pooled"]["prr"] for m in modes if m in by_mode]
    est["exposed"] = sum(c.get("exposed", 0) for c in cells)
    # n: PRR's denominator (the decided runs), as a rate's n; the macro estimate counted runs
    est["n"] = est["decided"] = sum(c.get("n", 0) for c in cells)
    for k in ("not_consumed", "undetermined", "judged"):
        est[k] = sum(c.get(k, 0) for c in cells)
    est["not_exposed"] = (agg.get("toolmaze.not_exposed") or {}).get("value", 0)
    return est


def mode_table(
    scores: Sequence[EpisodeScore], *, seed: int = 0, n_boot: int = N_BOOT
) -> dict[str, dict[str, Any]]:
    """Per mode, :func:`aggregate` of its runs plus the headline estimates read from it --
    ``tsr``, ``prr`` (with ``exposed`` / ``not_exposed``), ``rc``, ``ter`` -- and ``vs_np``: the
    paired comparison with NP on the same (task, seed) pairs (McNemar on success and a
    paired-bootstrap interval of the success difference)."""
    by_mode: dict[str, list[EpisodeScore]] = {}
    for s in scores:
        by_mode.setdefault(s.episode.mode or "NP", []).append(s)
    base = {
        (s.episode.metadata.get("base_id"), s.episode.seed): bool(s.episode.success)
        for s in by_mode.get("NP", [])
    }
    out: dict[str, dict[str, Any]] = {}
    for mode in [m for m in MODES if m in by_mode]:
        ss = by_mode[mode]
        row = aggregate(ss, seed=seed, n_boot=n_boot)
        agg = row["aggregate"]
        row["tsr"] = agg["toolmaze.tsr"]
        row["ter"] = agg.get("prefix.ter")
        if mode in PERTURBED:
            row["prr"] = _prr(agg, f"toolmaze.prr.{mode}")
            rc = agg.get(f"toolmaze.rc.{mode}")
            row["rc"] = rc if rc and rc.get("value") is not None else None
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
    seed: int = 0  # the intervals' bootstrap seed and size
    n_boot: int = N_BOOT

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

    def _scores(self, design: str, modes: Sequence[str]) -> list[EpisodeScore]:
        return [
            self.scores[e.episode_id]
            for e in self._episodes(design, modes)
            if e.episode_id in self.scores
        ]

    def prr(self, mode: str | None = None, design: str | None = None) -> dict[str, Any]:
        """PRR over the exposed runs of ``mode`` (default: the P1–P4 cells' mean, as the run
        table's PRR), with ``exposed`` and ``not_exposed`` counts."""
        d = self._design(design)
        modes = self._modes(d, mode, perturbed=True)
        if len(modes) == 1:
            return dict(self.tables[d][modes[0]]["prr"])
        agg = aggregate(self._scores(d, modes), seed=self.seed, n_boot=self.n_boot)
        return _prr(agg["aggregate"], "toolmaze.prr")

    def tsr(self, mode: str | None = None, design: str | None = None) -> dict[str, Any]:
        """TSR of ``mode`` (default: every run; the mean over the modes' cells, as the run
        table's TSR)."""
        d = self._design(design)
        modes = self._modes(d, mode, perturbed=False)
        if len(modes) == 1:
            return dict(self.tables[d][modes[0]]["tsr"])
        agg = aggregate(self._scores(d, modes), seed=self.seed, n_boot=self.n_boot)
        return dict(agg["aggregate"]["toolmaze.tsr"])

    def compare(
        self, a: str, b: str, mode: str = "P1", *, seed: int = 0, n_boot: int = N_BOOT
    ) -> dict[str, Any]:
        """Agent ``a`` vs ``b`` under ``mode`` on the same (task, seed) runs: every registered
        paired comparison (:func:`replan.evaluators.compare_scores`: success, clean runs,
        AUC-PEC, C_rec, ...) and ``recovered`` -- McNemar and a paired-bootstrap interval of
        the difference in recovery over the runs whose recovery was decided in both."""
        sa, sb = (self._scores(self._design(x), [mode]) for x in (a, b))
        out = compare_scores(sa, sb, seed=seed, n_boot=n_boot)

        def index(scores: Sequence[EpisodeScore]) -> dict[tuple[Any, int], EpisodeScore]:
            return {(s.episode.task_id, s.episode.seed): s for s in scores}

        ia, ib = index(sa), index(sb)
        keys = [k for k in sorted(set(ia) & set(ib), key=str)]
        ks = [k for k in keys if ia[k].recovery.counts_for_prr and ib[k].recovery.counts_for_prr]
        xa = [bool(ia[k].recovery.recovered) for k in ks]
        xb = [bool(ib[k].recovery.recovered) for k in ks]
        out["recovered"] = {
            "mcnemar": mcnemar(xa, xb),
            "difference": paired_bootstrap(
                [float(x) for x in xa],
                [float(x) for x in xb],
                key="inplace.compare.recovered",
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
            from replan.report.summary import fmt_estimate

            extra = (
                f"{est.get('decided')} decided, {est.get('exposed')} exposed, "
                f"{est.get('not_exposed')} not exposed"
                if what == "PRR"
                else f"n={est.get('n')}"
            )
            raise AssertionError(
                f"{what} {where} = {fmt_estimate(est)} ({extra}) is not {op} {value}; "
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
    def rows(self, sep: str = " ") -> list[dict[str, str]]:
        """The printed table as rows of strings: per agent and mode, every column of the metric
        registry (the run table's, a plugged-in metric's included), then the paired
        comparison with NP; ``sep`` goes between a value and its interval."""
        from replan.report.summary import fmt_estimate, table_columns

        units = {
            (design, mode): r for design, table in self.tables.items() for mode, r in table.items()
        }
        cols = table_columns({f"{d}/{m}": r["columns"] for (d, m), r in units.items()})
        out = []
        for (design, mode), r in units.items():
            row = {"agent": design, "mode": mode, "runs": str(r["runs"])}
            for c in cols:
                est = r["columns"].get(c.label)
                text = fmt_estimate(est, sep)
                if c.label == "PRR" and "prr" in r:
                    prr = r["prr"]
                    judged = f", {prr['judged']} judged" if prr.get("judged") else ""
                    text += f"{sep}({prr['decided']} of {prr['exposed']} exp.{judged})"
                row[c.label] = text
            if "prr" in r:  # exposed runs outside PRR: their verdicts (evaluators.perturbation)
                row["not consumed"] = str(r["prr"]["not_consumed"])
                row["undetermined"] = str(r["prr"]["undetermined"])
            elif any("prr" in u for u in units.values()):
                row["not consumed"] = row["undetermined"] = ""
            vs = r.get("vs_np")
            row["ΔTSR vs NP"] = ""
            if vs and vs["tsr_delta"]["difference"] is not None:
                d = vs["tsr_delta"]
                interval = (
                    f"[{d['low']:+.2f}, {d['high']:+.2f}]"
                    if d.get("low") is not None and d.get("high") is not None
                    else "no interval"  # too few pairs for one
                )
                row["ΔTSR vs NP"] = (
                    f"{d['difference']:+.2f}{sep}{interval}{sep}p={vs['mcnemar']['p_value']:.3f}"
                )
            out.append(row)
        return out

    def table(self) -> str:
        """The table as plain text."""
        from rich.console import Console
        from rich.table import Table

        t = Table(title="replan in place: your agent under NP and P1–P4 (95% intervals)")
        rows = self.rows(sep="\n")  # stacked, as the run table, to stay narrow
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
def core_task(
    task: InPlaceTask, mode: str, names: Sequence[str], schedule: FaultSchedule | None
) -> Task:
    """The replan :class:`Task` an in-place episode of ``task`` under ``mode`` is scored as: the
    user's query and tools (namespaced ``inplace:``), the fault profile of ``schedule`` and an
    empty checker."""
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
        # the task's own run config decides its result (a passenger id): part of its identity
        metadata={"config": json.loads(json.dumps(task.config, default=str))}
        if task.config
        else {},
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
    config: Mapping[str, Any] | None = None,
    setup: Callable[..., Any] | None = None,
    teardown: Callable[..., Any] | None = None,
    episode_timeout: float | None = DEFAULT_EPISODE_TIMEOUT_S,
    transcript: Callable[[Any], Any] | None = None,
    use_async: bool = False,
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
    ``min_calls`` (or a task's own) turns on RC; ``model`` labels the runs (the
    store key). Episodes already in ``out`` are skipped when ``resume`` (same agent label,
    task, mode and seed), except those that crashed or timed out, which run again.

    For real agents: ``config`` is merged into every invocation's LangGraph config (a task's own
    ``config`` over it; ``configurable`` values merge, a fresh ``thread_id`` per episode unless
    given). ``setup`` / ``teardown`` run before / after every episode (``hook(info)`` with an
    :class:`EpisodeInfo`, or ``hook()``): restore a database in ``setup``; ``teardown`` runs
    even when the episode crashed or timed out, and a failing one is noted, not fatal. A setup
    that raises fails its episode (``crashed``). ``episode_timeout`` (seconds, setup and agent
    together; ``None``: none) records a run still going as ``timeout`` and moves on (an async
    run is cancelled, a sync one abandoned). The agent runs with ``ainvoke`` when it has no
    ``invoke``, a node or tool of it is async-only, or ``use_async``. ``transcript(state)``
    turns a final state that is not a ``messages`` state into the run's messages (LangChain or
    OpenAI form) or its final answer (text); with it, a task input given as a dict is the
    graph's input state, unchanged. Every episode is scored by every registered metric family
    (:mod:`replan.evaluators.metric`), as ``replan run``'s are.
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
    if config is not None:
        check_run_config(config, "evaluate_in_place: config")
    for hook, label in ((setup, "setup"), (teardown, "teardown"), (transcript, "transcript")):
        if hook is not None and not callable(hook):
            raise ValueError(f"evaluate_in_place: {label} must be a callable")
    if episode_timeout is not None and episode_timeout <= 0:
        raise ValueError(f"episode_timeout must be > 0 seconds (or None), got {episode_timeout}")
    options = EpisodeOptions(
        recursion_limit=recursion_limit,
        use_async=use_async,
        timeout=episode_timeout,
        setup=setup,
        teardown=teardown,
        config=config,
        transcript=transcript,
    )

    jobs: list[EpisodeJob] = []
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
            core = core_task(t, mode, names, sched)
            cores[core.task_id] = core
            for design, agent in agents.items():
                for s in range(seeds):
                    jobs.append(EpisodeJob(design, agent, t, core, mode, s, sched))

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
        "config": config,
    }
    exp = _experiment_id(config)
    out_dir = Path(out)
    scored: dict[str, Any] = {}
    notes_before: dict[str, str] = {}
    with _writer_lock(out_dir), ResultsStore(out_dir) as store:
        # the tasks are the user's own: recorded as a custom suite with their content digest
        ident = custom_identity(SUITE, list(cores.values()))
        record = {**ident, "tasks": len(cores), "tasks_digest": ident["digest"]}
        store.ensure_experiment(exp, {**config, SUITE_RECORD: record})
        store.save_tasks(cores.values())
        # crashed and timed-out episodes run again, as on a resume of `replan run`
        done = store.done_keys(exp, with_failed=False) if resume else set()
        stamp = scoring_stamp()
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
                options=options,
                clean=clean_profile(np_ep) if np_ep is not None and job.mode != "NP" else None,
            )
            if job.mode == "NP":
                clean[(job.task.id, job.design, job.seed)] = ep
            ep.model = model
            sc = score_one(ep, job.core)
            if judge is not None and sc.recovery.verdict == "undetermined":
                decided = judge_undetermined(ep, sc.recovery, judge)
                if decided is not None:  # kept on the episode, so every later scoring agrees
                    ep.metadata["judged"] = decided
                    sc = score_one(ep, job.core)
            scored[ep.episode_id] = sc
            rows = [FeedbackRow.of(f) for f in sc.feedback()]
            store.save_episode(exp, ep, rows, records=sc.records(), stamp=stamp)
        episodes = [e for e in store.episodes(exp) if e.suite == SUITE]

    by_design: dict[str, list[Any]] = {}
    notes: dict[str, str] = dict(notes_before)
    for e in episodes:
        notes.update(e.metadata.get("notes") or {})
        core = cores.get(e.task_id)
        if core is None:
            continue
        sc = scored.get(e.episode_id) or score_one(e, core)
        by_design.setdefault(e.design, []).append(sc)
    tables = {
        d: mode_table(scores, seed=seed, n_boot=n_boot) for d, scores in sorted(by_design.items())
    }
    all_scores = {s.episode.episode_id: s for ss in by_design.values() for s in ss}
    results = InPlaceResults(out_dir, exp, episodes, tables, notes, all_scores, seed, n_boot)
    for reason, words in (
        (EndReason.CRASHED, "crashed"),
        (EndReason.TIMEOUT, "timed out"),
    ):
        hit = [e for e in episodes if e.end_reason is reason]
        if hit:
            results.notes[reason.value] = (
                f"{len(hit)} episode(s) {words} (counted as failures); the first: "
                f"{hit[0].task_id} ({hit[0].design}, seed {hit[0].seed}): {hit[0].error}"
            )
    torn = [e for e in episodes if e.metadata.get("teardown_error")]
    if torn:
        results.notes["teardown"] = (
            f"teardown failed after {len(torn)} episode(s); the first: {torn[0].task_id} "
            f"({torn[0].design}, seed {torn[0].seed}): {torn[0].metadata['teardown_error']}"
        )
    if show:
        print(results.table())
        for note in results.notes.values():
            print(f"note: {note}")
    return results


__all__ = [
    "EpisodeInfo",
    "InPlaceResults",
    "aggregate",
    "evaluate_in_place",
    "mode_table",
    "run_episode",
]
