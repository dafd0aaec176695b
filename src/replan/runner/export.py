"""Training data from scored runs, as ParaRecover's RQ4 built it: SFT examples from well-scored
replanning steps and DPO preference pairs from trajectories of the same task.

**The step.** The SDE rubric scores one replan per episode: the replanner output that
:func:`replan.evaluators.sde.select_replan` picks (the first after the first failing step). Its
*prompt* is the replanner request the agent received, rebuilt from the episode exactly as the
``replanner_loop`` graph builds it (:func:`replanner_request`: same plan state, wave results,
round and tool list); its *response* is the plan text the agent wrote (``<thought>`` + DAG).

**The score.** The item scores are the episode's feedback rows ``sde.S1`` … ``sde.E5`` in the
results store (S5 and E5 by script; the other 13 only when an LLM judge ran). The score of a
step is on ParaRecover's 15-point scale: the sum of the 15 items (each 0, 0.5 or 1; E5 in
[0, 1]) — and, when some items are missing, 15 × the mean of the scored ones. A missing item is
never read as 0. ``use_auto`` (default on) fills a missing judged item with its deterministic
estimate (``sde.auto.<item>``: S2, S3, S4, E1, E3, D4) where one exists, so a run without a judge
scores 8 items per step (S5, E5 and the six estimates). ``min_items`` says how many items must be
scored for a step to be used at all; by default (``None``) it is the number of items most steps
of the store have — 15 after a judge, 7 or 8 without (``sde.auto.D4`` is undefined for some
replans) — so the defaults use what the run has and a step with fewer items is left out. The export reports how many steps had which
items, and what each filter removed.

**Thresholds** (the paper's): SFT keeps steps whose score is *greater than* ``min_avg``
(default 10 of 15). DPO pairs two trajectories of the same task *and the same request* (a
preference pair needs one prompt), both scoring *at least* ``min_score`` (default 3), the
higher-scoring one chosen, when the gap is *greater than* ``min_gap`` (default 5). Identical
(prompt, response) examples and pairs of identical responses are dropped.

Layouts: SFT lines are ``{"messages": [system, user, assistant]}`` (TRL's conversational
format); DPO lines are ``{"prompt": [system, user], "chosen": [assistant], "rejected":
[assistant]}`` (TRL's conversational preference format). ``with_meta`` adds a ``metadata`` key
naming the source episodes and their item scores.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the CLI imports this module for its defaults: keep start-up light
    from langchain_core.messages import BaseMessage

    from replan.core.task import Task
    from replan.core.trace import Episode
    from replan.runner.store import ResultsStore

DEFAULT_MIN_AVG = 10.0
DEFAULT_MIN_SCORE = 3.0
DEFAULT_MIN_GAP = 5.0
SCALE = 15.0  # ParaRecover's scale: the 15 SDE items (replan.evaluators.sde.ITEMS)


# -- the replanner request ---------------------------------------------------------------------
def hint_of(episode: Episode) -> bool:
    """Whether the model label says the run used the failure-aware prompt (``<spec>+hint``,
    :func:`replan.runner.experiment.model_with_prompt`). The export also reads the experiment's
    ``prompt`` setting from the store."""
    return episode.model.rsplit("+", 1)[-1] == "hint" if "+" in episode.model else False


def _parse(text: str, plan: Any) -> Any:
    from replan.core.plan import Plan

    return Plan.parse(text if text.strip() else plan)


def replanner_request(
    episode: Episode,
    task: Task | None,
    plan_index: int,
    *,
    hint: bool | None = None,
) -> list[BaseMessage]:
    """The messages the replanner received before writing ``episode.plans[plan_index]``.

    Replays the ``replanner_loop`` bookkeeping over the recorded plans and steps: the current
    plan (the first plan, then each replan reconciled with what already ran), node statuses from
    execution, the results of the wave just run, the round index, the task's tools and the
    prompt variant. Raises ``ValueError`` naming the episode when the request cannot be rebuilt.
    """
    from replan.core.plan import Plan
    from replan.evaluators.sde import task_tools
    from replan.nodes.frontier import observation_record, reconcile, with_status
    from replan.nodes.prompts import replanner_messages

    where = f"episode {episode.episode_id} (task {episode.task_id})"
    if not 0 <= plan_index < len(episode.plans):
        raise ValueError(f"{where}: no plan version {plan_index}")
    if episode.plans[plan_index].source != "replanner":
        raise ValueError(f"{where}: plan {plan_index} is not a replanner output")
    if task is None:
        raise ValueError(f"{where}: its task is not in the store, so its tool list is unknown")
    tools = list(task_tools(task, episode).values())
    query = episode.query or task.query
    use_hint = hint_of(episode) if hint is None else hint
    plan: Plan | None = None
    outputs: dict[str, Any] = {}
    ran = 0
    for i, pv in enumerate(episode.plans[: plan_index + 1]):
        parsed = _parse(pv.text, pv.plan)
        if pv.source != "replanner":
            plan = parsed if isinstance(parsed, Plan) else None
            continue
        if plan is None:
            raise ValueError(f"{where}: no executable plan before replan {i}")
        while ran < pv.round:  # dispatch and run the waves up to this replan
            ran += 1
            outputs.update(dict.fromkeys(plan.next_wave(outputs)[1]))  # settle tool-less nodes
            for s in episode.steps:
                if s.round == ran and s.verdict.ok and s.call.node_id:
                    outputs[s.call.node_id] = s.observation
        wave = [s for s in episode.steps if s.round == pv.round]
        failed = {s.call.node_id for s in wave if s.call.node_id not in outputs}
        current = with_status(plan, outputs, failed)  # type: ignore[arg-type]
        if i == plan_index:
            return replanner_messages(
                query,
                tools,
                current.to_pararecover(),
                [observation_record(s) for s in wave],
                round_index=pv.round,
                hint=use_hint,
            )
        if not isinstance(parsed, Plan):
            raise ValueError(f"{where}: replan {i} does not parse, so the run ended there")
        try:
            plan, _ = reconcile(current, parsed, outputs)
        except ValueError as exc:
            raise ValueError(f"{where}: replan {i} could not be merged: {exc}") from exc
    raise AssertionError("unreachable")  # pragma: no cover


def chat(messages: Sequence[BaseMessage]) -> list[dict[str, str]]:
    """LangChain messages as ``{"role", "content"}`` dicts (system / user / assistant)."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    roles = {SystemMessage: "system", HumanMessage: "user", AIMessage: "assistant"}
    out = []
    for m in messages:
        role = next((r for cls, r in roles.items() if isinstance(m, cls)), None)
        if role is None:
            raise ValueError(f"cannot export a {type(m).__name__} as a chat turn")
        out.append({"role": role, "content": str(m.content)})
    return out


# -- scored steps ------------------------------------------------------------------------------
@dataclass
class ScoredStep:
    """One scored replanning step: its request, the plan text written, and its item scores."""

    key: str
    episode: Episode
    plan_index: int
    prompt: list[dict[str, str]]
    response: str
    items: dict[str, float]
    sources: dict[str, str]

    @property
    def score(self) -> float:
        """The step's score on the 15-point scale (15 × mean of the scored items)."""
        return SCALE * sum(self.items.values()) / len(self.items)

    def meta(self) -> dict[str, Any]:
        e = self.episode
        return {
            "episode": self.key,
            "task_id": e.task_id,
            "design": e.design,
            "model": e.model,
            "seed": e.seed,
            "plan_index": self.plan_index,
            "score": round(self.score, 6),
            "items": self.items,
            "sources": self.sources,
        }


@dataclass
class ExportSummary:
    """What an export wrote and why the rest was left out (printed by ``replan export``)."""

    kind: str
    out: str
    written: int = 0
    episodes: int = 0
    steps: int = 0  # episodes with a scored replanner step
    item_counts: dict[str, int] = field(default_factory=dict)
    complete: int = 0  # steps with all 15 items
    eligible: int = 0  # steps with at least min_items items and a rebuilt request
    excluded: dict[str, int] = field(default_factory=dict)
    thresholds: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    funnel: list[tuple[str, int]] = field(default_factory=list)  # (filter, steps it removed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "out": self.out,
            "written": self.written,
            "episodes": self.episodes,
            "scored_steps": self.steps,
            "steps_with_all_items": self.complete,
            "item_counts": self.item_counts,
            "eligible_steps": self.eligible,
            "excluded": self.excluded,
            "thresholds": self.thresholds,
            "removed_by": dict(self.funnel),
            **self.details,
        }


def _feedback_by_episode(store: ResultsStore) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for ep_key, metric, score, _ in store.feedback():
        if score is not None:
            out[ep_key][metric] = float(score)
    return out


def scored_steps(
    out_dir: str | Path,
    summary: ExportSummary,
    *,
    min_items: int | None = None,
    use_auto: bool = True,
) -> list[ScoredStep]:
    """The eligible scored replanning steps of a results directory (bookkeeping in ``summary``).

    ``min_items=None`` asks for the item count most steps of the store have (see the module
    docstring); the resolved number is recorded in ``summary.thresholds["min_items"]``."""
    from replan.evaluators import task_of
    from replan.evaluators.sde import ITEMS, SCRIPT_ITEMS, select_replan
    from replan.runner.store import ResultsStore, episode_key

    if min_items is not None and not 1 <= min_items <= len(ITEMS):
        raise ValueError(f"min_items must be in 1..{len(ITEMS)}, got {min_items}")
    path = Path(out_dir) / ResultsStore.FILENAME
    if not path.is_file():
        raise FileNotFoundError(f"{out_dir}: no {ResultsStore.FILENAME}, not a results directory")
    with ResultsStore(out_dir) as store:
        episodes = store.episodes()
        tasks = store.tasks()
        feedback = _feedback_by_episode(store)
        hinted = {  # episodes of experiments run with the failure-aware prompt
            episode_key(e.task_id, e.design, e.model, e.seed)
            for exp, cfg in store.experiments()
            if cfg.get("prompt") == "hint"
            for e in store.episodes(exp)
        }
    counts: Counter[str] = Counter()
    excluded: Counter[str] = Counter()
    found: list[tuple[Episode, str, int, dict[str, float], dict[str, str]]] = []
    summary.episodes = len(episodes)
    for ep in episodes:
        idx = select_replan(ep)
        if idx is None:
            excluded["no replanner output"] += 1
            continue
        key = episode_key(ep.task_id, ep.design, ep.model, ep.seed)
        fb = feedback.get(key, {})
        items: dict[str, float] = {}
        sources: dict[str, str] = {}
        for item in ITEMS:
            if f"sde.{item}" in fb:
                items[item] = fb[f"sde.{item}"]
                sources[item] = "script" if item in SCRIPT_ITEMS else "judge"
            elif use_auto and f"sde.auto.{item}" in fb:
                items[item] = fb[f"sde.auto.{item}"]
                sources[item] = "auto"
        summary.steps += 1
        counts.update(items.keys())
        if len(items) == len(ITEMS):
            summary.complete += 1
        found.append((ep, key, idx, items, sources))
    if min_items is None:  # what the run has: the item count most steps reach (larger on ties)
        per_step = Counter(len(items) for *_, items, _ in found)
        min_items = max(per_step.items(), key=lambda kv: (kv[1], kv[0]))[0] if per_step else 1
        min_items = max(1, min_items)
    summary.thresholds["min_items"] = min_items
    out: list[ScoredStep] = []
    for ep, key, idx, items, sources in found:
        if len(items) < min_items:
            excluded[f"fewer than {min_items} of the 15 items scored"] += 1
            continue
        try:
            hint = key in hinted or hint_of(ep)
            prompt = chat(replanner_request(ep, task_of(ep, tasks), idx, hint=hint))
        except ValueError as exc:
            reason = str(exc).split(": ", 1)[-1]
            excluded[f"request not rebuilt: {reason}"] += 1
            continue
        pv = ep.plans[idx]
        response = pv.text if pv.text.strip() else json.dumps(pv.plan, ensure_ascii=False)
        out.append(ScoredStep(key, ep, idx, prompt, response, items, sources))
    summary.item_counts = {item: counts.get(item, 0) for item in ITEMS}
    summary.eligible = len(out)
    summary.excluded = dict(excluded)
    return out


class EmptyExport(ValueError):
    """An export that selected nothing would replace a non-empty file (``force`` allows it);
    ``summary`` says what each filter removed."""

    summary: ExportSummary | None = None


def write_jsonl(path: Path, rows: Sequence[Mapping[str, Any]], *, force: bool = False) -> None:
    """Write ``rows`` to a temporary file beside ``path`` and move it into place atomically, so a
    failed or interrupted export never leaves a truncated file. An empty ``rows`` never replaces
    a non-empty file unless ``force`` (raises :class:`EmptyExport`)."""
    if not rows and not force and path.is_file() and path.stat().st_size > 0:
        raise EmptyExport(
            f"nothing selected, so {path} ({path.stat().st_size} bytes) was left as it was; "
            "pass --force to replace it with an empty file"
        )
    write_atomic(path, ((json.dumps(row, ensure_ascii=False) + "\n").encode() for row in rows))


def write_atomic(path: str | Path, chunks: Iterable[bytes]) -> None:
    """Write ``chunks`` to a temporary file beside ``path``, then move it into place atomically:
    a failed or interrupted write never leaves a truncated file nor replaces a good one."""
    import os
    import tempfile

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        if hasattr(os, "fchmod"):  # as an ordinary new file (mkstemp makes it private)
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def export_sft(
    out_dir: str | Path,
    out_file: str | Path | None = None,
    *,
    min_avg: float = DEFAULT_MIN_AVG,
    min_items: int | None = None,
    use_auto: bool = True,
    with_meta: bool = False,
    force: bool = False,
) -> ExportSummary:
    """Write the steps scoring more than ``min_avg`` (of 15) as chat-format SFT JSONL."""
    target = Path(out_file) if out_file is not None else Path(out_dir) / "sft.jsonl"
    summary = ExportSummary("sft", str(target))
    summary.thresholds = {"min_avg": min_avg, "min_items": min_items, "use_auto": use_auto}
    steps = scored_steps(out_dir, summary, min_items=min_items, use_auto=use_auto)
    rows, seen = [], set()
    below = dupes = 0
    for s in steps:
        if not s.score > min_avg:
            below += 1
            continue
        ident = json.dumps([s.prompt, s.response], ensure_ascii=False)
        if ident in seen:
            dupes += 1
            continue
        seen.add(ident)
        row: dict[str, Any] = {
            "messages": [*s.prompt, {"role": "assistant", "content": s.response}]
        }
        if with_meta:
            row["metadata"] = s.meta()
        rows.append(row)
    summary.written = len(rows)
    summary.details = {"not_above_min_avg": below, "duplicates": dupes}
    summary.funnel = [
        *_funnel(summary),
        (f"score not above --min-avg {min_avg:g}", below),
        ("duplicate (prompt, response)", dupes),
    ]
    _write(target, rows, force, summary)
    return summary


def export_dpo(
    out_dir: str | Path,
    out_file: str | Path | None = None,
    *,
    min_score: float = DEFAULT_MIN_SCORE,
    min_gap: float = DEFAULT_MIN_GAP,
    min_items: int | None = None,
    use_auto: bool = True,
    with_meta: bool = False,
    force: bool = False,
) -> ExportSummary:
    """Write preference pairs (same task, same request; gap > ``min_gap``, both ≥
    ``min_score``) as TRL conversational DPO JSONL."""
    target = Path(out_file) if out_file is not None else Path(out_dir) / "dpo.jsonl"
    summary = ExportSummary("dpo", str(target))
    summary.thresholds = {
        "min_score": min_score,
        "min_gap": min_gap,
        "min_items": min_items,
        "use_auto": use_auto,
    }
    steps = scored_steps(out_dir, summary, min_items=min_items, use_auto=use_auto)
    by_task: dict[str, dict[str, list[ScoredStep]]] = defaultdict(lambda: defaultdict(list))
    for s in steps:
        by_task[s.episode.task_id][json.dumps(s.prompt, ensure_ascii=False)].append(s)
    rows, seen = [], set()
    below_floor = unpaired = 0
    largest_gap: float | None = None  # between different responses to one request
    for task_id in sorted(by_task):
        groups = by_task[task_id]
        for group in groups.values():
            ok = [s for s in group if s.score >= min_score]
            below_floor += len(group) - len(ok)
            ok.sort(key=lambda s: (-s.score, s.key))
            gaps = [a.score - b.score for a in ok for b in ok if a.response != b.response]
            if gaps:
                largest_gap = max([*gaps, largest_gap or 0.0])
            paired: set[str] = set()
            for i, hi in enumerate(ok):
                for lo in ok[i + 1 :]:
                    if not hi.score - lo.score > min_gap or hi.response == lo.response:
                        continue
                    ident = json.dumps([hi.prompt, hi.response, lo.response], ensure_ascii=False)
                    if ident in seen:
                        continue
                    seen.add(ident)
                    row: dict[str, Any] = {
                        "prompt": hi.prompt,
                        "chosen": [{"role": "assistant", "content": hi.response}],
                        "rejected": [{"role": "assistant", "content": lo.response}],
                    }
                    if with_meta:
                        row["metadata"] = {
                            "task_id": task_id,
                            "gap": round(hi.score - lo.score, 6),
                            "chosen": hi.meta(),
                            "rejected": lo.meta(),
                        }
                    rows.append(row)
                    paired.update((hi.key, lo.key))
            unpaired += sum(1 for st in ok if st.key not in paired) if len(group) > 1 else 0
    summary.written = len(rows)
    summary.details = {
        "tasks": len(by_task),
        "requests": sum(len(g) for g in by_task.values()),
        "tasks_with_several_requests": sum(1 for g in by_task.values() if len(g) > 1),
        "below_min_score": below_floor,
        "largest_gap": None if largest_gap is None else round(largest_gap, 4),
    }
    lonely = sum(1 for g in by_task.values() for grp in g.values() if len(grp) == 1)
    summary.funnel = [
        *_funnel(summary),
        ("no other step with the same task and request to pair with", lonely),
        (f"score below --min-score {min_score:g}", below_floor),
        (f"no partner more than --min-gap {min_gap:g} apart (or same response)", unpaired),
    ]
    _write(target, rows, force, summary)
    return summary


def _write(target: Path, rows: list[dict[str, Any]], force: bool, summary: ExportSummary) -> None:
    try:
        write_jsonl(target, rows, force=force)
    except EmptyExport as exc:
        exc.summary = summary
        raise


def _funnel(summary: ExportSummary) -> list[tuple[str, int]]:
    """What the shared step filters removed, in order (for an empty export's explanation)."""
    rows = [(reason, n) for reason, n in summary.excluded.items() if reason.startswith("no ")]
    rows += [(reason, n) for reason, n in summary.excluded.items() if reason.startswith("fewer")]
    rows += [(reason, n) for reason, n in summary.excluded.items() if reason.startswith("request")]
    return rows


def export_episodes(
    out_dir: str | Path,
    out_file: str | Path | None = None,
    tasks_file: str | Path | None = None,
    *,
    force: bool = False,
) -> dict[str, Any]:
    """Write every stored episode as Episode JSON lines (the input of ``replan score``) and the
    tasks they ran as Task JSON lines (its ``--tasks``); returns the paths and counts."""
    from replan.runner.store import ResultsStore

    path = Path(out_dir) / ResultsStore.FILENAME
    if not path.is_file():
        raise FileNotFoundError(f"{out_dir}: no {ResultsStore.FILENAME}, not a results directory")
    target = Path(out_file) if out_file is not None else Path(out_dir) / "episodes.jsonl"
    tasks_target = Path(tasks_file) if tasks_file is not None else target.with_name("tasks.jsonl")
    with ResultsStore(out_dir) as store:
        episodes = store.episodes()
        tasks = store.tasks()
    used = sorted({e.task_id for e in episodes if e.task_id in tasks})
    write_jsonl(target, [json.loads(e.to_json()) for e in episodes], force=force)
    write_jsonl(tasks_target, [json.loads(tasks[t].model_dump_json()) for t in used], force=force)
    return {
        "episodes": len(episodes),
        "tasks": len(used),
        "out": str(target),
        "tasks_out": str(tasks_target),
    }
