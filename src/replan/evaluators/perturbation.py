"""ToolMaze recovery metrics (seed 002 §3.5 and §4.2, DESIGN §5): TSR, PRR, C_rec / RC, Avg.

Per run (:func:`recovery_record`):

- **Exposure** (``pert``): the injected fault reached the agent, i.e. some step carries a
  ``perturbation``. The first such step is *the first perturbed response*. A perturbed run whose
  fault never fired (a run with no tool call included) is *not exposed*: no PRR, no cost, and
  never shown as recovered.
- **Propagation**: the sentinel (``Step.perturbation.sentinel`` or
  ``Task.perturbation.sentinel``) reached an *accepted* later call (verdict ok, not stopped by an
  explicit fault; args as written or resolved) or the final answer, matched as a whole value. A
  call the world rejected executed nothing, so a sentinel there is not propagation. A propagated
  sentinel always means *not recovered*.
- **Recovery never reads success** (§3.5: "PRR strictly evaluates error recovery independently of
  final task success"):

  - *transient faults (P1, P3)* — retrying: after the first perturbed response the agent
    re-invoked the victim or an alternative of its group (members from the corpus's alternative
    groups), got a clean result (verdict ok, no perturbation) and *used* it: a distinctive value
    of it (a string of 4+ characters or a number that is not a small integer, not an echo of its
    own inputs) reaches a later call's arguments or the final answer, or a later call
    references the retry's node (``${node...}``);
  - *permanent faults (P2, P4)* — an alternative path: every tool of some valid path avoiding
    the victim ran cleanly (order ignored, as parallel waves reorder calls); with no path left
    (``Task.checker.graceful``, C1) a wise stop (no call downstream of the failed branch after
    the fault and an answer that reports the failure); without a path list, a used clean call to
    another member of the victim's group.
- **C_rec** = 1 − c*/max(c, c*)·succ (0/0 read as 1), eq. 3, with **c*(τ) per trajectory**:
  the fewest calls that complete the task from the first perturbed response, given the tools
  this run had already run cleanly and the tool it met the fault on
  (``env.recovery_cost.min_calls_after_fault``); c counts the calls after the first perturbed
  response. Fallbacks for tasks without a path list: ``task.faults.min_calls_after_fault``, else
  ``Task.min_calls`` against every call of the run; with neither C_rec is undefined, left out of
  RC and counted (``rc_unknown``).

Aggregates (:func:`summarize_toolmaze`): per C × P cell TSR = mean success, PRR = Σ recov·pert /
Σ pert, RC = mean pert·C_rec (an unexposed run adds 0); per mode the plain mean over the levels
(§4.2: "macro-averaged across all four topological complexity levels"), per level over the
modes, and overall TSR over every cell, PRR / RC over the P1–P4 cells, **Avg** = (mean TSR + mean
PRR + 1 − mean RC) / 3 over the cells. The figures pooled over runs stay beside them as a
labelled variant (``pooled``). Mode comes from the task (else the episode, else the first
perturbation, else NP); level from the task (else ``episode.metadata["level"]``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from replan.core import linre
from replan.core.task import MODES, Task, mode_flags
from replan.core.trace import Episode, Step
from replan.env.checker import graceful_termination, mentions
from replan.env.corpus import load_corpus
from replan.env.derived import (
    Corrupted,
    corrupted_of,
    explained_numbers,
    numbers_in,
    recognise,
)
from replan.env.recovery_cost import min_calls_after_fault
from replan.evaluators.metric import OMIT, Column, EpisodeContext, Paired, metric, n_note
from replan.evaluators.prefix import episode_verdicts, first_perturbed, resolve_success
from replan.evaluators.stats import (
    N_BOOT,
    Estimate,
    Feedback,
    bootstrap_mean,
    estimate_from_samples,
    resample_sums,
    rng_for,
    wilson,
)

PERTURBED_MODES = ("P1", "P2", "P3", "P4")


@dataclass(slots=True)
class RecoveryRecord:
    """What one run contributes to the ToolMaze metrics."""

    mode: str
    level: str | None
    success: bool
    exposed: bool
    recovered: bool | None = None  # None when not exposed
    permanent: bool | None = None
    sentinel_propagated: bool = False
    c: int | None = None
    c_star: int | None = None
    c_rec: float | None = None  # None when not exposed or c* unknown
    reason: str = ""
    #: the run failed for the infrastructure (model error, crash, timeout): a failed run in
    #: its cell's TSR, left out of PRR, RC and exposure
    infra_failure: bool = False
    #: implicit faults: whether a corrupted value was consumed (``None``: explicit fault, or
    #: not exposed); an exposed run with ``False`` is *not consumed*: no PRR
    consumed: bool | None = None
    #: ``recovered`` | ``not recovered`` | ``not consumed`` | ``undetermined`` | ``not exposed``
    verdict: str = ""
    #: where a corrupted value propagated and in which form (``where``, ``step``, ``field``,
    #: ``form``), one entry per call or answer that carried it
    evidence: list[dict[str, Any]] = field(default_factory=list)
    #: the verdict was decided by an LLM judge (``undetermined`` from the run itself)
    judged: bool = False

    @property
    def counts_for_prr(self) -> bool:
        """Exposed, consumed and decided: a term of PRR's denominator."""
        return self.exposed and not self.infra_failure and self.recovered is not None

    @property
    def rc_term(self) -> float | None:
        """pert·C_rec: 0 for an unexposed run, ``None`` when exposed with c* unknown (and for
        an infrastructure failure, which RC leaves out)."""
        if self.infra_failure:
            return None
        if not self.exposed:
            return 0.0
        return self.c_rec


def as_infra_failure(record: RecoveryRecord) -> RecoveryRecord:
    """The record of a run that failed for the infrastructure: in its C × P cell, not a
    success, not exposed (whatever it reached before failing)."""
    return RecoveryRecord(
        record.mode,
        record.level,
        success=False,
        exposed=False,
        reason="infrastructure failure",
        infra_failure=True,
    )


def c_rec(c: int, c_star: int, success: bool) -> float:
    """C_rec = 1 − c*/max(c, c*)·succ; 0/0 (no calls needed, none made) reads as ratio 1."""
    if c < 0 or c_star < 0:
        raise ValueError(f"c_rec: call counts must be >= 0, got c={c}, c*={c_star}")
    top = max(c, c_star)
    ratio = 1.0 if top == 0 else c_star / top
    return 1.0 - ratio * (1.0 if success else 0.0)


# -- propagation ---------------------------------------------------------------------------------
def _later_args(step: Step) -> list[Any]:
    out: list[Any] = [step.call.args]
    if step.resolved_args is not None:
        out.append(step.resolved_args)
    return out


def accepted(step: Step) -> bool:
    """Whether the world accepted the call: its verdict is ok and no explicit fault stopped it
    (a call the world rejected, or that met an error, carried nothing anywhere)."""
    return step.verdict.ok and not (step.perturbation is not None and step.perturbation.explicit)


def _corrupted(steps: Sequence[Step], profile_sentinel: Any) -> list[Corrupted]:
    out = [c for s in steps for c in corrupted_of(s)]
    if profile_sentinel is not None and all(c.sentinel != profile_sentinel for c in out):
        kind = next((c.kind for c in out), "")
        out.append(Corrupted(kind=kind, sentinel=profile_sentinel))
    return out


def propagation_evidence(
    episode: Episode, first: int, profile_sentinel: Any = None
) -> list[dict[str, Any]]:
    """Where a corrupted value reached an *accepted* later call or the final answer, and in
    which form (:func:`replan.env.derived.recognise`: the value itself or a derived form).

    A call the world rejected executed nothing, so a corrupted value there is not propagation.
    Numbers that clean data explains (the question, the clean outputs the run saw, the clean
    run's arguments and answer in ``episode.metadata["clean_run"]``) are never derived forms."""
    steps = episode.steps
    corrupted = _corrupted(steps, profile_sentinel)
    if not corrupted:
        return []
    clean = episode.metadata.get("clean_run") or {}
    extra = [clean.get("args") or [], clean.get("answer") or ""]
    explained = explained_numbers(steps, episode.query, extra)
    clean_numbers = [n for n in numbers_in(extra) if abs(n) >= 1e-9]
    out: list[dict[str, Any]] = []
    for s in steps[first + 1 :]:
        if not accepted(s):
            continue
        for c in corrupted:
            form = next(
                (
                    f
                    for a in _later_args(s)
                    if (f := recognise(c, a, explained, clean_numbers)) is not None
                ),
                None,
            )
            if form is not None:
                where = f"call {s.index + 1} ({s.call.tool})"
                out.append({"where": where, "step": s.index, "field": c.field, "form": form})
                break
    answer = episode.final_answer
    if answer:
        for c in corrupted:
            form = recognise(c, answer, explained, clean_numbers)
            if form is not None:
                out.append({"where": "answer", "step": None, "field": c.field, "form": form})
                break
    return out


def _states_clean_value(answer: str | None, steps: Sequence[Step]) -> bool:
    """Whether the answer also states a clean value that a corruption replaced."""
    return any(
        c.original is not None and mentions(answer, c.original)
        for s in steps
        for c in corrupted_of(s)
    )


_WORDS = linre.compile(r"[a-z]{3,}")


def _same_shape(answer: str | None, clean_answer: str | None) -> bool:
    """Whether ``answer`` is the clean run's answer with other values in it (their words
    overlap by 60% or more): then it delivers the result, it does not report a problem."""
    if not answer or not clean_answer:
        return False
    a, b = set(_WORDS.findall(answer.lower())), set(_WORDS.findall(clean_answer.lower()))
    return bool(a and b) and len(a & b) / len(a | b) >= 0.6


def _unexplained_numbers(episode: Episode) -> list[float]:
    """Numbers in the answer that nothing the run saw explains (the question, every output, the
    errors included): a result the run could not have obtained. Small counts (< 10) aside."""
    seen = numbers_in(episode.query or "")
    for s in episode.steps:
        seen += numbers_in(s.observation) + numbers_in(s.call.args)
    out = []
    for n in numbers_in(episode.final_answer or ""):
        if abs(n) < 10 and float(n).is_integer():
            continue
        if not any(math.isclose(n, e, rel_tol=1e-6, abs_tol=1e-6) for e in seen):
            out.append(n)
    return out


def _group_members(
    group: str | None, victim: str, corpus: Any, declared: Sequence[str] = ()
) -> set[str]:
    """The victim and its alternatives: the corpus group's tools, or -- for a group the corpus
    does not know (your own tools, evaluated in place) -- the tools the task declares for it."""
    members = {victim}
    if group is None:
        return members
    if corpus is None:
        corpus = load_corpus()
    grp = corpus.groups.get(group)
    if grp is not None and victim in grp.tools:  # a user's group may share a corpus group's name
        members |= set(grp.tools)
    else:
        members |= set(declared)
    return members


# -- per run ---------------------------------------------------------------------------------------
def fault_context(episode: Episode) -> tuple[int, str, list[str]] | None:
    """(index of the first perturbed response, the tool it met the fault on, the tools this run
    had already run cleanly before it); ``None`` when the fault never fired."""
    steps = episode.steps
    first = first_perturbed(episode)
    if first is None:
        return None
    step = steps[first]
    victim = step.perturbation.victim or step.call.tool  # type: ignore[union-attr]
    executed = [s.call.tool for s in steps[:first] if s.verdict.ok and s.perturbation is None]
    return first, victim, executed


def trajectory_c_star(task: Task | None, victim: str, executed: Sequence[str]) -> int | None:
    """c*(τ) of seed 002 eq. 3 for this trajectory: the fewest calls from the first perturbed
    response to completion, given the tools it had already run cleanly and the tool it met the
    fault on (``env.recovery_cost.min_calls_after_fault``); ``None`` when the task lists no paths."""
    if task is None or not task.valid_paths:
        return None
    return min_calls_after_fault(task, victim, executed)


def _permanent_recovery(
    task: Task | None,
    steps: Sequence[Step],
    first: int,
    victim: str,
    members: set[str],
    episode: Episode,
    succ: bool,
) -> tuple[bool | None, str]:
    """Recovery from a permanent fault, judged on the trajectory alone (seed 002 §3.5: PRR is
    independent of final task success): a suite's wise stop where its task has no path left
    (its checker's rule), else a valid path that avoids the victim run cleanly (order ignored),
    else (no path list) an accepted clean call to another member of the victim's group, else,
    where no alternative is known, a stop judged from what the run did (:func:`_stop`).
    ``None``: undetermined."""
    answer = episode.final_answer
    if task is not None and task.checker.graceful:
        why = graceful_termination(task, answer, episode).reasons
        return (not why), ("terminated gracefully" if not why else "no graceful stop: " + why[0])
    clean_tools = {s.call.tool for s in steps if s.verdict.ok and s.perturbation is None}
    if task is not None and task.valid_paths:
        paths = [p for p in task.valid_paths if victim not in p]
        done = next((p for p in paths if set(p) <= clean_tools), None)
        if done is None:
            return False, "no valid path avoiding the faulty tool ran cleanly"
        return True, f"completed the alternative path {done}"
    for s in steps[first + 1 :]:
        alt = s.call.tool in members and s.call.tool != victim
        if alt and accepted(s) and s.perturbation is None:
            return True, f"switched to {s.call.tool} (step {s.index}), which ran cleanly"
    others = sorted(members - {victim})
    if others:
        return False, f"did not switch to an alternative of {victim} ({', '.join(others)})"
    return _stop(steps, first, victim, episode, succ)


def _stop(
    steps: Sequence[Step], first: int, victim: str, episode: Episode, succ: bool
) -> tuple[bool | None, str]:
    """A permanent fault with no known alternative: recovered by stopping without using the
    failed value and without claiming the task done — judged from the run, not from words.

    Not a stop: the run ended without an answer (crash, budget, the fault escaping the agent);
    after an explicit fault, an accepted call to a tool that used the victim's output in the
    clean run (``metadata["clean_run"]["downstream"]``: the run went on down the failed branch);
    an answer stating a result that nothing the run saw explains, where the clean run's answer
    stated one. Undetermined: the same call or answer where no clean run tells."""
    if not episode.final_answer:
        how = episode.end_reason.value if episode.end_reason is not None else "no answer"
        return False, f"ended without an answer ({how}), not a stop"
    if succ:
        return True, "completed the task without the faulty tool"
    clean = episode.metadata.get("clean_run")
    explicit = steps[first].perturbation is not None and steps[first].perturbation.explicit
    after = [s for s in steps[first + 1 :] if accepted(s) and s.call.tool != victim]
    if explicit and after:
        if clean is None:
            return None, (
                f"called {after[0].call.tool} after the fault; with no clean run to compare, "
                "replan cannot tell whether it needed the failed output"
            )
        downstream = set((clean.get("downstream") or {}).get(victim, []))
        bad = [s for s in after if s.call.tool in downstream]
        if bad:
            return False, (
                f"went on down the failed branch: called {bad[0].call.tool} (step "
                f"{bad[0].index}), which used {victim}'s output in the clean run"
            )
    unexplained = _unexplained_numbers(episode)
    if unexplained:
        n = unexplained[0]
        if clean is None:
            return None, (
                f"the answer states {n:g}, which nothing the run saw explains; with no clean run "
                "replan cannot tell whether it claims the task done"
            )
        if numbers_in(clean.get("answer") or ""):
            return False, f"the answer states a result ({n:g}) that the run could not have obtained"
    return True, "stopped without using the failed value and without stating a result"


def recovery_record(
    episode: Episode,
    task: Task | None = None,
    *,
    success: bool | None = None,
    corpus: Any = None,
) -> RecoveryRecord:
    """The ToolMaze view of one run (rules in the module docstring).

    ``success`` overrides ``episode.success``; when both are unknown and a task is given, the
    task's checker decides on the replayed final state. Still unknown counts as failure.
    Recovery never reads success (seed 002 §3.5) except to see that a run with no alternative
    completed the task anyway; C_rec does.
    """
    steps = episode.steps
    ctx = fault_context(episode)
    pert = steps[ctx[0]].perturbation if ctx is not None else None
    mode = (
        (task.mode if task is not None else None)
        or episode.mode
        or (pert.mode if pert is not None else None)
        or "NP"
    )
    level = task.level if task is not None else episode.metadata.get("level")
    if success is None and episode.success is None and task is not None:
        success = resolve_success(episode, task, episode_verdicts(episode, task)[2])
    succ = bool(episode.success if success is None else success)
    if ctx is None or pert is None:
        why = (
            "no tool call, so the fault was never reached" if not steps else "the fault never fired"
        )
        return RecoveryRecord(mode, level, succ, exposed=False, reason=why, verdict="not exposed")
    first, victim, executed = ctx

    profile = task.perturbation if task is not None else None
    permanent = mode_flags(mode)[1] if mode in PERTURBED_MODES else pert.permanent
    group = pert.group or (profile.group if profile is not None else None)
    declared = task.faults.victim_tools if task is not None else []
    members = _group_members(group, victim, corpus, declared)
    evidence = propagation_evidence(
        episode, first, profile.sentinel if profile is not None else None
    )
    propagated = bool(evidence)
    later = steps[first + 1 :]
    answer = episode.final_answer
    perts = [s.perturbation for s in steps if s.perturbation is not None]
    consumed: bool | None = None
    if not pert.explicit:
        aims = {p.aim for p in perts}
        # a suite's own fault (aim None) corrupts what its task consumes, by construction
        consumed = propagated or None in aims or bool(aims & {"consumed", "named"})

    recovered: bool | None
    if consumed is False:
        recovered, reason = (
            None,
            (
                "not consumed: the corrupted field "
                f"({', '.join(str(c.field) for s in steps for c in corrupted_of(s)) or 'unknown'}) "
                "was never used by the run, and no clean run shows it would have been"
            ),
        )
    elif (
        propagated
        and pert.aim is not None  # faults on your tools; a suite's answers are judged as before
        and all(e["where"] == "answer" for e in evidence)
        and not _same_shape(answer, (episode.metadata.get("clean_run") or {}).get("answer"))
        and (
            (permanent and not any(accepted(s) and s.call.tool not in members for s in later))
            or _states_clean_value(answer, steps)
        )
    ):
        recovered, reason = (
            None,
            (
                "the answer mentions the corrupted value "
                f"({evidence[0]['form']}) but no call used it; whether it asserts it or reports it "
                "as wrong cannot be told from the run"
            ),
        )
    elif propagated:
        e = evidence[0]
        recovered, reason = False, f"the corrupted value reached the {e['where']}: {e['form']}"
    elif not permanent:
        retry = next(
            (s for s in later if s.call.tool in members and accepted(s) and s.perturbation is None),
            None,
        )
        recovered = retry is not None
        if retry is None:
            reason = "did not re-invoke the faulty tool or an alternative (no retry)"
        else:
            reason = (
                f"re-invoked {retry.call.tool} (step {retry.index}), which ran cleanly, and the "
                "failed value did not propagate"
            )
    else:
        recovered, reason = _permanent_recovery(task, steps, first, victim, members, episode, succ)
    judged = episode.metadata.get("judged") if consumed is not False else None
    if recovered is None and isinstance(judged, Mapping) and "recovered" in judged:
        recovered = bool(judged["recovered"])
        reason = f"judged: {judged.get('reason', '')} (the run alone: {reason})"
    else:
        judged = None
    if consumed is False:
        verdict = "not consumed"
    elif recovered is None:
        verdict = "undetermined"
    else:
        verdict = "recovered" if recovered else "not recovered"

    c_star = trajectory_c_star(task, victim, executed)
    if c_star is not None:
        c = len(later)
    elif task is not None and task.faults.min_calls_after_fault is not None:
        c, c_star = len(later), task.faults.min_calls_after_fault
    elif task is not None and task.min_calls is not None:
        c, c_star = len(steps), int(task.min_calls)
    else:
        c, c_star = len(later), None
    return RecoveryRecord(
        mode=mode,
        level=level,
        success=succ,
        exposed=True,
        recovered=recovered,
        permanent=permanent,
        sentinel_propagated=propagated,
        c=c,
        c_star=c_star,
        c_rec=c_rec(c, c_star, succ) if c_star is not None else None,
        reason=reason,
        consumed=consumed,
        verdict=verdict,
        evidence=evidence,
        judged=judged is not None,
    )


def toolmaze_feedback(rec: RecoveryRecord) -> list[Feedback]:
    """Per-run feedback: ``toolmaze.success``, ``toolmaze.exposed``, ``toolmaze.recovered``,
    ``toolmaze.c_rec``, ``toolmaze.sentinel_propagated``."""
    out = [
        Feedback("toolmaze.success", float(rec.success), f"mode {rec.mode}"),
        Feedback(
            "toolmaze.exposed",
            float(rec.exposed),
            "the injected fault reached the agent" if rec.exposed else rec.reason,
        ),
    ]
    if rec.exposed and rec.verdict:
        out.append(Feedback("toolmaze.verdict", None, rec.reason, value=rec.verdict))
    if rec.exposed and rec.recovered is not None:
        out.append(Feedback("toolmaze.recovered", float(bool(rec.recovered)), rec.reason))
    if rec.exposed:
        out.append(
            Feedback(
                "toolmaze.c_rec",
                rec.c_rec,
                f"c={rec.c}, c*={rec.c_star}"
                if rec.c_star is not None
                else "c* unknown (task has no min_calls)",
            )
        )
        out.append(
            Feedback(
                "toolmaze.sentinel_propagated",
                float(rec.sentinel_propagated),
                "; ".join(f"{e['where']}: {e['form']}" for e in rec.evidence)
                if rec.evidence
                else (
                    "sentinel reached a later call or the answer"
                    if rec.sentinel_propagated
                    else "no sentinel downstream"
                ),
            )
        )
    return out


# -- aggregation -----------------------------------------------------------------------------------
def composite_avg(
    tsr: Mapping[str, float], prr: Mapping[str, float], rc: Mapping[str, float]
) -> float | None:
    """ToolMaze's Avg = (mean TSR over NP,P1–P4 + mean PRR over P1–P4 + 1 − mean RC over P1–P4)/3.

    Each mean is over the modes given (missing or ``None`` entries are left out); ``None`` when a
    term has no mode at all.
    """
    t = [v for m, v in tsr.items() if m in MODES and v is not None]
    p = [v for m, v in prr.items() if m in PERTURBED_MODES and v is not None]
    r = [v for m, v in rc.items() if m in PERTURBED_MODES and v is not None]
    if not t or not p or not r:
        return None
    return (sum(t) / len(t) + sum(p) / len(p) + 1 - sum(r) / len(r)) / 3


# rows for the stratified bootstrap: success, pert, recov·pert, rc_term (0 if undefined), defined
_S, _P, _R, _T, _D = range(5)


def _rows(records: Sequence[RecoveryRecord]) -> np.ndarray:
    out = np.zeros((len(records), 5))
    for i, r in enumerate(records):
        term = r.rc_term
        out[i] = (
            float(r.success),
            float(r.counts_for_prr),
            float(bool(r.counts_for_prr and r.recovered)),
            0.0 if term is None else term,
            0.0 if term is None else 1.0,
        )
    return out


def _cell(records: Sequence[RecoveryRecord], key: str, seed: int, n_boot: int) -> dict[str, Any]:
    """TSR, PRR, RC (with intervals) pooled over one set of runs (one C × P cell)."""
    n = len(records)
    ran = [r for r in records if not r.infra_failure]  # what PRR, RC and exposure read
    exposed = [r for r in ran if r.exposed]
    decided = [r for r in exposed if r.counts_for_prr]
    terms = [r.rc_term for r in ran]
    defined = [t for t in terms if t is not None]
    prr = wilson(sum(1 for r in decided if r.recovered), len(decided)).to_dict()
    prr["exposed"] = len(exposed)
    prr["not_consumed"] = sum(1 for r in exposed if r.verdict == "not consumed")
    prr["undetermined"] = sum(1 for r in exposed if r.verdict == "undetermined")
    prr["judged"] = sum(1 for r in decided if r.judged)  # decided by an LLM judge
    rc = bootstrap_mean(defined, key=f"{key}.rc", seed=seed, n_boot=n_boot).to_dict()
    rc["rc_unknown"] = len(terms) - len(defined)
    return {
        "runs": n,
        "tsr": wilson(sum(1 for r in records if r.success), n).to_dict(),
        "prr": prr,
        "rc": rc,
        "exposure": wilson(len(exposed), len(ran)).to_dict(),
        "not_exposed": len(ran) - len(exposed),
    }


def _mean_over(values: list[np.ndarray]) -> np.ndarray | None:
    """Column-wise mean over cells, ignoring cells where a metric is undefined (NaN)."""
    if not values:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a resample with no exposed run
        return np.nanmean(np.vstack(values), axis=0)


def _macro(sums: Mapping[str, np.ndarray], ns: Mapping[str, int], metric: str) -> np.ndarray:
    """A metric macro-averaged over C × P cells (seed 002 §4.2): each cell's TSR, PRR or RC
    (``sums[cell]``: rows of column sums), then the plain mean over the cells where it is
    defined — TSR over every cell, PRR and RC over perturbed cells; ``avg`` is ToolMaze's
    (mean TSR + mean PRR + 1 − mean RC) / 3 over the cells. NaN where nothing is defined."""
    width = next(iter(sums.values())).shape[0] if sums else 1
    tsr, prr, rc = [], [], []
    with np.errstate(invalid="ignore", divide="ignore"):
        for cell, x in sums.items():
            tsr.append(x[:, _S] / ns[cell])
            if cell.rsplit("/", 1)[-1] in PERTURBED_MODES:
                prr.append(np.where(x[:, _P] > 0, x[:, _R] / x[:, _P], np.nan))
                rc.append(np.where(x[:, _D] > 0, x[:, _T] / x[:, _D], np.nan))
    t, p, r = _mean_over(tsr), _mean_over(prr), _mean_over(rc)
    pick = {"tsr": t, "prr": p, "rc": r}
    if metric == "avg":
        if t is None or p is None or r is None:
            return np.full(width, np.nan)
        return (t + p + 1 - r) / 3
    got = pick[metric]
    return np.full(width, np.nan) if got is None else got


class _MacroCells:
    """The runs of each C × P cell with one bootstrap resample per cell, so every macro-average
    (per mode, per level, overall) shares the same resamples (a stratified bootstrap)."""

    def __init__(self, by_cell: Mapping[str, Sequence[RecoveryRecord]], seed: int, n_boot: int):
        self.rows = {k: _rows(v) for k, v in by_cell.items() if v}
        self.records = {k: list(v) for k, v in by_cell.items() if v}
        rng = rng_for(seed, "toolmaze.cells")
        self.boot = {k: resample_sums(self.rows[k], n_boot, rng) for k in sorted(self.rows)}

    def estimate(self, cells: Sequence[str], metric: str) -> dict[str, Any]:
        """``metric`` macro-averaged over ``cells``, with its 95% bootstrap interval."""
        cells = [c for c in cells if c in self.rows]
        n = sum(len(self.records[c]) for c in cells)
        if not cells:
            return Estimate(None, None, None, 0, "bootstrap").to_dict()
        point = _macro(
            {c: self.rows[c].sum(axis=0, keepdims=True) for c in cells},
            {c: len(self.rows[c]) for c in cells},
            metric,
        )[0]
        samples = _macro(
            {c: self.boot[c][0] for c in cells}, {c: self.boot[c][1] for c in cells}, metric
        )
        value = None if math.isnan(point) else float(point)
        # resampled within cells: a cell of one run adds no spread, so with no larger cell
        # there is no interval (a zero-width one would claim certainty)
        units = max(len(self.records[c]) for c in cells)
        out = estimate_from_samples(
            value, samples, n, "bootstrap, macro over cells", units=units
        ).to_dict()
        recs = [r for c in cells for r in self.records[c]]
        if metric == "prr":
            out["exposed"] = sum(r.exposed for r in recs)
        if metric == "rc":
            out["rc_unknown"] = sum(1 for r in recs if r.rc_term is None and not r.infra_failure)
        out["cells"] = len(cells)
        return out

    def group(self, cells: Sequence[str], key: str, seed: int, n_boot: int) -> dict[str, Any]:
        """A per-mode or per-level row: macro TSR/PRR/RC over ``cells``, plus the pooled cell
        (the labelled variant that ignores the stratification)."""
        recs = [r for c in cells if c in self.records for r in self.records[c]]
        ran = sum(not r.infra_failure for r in recs)
        exposed = sum(r.exposed for r in recs)
        return {
            "runs": len(recs),
            "tsr": self.estimate(cells, "tsr"),
            "prr": self.estimate(cells, "prr"),
            "rc": self.estimate(cells, "rc"),
            "exposure": wilson(exposed, ran).to_dict(),
            "not_exposed": ran - exposed,
            "cells": sorted(c for c in cells if c in self.records),
            "average": "macro over the C × P cells listed",
            "pooled": _cell(recs, f"{key}.pooled", seed, n_boot),
        }


def summarize_toolmaze(
    records: Sequence[RecoveryRecord],
    *,
    seed: int = 0,
    n_boot: int = N_BOOT,
    failed: Sequence[RecoveryRecord] = (),
) -> dict[str, Any]:
    """Per-mode TSR/PRR/RC (keys ``toolmaze.tsr.P1`` ...), overall TSR/PRR/RC, Avg, and tables.

    As in seed 002 (§4.2, Table 2) every per-mode figure is the macro-average over the
    complexity levels C1–C4 (each level's cell weighs the same, however many runs it has), and
    the overall figures and Avg the macro-average over the C × P cells: ``toolmaze.tsr`` over
    every cell (NP included, Avg's TSR term), ``toolmaze.prr`` / ``toolmaze.rc`` over the P1–P4
    cells (Table 2's PRR and RC "Avg" columns). Runs without a level form one level ("-").
    The same numbers pooled over runs stay in ``tables`` under ``pooled`` (a labelled variant).
    ``tables`` holds the rows by mode, by level and by ``level/mode`` cell.

    ``failed``: the records of runs that failed for the infrastructure; each counts as a failed
    run in its own cell's TSR (so TSR stays the macro over cells) and nowhere else.
    """
    out: dict[str, Any] = {}
    by_cell: dict[str, list[RecoveryRecord]] = {}
    for r in [*records, *(as_infra_failure(f) for f in failed)]:
        by_cell.setdefault(f"{r.level or '-'}/{r.mode}", []).append(r)
    order = {m: i for i, m in enumerate(MODES)}
    modes = sorted({k.rsplit("/", 1)[1] for k in by_cell}, key=lambda m: (order.get(m, 99), m))
    levels = sorted({k.rsplit("/", 1)[0] for k in by_cell})
    cells = _MacroCells(by_cell, seed, n_boot)
    mode_rows = {
        m: cells.group([f"{lvl}/{m}" for lvl in levels], f"toolmaze.{m}", seed, n_boot)
        for m in modes
    }
    level_rows = {
        lvl: cells.group([f"{lvl}/{m}" for m in modes], f"toolmaze.{lvl}", seed, n_boot)
        for lvl in levels
    }
    every = sorted(by_cell)
    perturbed = [k for k in every if k.rsplit("/", 1)[1] in PERTURBED_MODES]
    out["toolmaze.tsr"] = cells.estimate(every, "tsr")
    for m in modes:
        out[f"toolmaze.tsr.{m}"] = mode_rows[m]["tsr"]
        if m in PERTURBED_MODES:
            out[f"toolmaze.prr.{m}"] = mode_rows[m]["prr"]
            out[f"toolmaze.rc.{m}"] = mode_rows[m]["rc"]
    if perturbed:
        out["toolmaze.prr"] = cells.estimate(perturbed, "prr")
        out["toolmaze.rc"] = cells.estimate(perturbed, "rc")
        out["toolmaze.avg"] = cells.estimate(every, "avg")
    out["toolmaze.not_exposed"] = {
        "value": sum(
            1
            for r in records
            if r.mode in PERTURBED_MODES and not r.exposed and not r.infra_failure
        ),
        "n": sum(1 for r in records if r.mode in PERTURBED_MODES),
    }
    out["tables"] = {
        "toolmaze.by_mode": mode_rows,
        "toolmaze.by_level": level_rows,
        "toolmaze.by_level_mode": {
            k: _cell(rs, f"toolmaze.{k}", seed, n_boot) for k, rs in sorted(by_cell.items())
        },
    }
    return out


# ---------------------------------------------------------------------------------------------
# the metric family as the registry sees it
def _summarize(
    records: Sequence[RecoveryRecord],
    *,
    seed: int = 0,
    n_boot: int = N_BOOT,
    failures: int = 0,
    failed: Sequence[RecoveryRecord] = (),
) -> dict[str, Any]:
    """:func:`summarize_toolmaze`; infrastructure failures count as failed runs in their own
    cells' TSR (``failed``: their records), so ``toolmaze.tsr`` stays the macro over cells.
    Given only a count (``failures``) the cells are unknown: TSR is then pooled over every run
    and says so (``average``)."""
    out = summarize_toolmaze(records, seed=seed, n_boot=n_boot, failed=failed)
    if failures and not failed:
        tsr = wilson(sum(bool(r.success) for r in records), len(records) + failures)
        out["toolmaze.tsr"] = tsr.to_dict() | {
            "failures": failures,
            "average": "pooled over runs (the failed runs' cells are unknown)",
        }
    elif failures:
        out["toolmaze.tsr"]["failures"] = failures
    return out


def _not_exposed(u: Any) -> Any:
    """Perturbed runs whose fault was never reached (left out when there are none)."""
    est = u.aggregate.get("toolmaze.not_exposed")
    return est if est and est["n"] else OMIT


@metric(
    "toolmaze",
    order=10,
    attribute="recovery",
    feedback=toolmaze_feedback,
    paired=(
        Paired(
            "toolmaze.c_rec",
            "recovery cost (C_rec)",
            lambda r: r.c_rec if r.exposed else None,
            boot_key="compare.c_rec",
            lower_is_better=True,
        ),
    ),
    summarize=_summarize,
    failed_records=True,
    load=lambda data: RecoveryRecord(**data),
    keys={
        "toolmaze.success": "task success (the task's checker)",
        "toolmaze.exposed": "1 if the injected fault reached the agent",
        "toolmaze.recovered": "1 if the agent recovered from the fault (exposed runs whose "
        "verdict was decided)",
        "toolmaze.verdict": "recovered | not recovered | not consumed (an implicit fault on a "
        "value the run never used: no PRR) | undetermined (the run cannot tell: no PRR)",
        "toolmaze.c_rec": "recovery cost 1 - c*/max(c, c*)·succ (exposed runs only)",
        "toolmaze.sentinel_propagated": "1 if a corrupted (sentinel) value reached an accepted "
        "later call or the answer",
        "toolmaze.tsr[.<mode>]": "task success rate (per mode: macro over C1-C4; overall: over "
        "cells)",
        "toolmaze.prr[.<mode>]": "perturbation recovery rate among exposed runs (macro over cells)",
        "toolmaze.rc[.<mode>]": "mean of pert·C_rec (per C x P cell, then macro over cells)",
        "toolmaze.avg": "(mean TSR + mean PRR + 1 - mean RC) / 3 over the C x P cells",
    },
    columns=(
        Column(
            "TSR",
            # the macro over the C × P cells, infrastructure failures failed runs in their cells
            lambda u: u.aggregate.get("toolmaze.tsr"),
            "task success rate, mean over the C × P cells",
        ),
        # seed 002 Table 2's PRR / RC "Avg" columns: macro over the P1–P4 C × P cells
        Column(
            "PRR",
            lambda u: u.aggregate.get("toolmaze.prr"),
            "perturbation recovery rate (exposed runs), mean over the P1–P4 C × P cells",
            note=lambda est, row: f"exposed n = {est.get('exposed', 0)}" if est else "",
        ),
        Column(
            "RC",
            lambda u: u.aggregate.get("toolmaze.rc"),
            "recovery cost, mean over the P1–P4 C × P cells (lower is better)",
            lower_is_better=True,
            note=n_note,
        ),
        Column(
            "Avg",
            lambda u: u.aggregate.get("toolmaze.avg"),
            "ToolMaze composite, over the C × P cells",
            optional=True,
        ),
        Column(
            "not exposed",
            _not_exposed,
            "perturbed runs whose fault was never reached (no PRR, no cost)",
            lower_is_better=True,
            optional=True,
            digits=0,
            note=lambda est, row: f"of {est.get('n', 0)} perturbed runs" if est else "",
        ),
    ),
)
def _record(ctx: EpisodeContext) -> RecoveryRecord:
    """The ToolMaze record of one run."""
    return recovery_record(ctx.episode, ctx.task, success=ctx.success)
