"""How the simulated agent reads tool results: rejected calls, explicit and implicit faults."""

from __future__ import annotations

import copy

import pytest

from replan.core.trace import Call
from replan.env import task_world
from replan.env.corpus import load_corpus
from replan.env.perturb import EXPLICIT_KINDS, corruptions, explicit_observation
from replan.models.simulated.observe import (
    ObsKind,
    PlausibilityContext,
    implausible,
    parse_observation,
    read_observation,
)
from replan.nodes.tools import observation_text
from replan.suites.toolmaze import execute_plan, generate, path_plans

from .conftest import QUERY, booking_task


@pytest.fixture(scope="module")
def search():
    """A clean search_flights result and its spec."""
    corpus = load_corpus()
    world = task_world(booking_task())
    res = world.execute(
        Call(
            tool="search_flights",
            args={"origin": "LIS", "destination": "KIX", "date": "2026-12-03"},
        )
    )
    assert res.ok
    return corpus.tools["search_flights"], res.observation


def _ctx(args=None, earlier=()):
    return PlausibilityContext.build([QUERY, args or {}], earlier)


@pytest.mark.parametrize("kind", EXPLICIT_KINDS)
def test_every_explicit_fault_reads_as_explicit(kind: str) -> None:
    obs = parse_observation(observation_text(explicit_observation(kind, "search_flights")))
    assert read_observation(obs).kind is ObsKind.EXPLICIT


def test_rejected_calls_read_as_the_agents_own_mistake() -> None:
    world = task_world(booking_task())
    res = world.execute(Call(tool="quote_flight", args={"passengers": 1}))
    reading = read_observation(parse_observation(observation_text(res.observation)))
    assert reading.kind is ObsKind.INVALID
    assert reading.code == "missing_param"


def test_clean_result_reads_ok(search) -> None:
    spec, out = search
    assert read_observation(out, spec, _ctx()).kind is ObsKind.OK


def test_engine_corruptions_of_a_fare_and_a_date_are_implausible(search) -> None:
    spec, out = search
    price = out["flights"][0]["price_usd"]
    for kind, value in corruptions(
        price, spec.output_field_schema(["flights", "0", "price_usd"]), 7
    ):
        bad = copy.deepcopy(out)
        bad["flights"][0]["price_usd"] = value
        assert spec.check_output(bad).ok  # schema-valid: only plausibility can tell
        assert read_observation(bad, spec, _ctx()).kind is ObsKind.IMPLICIT, kind
    dep = out["flights"][1]["departure"]
    (kind, value), *_ = corruptions(dep, {"type": "string"}, 3)
    assert kind == "date_decades_away"
    bad = copy.deepcopy(out)
    bad["flights"][1]["departure"] = value
    assert "decades" in implausible(bad, spec, _ctx())


def test_a_tampered_id_stands_out_among_its_peers(search) -> None:
    spec, out = search
    (_, swapped), *_ = [
        c for c in corruptions(out["cheapest_flight_id"], {}, 11) if c[0] == "value_swapped"
    ]
    bad = {**out, "cheapest_flight_id": swapped}
    assert "does not look like" in implausible(bad, spec, _ctx())
    # alone, with nothing to compare it to, the same value looks fine
    assert implausible({"cheapest_flight_id": swapped}, spec, _ctx()) is None


def test_negative_stock_and_a_latitude_out_of_range() -> None:
    assert "negative" in implausible({"stock": -5})
    assert implausible({"remaining_usd": -5.0}) is None  # a difference may be negative
    assert "latitude" in implausible({"lat": 1292.71, "lon": 36.8})
    assert "1000x" in implausible({"rate": 1312.5}, None, _ctx(earlier=[(None, {"rate": 1.3125})]))


def test_no_false_alarms_on_clean_results_of_generated_tasks() -> None:
    """Every result of every valid path of a sample of ToolMaze tasks, run clean, reads OK."""
    corpus = load_corpus()
    tasks = [t for t in generate(limit=8) if t.mode == "NP"]
    checked = 0
    for task in tasks:
        for plan in path_plans(task):
            ex = execute_plan(plan, task_world(task))
            assert ex.failed is None
            earlier = []
            for nid, res in ex.steps:
                spec = corpus.tools[plan.node(nid).tool]
                ctx = PlausibilityContext.build([task.query, res.resolved_args], earlier)
                reading = read_observation(res.observation, spec, ctx)
                assert reading.kind is ObsKind.OK, (task.task_id, spec.name, reading.reason)
                earlier.append((spec, res.observation))
                checked += 1
    assert checked > 300
