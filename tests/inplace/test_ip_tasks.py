"""Tasks of the user's: forms, checkers, and bad input named by file and line."""

from __future__ import annotations

import json
import re

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph

from replan.inplace.tasks import InPlaceTask, load_tasks
from replan.inplace.traces import score_thread


def test_jsonl_with_expected_regex_and_reference(tmp_path) -> None:
    f = tmp_path / "tasks.jsonl"
    f.write_text(
        "\n".join(
            json.dumps(x)
            for x in [
                {"id": "a", "input": "total?", "expected": 168.6, "min_calls": 3},
                {"question": "code?", "regex": r"ORD-\d+"},
                {"inputs": {"q": "who?"}, "reference": {"answer": "Ada"}},
            ]
        )
    )
    a, b, c = load_tasks(f)
    assert (a.id, a.min_calls, b.id, c.id) == ("a", 3, "t1", "t2")
    assert a.judge(None, "It is 168.60 EUR.")[0] and not a.judge(None, "It is 168.7 EUR.")[0]
    assert not a.judge(None, "It is 1168.60 EUR.")[0]  # a whole value, not a substring
    assert b.judge(None, "placed ORD-17")[0] and not b.judge(None, "placed")[0]
    assert c.input == "who?" and c.judge(None, "ada lovelace")[0]


def test_callable_checker_sees_the_final_state() -> None:
    t = InPlaceTask(id="x", input="hi", check=lambda s: len(s["messages"]) == 2)
    assert t.judge({"messages": [1, 2]}, None) == (True, "check(final_state) passed")
    boom = InPlaceTask(id="y", input="hi", check=lambda s: s["nope"])
    ok, why = boom.judge({}, "a")
    assert not ok and "KeyError" in why


def test_langsmith_example_reference_output() -> None:
    from langsmith.schemas import Example

    ex = Example(
        id="00000000-0000-0000-0000-000000000001",
        inputs={"question": "q"},
        outputs={"output": "42"},
    )
    (t,) = load_tasks([ex])
    assert t.expected == "42" and t.query == "q"


def test_bad_tasks_name_what_and_where(tmp_path) -> None:
    f = tmp_path / "t.jsonl"
    f.write_text('{"input": "a", "expected": 1}\nnot json\n')
    with pytest.raises(ValueError, match=re.escape(f"{f}:2: not JSON")):
        load_tasks(f)
    f.write_text('{"input": "a"}\n')
    with pytest.raises(ValueError, match=re.escape(f"{f}:1: task has no checker")):
        load_tasks(f)
    with pytest.raises(ValueError, match=r"tasks\[1\]: task has no input"):
        load_tasks([{"input": "a", "expected": 1}, {"expected": 2}])
    with pytest.raises(ValueError, match="appears twice"):
        load_tasks([{"id": "a", "input": "x", "expected": 1}] * 2)
    with pytest.raises(ValueError, match="regex"):
        load_tasks([{"input": "x", "regex": "("}])
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_tasks(tmp_path / "missing.jsonl")


def test_score_a_langgraph_checkpointer_thread() -> None:
    """A production thread kept by a checkpointer: its latest state is scored, nothing run."""

    def node(state: MessagesState) -> dict:
        return {}

    g = StateGraph(MessagesState)
    g.add_node("n", node)
    g.add_edge(START, "n")
    graph = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "th-1"}}
    msgs = [
        HumanMessage("convert 5"),
        AIMessage(content="", tool_calls=[{"name": "convert", "args": {}, "id": "c1"}]),
    ]
    graph.invoke({"messages": msgs}, cfg)
    tools = [
        {
            "name": "convert",
            "parameters": {
                "type": "object",
                "properties": {"amount": {"type": "number"}},
                "required": ["amount"],
            },
        }
    ]
    res = score_thread(graph, "th-1", tools, n_boot=200)
    assert res["per_trace"][0]["fed"] == 1
    assert res["per_trace"][0]["first_error_type"] == "Parameter_Missing"
