"""Pure data and algorithms: tool specs, plans, traces, the error taxonomy (no LangGraph)."""

from replan.core.plan import ParseFailure, Plan, PlanNode, Reference
from replan.core.taxonomy import ErrorType, VerdictCode
from replan.core.tools import Effect, Precondition, ToolSpec
from replan.core.trace import (
    Call,
    EndReason,
    Episode,
    Finding,
    Perturbation,
    PlanVersion,
    Step,
    Usage,
    Verdict,
)

__all__ = [
    "Call",
    "Effect",
    "EndReason",
    "Episode",
    "ErrorType",
    "Finding",
    "ParseFailure",
    "Perturbation",
    "Plan",
    "PlanNode",
    "PlanVersion",
    "Precondition",
    "Reference",
    "Step",
    "ToolSpec",
    "Usage",
    "Verdict",
    "VerdictCode",
]
