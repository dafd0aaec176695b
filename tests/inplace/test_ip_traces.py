"""``replan score --traces``: production transcripts scored with nothing running.

The key check builds transcripts from real stored episodes (a ``replan run`` of the simulated
react agent on ToolMaze tasks, whose verdicts the world decided) and asserts that the FED the
trace scorer finds from transcript + tool schemas alone equals the FED the world found.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, messages_to_dict
from typer.testing import CliRunner

from replan.cli import app
from replan.evaluators.prefix import prefix_record
from replan.inplace.traces import TraceError, episode_to_openai, score_traces

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_rate",
            "parameters": {
                "type": "object",
                "properties": {"base": {"type": "string"}, "quote": {"type": "string"}},
                "required": ["base", "quote"],
            },
        },
    },
    {
        "name": "convert",
        "parameters": {"type": "object", "properties": {"amount": {"type": "number"}}},
    },
]


def _openai(calls: list[tuple[str, dict, str]], answer: str | None = "done") -> dict:
    msgs: list[dict] = [{"role": "user", "content": "q"}]
    for i, (name, args, result) in enumerate(calls):
        cid = f"c{i}"
        msgs.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                ],
            }
        )
        msgs.append({"role": "tool", "tool_call_id": cid, "content": result})
    if answer:
        msgs.append({"role": "assistant", "content": answer})
    return {"messages": msgs}


def _write(tmp_path: Path, lines: list[object]) -> tuple[Path, Path]:
    traces = tmp_path / "traces.jsonl"
    traces.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    return traces, tools


def test_fed_pec_ter_and_error_types_by_hand(tmp_path) -> None:
    ok = '{"rate": 1.08}'
    lines = [
        # clean: 2 valid calls
        _openai(
            [("get_rate", {"base": "USD", "quote": "EUR"}, ok), ("convert", {"amount": 5}, "5.4")]
        ),
        # call 2 misses a required parameter -> FED 2, Parameter_Missing
        _openai(
            [("get_rate", {"base": "USD", "quote": "EUR"}, ok), ("get_rate", {"base": "USD"}, "x")]
        ),
        # call 1 names a tool that does not exist -> FED 1, Tool_name_Error
        _openai([("get_fx", {}, "Error: no such tool")]),
        # a 429 is the service's failure, not the agent's; the tool's own rejection is the agent's
        _openai(
            [
                ("get_rate", {"base": "USD", "quote": "EUR"}, "HTTP 429 Too Many Requests"),
                ("convert", {"amount": 5}, '{"error": "amount must be positive"}'),
            ]
        ),
    ]
    traces, tools = _write(tmp_path, lines)
    res = score_traces(traces, tools, n_boot=200)
    assert [t["fed"] for t in res["per_trace"]] == [None, 2, 1, 2]
    assert [t["first_error_type"] for t in res["per_trace"]] == [
        None,
        "Parameter_Missing",
        "Tool_name_Error",
        "Parameter_Invalid",
    ]
    assert res["prefix.ter"]["value"] == pytest.approx(1 / 4)
    # PEC(1): runs valid through call 1 and of length >= 1: traces 1, 2, 4 -> 3/4
    assert res["prefix.pec"][0]["pec"]["value"] == pytest.approx(3 / 4)
    # tool-error rate: results that were errors (the unknown tool's, the 429, the rejection) / 7
    assert res["tool_error_rate"]["value"] == pytest.approx(3 / 7)


def test_langchain_message_dicts_and_the_cli(tmp_path) -> None:
    convo = [
        HumanMessage("q"),
        AIMessage(
            content="", tool_calls=[{"name": "convert", "args": {"amount": "five"}, "id": "a"}]
        ),
        ToolMessage(content="bad", tool_call_id="a", status="error"),
        AIMessage(content="sorry"),
    ]
    traces, tools = _write(
        tmp_path, [{"id": "lc", "messages": messages_to_dict(convo)}, "not json", "[]", '{"x": 1}']
    )
    res = CliRunner().invoke(
        app, ["score", "--traces", str(traces), "--tools", str(tools), "--json"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert (
        out["per_trace"][0]["fed"] == 1
        and out["per_trace"][0]["first_error_code"] == "type_mismatch"
    )
    assert any(":2: not JSON" in e for e in out["input_errors"])
    assert any(":3: not a conversation" in e for e in out["input_errors"])
    assert any(
        ":4: not a conversation (an object without 'messages')" in e for e in out["input_errors"]
    )
    table = CliRunner().invoke(app, ["score", "--traces", str(traces), "--tools", str(tools)])
    assert table.exit_code == 0 and "TER" in table.stdout and "Type_Error" in table.stdout


def test_bad_input_is_one_clear_line(tmp_path) -> None:
    traces, tools = _write(tmp_path, ["not json"])
    r = CliRunner().invoke(app, ["score", "--traces", str(traces), "--tools", str(tools)])
    assert r.exit_code == 1 and "no readable conversation" in r.output
    r = CliRunner().invoke(app, ["score", "--traces", str(traces)])
    assert r.exit_code == 1 and "--traces needs --tools" in r.output
    (tmp_path / "bad.json").write_text('[{"name": "t"}]')
    with pytest.raises(TraceError, match=r"bad.json\[0\] \(t\): no 'parameters' schema"):
        score_traces(traces, tmp_path / "bad.json")


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real ``replan run``: the simulated react agent on 12 ToolMaze tasks (NP and P1–P4)."""
    import replan

    out = tmp_path_factory.mktemp("run")
    replan.run("toolmaze", agents=["react"], limit=12, out=out, concurrency=2)
    return out


def test_fed_from_transcripts_equals_the_worlds(stored: Path, tmp_path: Path) -> None:
    from replan.env.corpus import load_corpus
    from replan.runner.store import ResultsStore

    with ResultsStore(stored) as store:
        episodes, tasks = store.episodes(), store.tasks()
    corpus = load_corpus()
    names = sorted({n for t in tasks.values() for n in t.tools})
    (tmp_path / "tools.json").write_text(json.dumps([corpus.tools[n].to_openai() for n in names]))
    world_fed = {}
    lines = []
    for e in episodes:
        if any(s.perturbation is not None and s.perturbation.kind == "http_404" for s in e.steps):
            continue  # a 404 in a trace reads as the agent's wrong id (see replan.inplace.traces)
        world_fed[e.episode_id] = prefix_record(e, tasks[e.task_id]).fed  # replayed in the world
        lines.append(episode_to_openai(e))
    (tmp_path / "t.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    res = score_traces(tmp_path / "t.jsonl", tmp_path / "tools.json", n_boot=200)
    found = {t["id"]: t["fed"] for t in res["per_trace"]}
    assert len(found) >= 8 and found == world_fed
    assert any(v is not None for v in world_fed.values())  # some runs have an invalid call
    assert any(v is None for v in world_fed.values())
