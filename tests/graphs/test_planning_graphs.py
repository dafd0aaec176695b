"""Plan-conditioned ReAct and Dual-Loop: plans recorded with their verdicts, the verifier loop."""

from __future__ import annotations

import json

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from replan.core.plan import Plan
from replan.core.taxonomy import VerdictCode
from replan.core.trace import EndReason
from replan.graphs import AgentConfig, RetrySettings, run_episode
from replan.nodes.prompts import request_kind


def _system_text(messages) -> str:
    return next(str(m.content) for m in messages if isinstance(m, SystemMessage))


def _planning_model(kit, plans: list[str]):
    """Plans (and revisions) from ``plans`` in order; acting requests from the travel policy."""
    queue = list(plans)

    def reply(msgs):
        if request_kind(msgs) in ("plan", "revise"):
            return queue.pop(0)
        return kit.travel_react_policy(msgs)

    return kit.ScriptedChatModel(fn=reply)


def test_plan_conditioned_puts_the_plan_in_the_executors_instructions(kit, travel_task):
    model = _planning_model(kit, [kit.plan_text(kit.TRAVEL_PLAN, thought="search, quote, book")])
    ep = run_episode("plan_conditioned", model, travel_task)
    assert ep.end_reason is EndReason.ANSWERED and ep.success is True
    assert model.kinds() == ["plan", "act", "act", "act", "act"]
    (pv,) = ep.plans
    assert (pv.source, pv.parse_ok, pv.thought, pv.approved, pv.findings) == (
        "planner",
        True,
        "search, quote, book",
        None,
        [],
    )
    assert pv.plan == Plan.parse(kit.plan_text(kit.TRAVEL_PLAN)).to_pararecover()
    act_system = _system_text(model.received[1])
    assert act_system.startswith("[replan:act]")
    assert Plan.parse(kit.plan_text(kit.TRAVEL_PLAN)).to_text() in act_system
    assert ep.usage.model_calls == 5


def test_plan_conditioned_runs_an_unparsable_plan_unchecked(kit, travel_task):
    model = _planning_model(kit, ["First search flights, then quote the cheapest, then book."])
    ep = run_episode("plan_conditioned", model, travel_task)
    (pv,) = ep.plans
    assert pv.parse_ok is False and pv.plan is None and pv.parse_error.startswith("no_json")
    assert ep.end_reason is EndReason.ANSWERED and ep.success is True  # nothing checked it
    assert "then quote the cheapest" in _system_text(model.received[1])


def test_structured_plan_output(kit, travel_task):
    tasks = json.loads(kit.plan_text(kit.TRAVEL_PLAN).split("\n", 1)[1])["tasks"]
    structured = AIMessage(
        content="",
        tool_calls=[
            {
                "name": "PlanOutput",
                "args": {"thought": "three steps", "tasks": tasks},
                "id": "p1",
                "type": "tool_call",
            }
        ],
    )

    def reply(msgs):
        return structured if request_kind(msgs) == "plan" else kit.travel_react_policy(msgs)

    model = kit.ScriptedChatModel(fn=reply)
    ep = run_episode(
        "plan_conditioned", model, travel_task, config=AgentConfig(plan_format="structured")
    )
    (pv,) = ep.plans
    assert pv.parse_ok and pv.thought == "three steps"
    assert [n["id"] for n in pv.plan["tasks"]] == ["root", "1", "2", "3", "response"]
    assert ep.success is True


BAD_PLAN = [
    {**n, "para": {"flight": "${1.cheapest_flight_id}"}} if n["id"] == "2" else n
    for n in [
        {"id": "root", "desc": "request", "dep": [], "status": True},
        {
            "id": "1",
            "name": "search_flights",
            "para": {"origin": "LIS", "destination": "KIX", "date": "2026-12-03"},
            "desc": "",
            "dep": ["root"],
            "status": False,
        },
        {"id": "2", "name": "quote_flight", "para": {}, "desc": "", "dep": ["1"], "status": False},
        {
            "id": "3",
            "name": "book_flight",
            "para": {
                "quote_id": "${2.quote_id}",
                "traveller_name": "Ana Silva",
                "contact_email": "ana@example.com",
            },
            "desc": "",
            "dep": ["2"],
            "status": False,
        },
        {"id": "response", "desc": "answer", "dep": ["3"], "status": False},
    ]
]


def test_dual_loop_revises_after_findings_and_executes_the_approved_plan(kit, travel_task):
    good = kit.plan_text(kit.TRAVEL_PLAN, thought="fixed the parameter name")
    model = _planning_model(kit, [kit.plan_text(BAD_PLAN), good])
    events: list[dict] = []
    ep = run_episode("dual_loop", model, travel_task, on_event=events.append)
    assert model.kinds()[:3] == ["plan", "revise", "act"]
    first, second = ep.plans
    assert first.source == "planner" and first.approved is False
    codes = {(f.node, f.code, f.param) for f in first.findings}
    assert ("2", VerdictCode.UNKNOWN_PARAM, "flight") in codes
    assert second.source == "revision" and second.approved is True
    assert not [f for f in second.findings if f.severity == "error"]
    # the revision request carried the findings; the executor got the approved plan
    feedback = model.received[1][-1]
    assert isinstance(feedback, HumanMessage) and '"problem": "unknown_param"' in feedback.content
    assert feedback.content.startswith("[replan:revise]\n")
    # the revision resends the planning request unchanged, then the plan: a prefix cache reuses it
    plan_request, revise_request = model.received[0], model.received[1]
    assert [(m.type, m.content) for m in revise_request[: len(plan_request)]] == [
        (m.type, m.content) for m in plan_request
    ]
    assert revise_request[len(plan_request)].content == kit.plan_text(BAD_PLAN)
    assert Plan.parse(good).to_text() in _system_text(model.received[2])
    assert ep.end_reason is EndReason.ANSWERED and ep.success is True
    plan_events = [e for e in events if e["event"] == "plan"]
    assert [(e["source"], e["approved"]) for e in plan_events] == [
        ("planner", None),
        ("planner", False),
        ("revision", None),
        ("revision", True),
    ]


def test_dual_loop_stops_at_its_iteration_budget(kit, travel_task):
    model = _planning_model(kit, [kit.plan_text(BAD_PLAN)] * 3)
    ep = run_episode("dual_loop", model, travel_task, config=AgentConfig(max_plan_iterations=3))
    assert model.kinds()[:4] == ["plan", "revise", "revise", "act"]
    assert [p.source for p in ep.plans] == ["planner", "revision", "revision"]
    assert [p.approved for p in ep.plans] == [False, False, False]
    assert all(p.findings for p in ep.plans)
    # the last (unapproved) plan conditions the executor
    assert Plan.parse(kit.plan_text(BAD_PLAN)).to_text() in _system_text(model.received[3])
    assert ep.budgets["max_plan_iterations"] == 3


def test_dual_loop_feeds_a_parse_failure_back_as_a_finding(kit, travel_task):
    model = _planning_model(kit, ["{not json", kit.plan_text(kit.TRAVEL_PLAN)])
    ep = run_episode("dual_loop", model, travel_task)
    first, second = ep.plans
    assert first.parse_ok is False and first.approved is False
    assert [f.code for f in first.findings] == [VerdictCode.INVALID_PLAN]
    assert "could not be read" in model.received[1][-1].content
    assert second.approved is True and ep.success is True


def test_a_planner_model_error_ends_the_episode(kit, travel_task):
    model = kit.ScriptedChatModel(fn=lambda msgs: ValueError("the provider rejected the request"))
    fast = AgentConfig(retry=RetrySettings(max_attempts=2, initial_wait_s=0, jitter_s=0))
    for design in ("plan_conditioned", "dual_loop", "replanner_loop"):
        ep = run_episode(design, model, travel_task, config=fast)
        assert ep.end_reason is EndReason.MODEL_ERROR, design
        assert "ValueError: the provider rejected the request" in ep.error
        assert ep.steps == [] and ep.plans == []


def test_the_failure_hint_reaches_every_request(kit, travel_task):
    from replan.nodes.prompts import FAILURE_HINT

    for design in ("react", "plan_conditioned", "dual_loop", "replanner_loop"):
        for hint in (False, True):
            model = _planning_model(kit, [kit.plan_text(kit.TRAVEL_PLAN)] * 5)
            if design == "replanner_loop":
                model = kit.ScriptedChatModel(
                    fn=lambda msgs: (
                        kit.plan_text(kit.TRAVEL_PLAN)
                        if request_kind(msgs) in ("plan", "replan")
                        else kit.travel_react_policy(msgs)
                    )
                )
            run_episode(design, model, travel_task, config=AgentConfig(hint=hint))
            with_hint = [FAILURE_HINT in _system_text(m) for m in model.received]
            assert with_hint == [hint] * len(model.received), (design, hint)
