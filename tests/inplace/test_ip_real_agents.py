"""evaluate_in_place on what real LangGraph agents need (issue 28 item 5).

The agent under test reproduces, small, LangGraph's customer-support tutorial
(https://langchain-ai.github.io/langgraph/tutorials/customer-support/customer-support/): its
tools read the signed-in passenger from ``config["configurable"]["passenger_id"]`` and change a
SQLite database, which the tutorial restores from a backup copy before each run. A scripted model
drives it (no network). Every expected value follows from the tools and the plan, by hand.
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langchain.agents import create_agent
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool, tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from replan.inplace import FaultInjectionMiddleware, ScriptedToolModel, evaluate_in_place

TICKETS = [
    ("7240005432906569", "3442 587242", "LX0112"),
    ("0005432000987", "8149 604011", "LX0399"),
]


def _passenger(config: RunnableConfig) -> str:
    passenger_id = (config.get("configurable") or {}).get("passenger_id")
    if not passenger_id:
        raise ValueError("No passenger ID configured.")  # the tutorial's own check
    return str(passenger_id)


def make_db(tmp_path: Path) -> tuple[Path, Path]:
    """The tutorial's pair of files: the working database and its pristine backup."""
    backup = tmp_path / "travel.backup.sqlite"
    with sqlite3.connect(backup) as con:
        con.execute("CREATE TABLE tickets (ticket_no TEXT, passenger_id TEXT, flight_no TEXT)")
        con.executemany("INSERT INTO tickets VALUES (?, ?, ?)", TICKETS)
    con.close()
    db = tmp_path / "travel.sqlite"
    shutil.copy(backup, db)
    return db, backup


def airline_tools(db: Path) -> list[Any]:
    @tool
    def fetch_user_flight_information(config: RunnableConfig) -> list[dict]:
        """Fetch the signed-in passenger's tickets."""
        pid = _passenger(config)
        with sqlite3.connect(db) as con:
            rows = con.execute(
                "SELECT ticket_no, flight_no FROM tickets WHERE passenger_id = ?", (pid,)
            ).fetchall()
        con.close()
        return [{"ticket_no": t, "flight_no": f} for t, f in rows]

    @tool
    def cancel_ticket(ticket_no: str, config: RunnableConfig) -> str:
        """Cancel the passenger's ticket and remove it from the database."""
        pid = _passenger(config)
        with sqlite3.connect(db) as con:
            owner = con.execute(
                "SELECT passenger_id FROM tickets WHERE ticket_no = ?", (ticket_no,)
            ).fetchone()
            if owner is None:
                return "No existing ticket found for the given ticket number."
            if owner[0] != pid:
                return f"Current signed-in passenger with ID {pid} not the owner of {ticket_no}"
            con.execute("DELETE FROM tickets WHERE ticket_no = ?", (ticket_no,))
        con.close()
        return "Ticket successfully cancelled."

    return [fetch_user_flight_information, cancel_ticket]


def support_model() -> ScriptedToolModel:
    """Look up the passenger's ticket, cancel it, say which one."""
    return ScriptedToolModel(
        plan=[
            ("fetch_user_flight_information", {}),
            ("cancel_ticket", lambda r: {"ticket_no": r[0][0]["ticket_no"]}),
        ],
        answer=lambda r: f"Ticket {r[0][0]['ticket_no']}: {r[1]}",
    )


def support_agent(tools: list[Any]) -> Any:
    return create_agent(support_model(), tools, middleware=[FaultInjectionMiddleware()])


def cancel_tasks() -> list[dict[str, Any]]:
    return [
        {
            "id": tid,
            "input": "Please cancel my flight.",
            "regex": f"{ticket}: Ticket successfully cancelled",
            "config": {"configurable": {"passenger_id": pid}},
        }
        for tid, (ticket, pid, _) in zip(("p1", "p2"), TICKETS, strict=True)
    ]


def _run(tools: list[Any], tasks: list[Any], tmp_path: Path, **kw: Any) -> Any:
    kw.setdefault("modes", "NP")
    kw.setdefault("out", tmp_path / "out")
    kw.setdefault("show", False)
    kw.setdefault("n_boot", 200)
    return evaluate_in_place(kw.pop("agent", None) or support_agent(tools), tools, tasks, **kw)


def test_per_task_config_reaches_the_tools(tmp_path: Path) -> None:
    db, _ = make_db(tmp_path)
    tools = airline_tools(db)
    res = _run(tools, cancel_tasks(), tmp_path)
    # each task's passenger id reached the tools: each cancelled that passenger's own ticket
    assert {e.task_id: e.success for e in res.episodes} == {"p1/NP": True, "p2/NP": True}
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM tickets").fetchone()[0] == 0
    con.close()


def test_an_evaluation_wide_config_is_merged_under_the_tasks_own(tmp_path: Path) -> None:
    db, _ = make_db(tmp_path)
    tools = airline_tools(db)
    tasks = cancel_tasks()
    del tasks[1]["config"]  # p2 takes the evaluation's passenger: p1's, whose ticket p1 cancels
    res = _run(tools, tasks, tmp_path, config={"configurable": {"passenger_id": TICKETS[0][1]}})
    ok = {e.task_id: e.success for e in res.episodes}
    assert ok == {"p1/NP": True, "p2/NP": False}
    p2 = next(e for e in res.episodes if e.task_id == "p2/NP")
    assert p2.final_answer is None or TICKETS[1][0] not in p2.final_answer


def test_setup_restores_the_database_before_every_episode(tmp_path: Path) -> None:
    db, backup = make_db(tmp_path)
    tools = airline_tools(db)
    seen: list[tuple[str, str, int]] = []

    def restore(info: Any) -> None:  # the tutorial's update_dates: copy the backup over the db
        shutil.copy(backup, db)
        seen.append((info.task.id, info.mode, info.seed))

    # 2 tasks x 2 seeds: each seed cancels the ticket again, which only a restored db still has
    res = _run(tools, cancel_tasks(), tmp_path, seeds=2, setup=restore)
    assert sorted(seen) == [("p1", "NP", 0), ("p1", "NP", 1), ("p2", "NP", 0), ("p2", "NP", 1)]
    assert [e.success for e in res.episodes] == [True] * 4


def test_without_the_restore_the_second_seed_fails(tmp_path: Path) -> None:
    """The control of the test above: the tickets are gone after the first seed."""
    db, _ = make_db(tmp_path)
    res = _run(airline_tools(db), cancel_tasks(), tmp_path, seeds=2)
    assert sorted((e.seed, e.success) for e in res.episodes) == [
        (0, True),
        (0, True),
        (1, False),
        (1, False),
    ]


def test_teardown_runs_after_every_episode_failed_ones_included(tmp_path: Path) -> None:
    db, _ = make_db(tmp_path)
    tools = airline_tools(db)
    tasks = cancel_tasks()
    tasks.append({"id": "anon", "input": "Please cancel my flight.", "regex": "cancelled"})
    closed: list[str] = []

    def teardown(info: Any) -> None:
        closed.append(info.task.id)
        if info.task.id == "p2":
            raise OSError("disk full")

    res = _run(tools, tasks, tmp_path, teardown=teardown)
    # "anon" has no passenger id: the tool raises, the error escapes create_agent (crashed)
    anon = next(e for e in res.episodes if e.task_id == "anon/NP")
    assert anon.end_reason.value == "crashed" and "No passenger ID configured" in anon.error
    assert sorted(closed) == ["anon", "p1", "p2"]
    # a failing teardown is noted on its episode and in the results, not fatal
    p2 = next(e for e in res.episodes if e.task_id == "p2/NP")
    assert p2.success and "disk full" in p2.metadata["teardown_error"]
    assert "teardown failed after 1 episode(s)" in res.notes["teardown"]


def test_a_failing_setup_fails_its_episode_and_teardown_still_runs(tmp_path: Path) -> None:
    db, _ = make_db(tmp_path)
    closed: list[int] = []

    def setup() -> None:  # a hook may take no argument
        raise FileNotFoundError("travel.backup.sqlite")

    res = _run(
        airline_tools(db),
        cancel_tasks()[:1],
        tmp_path,
        setup=setup,
        teardown=lambda: closed.append(1),
    )
    (ep,) = res.episodes
    assert ep.end_reason.value == "crashed" and ep.steps == []
    assert ep.error.startswith("setup failed: FileNotFoundError")
    assert closed == [1]


# -- the deadline -------------------------------------------------------------------------------------
def _slow_tasks() -> list[dict[str, Any]]:
    return [{"id": "slow", "input": "look it up", "expected": "done"}]


def test_a_sync_agent_past_its_deadline_is_recorded_as_timeout(tmp_path: Path) -> None:
    release = threading.Event()

    @tool
    def lookup(q: str) -> str:
        """A call that hangs (a stuck HTTP request)."""
        release.wait(30)
        return "done"

    model = ScriptedToolModel(plan=[("lookup", {"q": "x"})], answer="done")
    closed: list[str] = []
    t0 = time.perf_counter()
    try:
        res = _run(
            [lookup],
            _slow_tasks(),
            tmp_path,
            agent=lambda tools: create_agent(model, tools),
            episode_timeout=0.5,
            teardown=lambda info: closed.append(info.task.id),
        )
    finally:
        release.set()  # let the abandoned thread end
    assert time.perf_counter() - t0 < 10
    (ep,) = res.episodes
    assert ep.end_reason.value == "timeout" and "deadline of 0.5 s" in ep.error
    assert closed == ["slow"]
    assert res.tsr()["value"] == 0.0 and "timed out" in res.notes["timeout"]


def test_an_async_agent_past_its_deadline_is_cancelled(tmp_path: Path) -> None:
    cancelled = threading.Event()

    async def slow_lookup(q: str) -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "done"

    lookup = StructuredTool.from_function(
        coroutine=slow_lookup, name="lookup", description="A slow lookup."
    )
    model = ScriptedToolModel(plan=[("lookup", {"q": "x"})], answer="done")
    t0 = time.perf_counter()
    res = _run(
        [lookup],
        _slow_tasks(),
        tmp_path,
        agent=lambda tools: create_agent(model, tools),
        episode_timeout=0.5,
    )
    assert time.perf_counter() - t0 < 10
    assert res.episodes[0].end_reason.value == "timeout"
    assert cancelled.wait(5)  # the run was stopped, not only abandoned


# -- async-only agents and graphs whose state is not a messages list --------------------------------
def _async_graph(model: Any, tools: list[Any]) -> Any:
    """A hand-built ReAct graph whose model node is ``async def`` (no sync path)."""

    async def agent_node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent_node)
    g.add_node("tools", ToolNode(tools))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g.compile()


def test_a_graph_with_an_async_only_node_runs_under_ainvoke(tmp_path: Path) -> None:
    db, _ = make_db(tmp_path)
    tools = airline_tools(db)
    res = _run(tools, cancel_tasks(), tmp_path, agent=lambda ts: _async_graph(support_model(), ts))
    assert [e.success for e in res.episodes] == [True, True]
    assert [s.call.tool for s in res.episodes[0].steps] == [
        "fetch_user_flight_information",
        "cancel_ticket",
    ]


def test_an_agent_with_only_ainvoke_is_an_agent_not_a_factory(tmp_path: Path) -> None:
    db, _ = make_db(tmp_path)
    tools = airline_tools(db)

    class AsyncOnly:  # e.g. a remote graph client: it can only be awaited
        def __init__(self) -> None:
            self.graph = create_agent(
                support_model(), tools, middleware=[FaultInjectionMiddleware()]
            )

        async def ainvoke(self, input: Any, config: Any = None) -> Any:
            return await self.graph.ainvoke(input, config)

    res = _run(tools, cancel_tasks(), tmp_path, agent=AsyncOnly())
    assert [e.success for e in res.episodes] == [True, True]


class Lookup(TypedDict, total=False):
    question: str
    customer_id: str
    total: float
    answer: str


def _no_messages_graph(tools: list[Any]) -> Any:
    """A two-node pipeline (no model, no messages): look the total up, then answer."""
    by_name = {t.name: t for t in tools}

    def lookup(state: Lookup) -> Lookup:
        orders = by_name["list_orders"].invoke({"customer_id": state["customer_id"]})
        return {"total": orders["total_usd"]}

    def respond(state: Lookup) -> Lookup:
        return {"answer": f"The open orders total {state['total']:.2f} USD."}

    g = StateGraph(Lookup)
    g.add_node("lookup", lookup)
    g.add_node("respond", respond)
    g.add_edge(START, "lookup")
    g.add_edge("lookup", "respond")
    g.add_edge("respond", END)
    return g.compile()


@tool
def list_orders(customer_id: str) -> dict:
    """A customer's open orders and their total in USD."""
    totals = {"C-1042": [118.40, 64.25]}.get(customer_id, [])
    return {"customer_id": customer_id, "orders": len(totals), "total_usd": round(sum(totals), 2)}


NO_MESSAGES_TASK = {
    "id": "ada",
    "input": {"question": "What do Ada's orders total?", "customer_id": "C-1042"},
    "expected": 182.65,  # 118.40 + 64.25
}


@pytest.mark.parametrize(
    "transcript",
    [
        lambda state: state.get("answer"),  # the final answer as text
        lambda state: [  # or messages, OpenAI form
            {"role": "user", "content": state["question"]},
            {"role": "assistant", "content": state.get("answer", "")},
        ],
    ],
    ids=["text", "messages"],
)
def test_a_state_without_messages_is_read_through_the_transcript_adapter(
    tmp_path: Path, transcript: Any
) -> None:
    res = _run(
        [list_orders],
        [NO_MESSAGES_TASK],
        tmp_path,
        agent=_no_messages_graph,
        modes=["P1"],
        kind="http_503",
        transcript=transcript,
    )
    np_ep = next(e for e in res.episodes if e.mode == "NP")
    assert np_ep.success and np_ep.final_answer == "The open orders total 182.65 USD."
    assert [s.call.tool for s in np_ep.steps] == ["list_orders"]
    # under P1 the 503 escapes the pipeline: exposed, not recovered (it has no retry)
    p1 = next(e for e in res.episodes if e.mode == "P1")
    assert p1.end_reason.value == "gave_up" and p1.steps[0].perturbation.kind == "http_503"
    assert res.prr("P1")["exposed"] == 1 and res.prr("P1")["value"] == 0.0


def test_a_state_without_messages_and_no_adapter_is_named(tmp_path: Path) -> None:
    from langchain_core.runnables import RunnableLambda

    answers = RunnableLambda(lambda state: {"answer": "182.65 USD"})
    with pytest.raises(ValueError, match=r"not a state with a 'messages' list.*transcript="):
        _run([list_orders], [NO_MESSAGES_TASK], tmp_path, agent=answers)


# -- the metric registry -------------------------------------------------------------------------------
def test_a_plugged_in_metric_appears_in_the_in_place_table_and_store(tmp_path: Path) -> None:
    from dataclasses import dataclass

    from replan.evaluators.metric import METRICS, Column, metric
    from replan.evaluators.stats import Feedback
    from replan.runner.store import ResultsStore

    @dataclass
    class Words:
        words: int

    def summarize(records: Any, **_: Any) -> dict[str, Any]:
        n = len(records)
        mean = sum(r.words for r in records) / n if n else None
        return {"ipwords.mean": {"value": mean, "low": None, "high": None, "n": n}}

    metric(
        "ipwords",
        feedback=lambda r: [Feedback("ipwords.words", float(r.words))],
        summarize=summarize,
        load=lambda data: Words(**data),
        columns=(Column("answer words", lambda u: u.aggregate.get("ipwords.mean")),),
    )(lambda ctx: Words(len((ctx.episode.final_answer or "").split())))
    try:
        db, backup = make_db(tmp_path)
        res = _run(
            airline_tools(db), cancel_tasks(), tmp_path, setup=lambda: shutil.copy(backup, db)
        )
        # "Ticket 7240005432906569: Ticket successfully cancelled." has 5 words, as has p2's
        assert res.tables["agent"]["NP"]["columns"]["answer words"]["value"] == 5.0
        assert "answer words" in res.table()
        with ResultsStore(tmp_path / "out") as store:
            keys = {k for _, k, _, _ in store.feedback()}
        assert "ipwords.words" in keys
    finally:
        METRICS.unregister("ipwords")


def test_in_place_tsr_and_prr_are_the_registry_aggregates(tmp_path: Path) -> None:
    """No second implementation: the in-place table's TSR/PRR/RC are score_records' own."""
    from replan.evaluators import score_records

    res = _run(
        [list_orders],
        [NO_MESSAGES_TASK],
        tmp_path,
        agent=_no_messages_graph,
        modes=["P1"],
        seeds=3,
        transcript=lambda s: s.get("answer"),
        name="pipeline",
    )
    scores = [res.scores[e.episode_id] for e in res.episodes if e.mode == "P1"]
    agg = score_records(scores, n_boot=200)
    assert res.tables["pipeline"]["P1"]["tsr"] == agg["toolmaze.tsr"]
    assert res.prr("P1")["value"] == agg["toolmaze.prr.P1"]["value"]
    assert [ep.final_answer for ep in res.episodes if ep.mode == "NP"] == [
        "The open orders total 182.65 USD."
    ] * 3
