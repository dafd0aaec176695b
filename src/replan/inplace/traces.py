"""Score production traces with nothing running: transcripts + your tools' JSON schemas.

``replan score --traces FILE --tools TOOLS.json`` (and :func:`score_traces`) read one
conversation per line — a JSON list of messages, or an object with a ``messages`` list (and
optionally ``id`` and a reference ``expected`` / ``reference`` answer) — in LangChain's message
dicts (``{"type": "ai", ...}``, ``messages_to_dict`` output, or ``lc`` serialisations) or
OpenAI chat format (``{"role": "assistant", "tool_calls": [...]}`` / ``{"role": "tool", ...}``).
``TOOLS.json`` lists the tools: OpenAI function tools, ``{"name", "parameters"}`` objects
(``input_schema`` / ``args_schema`` also read) or a ``{name: parameters}`` map.
:func:`score_thread` does the same for a LangGraph checkpointer thread (its latest state).

Each tool call becomes a Step judged from what a trace can decide:

- a name not in ``TOOLS.json`` is ``unknown_tool``; arguments the tool's JSON Schema rejects are
  ``unknown_param`` / ``missing_param`` / ``type_mismatch`` / ``invalid_value`` (the checks the
  world makes, :meth:`~replan.core.tools.ToolSpec.check_args`);
- a result that reports an error (``status: "error"``, a JSON object with an ``error`` key, or
  text starting with ``Error`` or an HTTP 4xx/5xx status) is the tool rejecting the call (``invalid_value``, ParaRecover's
  Parameter_Invalid) — unless it is a service failure, which is not the agent's: a timeout
  (``timeout``), an empty result (``empty_result``), an HTTP 429 / 5xx;
- preconditions on state, dependencies and tool choice are not decidable from a trace: they are
  reported only through the tool's own error messages.

Reported: FED (mean, and per conversation), PEC(k), cPEC(k), TER, AUC-PEC, the first-error
types, the tool-error rate (calls whose result was any error, service failures included), and
success where a reference is given.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ToolMessage,
    convert_to_messages,
    messages_from_dict,
)

from replan.core.taxonomy import VerdictCode
from replan.core.tools import ToolSpec
from replan.core.trace import Call, EndReason, Episode, Step, Verdict
from replan.env.checker import mentions
from replan.env.tool_faults import inline_refs
from replan.env.tool_wrapper import spec_from_tool
from replan.evaluators.prefix import prefix_record, summarize_prefix
from replan.evaluators.stats import N_BOOT, wilson

_SERVICE = re.compile(r"\b(429|50[0-4])\b|rate limit|too many requests|unavailable", re.I)
_HTTP_STATUS = re.compile(r"\s*(HTTP(/[\d.]+)?\s+)?[45]\d\d\b", re.I)
_TIMEOUT = re.compile(r"time(d)?[ -]?out", re.I)


class TraceError(ValueError):
    """A trace or tools file that cannot be read (the message names file and line)."""


# -- tools ------------------------------------------------------------------------------------------
def load_tool_specs(data: Any, where: str = "tools") -> dict[str, ToolSpec]:
    """ToolSpecs from parsed TOOLS.json (see the module docstring)."""
    items: list[tuple[str, Mapping[str, Any], str]] = []
    if isinstance(data, Mapping) and "tools" in data and isinstance(data["tools"], list):
        data = data["tools"]
    if isinstance(data, Mapping):
        for name, params in data.items():
            if not isinstance(params, Mapping):
                raise TraceError(f"{where}: the schema of tool {name!r} is not an object")
            items.append((str(name), params, ""))
    elif isinstance(data, list):
        for i, t in enumerate(data):
            if not isinstance(t, Mapping):
                raise TraceError(f"{where}[{i}]: a tool must be an object")
            fn = t.get("function") if isinstance(t.get("function"), Mapping) else t
            name = fn.get("name")
            if not isinstance(name, str) or not name:
                raise TraceError(f"{where}[{i}]: a tool needs a 'name'")
            params = next(
                (fn[k] for k in ("parameters", "input_schema", "args_schema") if k in fn), None
            )
            if params is None:
                raise TraceError(
                    f"{where}[{i}] ({name}): no 'parameters' schema: a tool without an args "
                    "schema cannot have its calls judged"
                )
            items.append((name, params, str(fn.get("description") or "")))
    else:
        raise TraceError(f"{where}: expected a list of tools or a {{name: schema}} object")
    out = {}
    for name, params, desc in items:
        params = inline_refs(params)
        out[name] = ToolSpec(
            name=name,
            description=desc,
            parameters={
                "type": "object",
                "properties": dict(params.get("properties") or {}),
                "required": list(params.get("required") or []),
            },
            returns={},
        )
    return out


# -- messages ---------------------------------------------------------------------------------------
def to_messages(raw: Any, where: str) -> list[Any]:
    """LangChain messages from a conversation in any supported format."""
    if isinstance(raw, Mapping):
        if "messages" not in raw:
            raise TraceError(f"{where}: not a conversation (an object without 'messages')")
        raw = raw["messages"]
    if not isinstance(raw, list) or not raw:
        raise TraceError(f"{where}: not a conversation (expected a non-empty list of messages)")
    out: list[Any] = []
    for j, m in enumerate(raw):
        try:
            if isinstance(m, BaseMessage):
                out.append(m)
            elif isinstance(m, Mapping) and m.get("lc") == 1:
                from langchain_core.load import load

                out.append(load(m))
            elif isinstance(m, Mapping) and isinstance(m.get("data"), Mapping) and "type" in m:
                out.extend(messages_from_dict([dict(m)]))
            else:
                out.extend(convert_to_messages([m]))
        except Exception as exc:
            raise TraceError(f"{where}: message {j} is not a chat message ({exc})") from exc
    return out


def _args(raw: Any) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            return {"__raw_arguments__": raw}
    return dict(raw) if isinstance(raw, Mapping) else {"__raw_arguments__": raw}


def _content(msg: Any) -> str:
    return msg.text if hasattr(msg, "text") else str(msg.content)


def _result_verdict(msg: Any) -> tuple[Verdict, bool, Any]:
    """(verdict of the call from its result, whether the result is an error, observation)."""
    text = _content(msg)
    parsed: Any = text
    with contextlib.suppress(TypeError, ValueError):
        parsed = json.loads(text)
    is_error = getattr(msg, "status", "success") == "error"
    message = text
    if isinstance(parsed, Mapping) and "error" in parsed:
        is_error = True
        message = str(parsed.get("message") or parsed.get("error"))
    elif isinstance(parsed, str) and (
        re.match(r"\s*error\b", parsed, re.I) or _HTTP_STATUS.match(parsed)
    ):
        is_error = True
    if parsed in ({}, [], "", None):
        return Verdict(code=VerdictCode.EMPTY_RESULT, message="empty result"), True, parsed
    if not is_error:
        return Verdict.okay(), False, parsed
    if _TIMEOUT.search(message) or (
        isinstance(parsed, Mapping) and parsed.get("error") == "timeout"
    ):
        return Verdict(code=VerdictCode.TIMEOUT, message=message[:300]), True, parsed
    if _SERVICE.search(message):
        return Verdict(message=f"service failure: {message[:300]}"), True, parsed
    return (
        Verdict(code=VerdictCode.INVALID_VALUE, message=f"the tool reported: {message[:300]}"),
        True,
        parsed,
    )


def episode_from_messages(
    messages: Sequence[Any],
    specs: Mapping[str, ToolSpec],
    *,
    trace_id: str,
    expected: Any = None,
) -> tuple[Episode, int]:
    """An Episode of a transcript (calls judged as the module docstring says) and the number of
    calls whose result was an error."""
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    steps: list[Step] = []
    errors = 0
    turn = 0
    answer = None
    for m in messages:
        if not isinstance(m, AIMessage):
            continue
        turn += 1
        calls = [(tc["name"], tc.get("args"), tc.get("id")) for tc in m.tool_calls]
        calls += [
            (tc.get("name") or "", tc.get("args"), tc.get("id")) for tc in m.invalid_tool_calls
        ]
        if not calls:
            answer = _content(m) or None
            continue
        answer = None
        for name, raw_args, cid in calls:
            call = Call(tool=str(name), args=_args(raw_args), call_id=cid)
            spec = specs.get(call.tool)
            result = results.get(cid)
            observation: Any = None
            if spec is None:
                verdict = Verdict(code=VerdictCode.UNKNOWN_TOOL, message=f"no tool named {name!r}")
            else:
                chk = spec.check_args(call.args)
                verdict = (
                    Verdict.okay()
                    if chk.ok
                    else Verdict(code=chk.code, param=chk.param, message=chk.message)
                )
            if result is not None:
                rv, is_err, observation = _result_verdict(result)
                errors += int(is_err)
                if verdict.ok:
                    verdict = rv
            steps.append(
                Step(
                    index=len(steps),
                    round=turn,
                    call=call,
                    verdict=verdict,
                    observation=observation,
                )
            )
    success = None
    if expected is not None:
        success = mentions(answer, expected)
    ep = Episode(
        episode_id=trace_id,
        task_id=trace_id,
        suite="traces",
        design="production",
        steps=steps,
        final_answer=answer,
        end_reason=EndReason.ANSWERED if answer else EndReason.GAVE_UP,
        success=success,
    )
    return ep, errors


def read_traces(path: str | Path) -> tuple[list[tuple[str, list[Any], Any]], list[str]]:
    """(id, messages, expected) per good line of a JSONL file, and one message per bad line."""
    path = Path(path)
    good: list[tuple[str, list[Any], Any]] = []
    bad: list[str] = []
    with path.open(encoding="utf-8") as fh:
        for ln, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path}:{ln}"
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                bad.append(f"{where}: not JSON ({exc.msg})")
                continue
            try:
                msgs = to_messages(data, where)
            except TraceError as exc:
                bad.append(str(exc))
                continue
            tid = str(data.get("id", f"line{ln}")) if isinstance(data, Mapping) else f"line{ln}"
            expected = None
            if isinstance(data, Mapping):
                expected = data.get("expected", data.get("reference"))
            good.append((tid, msgs, expected))
    return good, bad


def score_conversations(
    conversations: Iterable[tuple[str, Sequence[Any], Any]],
    specs: Mapping[str, ToolSpec],
    *,
    seed: int = 0,
    n_boot: int = N_BOOT,
) -> dict[str, Any]:
    """FED, PEC(k), TER, first-error types and tool-error rate over transcripts."""
    records = []
    per_trace = []
    calls = errors = 0
    for tid, msgs, expected in conversations:
        ep, errs = episode_from_messages(msgs, specs, trace_id=tid, expected=expected)
        rec = prefix_record(ep, None)
        records.append(rec)
        calls += len(ep.steps)
        errors += errs
        per_trace.append(
            {
                "id": tid,
                "calls": rec.n,
                "fed": rec.fed,
                "first_error_code": rec.first_error_code,
                "first_error_type": rec.first_error_type,
                "first_error": rec.first_error_message,
                "tool_errors": errs,
                "success": ep.success,
            }
        )
    out: dict[str, Any] = {"traces": len(records)}
    out.update(summarize_prefix(records, seed=seed, n_boot=n_boot))
    out["tool_error_rate"] = wilson(errors, calls).to_dict()
    out["per_trace"] = per_trace
    return out


def score_traces(
    traces: str | Path, tools: str | Path | Any, *, seed: int = 0, n_boot: int = N_BOOT
) -> dict[str, Any]:
    """Score a transcripts JSONL against a tools JSON file (or already parsed tools)."""
    if isinstance(tools, (str, Path)):
        tpath = Path(tools)
        try:
            data = json.loads(tpath.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise TraceError(f"{tpath}: not JSON ({exc.msg} at line {exc.lineno})") from exc
        specs = load_tool_specs(data, str(tpath))
    else:
        specs = load_tool_specs(tools)
    good, bad = read_traces(traces)
    if not good:
        raise TraceError(f"{traces}: no readable conversation" + (f" ({bad[0]})" if bad else ""))
    out = score_conversations(good, specs, seed=seed, n_boot=n_boot)
    out["input_errors"] = bad
    return out


def score_thread(
    graph: Any, thread_id: str, tools: Any, *, seed: int = 0, n_boot: int = N_BOOT
) -> dict[str, Any]:
    """Score the conversation of a LangGraph checkpointer thread (``graph`` compiled with a
    checkpointer; ``tools``: BaseTools or parsed TOOLS.json)."""
    config = {"configurable": {"thread_id": thread_id}}
    messages = None
    for snap in graph.get_state_history(config):  # newest first
        values = snap.values if isinstance(snap.values, Mapping) else {}
        if values.get("messages"):
            messages = list(values["messages"])
            break
    if not messages:
        raise TraceError(f"thread {thread_id!r}: no checkpoint with messages")
    if tools and all(hasattr(t, "tool_call_schema") for t in tools):
        specs = {t.name: spec_from_tool(t) for t in tools}
    else:
        specs = load_tool_specs(tools)
    return score_conversations([(thread_id, messages, None)], specs, seed=seed, n_boot=n_boot)


def episode_to_openai(episode: Episode) -> dict[str, Any]:
    """An Episode as an OpenAI chat-format transcript (one assistant turn per round)."""
    msgs: list[dict[str, Any]] = [{"role": "user", "content": episode.query}]
    by_round: dict[int, list[Step]] = {}
    for s in episode.steps:
        by_round.setdefault(s.round, []).append(s)
    for r in sorted(by_round):
        steps = by_round[r]
        ids = [s.call.call_id or f"call_{s.index}" for s in steps]
        msgs.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": s.call.tool, "arguments": json.dumps(s.call.args)},
                    }
                    for cid, s in zip(ids, steps, strict=True)
                ],
            }
        )
        for cid, s in zip(ids, steps, strict=True):
            msgs.append(
                {
                    "role": "tool",
                    "tool_call_id": cid,
                    "content": json.dumps(s.observation, default=str),
                }
            )
    if episode.final_answer:
        msgs.append({"role": "assistant", "content": episode.final_answer})
    return {"id": episode.episode_id, "messages": msgs}


__all__ = [
    "TraceError",
    "episode_from_messages",
    "episode_to_openai",
    "load_tool_specs",
    "read_traces",
    "score_conversations",
    "score_thread",
    "score_traces",
    "to_messages",
]
