"""ToolMaze-style suite: C1–C4 task DAGs built tool-first from the corpus, × {NP, P1–P4}.

Generation follows ToolMaze §3.3, with deterministic code where the paper uses LLMs:

1. **DAG assembly.** A task is a sequence of *units*: a fixed tool, or an alternative group
   (``AlternativeGroup`` of the corpus: 1-1 / 1-N / N-N chains of tools). Units are chained by
   semantic kind (``x-kind``): an input is bound to an earlier output of the same kind and a
   compatible JSON type, written as a ``${node.field}`` reference, so data really flows; a
   parameter that names a record a precondition checks is bound only to the output that created
   that record. Literal inputs come from the kinds' example values (one shared rotation per task,
   so index-aligned kinds — a city, its airport, its country — stay coherent). Levels:
   **C1** a linear chain of fixed tools (one path); **C2** a chain with one 1-1 / 1-N group;
   **C3** a chain with one N-N (many-to-many) group; **C4** a shared prefix fanning out into 2–3
   branches, each holding its own group (paths multiply). Every task has a source and ends each
   branch in an action. Sampling is domain-balanced (a primary domain per task, General tools as
   glue, other domains where the kinds chain naturally) and penalises tools already used in the
   level, which keeps tool sets diverse.
2. **Solution-space enumeration.** Every combination of group chains is a valid path, the mixed
   chains of a group too (step-list tasks: :func:`~.assembly.with_mixed_chains`; a goal-level
   task has none, its reverse validation regenerates it); each is built as a concrete plan and
   *executed* in a clean world — a task is kept only if all its declared paths run clean. The shortest path (fewest calls, then fewest waves) is s*: ``min_calls`` = c*,
   ``optimal_rounds`` = G (tool-call waves of s*; no response round in this suite).
3. **Checker and query.** The checker holds what *every* valid path achieves: records created or
   changed (fields whose values agree across paths; tool-generated ids are left out of the match
   and must instead be stated in the answer), plus facts from the final outputs that every path
   returns. The query is written from templates and states every literal any path needs.

Each base task is crossed with the modes: the victim is chosen on s* (C1: a tool with
downstream calls; C2–C4: the group, the first of whose tools the agent calls becomes the victim;
C4: one branch's group). Under P2/P4 a C1 task has no path left and success means graceful
termination. ``Task.faults`` carries the victim tools, the implicit
corruption per possible victim and ``min_calls_after_fault`` (c* for Recovery Cost, computed by
:mod:`replan.env.recovery_cost`); ``Task.metadata`` keeps the suite's own notes: the paths (tools
+ plan, for :func:`path_plans`), domains, the victim node, the literals and the sentinel salt.

The package follows these seams: :mod:`.levels` (levels, sizes, limits), :mod:`.index` (the corpus
as the generator sees it), :mod:`.assembly` (units bound by kind and the plan builder),
:mod:`.generator` (base tasks, enumeration, instances per mode), :mod:`.execute` (running a plan
wave by wave), :mod:`.derive_checker` (what every valid path achieves), :mod:`.query` (the
natural-language query); this module holds the suite itself (generation entry points, stats,
random plans for property tests).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any

from replan.core.plan import Plan
from replan.core.task import MODES, Task
from replan.core.tools import DOMAINS
from replan.env.corpus import Corpus, load_corpus
from replan.env.perturb import Perturber, injector_for
from replan.env.verifier import verify
from replan.env.world import stable_seed
from replan.suites.suite import StatsTable, csv_option, per_cell_subset, suite
from replan.suites.toolmaze.assembly import Builder, Literals, SearchState
from replan.suites.toolmaze.execute import PlanExecution, answer_from_outputs, execute_plan
from replan.suites.toolmaze.frozen import read_frozen_suite
from replan.suites.toolmaze.generator import Generator
from replan.suites.toolmaze.goal import path_reading, reverse_validate
from replan.suites.toolmaze.index import corpus_by_key, corpus_index, corpus_key
from replan.suites.toolmaze.levels import (
    GOAL_PER_LEVEL,
    GUIDED,
    LEVELS,
    PER_LEVEL,
    QUERIES,
    SUITE,
    GenerationError,
)
from replan.suites.toolmaze.stages import BaseTask
from replan.suites.versions import read_frozen_stats

# ---------------------------------------------------------------------------------------------
# the suite
#: called as ``hook(level, done, n)`` after each base task is generated (the CLI's progress bar)
ON_BASE_TASK: Callable[[str, int, int], None] | None = None


@lru_cache(maxsize=32)
def _base_level(
    corpus_id: int, seed: int, level: str, n: int, queries: str = "guided"
) -> tuple[BaseTask, ...]:
    gen = Generator(corpus_by_key(corpus_id), seed, queries)
    uses: Counter[str] = Counter()
    out = []
    for i in range(n):
        out.append(gen.base_task(level, i, uses))
        if ON_BASE_TASK is not None:
            ON_BASE_TASK(level, i + 1, n)
    return tuple(out)


def base_tasks(
    seed: int = 0,
    levels: Iterable[str] = LEVELS,
    per_level: int = PER_LEVEL,
    corpus: Corpus | None = None,
    queries: str = "guided",
) -> list[BaseTask]:
    """The base tasks (``per_level`` per level), generated deterministically and cached;
    ``queries`` is the query style (:data:`~replan.suites.toolmaze.levels.QUERIES`)."""
    key = corpus_key(corpus or load_corpus())
    out: list[BaseTask] = []
    for level in levels:
        if level not in LEVELS:
            raise ValueError(f"unknown ToolMaze level {level!r}; expected one of {LEVELS}")
        out.extend(_base_level(key, seed, level, per_level, queries))
    return out


def generate(
    seed: int = 0,
    levels: Iterable[str] = LEVELS,
    modes: Iterable[str] = MODES,
    limit: int | None = None,
    per_level: int = PER_LEVEL,
    corpus: Corpus | None = None,
    queries: str = "guided",
) -> list[Task]:
    """The suite's task instances: base tasks of ``levels`` × ``modes`` (level-major order).

    ``limit`` keeps the first ``limit`` base tasks of each level (all their modes); ``queries``
    is the query style: ``"guided"`` (the steps listed: ``toolmaze-guided``, and the base tasks
    ``pararecover-synth`` builds on) or ``"goal"`` (goal-level: the ``toolmaze`` suite).
    """
    modes = list(modes)
    for m in modes:
        if m not in MODES:
            raise ValueError(f"unknown perturbation mode {m!r}; expected one of {MODES}")
    corpus = corpus or load_corpus()
    gen = Generator(corpus, seed, queries)
    n = per_level if limit is None else min(per_level, limit)
    out: list[Task] = []
    for level in levels:
        got = base_tasks(seed, [level], per_level if limit is None else n, corpus, queries)
        for base in got[:n]:
            out.extend(gen.instances(base, modes))
    return out


def stats(tasks: Sequence[Task]) -> dict[str, Any]:
    """ToolMaze Table 1 figures per level, plus the instance count per mode."""
    corpus = load_corpus()
    out: dict[str, Any] = {
        "levels": {},
        "modes": dict(sorted(Counter(t.mode for t in tasks).items())),
    }
    bases: dict[str, dict[str, Task]] = defaultdict(dict)
    for t in tasks:
        bases[t.level or "?"].setdefault(t.base_id, t)
    for level, by_base in sorted(bases.items()):
        ts = list(by_base.values())
        domains: Counter[str] = Counter()
        for t in ts:
            for d in {corpus.tools[x].domain for x in t.tools if x in corpus.tools}:
                domains[d] += 1
        sets = [frozenset(t.tools) for t in ts]
        pairs = list(itertools.combinations(sets, 2))
        jac = sum(len(a & b) / len(a | b) for a, b in pairs) / len(pairs) if pairs else 0.0
        lengths = [t.min_calls or 0 for t in ts]
        out["levels"][level] = {
            "tasks": len(ts),
            "domain_involvement": {d: domains.get(d, 0) for d in DOMAINS},
            "mean_jaccard": round(jac, 4),
            "avg_length": round(sum(lengths) / len(lengths), 2) if lengths else 0.0,
            "min_length": min(lengths) if lengths else 0,
            "max_length": max(lengths) if lengths else 0,
            "valid_paths": sum(len(t.valid_paths) for t in ts),
        }
    return out


# ---------------------------------------------------------------------------------------------
# random plans for property tests
def random_plan(corpus: Corpus, rng: random.Random, n_calls: int, *, attempts: int = 200) -> Plan:
    """A random valid plan of ``n_calls`` tool calls over ``corpus`` with real data flow.

    Every call after the first consumes an output of an earlier call through a ``${node.field}``
    reference; the plan verifies clean (``replan.env.verifier.verify`` with ``corpus.world()``)
    and executes clean on ``corpus.world()``. Raises ``ValueError`` when none is found.
    """
    if n_calls < 1:
        raise ValueError(f"n_calls must be at least 1, got {n_calls}")

    ix = corpus_index(corpus)
    gen = Generator(corpus, 0)
    for _ in range(attempts):
        lit = Literals(ix, rng.randrange(10_000))
        b = Builder(ix, lit)
        st = SearchState([], [], frozenset(), frozenset())
        ok = True
        for i in range(n_calls):
            if i == 0:
                pool = list(ix.tools)
            else:
                pool = sorted({c for a in st.avail for c in ix.consumers.get(a.kind, ())} - st.used)
            rng.shuffle(pool)
            unit = None
            for cand in pool[:60]:
                if ix.tools[cand].spec.group and ix.tools[cand].spec.group in st.groups_used:
                    continue
                link = None if i == 0 else {u.index for u in st.units}
                unit = b.make_unit(cand, st, link)
                if unit is not None:
                    break
            if unit is None:
                ok = False
                break
            st = st.add(unit, ix)
        if not ok:
            continue
        ids = {u.chains[0][0].key: str(i + 1) for i, u in enumerate(st.units)}
        plan = gen._plan(st.units, {}, ids, "a random task")
        world = corpus.world()
        if verify(plan, corpus.tools, world):
            continue
        if execute_plan(plan, world).failed is None:
            return plan
    raise ValueError(f"no valid random plan of {n_calls} calls found in {attempts} attempts")


def path_plans(task: Task) -> list[Plan]:
    """The concrete plans of every valid path of a generated task (s* first)."""
    out = []
    for p in task.metadata.get("paths", []):
        plan = Plan.parse(p["plan"])
        if not isinstance(plan, Plan):
            raise ValueError(f"task {task.task_id}: stored path plan does not parse: {plan.reason}")
        out.append(plan)
    return out


def task_injector(task: Task) -> Perturber | None:
    """The fault injector of a ToolMaze task instance (``None`` under NP)."""

    return injector_for(task)


# ---------------------------------------------------------------------------------------------
# the suite as replan run, replan suites and load_suite see it
def _subset_options(
    levels: Sequence[str], modes: Sequence[str], limit: int | None, per_cell: int
) -> dict[str, Any]:
    """Generate only what a run needs: the generator is prefix-stable (the first k base tasks
    of a level are the same whatever the total), so a subset asks for k per level."""
    return _subset(PER_LEVEL, levels, modes, limit, per_cell)


def _goal_subset_options(
    levels: Sequence[str], modes: Sequence[str], limit: int | None, per_cell: int
) -> dict[str, Any]:
    """As :func:`_subset_options`, within the goal-level suite's base tasks per level."""
    return _subset(GOAL_PER_LEVEL, levels, modes, limit, per_cell)


def _subset(
    per_level: int,
    levels: Sequence[str],
    modes: Sequence[str],
    limit: int | None,
    per_cell: int,
) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    if limit is not None:  # --limit spreads over the cells: ceil(N / cells) per cell
        wanted = -(-limit // ((len(levels) or len(LEVELS)) * (len(modes) or len(MODES))))
    else:
        wanted = per_cell
    if wanted:
        opts["per_level"] = min(per_level, wanted)
    if levels:
        opts["levels"] = list(levels)
    return opts


def _stats_of(name: str, queries: str) -> Callable[..., dict]:
    """The ``stats`` hook of suite ``name`` (query style ``queries``)."""

    def _stats(*, seed: int = 0, progress: Callable[[str, int, int], None] | None = None) -> dict:
        """The whole suite's figures: at the pinned seed those stored when it was frozen (or
        computed from the frozen file), otherwise from a generation (a minute or more),
        reporting each base task to ``progress``."""
        global ON_BASE_TASK
        per_level = GOAL_PER_LEVEL if queries == "goal" else PER_LEVEL
        total = len(LEVELS) * per_level
        done_before: dict[str, int] = {}

        def tick(level: str, done: int, n: int) -> None:
            done_before[level] = done
            if progress is not None:
                progress(f"generating {name} {level}", sum(done_before.values()), total)

        frozen = read_frozen_stats(name, {"seed": seed})
        if frozen is not None:  # computed when the suite was frozen
            return {"suite": name, "seed": seed, **frozen}
        tasks = read_frozen_suite(seed, LEVELS, MODES, per_level, name, per_level)
        if tasks is None:
            ON_BASE_TASK = tick
            try:
                tasks = generate(seed=seed, queries=queries, per_level=per_level)
            finally:
                ON_BASE_TASK = None
        return {"suite": name, "seed": seed, **stats(tasks)}

    return _stats


def _stats_view(report: dict[str, Any]) -> list[StatsTable | str]:
    """ToolMaze Table 1 figures per level, then the instances per mode."""
    levels = report["levels"]
    lvs = list(levels)
    doms = next(iter(levels.values()))["domain_involvement"] if levels else {}
    rows = [
        (f"domain: {d}", *[str(levels[lv]["domain_involvement"][d]) for lv in lvs]) for d in doms
    ]
    rows += [
        ("mean Jaccard", *[f"{levels[lv]['mean_jaccard']:.3f}" for lv in lvs]),
        ("avg length", *[f"{levels[lv]['avg_length']:.2f}" for lv in lvs]),
        (
            "length min/max",
            *[f"{levels[lv]['min_length']}/{levels[lv]['max_length']}" for lv in lvs],
        ),
        ("valid paths", *[str(levels[lv]["valid_paths"]) for lv in lvs]),
        ("base tasks", *[str(levels[lv]["tasks"]) for lv in lvs]),
    ]
    title = f"{report.get('suite', SUITE)}: ToolMaze Table 1 figures per level"
    return [
        StatsTable(title, ("metric", *lvs), tuple(rows)),
        "instances per mode: " + ", ".join(f"{m} {n}" for m, n in report["modes"].items()),
    ]


def _load(
    name: str,
    queries: str,
    levels: Iterable[str] | str | None,
    modes: Iterable[str] | str | None,
    limit: int | None,
    seed: int,
    per_level: int,
    frozen_per_level: int,
    version: str | int | None = None,
) -> list[Task]:
    lvs = [lv.upper() for lv in csv_option(levels) or LEVELS]
    mds = [m.upper() for m in csv_option(modes) or MODES]
    n = int(per_level) if limit is None else min(int(per_level), int(limit))
    older = None if version in (None, "") else str(version)
    frozen = read_frozen_suite(int(seed), lvs, mds, n, name, frozen_per_level, older)
    if frozen is not None:
        return frozen
    return generate(
        seed=int(seed),
        levels=lvs,
        modes=mds,
        limit=int(limit) if limit is not None else None,
        per_level=int(per_level),
        queries=queries,
    )


@suite(
    SUITE,
    description="ToolMaze-style C1–C4 tasks × NP, P1–P4 with goal-level queries (the goals and "
    f"the given facts, no steps; {4 * GOAL_PER_LEVEL} base tasks, "
    f"{20 * GOAL_PER_LEVEL:,} instances)",
    default_designs=("react", "plan_conditioned", "dual_loop", "replanner_loop"),
    levels=LEVELS,
    stratifier=per_cell_subset,
    subset_options=_goal_subset_options,
    stats=_stats_of(SUITE, "goal"),
    stats_view=_stats_view,
)
def load(
    *,
    levels: Iterable[str] | str | None = None,
    modes: Iterable[str] | str | None = None,
    limit: int | None = None,
    seed: int = 0,
    per_level: int = GOAL_PER_LEVEL,
    distractors: float = 0.0,
    version: str | int | None = None,
) -> list[Task]:
    """The ``toolmaze`` suite (goal-level queries) with options as ``replan run`` passes them
    (levels and modes as lists or ``"C1,C2"`` text, any case): read from the frozen file of the
    pinned version when it holds them (seed 0, up to 100 base tasks per level), generated
    otherwise. ``distractors`` (a share of the listed tools, 0 to 0.5) adds tools of the task's
    domains that lie on no valid path and leave the query unambiguous (:func:`with_distractors`).
    ``version``: an earlier version kept as its frozen file (``-S version=3``), so that results
    run on it load and compare again."""
    tasks = _load(SUITE, "goal", levels, modes, limit, seed, per_level, GOAL_PER_LEVEL, version)
    return with_distractors(tasks, float(distractors)) if float(distractors) else tasks


@suite(
    GUIDED,
    description="ToolMaze-style C1–C4 tasks × NP, P1–P4 whose queries list the steps in the "
    "tools' words (the queries of toolmaze v2, kept so old results stay comparable)",
    default_designs=("react", "plan_conditioned", "dual_loop", "replanner_loop"),
    levels=LEVELS,
    stratifier=per_cell_subset,
    subset_options=_subset_options,
    stats=_stats_of(GUIDED, "guided"),
    stats_view=_stats_view,
)
def load_guided(
    *,
    levels: Iterable[str] | str | None = None,
    modes: Iterable[str] | str | None = None,
    limit: int | None = None,
    seed: int = 0,
    per_level: int = PER_LEVEL,
    version: str | int | None = None,
) -> list[Task]:
    """The ``toolmaze-guided`` suite: step-list queries (the queries of ``toolmaze`` v2);
    ``version``: an earlier version kept as its frozen file (``-S version=2``: ``toolmaze`` v2's
    instances, digest ``aa36ad3d``)."""
    return _load(GUIDED, "guided", levels, modes, limit, seed, per_level, PER_LEVEL, version)


# ---------------------------------------------------------------------------------------------
# distractor tools
def with_distractors(
    tasks: Sequence[Task], share: float, corpus: Corpus | None = None
) -> list[Task]:
    """``tasks`` with distractor tools added to each goal-level task's tool list, so that they
    make up about ``share`` of it: tools of the task's domains that lie on no valid path and
    after which the reverse validation still holds (every reading of the query is a valid
    path), chosen and placed deterministically per base task. Recorded in
    ``metadata["distractors"]``; a task without goal-level metadata is left as it is."""
    if not 0.0 <= share <= 0.5:
        raise ValueError(f"distractors must be a share between 0 and 0.5, got {share}")
    corpus = corpus or load_corpus()
    cache: dict[str, tuple[list[str], list[str]]] = {}
    out = []
    for t in tasks:
        goal = t.metadata.get("goal")
        if not goal or not share:
            out.append(t)
            continue
        if t.base_id not in cache:
            cache[t.base_id] = _distractors(t, share, corpus)
        tools, added = cache[t.base_id]
        out.append(
            t.model_copy(update={"tools": tools, "metadata": {**t.metadata, "distractors": added}})
        )
    return out


def _distractors(task: Task, share: float, corpus: Corpus) -> tuple[list[str], list[str]]:
    goal = task.metadata["goal"]
    want = round(share * len(task.tools) / (1.0 - share))
    specs = {n: corpus.tools[n] for n in task.tools}
    paths = [path_reading(p, specs) for p in path_plans(task)]
    domains = set(task.metadata.get("domains") or [])
    pool = sorted(
        (n for n, s in corpus.tools.items() if s.domain in domains and n not in specs),
        key=lambda n: stable_seed("distractor", task.base_id, n),
    )
    added: list[str] = []
    for cand in pool:
        if len(added) >= want:
            break
        trial = {**specs, cand: corpus.tools[cand]}
        if reverse_validate(trial, set(goal["given"]), [k for k, _ in goal["goals"]], paths):
            continue  # it would open another reading of the query
        specs = trial
        added.append(cand)
    tools = list(task.tools)
    for name in added:  # each at a stable place in the list, not all at the end
        tools.insert(stable_seed("distractor-at", task.base_id, name) % (len(tools) + 1), name)
    return tools, added


__all__ = [
    "GUIDED",
    "LEVELS",
    "QUERIES",
    "SUITE",
    "BaseTask",
    "GenerationError",
    "Generator",
    "PlanExecution",
    "answer_from_outputs",
    "base_tasks",
    "execute_plan",
    "generate",
    "load",
    "path_plans",
    "random_plan",
    "stats",
    "task_injector",
    "with_distractors",
]
