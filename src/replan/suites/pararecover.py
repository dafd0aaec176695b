"""Loader for the ParaRecover benchmark files (LEVEL-1 real / augmented, LEVEL-2 real).

The three upstream files differ: ``tool_list``, ``plan`` and (augmented) ``fun_call`` are JSON
*strings* in some files and native values in others; ``round_gt`` / ``funcall_times_gt`` may be
strings, integers or null; LEVEL-2 carries ``tag_1..tag_3`` instead of ``tag``; tags are Chinese
in the real rollouts and English in the augmented file; ``fun_call[].arguments`` may be a list
and ``results`` may be empty. :func:`iter_instances` reads all of them and reports a malformed
line with its file and line number instead of stopping.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from replan.core.plan import ParseFailure, Plan
from replan.core.taxonomy import ErrorType, error_types_for_tag
from replan.core.tools import ToolSpec


class FunCall(BaseModel):
    """One executed call of the last wave, as the dataset records it."""

    name: str
    arguments: Any = None
    results: Any = None


class LoadError(BaseModel):
    """A line that could not be read; the rest of the file still is."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class ParaRecoverInstance(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    id: int | str
    query_id: int | str | None = None
    query: str
    tools: list[ToolSpec]
    plan_text: str
    plan: Plan | ParseFailure
    error_reason: str | None = None
    funcall_times_gt: int | None = None
    round_gt: int | None = None
    tags: list[str] = Field(default_factory=list)
    error_types: list[ErrorType] = Field(default_factory=list)
    fun_call: list[FunCall] = Field(default_factory=list)
    level: str = "LEVEL-1"
    source: str = ""
    line: int = 0

    @property
    def key(self) -> str:
        return f"{self.level}:{Path(self.source).stem}:{self.id}"


def _maybe_json(value: Any, what: str) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"field {what!r} is a string that is not valid JSON: {exc}") from exc
    return value


def _opt_int(value: Any, what: str) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        return int(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"field {what!r} is not an integer: {value!r}") from exc


def _level_of(path: Path, record: dict[str, Any]) -> str:
    if "tag_1" in record:
        return "LEVEL-2"
    name = path.as_posix().upper()
    return "LEVEL-2" if "LEVEL-2" in name or "LEVEL_2" in name else "LEVEL-1"


def parse_record(
    record: dict[str, Any], source: str = "", line: int = 0, level: str | None = None
) -> ParaRecoverInstance:
    """One dataset record -> instance; raises ``ValueError`` naming the bad field."""
    if not isinstance(record, dict):
        raise ValueError(f"a line must hold a JSON object, got {type(record).__name__}")
    for required in ("id", "query", "tool_list", "plan"):
        if required not in record:
            raise ValueError(f"missing field {required!r}")
    tools = ToolSpec.from_pararecover(_maybe_json(record["tool_list"], "tool_list") or [])
    plan_raw = record["plan"]
    plan_text = plan_raw if isinstance(plan_raw, str) else json.dumps(plan_raw, ensure_ascii=False)
    tags = [record[k] for k in ("tag", "tag_1", "tag_2", "tag_3") if record.get(k)]
    types: list[ErrorType] = []
    for t in tags:
        for et in error_types_for_tag(t):
            if et not in types:
                types.append(et)
    calls_raw = _maybe_json(record.get("fun_call"), "fun_call") or []
    if isinstance(calls_raw, dict):
        calls_raw = [calls_raw]
    if not isinstance(calls_raw, list):
        raise ValueError(f"field 'fun_call' must be a list, got {type(calls_raw).__name__}")
    calls = []
    for i, c in enumerate(calls_raw):
        if not isinstance(c, dict) or "name" not in c:
            raise ValueError(f"fun_call[{i}] has no tool name")
        calls.append(
            FunCall(name=str(c["name"]), arguments=c.get("arguments"), results=c.get("results"))
        )
    return ParaRecoverInstance(
        id=record["id"],
        query_id=record.get("query_id"),
        query=str(record["query"]),
        tools=tools,
        plan_text=plan_text,
        plan=Plan.parse(plan_text),
        error_reason=record.get("error_reason"),
        funcall_times_gt=_opt_int(record.get("funcall_times_gt"), "funcall_times_gt"),
        round_gt=_opt_int(record.get("round_gt"), "round_gt"),
        tags=[str(t) for t in tags],
        error_types=types,
        fun_call=calls,
        level=level or "LEVEL-1",
        source=source,
        line=line,
    )


def iter_instances(path: str | Path) -> Iterator[ParaRecoverInstance | LoadError]:
    """Every line of a ParaRecover ``.jsonl`` file: an instance, or a :class:`LoadError`."""
    p = Path(path)
    with p.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                yield parse_record(
                    record,
                    str(p),
                    lineno,
                    _level_of(p, record) if isinstance(record, dict) else None,
                )
            except (ValueError, TypeError) as exc:
                yield LoadError(file=str(p), line=lineno, message=str(exc))


def load_instances(path: str | Path) -> tuple[list[ParaRecoverInstance], list[LoadError]]:
    """All readable instances of a file and the errors of the lines that were not."""
    good: list[ParaRecoverInstance] = []
    bad: list[LoadError] = []
    for item in iter_instances(path):
        (bad if isinstance(item, LoadError) else good).append(item)  # type: ignore[arg-type]
    return good, bad
