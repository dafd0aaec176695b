"""ToolMaze recovery metrics (seed 002, DESIGN §5): TSR, PRR, C_rec / RC per mode, and Avg.

Per run (:func:`recovery_record`):

- **Exposure** (``pert``): the injected fault reached the agent, i.e. some step carries a
  ``perturbation``. The first such step is *the first perturbed response*.
- **Sentinel propagation**: the sentinel (``Step.perturbation.sentinel`` or
  ``Task.perturbation.sentinel``) appears in a later call's arguments (as written or resolved)
  or in the final answer. A propagated sentinel always means *not recovered*.
- **Recovery, transient faults (P1, P3)**: after the first perturbed response the agent
  re-invoked the victim or an alternative of its group (``Task.perturbation.group`` /
  ``Step.perturbation.group``, members from the corpus's alternative groups), got a clean
  result (verdict ok, no perturbation) and *used* it: a value of that clean result (a string of
  4+ characters or a number that is not a small integer) reaches a later call's arguments or the
  final answer, or a later call references the retry's node (``${node...}``).
- **Recovery, permanent faults (P2, P4)**: where a valid path remains, the run succeeded and —
  when the task lists ``valid_paths`` — every tool of some valid path that avoids the victim ran
  cleanly (order ignored, as parallel waves reorder calls); where none remains
  (``Task.checker.graceful``), the run terminated gracefully (the checker's graceful success).
- **C_rec** = 1 − c*/max(c, c*)·succ (with 0/0 read as 1). ``c*`` is
  ``Task.metadata["min_calls_after_fault"]`` when present and then ``c`` counts the calls after
  the first perturbed response; otherwise ``c*`` is ``Task.min_calls`` (the whole task's minimum)
  and, to compare like with like, ``c`` counts every call of the run. With neither, C_rec is
  undefined for that run, it is left out of RC, and the count is reported (``rc_unknown``).

Aggregates per mode m: TSR_m = mean success; PRR_m = Σ recov·pert / Σ pert; RC_m = mean over
T_m of pert·C_rec (an unexposed run adds 0). **Avg** = (mean TSR over the modes present among
NP, P1–P4 + mean PRR over P1–P4 + 1 − mean RC over P1–P4) / 3, means taken over the modes that
have runs (and, for PRR, exposed runs). Mode comes from the task (else the episode, else the
first perturbation, else NP); level from the task (else ``episode.metadata["level"]``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from replan.core.plan import iter_references
from replan.core.task import MODES, Task, mode_flags
from replan.core.trace import Episode, Step
from replan.evaluators.stats import (
    N_BOOT,
    Feedback,
    bootstrap_mean,
    estimate_from_samples,
    stratified_bootstrap,
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

    @property
    def rc_term(self) -> float | None:
        """pert·C_rec: 0 for an unexposed run, ``None`` when exposed with c* unknown."""
        if not self.exposed:
            return 0.0
        return self.c_rec


def c_rec(c: int, c_star: int, success: bool) -> float:
    """C_rec = 1 − c*/max(c, c*)·succ; 0/0 (no calls needed, none made) reads as ratio 1."""
    if c < 0 or c_star < 0:
        raise ValueError(f"c_rec: call counts must be >= 0, got c={c}, c*={c_star}")
    top = max(c, c_star)
    ratio = 1.0 if top == 0 else c_star / top
    return 1.0 - ratio * (1.0 if success else 0.0)


# -- value matching ------------------------------------------------------------------------------
def _leaves(value: Any) -> Iterable[Any]:
    if isinstance(value, Mapping):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _contains_value(haystack: Any, needle: Any) -> bool:
    """Whether ``needle`` (a scalar) occurs in ``haystack`` (nested args or answer text)."""
    from replan.suites.checker import mentions

    for leaf in _leaves(haystack):
        if _is_number(needle):
            if _is_number(leaf) and math.isclose(float(leaf), float(needle), rel_tol=1e-9):
                return True
            if isinstance(leaf, str) and mentions(leaf, needle):
                return True
        elif isinstance(needle, str):
            if isinstance(leaf, str) and needle.lower() in leaf.lower():
                return True
        elif leaf == needle:
            return True
    return False


def _distinctive(value: Any) -> bool:
    """A value specific enough that finding it downstream proves it was used."""
    if isinstance(value, str):
        return len(value.strip()) >= 4
    if _is_number(value):
        return not (float(value).is_integer() and abs(value) < 100)
    return False


def _later_args(steps: Sequence[Step]) -> list[Any]:
    out: list[Any] = []
    for s in steps:
        out.append(s.call.args)
        if s.resolved_args is not None:
            out.append(s.resolved_args)
    return out


def _sentinel_propagated(
    sentinels: Sequence[Any], later: Sequence[Step], answer: str | None
) -> bool:
    if not sentinels:
        return False
    args = _later_args(later)
    for sv in sentinels:
        if any(_contains_value(a, sv) for a in args):
            return True
        if answer and _contains_value(answer, sv):
            return True
    return False


def _used(step: Step, later: Sequence[Step], answer: str | None) -> bool:
    """Whether the clean result of ``step`` reaches a later call or the final answer."""
    nid = step.call.node_id
    if nid:
        for s in later:
            if any(r.node == nid for r in iter_references(s.call.args)):
                return True
    echoed = set(_leaves(step.call.args)) | set(_leaves(step.resolved_args or {}))
    values = {
        v
        for v in _leaves(step.observation)
        if _distinctive(v) and v not in echoed  # an input echoed back is not a result
    }
    if not values:
        return False
    args = _later_args(later)
    for v in values:
        if any(_contains_value(a, v) for a in args):
            return True
        if answer and _contains_value(answer, v):
            return True
    return False


def _group_members(group: str | None, victim: str, corpus: Any) -> set[str]:
    members = {victim}
    if group is None:
        return members
    if corpus is None:
        from replan.env.corpus import load_corpus

        corpus = load_corpus()
    grp = corpus.groups.get(group)
    if grp is not None:
        members |= set(grp.tools)
    return members


# -- per run ---------------------------------------------------------------------------------------
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
    """
    steps = episode.steps
    first = next((i for i, s in enumerate(steps) if s.perturbation is not None), None)
    pert = steps[first].perturbation if first is not None else None
    mode = (
        (task.mode if task is not None else None)
        or episode.mode
        or (pert.mode if pert is not None else None)
        or "NP"
    )
    level = task.level if task is not None else episode.metadata.get("level")
    if success is None and episode.success is None and task is not None:
        from replan.evaluators.prefix import episode_verdicts, resolve_success

        success = resolve_success(episode, task, episode_verdicts(episode, task)[2])
    succ = bool(episode.success if success is None else success)
    if first is None or pert is None:
        return RecoveryRecord(mode, level, succ, exposed=False, reason="the fault never fired")

    profile = task.perturbation if task is not None else None
    permanent = mode_flags(mode)[1] if mode in PERTURBED_MODES else pert.permanent
    victim = pert.victim
    group = pert.group or (profile.group if profile is not None else None)
    members = _group_members(group, victim, corpus)
    sentinels = [
        s.perturbation.sentinel
        for s in steps
        if s.perturbation is not None and s.perturbation.sentinel is not None
    ]
    if profile is not None and profile.sentinel is not None:
        sentinels.append(profile.sentinel)
    later = steps[first + 1 :]
    answer = episode.final_answer
    propagated = _sentinel_propagated(sentinels, later, answer)

    if not permanent:
        retry = None
        for j, s in enumerate(later):
            clean = s.call.tool in members and s.verdict.ok and s.perturbation is None
            if clean and _used(s, later[j + 1 :], answer):
                retry = s
                break
        recovered = retry is not None and not propagated
        if propagated:
            reason = "the corrupted (sentinel) value propagated"
        elif retry is None:
            reason = "no clean re-invocation of the victim or an alternative was used"
        else:
            reason = f"re-invoked {retry.call.tool} (step {retry.index}) and used its clean result"
    else:
        graceful = bool(task is not None and task.checker.graceful)
        if propagated:
            recovered, reason = False, "the corrupted (sentinel) value propagated"
        elif graceful:
            recovered = succ
            reason = "terminated gracefully" if succ else "no graceful termination"
        elif not succ:
            recovered, reason = False, "no valid alternative path completed"
        else:
            paths = [p for p in (task.valid_paths if task is not None else []) if victim not in p]
            clean_tools = {s.call.tool for s in steps if s.verdict.ok and s.perturbation is None}
            done = next((p for p in paths if set(p) <= clean_tools), None)
            if task is not None and task.valid_paths and done is None:
                recovered, reason = False, "succeeded without completing a valid alternative path"
            else:
                recovered = True
                reason = f"completed the alternative path {done}" if done else "completed the task"

    meta = task.metadata if task is not None else {}
    c_star_after = meta.get("min_calls_after_fault")
    if c_star_after is not None:
        c, c_star = len(later), int(c_star_after)
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
    if rec.exposed:
        out.append(Feedback("toolmaze.recovered", float(bool(rec.recovered)), rec.reason))
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
                "sentinel reached a later call or the answer"
                if rec.sentinel_propagated
                else "no sentinel downstream",
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
            float(r.exposed),
            float(bool(r.exposed and r.recovered)),
            0.0 if term is None else term,
            0.0 if term is None else 1.0,
        )
    return out


def _cell(records: Sequence[RecoveryRecord], key: str, seed: int, n_boot: int) -> dict[str, Any]:
    """TSR, PRR, RC (with intervals) over one set of runs."""
    n = len(records)
    exposed = [r for r in records if r.exposed]
    terms = [r.rc_term for r in records]
    defined = [t for t in terms if t is not None]
    prr = wilson(sum(1 for r in exposed if r.recovered), len(exposed)).to_dict()
    prr["exposed"] = len(exposed)
    rc = bootstrap_mean(defined, key=f"{key}.rc", seed=seed, n_boot=n_boot).to_dict()
    rc["rc_unknown"] = len(terms) - len(defined)
    return {
        "runs": n,
        "tsr": wilson(sum(1 for r in records if r.success), n).to_dict(),
        "prr": prr,
        "rc": rc,
        "exposure": wilson(len(exposed), n).to_dict(),
    }


def _avg_stat(modes: Sequence[str]) -> Any:
    def stat(sums: Mapping[str, np.ndarray], ns: Mapping[str, int]) -> np.ndarray:
        m = next(iter(sums.values())).shape[0]
        tsr, prr, rc = [], [], []
        for mode in modes:
            if mode not in sums:
                continue
            s = sums[mode]
            tsr.append(s[:, _S] / ns[mode])
            if mode in PERTURBED_MODES:
                with np.errstate(invalid="ignore", divide="ignore"):
                    prr.append(np.where(s[:, _P] > 0, s[:, _R] / s[:, _P], np.nan))
                    rc.append(np.where(s[:, _D] > 0, s[:, _T] / s[:, _D], np.nan))
        if not tsr or not prr or not rc:
            return np.full(m, np.nan)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a resample with no exposed run
            t = np.mean(np.vstack(tsr), axis=0)
            p = np.nanmean(np.vstack(prr), axis=0)
            r = np.nanmean(np.vstack(rc), axis=0)
        return (t + p + 1 - r) / 3

    return stat


def summarize_toolmaze(
    records: Sequence[RecoveryRecord], *, seed: int = 0, n_boot: int = N_BOOT
) -> dict[str, Any]:
    """Per-mode TSR/PRR/RC (keys ``toolmaze.tsr.P1`` ...), overall TSR, Avg, and tables.

    ``tables`` holds the same cells by mode, by level and by ``level/mode``.
    """
    out: dict[str, Any] = {}
    by_mode: dict[str, list[RecoveryRecord]] = {}
    by_level: dict[str, list[RecoveryRecord]] = {}
    by_cell: dict[str, list[RecoveryRecord]] = {}
    for r in records:
        by_mode.setdefault(r.mode, []).append(r)
        lvl = r.level or "-"
        by_level.setdefault(lvl, []).append(r)
        by_cell.setdefault(f"{lvl}/{r.mode}", []).append(r)
    order = {m: i for i, m in enumerate(MODES)}
    modes = sorted(by_mode, key=lambda m: (order.get(m, 99), m))
    mode_cells = {m: _cell(by_mode[m], f"toolmaze.{m}", seed, n_boot) for m in modes}
    out["toolmaze.tsr"] = wilson(sum(1 for r in records if r.success), len(records)).to_dict()
    for m in modes:
        out[f"toolmaze.tsr.{m}"] = mode_cells[m]["tsr"]
        if m in PERTURBED_MODES:
            out[f"toolmaze.prr.{m}"] = mode_cells[m]["prr"]
            out[f"toolmaze.rc.{m}"] = mode_cells[m]["rc"]
    value = composite_avg(
        {m: c["tsr"]["value"] for m, c in mode_cells.items()},
        {m: c["prr"]["value"] for m, c in mode_cells.items()},
        {m: c["rc"]["value"] for m, c in mode_cells.items()},
    )
    if any(m in PERTURBED_MODES for m in modes):
        strata = {m: _rows(by_mode[m]) for m in modes}
        samples = stratified_bootstrap(
            strata, _avg_stat(modes), key="toolmaze.avg", seed=seed, n_boot=n_boot
        )
        out["toolmaze.avg"] = estimate_from_samples(value, samples, len(records)).to_dict()
    out["tables"] = {
        "toolmaze.by_mode": mode_cells,
        "toolmaze.by_level": {
            lvl: _cell(rs, f"toolmaze.{lvl}", seed, n_boot) for lvl, rs in sorted(by_level.items())
        },
        "toolmaze.by_level_mode": {
            k: _cell(rs, f"toolmaze.{k}", seed, n_boot) for k, rs in sorted(by_cell.items())
        },
    }
    return out
