"""The wire format of replan's prompts: the parts of a request that a program reads back.

The prompts (:mod:`replan.nodes.prompts`) write requests with these pieces; the simulated model,
the local model and the SDE judge read requests (or show evidence) with the same pieces, so no
prompt text is ever retyped as a parse key. Each request's system message starts with a tag
line (``[replan:plan]``, ``[replan:replan]``, ``[replan:act]``) that names its kind; a revision
request is the planning conversation continued, unchanged, with a human message that starts with
``[replan:revise]`` (so a server's prefix cache reuses the whole planning request: the tag is the
last thing to differ, not the first). Sections start with the markers below; tool lists and
observations are one JSON object per line.

Pure text: no LangChain import (a message is anything with ``type`` and ``content``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from replan.core import linre
from replan.core.tools import ToolSpec

RequestKind = Literal["plan", "revise", "replan", "act"]
REQUEST_KINDS: tuple[RequestKind, ...] = ("plan", "revise", "replan", "act")
#: the first line of a request's system message (``revise``: of the last human message of a
#: planning conversation, after the plan)
TAGS: dict[str, str] = {k: f"[replan:{k}]" for k in REQUEST_KINDS}

#: the tool list follows this line, one JSON object per tool (:func:`render_tools`)
TOOLS_MARKER = "Available tools (one JSON per line):\n"
#: an executor's plan follows this line (plan-conditioned designs)
PLAN_MARKER = "Follow this plan (a DAG; ${node.field} means the output of that node):\n"
#: the responder's instruction (an acting request that must be answered, not acted on)
RESPONDER_INSTRUCTION = "Do not call more tools"
#: the responder's executed plan follows this line
EXECUTED_PLAN_MARKER = "The plan that was executed:\n"
#: the replanner's human message: ``QUERY_PREFIX + query + ROUND_PREFIX + n + ". " + ...``
QUERY_PREFIX = "User request: "
ROUND_PREFIX = "\n\nRound "
#: the current plan (one JSON value) follows this line in a replanner request
CURRENT_PLAN_MARKER = "Current plan:\n"
#: the last wave's observations follow this line, one JSON object per call
LAST_WAVE_MARKER = "Results of the last wave (one JSON per line):\n"


def render_tools(tools: Iterable[ToolSpec]) -> str:
    """The tool list as the model sees it: name, description, parameters, output fields."""
    lines = []
    for t in tools:
        params = {
            k: {kk: vv for kk, vv in v.items() if not kk.startswith("x-")}
            for k, v in t.parameters["properties"].items()
        }
        out = list((t.returns.get("properties") or {}).keys())
        lines.append(
            json.dumps(
                {
                    "name": t.name,
                    "description": t.description,
                    "parameters": params,
                    "required": list(t.parameters["required"]),
                    "returns": out,
                },
                ensure_ascii=False,
            )
        )
    return "\n".join(lines)


def format_observation(node: str | None, tool: str, args: Mapping[str, Any], result: Any) -> str:
    """One executed call as the replanner (and the judge) reads it: one JSON object."""
    return json.dumps(
        {"node": node, "tool": tool, "args": args, "result": result},
        ensure_ascii=False,
        default=str,
    )


def _tag_of(message: Any) -> RequestKind | None:
    first = str(getattr(message, "content", "")).split("\n", 1)[0].strip()
    return next((k for k, tag in TAGS.items() if first == tag), None)  # type: ignore[return-value]


def request_kind(messages: Sequence[Any]) -> RequestKind | None:
    """Which request a message list is: the tag line of its system message, except that a
    planning conversation continued (after the model's plan) by a last human message tagged
    ``[replan:revise]`` is a revision. A user's query that happens to start with a tag line
    names nothing. ``None``: no system message, or one without a tag line."""
    system = next((m for m in messages if getattr(m, "type", None) == "system"), None)
    kind = _tag_of(system) if system is not None else None
    if kind == "plan" and len(messages) > 2:
        last, before = messages[-1], messages[:-1]
        if (
            getattr(last, "type", None) == "human"
            and any(getattr(m, "type", None) == "ai" for m in before)
            and _tag_of(last) == "revise"
        ):
            return "revise"
    return kind


def json_lines(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a one-object-per-line section (other lines are skipped)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def read_replanner_request(text: str) -> tuple[Any, list[dict[str, Any]]]:
    """(current plan JSON, last-wave observations) from a replanner request's human message."""
    plan_json: Any = None
    m = linre.search(linre.escape(CURRENT_PLAN_MARKER.rstrip("\n")) + r"\s*\n", text)
    if m:
        try:
            plan_json, _ = json.JSONDecoder().raw_decode(text[m.end() :].lstrip())
        except json.JSONDecodeError:
            plan_json = None
    head = LAST_WAVE_MARKER.split(" (", 1)[0]
    obs_text = text.split(head, 1)[1] if head in text else ""
    return plan_json, json_lines(obs_text)


def query_of(text: str) -> str:
    """The user's request from a human message (a replanner request quotes it)."""
    if text.startswith(QUERY_PREFIX):
        return text[len(QUERY_PREFIX) :].split(ROUND_PREFIX, 1)[0]
    return text
