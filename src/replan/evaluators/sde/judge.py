"""The LLM judge of the 13 judged SDE items: pydantic reply models, the prompts (the rubric's
prose is data, ``rubric.toml``) and :class:`SDEJudge` with retries."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_validator

from replan.core.wire import format_observation, render_tools
from replan.evaluators.sde.context import (
    ReplanContext,
)
from replan.evaluators.sde.items import (
    ALLOWED,
)


# ----------------------------------------------------------------------------------------------
# the LLM judge
class ItemScore(BaseModel):
    """One rubric item: a score of exactly 1, 0.5 or 0, and the reason for it."""

    score: float = Field(description="exactly one of 1, 0.5, 0")
    reason: str = Field(description="one or two sentences citing the evidence")

    @field_validator("score", mode="before")
    @classmethod
    def _number(cls, v: Any) -> Any:
        if isinstance(v, str):
            try:
                return float(v.strip())
            except ValueError as exc:
                raise ValueError(f"score must be 1, 0.5 or 0, got {v!r}") from exc
        return v

    @field_validator("score")
    @classmethod
    def _anchor(cls, v: float) -> float:
        if v not in ALLOWED:
            raise ValueError(f"score must be 1, 0.5 or 0, got {v}")
        return float(v)


class StructuralIntegrity(BaseModel):
    """Scores for S1-S4 of the SDE rubric."""

    S1: ItemScore
    S2: ItemScore
    S3: ItemScore
    S4: ItemScore


class DiagnosticReasoning(BaseModel):
    """Scores for D1-D5 of the SDE rubric."""

    D1: ItemScore
    D2: ItemScore
    D3: ItemScore
    D4: ItemScore
    D5: ItemScore


class EvolutionaryStrategy(BaseModel):
    """Scores for E1-E4 of the SDE rubric."""

    E1: ItemScore
    E2: ItemScore
    E3: ItemScore
    E4: ItemScore


#: the reply model of each dimension group, by the name ``rubric.toml`` gives it
_MODELS: dict[str, type[BaseModel]] = {
    m.__name__: m for m in (StructuralIntegrity, DiagnosticReasoning, EvolutionaryStrategy)
}
RUBRIC_FILE = Path(__file__).with_name("rubric.toml")


def load_rubric(
    path: str | Path = RUBRIC_FILE,
) -> tuple[str, dict[str, tuple[type[BaseModel], str]]]:
    """The judge's role and, per dimension group, its reply model and anchors, from the rubric's
    data file (the prose is data: it changes without touching code)."""
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    role = data.pop("role")
    groups = {}
    for group, entry in data.items():
        if entry.get("model") not in _MODELS:
            raise ValueError(f"{path}: [{group}] names no reply model ({entry.get('model')!r})")
        groups[group] = (_MODELS[entry["model"]], entry["anchors"])
    return role, groups


_JUDGE_ROLE, RUBRIC = load_rubric()


def _dump(value: Any, limit: int = 6000) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 20] + " ...[truncated]"


def judge_inputs(ctx: ReplanContext) -> str:
    """The evidence block every judge prompt shows."""
    tools = render_tools(ctx.tools.values()) if ctx.tools else "(tool specifications unknown)"
    prev = ctx.previous
    prev_text = (
        _dump(prev.plan if prev.plan is not None else prev.text) if prev is not None else "(none)"
    )
    results = []
    for s in ctx.window:
        obs = json.loads(
            format_observation(s.call.node_id, s.call.tool, s.call.args, s.observation)
        )
        if not s.verdict.ok:
            obs["verdict"] = {"code": s.verdict.code.value, "message": s.verdict.message}
        results.append(json.dumps(obs, ensure_ascii=False, default=str))
    new = ctx.target
    query = ctx.episode.query or (ctx.task.query if ctx.task is not None else "")
    return (
        f"## Original user task\n{query}\n\n## Available tools (one JSON per line)\n{tools}\n\n"
        f"## Previous plan\n{prev_text}\n\n## Results of the previous plan's last wave\n"
        + ("\n".join(_dump(r, 1500) for r in results) or "(none)")
        + f"\n\n## Replanner thought\n{new.thought or '(none)'}\n\n## Updated plan\n"
        + _dump(new.plan if new.plan is not None else new.text)
    )


def judge_messages(group: str, ctx: ReplanContext) -> list[Any]:
    """System + human messages for one dimension group."""
    # late: scoring loads no LangChain; only a judge that calls a model needs messages
    from langchain_core.messages import HumanMessage, SystemMessage

    _, anchors = RUBRIC[group]
    return [
        SystemMessage(content=f"{_JUDGE_ROLE}\n\n{anchors}"),
        HumanMessage(content=judge_inputs(ctx) + "\n\nScore every item of this dimension."),
    ]


class JudgeReplyInvalid(Exception):
    """The judge's reply did not validate against the item schema."""


@dataclass
class JudgeResult:
    scores: dict[str, float | None] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # group -> last error
    attempts: dict[str, int] = field(default_factory=dict)


class SDEJudge:
    """An LLM judge for the 13 judged SDE items, through structured output.

    ``attempts`` tries per dimension group (a reply failing validation or a model error is
    retried with exponential backoff starting at ``wait_s``); after the last one the group's
    items are missing (``None``) and the error is kept in :attr:`JudgeResult.errors`.
    """

    def __init__(self, model: Any, *, attempts: int = 3, wait_s: float = 0.5):
        if not hasattr(model, "with_structured_output"):
            raise TypeError(f"the judge needs a LangChain chat model, got {type(model).__name__}")
        self.model = model
        self.attempts = max(1, attempts)
        self.wait_s = wait_s
        self._runnables: dict[str, Any] = {}

    def _structured(self, group: str) -> Any:
        if group not in self._runnables:
            schema, _ = RUBRIC[group]
            try:
                self._runnables[group] = self.model.with_structured_output(schema, include_raw=True)
            except NotImplementedError as exc:
                raise TypeError(
                    f"judge model {type(self.model).__name__} does not support structured "
                    "output (with_structured_output)"
                ) from exc
        return self._runnables[group]

    def _ask(self, group: str, messages: list[Any]) -> tuple[BaseModel, int]:
        # late: only a judge that calls a model retries
        from tenacity import (
            Retrying,
            retry_if_exception_type,
            stop_after_attempt,
            wait_exponential,
            wait_none,
        )

        runnable = self._structured(group)
        tries = 0
        for attempt in Retrying(
            stop=stop_after_attempt(self.attempts),
            wait=wait_exponential(multiplier=self.wait_s, max=30) if self.wait_s else wait_none(),
            retry=retry_if_exception_type(Exception),
            reraise=True,
        ):
            with attempt:
                tries += 1
                out = runnable.invoke(messages)
                parsed = out.get("parsed") if isinstance(out, Mapping) else out
                if isinstance(out, Mapping) and out.get("parsing_error") is not None:
                    raise JudgeReplyInvalid(str(out["parsing_error"]))
                if not isinstance(parsed, BaseModel):
                    raise JudgeReplyInvalid(f"no structured reply (got {type(parsed).__name__})")
                return parsed, tries
        raise AssertionError("unreachable")  # pragma: no cover

    def judge(self, ctx: ReplanContext) -> JudgeResult:
        """Score the 13 judged items of one replan."""
        res = JudgeResult()
        for group, (schema, _) in RUBRIC.items():
            items = list(schema.model_fields)
            self._structured(group)  # a model without structured output is a setup error
            try:
                parsed, tries = self._ask(group, judge_messages(group, ctx))
            except Exception as exc:
                res.errors[group] = f"{type(exc).__name__}: {exc}"
                res.attempts[group] = self.attempts
                for item in items:
                    res.scores[item] = None
                    res.reasons[item] = f"missing: judge failed after {self.attempts} attempts"
                continue
            res.attempts[group] = tries
            for item in items:
                s: ItemScore = getattr(parsed, item)
                res.scores[item] = s.score
                res.reasons[item] = s.reason
        return res
