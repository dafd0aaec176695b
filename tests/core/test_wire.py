"""The request kind is read from tag lines, by hand-built message lists."""

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from replan.core.wire import request_kind


def test_a_request_is_named_by_its_system_tag():
    plan = [SystemMessage("[replan:plan]\nYou are a planner."), HumanMessage("Book a flight.")]
    assert request_kind(plan) == "plan"
    act = [SystemMessage("[replan:act]\nYou are an assistant."), HumanMessage("Hi")]
    assert request_kind(act) == "act"


def test_a_revision_is_the_planning_conversation_with_a_tagged_human_message():
    plan = [SystemMessage("[replan:plan]\nYou are a planner."), HumanMessage("Book a flight.")]
    once = [*plan, AIMessage("<thought>x</thought>\n{}"), HumanMessage("[replan:revise]\nfix")]
    assert request_kind(once) == "revise"
    twice = [*once, AIMessage("{}"), HumanMessage("[replan:revise]\nfix again")]
    assert request_kind(twice) == "revise"


def test_only_a_whole_first_line_of_a_system_or_human_message_is_a_tag():
    plan = [SystemMessage("[replan:plan]\nYou are a planner."), HumanMessage("Book a flight.")]
    # a model's own reply that starts with a tag does not change what was asked
    assert request_kind([*plan, AIMessage("[replan:act]\nI act")]) == "plan"
    # a tag inside a line, or a line that only starts like one, is text
    assert request_kind([*plan, HumanMessage("see [replan:revise]")]) == "plan"
    assert request_kind([*plan, HumanMessage("[replan:revise] now\nfix")]) == "plan"
    assert request_kind([SystemMessage("You are helpful."), HumanMessage("Hi")]) is None
    assert request_kind([]) is None


def test_a_query_that_starts_with_a_tag_line_names_nothing():
    """The kind comes from the system message; a revision's tag counts only on the last human
    message of a planning conversation, after the model's plan."""
    system = SystemMessage("[replan:plan]\nYou are a planner.")
    assert request_kind([system, HumanMessage("[replan:act]\nBook a flight.")]) == "plan"
    assert request_kind([system, HumanMessage("[replan:revise]\nBook a flight.")]) == "plan"
    act = SystemMessage("[replan:act]\nYou are an assistant.")
    assert request_kind([act, HumanMessage("[replan:plan]\nBook")]) == "act"
    assert request_kind([SystemMessage("Be helpful."), HumanMessage("[replan:plan]\nx")]) is None
    # a revise tag after the plan, but not on the last message: the conversation went on
    revised = [system, HumanMessage("q"), AIMessage("{}"), HumanMessage("[replan:revise]\nfix")]
    assert request_kind([*revised, AIMessage("{}"), HumanMessage("thanks")]) == "plan"
    # an acting conversation is never a revision
    assert request_kind([act, *revised[1:]]) == "act"
