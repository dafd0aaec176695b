"""Agent configuration: the budgets every design runs under, and how model calls retry.

One pydantic model for all four designs, so that a comparison runs every design under the same
limits and the limits travel with each Episode (``Episode.budgets``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class RetrySettings(BaseModel):
    """Bounded exponential backoff with jitter for transient model failures (429, 5xx, ...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_attempts: int = Field(4, ge=1, description="attempts per model call, first included")
    initial_wait_s: float = Field(0.5, ge=0, description="wait before the first retry")
    max_wait_s: float = Field(8.0, ge=0, description="cap of one wait")
    jitter_s: float = Field(0.5, ge=0, description="uniform random extra wait, at most")


class AgentConfig(BaseModel):
    """Budgets and options of one agent run.

    ``max_steps``: tool calls a ReAct executor may make (react, plan_conditioned, dual_loop).
    ``max_rounds``: frontier waves of the replanner loop (a round = one wave); from a replan
    point the rounds already run count too (the waves continue their numbering).
    ``max_replans``: plans the replanner loop's replanner may write (``None``: no limit). Once
    spent, the model is not asked again: the plan's remaining waves run, a call that fails ends
    the run (``call_failed``), and the answer is the plan's results. ParaRecover's protocol
    from a replan point (one replan, then waves to the end) is ``max_replans=1``.
    ``max_plan_iterations``: verifier passes of Dual-Loop (the first plan counts as one; the
    planner revises after each failing pass while passes remain).
    ``max_wall_s``: wall time per episode, checked before every node (``None``: unlimited).
    ``hint``: use the failure-aware prompt variant (ToolMaze "w/ hint").
    ``plan_format``: ``"text"`` asks for the ParaRecover text contract and parses it with the
    tolerant parser; ``"structured"`` asks through ``model.with_structured_output``.
    ``max_parallel``: how many calls of one frontier wave run at once (``None``: all of them;
    ``1``: one call at a time, the sequential baseline). Enforced by the wave itself, not by
    LangGraph's ``max_concurrency`` (whose pool also hosts the stream waiter).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_steps: int = Field(25, ge=1)
    max_rounds: int = Field(20, ge=1)
    max_plan_iterations: int = Field(3, ge=1)
    max_replans: int | None = Field(None, ge=0)
    max_wall_s: float | None = Field(None, gt=0)
    hint: bool = False
    plan_format: Literal["text", "structured"] = "text"
    max_parallel: int | None = Field(None, ge=1)
    retry: RetrySettings = Field(default_factory=RetrySettings)

    def budgets(self) -> dict[str, Any]:
        """The budgets as recorded in ``Episode.budgets`` (``max_replans`` only when set, so
        the budgets of runs without it read as before)."""
        out: dict[str, Any] = {
            "max_steps": self.max_steps,
            "max_rounds": self.max_rounds,
            "max_plan_iterations": self.max_plan_iterations,
            "max_wall_s": self.max_wall_s,
        }
        if self.max_replans is not None:
            out["max_replans"] = self.max_replans
        return out

    def recursion_limit(self) -> int:
        """A LangGraph superstep limit that our own budgets always reach first."""
        return 4 * (self.max_steps + self.max_rounds + self.max_plan_iterations) + 25
