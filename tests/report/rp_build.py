"""Hand-built tasks, episodes and results stores for the report / compare / export tests.

Episodes are made by really executing calls on ``task_world(task)`` (the travel tools
search_flights -> quote_flight -> book_flight); a call can meet an explicit fault (nothing runs,
an error observation), as the perturbation engine does. Plus a small HTML table parser.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from replan.core.task import Checker, PerturbationProfile, RequiredRecord, Task
from replan.core.trace import Call, EndReason, Episode, Perturbation, PlanVersion, Step
from replan.env import task_world
from replan.runner.store import FeedbackRow, ResultsStore

TOOLS = ["search_flights", "find_flight_offers", "quote_flight", "book_flight"]
ROUTE = {"origin": "LIS", "destination": "KIX", "date": "2026-12-03"}
ALT_ROUTE = {"from_city": "Lisbon", "to_city": "Osaka", "travel_date": "2026-12-03"}
TRAVELLER = {"traveller_name": "Ana Silva", "contact_email": "ana@example.com"}
ERROR_503 = {"error": "503 Service Unavailable"}

#: the plan every hand-built replanner run starts from (also the tasks' gold plan)
PLAN_TEXT = json.dumps(
    {
        "tasks": [
            {"id": "root", "desc": "book the flight", "dep": [], "status": True},
            {"id": "1", "name": "search_flights", "para": ROUTE, "desc": "find", "dep": ["root"]},
            {
                "id": "2",
                "name": "quote_flight",
                "para": {"flight_id": "${1.cheapest_flight_id}"},
                "desc": "quote",
                "dep": ["1"],
            },
            {
                "id": "3",
                "name": "book_flight",
                "para": {"quote_id": "${2.quote_id}", **TRAVELLER},
                "desc": "book",
                "dep": ["2"],
            },
            {"id": "response", "desc": "answer", "dep": ["3"]},
        ]
    }
)


def task(task_id: str, *, mode: str = "NP", level: str = "C1") -> Task:
    """Search -> quote -> book for Ana Silva; the booking must exist and its id be stated."""
    pert = None
    if mode != "NP":
        pert = PerturbationProfile(
            mode=mode,  # type: ignore[arg-type]
            victim="search_flights",
            group="flight_search",
            kind="http_503",
        )
    return Task(
        task_id=task_id,
        suite="toolmaze",
        query="Book the cheapest LIS->KIX flight on 2026-12-03 for Ana Silva (ana@example.com).",
        tools=list(TOOLS),
        level=level,
        mode=mode,  # type: ignore[arg-type]
        min_calls=3,
        optimal_rounds=3,
        perturbation=pert,
        checker=Checker(
            required_records=[
                RequiredRecord(
                    collection="flight_bookings", where={"traveller": "Ana Silva"}, mention_key=True
                )
            ]
        ),
        valid_paths=[
            ["search_flights", "quote_flight", "book_flight"],
            ["find_flight_offers", "quote_flight", "book_flight"],
        ],
        gold_plan=json.loads(PLAN_TEXT),
    )


@dataclass
class Act:
    """One call; ``fault="explicit"`` makes it meet a 503 (nothing runs)."""

    tool: str
    args: dict[str, Any]
    node: str | None = None
    fault: str | None = None
    round: int | None = None


def search(node: str = "1", **kw: Any) -> Act:
    return Act("search_flights", dict(ROUTE), node, **kw)


def search_no_date(node: str = "1") -> Act:
    return Act("search_flights", {"origin": "LIS", "destination": "KIX"}, node)


def alt_search(node: str = "1b", **kw: Any) -> Act:
    return Act("find_flight_offers", dict(ALT_ROUTE), node, **kw)


def quote(ref: str = "${1.cheapest_flight_id}", node: str = "2", **kw: Any) -> Act:
    return Act("quote_flight", {"flight_id": ref}, node, **kw)


def book(ref: str = "${2.quote_id}", node: str = "3", **kw: Any) -> Act:
    return Act("book_flight", {"quote_id": ref, **TRAVELLER}, node, **kw)


def run(
    t: Task,
    acts: list[Act],
    *,
    design: str,
    seed: int = 0,
    model: str = "m",
    answer: str | None = None,
    success: bool | None = None,
    end_reason: EndReason = EndReason.ANSWERED,
    plans: list[PlanVersion] | None = None,
) -> Episode:
    """Execute ``acts`` in order on the task's world and record the Episode.

    ``answer`` may contain ``{booking}``: the id of the last successful booking."""
    world = task_world(t)
    bindings: dict[str, Any] = {}
    steps: list[Step] = []
    booking = None
    for i, a in enumerate(acts):
        call = Call(tool=a.tool, args=a.args, node_id=a.node)
        pert = None
        if a.fault == "explicit":
            verdict, resolved = world.check(call, bindings)
            obs: Any = dict(ERROR_503)
            pert = Perturbation(
                mode=t.mode,  # type: ignore[arg-type]
                explicit=True,
                permanent=t.mode in ("P2", "P4"),
                kind="http_503",
                victim=a.tool,
                group="flight_search",
            )
        else:
            res = world.execute(call, bindings)
            verdict, resolved, obs = res.verdict, res.resolved_args, res.observation
            if res.ok and a.tool == "book_flight":
                booking = obs["booking_id"]
        if verdict.ok and a.node and pert is None:
            bindings[a.node] = obs
        steps.append(
            Step(
                index=i,
                round=i + 1 if a.round is None else a.round,
                call=call,
                resolved_args=resolved,
                verdict=verdict,
                observation=obs,
                perturbation=pert,
            )
        )
    return Episode(
        episode_id=f"{t.task_id}|{design}|{model}|{seed}",
        task_id=t.task_id,
        suite=t.suite,
        design=design,
        model=model,
        seed=seed,
        mode=t.mode,
        query=t.query,
        steps=steps,
        plans=plans or [],
        final_answer=answer.format(booking=booking) if answer is not None else None,
        end_reason=end_reason,
        success=success,
    )


BOOKED = "Booked: booking {booking}."
FULL = [search(), quote(), book()]


def save(
    out: Path,
    episodes: list[Episode],
    tasks: list[Task],
    feedback: dict[str, list[FeedbackRow]] | None = None,
    config: dict[str, Any] | None = None,
) -> Path:
    """A results store in ``out`` holding ``episodes`` (with given or computed feedback)."""
    from replan.evaluators import scoring_stamp
    from replan.runner.experiment import score_rows

    tmap = {t.task_id: t for t in tasks}
    with ResultsStore(out) as store:
        store.ensure_experiment("exp-test", config or {"suite": "hand-built"})
        store.save_tasks(tasks)
        for ep in episodes:
            rows, records = (feedback or {}).get(ep.episode_id), None
            if rows is None:  # scored as the runner scores it: feedback and records
                rows, records = score_rows(ep, tmap[ep.task_id])
            store.save_episode(
                "exp-test",
                ep,
                rows,
                level=tmap[ep.task_id].level,
                records=records,
                stamp=scoring_stamp(),
            )
    return out


def two_design_store(out: Path) -> Path:
    """react and dual_loop on a C1/NP task (seeds 0-2) and a C2/P1 task (seeds 0-1).

    react: NP s0 clean, NP s1 first call misses ``date`` (Parameter_Missing) then succeeds, NP s2
    clean; P1 s0 retries the victim and succeeds; P1 s1 gives up after the 503.
    dual_loop: NP s0, s1 clean; NP s2 a model error (a failure, counted apart); P1 s0 retries,
    P1 s1 reroutes to find_flight_offers; all succeed.
    """
    np_t, p1_t = task("t-np", level="C1"), task("t-p1", mode="P1", level="C2")
    eps = [
        run(np_t, FULL, design="react", seed=0, answer=BOOKED),
        run(np_t, [search_no_date(), *FULL], design="react", seed=1, answer=BOOKED),
        run(np_t, FULL, design="react", seed=2, answer=BOOKED),
        run(p1_t, [search(fault="explicit"), *FULL], design="react", seed=0, answer=BOOKED),
        run(
            p1_t,
            [search(fault="explicit")],
            design="react",
            seed=1,
            answer="Sorry, I was unable to search for flights.",
        ),
        run(np_t, FULL, design="dual_loop", seed=0, answer=BOOKED),
        run(np_t, FULL, design="dual_loop", seed=1, answer=BOOKED),
        run(
            np_t,
            [],
            design="dual_loop",
            seed=2,
            end_reason=EndReason.MODEL_ERROR,
            success=False,
        ),
        run(p1_t, [search(fault="explicit"), *FULL], design="dual_loop", seed=0, answer=BOOKED),
        run(
            p1_t,
            [search(fault="explicit"), alt_search(), quote("${1b.best_offer.flight_id}"), book()],
            design="dual_loop",
            seed=1,
            answer=BOOKED,
        ),
    ]
    eps[7] = eps[7].model_copy(update={"error": "RateLimitError: 429 after 4 attempts"})
    return save(out, eps, [np_t, p1_t])


# -- replanner episodes (export) ---------------------------------------------------------------
#: the plan as the replanner sees it after wave 1, where node 1 met a 503 (statuses from
#: execution: the world accepted the call, so node 1 ran; whether its error result is usable is
#: the replanner's call, never the injection record's)
EXPECTED_PLAN_AFTER_WAVE_1 = {
    "tasks": [
        {"id": "root", "desc": "book the flight", "dep": [], "status": True},
        {
            "id": "1",
            "name": "search_flights",
            "para": ROUTE,
            "desc": "find",
            "dep": ["root"],
            "status": True,
        },
        {
            "id": "2",
            "name": "quote_flight",
            "para": {"flight_id": "${1.cheapest_flight_id}"},
            "desc": "quote",
            "dep": ["1"],
            "status": False,
        },
        {
            "id": "3",
            "name": "book_flight",
            "para": {"quote_id": "${2.quote_id}", **TRAVELLER},
            "desc": "book",
            "dep": ["2"],
            "status": False,
        },
        {"id": "response", "desc": "answer", "dep": ["3"], "status": False},
    ]
}


def replan_episode(
    t: Task, seed: int, replan_text: str, *, first_fault: bool = True, model: str = "m"
) -> Episode:
    """A replanner_loop run: plan, wave 1 (search meets a 503, or runs without ``date``),
    replan written after wave 1 (``replan_text``), then search / quote / book in waves 2-4."""
    first = search(fault="explicit", round=1) if first_fault else search_no_date()
    first.round = 1
    acts = [first, search(round=2), quote(round=3), book(round=4)]
    plans = [
        PlanVersion(index=0, round=0, source="planner", text=PLAN_TEXT),
        PlanVersion(index=1, round=1, source="replanner", text=replan_text),
    ]
    return run(
        t,
        acts,
        design="replanner_loop",
        seed=seed,
        model=model,
        answer=BOOKED,
        plans=plans,
    )


def sde_rows(items: dict[str, float | None], *, auto: dict[str, float] | None = None) -> list:
    """Feedback rows for SDE items (``None``: the judge failed on that item)."""
    rows = [FeedbackRow(key=f"sde.{k}", score=v) for k, v in items.items()]
    rows += [FeedbackRow(key=f"sde.auto.{k}", score=v) for k, v in (auto or {}).items()]
    rows.append(FeedbackRow(key="prefix.clean", score=1.0))  # an unrelated metric
    return rows


ITEMS = [f"{d}{i}" for d in "SDE" for i in range(1, 6)]


def items(values: list[float | None]) -> dict[str, float | None]:
    """The 15 items S1..S5, D1..D5, E1..E5 in order."""
    assert len(values) == 15
    return dict(zip(ITEMS, values, strict=True))


# -- HTML parsing ------------------------------------------------------------------------------
class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None], parent: Node | None):
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def find_all(self, tag: str, **attrs: str) -> list[Node]:
        out = []
        for c in self.children:
            if isinstance(c, Node):
                if c.tag == tag and all(c.attrs.get(k.rstrip("_")) == v for k, v in attrs.items()):
                    out.append(c)
                out += c.find_all(tag, **attrs)
        return out

    def with_attr(self, name: str) -> list[Node]:
        out = []
        for c in self.children:
            if isinstance(c, Node):
                if name in c.attrs:
                    out.append(c)
                out += c.with_attr(name)
        return out


VOID = {"meta", "img", "br", "hr", "input", "link"}


class _Tree(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.root = Node("root", {}, None)
        self.cur = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs), self.cur)
        self.cur.children.append(node)
        if tag == "br":
            self.cur.children.append(" ")
        if tag not in VOID:
            self.cur = node

    def handle_endtag(self, tag: str) -> None:
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is None:
            raise AssertionError(f"unbalanced </{tag}>")
        self.cur = n.parent  # type: ignore[assignment]

    def handle_data(self, data: str) -> None:
        self.cur.children.append(data)


def inflate(text: str) -> str:
    """The page with every compressed drill-down (``data-gz``: base64 of gzip) opened in place,
    as the page's script does in a browser (decoded here with the standard library)."""
    import base64
    import gzip
    import re

    def one(m: re.Match[str]) -> str:
        return ">" + gzip.decompress(base64.b64decode(m.group(1))).decode("utf-8") + "</div>"

    return re.sub(r' data-gz="([A-Za-z0-9+/=]*)"></div>', one, text)


def parse_html(text: str) -> Node:
    """The page as a tree (raises on unbalanced end tags)."""
    p = _Tree()
    p.feed(text)
    p.close()
    assert p.cur is p.root, f"unclosed <{p.cur.tag}>"
    return p.root


def wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson 95% interval by its textbook formula (independent of the evaluators)."""
    z = 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
    return (0.0 if k == 0 else centre - half, 1.0 if k == n else centre + half)
