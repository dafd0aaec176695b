"""The one tool wrapper: recording, validity against each tool's own schema, fault delivery —
in a hand-built StateGraph + ToolNode and in create_agent through the middleware."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import ip_shop as shop
import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ToolRetryMiddleware
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from replan.core.taxonomy import VerdictCode
from replan.core.trace import Call
from replan.env.tool_wrapper import FaultSession, activate, check_call
from replan.inplace import (
    FaultInjectionMiddleware,
    FaultSchedule,
    InjectedFault,
    ScriptedToolModel,
    wrap_tools,
)
from replan.inplace.traces import classify_result

NAMES = tuple(t.name for t in shop.TOOLS)
ASK = "What do Ada's open orders (ada@example.com) total in EUR?"


def _graph(tools: list[BaseTool], model: Any) -> Any:
    """The hand-built ReAct graph of LangGraph's docs: model node + ToolNode."""

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    g = StateGraph(MessagesState)
    g.add_node("model", call_model)
    g.add_node("tools", ToolNode(tools, handle_tool_errors=True))
    g.add_edge(START, "model")
    g.add_conditional_edges("model", tools_condition)
    g.add_edge("tools", "model")
    return g.compile()


def test_hand_built_toolnode_records_and_injects() -> None:
    sched = FaultSchedule(mode="P1", target="list_orders", tools=NAMES, kind="http_503")
    tools = wrap_tools(shop.TOOLS, sched)
    out = _graph(tools, shop.model(on_error="retry")).invoke({"messages": [HumanMessage(ASK)]})
    steps = tools[0].session.steps
    assert [s.call.tool for s in steps] == [
        "find_customer",
        "list_orders",
        "list_orders",
        "usd_to_eur",
    ]
    assert steps[1].perturbation.kind == "http_503" and steps[1].verdict.ok  # not the agent's
    assert steps[2].perturbation is None and steps[2].observation["total_usd"] == 182.65
    # ToolNode(handle_tool_errors=True) showed the model the raised 503; the model retried
    errors = [m for m in out["messages"] if getattr(m, "status", None) == "error"]
    assert len(errors) == 1 and "503" in errors[0].content
    assert out["messages"][-1].content == "The open orders total 168.60 EUR."


def test_invalid_calls_are_judged_by_the_tools_own_schema() -> None:
    cases = {
        "missing": ({}, VerdictCode.MISSING_PARAM),
        "type": ({"amount": "lots"}, VerdictCode.TYPE_MISMATCH),
    }
    for args, code in cases.values():
        assert check_call(shop.usd_to_eur, "usd_to_eur", args).code is code
    assert check_call(None, "nope", {}).code is VerdictCode.UNKNOWN_TOOL
    assert check_call(shop.usd_to_eur, "usd_to_eur", {"amount": 3}).ok
    # a ToolNode turns the ValidationError into an error message; the wrapper records the verdict
    model = ScriptedToolModel(plan=[("usd_to_eur", {"amount": "lots"})], answer="gave up")
    tools = wrap_tools(shop.TOOLS)
    _graph(tools, model).invoke({"messages": [HumanMessage("convert")]})
    (step,) = tools[0].session.steps
    assert step.verdict.code is VerdictCode.TYPE_MISMATCH and step.verdict.param == "amount"


def test_a_tool_that_raises_its_own_error_is_an_invalid_call() -> None:
    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        raise KeyError(key)

    tools = wrap_tools([lookup])
    model = ScriptedToolModel(plan=[("lookup", {"key": "k"})], answer="done")
    _graph(tools, model).invoke({"messages": [HumanMessage("go")]})
    (step,) = tools[0].session.steps
    assert step.verdict.code is VerdictCode.INVALID_VALUE and "KeyError" in step.verdict.message


def test_middleware_with_create_agent_and_retry_middleware() -> None:
    chaos = FaultInjectionMiddleware(
        FaultSchedule(mode="P1", target="list_orders", tools=NAMES, kind="http_429")
    )
    retry = ToolRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)
    agent = create_agent(shop.model(), shop.TOOLS, middleware=[retry, chaos])
    out = agent.invoke({"messages": [HumanMessage(ASK)]})
    assert out["messages"][-1].content == "The open orders total 168.60 EUR."
    kinds = [(s.call.tool, s.perturbation.kind if s.perturbation else None) for s in chaos.steps]
    assert kinds[1:3] == [("list_orders", "http_429"), ("list_orders", None)]
    assert [s.round for s in chaos.steps] == [1, 2, 2, 3]  # the model turn of each call


def test_without_retry_the_injected_exception_escapes_create_agent() -> None:
    chaos = FaultInjectionMiddleware(
        FaultSchedule(mode="P2", target="list_orders", tools=NAMES, kind="timeout")
    )
    agent = create_agent(shop.model(), shop.TOOLS, middleware=[chaos])
    with pytest.raises(InjectedFault, match="timed out"):
        agent.invoke({"messages": [HumanMessage(ASK)]})
    assert chaos.steps[-1].perturbation.kind == "timeout"


def test_deliver_message_returns_the_error_to_the_model() -> None:
    sched = FaultSchedule(
        mode="P2", target="list_orders", tools=NAMES, kind="http_503", deliver="message"
    )
    chaos = FaultInjectionMiddleware(sched)
    agent = create_agent(shop.model(), shop.TOOLS, middleware=[chaos])
    out = agent.invoke({"messages": [HumanMessage(ASK)]})
    assert out["messages"][-1].content.startswith("I could not complete the task")


def test_async_only_tools_and_awrap_tool_call() -> None:
    async def convert(amount: float) -> str:
        return f"{amount * 2:.2f} EUR"

    atool = StructuredTool.from_function(coroutine=convert, name="convert", description="x2")
    chaos = FaultInjectionMiddleware(
        FaultSchedule(mode="P3", target="convert", tools=("convert",), seed=1)
    )
    model = ScriptedToolModel(plan=[("convert", {"amount": 5})], answer=lambda r: str(r[0]))
    agent = create_agent(model, [atool], middleware=[chaos])
    asyncio.run(agent.ainvoke({"messages": [HumanMessage("convert 5")]}))
    (step,) = chaos.steps
    assert step.perturbation is not None and step.perturbation.sentinel is not None
    assert str(step.perturbation.sentinel) in step.observation["text"]
    # the sync path of a wrapped async-only tool says what to do instead of failing obscurely
    wrapped = wrap_tools([atool])[0]
    with pytest.raises(TypeError, match=r"'convert' is async-only.*ainvoke"):
        wrapped.invoke({"amount": 1})


def test_a_tool_without_an_args_schema_is_named() -> None:
    class Legacy(BaseTool):
        name: str = "legacy"
        description: str = "takes anything"

        def _run(self, *args: Any, **kwargs: Any) -> str:
            return "ok"

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        v = check_call(Legacy(), "legacy", {"x": 1})
    assert v.ok
    assert any("'legacy'" in str(w.message) and "no args schema" in str(w.message) for w in caught)


def test_an_implicit_fault_on_an_output_with_nothing_to_corrupt_is_noted() -> None:
    @tool
    def ping() -> str:
        """Say hello."""
        return "pong"

    session = FaultSession(FaultSchedule(mode="P4", target="ping", tools=("ping",)).for_episode())
    with activate(session):
        wrap_tools([ping])[0].invoke({})
    assert session.steps[0].perturbation is None and not session.exposed
    assert "no field, number or date" in session.notes["ping"]


def test_a_tool_error_message_is_an_invalid_call() -> None:
    session = FaultSession()
    pending = session.begin(shop.usd_to_eur, Call(tool="usd_to_eur", args={"amount": 1}))
    session.finish(
        pending, ToolMessage(content="Error: rate service down", tool_call_id="x", status="error")
    )
    (step,) = session.steps
    assert (
        step.verdict.code is VerdictCode.INVALID_VALUE
        and "rate service down" in step.verdict.message
    )


#: tool results and whether each is the tool rejecting its call, worked out by hand from the
#: rules in docs (an opening like an error, an HTTP error line, a one-liner "not found", a JSON
#: error field; an error status or success false in an object that is only a report); an
#: empty result, an answer or data is no rejection
RESULTS_BY_HAND = [
    ("[]", False),
    ("No flights found for that date.", False),
    ('[{"id": "X6", "status": "scheduled"}]', False),
    ("Invalid new flight ID provided.", True),
    ("Flight X3 not found", True),
    ("404 Not Found", True),
    ('{"error": "seat map locked"}', True),
    ('{"status": "failed", "detail": "card declined"}', True),
    ('{"success": false}', True),
    ('"Error: rate service down"', True),  # a JSON string is its text
    # data, not a rejection: an address, a payment that failed, a health check
    ("500 Market Street, San Francisco", False),
    ('{"payment_id": "pi_1", "status": "failed", "failure_reason": "card_declined"}', False),
    ('{"ok": false, "reachable": false}', False),
]


@pytest.mark.parametrize(("output", "rejected"), RESULTS_BY_HAND)
def test_a_live_call_and_its_trace_read_the_result_alike(output: str, rejected: bool) -> None:
    """In place, the call's verdict says rejected exactly when trace scoring reads the same
    result as an error (one set of rules: before, a live "Flight X3 not found" was a success
    and the same line in a trace an error)."""
    session = FaultSession()
    pending = session.begin(shop.usd_to_eur, Call(tool="usd_to_eur", args={"amount": 1}))
    session.finish(pending, output)
    (step,) = session.steps
    assert step.verdict.ok is not rejected
    msg = ToolMessage(content=output, tool_call_id="x")
    assert classify_result(msg, "usd_to_eur").error is rejected


def test_the_wrapper_works_on_replans_own_corpus_tools() -> None:
    """The same wrapper around a world-bound corpus tool (a JSON-Schema args_schema): valid and
    invalid calls are judged by the tool's schema, and a P1 fault is injected before the world."""
    from replan.env.corpus import load_corpus
    from replan.env.world import World
    from replan.nodes.tools import world_session, world_tools

    corpus = load_corpus()
    names = ["get_default_payment_method", "buy_now"]
    world = World({n: corpus.tools[n] for n in names}, corpus.initial_state(0), seed=0)
    recorder = world_session(world, commit=True)
    base = {t.name: t for t in world_tools(world, recorder)}
    spec = world.tools["get_default_payment_method"]
    sched = FaultSchedule(
        mode="P1", target=spec.name, tools=tuple(base), kind="http_503", deliver="message"
    )
    wrapped = {t.name: t for t in wrap_tools(list(base.values()), sched)}
    tool_ = wrapped[spec.name]
    args = {"customer_id": "cus_Bt5yU1cJd6"}
    first = tool_.invoke({"name": spec.name, "args": args, "id": "1", "type": "tool_call"})
    assert first.status == "error" and "503" in first.content
    assert len(recorder.steps) == 0  # the fault came first: the world never ran
    second = tool_.invoke({"name": spec.name, "args": args, "id": "2", "type": "tool_call"})
    assert second.status == "success" and len(recorder.steps) == 1
    bad = tool_.invoke(
        {"name": spec.name, "args": {"customer": "x"}, "id": "3", "type": "tool_call"}
    )
    steps = tool_.session.steps
    assert [s.perturbation is not None for s in steps] == [True, False, False]
    assert steps[2].verdict.code is VerdictCode.UNKNOWN_PARAM  # judged by the tool's schema
    assert recorder.steps[-1].verdict.code is VerdictCode.UNKNOWN_PARAM  # the world agrees
    assert bad is not None


def test_public_names() -> None:
    import replan
    from replan.env.tool_wrapper import wrap_tools as wt
    from replan.inplace.evaluate import evaluate_in_place

    assert replan.FaultInjectionMiddleware is FaultInjectionMiddleware
    assert replan.evaluate_in_place is evaluate_in_place and replan.wrap_tools is wt


def test_a_tool_that_handles_its_own_errors_sees_the_fault_as_its_own() -> None:
    def price(sku: str) -> str:
        return "9.99"

    quote = StructuredTool.from_function(
        price, name="quote", description="Price of a SKU.", handle_tool_error=True
    )

    chaos = FaultInjectionMiddleware(
        FaultSchedule(mode="P1", target="quote", tools=("quote",), kind="http_429")
    )
    model = ScriptedToolModel(plan=[("quote", {"sku": "A"})], answer=lambda r: f"got {r[0]}")
    out = create_agent(model, [quote], middleware=[chaos]).invoke(
        {"messages": [HumanMessage("price?")]}
    )
    err = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert err.status == "error" and "429" in err.content  # no exception escaped the agent


def test_a_call_to_a_tool_that_does_not_exist_is_recorded() -> None:
    chaos = FaultInjectionMiddleware()
    model = ScriptedToolModel(plan=[("get_fx", {"base": "USD"})], answer="sorry")
    create_agent(model, shop.TOOLS, middleware=[chaos]).invoke({"messages": [HumanMessage("fx")]})
    (step,) = chaos.steps
    assert step.call.tool == "get_fx" and step.verdict.code is VerdictCode.UNKNOWN_TOOL
