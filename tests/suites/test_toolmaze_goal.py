"""Goal-level ToolMaze queries: the reverse validation by hand, and the frozen goal-level suite
(no query names a tool or a step; every task passes the validation, with distractors too)."""

from __future__ import annotations

import re

import pytest

from replan.core.plan import RESPONSE, ROOT, Plan, PlanNode
from replan.core.tools import ToolSpec
from replan.env.corpus import load_corpus
from replan.suites import load_suite
from replan.suites import toolmaze as tm
from replan.suites.toolmaze.goal import (
    QUERY,
    Reconstruction,
    path_reading,
    reconstructions,
    reverse_validate,
)


def _tool(name: str, ins: dict[str, str], outs: dict[str, str]) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=f"{name} tool",
        parameters={
            "type": "object",
            "properties": {p: {"type": "string", "x-kind": k} for p, k in ins.items()},
            "required": list(ins),
        },
        returns={
            "type": "object",
            "properties": {f: {"type": "string", "x-kind": k} for f, k in outs.items()},
            "required": list(outs),
        },
    )


FIND = _tool("find_hotel", {"city": "city"}, {"hotel_id": "hotel_id"})
SUGGEST = _tool("suggest_hotel", {"city": "city"}, {"hotel_id": "hotel_id"})
BOOK = _tool("book_hotel", {"hotel_id": "hotel_id", "guest": "person"}, {"booking": "booking_id"})
DAY = _tool("next_free_day", {"city": "city"}, {"day": "date"})
MEET = _tool("book_room", {"day": "date"}, {"room_booking": "room_booking_id"})

#: the one valid path, by hand: find_hotel(city from the query) -> book_hotel(hotel_id from it,
#: guest from the query)
PATH = Reconstruction(
    frozenset({"find_hotel", "book_hotel"}),
    frozenset(
        {
            ("find_hotel", "city", QUERY),
            ("book_hotel", "hotel_id", "find_hotel"),
            ("book_hotel", "guest", QUERY),
        }
    ),
)


def _specs(*tools: ToolSpec) -> dict[str, ToolSpec]:
    return {t.name: t for t in tools}


def test_an_unambiguous_query_is_kept():
    specs = _specs(FIND, BOOK)
    assert reconstructions(specs, {"city", "person"}, ["booking_id"]) == [PATH]
    assert reverse_validate(specs, {"city", "person"}, ["booking_id"], [PATH]) is None


def test_a_query_another_listed_tool_also_answers_is_rejected():
    # suggest_hotel yields a hotel id from the city too: a reader cannot tell which is meant
    specs = _specs(FIND, SUGGEST, BOOK)
    readings = reconstructions(specs, {"city", "person"}, ["booking_id"])
    assert len(readings) == 2 and PATH in readings
    why = reverse_validate(specs, {"city", "person"}, ["booking_id"], [PATH])
    assert why is not None and "suggest_hotel" in why
    # ... unless both are valid paths (an alternative group)
    alt = Reconstruction(
        frozenset({"suggest_hotel", "book_hotel"}),
        frozenset(
            {
                ("suggest_hotel", "city", QUERY),
                ("book_hotel", "hotel_id", "suggest_hotel"),
                ("book_hotel", "guest", QUERY),
            }
        ),
    )
    assert reverse_validate(specs, {"city", "person"}, ["booking_id"], [PATH, alt]) is None


def test_a_goal_the_given_facts_cannot_reach_is_rejected():
    specs = _specs(FIND, BOOK)
    assert reconstructions(specs, {"person"}, ["booking_id"]) == []  # no city, no producer
    assert "not reachable" in reverse_validate(specs, {"person"}, ["booking_id"], [PATH])


def test_a_value_the_query_states_is_not_taken_from_a_tool():
    # the path takes the day from next_free_day; a query that states a date makes a reader use
    # it instead: the only reading is book_room alone, which is not the path
    specs = _specs(DAY, MEET)
    path = Reconstruction(
        frozenset({"next_free_day", "book_room"}),
        frozenset({("next_free_day", "city", QUERY), ("book_room", "day", "next_free_day")}),
    )
    assert reverse_validate(specs, {"city"}, ["room_booking_id"], [path]) is None
    only = Reconstruction(frozenset({"book_room"}), frozenset({("book_room", "day", QUERY)}))
    assert reconstructions(specs, {"city", "date"}, ["room_booking_id"]) == [only]
    assert reverse_validate(specs, {"city", "date"}, ["room_booking_id"], [path]) is not None


def test_a_path_reads_as_its_edges():
    plan = Plan.from_nodes(
        [
            PlanNode(id=ROOT, desc="book me a hotel", status="done"),
            PlanNode(id="1", tool="find_hotel", args={"city": "Lisbon"}, deps=[ROOT]),
            PlanNode(
                id="2",
                tool="book_hotel",
                args={"hotel_id": "${1.hotel_id}", "guest": "Ana"},
                deps=["1"],
            ),
            PlanNode(id=RESPONSE, desc="answer", deps=["2"]),
        ]
    )
    assert path_reading(plan, _specs(FIND, BOOK)) == PATH


# -- the frozen goal-level suite -----------------------------------------------------------------
@pytest.fixture(scope="module")
def goal_suite():
    return load_suite("toolmaze")


def test_no_goal_level_query_names_a_tool_or_a_step(goal_suite):
    """The queries state goals and facts: no tool's name, no tool description's first sentence
    (the phrase the step-list queries are made of)."""
    corpus = load_corpus()
    from replan.models.simulated.visible import step_phrase

    phrases = {step_phrase(s).lower() for s in corpus.tools.values() if len(step_phrase(s)) >= 8}
    names = re.compile(r"\b(" + "|".join(map(re.escape, corpus.tools)) + r")\b")
    for t in goal_suite:
        q = t.query.lower()
        assert not names.search(t.query), (t.task_id, names.search(t.query))
        assert not [p for p in phrases if p in q], t.task_id


def test_every_goal_level_task_passes_the_reverse_validation(goal_suite):
    corpus = load_corpus()
    for t in goal_suite:
        if t.mode != "NP":
            continue
        specs = {n: corpus.tools[n] for n in t.tools}
        goal = t.metadata["goal"]
        paths = [path_reading(p, specs) for p in tm.path_plans(t)]
        assert sorted(t.tools) == sorted({x for p in t.valid_paths for x in p})
        why = reverse_validate(specs, set(goal["given"]), [k for k, _ in goal["goals"]], paths)
        assert why is None, (t.task_id, why)


def test_distractors_lie_on_no_path_and_keep_the_query_unambiguous(goal_suite):
    corpus = load_corpus()
    base = [t for t in goal_suite if t.mode == "NP"][::10]
    with_d = tm.with_distractors(base, 0.25)
    added = shares = 0
    for plain, t in zip(base, with_d, strict=True):
        extra = t.metadata["distractors"]
        on_paths = {x for p in t.valid_paths for x in p}
        assert set(t.tools) == set(plain.tools) | set(extra) and not set(extra) & on_paths
        domains = set(t.metadata["domains"])
        assert all(corpus.tools[x].domain in domains for x in extra)
        specs = {n: corpus.tools[n] for n in t.tools}
        goal = t.metadata["goal"]
        paths = [path_reading(p, specs) for p in tm.path_plans(t)]
        assert (
            reverse_validate(specs, set(goal["given"]), [k for k, _ in goal["goals"]], paths)
            is None
        )
        added += len(extra)
        shares += len(extra) / len(t.tools)
    assert added and 0.15 <= shares / len(base) <= 0.3
    with pytest.raises(ValueError, match="share"):
        tm.with_distractors(base, 0.9)
