"""Every prompt replan sends to a model, in one place.

Each request starts its system message with a tag line (``[replan:plan]``, ``[replan:replan]``,
``[replan:act]``; a revision, ``[replan:revise]``, starts its last human message instead, so that
the planning conversation it continues is resent byte for byte and a server's prefix cache
reuses it): it tells any model what is asked in one line, and it
lets the simulated model (``replan.models.simulated``) tell a planning request from an acting
one without knowing which agent design sent it. The same request kinds are sent by every design.
The tags, section markers, tool rendering and observation format are the wire format of
:mod:`replan.core.wire`, which the models and the judge read requests with.

The planning contract follows ParaRecover: a thought, then one compact JSON DAG with ``root``
and ``response`` nodes, dependencies only where data flows, references ``${node.field}``.
The failure-aware variant (ToolMaze's "w/ hint") adds advice on faults; it is chosen per run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from replan.core.tools import ToolSpec
from replan.core.trace import Finding
from replan.core.wire import (
    CURRENT_PLAN_MARKER,
    EXECUTED_PLAN_MARKER,
    LAST_WAVE_MARKER,
    PLAN_MARKER,
    QUERY_PREFIX,
    RESPONDER_INSTRUCTION,
    ROUND_PREFIX,
    TAGS,
    TOOLS_MARKER,
    RequestKind,
    format_observation,
    render_tools,
    request_kind,
)

PLAN_CONTRACT = """Write your reasoning inside <thought>...</thought>, then ONE compact JSON object:
{"tasks": [
  {"id": "root", "desc": "<the user's request>", "dep": [], "status": true},
  {"id": "1", "name": "<tool name>", "para": {"<param>": <value>}, "desc": "<why>", "dep": ["root"], "status": false},
  {"id": "2", "name": "<tool name>", "para": {"<param>": "${1.<output field>}"}, "desc": "<why>", "dep": ["1"], "status": false},
  {"id": "response", "desc": "answer the user", "dep": ["2"], "status": false}
]}
Rules: use only the listed tools and their exact parameter names; give every required parameter;
values must have the declared type; to use an earlier result write "${<node id>.<field>}" and list
that node in "dep"; add a dependency only where data flows, so independent calls run in parallel;
"status" is true only for nodes already executed."""

FAILURE_HINT = """Tools can fail. An explicit failure (an error, 404, 429, 503, timeout, empty
result) may be transient: retry once, then switch to an alternative tool that gives the same
result. A tool can also return plausible but wrong data (a negative stock, a price a thousand times
too high, a date decades away): check results for sense before using them, and do not pass a
suspicious value on; prefer an alternative tool. If no way to finish remains, stop and say so
clearly instead of calling tools that depend on the failed step."""


def _system(kind: RequestKind, body: str, hint: bool) -> SystemMessage:
    text = f"{TAGS[kind]}\n{body}"
    if hint:
        text += "\n\n" + FAILURE_HINT
    return SystemMessage(content=text)


def planner_messages(
    query: str, tools: Sequence[ToolSpec], *, hint: bool = False
) -> list[BaseMessage]:
    """Ask for a first plan."""
    body = (
        "You are a planner for a tool-using agent. Plan the calls needed to complete the user's "
        "request as a DAG.\n\n" + PLAN_CONTRACT + "\n\n" + TOOLS_MARKER + render_tools(tools)
    )
    return [_system("plan", body, hint), HumanMessage(content=query)]


def format_findings(findings: Sequence[Finding]) -> str:
    """Verifier findings as the planner reads them (one JSON object per line)."""
    return "\n".join(
        json.dumps(
            {
                "node": f.node,
                "param": f.param,
                "problem": f.code.value,
                "type": f.error_type.value if f.error_type else None,
                "message": f.message,
            },
            ensure_ascii=False,
        )
        for f in findings
    )


def revision_messages(
    previous: Sequence[BaseMessage],
    plan_text: str,
    findings: Sequence[Finding],
) -> list[BaseMessage]:
    """Ask the planner to revise its plan after the verifier's findings: the planning
    conversation ``previous`` as it was sent (the failure hint, when the run uses it, is in its
    system message), the plan, and the findings in a human message tagged ``[replan:revise]``.
    Nothing before the findings changes, so llama.cpp, vLLM and providers' prompt caches reuse
    the whole planning request instead of evaluating it again."""
    return [
        *previous,
        AIMessage(content=plan_text),
        HumanMessage(
            content=TAGS["revise"]
            + "\nA verifier checked your plan against the tools and found problems:\n"
            + format_findings(findings)
            + "\nWrite the corrected plan, following the same contract."
        ),
    ]


def replanner_messages(
    query: str,
    tools: Sequence[ToolSpec],
    plan_json: Mapping[str, Any],
    observations: Sequence[Mapping[str, Any]],
    *,
    round_index: int,
    hint: bool = False,
) -> list[BaseMessage]:
    """Ask for an updated DAG after a wave ran. Executed nodes must stay as they are."""
    body = (
        "You are the replanner of a tool-using agent that runs a plan DAG wave by wave. Below "
        "are the current plan (nodes with status true have run) and the results of the last "
        "wave. Decide whether each result is usable; update the plan: keep executed nodes "
        "unchanged, fix or replace failed or wrong steps, add what is missing. When everything "
        "needed has run, leave only the response node pending.\n\n"
        + PLAN_CONTRACT
        + "\n\n"
        + TOOLS_MARKER
        + render_tools(tools)
    )
    obs = "\n".join(json.dumps(o, ensure_ascii=False, default=str) for o in observations)
    return [
        _system("replan", body, hint),
        HumanMessage(
            content=f"{QUERY_PREFIX}{query}{ROUND_PREFIX}{round_index}. {CURRENT_PLAN_MARKER}"
            + json.dumps(plan_json, ensure_ascii=False)
            + "\n\n"
            + LAST_WAVE_MARKER
            + (obs or "(none)")
        ),
    ]


def executor_messages(
    query: str, plan_text: str | None = None, *, hint: bool = False
) -> list[BaseMessage]:
    """Start a ReAct executor: call tools one step at a time, then answer in plain text."""
    body = (
        "You are a tool-using assistant. Call the tools you need, one or more per turn, using "
        "exact parameter names and values of the declared types. Read every result before the "
        "next step. When you are done, answer the user in plain text with the facts they asked "
        "for (ids, amounts, dates)."
    )
    if plan_text:
        body += "\n\n" + PLAN_MARKER + plan_text
    return [_system("act", body, hint), HumanMessage(content=query)]


def responder_messages(
    query: str,
    transcript: Sequence[BaseMessage],
    plan_text: str | None = None,
    *,
    hint: bool = False,
) -> list[BaseMessage]:
    """Ask for the final answer once a plan's calls have run (the replanner loop's response node).

    It is an acting request (``[replan:act]``) whose transcript already holds every executed
    call (an AI message with the calls, then one tool message per result), so any model — and
    the simulated one — reads it as a ReAct run whose next move is the answer.
    """
    body = (
        "You are a tool-using assistant. The calls below were made for the user's request "
        "(their results follow as tool messages). "
        + RESPONDER_INSTRUCTION
        + ": answer the user now "
        "in plain text with the facts they asked for (ids, amounts, dates). If a needed step "
        "failed, say clearly what could not be done."
    )
    if plan_text:
        body += "\n\n" + EXECUTED_PLAN_MARKER + plan_text
    return [_system("act", body, hint), HumanMessage(content=query), *transcript]


__all__ = [
    "FAILURE_HINT",
    "PLAN_CONTRACT",
    "TAGS",
    "RequestKind",
    "executor_messages",
    "format_findings",
    "format_observation",
    "planner_messages",
    "render_tools",
    "replanner_messages",
    "request_kind",
    "responder_messages",
    "revision_messages",
]
