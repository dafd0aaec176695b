"""Planner, reviser and verifier nodes: write a plan, check it statically, revise it.

Every plan the model writes becomes a :class:`~replan.core.trace.PlanVersion` with its thought,
its text and its parse verdict (``Plan.parse``: the S5 check). The planner asks in the
ParaRecover text contract by default; with ``plan_format="structured"`` it asks through the
model's own ``with_structured_output`` and parses the result with the same parser, so the parse
verdict means the same thing either way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field

from replan.core.plan import ParseFailure, Plan
from replan.core.taxonomy import VerdictCode
from replan.core.trace import EndReason, Finding, PlanVersion
from replan.env.verifier import verify
from replan.env.world import World
from replan.nodes.config import AgentConfig
from replan.nodes.episode import InputSource
from replan.nodes.events import emit
from replan.nodes.executor import text_of
from replan.nodes.llm import ModelCallError, ModelReply, call_model
from replan.nodes.prompts import planner_messages, revision_messages
from replan.nodes.state import AgentState, Node, ended, finish, out_of_time


class PlanTask(BaseModel):
    """One node of a plan DAG (ParaRecover field names)."""

    id: str = Field(description='node id: "root", "1", "2", ..., "response"')
    name: str | None = Field(None, description="tool to call (none for root and response)")
    para: dict[str, Any] = Field(
        default_factory=dict, description='arguments; "${<node id>.<field>}" uses an output'
    )
    desc: str = Field("", description="why this node")
    dep: list[str] = Field(default_factory=list, description="ids of the nodes this one needs")
    status: bool = Field(False, description="true only for nodes already executed")


class PlanOutput(BaseModel):
    """A plan: the reasoning behind it, then the DAG of tool calls."""

    thought: str = Field("", description="your reasoning")
    tasks: list[PlanTask]


def request_plan(
    model: BaseChatModel, messages: list[BaseMessage], cfg: AgentConfig
) -> tuple[str, Plan | ParseFailure, ModelReply]:
    """Ask ``model`` for a plan; returns (the text as written, the parse result, the reply)."""
    if cfg.plan_format == "structured":
        runnable = model.with_structured_output(PlanOutput, include_raw=True)
        reply = call_model(runnable, messages, retry=cfg.retry)
        out = reply.output if isinstance(reply.output, dict) else {"parsed": reply.output}
        parsed = out.get("parsed")
        if isinstance(parsed, BaseModel):
            parsed = parsed.model_dump()
        if isinstance(parsed, dict):
            return json.dumps(parsed, ensure_ascii=False), Plan.parse(parsed), reply
        raw = out.get("raw")
        text = text_of(raw)
        if not text and getattr(raw, "tool_calls", None):
            text = json.dumps(raw.tool_calls[0].get("args"), ensure_ascii=False)
        return text, Plan.parse(text), reply
    reply = call_model(model, messages, retry=cfg.retry)
    text = text_of(reply.output)
    return text, Plan.parse(text), reply


def plan_version(
    index: int, round: int, source: str, text: str, parsed: Plan | ParseFailure
) -> PlanVersion:
    """The record of one plan the model wrote (parse verdict included)."""
    ok = isinstance(parsed, Plan)
    return PlanVersion(
        index=index,
        round=round,
        source=source,  # type: ignore[arg-type]
        thought=parsed.thought,
        text=text,
        plan=parsed.to_pararecover() if ok else None,
        parse_ok=ok,
        parse_error=None if ok else f"{parsed.code}: {parsed.reason}",  # type: ignore[union-attr]
    )


def announce(pv: PlanVersion) -> None:
    emit(
        "plan",
        index=pv.index,
        source=pv.source,
        round=pv.round,
        parse_ok=pv.parse_ok,
        findings=len(pv.findings),
        approved=pv.approved,
    )


def executor_plan_text(pv: PlanVersion, parsed: Plan | None) -> str:
    """What a ReAct executor reads as its plan: the parsed DAG as compact JSON, else the text."""
    return parsed.to_text() if parsed else pv.text


def make_planner_node(inputs: InputSource, cfg: AgentConfig) -> Node:
    """Node: the first plan (``planner_messages``)."""

    def planner(state: AgentState) -> dict[str, Any]:
        if late := out_of_time(state, cfg):
            return late
        episode = inputs()
        specs = list(episode.world.tools.values())
        messages = planner_messages(state["query"], specs, hint=cfg.hint)
        try:
            text, parsed, reply = request_plan(episode.model, messages, cfg)
        except ModelCallError as exc:
            return finish(EndReason.MODEL_ERROR, error=exc.message)
        pv = plan_version(len(state.get("plans") or []), 0, "planner", text, parsed)
        announce(pv)
        plan = parsed if isinstance(parsed, Plan) else None
        return {
            "plans": [pv],
            "plan": plan,
            "plan_text": executor_plan_text(pv, plan),
            "plan_messages": messages,
            "usage": reply.usage,
        }

    return planner


def make_reviser_node(inputs: InputSource, cfg: AgentConfig) -> Node:
    """Node: revise the last plan after the verifier's findings (``revision_messages``)."""

    def revise(state: AgentState) -> dict[str, Any]:
        if late := out_of_time(state, cfg):
            return late
        plans = state.get("plans") or []
        last = plans[-1]
        messages = revision_messages(state["plan_messages"], last.text, last.findings)
        try:
            text, parsed, reply = request_plan(inputs().model, messages, cfg)
        except ModelCallError as exc:
            return finish(EndReason.MODEL_ERROR, error=exc.message)
        pv = plan_version(len(plans), 0, "revision", text, parsed)
        announce(pv)
        plan = parsed if isinstance(parsed, Plan) else None
        return {
            "plans": [pv],
            "plan": plan,
            "plan_text": executor_plan_text(pv, plan),
            "plan_messages": messages,
            "usage": reply.usage,
        }

    return revise


def plan_findings(pv: PlanVersion, plan: Plan | None, world: World) -> list[Finding]:
    """The verifier's findings for a plan version (a parse failure is one ``invalid_plan``)."""
    if plan is None:
        return [
            Finding(
                node="plan",
                code=VerdictCode.INVALID_PLAN,
                message=f"the plan could not be read: {pv.parse_error}",
            )
        ]
    return verify(plan, world.tools, world)


def make_verifier_node(inputs: InputSource, cfg: AgentConfig) -> Node:
    """Node: check the latest plan with the deterministic verifier; approve it or not.

    A plan is approved when no finding has severity ``error`` (warnings such as an unneeded
    dependency are reported but do not block). Findings and approval are written onto the
    plan version (``PlanVersion.findings`` / ``approved``).
    """

    def verifier(state: AgentState) -> dict[str, Any]:
        if late := out_of_time(state, cfg):
            return late
        pv = (state.get("plans") or [])[-1]
        world = inputs().world
        here = World(world.tools, state["world"], world.seed)
        findings = plan_findings(pv, state.get("plan"), here)
        approved = not any(f.severity == "error" for f in findings)
        checked = pv.model_copy(update={"findings": findings, "approved": approved})
        announce(checked)
        return {"plans": [checked]}

    return verifier


def route_after_verifier(cfg: AgentConfig) -> Callable[[AgentState], str]:
    """Approved, or out of verifier passes → executor; otherwise → revise."""

    def route(state: AgentState) -> str:
        if ended(state):
            return "__end__"
        plans = state.get("plans") or []
        if plans[-1].approved or len(plans) >= cfg.max_plan_iterations:
            return "executor"
        return "revise"

    return route


__all__ = [
    "PlanOutput",
    "PlanTask",
    "announce",
    "executor_plan_text",
    "make_planner_node",
    "make_reviser_node",
    "make_verifier_node",
    "plan_findings",
    "plan_version",
    "request_plan",
    "route_after_verifier",
]
