"""In-place verdicts on two public example agents, against a hand count.

The agents are reproductions of public LangGraph tutorials (their own tools, prompts and graph;
deterministic local data; scripted models that make realistic mistakes):

- ``ip_sql``: "Build a custom SQL agent", https://docs.langchain.com/oss/python/langgraph/sql-agent
  (langchain-ai/docs ``src/oss/langgraph/sql-agent.mdx``), over a small local Chinook subset;
- ``ip_travel``: the customer-support tutorial, Part 1 (zero-shot agent),
  https://langchain-ai.github.io/langgraph/tutorials/customer-support/customer-support/ .

Every expected verdict below was worked out by hand from the tools, the data and the policies'
stated behaviour (each with a comment saying why), never read off replan. Per episode:
FED (1-based, ``None`` for a clean run), calls, exposed, consumed (implicit faults; ``None`` for
explicit ones or unexposed runs), propagated (a corrupted value reached an accepted call or the
answer, in any recognised form), the verdict and success. Faults: SQL — the query tool,
HTTP 503 shown to the model as the tool's error message; travel — the first tool called (the
default target), a timeout raised and turned into ``Error: ...`` by the tutorial's fallback;
implicit faults with no named field (aimed at what the clean run consumed).
"""

from __future__ import annotations

from typing import Any

import ip_sql
import ip_travel
import pytest

from replan.inplace import evaluate_in_place

NR, R, UND, NX = "not recovered", "recovered", "undetermined", "not exposed"


def _verdicts(res: Any) -> dict[tuple[str, str, str], tuple]:
    out = {}
    for e in res.episodes:
        sc = res.scores[e.episode_id]
        rec, pre = sc.recovery, sc.prefix
        out[(e.design, e.metadata["base_id"], e.mode)] = (
            pre.fed,
            len(e.steps),
            rec.exposed if e.mode != "NP" else None,
            rec.consumed,
            rec.sentinel_propagated,
            rec.verdict if e.mode != "NP" else None,
            bool(e.success),
        )
    return out


def _ter(hand: dict, design: str, mode: str) -> float:
    runs = [v for (d, _, m), v in hand.items() if d == design and m == mode]
    return sum(v[0] is None for v in runs) / len(runs)


def _prr(hand: dict, design: str, mode: str) -> float | None:
    decided = [
        v[5] for (d, _, m), v in hand.items() if d == design and m == mode and v[5] in (R, NR)
    ]
    return sum(v == R for v in decided) / len(decided) if decided else None


def _consumed_share(hand: dict) -> float:
    implicit = [v for (_, _, m), v in hand.items() if m in ("P3", "P4") and v[2]]
    return sum(bool(v[3]) for v in implicit) / len(implicit)


# fields: (FED, calls, exposed, consumed, propagated, verdict, success)
SQL_HAND = {
    # -- trusting ------------------------------------------------------------------------------
    # list_tables, schema, query with Track.Length -> "Error: no such column" (the tool rejects
    # it: FED 3), the right query, the answer
    ("trusting", "longest", "NP"): (3, 4, None, None, False, None, True),
    # the first query (still Track.Length) meets the 503 before it runs: a well-formed call that
    # met a fault is executable, so no FED; no retry, a guessed answer: not recovered (P1 needs a
    # re-invocation)
    ("trusting", "longest", "P1"): (None, 3, True, None, False, NR, False),
    # same run under P2; no alternative, so a stop would recover, but the answer states a result
    # (343,000 ms) that nothing the run saw explains while the clean answer stated one: a claim
    ("trusting", "longest", "P2"): (None, 3, True, None, False, NR, False),
    # the transient fault is spent on the first query, which the database rejects itself (its
    # own error, no corruption shown): the agent never sees a corrupted value -> not exposed
    ("trusting", "longest", "P3"): (3, 4, False, None, False, NX, True),
    # permanent: the second (right) query's average is x1000 (the value the clean answer used);
    # the answer states ~2,911,827,000 ms: propagated in a derived (rounded) form
    ("trusting", "longest", "P4"): (3, 4, True, True, True, NR, False),
    ("trusting", "jazz", "NP"): (None, 3, None, None, False, None, True),
    # 503 on the only query; no retry; guesses 1.29
    ("trusting", "jazz", "P1"): (None, 3, True, None, False, NR, False),
    # the guess 1.29 is in no output the run saw (the schema's sample rows show 0.99): a claim
    ("trusting", "jazz", "P2"): (None, 3, True, None, False, NR, False),
    # the sum 2.58 comes back x1000 and is stated as the answer
    ("trusting", "jazz", "P3"): (None, 3, True, True, True, NR, False),
    ("trusting", "jazz", "P4"): (None, 3, True, True, True, NR, False),
    # -- checking ------------------------------------------------------------------------------
    ("checking", "longest", "NP"): (None, 3, None, None, False, None, True),
    # 503, the same query again (a re-invocation) runs cleanly, the right answer
    ("checking", "longest", "P1"): (None, 4, True, None, False, R, True),
    # 503 twice, then it stops saying so: no later call, no number stated -> a stop
    ("checking", "longest", "P2"): (None, 4, True, None, False, R, False),
    # an average of ~2.9e9 ms (over a day) is implausible: re-run, clean, right answer
    ("checking", "longest", "P3"): (None, 4, True, True, False, R, True),
    # implausible twice: it stops without stating any value
    ("checking", "longest", "P4"): (None, 4, True, True, False, R, False),
    ("checking", "jazz", "NP"): (None, 3, None, None, False, None, True),
    ("checking", "jazz", "P1"): (None, 4, True, None, False, R, True),
    ("checking", "jazz", "P2"): (None, 4, True, None, False, R, False),
    # 2,580 for two tracks is implausible (> 100): re-run, clean
    ("checking", "jazz", "P3"): (None, 4, True, True, False, R, True),
    ("checking", "jazz", "P4"): (None, 4, True, True, False, R, False),
}


def test_langgraph_sql_agent_verdicts_agree_with_the_hand_count(tmp_path) -> None:
    db = ip_sql.make_db(tmp_path / "chinook.db")
    tools = ip_sql.make_tools(db)
    res = evaluate_in_place(
        {"trusting": ip_sql.agent("trusting", db), "checking": ip_sql.agent("checking", db)},
        tools,
        ip_sql.TASKS,
        target="sql_db_query",
        kind="http_503",
        deliver="message",
        out=tmp_path / "out",
        show=False,
        n_boot=100,
    )
    got = _verdicts(res)
    assert got.keys() == SQL_HAND.keys()
    for key, want in SQL_HAND.items():
        assert got[key] == want, (key, got[key], res.scores[_ep(res, key)].recovery.reason)
    for design in ("trusting", "checking"):
        for mode in ("NP", "P1", "P2", "P3", "P4"):
            assert res.tables[design][mode]["ter"]["value"] == pytest.approx(
                _ter(SQL_HAND, design, mode)
            ), (design, mode)
            if mode != "NP":
                assert res.tables[design][mode]["prr"]["value"] == _prr(SQL_HAND, design, mode)
    # every exposed implicit run corrupted a value the run consumed (by hand: 7 of 7)
    assert _consumed_share(SQL_HAND) == 1.0
    # the evidence of propagation names where and in which form
    p4 = res.scores[_ep(res, ("trusting", "longest", "P4"))].recovery
    assert p4.evidence[0]["where"] == "answer" and "2911827000" in p4.evidence[0]["form"]


def _ep(res: Any, key: tuple[str, str, str]) -> str:
    return next(
        e.episode_id for e in res.episodes if (e.design, e.metadata["base_id"], e.mode) == key
    )


TRAVEL_HAND = {
    # -- trusting ------------------------------------------------------------------------------
    # one fetch, the answer with flight number and time
    ("trusting", "when", "NP"): (None, 1, None, None, False, None, True),
    # the fetch times out (the fallback shows "Error: ..."); it apologises: no retry
    ("trusting", "when", "P1"): (None, 1, True, None, False, NR, False),
    # P2: the same apology is a stop: no later call, no result stated
    ("trusting", "when", "P2"): (None, 1, True, None, False, R, False),
    # the departure is decades away (the date the clean answer used); it is read out:
    # "2 0xx-12-04 14:30" -> propagated (a date decades from 2026 in the answer)
    ("trusting", "when", "P3"): (None, 1, True, True, True, NR, False),
    ("trusting", "when", "P4"): (None, 1, True, True, True, NR, False),
    # fetch, policy, search, update with the flight *number* as new_flight_id (an integer
    # field: invalid, FED 4), update with the id: done
    ("trusting", "later", "NP"): (4, 5, None, None, False, None, True),
    ("trusting", "later", "P1"): (None, 1, True, None, False, NR, False),
    ("trusting", "later", "P2"): (None, 1, True, None, False, R, False),
    # fetch (departure decades away), policy, a search on that far day (empty), the widened
    # search from that day (empty), "no later flights": the corrupted date reached two
    # accepted searches
    ("trusting", "later", "P3"): (None, 4, True, True, True, NR, False),
    ("trusting", "later", "P4"): (None, 4, True, True, True, NR, False),
    # -- checking ------------------------------------------------------------------------------
    ("checking", "when", "NP"): (None, 1, None, None, False, None, True),
    # timeout, fetch again (clean), the answer
    ("checking", "when", "P1"): (None, 2, True, None, False, R, True),
    # timeout twice, then "not responding": a stop
    ("checking", "when", "P2"): (None, 2, True, None, False, R, False),
    # departure decades away is implausible: fetch again, clean, the answer
    ("checking", "when", "P3"): (None, 2, True, True, False, R, True),
    # implausible twice: it stops, quoting the bad year; whether the answer asserts that date or
    # reports it as wrong needs reading it: undetermined (not counted in PRR)
    ("checking", "when", "P4"): (None, 2, True, True, True, UND, False),
    ("checking", "later", "NP"): (None, 4, None, None, False, None, True),
    ("checking", "later", "P1"): (None, 5, True, None, False, R, True),
    ("checking", "later", "P2"): (None, 2, True, None, False, R, False),
    ("checking", "later", "P3"): (None, 5, True, True, False, R, True),
    # implausible twice: it stops without quoting anything
    ("checking", "later", "P4"): (None, 2, True, True, False, R, False),
}


def test_langgraph_customer_support_agent_verdicts_agree_with_the_hand_count(tmp_path) -> None:
    clean = ip_travel.make_db(tmp_path / "travel.sqlite")
    work = tmp_path / "travel-work.sqlite"
    tools = ip_travel.make_tools(work)
    res = evaluate_in_place(
        {
            "trusting": ip_travel.agent("trusting", clean, work),
            "checking": ip_travel.agent("checking", clean, work),
        },
        tools,
        ip_travel.tasks(work),
        kind="timeout",
        out=tmp_path / "out",
        show=False,
        n_boot=100,
    )
    got = _verdicts(res)
    assert got.keys() == TRAVEL_HAND.keys()
    for key, want in TRAVEL_HAND.items():
        assert got[key] == want, (key, got[key], res.scores[_ep(res, key)].recovery.reason)
    for design in ("trusting", "checking"):
        for mode in ("NP", "P1", "P2", "P3", "P4"):
            assert res.tables[design][mode]["ter"]["value"] == pytest.approx(
                _ter(TRAVEL_HAND, design, mode)
            ), (design, mode)
            if mode != "NP":
                assert res.tables[design][mode]["prr"]["value"] == _prr(TRAVEL_HAND, design, mode)
    assert res.tables["checking"]["P4"]["prr"]["undetermined"] == 1
    assert _consumed_share(TRAVEL_HAND) == 1.0
    # the derived form of the corrupted date in the trusting agent's search window
    rec = res.scores[_ep(res, ("trusting", "later", "P3"))].recovery
    assert rec.evidence[0]["where"].endswith("(search_flights)")
    assert "decades" in rec.evidence[0]["form"]
