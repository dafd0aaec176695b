"""Base tasks: DAG assembly, solution-space enumeration and the instances per mode."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from replan.core.leaves import scalar_leaves
from replan.core.plan import (
    RESPONSE,
    ROOT,
    Plan,
    PlanNode,
    exact_reference,
    iter_references,
    reference_text,
)
from replan.core.task import (
    MODES,
    Checker,
    FaultSetup,
    PerturbationProfile,
    Task,
    mode_flags,
)
from replan.core.tools import DOMAINS, canonical_json
from replan.env.checker import check
from replan.env.corpus import Corpus, load_corpus
from replan.env.perturb import (
    EXPLICIT_KINDS,
    ImplicitSpec,
    Perturber,
    corrupt,
    corruptions,
    fault_fields,
    plan_implicit,
)
from replan.env.recovery_cost import min_calls
from replan.env.verifier import types_compatible
from replan.env.world import MISSING, World, WorldState, lookup_path, stable_seed
from replan.suites.toolmaze.assembly import (
    Builder,
    GNode,
    Lit,
    Literals,
    SearchState,
    SlotOut,
    Unit,
    with_mixed_chains,
)
from replan.suites.toolmaze.derive_checker import derive_checker, reportable_text, same_value
from replan.suites.toolmaze.execute import answer_from_outputs, execute_plan
from replan.suites.toolmaze.goal import (
    goal_kinds,
    kind_noun,
    path_reading,
    reverse_validate,
    write_goal_query,
)
from replan.suites.toolmaze.index import corpus_index, group_kind, walk_outputs
from replan.suites.toolmaze.levels import (
    C4_GOAL_TOTAL,
    C4_MAX,
    C4_TOTAL,
    DIVERSE_FROM,
    LENGTHS,
    LEVELS,
    MAX_MEAN_JACCARD,
    MAX_PATHS,
    QUERIES,
    SUITE,
    GenerationError,
    instance_id,
)
from replan.suites.toolmaze.query import describe_tool, write_query
from replan.suites.toolmaze.stages import BaseTask, PathRun


def _weighted_order(items: list[str], weights: list[float], rng: random.Random) -> list[str]:
    keys = [(-(rng.random() ** (1.0 / max(w, 1e-9))), i) for i, w in enumerate(weights)]
    return [items[i] for _, i in sorted(keys)]


def _pick(table: Mapping[int, float], rng: random.Random) -> int:
    r = rng.random() * sum(table.values())
    for k, w in table.items():
        r -= w
        if r <= 0:
            return k
    return list(table)[-1]


#: structures tried per base task before generation gives up, per query style (guided
#: C4-080 of v4 needed more than 1,200)
ATTEMPTS = {"guided": 2500, "goal": 800}


class Generator:
    """Deterministic generator of ToolMaze-style base tasks over a corpus."""

    def __init__(self, corpus: Corpus | None = None, seed: int = 0, queries: str = "guided"):
        if queries not in QUERIES:
            raise ValueError(f"unknown query style {queries!r}; expected one of {QUERIES}")
        self.queries = queries
        self.corpus = corpus or load_corpus()
        self.ix = corpus_index(self.corpus)
        self.seed = seed
        self._initial: dict[int, WorldState] = {}
        self._wcache: dict[tuple[str, str, bool], float] = {}
        self._failures: Counter[str] = Counter()
        self._global_failures: Counter[str] = Counter()
        # bindings that made a path fail: (producer, output path, consumer, param)
        self._bad: set[tuple[str, str, str, str]] = set()
        self._chosen: list[str] = []
        self._goal_spec: dict[str, Any] = {}
        # per level: the tool sets of its accepted tasks and the sum of their pairwise Jaccard
        self._level_sets: dict[str, list[frozenset[str]]] = {}
        self._level_jaccard: dict[str, float] = {}

    # -- weights ----------------------------------------------------------------------------------
    def _weight(self, cand: str, domain: str, uses: Counter[str], first: bool) -> float:
        key = (cand, domain, first)
        w = self._wcache.get(key)
        if w is not None:
            return w
        tools = list(self.ix.groups[cand[6:]].tools) if cand.startswith("group:") else [cand]
        w = 1.0
        for t in tools:
            d = self.ix.tools[t].spec.domain
            w *= 1.0 if d == domain else 0.4 if d == "General" else 0.2
            w *= 1.0 / (1.0 + uses[t]) ** (3 if self.queries == "guided" else 1)
        w = w ** (1.0 / len(tools))
        if first and not cand.startswith("group:"):
            cat = self.ix.tools[cand].spec.category
            w *= 2.0 if cat == "source" else 0.6 if cat == "processor" else 0.1
        self._wcache[key] = w
        return w

    def _candidates(
        self,
        st: SearchState,
        last: int | None,
        groups_left: int,
        allowed: frozenset[str],
        domain: str,
        uses: Counter[str],
        rng: random.Random,
    ) -> list[str]:
        """Candidates for the next unit, in weighted random order; the groups still to place
        come first (they are what the level is about)."""
        if last is None:
            pool: set[str] = set(self.ix.tools)
            strong: set[str] = set()
        else:
            linkable = self._link_set(st, last)
            kinds = {a.kind for a in st.avail if a.unit in linkable}
            strong = kinds - self.ix.literal
            pool = set()
            for k in kinds:
                pool |= self.ix.consumers.get(k, set())
        fixed = [
            t
            for t in sorted(pool - st.used)
            if (self.ix.tools[t].spec.group or "") not in st.groups_used
        ]
        weights = [
            self._weight(c, domain, uses, last is None)
            * (3.0 if strong & self.ix.in_kinds[c] else 1.0)
            for c in fixed
        ]
        order = _weighted_order(fixed, weights, rng)
        if groups_left:
            groups = [
                "group:" + g
                for g in sorted(allowed)
                if g not in st.groups_used
                and not any(t in st.used for t in self.ix.groups[g].tools)
            ]
            order = groups + order
        return order

    @staticmethod
    def _link_set(st: SearchState, last: int) -> set[int]:
        """Units the next step may feed on: the last one, and the one before a group (a group
        may end its own branch, its result reported rather than consumed)."""
        out = {last}
        if st.units[last].group is not None and last > 0:
            out.add(st.units[last - 1].index)
        return out

    def _reportable(self, unit: Unit) -> bool:
        """Whether a unit's result can be a checked fact (a number, a date, a tool-made code)."""
        for chain in unit.chains:
            info = self.ix.tools[chain[-1].tool]
            if not any(
                o.schema.get("type") in ("number", "integer")
                or o.schema.get("format") in ("date", "date-time")
                or (o.kind not in self.ix.literal and "enum" not in o.schema)
                for o in info.outs
            ):
                return False
        return True

    def _ends_action(self, unit: Unit) -> bool:
        return all(self.ix.tools[c[-1].tool].spec.category == "action" for c in unit.chains)

    def _can_finish(self, cand: str, lo: int, hi: int) -> bool:
        """Whether some chain of ``lo``..``hi`` more calls after ``cand`` may end in an action."""
        if hi < 0:
            return False
        lo = max(lo, 0)
        window = ((1 << (hi - lo + 1)) - 1) << lo
        return bool(self.ix.finish.get(cand, 0) & window)

    def _extend(
        self,
        b: Builder,
        st: SearchState,
        last: int | None,
        need: int,
        room: int,
        groups_left: int,
        allowed: frozenset[str],
        domain: str,
        uses: Counter[str],
        rng: random.Random,
        budget: list[int],
        branch: int,
        width: int = 4,
        end_action: bool = True,
    ) -> SearchState | None:
        """Depth-first growth of a linear chain: at least ``need`` and at most ``room`` more
        calls (s* counting), ``groups_left`` of the ``allowed`` groups still to place, ending
        in an action."""
        if (
            need <= 0
            and groups_left == 0
            and st.units
            and (
                self._ends_action(st.units[-1])
                or (not end_action and self._reportable(st.units[-1]))
            )
        ):
            return st
        if room <= 0 or budget[0] <= 0:
            return None
        tried = 0
        for cand in self._candidates(st, last, groups_left, allowed, domain, uses, rng):
            if tried >= width or budget[0] <= 0:
                break
            is_group = cand.startswith("group:")
            if not is_group and groups_left >= room:
                continue
            c0 = self.ix.groups[cand[6:]] if is_group else None
            c_min = min(len(c) for c in c0.members) if c0 else 1
            if end_action and not self._can_finish(cand, need - c_min, room - c_min):
                continue
            budget[0] -= 1
            unit = b.make_unit(
                cand, st, self._link_set(st, last) if last is not None else None, branch
            )
            if unit is None and is_group and last is not None:
                # a group may take its inputs from any earlier step (a DAG, not a strict chain),
                # or from literals alone (a second source that later steps join)
                unit = b.make_unit(cand, st, {u.index for u in st.units}, branch)
                if unit is None:
                    unit = b.make_unit(cand, st, None, branch)
            if unit is None:
                continue
            cost = unit.min_len
            if cost > room or (room - cost) < (groups_left - is_group):
                continue
            tried += 1
            res = self._extend(
                b,
                st.add(unit, self.ix),
                unit.index,
                need - cost,
                room - cost,
                groups_left - is_group,
                allowed,
                domain,
                uses,
                rng,
                budget,
                branch,
                width,
                end_action,
            )
            if res is not None:
                return res
        return None

    # -- structure ------------------------------------------------------------------------------
    def _structure(
        self, level: str, domain: str, uses: Counter[str], rng: random.Random, lit: Literals
    ) -> list[Unit] | None:
        b = Builder(self.ix, lit, self._bad)
        empty = SearchState([], [], frozenset(), frozenset())
        budget = [300]
        self._wcache: dict[tuple[str, str, bool], float] = {}
        if level in LENGTHS:
            target = _pick(LENGTHS[level], rng)
            if level == "C1":
                allowed: frozenset[str] = frozenset()
            else:
                kinds = {"C2": ("1-1", "1-N"), "C3": ("N-N",)}[level]
                gid = self._choose_group(kinds, domain, uses, rng, frozenset())
                if gid is None:
                    return None
                allowed = frozenset({gid})
            hi = max(LENGTHS[level])
            if not allowed:
                st = self._extend(
                    b, empty, None, target, hi, 0, allowed, domain, uses, rng, budget, 0
                )
            else:
                st = self._grow_with_group(
                    b, empty, None, target, hi, next(iter(allowed)), domain, uses, rng, budget, 0
                )
            return st.units if st else None
        # C4: a prefix fanning out into branches, each with its own group
        total = _pick(C4_TOTAL, rng)
        n_branches = 3 if total >= 12 and rng.random() < 0.6 else 2
        prefix_len = 1 if rng.random() < 0.8 else 2
        rest = total - prefix_len
        sizes = [rest // n_branches] * n_branches
        for i in range(rest - sum(sizes)):
            sizes[i] += 1
        if min(sizes) < 2:
            return None
        st = self._extend_prefix(b, empty, prefix_len, domain, uses, rng)
        if st is None:
            return None
        hub = st.units[-1].index
        chosen: set[str] = set()
        for i, size in enumerate(sizes):
            gid = self._choose_group(("1-1", "1-N", "N-N"), domain, uses, rng, frozenset(chosen))
            if gid is None:
                return None
            chosen.add(gid)
            budget[0] = max(budget[0], 200)
            # fan out from the hub, or (integrated later by the response) start afresh
            start = hub if i == 0 or rng.random() < 0.5 else None
            # some branch must end in an action; the others may end in a result to report
            has_action = any(self._ends_action(u) for u in st.units)
            last_branch = i == len(sizes) - 1
            nxt = self._grow_with_group(
                b,
                st,
                start,
                size,
                size + 2,
                gid,
                domain,
                uses,
                rng,
                budget,
                i + 1,
                last_branch and not has_action,
            )
            if nxt is None:
                return None
            st = nxt
        if sum(u.min_len for u in st.units) > C4_MAX:
            return None
        return st.units

    # -- goal-first structure (goal-level queries) ----------------------------------------------
    def _goal_structure(
        self, level: str, domain: str, uses: Counter[str], rng: random.Random, lit: Literals
    ) -> list[Unit] | None:
        """Units built backwards from goals, so that a reader of the goal-level query can
        reconstruct them: each goal (a final call) takes its tool-made inputs from producers
        placed for it, its other inputs from values the query states. C1 places goals without
        groups, C2 one 1-1 / 1-N group, C3 one N-N group, C4 two or three groups (each feeding
        its own goal); goals are added until s* reaches the level's length."""
        b = Builder(self.ix, lit, self._bad)
        st = SearchState([], [], frozenset(), frozenset())
        self._wcache = {}
        if level in LENGTHS:
            target, hi = _pick(LENGTHS[level], rng), max(LENGTHS[level])
            kinds = {"C1": (), "C2": ("1-1", "1-N"), "C3": ("N-N",)}[level]
            n_groups = 1 if kinds else 0
        else:
            # two groups, each fed to (or being) its own goal; shorter than the step-list C4
            target, hi = _pick(C4_GOAL_TOTAL, rng), max(C4_GOAL_TOTAL) + 1
            kinds, n_groups = ("1-1", "1-N", "N-N"), 2
        budget = [400]
        for i in range(8):
            cost = sum(u.min_len for u in st.units)
            if i >= n_groups and cost >= target:
                return st.units if cost <= hi else None
            if i < n_groups:
                gid = self._choose_group(kinds, domain, uses, rng, st.groups_used)
                if gid is None:
                    return None
                got = self._goal_with_group(b, st, gid, domain, uses, rng, budget, i + 1)
            else:
                got = self._goal_plain(b, st, domain, uses, rng, budget, i + 1)
            if got is None:
                return None
            st = got
        return None

    def _goal_plain(
        self,
        b: Builder,
        st: SearchState,
        domain: str,
        uses: Counter[str],
        rng: random.Random,
        budget: list[int],
        branch: int,
    ) -> SearchState | None:
        """``st`` with one more goal: a tool of the domain (actions first) that needs a
        tool-made input, placed after its producers."""
        made = {a.kind for a in st.avail}
        pool = [
            t
            for t in sorted(self.ix.tools)
            if t not in st.used
            and (self.ix.tools[t].spec.group or "") not in st.groups_used
            and self._made_needs(t)
            and self._answers(t)
            and not self.ix.tools[t].out_kinds <= made  # it must yield something of its own
            # not a follow-up on a record (enable, cancel, send): it yields what it takes
            and not set(self._made_needs(t)) & self.ix.tools[t].out_kinds
        ]
        weights = [
            self._weight(t, domain, uses, False)
            * (10.0 if self.ix.tools[t].spec.category == "action" else 1.0)
            for t in pool
        ]
        for cand in _weighted_order(pool, weights, rng)[:12]:
            got = self._resolve(b, st, cand, domain, uses, rng, budget, branch, 0)
            if got is not None:
                return got
        return None

    def _goal_with_group(
        self,
        b: Builder,
        st: SearchState,
        gid: str,
        domain: str,
        uses: Counter[str],
        rng: random.Random,
        budget: list[int],
        branch: int,
    ) -> SearchState | None:
        """``st`` with one more goal fed by group ``gid``: a consumer of the group's output
        kind, the group and their producers."""
        kind = group_kind(self.ix.groups[gid], self.ix)
        members = set(self.ix.groups[gid].tools)
        pool = [
            t
            for t in sorted(self.ix.consumers.get(kind or "", ()))
            if t not in st.used
            and t not in members
            and (self.ix.tools[t].spec.group or "") not in st.groups_used
        ]
        weights = [
            self._weight(t, domain, uses, False)
            * (3.0 if self.ix.tools[t].spec.category == "action" else 1.0)
            for t in pool
        ]
        with_group = self._resolve(b, st, "group:" + gid, domain, uses, rng, budget, branch, 0)
        if with_group is None:
            return None
        slot = with_group.units[-1].index
        for cand in _weighted_order(pool, weights, rng)[:8]:
            if not self._answers(cand):
                continue
            got = self._resolve(
                b, with_group, cand, domain, uses, rng, budget, branch, 0, link={slot}
            )
            if got is not None and any(
                isinstance(v, SlotOut) and v.unit == slot
                for v in got.units[-1].chains[0][-1].args.values()
            ):
                return got
        # no consumer: the group's own result is the goal (to report or act on)
        ends = [chain[-1] for chain in self.ix.groups[gid].members]
        return with_group if all(self._answers(t) for t in ends) else None

    def _answers(self, tool: str) -> bool:
        """Whether a final call of ``tool`` leaves something to check: an action, or a result
        a user can be asked for (a number, a date, a tool-made value)."""
        info = self.ix.tools[tool]
        return info.spec.category == "action" or any(
            o.schema.get("type") in ("number", "integer")
            or o.schema.get("format") in ("date", "date-time")
            or (o.kind not in self.ix.literal and "enum" not in o.schema)
            for o in info.outs
        )

    def _made_needs(self, cand: str) -> list[str]:
        """Kinds of the tool-made inputs ``cand`` (a tool or ``group:<id>``) requires: required
        inputs of a kind a user cannot state (or a record a precondition looks up), less what a
        group chain makes for itself."""
        chains = self.ix.groups[cand[6:]].members if cand.startswith("group:") else [[cand]]
        out: list[str] = []
        for chain in chains:
            made: set[str] = set()
            for t in chain:
                for p in self.ix.tools[t].ins:
                    if not p.required or not p.kind or p.kind in made:
                        continue
                    if (p.kind not in self.ix.literal or p.pre is not None) and p.kind not in out:
                        out.append(p.kind)
                made |= self.ix.tools[t].out_kinds
        return out

    def _resolve(
        self,
        b: Builder,
        st: SearchState,
        cand: str,
        domain: str,
        uses: Counter[str],
        rng: random.Random,
        budget: list[int],
        branch: int,
        depth: int,
        link: set[int] | None = None,
    ) -> SearchState | None:
        """``st`` with ``cand`` placed after producers of each tool-made input it needs that
        nothing placed yields yet (chosen by domain and use, up to three levels deep); with
        ``link``, ``cand`` must feed on one of those units (a group's result, even of a kind a
        user could state)."""
        budget[0] -= 1
        if budget[0] < 0 or depth > 3:
            return None
        for kind in self._made_needs(cand):
            if any(a.kind == kind for a in st.avail):
                continue
            producers = [
                t
                for t in sorted(self.ix.producers.get(kind, ()))
                if t not in st.used
                and t != cand
                and (self.ix.tools[t].spec.group or "") not in st.groups_used
            ]
            weights = [self._weight(t, domain, uses, False) for t in producers]
            placed = None
            for prod in _weighted_order(producers, weights, rng)[:4]:
                placed = self._resolve(b, st, prod, domain, uses, rng, budget, branch, depth + 1)
                if placed is not None:
                    break
            if placed is None:
                return None
            st = placed
        if cand.startswith("group:") and cand[6:] in st.groups_used:
            return None
        unit = b.make_unit(cand, st, link, branch)
        if unit is None:
            return None
        needs = set(self._made_needs(cand))
        for chain in unit.chains:
            for node in chain:
                for p in self.ix.tools[node.tool].ins:
                    if p.kind in needs and isinstance(node.args.get(p.name), Lit):
                        return None  # a producer placed for it did not fit (a precondition)
        return st.add(unit, self.ix)

    def _grow_with_group(
        self,
        b: Builder,
        st: SearchState,
        last: int | None,
        need: int,
        room: int,
        gid: str,
        domain: str,
        uses: Counter[str],
        rng: random.Random,
        budget: list[int],
        branch: int,
        end_action: bool = True,
    ) -> SearchState | None:
        """A chain that contains group ``gid``: either led by the group (fed by ``last``, by any
        earlier step, or by literals alone) or with the group placed by the search."""

        def led() -> SearchState | None:
            links: list[set[int] | None] = []
            if last is not None:  # the chain continues from ``last``: the group must feed on it
                links.append(self._link_set(st, last))
            else:
                links.append(None)
            for link in links:
                unit = b.make_unit("group:" + gid, st, link, branch)
                if unit is None or unit.min_len > room:
                    continue
                return self._extend(
                    b,
                    st.add(unit, self.ix),
                    unit.index,
                    need - unit.min_len,
                    room - unit.min_len,
                    0,
                    frozenset(),
                    domain,
                    uses,
                    rng,
                    budget,
                    branch,
                    end_action=end_action,
                )
            return None

        def searched() -> SearchState | None:
            return self._extend(
                b,
                st,
                last,
                need,
                room,
                1,
                frozenset({gid}),
                domain,
                uses,
                rng,
                budget,
                branch,
                end_action=end_action,
            )

        # led by the group less often: after a step, the next one may feed on either
        first, second = (led, searched) if rng.random() < 0.35 else (searched, led)
        return first() or second()

    def _choose_group(
        self,
        kinds: Sequence[str],
        domain: str,
        uses: Counter[str],
        rng: random.Random,
        exclude: frozenset[str],
    ) -> str | None:
        """The least-used group of one of ``kinds`` (ties: the task's domain first, then chance).

        Groups that failed to fit this task, or failed often across tasks, rank lower.
        """
        gids = [
            g
            for g, grp in self.ix.groups.items()
            if grp.kind in kinds
            and g not in exclude
            and self.ix.group_feasible(g)
            and not (self._global_failures[g] >= 15 and uses["group:" + g] == 0)
        ]
        if self.queries == "goal":
            # a group whose result a user could state (a date, a city) is met from the query
            made = [
                g for g in gids if group_kind(self.ix.groups[g], self.ix) not in self.ix.literal
            ]
            gids = made or gids
        if not gids:
            return None

        def score(g: str) -> float:
            doms = {self.ix.tools[t].spec.domain for t in self.ix.groups[g].tools}
            affinity = 0.0 if domain in doms else 0.4 if "General" in doms else 0.8
            return (
                uses["group:" + g]
                + 2.0 * self._failures[g]
                + 0.5 * self._global_failures[g]
                + affinity
                + rng.random() * 0.6
            )

        gid = min(gids, key=score)
        self._chosen.append(gid)
        return gid

    def _extend_prefix(
        self,
        b: Builder,
        st: SearchState,
        length: int,
        domain: str,
        uses: Counter[str],
        rng: random.Random,
    ) -> SearchState | None:
        """A linear prefix whose last unit feeds several consumers (the fan-out hub)."""
        last: int | None = None
        for _ in range(length):
            found = None
            for cand in self._candidates(st, last, 0, frozenset(), domain, uses, rng)[:30]:
                unit = b.make_unit(cand, st, {last} if last is not None else None)
                if unit is None:
                    continue
                kinds = {o.kind for o in self.ix.tools[cand].outs}
                fan = sum(len(self.ix.consumers.get(k, ())) for k in kinds)
                if fan < 4:
                    continue
                found = unit
                break
            if found is None:
                return None
            st = st.add(found, self.ix)
            last = found.index
        return st

    # -- paths, plans, runs -------------------------------------------------------------------------
    def _choices(self, units: list[Unit]) -> list[dict[int, int]]:
        gunits = [u for u in units if u.group is not None]
        combos = itertools.product(*[range(len(u.chains)) for u in gunits])
        out = []
        for combo in itertools.islice(combos, MAX_PATHS):
            out.append({u.index: c for u, c in zip(gunits, combo, strict=True)})
        return out

    @staticmethod
    def _path_nodes(units: list[Unit], choice: Mapping[int, int]) -> list[GNode]:
        return [n for u in units for n in u.chains[choice.get(u.index, 0)]]

    def _plan(
        self,
        units: list[Unit],
        choice: Mapping[int, int],
        ids: Mapping[str, str],
        query: str,
    ) -> Plan:
        nodes = [PlanNode(id=ROOT, desc=query, status="done")]
        used_by: set[str] = set()
        calls: list[PlanNode] = []
        for n in self._path_nodes(units, choice):
            args: dict[str, Any] = {}
            deps: set[str] = set()
            for p, v in n.args.items():
                if isinstance(v, Lit):
                    args[p] = v.value
                    continue
                if isinstance(v, SlotOut):
                    key, path = units[v.unit].outs[choice[v.unit]]
                else:
                    key, path = v.node, v.path
                src = ids[key]
                deps.add(src)
                args[p] = reference_text(src, *path)
            used_by |= deps
            calls.append(
                PlanNode(
                    id=ids[n.key],
                    tool=n.tool,
                    args=args,
                    desc=describe_tool(self.ix.tools[n.tool].spec),
                    deps=sorted(deps, key=_idnum) or [ROOT],
                )
            )
        calls.sort(key=lambda x: _idnum(x.id))
        nodes.extend(calls)
        sinks = [c.id for c in calls if c.id not in used_by]
        nodes.append(PlanNode(id=RESPONSE, desc="Report the results to the user.", deps=sinks))
        return Plan.from_nodes(nodes)

    def initial_state(self, world_seed: int) -> WorldState:
        st = self._initial.get(world_seed)
        if st is None:
            st = self._initial[world_seed] = self.corpus.initial_state(world_seed)
        return st

    def run(self, plan: Plan, world_seed: int, version_shift: int = 0) -> PathRun:
        """Execute ``plan`` in a clean world; ``version_shift`` starts from a later state version
        (as if other calls had happened first), which changes every generated id."""
        tools = [n.tool for n in plan.call_nodes if n.tool]
        start = self.initial_state(world_seed)
        if version_shift:
            start = WorldState(collections=start.collections, version=start.version + version_shift)
        world = World({t: self.corpus.tools[t] for t in tools}, start, seed=world_seed)
        res = execute_plan(plan, world)
        return PathRun(
            plan=plan,
            tools=tools,
            outputs=res.outputs,
            state=world.state,
            ok=res.failed is None,
            error=res.error,
            failed=res.failed,
            failed_param=res.steps[-1][1].verdict.param if res.failed else None,
        )

    # -- one base task ------------------------------------------------------------------------------
    def base_task(self, level: str, index: int, uses: Counter[str]) -> BaseTask:
        domain = DOMAINS[(index + LEVELS.index(level)) % len(DOMAINS)]
        domains_present = {t.spec.domain for t in self.ix.tools.values()}
        if domain not in domains_present:
            domain = sorted(domains_present)[index % len(domains_present)]
        base_id = instance_id(level, index)
        last_error = "no structure found"
        self._failures = Counter()  # groups that did not fit this task
        for attempt in range(ATTEMPTS[self.queries]):
            rng = random.Random(stable_seed(SUITE, self.seed, level, index, attempt))
            lit = Literals(self.ix, rng.randrange(10_000))
            self._chosen = []
            if self.queries == "goal":
                # after many tries, tools used before weigh no less (a goal-level task needs
                # tools whose results a reader can tell apart, and the rarest often are not)
                units = self._goal_structure(
                    level, domain, uses if attempt < 60 else Counter(), rng, lit
                )
            else:
                units = self._structure(level, domain, uses, rng, lit)
            if units is None:
                self._failures.update(self._chosen)
                self._global_failures.update(self._chosen)
                continue
            world_seed = stable_seed("world", self.seed, level, index) % 100_000
            got = self._finish(base_id, level, index, domain, units, lit, world_seed, rng)
            if isinstance(got, str):
                last_error = got
                self._failures.update(self._chosen)
                continue
            added = self._too_alike(level, frozenset(got.tools), attempt)
            if added is None:
                last_error = "too alike the level's other tasks"
                self._failures.update(self._chosen)
                continue
            self._level_sets.setdefault(level, []).append(frozenset(got.tools))
            self._level_jaccard[level] = self._level_jaccard.get(level, 0.0) + added
            for t in got.tools:
                uses[t] += 1
            for u in got.units:
                if u.group is not None:
                    uses["group:" + u.group] += 1
            return got
        raise GenerationError(
            f"{base_id}: could not build a valid {level} task from the corpus "
            f"({len(self.ix.tools)} tools, {len(self.ix.groups)} groups); last problem: {last_error}"
        )

    def _too_alike(self, level: str, tools: frozenset[str], attempt: int) -> float | None:
        """The Jaccard similarities ``tools`` adds to the level's sum, or ``None`` when taking
        it would lift the level's mean above :data:`MAX_MEAN_JACCARD` (see there)."""
        sets = self._level_sets.get(level, [])
        added = sum(len(tools & s) / len(tools | s) for s in sets)
        cap = MAX_MEAN_JACCARD[self.queries]
        n = len(sets)
        if cap is None or n < DIVERSE_FROM or attempt >= ATTEMPTS[self.queries] // 2:
            return added
        mean = (self._level_jaccard.get(level, 0.0) + added) / (n * (n + 1) / 2)
        return None if mean > cap else added

    def _finish(
        self,
        base_id: str,
        level: str,
        index: int,
        domain: str,
        units: list[Unit],
        lit: Literals,
        world_seed: int,
        rng: random.Random,
    ) -> BaseTask | str:
        # the solution space: every combination of each group's chains, the mixed ones too.
        # Goal-level tasks have none: a mixed chain, or a chain without its idle head, is a
        # reading of the query the reverse validation finds, so such a task is regenerated.
        if self.queries == "guided":
            units = [with_mixed_chains(u, self.ix) for u in units]
        choices = self._choices(units)

        def mixes(ch: Mapping[int, int]) -> int:
            return sum(1 for u in units if ch.get(u.index, 0) >= len(u.chains) - u.mixed)

        # s*: fewest calls, then fewest waves (computed from a provisional numbering), then a
        # path of declared chains
        def key_of(ch: dict[int, int]) -> tuple:
            nodes = self._path_nodes(units, ch)
            ids = {n.key: str(i + 1) for i, n in enumerate(nodes)}
            allkeys = {n.key for u in units for c in u.chains for n in c}
            ids.update({k: f"x{i}" for i, k in enumerate(sorted(allkeys - set(ids)))})
            p = self._plan(units, ch, ids, "")
            return (len(nodes), p.depth, mixes(ch), [n.tool for n in nodes])

        keyed = sorted(((key_of(ch), i) for i, ch in enumerate(choices)))
        order = [choices[i] for _, i in keyed]
        star = order[0]
        ids: dict[str, str] = {}
        for n in self._path_nodes(units, star):
            ids[n.key] = str(len(ids) + 1)
        for mixed in (False, True):  # the declared chains' calls first, then the mixed ones'
            for u in units:
                for ci, c in enumerate(u.chains):
                    if (ci >= len(u.chains) - u.mixed) != mixed:
                        continue
                    for n in c:
                        if n.key not in ids:
                            ids[n.key] = str(len(ids) + 1)
        plans = [self._plan(units, ch, ids, "") for ch in order]
        runs = [self.run(p, world_seed) for p in plans]
        bad = next(
            (r for r, ch in zip(runs, order, strict=True) if not r.ok and not mixes(ch)), None
        )
        if bad is not None:
            self._learn(bad, units, ids)
            return f"path {bad.tools} does not run clean: {bad.error}"
        # a mixed path that does not run clean is no path (an agent taking it fails too)
        kept = [i for i, r in enumerate(runs) if r.ok]
        plans, runs, order = (
            [plans[i] for i in kept],
            [runs[i] for i in kept],
            [order[i] for i in kept],
        )
        initial = self.initial_state(world_seed)
        literal_values = _literal_values(units)
        effects = {t: bool(self.corpus.tools[t].effects) for r in runs for t in r.tools}
        # s* once more from a later state version: what changes there (generated ids and what
        # embeds them) is not something an agent that made one extra call would reproduce
        shifted = self.run(plans[0], world_seed, version_shift=7)
        if not shifted.ok:
            return f"s* does not run clean after other calls: {shifted.error}"
        checker, facts, problem = derive_checker([*runs, shifted], initial, literal_values, effects)
        if checker is None:
            return problem or "no checker"
        if not checker.required_records and not checker.required_facts:
            return "nothing checkable: no path-invariant record or fact"
        problem = _idle_step(plans[0], effects)
        if problem:
            return problem
        victims = self._victims(level, units, plans[0], rng)
        if not victims:
            return "no victim with downstream calls on s*"
        best: tuple[int, tuple[int, str, list[str]], str | None, tuple[Any, str] | None] | None
        best = None
        for cand in victims[:4]:
            field, extra, quality = self._sensitise(
                runs[0], [*runs[1:], shifted], cand[1], checker, literal_values, world_seed
            )
            if best is None or quality > best[0]:
                best = (quality, cand, field, extra)
            if quality == 2:
                break
        assert best is not None
        _, victim, victim_field, extra = best
        victim_unit, victim_node, victim_tools = victim
        slot = f"branch-{units[victim_unit].branch}" if level == "C4" else None
        if extra is not None:
            facts.append(extra)
            checker = checker.model_copy(
                update={"required_facts": [*checker.required_facts, extra[0]]}
            )
        problem = self._bypassable_step(runs, literal_values, effects, checker, world_seed)
        if problem:
            return problem
        goal_spec = None
        if self.queries == "goal":
            got = self._goal_query(base_id, domain, units, plans, facts)
            goal_spec = self._goal_spec
            if got.startswith("!"):
                return got[1:]
            query = got
        else:
            query = write_query(self.ix, units, star, plans[0], facts, checker, lit, rng)
        plans = [p.model_copy(update={"nodes": _with_root(p, query)}) for p in plans]
        for r, p in zip(runs, plans, strict=True):
            r.plan = p
        tools: list[str] = []
        for p in plans:
            for n in p.call_nodes:
                if n.tool not in tools:
                    tools.append(n.tool)  # type: ignore[arg-type]
        paths = [
            {
                "tools": [n.tool for n in p.call_nodes],
                "plan": p.to_pararecover(),
                "calls": len(p.call_nodes),
                "rounds": p.depth,
                "node_ids": [n.id for n in p.call_nodes],
            }
            for p in plans
        ]
        return BaseTask(
            base_id=base_id,
            level=level,
            index=index,
            domain=domain,
            query=query,
            tools=tools,
            world_seed=world_seed,
            units=units,
            paths=paths,
            runs=runs,
            checker=checker,
            facts=facts,
            victim_unit=victim_unit,
            victim_node=victim_node,
            victim_tools=victim_tools,
            slot=slot,
            literals={k: v for k, v in sorted(literal_values.items())},
            victim_field=victim_field,
            goal=goal_spec,
        )

    def _goal_query(
        self,
        base_id: str,
        domain: str,
        units: list[Unit],
        plans: list[Plan],
        facts: list[tuple[Any, str]],
    ) -> str:
        """The goal-level query of a base task, or ``"!why"`` when a reader of it could
        reconstruct something other than the task's valid paths (the task is regenerated)."""
        given: set[str] = set()
        lits: list[tuple[Any, str | None, str]] = []  # (value, kind, parameter's own label)
        for u in units:
            for c in u.chains:
                for n in c:
                    spec = self.ix.tools[n.tool].spec
                    for p, v in n.args.items():
                        if isinstance(v, Lit):
                            sch = spec.param_schema(p) or {}
                            own = (sch.get("description") or p.replace("_", " ")).rstrip(".")
                            lits.append((v.value, sch.get("x-kind"), own))
        values_of: dict[str, set[str]] = {}
        for value, kind, _ in lits:
            if kind:
                given.add(str(kind))
                values_of.setdefault(str(kind), set()).add(canonical_json(value))
        stated: dict[str, tuple[Any, str]] = {}
        for value, kind, own in lits:
            # a kind's noun labels its value, unless the kind has several (which is which)
            label = kind_noun(self.ix, kind) if kind and len(values_of[kind]) == 1 else own
            stated.setdefault(_fact_key(value, kind or label), (value, label))
        goals = goal_kinds(self.ix, plans[0], given)
        if goals is None:
            return "!a final call yields nothing the other calls do not: no goal to ask for"
        for _, src in facts:  # a checked fact the final calls do not name is a goal too
            tool, _, path = src.partition(":")
            kind = (self.corpus.tools[tool].output_field_schema(path.split(".")) or {}).get(
                "x-kind"
            )
            if kind and kind not in [k for k, _ in goals]:
                goals.append((kind, False))
        specs = {n.tool or "": self.corpus.tools[n.tool or ""] for p in plans for n in p.call_nodes}
        why = reverse_validate(
            specs, given, [k for k, _ in goals], [path_reading(p, specs) for p in plans]
        )
        if why is not None:
            return "!goal-level query is ambiguous: " + why
        rng = random.Random(stable_seed("goal-query", base_id))
        self._goal_spec = {"goals": [list(g) for g in goals], "given": sorted(given)}
        return write_goal_query(self.ix, domain, goals, list(stated.values()), rng)

    def _sensitise(
        self,
        star: PathRun,
        others: list[PathRun],
        victim_node: str,
        checker: Checker,
        literal_values: Mapping[str, Any],
        world_seed: int,
    ) -> tuple[str | None, tuple[Any, str] | None, int]:
        """Pick the output field of the s* victim whose corruption matters, and if the checker
        would not notice a blindly used corrupted value, a fact that does.

        For each candidate field (consumed ones first) s* is run with that field corrupted on
        every invocation: if the checker then fails, the field is chosen as is; else a
        path-invariant result that changed becomes a required fact. Returns (field, fact,
        quality): 2 the checker catches a blindly used corruption, 1 it surfaces as a later
        call's error, 0 neither.
        """

        plan = star.plan
        tool = plan.node(victim_node).tool or ""
        spec = self.corpus.tools[tool]
        clean = star.outputs.get(victim_node)
        if not isinstance(clean, (Mapping, list)):
            return None, None, 0
        consumed = _consumed_fields(plan, victim_node)
        fields = fault_fields(clean, consumed)
        probe = Task(task_id="probe", suite=SUITE, query="", tools=[], checker=checker)
        literals = list(literal_values.values())
        pool = [[v for nid in r.outputs for _, v in scalar_leaves(r.outputs[nid])] for r in others]
        failing: str | None = None
        for path in fields[:8]:
            value = _lookup(clean, path)
            sch = spec.output_field_schema(list(path)) or {}
            ispec = None
            for kind, new in corruptions(value, sch, stable_seed("probe", tool)):
                cand = ImplicitSpec(".".join(path), kind, new)
                if new != value and spec.check_output(corrupt(clean, cand)).ok:
                    ispec = cand
                    break
            if ispec is None:
                continue
            prof = PerturbationProfile(
                mode="P4", victim=tool, kind=ispec.kind, field=ispec.field, sentinel=ispec.value
            )
            tools = [n.tool or "" for n in plan.call_nodes]
            world = World(
                {t: self.corpus.tools[t] for t in tools},
                self.initial_state(world_seed),
                seed=world_seed,
                faults=Perturber(prof, implicit={tool: ispec}),
            )
            blind = execute_plan(plan, world)
            if blind.failed is not None:
                failing = failing or ispec.field  # the lie surfaces as a later error
                continue
            answer = answer_from_outputs(blind.outputs, [n.id for n in plan.call_nodes])
            if not check(probe, world.state, answer).success:
                return ispec.field, None, 2
            seen_blind = [x for nid in blind.outputs for _, x in scalar_leaves(blind.outputs[nid])]
            for n in reversed(plan.call_nodes):
                for p2, v in scalar_leaves(star.outputs.get(n.id)):
                    if any(same_value(v, x) for x in seen_blind):
                        continue  # the clean value still shows elsewhere: it would not tell
                    got = _lookup(blind.outputs.get(n.id), p2)
                    if same_value(v, got) or isinstance(v, bool) or v in (None, ""):
                        continue
                    if isinstance(v, (int, float)):
                        if abs(v) < 10:
                            continue
                    elif not (isinstance(v, str) and reportable_text(v, n.tool or "", p2)):
                        continue
                    if any(same_value(v, x) for x in literals) or not all(
                        any(same_value(v, x) for x in other) for other in pool
                    ):
                        continue
                    return ispec.field, (v, f"{n.tool}:{'.'.join(p2)}"), 2
        return failing, None, 1 if failing else 0

    def _learn(self, run: PathRun, units: list[Unit], ids: Mapping[str, str]) -> None:
        """Remember the bindings into a failing call so that later attempts avoid them."""
        if run.failed is None:
            return
        by_id = {ids[n.key]: (u, n) for u in units for c in u.chains for n in c if n.key in ids}
        node = run.plan.node(run.failed)
        params = [run.failed_param] if run.failed_param in node.args else list(node.args)
        for p in params:
            v = node.args[p]
            ref = exact_reference(v, run.plan.ids)
            if ref is None or not ref.path or ref.node not in by_id:
                continue
            unit, src = by_id[ref.node]
            path = ".".join(ref.path)
            if unit.group is not None and (src.key, tuple(ref.path)) in unit.outs:
                source = ("group:" + unit.group, group_kind(self.ix.groups[unit.group], self.ix))
            else:
                source = (src.tool, path)
            self._bad.add((source[0], source[1] or "", node.tool or "", p))

    def _victims(
        self, level: str, units: list[Unit], star: Plan, rng: random.Random
    ) -> list[tuple[int, str, list[str]]]:
        """Victim candidates on s*, best first: (unit, s* node id, victim tools).

        C1: a call with downstream calls (non-actions first); C2–C4: a group unit, whose
        first tool on s* is the profile's named victim.
        """
        if level == "C1":
            import networkx as nx  # late: 0.1 s to import, and only generation needs it

            g = star.graph()
            cands = [
                n for n in star.call_nodes if any(d != RESPONSE for d in nx.descendants(g, n.id))
            ]
            rng.shuffle(cands)
            cands.sort(key=lambda n: self.ix.tools[n.tool or ""].spec.category == "action")
            out = []
            for node in cands:
                unit = next(u.index for u in units if u.chains[0][0].tool == node.tool)
                out.append((unit, node.id, [node.tool or ""]))
            return out
        gunits = [u for u in units if u.group is not None]
        rng.shuffle(gunits)
        star_tools = {n.tool: n.id for n in star.call_nodes}
        out = []
        for unit in gunits:
            first = next(n for c in unit.chains for n in c if n.tool in star_tools)
            out.append((unit.index, star_tools[first.tool], sorted(set(unit.tools))))
        return out

    # -- instances ----------------------------------------------------------------------------------
    def instances(self, base: BaseTask, modes: Iterable[str] = MODES) -> list[Task]:
        """The base task crossed with ``modes``."""
        out = []
        for mode in modes:
            out.append(self._instance(base, mode))
        return out

    def _instance(self, base: BaseTask, mode: str) -> Task:
        group = self.ix.tools[base.victim_tools[0]].spec.group if base.level != "C1" else None
        star_plan = base.runs[0].plan
        star_victim = star_plan.node(base.victim_node).tool or ""
        meta: dict[str, Any] = {
            "domain": base.domain,
            "domains": sorted({self.ix.tools[t].spec.domain for t in base.tools}),
            "paths": base.paths,
            "victim_node": base.victim_node,
            "literals": base.literals,
        }
        if base.goal is not None:
            meta["goal"] = base.goal
        faults = FaultSetup(victim_tools=base.victim_tools if group else [])
        profile = None
        checker = base.checker
        if mode != "NP":
            explicit, permanent = mode_flags(mode)
            salt = stable_seed("sentinel", base.base_id, mode)
            if explicit:
                kind = EXPLICIT_KINDS[
                    stable_seed("explicit", base.base_id, mode) % len(EXPLICIT_KINDS)
                ]
                profile = PerturbationProfile(
                    mode=mode,
                    victim=star_victim,
                    group=group,
                    kind=kind,
                    slot=base.slot,  # type: ignore[arg-type]
                )
            else:
                implicit = self._implicit_specs(base, mode)
                faults.implicit = {t: s.to_dict() for t, s in implicit.items()}
                spec = implicit[star_victim]
                profile = PerturbationProfile(
                    mode=mode,  # type: ignore[arg-type]
                    victim=star_victim,
                    group=group,
                    kind=spec.kind,
                    sentinel=spec.value,
                    field=spec.field,
                    slot=base.slot,
                )
            by_victim = {
                t: min_calls(base.paths, t, self._executed_before(base, t), permanent)
                for t in (base.victim_tools if group else [star_victim])
            }
            # c* for an agent that meets the fault where s* does; per possible victim below,
            # and ``min_calls_after_fault(task, victim, executed)`` for any other history
            faults.min_calls_after_fault = by_victim[star_victim]
            faults.min_calls_after_fault_by_victim = by_victim
            meta["sentinel_salt"] = salt
            if permanent and base.level == "C1":
                import networkx as nx  # late: as above

                g = star_plan.graph()
                down = nx.descendants(g, base.victim_node) - {RESPONSE}
                checker = Checker(
                    graceful=True,
                    forbidden_after_failure=sorted({star_plan.node(d).tool or "" for d in down}),
                )
        return Task(
            task_id=f"{base.base_id}-{mode}",
            suite=SUITE,
            base_id=base.base_id,
            query=base.query,
            tools=list(base.tools),
            level=base.level,
            mode=mode,  # type: ignore[arg-type]
            world_seed=base.world_seed,
            gold_plan=base.paths[0]["plan"],
            valid_paths=[list(p["tools"]) for p in base.paths],
            optimal_rounds=base.paths[0]["rounds"],
            min_calls=base.paths[0]["calls"],
            perturbation=profile,
            faults=faults,
            checker=checker,
            metadata=meta,
        )

    def _executed_before(self, base: BaseTask, tool: str) -> list[str]:
        """Tools a gold-following agent ran before first calling ``tool`` (its ancestors)."""
        for r in base.runs:
            node = next((n for n in r.plan.call_nodes if n.tool == tool), None)
            if node is not None:
                return [r.plan.node(a).tool or "" for a in r.plan.ancestors(node.id) if a != ROOT]
        return []

    def _implicit_specs(self, base: BaseTask, mode: str) -> dict[str, ImplicitSpec]:
        out: dict[str, ImplicitSpec] = {}
        group = base.level != "C1"
        star_victim = base.runs[0].plan.node(base.victim_node).tool
        tools = base.victim_tools if group else [star_victim]
        for tool in tools:
            for r in base.runs:
                node = next((n for n in r.plan.call_nodes if n.tool == tool), None)
                if node is None:
                    continue
                preferred = _consumed_fields(r.plan, node.id)
                if tool == star_victim and base.victim_field:
                    preferred = [base.victim_field, *preferred]
                spec = plan_implicit(
                    self.corpus.tools[tool],
                    r.outputs[node.id],
                    stable_seed("sentinel", base.base_id, mode, tool),
                    preferred,
                )
                if spec is not None:
                    out[tool] = spec
                break
        if star_victim not in out:
            raise GenerationError(f"{base.base_id}: no implicit corruption for {star_victim}")
        return out

    def _bypassable_step(
        self,
        runs: Sequence[PathRun],
        literal_values: Mapping[str, Any],
        effects: Mapping[str, bool],
        checker: Checker,
        world_seed: int,
    ) -> str | None:
        """A call that a path can do without: its consumers (if any) take an input of the same
        kind from the query or from another call of the path that does not depend on it, the
        path runs clean and the checker accepts it. Such a run makes no valid path and passes,
        so the task would not pin the step (issue 29 §3): it is regenerated. (A final call with
        effects is dropped as it is: alternatives that write different collections leave its
        record unchecked. A final call without effects is derive_checker's: a fact only it
        yields.)"""
        probe = Task(task_id="probe", suite=SUITE, query="", tools=[], checker=checker)
        stated: dict[str, list[Any]] = {}
        for key, v in literal_values.items():
            tool, _, param = key.partition(".")
            kind = (self.corpus.tools[tool].param_schema(param) or {}).get("x-kind")
            if kind and not any(same_value(v, x) for x in stated.get(kind, [])):
                stated.setdefault(kind, []).append(v)
        seen: set[tuple[Any, ...]] = set()
        paths = {frozenset(r.tools) for r in runs}
        for r in runs:
            plan = r.plan
            ids = [n.id for n in plan.call_nodes]
            for n in plan.call_nodes:
                if n.id not in r.outputs:
                    continue
                uses = [
                    (c.id, p)
                    for c in plan.call_nodes
                    for p, v in c.args.items()
                    if any(ref.node == n.id for ref in iter_references(v, ids))
                ]
                if not uses and not effects.get(n.tool or ""):
                    continue  # a final call without effects: derive_checker's own fact
                if frozenset(m.tool for m in plan.call_nodes if m.id != n.id) in paths:
                    continue  # the path without it is another valid path
                below = plan.descendants(n.id) | {n.id}
                others = frozenset(m.tool for m in plan.call_nodes if m.id not in below)
                key = (n.tool or "", others, *sorted(f"{plan.node(c).tool}.{p}" for c, p in uses))
                if key in seen:
                    continue  # the same call with the same other sources on another path
                seen.add(key)
                options = []
                for c, p in uses:
                    consumer = plan.node(c)
                    ref = exact_reference(consumer.args[p], ids)
                    if ref is None:
                        break  # the result is written into a text: no other source fits it
                    got = self._sources(consumer.tool or "", p, plan, below, stated)
                    if not got:
                        break
                    # a source of the very value the call passed on first: the likeliest pass
                    was = lookup_path(r.outputs.get(ref.node), ref.path)
                    got.sort(key=lambda src: not _gives(src, r.outputs, was))
                    options.append(got[:6])
                else:
                    for combo in itertools.islice(itertools.product(*options), 12):
                        variant = _without_node(plan, n.id, dict(zip(uses, combo, strict=True)))
                        run = self.run(variant, world_seed)
                        if not run.ok:
                            continue
                        answer = answer_from_outputs(run.outputs, list(run.outputs))
                        if check(probe, run.state, answer).success:
                            return f"a path without its call {n.tool} passes the checker"
        return None

    def _sources(
        self,
        consumer: str,
        param: str,
        plan: Plan,
        excluded: set[str],
        stated: Mapping[str, list[Any]],
    ) -> list[tuple[str | None, Any]]:
        """Where ``consumer.param`` could take a value of its kind from instead: the query's
        values of that kind (``(None, value)``), then the fields of that kind in the outputs of
        the calls of ``plan`` outside ``excluded`` (``(node id, field path)``)."""
        sch = self.corpus.tools[consumer].param_schema(param) or {}
        kind = sch.get("x-kind")
        if not kind:
            return []
        out: list[tuple[str | None, Any]] = [(None, v) for v in stated.get(str(kind), [])]
        for m in plan.call_nodes:
            if m.id in excluded or m.tool == consumer:
                continue
            for o in walk_outputs(self.corpus.tools[m.tool or ""].returns, optional=True):
                if o.kind == kind and types_compatible(o.schema, sch):
                    out.append((m.id, o.path))
        return out


def _gives(source: tuple[str | None, Any], outputs: Mapping[str, Any], value: Any) -> bool:
    """Whether a ``(node id, field path)`` source gives ``value`` in ``outputs`` (a stated
    value, ``(None, value)``: whether it is that value)."""
    node, what = source
    got = what if node is None else lookup_path(outputs.get(node), what)
    return got is not MISSING and value is not MISSING and same_value(got, value)


def _without_node(
    plan: Plan, node_id: str, sources: Mapping[tuple[str, str], tuple[str | None, Any]]
) -> Plan:
    """``plan`` without the call ``node_id``: each of its uses ``(consumer, parameter)`` takes
    (ids) takes the value or the ``(node id, field path)`` reference ``sources`` gives it."""
    nodes = []
    for n in plan.nodes:
        if n.id == node_id:
            continue
        args = dict(n.args)
        deps = [d for d in n.deps if d != node_id]
        for (c, p), (src, what) in sources.items():
            if c != n.id:
                continue
            if src is None:
                args[p] = what
            else:
                args[p] = reference_text(src, *what)
                deps.append(src)
        if n.id != ROOT and not deps:
            deps = [ROOT]
        nodes.append(n.model_copy(update={"args": args, "deps": list(dict.fromkeys(deps))}))
    return plan.model_copy(update={"nodes": nodes})


def _idle_step(plan: Plan, effects: Mapping[str, bool]) -> str | None:
    """A call of s* that nothing needs: no dependent call, no effect, not a final call."""
    g = plan.graph()
    for n in plan.call_nodes:
        succ = set(g.successors(n.id))
        if succ and succ != {RESPONSE}:
            continue
        if succ == {RESPONSE}:
            continue  # a final call: its result or effect is checked
        if not effects.get(n.tool or ""):
            return f"call {n.tool} feeds nothing"
    return None


def _with_root(plan: Plan, query: str) -> list[PlanNode]:
    return [n.model_copy(update={"desc": query}) if n.id == ROOT else n for n in plan.nodes]


def _idnum(node_id: str) -> tuple:
    return (0, int(node_id)) if node_id.isdigit() else (1, node_id)


def _lookup(value: Any, path: Sequence[str]) -> Any:
    got = lookup_path(value, path)
    return None if got is MISSING else got


def _consumed_fields(plan: Plan, node_id: str) -> list[str]:
    """Dotted output paths of ``node_id`` that later nodes reference."""
    out: list[str] = []
    for n in plan.call_nodes:
        for v in n.args.values():
            ref = exact_reference(v, [node_id])
            field = ".".join(ref.path) if ref is not None and ref.node == node_id else ""
            if field and field not in out:
                out.append(field)
    return out


def _fact_key(value: Any, label: str) -> str:
    return canonical_json(value) + "|" + label


def _literal_values(units: list[Unit]) -> dict[str, Any]:
    """Every literal argument of every path, keyed ``tool.param``."""
    out: dict[str, Any] = {}
    for u in units:
        for c in u.chains:
            for n in c:
                for p, v in n.args.items():
                    if isinstance(v, Lit):
                        out[f"{n.tool}.{p}"] = v.value
    return out
