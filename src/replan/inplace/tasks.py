"""Your tasks: inputs plus a checker (a callable on the final state, an expected value, a regex,
or a LangSmith example's reference output).

Accepted forms (:func:`load_tasks`): a JSONL file (one object per line), a list of dicts,
:class:`InPlaceTask` objects or LangSmith ``Example`` objects. A dict names its input as
``input`` (also ``query``, ``question`` or ``inputs``) and its checker as one of ``check`` (a
Python callable ``check(final_state) -> bool``; not in JSONL), ``expected`` (the answer must
state this value as a whole value: numbers in any common format, text case-insensitively),
``regex`` (must match the answer) or ``reference`` / ``outputs`` (a reference output: its
``answer``/``output``/``expected`` field, or its only value, is the expected value). Optional:
``id``, ``min_calls`` (the fewest tool calls that solve it: turns on RC), ``target`` (the tool
or group to fault in this task), ``config`` (the task's own LangGraph run config, e.g.
``{"configurable": {"passenger_id": "3442 587242"}}``: merged into the config the agent is
invoked with, over the evaluation's ``config=``).

An answer that carries an injected sentinel is never a success, whatever the checker says.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replan.core import linre
from replan.env.checker import mentions

_INPUT_KEYS = ("input", "query", "question", "inputs")
_CHECK_KEYS = ("check", "expected", "regex", "reference", "outputs")
_REFERENCE_KEYS = ("answer", "output", "expected", "result", "reference")


@dataclass
class InPlaceTask:
    """One task of yours: what the agent is asked and how success is decided."""

    id: str
    input: Any
    check: Callable[[Any], Any] | None = None
    expected: Any = None
    regex: str | None = None
    min_calls: int | None = None
    target: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.check is None and self.expected is None and self.regex is None:
            raise ValueError(
                f"task {self.id!r} has no checker: give check=callable(final_state), "
                "expected=VALUE, regex=PATTERN or reference=OUTPUT"
            )
        if self.regex is not None:
            try:
                linre.compile(self.regex)
            except linre.error as exc:
                raise ValueError(
                    f"task {self.id!r}: regex {self.regex!r} is invalid: {exc} (answers are "
                    "matched in linear time, RE2 syntax: no look-around, no back-references)"
                ) from exc
        if self.min_calls is not None and (
            not isinstance(self.min_calls, int) or self.min_calls < 0
        ):
            raise ValueError(f"task {self.id!r}: min_calls must be an integer >= 0")
        if self.config is not None:
            check_run_config(self.config, f"task {self.id!r}: config")

    @property
    def query(self) -> str:
        """The input as text (for the Episode and the report)."""
        if isinstance(self.input, str):
            return self.input
        if isinstance(self.input, Mapping):
            msgs = self.input.get("messages")
            if isinstance(msgs, list) and msgs:
                last = msgs[-1]
                if isinstance(last, Mapping):
                    return str(last.get("content", ""))
                return str(getattr(last, "content", last))
            for k in _INPUT_KEYS:
                if k in self.input:
                    return str(self.input[k])
        return json.dumps(self.input, default=str)

    def agent_input(self, *, as_state: bool = False) -> dict[str, Any]:
        """What the agent is invoked with: a ``messages`` state, or -- ``as_state``, for a graph
        whose state is not a messages list -- an input given as a dict, unchanged."""
        if isinstance(self.input, Mapping) and ("messages" in self.input or as_state):
            return dict(self.input)
        return {"messages": [{"role": "user", "content": self.query}]}

    def judge(self, final_state: Any, answer: str | None) -> tuple[bool, str]:
        """(success, reason) by this task's checker (sentinels are checked by the caller)."""
        if self.check is not None:
            try:
                ok = bool(self.check(final_state))
            except Exception as exc:
                return False, f"the checker raised {type(exc).__name__}: {exc}"
            return ok, "check(final_state) passed" if ok else "check(final_state) failed"
        if self.regex is not None:
            ok = bool(answer) and linre.search(self.regex, answer or "") is not None
            return ok, f"answer {'matches' if ok else 'does not match'} /{self.regex}/"
        values = self.expected if isinstance(self.expected, list) else [self.expected]
        missing = [v for v in values if not mentions(answer, v)]
        if missing:
            return False, f"the answer does not state {missing[0]!r}"
        return True, "the answer states the expected value"


def check_run_config(config: Any, where: str) -> None:
    """Refuse a run config that is not a dict, or whose ``configurable`` is not one."""
    if not isinstance(config, Mapping):
        raise ValueError(
            f"{where} must be a dict (a LangGraph run config), got {type(config).__name__}"
        )
    if "configurable" in config and not isinstance(config["configurable"], Mapping):
        raise ValueError(f"{where}: 'configurable' must be a dict of values")


def reference_value(ref: Any, where: str) -> Any:
    if isinstance(ref, Mapping):
        for k in _REFERENCE_KEYS:
            if k in ref:
                return ref[k]
        if len(ref) == 1:
            return next(iter(ref.values()))
        raise ValueError(
            f"{where}: reference output {sorted(ref)} has no field named one of {_REFERENCE_KEYS} "
            "and more than one value; give expected= or check= instead"
        )
    return ref


def task_from_dict(data: Mapping[str, Any], where: str, default_id: str) -> InPlaceTask:
    """One task from a dict (see the module docstring); errors name ``where``."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: a task must be an object, got {type(data).__name__}")
    key = next((k for k in _INPUT_KEYS if k in data), None)
    if key is None:
        raise ValueError(f"{where}: task has no input (one of {_INPUT_KEYS})")
    raw = data[key]
    if key == "inputs" and isinstance(raw, Mapping) and len(raw) == 1 and "messages" not in raw:
        raw = next(iter(raw.values()))
    if not any(k in data for k in _CHECK_KEYS):
        raise ValueError(
            f"{where}: task has no checker (one of {_CHECK_KEYS}); a task without a checker "
            "cannot succeed or fail"
        )
    expected = data.get("expected")
    for rk in ("reference", "outputs"):
        if expected is None and data.get(rk) is not None:
            expected = reference_value(data[rk], where)
    check = data.get("check")
    if check is not None and not callable(check):
        raise ValueError(f"{where}: 'check' must be a callable(final_state) -> bool")
    try:
        return InPlaceTask(
            id=str(data.get("id", default_id)),
            input=raw,
            check=check,
            expected=expected,
            regex=data.get("regex"),
            min_calls=data.get("min_calls"),
            target=data.get("target"),
            metadata=dict(data.get("metadata") or {}),
            config=data.get("config"),
        )
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from exc


def _from_example(ex: Any, where: str) -> InPlaceTask:
    data = {
        "id": str(getattr(ex, "id", "") or where),
        "inputs": dict(ex.inputs or {}),
        "reference": dict(ex.outputs or {}) if ex.outputs is not None else None,
    }
    if data["reference"] is None:
        raise ValueError(f"{where}: LangSmith example {data['id']} has no reference outputs")
    return task_from_dict(data, where, data["id"])


def load_tasks(tasks: str | Path | Iterable[Any]) -> list[InPlaceTask]:
    """Tasks from a JSONL path or an iterable of dicts / InPlaceTasks / LangSmith examples."""
    out: list[InPlaceTask] = []
    if isinstance(tasks, (str, Path)):
        path = Path(tasks)
        if not path.is_file():
            raise FileNotFoundError(f"tasks file {path} does not exist")
        with path.open(encoding="utf-8") as fh:
            for ln, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                where = f"{path}:{ln}"
                try:
                    data = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{where}: not JSON ({exc.msg})") from exc
                out.append(task_from_dict(data, where, f"t{len(out)}"))
    else:
        for i, t in enumerate(tasks):
            where = f"tasks[{i}]"
            if isinstance(t, InPlaceTask):
                out.append(t)
            elif hasattr(t, "inputs") and hasattr(t, "outputs") and not isinstance(t, Mapping):
                out.append(_from_example(t, where))
            else:
                out.append(task_from_dict(t, where, f"t{i}"))
    if not out:
        raise ValueError("no tasks given")
    seen: set[str] = set()
    for t in out:
        if t.id in seen:
            raise ValueError(f"task id {t.id!r} appears twice; task ids must be unique")
        if "|" in t.id or "/" in t.id:
            raise ValueError(f"task id {t.id!r}: '|' and '/' are reserved in episode keys")
        seen.add(t.id)
    return out


__all__ = ["InPlaceTask", "check_run_config", "load_tasks", "reference_value", "task_from_dict"]
