"""ParaRecover replay rules, structurally (issue 29 §3); every expected value worked out by hand.

- a history call whose verdict is not ok is never done, whatever its result says;
- ``{"error": ...}`` results (also as JSON text) and "Tool call failed ..." texts are failures;
- giving up is structural: a replan that drops a pending call node without a replacement;
- the real end reason is stored (``call_failed`` is not ``gave_up``);
- dotted node ids are parsed one way (``${1.1.x}`` names node ``1.1`` wherever it is read).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from replay_models import run_protocol

from replan.core.plan import Plan, exact_reference, iter_references
from replan.core.trace import EndReason
from replan.env.checker import abandoned_calls
from replan.env.simulators import result_failed
from replan.env.world import resolve_references
from replan.suites import pararecover as pr

TOOLS = [
    {
        "name": "fetch_weather",
        "description": "Weather of a city.",
        "parameters": {"city": {"type": "string", "description": "city name"}},
        "required": ["city"],
    },
    {
        "name": "write_report",
        "description": "Write a short report.",
        "parameters": {"text": {"type": "string", "description": "what to report"}},
        "required": ["text"],
    },
]


def _plan(fetch_args: dict[str, Any]) -> dict[str, Any]:
    return {
        "tasks": [
            {"id": "root", "desc": "Weather report for Paris", "dep": [], "status": True},
            {
                "id": "1",
                "name": "fetch_weather",
                "para": fetch_args,
                "desc": "get the weather",
                "dep": ["root"],
                "status": False,
            },
            {
                "id": "2",
                "name": "write_report",
                "para": {"text": "${1}"},
                "desc": "report it",
                "dep": ["1"],
                "status": False,
            },
            {"id": "response", "desc": "answer", "dep": ["2"], "status": False},
        ]
    }


def _instance(fetch_args: dict[str, Any], result: Any) -> pr.ParaRecoverInstance:
    record = {
        "id": 1,
        "query": "Weather report for Paris",
        "tool_list": TOOLS,
        "plan": _plan(fetch_args),
        "round_gt": 3,
        "funcall_times_gt": 2,
        "fun_call": [{"name": "fetch_weather", "arguments": fetch_args, "results": result}],
    }
    return pr.parse_record(record, "hand.jsonl", 1)


def _run(inst: pr.ParaRecoverInstance, text: str) -> Any:
    return run_protocol(pr.instance_to_task(inst), text)


def test_a_history_call_the_verdict_rejects_is_never_done() -> None:
    # ``town`` is no parameter of fetch_weather (the call is rejected: unknown_param), although
    # its recorded result reads fine: node 1 did not run, so nothing is done yet
    inst = _instance({"town": "Paris"}, "Sunny, 21 C")
    assert pr.point_from_instance(inst).outputs == {}
    # the replanner hands the plan back unchanged: node 1 runs again, is rejected again, and
    # the run ends there (the one replan is spent): no success, end reason call_failed
    unchanged = json.dumps(_plan({"town": "Paris"}))
    ep = _run(inst, unchanged)
    assert ep.success is False and ep.end_reason is EndReason.CALL_FAILED
    # the valid call with the same result is done, and the same unchanged plan completes
    ok = _instance({"city": "Paris"}, "Sunny, 21 C")
    assert pr.point_from_instance(ok).outputs == {"1": "Sunny, 21 C"}
    done = _run(ok, json.dumps(_plan({"city": "Paris"})))
    assert done.success and done.end_reason is EndReason.ANSWERED
    assert [s.call.tool for s in done.steps] == ["fetch_weather", "write_report"]  # 1 not again


def test_a_bare_argument_list_is_rejected_as_the_datasets_tool_agent_does() -> None:
    # node 1 already ran; the replan writes node 2's arguments as a bare list (["${1}"]): the
    # dataset's tool agent rejects that (unknown_param), so the run fails there, although the
    # list would bind onto ``text`` in a world of ours
    inst = _instance({"city": "Paris"}, "Sunny, 21 C")
    plan = _plan({"city": "Paris"})
    plan["tasks"][2]["para"] = ["${1}"]
    ep = _run(inst, json.dumps(plan))
    assert ep.end_reason is EndReason.CALL_FAILED and ep.success is False
    (last,) = [s for s in ep.steps if s.call.node_id == "2"]
    assert last.verdict.code.value == "unknown_param" and "bare list" in last.verdict.message


@pytest.mark.parametrize(
    "result",
    [
        "Tool call failed. Missing required parameter 'city'.",
        "Tool call failed: the service is down",
        '{"error": "quota exceeded"}',
        {"error": "quota exceeded"},
    ],
)
def test_error_results_are_failures_and_never_done(result: Any) -> None:
    assert result_failed(result)
    assert pr.point_from_instance(_instance({"city": "Paris"}, result)).outputs == {}


def test_results_that_merely_mention_errors_are_not_failures() -> None:
    for result in ('{"value": 1, "note": "no error"}', "The tool call succeeded", {"v": 1}):
        assert not result_failed(result), result


def _p(*nodes: tuple[str, str, str]) -> Plan:
    """A plan from (id, tool, status) triples, a chain from root, then the response."""
    tasks: list[dict[str, Any]] = [{"id": "root", "desc": "q", "dep": [], "status": True}]
    for nid, tool, status in nodes:
        tasks.append(
            {
                "id": nid,
                "name": tool,
                "para": {},
                "desc": tool,
                "dep": ["root"],
                "status": status == "done",
            }
        )
    tasks.append({"id": "response", "desc": "r", "dep": [n[0] for n in nodes], "status": False})
    got = Plan.parse(json.dumps({"tasks": tasks}))
    assert isinstance(got, Plan)
    return got


def test_giving_up_is_dropping_a_pending_call_without_a_replacement() -> None:
    prev = _p(("1", "a", "done"), ("2", "b", "pending"), ("3", "c", "pending"))
    # 2 and 3 still owed. Dropping 3 with nothing new: a give-up, whatever the words
    assert abandoned_calls(prev, _p(("1", "a", "done"), ("2", "b", "")), ["1"]) == ["3"]
    assert abandoned_calls(prev, _p(("1", "a", "done")), ["1"]) == ["2", "3"]
    # a retry of b under a new id keeps the tool; a reroute of 3 to tool d replaces it
    assert abandoned_calls(prev, _p(("1", "a", ""), ("2.1", "b", ""), ("3", "c", "")), ["1"]) == []
    assert abandoned_calls(prev, _p(("1", "a", ""), ("2", "b", ""), ("4", "d", "")), ["1"]) == []
    assert abandoned_calls(prev, _p(("1", "a", ""), ("2", "b", ""), ("3", "d", "")), ["1"]) == []
    # a node that already ran is not owed: dropping it is no give-up
    assert abandoned_calls(prev, _p(("2", "b", ""), ("3", "c", "")), ["1"]) == []


def test_a_give_up_in_any_words_scores_zero() -> None:
    inst = _instance({"city": "Paris"}, "Sunny, 21 C")
    for words in ("All done, here is the weather.", "Stop here: the task cannot be completed."):
        dropped = _plan({"city": "Paris"})
        dropped["tasks"] = [t for t in dropped["tasks"] if t["id"] != "2"]
        dropped["tasks"][-1]["dep"] = ["1"]
        dropped["tasks"][-1]["desc"] = words
        ep = _run(inst, f"<thought>{words}</thought>\n" + json.dumps(dropped))
        assert (ep.success, ep.end_reason) == (False, EndReason.GAVE_UP), words


def test_dotted_node_ids_are_parsed_one_way() -> None:
    ids = ["1", "1.1"]
    (ref,) = iter_references("${1.1.articles.0.url}", ids)
    assert (ref.node, ref.path) == ("1.1", ["articles", "0", "url"])
    exact = exact_reference("${1.1.articles.0.url}", ids)
    assert exact is not None and exact.node == "1.1"
    bindings = {"1": {"1": "wrong"}, "1.1": {"articles": [{"url": "https://x.example"}]}}
    assert resolve_references("${1.1.articles.0.url}", bindings) == "https://x.example"
    # no reader may split a reference without the ids it may name
    with pytest.raises(TypeError):
        list(iter_references("${1.1.articles.0.url}"))  # type: ignore[call-arg]
