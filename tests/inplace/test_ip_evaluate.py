"""evaluate_in_place end to end: a user's create_agent, its own tools and tasks, NP and P1–P4.

Every expected number follows from the stated mechanics (the scripted model's plan, the fault
kind, LangChain's retry middleware), computed by hand here, not by the code under test.
"""

from __future__ import annotations

from typing import Any

import ip_shop as shop
import pytest
from langchain.agents import create_agent
from langchain_core.tools import tool

from replan.inplace import ScriptedToolModel, evaluate_in_place
from replan.runner.store import SUITE_RECORD, ResultsStore
from replan.suites import suite_digest


def _run(tmp_path: Any, agents: Any, **kw: Any) -> Any:
    kw.setdefault("out", tmp_path / "out")
    kw.setdefault("show", False)
    kw.setdefault("n_boot", 200)
    return evaluate_in_place(agents, shop.TOOLS, shop.TASKS, **kw)


def test_retry_middleware_recovers_raised_faults_and_nothing_else(tmp_path) -> None:
    res = _run(
        tmp_path,
        {"plain": shop.agent(), "retry": shop.agent(retry=True)},
        modes="P1",
        seeds=2,
        target="list_orders",
        kind="http_503",
    )
    # 2 tasks x 2 seeds: the 503 escapes the plain agent (gave up) and is retried by the other
    assert res.prr("P1", "plain")["value"] == 0.0 and res.prr("P1", "plain")["exposed"] == 4
    assert res.prr("P1", "retry")["value"] == 1.0
    assert res.tsr("NP", "plain")["value"] == 1.0 and res.tsr("P1", "plain")["value"] == 0.0
    plain = [e for e in res.episodes if e.design == "plain" and e.mode == "P1"]
    assert {e.end_reason.value for e in plain} == {"gave_up"}
    assert "injected fault propagated" in plain[0].error
    # McNemar vs NP: 4 discordant pairs, all NP-only: exact two-sided p = 2 * (1/2)^4
    vs = res.tables["plain"]["P1"]["vs_np"]
    assert vs["mcnemar"]["p_value"] == pytest.approx(0.125)
    assert vs["tsr_delta"]["difference"] == -1.0
    # RC with c* = 3 (min_calls): the retry run made 4 calls -> C_rec = 1 - 3/4 = 0.25
    assert res.tables["retry"]["P1"]["rc"]["value"] == pytest.approx(0.25)
    res.assert_prr(">=", 0.99, mode="P1", design="retry")
    with pytest.raises(AssertionError, match=r"PRR of 'plain' under P1 = 0.00.*4 exposed"):
        res.assert_prr(">=", 0.8, mode="P1", design="plain")


def test_an_empty_result_is_not_fixed_by_retrying(tmp_path) -> None:
    res = _run(tmp_path, shop.agent(retry=True), modes="P1", target="list_orders", kind="empty")
    assert res.prr("P1")["value"] == 0.0 and res.prr("P1")["exposed"] == 2


def test_graceful_stop_is_the_recovery_from_a_permanent_fault(tmp_path) -> None:
    # the 503 is shown to the model; it cannot compute the total and says it could not
    res = _run(
        tmp_path, shop.agent(), modes="P2", target="list_orders", kind="http_503", deliver="message"
    )
    assert res.tsr("P2")["value"] == 0.0
    assert res.prr("P2")["value"] == 1.0  # "I could not complete the task": a graceful stop


def test_a_fault_that_never_fired_is_not_exposed_never_recovered(tmp_path) -> None:
    @tool
    def refund(order_id: str) -> str:
        """Refund an order."""
        return "refunded"

    res = evaluate_in_place(
        shop.agent(),
        [*shop.TOOLS, refund],
        shop.TASKS,
        modes=["P1", "P3"],
        target="refund",
        out=tmp_path / "o",
        show=False,
        n_boot=200,
    )
    assert res.prr("P1")["exposed"] == 0 and res.prr("P1")["not_exposed"] == 2
    assert res.prr("P1")["value"] is None
    with pytest.raises(AssertionError, match=r"no run was exposed.*tested nothing"):
        res.assert_prr(">=", 0.0, mode="P1")
    with pytest.raises(AssertionError, match="not exposed to their fault"):
        res.assert_exposed()
    assert "not exposed" in res.table()


def test_an_answer_carrying_the_sentinel_is_never_a_success(tmp_path) -> None:
    parrot = ScriptedToolModel(
        plan=[("list_orders", {"customer_id": "C-1042"})],
        answer=lambda r: f"They total {r[0]['total_usd']} USD.",
    )
    from replan.inplace import FaultInjectionMiddleware

    agent = create_agent(parrot, shop.TOOLS, middleware=[FaultInjectionMiddleware()])
    tasks = [{"id": "t", "input": "total?", "check": lambda state: True}]
    res = evaluate_in_place(
        agent,
        shop.TOOLS,
        tasks,
        modes="P3",
        target="list_orders",
        field="total_usd",
        out=tmp_path / "o",
        show=False,
        n_boot=200,
    )
    np_ep, p3 = sorted(res.episodes, key=lambda e: e.mode)
    assert np_ep.success is True  # the checker accepts anything ...
    sentinel = p3.steps[0].perturbation.sentinel
    assert str(sentinel) in p3.final_answer and p3.success is False  # ... but not a sentinel
    assert "sentinel" in p3.metadata["check"]


def test_episodes_and_feedback_land_in_the_results_store_and_resume(tmp_path) -> None:
    calls = {"n": 0}

    def make_agent(tools: list[Any]) -> Any:  # a factory gets the wrapped tools
        calls["n"] += 1
        return create_agent(shop.model(), tools)

    _run(tmp_path, make_agent, modes=["P1", "P4"], target="list_orders", field="total_usd")
    assert calls["n"] == 6  # 2 tasks x (NP, P1, P4)
    with ResultsStore(tmp_path / "out") as store:
        eps = store.episodes()
        keys = {(k, m) for k, m, _, _ in store.feedback()}
        tasks = store.tasks()
        ((_, cfg),) = store.experiments()
    assert len(eps) == 6 and {e.mode for e in eps} == {"NP", "P1", "P4"}
    # the run records its tasks as a custom suite, identified by their content digest
    digest = suite_digest(tasks.values())
    assert cfg[SUITE_RECORD] == {
        "name": "inplace",
        "version": "custom",
        "digest": digest,
        "tasks": 6,
        "tasks_digest": digest,
    }
    for e in eps:
        for metric in ("prefix.fed", "toolmaze.exposed", "toolmaze.success"):
            assert (f"{e.task_id}|make_agent|user|0", metric) in keys
    assert tasks["ada/P4"].tools == [f"inplace:{t.name}" for t in shop.TOOLS]
    p4 = [e for e in eps if e.mode == "P4"]
    assert all(e.success is False for e in p4)  # the corrupted total reached the conversion
    again = _run(tmp_path, make_agent, modes=["P1", "P4"], target="list_orders", field="total_usd")
    assert calls["n"] == 6 and len(again.episodes) == 6  # resumed: nothing ran twice


def test_an_agent_whose_calls_nothing_records_is_refused(tmp_path) -> None:
    bare = create_agent(shop.model(), shop.TOOLS)  # neither the middleware nor wrapped tools
    with pytest.raises(ValueError, match=r"none was recorded.*FaultInjectionMiddleware"):
        _run(tmp_path, bare, modes="P1")


def test_bad_tasks_and_tools_are_named(tmp_path) -> None:
    with pytest.raises(ValueError, match=r"tasks\[0\].*no checker"):
        evaluate_in_place(shop.agent(), shop.TOOLS, [{"input": "hi"}], out=tmp_path, show=False)
    with pytest.raises(ValueError, match="group 'g' names tools that were not given"):
        evaluate_in_place(
            shop.agent(), shop.TOOLS, shop.TASKS, groups={"g": ["x"]}, out=tmp_path, show=False
        )
    with pytest.raises(ValueError, match="unknown mode"):
        evaluate_in_place(shop.agent(), shop.TOOLS, shop.TASKS, modes="P7", out=tmp_path)


def test_alternative_groups_reroute_and_recovery(tmp_path) -> None:
    """P2 on a declared group: the first member the agent calls fails every time; an agent that
    reroutes to the other member recovers (ToolMaze: a used clean call to an alternative)."""

    @tool
    def orders_backup(customer_id: str) -> dict:
        """The same orders from the backup service."""
        return shop.list_orders.invoke({"customer_id": customer_id})

    tools = [*shop.TOOLS, orders_backup]

    def make(on_error: str):
        def factory(wrapped: list[Any]) -> Any:
            model = ScriptedToolModel(
                plan=[
                    ("find_customer", {"email": "ada@example.com"}),
                    (
                        ("list_orders", "orders_backup"),
                        lambda r: {"customer_id": r[0]["customer_id"]},
                    ),
                    ("usd_to_eur", lambda r: {"amount": r[1]["total_usd"]}),
                ],
                answer=lambda r: (
                    f"They total {r[2]['values'][-1] if isinstance(r[2], dict) else r[2].split()[-2]} EUR."
                ),
                on_error=on_error,
            )
            return create_agent(model, wrapped)

        return factory

    res = evaluate_in_place(
        {"reroute": make("reroute"), "stubborn": make("continue")},
        tools,
        [shop.TASKS[0]],
        modes="P2",
        target="orders",
        groups={"orders": ["list_orders", "orders_backup"]},
        kind="http_503",
        deliver="message",
        out=tmp_path / "o",
        show=False,
        n_boot=200,
    )
    assert res.prr("P2", "reroute")["value"] == 1.0 and res.tsr("P2", "reroute")["value"] == 1.0
    ep = next(e for e in res.episodes if e.design == "reroute" and e.mode == "P2")
    assert [s.call.tool for s in ep.steps] == [
        "find_customer",
        "list_orders",
        "orders_backup",
        "usd_to_eur",
    ]
    assert res.scores[ep.episode_id].recovery.reason.startswith("switched to orders_backup")
    assert res.prr("P2", "stubborn")["value"] == 0.0
    # the stored task carries the declared group, so the standard scorer (replan report,
    # replan score) counts the same reroute as a recovery without the evaluation's arguments
    from replan.evaluators.perturbation import recovery_record
    from replan.runner.store import ResultsStore

    with ResultsStore(tmp_path / "o") as store:
        task = store.tasks()[ep.task_id]
    rec = recovery_record(ep, task)
    assert rec.recovered and rec.reason.startswith("switched to orders_backup"), rec


def test_a_crashing_agent_is_recorded_and_named(tmp_path) -> None:
    def broken(tools: list[Any]) -> Any:
        raise RuntimeError("cannot build the agent")

    res = _run(tmp_path, broken, modes="P1")
    assert {e.end_reason.value for e in res.episodes} == {"crashed"}
    assert res.tsr()["value"] == 0.0
    assert "crashed" in res.notes and "cannot build the agent" in res.notes["crashed"]


def test_async_only_tools_run_through_ainvoke(tmp_path) -> None:
    from langchain_core.tools import StructuredTool

    async def convert(amount: float) -> str:
        return f"{amount * 2:.2f} EUR"

    atool = StructuredTool.from_function(coroutine=convert, name="convert", description="x2")
    model = ScriptedToolModel(
        plan=[("convert", {"amount": 5})], answer=lambda r: f"It is {r[0].split()[0]} EUR."
    )
    res = evaluate_in_place(
        lambda tools: create_agent(model, tools),
        [atool],
        [{"id": "c", "input": "convert 5", "expected": 10.0}],
        modes="P1",
        kind="http_429",
        out=tmp_path / "o",
        show=False,
        n_boot=200,
    )
    np_ep = next(e for e in res.episodes if e.mode == "NP")
    assert np_ep.success and np_ep.steps[0].verdict.ok
    p1 = next(e for e in res.episodes if e.mode == "P1")
    assert p1.steps[0].perturbation.kind == "http_429" and p1.end_reason.value == "gave_up"
