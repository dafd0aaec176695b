"""The error mutators (env/mistakes.py): each call-level mistake, in both styles, is the error
the tool's schema says it is; structural edits differ between styles only where named."""

from __future__ import annotations

import random

import pytest

from replan.core.plan import PlanNode
from replan.core.taxonomy import ErrorType, VerdictCode
from replan.env.corpus import load_corpus
from replan.env.mistakes import AGENT, PARARECOVER, mutate_call, mutate_structure, remove_call

ARGS = {"origin": "SFO", "destination": "JFK", "date": "2026-05-01", "max_stops": 1}


@pytest.fixture(scope="module")
def specs():
    return load_corpus().tools


def _verdict(spec, args) -> VerdictCode | None:
    """The first failing check of ``args`` against ``spec`` (names, then each value)."""
    names = spec.check_names(args)
    if not names.ok:
        return names.code
    for k, v in args.items():
        c = spec.check_value(k, v)
        if not c.ok:
            return c.code
    return None


@pytest.mark.parametrize("style", [AGENT, PARARECOVER], ids=["agent", "pararecover"])
@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ErrorType.PARAMETER_MISSING, VerdictCode.MISSING_PARAM),
        (ErrorType.PARAMETER_ERROR, VerdictCode.UNKNOWN_PARAM),
        (ErrorType.TYPE_ERROR, VerdictCode.TYPE_MISMATCH),
        (ErrorType.PARAMETER_INVALID, VerdictCode.INVALID_VALUE),
    ],
)
def test_a_parameter_mistake_is_the_error_it_names(specs, style, error, code):
    spec = specs["search_flights"]
    assert _verdict(spec, ARGS) is None
    for seed in range(20):
        tool, args = mutate_call(error, "search_flights", ARGS, specs, random.Random(seed), style)
        assert tool == "search_flights"
        assert _verdict(spec, args) is code, (seed, args)
        assert ARGS == {"origin": "SFO", "destination": "JFK", "date": "2026-05-01", "max_stops": 1}


def test_tool_mistakes_by_style(specs):
    seen = {AGENT: set(), PARARECOVER: set()}
    for style in seen:
        for seed in range(30):
            name, _ = mutate_call(
                ErrorType.TOOL_NAME_ERROR, "search_flights", ARGS, specs, random.Random(seed), style
            )
            assert name not in specs
            seen[style].add(name)
            other, _ = mutate_call(
                ErrorType.TOOL_SELECT_ERROR,
                "search_flights",
                ARGS,
                specs,
                random.Random(seed),
                style,
            )
            assert other in specs and other != "search_flights"
    assert len(seen[AGENT]) > 1  # a random slip among several variants
    assert seen[PARARECOVER] == {"searchFlights"}  # the paper's one fixed look


def test_structural_edits_keep_root_only_in_the_agent_style():
    nodes = [
        PlanNode(id="root", deps=[]),
        PlanNode(id="1", tool="a", deps=["root"]),
        PlanNode(id="2", tool="b", deps=["root"]),
        PlanNode(id="3", tool="c", args={"x": "${1.id}"}, deps=["1", "2"]),
        PlanNode(id="response", deps=["3"]),
    ]
    deps = {s: {n.id: n.deps for n in remove_call(nodes, "1", s)} for s in (AGENT, PARARECOVER)}
    assert deps[AGENT]["3"] == ["2", "root"] and deps[PARARECOVER]["3"] == ["2"]
    assert "1" not in deps[AGENT] and "1" not in deps[PARARECOVER]
    dup = mutate_structure(ErrorType.TOOLCALL_REDUNDANCY, nodes, "2", random.Random(0))
    assert [n.id for n in dup] == ["root", "1", "2", "3", "4", "response"]
    assert dup[-1].deps == ["3", "4"] and dup[4].tool == "b"
