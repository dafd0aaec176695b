"""In-place verdicts, piece by piece: field paths, faults aimed at what the run consumes, the
*not consumed* count, derived forms of a corrupted value, stops judged from the run, returned
rejections and calls to tools that do not exist. Every expected value is worked out by hand.
"""

from __future__ import annotations

from typing import Any

import ip_shop as shop
import pytest
from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from typing_extensions import TypedDict

from replan.core.task import Task
from replan.core.trace import Call, EndReason, Episode, Perturbation, Step
from replan.env.derived import Corrupted, recognise, resolve_paths
from replan.env.tool_faults import corrupt_output
from replan.evaluators.perturbation import recovery_record
from replan.inplace import FaultInjectionMiddleware, ScriptedToolModel, evaluate_in_place
from replan.runner.store import ResultsStore

ROWS = [
    {"flight_id": 7, "scheduled_departure": "2026-12-04 14:30:00+01:00", "price": 120.5},
    {"flight_id": 8, "scheduled_departure": "2026-12-04 20:30:00+01:00", "price": 99.0},
]


# -- field paths ---------------------------------------------------------------------------------
def test_field_paths_name_nested_and_list_outputs() -> None:
    every = [("0", "scheduled_departure"), ("1", "scheduled_departure")]
    assert resolve_paths(ROWS, "scheduled_departure") == every  # a bare name: every row
    assert resolve_paths({"rows": ROWS}, "rows[*].price") == [
        ("rows", "0", "price"),
        ("rows", "1", "price"),
    ]
    assert resolve_paths(ROWS, "0.price") == [("0", "price")]
    assert resolve_paths(ROWS, "[1].flight_id") == [("1", "flight_id")]
    assert resolve_paths(ROWS, "nope") == []
    got = corrupt_output(ROWS, 5, field="scheduled_departure")
    assert got is not None and got.aim == "named"
    # both rows' departures moved decades away; nothing else touched
    assert [c.field for c in got.corrupted] == ["0.scheduled_departure", "1.scheduled_departure"]
    for row, new in zip(ROWS, got.output, strict=True):
        assert int(new["scheduled_departure"][:4]) - 2026 >= 60
        assert new["scheduled_departure"][4:] == row["scheduled_departure"][4:]
        assert (new["flight_id"], new["price"]) == (row["flight_id"], row["price"])
    # a named field that this output lacks is not replaced by another one
    assert corrupt_output(ROWS, 5, field="gate") is None


def _run(tmp_path: Any, agent: Any, **kw: Any) -> Any:
    kw.setdefault("out", tmp_path / "out")
    kw.setdefault("show", False)
    kw.setdefault("n_boot", 100)
    return evaluate_in_place(agent, shop.TOOLS, shop.TASKS[:1], **kw)


def test_an_unknown_field_is_refused_before_any_perturbed_run(tmp_path) -> None:
    with pytest.raises(
        ValueError, match=r"field='totl_usd' is in no output of list_orders.*total_usd"
    ):
        _run(tmp_path, shop.agent(), modes="P3", target="list_orders", field="totl_usd")
    with ResultsStore(tmp_path / "out") as store:
        assert {e.mode for e in store.episodes()} == {"NP"}  # only the clean run ran
    with pytest.raises(ValueError, match="empty segment"):
        _run(tmp_path, shop.agent(), modes="P3", field="rows..x")


def test_the_default_implicit_fault_hits_what_the_clean_run_used(tmp_path) -> None:
    """list_orders returns {customer_id, orders, total_usd}; the clean run passes total_usd to
    usd_to_eur (customer_id only echoes its input, orders is never read). The engine's first
    choice would be ``orders`` (the first number), which nothing reads."""
    res = _run(tmp_path, shop.agent(), modes="P3", target="list_orders")
    p3 = next(e for e in res.episodes if e.mode == "P3")
    pert = p3.steps[1].perturbation
    assert pert.aim == "consumed" and pert.corrupted[0]["field"] == "total_usd"
    assert p3.steps[2].call.args["amount"] == pert.sentinel  # the conversion got the bad total
    rec = res.scores[p3.episode_id].recovery
    assert rec.consumed is True and rec.verdict == "not recovered"
    assert rec.evidence[0]["where"] == "call 3 (usd_to_eur)"
    assert p3.metadata["clean_run"]["consumed"]["list_orders"] == ["total_usd"]


@tool
def store_hours() -> dict:
    """Opening hours of the shop."""
    return {"opens": 9, "closes": 17}


def test_a_corrupted_value_the_run_never_uses_is_not_consumed(tmp_path) -> None:
    """The agent calls store_hours and ignores it: the clean run consumed nothing of it, so the
    fault lands on the first number (opens) and nothing reads it -> not consumed, out of PRR
    (the old verdict: 'not recovered', PRR 0.00)."""
    model = ScriptedToolModel(
        plan=[("store_hours", {}), ("find_customer", {"email": "ada@example.com"})],
        answer=lambda r: f"Customer {r[1]['customer_id']}.",
    )
    agent = create_agent(model, [*shop.TOOLS, store_hours], middleware=[FaultInjectionMiddleware()])
    res = evaluate_in_place(
        agent,
        [*shop.TOOLS, store_hours],
        [{"id": "c", "input": "Who is ada@example.com?", "expected": "C-1042"}],
        modes=["P3", "P4"],
        target="store_hours",
        out=tmp_path / "o",
        show=False,
        n_boot=100,
    )
    for mode in ("P3", "P4"):
        prr = res.prr(mode)
        assert (prr["exposed"], prr["not_consumed"], prr["n"], prr["value"]) == (1, 1, 0, None)
    assert res.tsr("P3")["value"] == 1.0
    rows = {r["mode"]: r for r in res.rows()}
    assert rows["P3"]["not consumed"] == "1" and rows["P3"]["PRR"].startswith("–")
    with pytest.raises(AssertionError, match="1 not consumed"):
        res.assert_prr(">=", 0.5, mode="P3")


# -- derived forms ---------------------------------------------------------------------------------
def test_each_corruption_kind_is_recognised_after_a_transformation() -> None:
    date = Corrupted("date_decades_away", "2087-12-04 14:30:00+01:00", "2026-12-04 14:30:00+01:00")
    assert recognise(date, {"start_time": "2087-12-10"})  # shifted by days
    assert recognise(date, "It departs on Dec 4, 2087 at 14:30.")  # reformatted
    assert recognise(date, "It departs on 4 December 2087.")
    assert recognise(date, {"start_time": "2026-12-10"}) is None  # the clean year
    x1000 = Corrupted("value_x1000", 182650.37, 182.65)
    assert recognise(x1000, "That is 168,604.55 EUR.")  # converted at 0.9231: same magnitude
    assert recognise(x1000, "That is 168.60 EUR.") is None  # the clean amount, converted
    assert recognise(x1000, "Booked for 2026.") is None  # a year is not an amount
    assert recognise(x1000, "It is 3,000.", explained=[3000.0]) is None  # a clean number
    # after a unit conversion, about 1000x the clean run's number
    assert recognise(x1000, "about 3,044 minutes", clean_numbers=[3.044]) is not None
    neg = Corrupted("negative_value", -42193, 42)
    assert recognise(neg, {"qty": -40000})
    assert recognise(neg, {"qty": 40000}) is None  # the sign flipped back
    swap = Corrupted("value_swapped", "LX0112-KEACH", "LX0112")
    assert recognise(swap, "https://x.example/flights/lx0112-keach/status")
    assert recognise(swap, "flight LX0112") is None
    assert recognise(swap, "REKEACHED") is None  # the tag inside another word


def _episode(steps: list[Step], answer: str | None, mode: str, **kw: Any) -> Episode:
    return Episode(
        episode_id="e",
        task_id=f"t/{mode}",
        suite="inplace",
        design="d",
        model="m",
        mode=mode,
        query="Find me a later flight on my travel day.",
        steps=steps,
        final_answer=answer,
        end_reason=EndReason.ANSWERED if answer else EndReason.CRASHED,
        success=False,
        **kw,
    )


def _step(i: int, tool: str, args: dict, obs: Any, pert: Perturbation | None = None) -> Step:
    return Step(index=i, call=Call(tool=tool, args=args), observation=obs, perturbation=pert)


def _bad_date(mode: str) -> Perturbation:
    return Perturbation(
        mode=mode,
        explicit=False,
        permanent=mode == "P4",
        kind="date_decades_away",
        victim="fetch",
        sentinel="2087-12-04 14:30:00",
        corrupted=[
            {
                "field": "0.scheduled_departure",
                "kind": "date_decades_away",
                "original": "2026-12-04 14:30:00",
                "sentinel": "2087-12-04 14:30:00",
            }
        ],
        aim="consumed",
    )


def test_a_crash_after_using_the_corrupted_value_is_no_graceful_stop() -> None:
    """Issue 28's case: the corrupted date became a search window six days later, the search
    found nothing and the agent said "I could not complete the task: min() arg is an empty
    sequence". The old phrase list called that a graceful stop (recovered)."""
    steps = [
        _step(0, "fetch", {}, [{"scheduled_departure": "2087-12-04 14:30:00"}], _bad_date("P4")),
        _step(1, "search", {"start_time": "2087-12-10"}, []),
    ]
    ep = _episode(steps, "I could not complete the task: min() arg is an empty sequence", "P4")
    rec = recovery_record(
        ep, Task(task_id="t/P4", suite="inplace", query=ep.query, tools=[], mode="P4")
    )
    assert rec.verdict == "not recovered" and rec.sentinel_propagated
    assert rec.evidence == [
        {
            "where": "call 2 (search)",
            "step": 1,
            "field": "0.scheduled_departure",
            "form": "a date in 2087, decades from the clean 2026",
        }
    ]


def test_a_stop_is_judged_from_the_run_not_from_its_words() -> None:
    """P4, no alternative: a run that stops without using the corrupted date and without stating
    a result recovers, whatever its words; one that answers with a date decades away does not."""
    task = Task(task_id="t/P4", suite="inplace", query="q", tools=[], mode="P4")
    fetched = _step(
        0, "fetch", {}, [{"scheduled_departure": "2087-12-04 14:30:00"}], _bad_date("P4")
    )
    quiet = _episode([fetched], "Sorry, that booking looks odd to me. Please call us.", "P4")
    assert recovery_record(quiet, task).verdict == "recovered"
    told = _episode(
        [fetched],
        "Your flight leaves on 4 December 2087.",
        "P4",
        metadata={"clean_run": {"answer": "Your flight leaves on 4 December 2026."}},
    )
    rec = recovery_record(told, task)
    assert rec.verdict == "not recovered" and rec.evidence[0]["where"] == "answer"
    crashed = _episode([fetched], None, "P4")
    assert recovery_record(crashed, task).verdict == "not recovered"


# -- validity of your tools' calls -------------------------------------------------------------------
@tool
def run_sql(query: str) -> str:
    """Run a query (returns the database's error as text, as SQL toolkits do)."""
    if "Length" in query:
        return "Error: (sqlite3.OperationalError) no such column: Track.Length"
    return "[(42,)]"


def test_a_returned_rejection_and_a_call_to_a_missing_tool_are_invalid(tmp_path) -> None:
    """FED by hand: call 1 asks for a tool that does not exist (a ToolNode answers it itself),
    call 2 is rejected by the database, call 3 runs; TER 0."""
    model = ScriptedToolModel(
        plan=[
            ("sql_db_query", {"query": "SELECT 1"}),
            ("run_sql", {"query": "SELECT Length FROM Track"}),
            ("run_sql", {"query": "SELECT Milliseconds FROM Track"}),
        ],
        answer="42",
    )

    def make(tools: list[Any]) -> Any:
        def call_model(state: MessagesState) -> dict:
            return {"messages": [model.invoke(state["messages"])]}

        g = StateGraph(MessagesState)
        g.add_node("model", call_model)
        g.add_node("tools", ToolNode(tools, handle_tool_errors=True))
        g.add_edge(START, "model")
        g.add_conditional_edges("model", tools_condition)
        g.add_edge("tools", "model")
        return g.compile()

    res = evaluate_in_place(
        make,
        [run_sql],
        [{"id": "q", "input": "how long?", "expected": 42}],
        modes="NP",
        out=tmp_path / "o",
        show=False,
        n_boot=100,
    )
    (ep,) = res.episodes
    assert [s.call.tool for s in ep.steps] == ["sql_db_query", "run_sql", "run_sql"]
    assert [s.verdict.code.value for s in ep.steps] == ["unknown_tool", "invalid_value", "ok"]
    assert res.scores[ep.episode_id].prefix.fed == 1
    assert res.tables[ep.design]["NP"]["ter"]["value"] == 0.0


# -- the optional judge ------------------------------------------------------------------------------
def test_a_judge_decides_only_the_undetermined_runs_and_is_labelled(tmp_path) -> None:
    """The checking travel agent under P4 (hand count in test_ip_public_agents): 'when' stops
    quoting the corrupted year (undetermined), 'later' stops without quoting (recovered). The
    judge is asked once, about 'when' only; its verdict counts in PRR, labelled judged."""
    import ip_policy
    import ip_travel

    asked: list[str] = []

    def judge(prompt: str) -> str:
        asked.append(prompt)
        return "RECOVERED\nIt reported the corrupted booking instead of using it."

    clean = ip_travel.make_db(tmp_path / "t.sqlite")
    work = tmp_path / "w.sqlite"
    kw: dict[str, Any] = {"modes": ["P4"], "show": False, "n_boot": 50}
    res = evaluate_in_place(
        {"checking": ip_travel.agent("checking", clean, work)},
        ip_travel.make_tools(work),
        ip_travel.tasks(work),
        out=tmp_path / "a",
        judge=judge,
        **kw,
    )
    assert len(asked) == 1 and "what time is my flight" in asked[0]
    assert "was replaced by" in asked[0]  # the judge is told what the fault did
    prr = res.prr("P4")
    assert (prr["value"], prr["n"], prr["undetermined"], prr["judged"]) == (1.0, 2, 0, 1)
    when = next(e for e in res.episodes if e.metadata["base_id"] == "when" and e.mode == "P4")
    rec = res.scores[when.episode_id].recovery
    assert rec.judged and rec.verdict == "recovered" and rec.reason.startswith("judged:")
    assert "1 judged" in {r["mode"]: r for r in res.rows()}["P4"]["PRR"]
    # kept on the stored episode: the standard scorer reads the same verdict back
    with ResultsStore(tmp_path / "a") as store:
        stored = next(e for e in store.episodes() if e.episode_id == when.episode_id)
        task = store.tasks()[stored.task_id]
    assert recovery_record(stored, task).judged is True
    # a chat model as judge; a reply that is neither verdict leaves the run undetermined
    mumble = ip_policy.PolicyModel(policy=lambda m: ip_policy.say("Hard to say."))
    res2 = evaluate_in_place(
        {"checking": ip_travel.agent("checking", clean, work)},
        ip_travel.make_tools(work),
        ip_travel.tasks(work)[:1],
        out=tmp_path / "b",
        judge=mumble,
        **kw,
    )
    assert res2.prr("P4")["undetermined"] == 1 and res2.prr("P4")["judged"] == 0


def test_the_report_shows_each_episodes_verdict_and_evidence(tmp_path) -> None:
    """The trusting travel agent under P3 (hand count in test_ip_public_agents): the corrupted
    departure reached both searches and the answer; the report's episode view says so."""
    import re

    import ip_travel

    from replan.report import write_report
    from replan.report.html import unpack

    clean = ip_travel.make_db(tmp_path / "t.sqlite")
    work = tmp_path / "w.sqlite"
    evaluate_in_place(
        {"trusting": ip_travel.agent("trusting", clean, work)},
        ip_travel.make_tools(work),
        ip_travel.tasks(work)[1:],
        modes=["P3"],
        out=tmp_path / "o",
        show=False,
        n_boot=50,
    )
    html = write_report(tmp_path / "o", n_boot=50).read_text(encoding="utf-8")
    episodes = "".join(unpack(b) for b in re.findall(r'data-gz="([^"]+)"', html))
    assert "recovery: not recovered — the corrupted value reached the call 3 (search_flights)" in (
        episodes
    )
    for where in ("call 3 (search_flights)", "call 4 (search_flights)", "answer"):
        assert f"propagated to the {where}: a date in 20" in episodes


class Flight(TypedDict):
    flight_no: str
    scheduled_departure: str


@tool
def flights(day: str) -> list[Flight]:
    """Flights of a day."""
    return [{"flight_no": "LX0112", "scheduled_departure": f"{day} 14:30"}]


def test_a_field_the_declared_return_type_cannot_hold_is_refused_before_anything_runs(
    tmp_path,
) -> None:
    model = ScriptedToolModel(plan=[("flights", {"day": "2026-12-04"})], answer="ok")
    agent = create_agent(model, [flights], middleware=[FaultInjectionMiddleware()])
    tasks = [{"id": "f", "input": "flights?", "expected": "ok"}]

    def run(field: str, out: str) -> Any:
        return evaluate_in_place(
            agent, [flights], tasks, modes="P3", field=field, out=tmp_path / out, show=False
        )

    with pytest.raises(
        ValueError, match=r"field='gate' is not in the declared return type of flights"
    ):
        run("gate", "a")
    assert not (tmp_path / "a").exists()  # refused before anything ran or was written
    with pytest.raises(ValueError, match="declared return type"):
        run("[*].gate", "b")
    # the declared fields pass: a bare name (every row), a path through the list
    assert run("scheduled_departure", "c").prr("P3")["exposed"] == 1
    assert run("[*].flight_no", "d").prr("P3")["exposed"] == 1
