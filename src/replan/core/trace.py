"""The one trace format: every agent produces an :class:`Episode`, every evaluator reads one.

Episodes serialise to JSON losslessly (``Episode.model_validate_json(ep.to_json()) == ep``), so
a saved trace can be scored later with nothing running.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from replan.core.taxonomy import ErrorType, VerdictCode


class Call(BaseModel):
    """One tool invocation as the agent issued it (references unresolved)."""

    model_config = ConfigDict(frozen=True)

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    node_id: str | None = None
    call_id: str | None = None


class Verdict(BaseModel):
    """The world's judgement of one call in one state: ``ok`` or an error code."""

    model_config = ConfigDict(frozen=True)

    code: VerdictCode = VerdictCode.OK
    message: str = ""
    param: str | None = None

    @property
    def ok(self) -> bool:
        return self.code is VerdictCode.OK

    @property
    def error_type(self) -> ErrorType | None:
        return self.code.error_type

    @classmethod
    def okay(cls) -> Verdict:
        return _OK_VERDICT


_OK_VERDICT = Verdict()


class Perturbation(BaseModel):
    """An injected fault that shaped an observation (never a verdict against the agent)."""

    mode: Literal["P1", "P2", "P3", "P4"]
    explicit: bool
    permanent: bool
    kind: str  # e.g. "http_404", "http_429", "http_503", "timeout", "empty", "price_x1000"
    victim: str
    group: str | None = None
    sentinel: Any = None
    invocation: int = 1
    #: every value an implicit fault wrote: ``{"field", "kind", "original", "sentinel"}`` (the
    #: first one's sentinel is ``sentinel``); empty where only the sentinel is known
    corrupted: list[dict[str, Any]] = Field(default_factory=list)
    #: why that field was corrupted: ``"consumed"`` (a clean run used it), ``"named"`` (you
    #: named it), ``"first"`` (the engine's first choice, not known to be used); ``None``: a
    #: suite's own fault
    aim: str | None = None


class Step(BaseModel):
    """One executed call: what was asked, the verdict, what came back, and in which round."""

    index: int
    round: int = 0
    call: Call
    resolved_args: dict[str, Any] | None = None
    verdict: Verdict = Field(default_factory=Verdict)
    observation: Any = None
    perturbation: Perturbation | None = None
    duration_s: float = 0.0


class Finding(BaseModel):
    """A static-verifier finding about one plan node, in words a planner can act on."""

    model_config = ConfigDict(frozen=True)

    node: str
    code: VerdictCode
    error_type: ErrorType | None = None
    param: str | None = None
    message: str = ""
    severity: Literal["error", "warning"] = "error"


class PlanVersion(BaseModel):
    """One plan the agent wrote, with the thought that produced it and its parse verdict."""

    index: int
    round: int = 0
    source: Literal["planner", "revision", "replanner"] = "planner"
    thought: str = ""
    text: str = ""
    plan: dict[str, Any] | None = None  # ParaRecover JSON when parsed
    parse_ok: bool = True
    parse_error: str | None = None
    findings: list[Finding] = Field(default_factory=list)
    approved: bool | None = None


class EndReason(StrEnum):
    ANSWERED = "answered"
    GAVE_UP = "gave_up"
    STEP_BUDGET = "step_budget"
    ROUND_BUDGET = "round_budget"
    MODEL_ERROR = "model_error"
    TIMEOUT = "timeout"
    UNPARSABLE_PLAN = "unparsable_plan"
    CRASHED = "crashed"
    #: a call failed after the last replan the run was allowed (a replan point's one replan)
    CALL_FAILED = "call_failed"
    #: pending call nodes that can never run (their dependencies failed or never ran)
    STUCK = "stuck"


#: end reasons that mean the episode did not run to a verdict of its own (an infrastructure
#: failure: stored, counted as failures, reported separately, retried by a resume)
FAILURE_END_REASONS = frozenset(
    r.value for r in (EndReason.MODEL_ERROR, EndReason.CRASHED, EndReason.TIMEOUT)
)


class Usage(BaseModel):
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tool_calls: int = 0
    wall_time_s: float = 0.0


class Episode(BaseModel):
    """A complete run of one agent on one task."""

    episode_id: str
    task_id: str
    suite: str = ""
    design: str = ""
    model: str = ""
    seed: int = 0
    mode: str | None = None  # perturbation mode of the task instance: NP, P1..P4
    query: str = ""
    steps: list[Step] = Field(default_factory=list)
    plans: list[PlanVersion] = Field(default_factory=list)
    final_answer: str | None = None
    end_reason: EndReason = EndReason.ANSWERED
    error: str | None = None
    success: bool | None = None
    usage: Usage = Field(default_factory=Usage)
    budgets: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def calls(self) -> list[Call]:
        return [s.call for s in self.steps]

    @property
    def rounds(self) -> int:
        """Rounds actually used: the number of distinct round indices among steps."""
        return len({s.round for s in self.steps})

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str | bytes) -> Episode:
        return cls.model_validate_json(text)


def is_failure(episode: Episode) -> bool:
    """An infrastructure failure (end reason in :data:`FAILURE_END_REASONS`: model error, crash,
    timeout): the run never reached a verdict of the agent's own."""
    return episode.end_reason.value in FAILURE_END_REASONS
