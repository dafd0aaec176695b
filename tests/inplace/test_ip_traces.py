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


# -- real transcripts: tau-bench's published GPT-4o airline trajectories ----------------------------
DATA = Path(__file__).parent / "data"

#: counted by reading tests/inplace/data/taubench_airline_gpt4o.jsonl (not by running replan):
#: (calls, FED, invalid calls, reward). An invalid call is one whose result starts with "Error";
#: the thinking tool's "" and a flight search's "[]" are answers, not errors.
TAU_BY_HAND = {
    # 8 calls; call 5 book_reservation -> "Error: payment amount does not add up, total price is
    # 305, but paid 255"; call 6 think -> "" (no error); call 4 reuses call 1's id, call 3 call 2's
    "task0": (8, 5, 1, 0.0),
    # no tool call (the agent never looked the reservation up)
    "task1": (0, None, 0, 0.0),
    # 7 calls, all answered with data or a number
    "task2": (7, None, 0, 0.0),
    # 20 calls; call 9 search_direct_flight -> "[]" and calls 11, 16 think -> "" are no errors;
    # call 14 update_reservation_flights -> "Error: not enough seats on flight HAT229", 15 ->
    # "Error: gift card balance is not enough" (id reused from call 3), 17 -> the same (id reused
    # from call 14), 18 -> the same, 19 -> "Error: certificate cannot be used to update
    # reservation"; call 20 succeeds. FED 14, not 3: call 3's own result is a reservation
    "task3": (20, 14, 5, 0.0),
    # 6 calls, ending with transfer_to_human_agents -> "Transfer successful"
    "task4": (6, None, 0, 0.0),
    # 6 calls; call 5 think -> ""
    "task5": (6, None, 0, 0.0),
    # 6 calls; call 4 think -> ""; solved (reward 1.0)
    "task6": (6, None, 0, 1.0),
    # 5 calls, two one-stop searches with flights
    "task7": (5, None, 0, 0.0),
    # no tool call
    "task8": (0, None, 0, 0.0),
    # no tool call (a long chat without a reservation id)
    "task9": (0, None, 0, 0.0),
    # 9 calls; calls 4 (JFK-LAX) and 6 (SFO-JFK) search_direct_flight -> "[]": no direct
    # flight that day, not an error
    "task10": (9, None, 0, 0.0),
    # 10 calls; call 6 book_reservation -> "Error: payment amount does not add up, total price
    # is 375, but paid 299"; calls 3, 7, 9 think -> ""; solved (reward 1.0)
    "task11": (10, 6, 1, 1.0),
}


def test_taubench_gpt4o_transcripts_agree_with_the_hand_count() -> None:
    res = score_traces(
        DATA / "taubench_airline_gpt4o.jsonl", DATA / "taubench_airline_tools.json", n_boot=200
    )
    assert res["input_errors"] == []
    got = {
        t["id"].rsplit("/", 1)[-1]: (t["calls"], t["fed"], t["tool_errors"], t["success"])
        for t in res["per_trace"]
    }
    assert got == {k: (n, fed, bad, r >= 1) for k, (n, fed, bad, r) in TAU_BY_HAND.items()}
    assert all(t["success_from"] == "trace" for t in res["per_trace"])
    # 77 calls, 7 invalid: tool-error rate 7/77; FED over the three runs with an error
    assert res["tool_error_rate"]["n"] == 77
    assert res["tool_error_rate"]["value"] == pytest.approx(7 / 77)
    assert res["prefix.fed_mean"]["value"] == pytest.approx((5 + 14 + 6) / 3)
    # TER over the 9 traces with calls (tasks 1, 8, 9 made none: their own column), 3 with an
    # error: 6/9
    assert res["prefix.ter"]["value"] == pytest.approx(6 / 9)
    assert res["prefix.zero_call"]["count"] == 3
    # success from each trace's own reward: tasks 6 and 11 of 12
    assert (res["prefix.success"]["value"], res["prefix.success"]["n"]) == (
        pytest.approx(2 / 12),
        12,
    )
    # 7 "Error: ..." texts; 8 empty think results + 3 empty searches are not errors; 59 others
    assert res["result_rules"] == {
        "error": {"error_text": 7},
        "not_error": {"empty": 11, "ok": 59},
        "no_result": 0,
    }


def _convo(calls: list[tuple[str, str, dict, object]], **extra: object) -> dict:
    """OpenAI transcript with one assistant turn per (call id, tool, args, result); a result
    given as a dict is a LangChain-style tool message with that ``status``/``content``."""
    msgs: list[dict] = [{"role": "user", "content": "q"}]
    for cid, name, args, result in calls:
        msgs.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                ],
            }
        )
        body = result if isinstance(result, dict) else {"content": result}
        msgs.append({"role": "tool", "tool_call_id": cid, **body})
    msgs.append({"role": "assistant", "content": "done"})
    return {"messages": msgs, **extra}


FLIGHT_TOOLS = [
    {"name": n, "parameters": {"type": "object", "properties": {"id": {"type": "string"}}}}
    for n in ("search_flights", "reschedule", "think")
]


def test_rejections_are_errors_and_empty_results_are_not(tmp_path) -> None:
    s, r = "search_flights", "reschedule"
    lines = [
        _convo(
            [
                ("a", s, {}, "[]"),  # empty: not an error
                ("b", s, {}, "No flights found for that date."),  # an answer
                ("c", r, {"id": "X1"}, "Invalid new flight ID provided."),  # rejection (call 3)
                ("d", r, {"id": "X2"}, "Not permitted to reschedule a departed flight."),
            ]
        ),
        _convo(
            [
                ("a", "think", {}, ""),  # empty: not an error
                ("b", r, {"id": "X3"}, "Flight X3 not found"),  # "... not found" (call 2)
                ("c", r, {"id": "X4"}, '{"error": "seat map locked"}'),  # error field
                ("d", r, {"id": "X5"}, {"content": "boom", "status": "error"}),  # the tool raised
                ("e", s, {}, '[{"id": "X6", "status": "scheduled"}]'),
            ]
        ),
    ]
    traces = tmp_path / "t.jsonl"
    traces.write_text("\n".join(json.dumps(x) for x in lines))
    res = score_traces(traces, FLIGHT_TOOLS, n_boot=200)
    assert [t["fed"] for t in res["per_trace"]] == [3, 2]
    assert [t["tool_errors"] for t in res["per_trace"]] == [2, 3]
    assert res["tool_error_rate"]["value"] == pytest.approx(5 / 9)
    assert res["result_rules"] == {
        "error": {"error_text": 3, "error_field": 1, "status": 1},
        "not_error": {"empty": 2, "ok": 2},
        "no_result": 0,
    }
    # a user predicate per tool decides first (None defers); empty results of named tools count
    res = score_traces(
        traces,
        FLIGHT_TOOLS,
        is_error={s: lambda out: out == [] or None, r: lambda out: False},
        empty_is_error=["think"],
        n_boot=200,
    )
    assert [t["fed"] for t in res["per_trace"]] == [1, 1]
    assert [t["tool_errors"] for t in res["per_trace"]] == [1, 2]  # [] ; "" + the raise
    assert res["result_rules"] == {
        "error": {"is_error": 1, "empty": 1, "status": 1},
        "not_error": {"is_error": 4, "ok": 2},
        "no_result": 0,
    }
    with pytest.raises(TraceError, match=r"is_error names 'serch_flights', not among the tools"):
        score_traces(traces, FLIGHT_TOOLS, is_error={"serch_flights": lambda out: None})
    with pytest.raises(TraceError, match=r"is_error for tool 'search_flights' returned 'yes'"):
        score_traces(traces, FLIGHT_TOOLS, is_error=lambda out: "yes")


def test_reused_call_ids_pair_by_position(tmp_path) -> None:
    r = "reschedule"
    convo = _convo([("x", r, {"id": "A"}, "Error: no seat"), ("x", r, {"id": "B"}, '{"ok": 1}')])
    (tmp_path / "t.jsonl").write_text(json.dumps(convo))
    res = score_traces(tmp_path / "t.jsonl", FLIGHT_TOOLS, n_boot=200)
    # the first call got the error, the second (same id) the reservation: FED 1, one error
    assert (res["per_trace"][0]["fed"], res["per_trace"][0]["tool_errors"]) == (1, 1)


def test_success_only_over_traces_with_a_reference_or_outcome(tmp_path) -> None:
    ok = [("a", "search_flights", {}, '[{"id": "X6"}]')]
    traces = tmp_path / "t.jsonl"
    traces.write_text("\n".join(json.dumps(_convo(ok)) for _ in range(4)))
    res = score_traces(traces, FLIGHT_TOOLS, n_boot=200)
    assert res["prefix.success"]["n"] == 0 and res["prefix.success"]["value"] is None
    out = CliRunner().invoke(
        app, ["score", "--traces", str(traces), "--tools", str(_tools_file(tmp_path))]
    )
    assert out.exit_code == 0 and "n/a" in out.stdout
    # one correct reference among four traces: 1/1, not 1/4
    lines = [_convo(ok), _convo(ok), _convo(ok), {**_convo(ok), "expected": "done"}]
    traces.write_text("\n".join(json.dumps(x) for x in lines))
    res = score_traces(traces, FLIGHT_TOOLS, n_boot=200)
    assert (res["prefix.success"]["value"], res["prefix.success"]["n"]) == (1.0, 1)
    # a trace's own outcome (success flag, or full reward) wins over its reference
    lines = [
        {**_convo(ok), "success": False, "expected": "done"},
        {**_convo(ok), "reward": 1.0},
        {**_convo(ok), "reward": 0.5},
        {**_convo(ok), "success": "yes"},
    ]
    traces.write_text("\n".join(json.dumps(x) for x in lines))
    res = score_traces(traces, FLIGHT_TOOLS, n_boot=200)
    assert [t["success"] for t in res["per_trace"]] == [False, True, False]
    assert (res["prefix.success"]["value"], res["prefix.success"]["n"]) == (pytest.approx(1 / 3), 3)
    assert any(":4: 'success' must be true or false" in e for e in res["input_errors"])


def _tools_file(tmp_path: Path) -> Path:
    path = tmp_path / "flight_tools.json"
    path.write_text(json.dumps(FLIGHT_TOOLS))
    return path


def test_cli_is_error_and_empty_is_error(tmp_path, monkeypatch) -> None:
    convo = _convo(
        [("a", "search_flights", {}, "[]"), ("b", "reschedule", {"id": "Z"}, "Seat map locked")]
    )
    traces = tmp_path / "t.jsonl"
    traces.write_text(json.dumps(convo))
    (tmp_path / "replan_flight_rules.py").write_text(
        "IS_ERROR = {'reschedule': lambda out: 'locked' in out or None}\nNOT_A_MAP = 3\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    tools = _tools_file(tmp_path)
    base = ["score", "--traces", str(traces), "--tools", str(tools), "--json"]
    out = json.loads(CliRunner().invoke(app, base).stdout)
    assert out["per_trace"][0]["tool_errors"] == 0
    res = CliRunner().invoke(
        app,
        [*base, "--is-error", "replan_flight_rules:IS_ERROR", "--empty-is-error", "search_flights"],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert (out["per_trace"][0]["fed"], out["per_trace"][0]["tool_errors"]) == (1, 2)
    assert out["result_rules"]["error"] == {"empty": 1, "is_error": 1}
    for spec, msg in (
        ("no_such_module_xyz:F", "no module named 'no_such_module_xyz'"),
        ("replan_flight_rules", "must look like module:name"),
        ("replan_flight_rules:MISSING", "the module has no 'MISSING'"),
        ("replan_flight_rules:NOT_A_MAP", "is_error must be a callable or a {tool: callable}"),
    ):
        res = CliRunner().invoke(app, [*base, "--is-error", spec])
        assert res.exit_code == 1 and msg in res.output and "Traceback" not in res.output, spec
    res = CliRunner().invoke(app, [*base, "--empty-is-error", "serch"])
    assert res.exit_code == 1 and "empty_is_error names 'serch'" in res.output
