"""The simulated agent: plans, revisions, replans and tool calls, through the real graphs."""

from __future__ import annotations

import json
import threading

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from replan.core.plan import ParseFailure, Plan
from replan.core.task import Checker, PerturbationProfile, Task
from replan.core.taxonomy import ErrorType, VerdictCode
from replan.core.trace import Call
from replan.env import task_world
from replan.env.perturb import injector_for
from replan.env.verifier import verify
from replan.evaluators.perturbation import recovery_record
from replan.evaluators.prefix import prefix_record
from replan.graphs import DESIGNS, run_episode
from replan.models import SimulatedChatModel, make_model
from replan.models.simulated.profiles import PROFILES, CompetenceProfile, FaultPolicy
from replan.nodes.planner import PlanOutput
from replan.nodes.prompts import (
    executor_messages,
    planner_messages,
    replanner_messages,
    revision_messages,
)
from replan.nodes.tools import observation_text
from replan.suites import load_suite

from .conftest import (
    PRICE_SENTINEL,
    QUOTE_SENTINEL,
    TRAVEL_TOOLS,
    alt_booking_plan,
    booking_gold,
    booking_task,
    explicit_faults,
    parallel_task,
    price_faults,
    quote_id_faults,
)

CLEAN = PROFILES["expert"].with_only()  # no errors at all


def sim(task: Task, profile: CompetenceProfile | str = CLEAN, seed: int = 0) -> SimulatedChatModel:
    return SimulatedChatModel(task=task, profile=profile, seed=seed)


def careful(**fault: float) -> CompetenceProfile:
    """Error-free, notices everything, always sees an alternative, with the given policy."""
    return CLEAN.model_copy(
        update={
            "notice_explicit": 1.0,
            "notice_implicit": 1.0,
            "on_fault": FaultPolicy(
                **{"retry": 0, "reroute": 0, "abort": 0, "find_alternative": 1.0, **fault}
            ),
        }
    )


def plan_of(model: SimulatedChatModel, task: Task) -> Plan | ParseFailure:
    world = task_world(task)
    return Plan.parse(
        model.invoke(planner_messages(task.query, list(world.tools.values()))).content
    )


def _sig(msg: AIMessage) -> tuple:
    return (msg.content, json.dumps([(t["name"], t["args"], t["id"]) for t in msg.tool_calls]))


# -- planning -------------------------------------------------------------------------------------
def _calls(plan: Plan) -> list[tuple]:
    return [(n.id, n.tool, n.args, n.deps) for n in plan.call_nodes]


@pytest.mark.parametrize("make", [booking_task, parallel_task], ids=["words", "steps"])
def test_an_error_free_plan_read_from_the_query_is_the_shortest_plan(make) -> None:
    """Read from the query and the tool list alone: the tools the query's words name, with
    their producers ("book ... flight"), or the steps it describes in the tools' words."""
    task = make()
    plan = plan_of(sim(task), task)
    assert isinstance(plan, Plan) and plan.thought
    gold = Plan.parse(task.gold_plan)
    # the gold plan states an optional value (one passenger) the query leaves implicit
    assert _calls(plan) == [
        (i, t, {k: v for k, v in a.items() if k in plan.get(i).args}, d)
        for i, t, a, d in _calls(gold)
    ]
    world = task_world(task)
    assert verify(plan, world.tools, world) == []


PLAN_ERRORS = {
    ErrorType.PARAMETER_MISSING: {"missing_param"},
    ErrorType.PARAMETER_ERROR: {"unknown_param"},
    ErrorType.TYPE_ERROR: {"type_mismatch"},
    ErrorType.PARAMETER_INVALID: {"invalid_value", "precondition_failed"},
    ErrorType.TOOL_NAME_ERROR: {"unknown_tool"},
    ErrorType.TOOL_SELECT_ERROR: {"wrong_tool"},
    ErrorType.DEPENDENCE_NULL: {"dependency_missing", "parallel_conflict"},
    ErrorType.PARALLELISM_ERROR: {"parallel_conflict"},
    ErrorType.DEPENDENCE_ERROR: {"wrong_dependency"},
    ErrorType.TOOLCALL_REDUNDANCY: {"redundant_call"},
}


@pytest.mark.parametrize("error", list(PLAN_ERRORS), ids=lambda e: e.value)
def test_each_plan_error_is_what_the_verifier_reports(book: Task, error: ErrorType) -> None:
    plan = plan_of(sim(book, CLEAN.with_only(**{error.value: 1.0})), book)
    assert isinstance(plan, Plan)
    world = task_world(book)
    codes = {f.code.value for f in verify(plan, world.tools, world)}
    assert codes & PLAN_ERRORS[error], codes


def test_serial_and_missing_call_errors() -> None:
    task = parallel_task()
    world = task_world(task)
    plan = plan_of(sim(task, CLEAN.with_only(Serial_Error=1.0)), task)
    assert "unneeded_dependency" in {f.code.value for f in verify(plan, world.tools, world)}
    seen_missing = False
    for seed in range(20):
        plan = plan_of(sim(task, CLEAN.with_only(Toolcall_Missing=0.3), seed), task)
        if isinstance(plan, Plan) and len(plan.call_nodes) < 4:
            codes = {f.code.value for f in verify(plan, world.tools, world)}
            seen_missing |= "missing_call" in codes
    assert seen_missing


def test_malformed_plans_fail_to_parse(book: Task) -> None:
    prof = CLEAN.model_copy(update={"malformed_plan": 1.0})
    reasons = {plan_of(sim(book, prof, seed), book).code for seed in range(12)}
    assert reasons <= {"invalid_json", "no_response", "cycle"} and len(reasons) >= 2


def test_revision_takes_up_findings_at_the_uptake_rate(book: Task) -> None:
    world = task_world(book)
    specs = list(world.tools.values())
    msgs = planner_messages(book.query, specs)
    for uptake in (1.0, 0.0):
        prof = CLEAN.with_only(Parameter_Missing=1.0).model_copy(update={"verifier_uptake": uptake})
        model = sim(book, prof)
        first = model.invoke(msgs).content
        findings = verify(Plan.parse(first), world.tools, world)
        assert findings
        revised = Plan.parse(model.invoke(revision_messages(msgs, first, findings)).content)
        if uptake == 1.0:
            assert verify(revised, world.tools, world) == []
        else:
            assert revised.to_pararecover() == Plan.parse(first).to_pararecover()


# -- purity ----------------------------------------------------------------------------------------
def _requests(task: Task) -> list[tuple[list, list]]:
    world = task_world(task)
    specs = list(world.tools.values())
    tools = [s.to_openai() for s in specs]
    plan_msgs = planner_messages(task.query, specs)
    # a conversation in the middle of a ReAct run: one turn of calls and their results
    mid = executor_messages(task.query)
    turn = sim(task, "novice", 4).bind_tools(tools).invoke(mid)
    mid.append(turn)
    for tc in turn.tool_calls:
        res = world.execute(Call(tool=tc["name"], args=tc["args"]))
        mid.append(ToolMessage(content=observation_text(res.observation), tool_call_id=tc["id"]))
    plan = Plan.parse(booking_gold())
    obs = [{"node": "1", "tool": "search_flights", "args": {}, "result": {"error": "http_503"}}]
    first = "<thought>t</thought>" + plan.to_text()
    findings = verify(plan, world.tools, world)
    return [
        (plan_msgs, []),
        (revision_messages(plan_msgs, first, findings), []),
        (replanner_messages(task.query, specs, plan.to_pararecover(), obs, round_index=1), []),
        (executor_messages(task.query), tools),
        (executor_messages(task.query, plan.to_text()), tools),
        (mid, tools),
    ]


def test_replies_depend_only_on_task_messages_and_tools(book: Task) -> None:
    """Same task, messages and tools: same reply — whatever the fault profile of the task
    instance, the instance of the model, what it answered before, or the thread it runs in."""
    faulty = book.model_copy(
        update={
            "mode": "P2",
            "perturbation": PerturbationProfile(
                mode="P2", victim="search_flights", group="flight_search", kind="http_404"
            ),
            "checker": Checker(graceful=True),
            "metadata": {"victim_tools": ["search_flights"]},
        }
    )
    reqs = _requests(book)
    a, b, c = sim(book, "novice", 7), sim(book, "novice", 7), sim(faulty, "novice", 7)

    def reply(model, msgs, tools):
        return _sig(model.bind_tools(tools).invoke(msgs) if tools else model.invoke(msgs))

    first = [reply(a, m, t) for m, t in reqs]
    assert [reply(b, m, t) for m, t in reversed(reqs)][::-1] == first
    assert [reply(c, m, t) for m, t in reqs] == first
    assert [reply(a, m, t) for m, t in reqs] == first
    out: dict[int, list] = {}
    threads = [
        threading.Thread(target=lambda i=i: out.__setitem__(i, [reply(a, m, t) for m, t in reqs]))
        for i in range(3)
    ]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert all(v == first for v in out.values())


def test_the_seed_matters_for_a_noisy_profile(book: Task) -> None:
    plans = {plan_of(sim(book, "novice", s), book).__repr__() for s in range(12)}
    assert len(plans) > 1


# -- acting ----------------------------------------------------------------------------------------
ACT_ERRORS = {
    ErrorType.TOOL_NAME_ERROR: (1, {ErrorType.TOOL_NAME_ERROR}),
    ErrorType.TOOL_SELECT_ERROR: (1, None),
    ErrorType.PARAMETER_ERROR: (1, {ErrorType.PARAMETER_ERROR}),
    ErrorType.PARAMETER_MISSING: (1, {ErrorType.PARAMETER_MISSING}),
    ErrorType.TYPE_ERROR: (1, {ErrorType.TYPE_ERROR}),
    ErrorType.PARAMETER_INVALID: (1, {ErrorType.PARAMETER_INVALID}),
    ErrorType.DEPENDENCE_NULL: (2, {ErrorType.DEPENDENCE_NULL}),
    ErrorType.DEPENDENCE_ERROR: (3, {ErrorType.PARAMETER_INVALID}),
}


@pytest.mark.parametrize("error", list(ACT_ERRORS), ids=lambda e: e.value)
def test_each_call_error_gets_its_verdict(book: Task, error: ErrorType) -> None:
    fed, types = ACT_ERRORS[error]
    ep = run_episode("react", sim(book, CLEAN.with_only(**{error.value: 1.0})), book)
    rec = prefix_record(ep, book)
    assert rec.fed == fed
    if types is not None:
        assert ErrorType(rec.first_error_type) in types


def test_a_clean_run_books_and_reports(book: Task) -> None:
    ep = run_episode("react", sim(book), book)
    assert ep.success and ep.end_reason.value == "answered"
    assert [s.call.tool for s in ep.steps] == ["search_flights", "quote_flight", "book_flight"]
    assert ep.model == "simulated:expert"
    assert ep.usage.model_calls == 4 and ep.usage.output_tokens > 0
    booking = ep.steps[-1].observation["booking_id"]
    assert booking in ep.final_answer


def test_parallel_steps_go_out_in_one_turn() -> None:
    task = parallel_task()
    ep = run_episode("react", sim(task), task)
    assert [s.round for s in ep.steps] == [1, 1, 2, 2]
    assert prefix_record(ep, task).clean


# -- faults ---------------------------------------------------------------------------------------
def _after_fault(ep) -> list[str]:
    first = next(i for i, s in enumerate(ep.steps) if s.perturbation is not None)
    return [s.call.tool for s in ep.steps[first + 1 :]]


@pytest.mark.parametrize("design", ["react", "replanner_loop"])
def test_reroute_to_the_alternative_after_a_permanent_failure(book: Task, design: str) -> None:
    ep = run_episode(design, sim(book, careful(reroute=1)), book, faults=explicit_faults("P2"))
    assert ep.success
    assert _after_fault(ep)[0] == "find_flight_offers"
    assert "search_flights" not in _after_fault(ep)
    assert recovery_record(ep, book).recovered


@pytest.mark.parametrize("design", ["react", "replanner_loop"])
def test_retry_recovers_a_transient_failure(book: Task, design: str) -> None:
    ep = run_episode(design, sim(book, careful(retry=1)), book, faults=explicit_faults("P1"))
    assert ep.success
    assert _after_fault(ep)[:1] == ["search_flights"]


@pytest.mark.parametrize("design", ["react", "replanner_loop"])
def test_abort_stops_and_says_so(book: Task, design: str) -> None:
    ep = run_episode(design, sim(book, careful(abort=1)), book, faults=explicit_faults("P2"))
    assert _after_fault(ep) == []
    assert "could not" in ep.final_answer and not ep.success


def test_with_no_way_around_it_the_agent_stops_or_presses_on(book: Task) -> None:
    task = book.model_copy(update={"tools": [t for t in TRAVEL_TOOLS if t != "find_flight_offers"]})
    stop = careful(retry=1).model_copy(
        update={
            "on_fault": FaultPolicy(
                retry=1, reroute=0, abort=0, max_retries=1, stubborn=0, press_on=0
            )
        }
    )
    ep = run_episode("react", sim(task, stop), task, faults=explicit_faults("P2"))
    assert [s.call.tool for s in ep.steps] == ["search_flights", "search_flights"]
    assert "could not" in ep.final_answer
    press = stop.model_copy(update={"on_fault": stop.on_fault.model_copy(update={"press_on": 1.0})})
    ep = run_episode("react", sim(task, press), task, faults=explicit_faults("P2"))
    assert "quote_flight" in _after_fault(ep)


def test_an_unnoticed_failure_is_trusted(book: Task) -> None:
    prof = careful(retry=1).model_copy(update={"notice_explicit": 0.0, "notice_implicit": 0.0})
    ep = run_episode("react", sim(book, prof), book, faults=explicit_faults("P1"))
    quote = next(s for s in ep.steps if s.call.tool == "quote_flight")
    assert not quote.verdict.ok  # it passed on a value it never got
    assert not ep.success
    # a careful reader traces the rejected value back to the failed search and retries it
    prof = prof.model_copy(update={"notice_implicit": 1.0})
    ep = run_episode("react", sim(book, prof), book, faults=explicit_faults("P1"))
    assert ep.success
    assert [s.call.tool for s in ep.steps][:3] == [
        "search_flights",
        "quote_flight",
        "search_flights",
    ]


def test_an_implausible_fare_is_noticed_or_passed_on(book: Task) -> None:
    ep = run_episode("react", sim(book, careful(retry=1)), book, faults=price_faults("P3"))
    assert ep.success and str(PRICE_SENTINEL) not in ep.final_answer
    assert _after_fault(ep)[0] == "search_flights"
    assert recovery_record(ep, book).recovered
    trusting = careful(retry=1).model_copy(update={"notice_implicit": 0.0})
    ep = run_episode("react", sim(book, trusting), book, faults=price_faults("P3"))
    assert str(PRICE_SENTINEL) in ep.final_answer
    assert not recovery_record(ep, book).recovered


@pytest.mark.parametrize("design", ["react", "replanner_loop"])
def test_a_tampered_id_is_suspected_when_the_next_tool_rejects_it(book: Task, design: str) -> None:
    ep = run_episode(design, sim(book, careful(retry=1)), book, faults=quote_id_faults("P3"))
    assert ep.success, ep.final_answer
    tools = [s.call.tool for s in ep.steps]
    assert tools.count("quote_flight") == 2 and QUOTE_SENTINEL not in ep.final_answer
    trusting = careful(retry=1).model_copy(update={"notice_implicit": 0.0})
    ep = run_episode(design, sim(book, trusting), book, faults=quote_id_faults("P3"))
    assert not ep.success


@pytest.mark.parametrize("design", ["react", "replanner_loop"])
def test_a_reroute_binds_the_alternative_from_the_query(design: str) -> None:
    """The alternative takes city names where the failed search took airport codes: the
    values come from the query (the suite's own alternative plan is never read)."""
    task = booking_task("hand-alt")
    ep = run_episode(design, sim(task, careful(reroute=1)), task, faults=explicit_faults("P2"))
    assert ep.success
    alt = next(s for s in ep.steps if s.call.tool == "find_flight_offers")
    assert alt.call.args == Plan.parse(alt_booking_plan()).get("1").args


@pytest.mark.parametrize("profile", ["novice", "competent"])
def test_the_replanner_keeps_executed_nodes(book: Task, profile: str) -> None:
    for seed in range(6):
        for faults in (explicit_faults("P1"), explicit_faults("P2"), price_faults("P4")):
            ep = run_episode("replanner_loop", sim(book, profile, seed), book, faults=faults)
            assert ep.end_reason.value != "crashed", ep.error
            changed = [
                f
                for pv in ep.plans
                for f in pv.findings
                if f.code is VerdictCode.EXECUTED_NODE_CHANGED and f.severity == "error"
            ]
            assert changed == []


# -- LangChain surface ---------------------------------------------------------------------------
def test_structured_output_gives_the_plan(book: Task) -> None:
    world = task_world(book)
    msgs = planner_messages(book.query, list(world.tools.values()))
    model = sim(book)
    out = model.with_structured_output(PlanOutput).invoke(msgs)
    assert isinstance(out, PlanOutput)
    assert (
        Plan.parse(out.model_dump()).to_pararecover()
        == Plan.parse(model.invoke(msgs).content).to_pararecover()
    )
    raw = model.with_structured_output(
        {
            "title": "Answer",
            "type": "object",
            "properties": {"reasoning": {"type": "string"}, "plan": {"type": "string"}},
            "required": ["reasoning", "plan"],
        },
        include_raw=True,
    ).invoke(msgs)
    assert raw["parsing_error"] is None
    assert isinstance(Plan.parse(raw["parsed"]["plan"]), Plan) and raw["parsed"]["reasoning"]


@pytest.mark.parametrize("design", DESIGNS)
def test_every_design_runs_to_a_complete_episode(design: str) -> None:
    for seed in range(3):
        task = booking_task()
        ep = run_episode(design, make_model("simulated:novice", task=task, seed=seed), task)
        assert ep.end_reason.value in ("answered", "unparsable_plan", "step_budget", "round_budget")
        assert ep.model == "simulated:novice"
        assert type(ep).from_json(ep.to_json()) == ep
        if ep.end_reason.value == "answered":
            assert ep.final_answer
        if design == "replanner_loop" and ep.end_reason.value == "answered":
            assert ep.metadata.get("answer_source") == "model"


# -- what the model may know -------------------------------------------------------------------
def _hidden_changed(task: Task) -> Task:
    """The task with every field a model must not read withheld or scrambled."""
    return task.model_copy(
        update={
            "gold_plan": None,
            "valid_paths": [["x"], list(reversed(task.tools))],
            "checker": Checker(graceful=True, required_facts=["nothing"]),
            "metadata": {
                "paths": [{"tools": ["x"], "plan": {"tasks": []}}],
                "victim_tools": [],
                "goal": {"goals": [["x", True]], "given": []},
            },
            "min_calls": 99,
            "optimal_rounds": 42,
            "perturbation": PerturbationProfile(mode="P2", victim="quote_flight", kind="http_404"),
        }
    )


def _goal_level_tasks() -> list[Task]:
    """Two goal-level ToolMaze instances (a clean one and one with an implicit fault)."""
    return load_suite("toolmaze", levels="C2", modes="NP,P3", limit=1)


def test_a_goal_level_query_is_planned_from_its_goals_and_the_tools_kinds() -> None:
    """A goal-level query names no step: the plan reaches the goals it names from the values
    it states, through the listed tools' input and output kinds -- one of the task's valid
    paths -- and the run succeeds (the step-list reader found no steps here and planned
    nothing). One task may fail on an answer detail: the clean model leaves out a result whose
    schema has an ``error`` field (workbook_sum), which is not a planning matter."""
    tasks = load_suite("toolmaze", modes="NP", limit=3)
    successes = 0
    for task in tasks:
        plan = plan_of(sim(task), task)
        assert isinstance(plan, Plan)
        tools = sorted(n.tool for n in plan.call_nodes)
        assert tools in [sorted(p) for p in task.valid_paths], task.task_id
        ep = run_episode("plan_conditioned", sim(task), task)
        successes += recovery_record(ep, task).success
    assert successes >= len(tasks) - 1, successes


def _trace(ep) -> list:
    return [
        [(s.call.tool, s.call.args, s.verdict.code.value) for s in ep.steps],
        ep.final_answer,
        [pv.text for pv in ep.plans],
    ]


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("profile", ["novice", "competent"])
def test_behaviour_does_not_depend_on_the_tasks_hidden_fields(design: str, profile: str) -> None:
    """Withholding the gold plan, scrambling the paths, checker, costs and fault profile of
    the task the model is built for changes nothing it does: it plans, fixes and reroutes from
    the query, the tool list and what it observes (the world keeps the real faults)."""
    for seed in range(3):
        for task, faults in (
            (booking_task(), lambda: explicit_faults("P2")),
            (booking_task(), lambda: quote_id_faults("P3")),
            (parallel_task(), lambda: None),
            *((t, lambda t=t: injector_for(t)) for t in _goal_level_tasks()),
        ):
            real = run_episode(design, sim(task, profile, seed), task, faults=faults(), seed=seed)
            blind = run_episode(
                design,
                sim(_hidden_changed(task), profile, seed),
                task,
                faults=faults(),
                seed=seed,
            )
            assert real.end_reason.value != "crashed", real.error
            assert _trace(blind) == _trace(real)


def test_a_task_without_gold_plan_is_planned_from_the_query() -> None:
    task = booking_task(gold_plan=None)
    world = task_world(task)
    plan = Plan.parse(
        sim(task).invoke(planner_messages(task.query, list(world.tools.values()))).content
    )
    assert isinstance(plan, Plan)
    assert [n.tool for n in plan.call_nodes] == ["search_flights", "quote_flight", "book_flight"]


# -- ParaRecover instances (no gold plan) ---------------------------------------------------------
@pytest.mark.parametrize("profile", ["novice", "expert"])
def test_a_pararecover_instance_is_replanned_from_what_it_shows(profile: str) -> None:
    """A dataset instance has no gold plan: the replanner works from the query, the tool list,
    the current plan and the failure it is shown -- and renames a wrongly named argument, the
    fix its error message makes possible."""
    from replan.graphs import run_episode
    from replan.nodes.config import AgentConfig
    from replan.samples import PARARECOVER_SAMPLE_FILES
    from replan.suites import load_suite
    from replan.suites.pararecover import PROTOCOL_BUDGETS

    tasks = load_suite("pararecover", path=str(PARARECOVER_SAMPLE_FILES[1]))
    assert tasks and not any(t.gold_plan for t in tasks)
    fixed = 0
    for task in tasks:
        ep = run_episode(
            "replanner_loop", sim(task, profile), task, config=AgentConfig(**PROTOCOL_BUDGETS)
        )
        assert ep.end_reason.value not in ("crashed", "model_error"), ep.error
        assert ep.plans[-1].parse_ok, ep.plans[-1].parse_error
        fixed += ep.success
    assert fixed >= 1


def test_a_value_stated_for_one_parameter_is_not_taken_for_another() -> None:
    """ "IATA code of the arrival airport: SCL" is the destination; the origin is not SCL even
    though it is the only airport code the query states (toolmaze-C4-004-NP wrote SCL -> SCL
    with every error rate at 0). The origin then comes from a tool, as the gold plan has it."""
    from replan.env.corpus import load_corpus
    from replan.models.simulated.visible import View, param_kind

    corpus = load_corpus()
    spec = corpus.tools["search_flights"]
    query = (
        "Search one-way flights. Use these values: IATA code of the arrival airport: SCL; "
        "departure date: 2027-01-14."
    )
    view = View(query, {spec.name: spec}, corpus.kinds)
    kind = param_kind(spec, "origin")
    assert kind == param_kind(spec, "destination")  # same kind: only the label tells them apart
    assert view.literal_of_kind(kind, {}, None, spec, "destination") == "SCL"
    assert view.literal_of_kind(kind, {}, None, spec, "origin") != "SCL"
    assert view.literal_of_kind(kind, {}, None) == "SCL"  # without the parameter: any of kind
