"""Score production traces with nothing running: transcripts + your tools' JSON schemas.

``replan score --traces FILE --tools TOOLS.json`` (and :func:`score_traces`) read one
conversation per line — a JSON list of messages, or an object with a ``messages`` list (and
optionally ``id``, a reference ``expected`` / ``reference`` answer, or the trace's own outcome:
``success`` (true/false) or ``reward`` (a number; full reward, ≥ 1, is a success)) — in
LangChain's message dicts (``{"type": "ai", ...}``, ``messages_to_dict`` output, or ``lc``
serialisations) or OpenAI chat format (``{"role": "assistant", "tool_calls": [...]}`` /
``{"role": "tool", ...}``). ``TOOLS.json`` lists the tools: OpenAI function tools,
``{"name", "parameters"}`` objects (``input_schema`` / ``args_schema`` also read) or a
``{name: parameters}`` map. :func:`score_thread` does the same for a LangGraph checkpointer
thread (its latest state).

Each tool call becomes a Step judged from what a trace can decide:

- a name not in ``TOOLS.json`` is ``unknown_tool``; arguments the tool's JSON Schema rejects are
  ``unknown_param`` / ``missing_param`` / ``type_mismatch`` / ``invalid_value`` (the checks the
  world makes, :meth:`~replan.core.tools.ToolSpec.check_args`);
- a result answers the most recent unanswered call with its ``tool_call_id`` (models do reuse
  ids; an id is never collapsed onto one call);
- a result is an error by the first rule that decides it (each result's rule is counted in
  ``result_rules``): ``status`` (the tool raised or returned ``status="error"``), ``is_error``
  (your predicate for that tool: True / False, or None to let the rules below decide),
  ``empty`` (``[]``, ``{}``, ``""``, ``null``: *not* an error unless ``empty_is_error`` names
  the tool), ``error_field`` (a JSON object whose ``error`` / ``errors`` is set, whose
  ``status`` is ``error`` / ``failed``, or whose ``success`` / ``ok`` is false) and
  ``error_text`` (text that opens with ``Error``, ``Exception``, ``Invalid``, ``Not
  permitted``, ``Not allowed``, ``Forbidden``, ``Unauthorized``, ``Permission denied``,
  ``Cannot``, ``Unable to``, ``Failed``, ``Denied``, ``Rejected`` or an HTTP 4xx/5xx status,
  or a one-line text of at most 200 characters that says ``not found``); anything else is
  ``ok``. "No flights found" and an empty list are answers, not errors;
- an error result is the tool rejecting the call (``invalid_value``, ParaRecover's
  Parameter_Invalid) — unless it is a service failure, which is not the agent's: a timeout
  (``timeout``), an HTTP 429 / 5xx, "unavailable";
- preconditions on state, dependencies and tool choice are not decidable from a trace: they are
  reported only through the tool's own error messages.

Reported: FED (mean, and per conversation), PEC(k), cPEC(k), TER, AUC-PEC, the first-error
types, the tool-error rate (calls whose result was any error, service failures included), the
count of results per rule, and success over the traces that carry a reference or their own
outcome only (``value`` None and ``n`` 0 when none does).
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ToolMessage,
    convert_to_messages,
    messages_from_dict,
)

from replan.core import linre
from replan.core.taxonomy import VerdictCode
from replan.core.tools import ToolSpec
from replan.core.trace import Call, EndReason, Episode, Step, Verdict
from replan.env.checker import mentions
from replan.env.tool_faults import inline_refs
from replan.env.tool_wrapper import error_field, error_text, spec_from_tool
from replan.evaluators.prefix import prefix_record, summarize_prefix
from replan.evaluators.stats import N_BOOT, wilson

#: a service's failure, not the agent's: an HTTP 429 / 5xx status, rate limits, overload
_SERVICE = linre.compile(
    r"(?i)^\s*(?:\w+:\s*)?(?:HTTP(?:/[\d.]+)?\s+)?(?:429|50[0-4])\b|\bstatus(?: code)?:?\s*"
    r"(?:429|50[0-4])\b|rate.?limit|too many requests|service unavailable|temporarily "
    r"unavailable|bad gateway|gateway time-?out|overloaded"
)
#: an HTTP error status opening a text ("HTTP 404 ...", "503 Service Unavailable")
_TIMEOUT = linre.compile(r"time(d)?[ -]?out", linre.I)


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


# -- results ----------------------------------------------------------------------------------------
#: a per-tool ``is_error`` predicate: given a result (JSON-decoded where it is JSON, else its
#: text) it returns True (an error), False (not an error) or None (the default rules decide)
IsError = Callable[[Any], "bool | None"]

#: the rules that classify a result, in the order they are tried (module docstring)
RESULT_RULES: tuple[str, ...] = ("status", "is_error", "empty", "error_field", "error_text", "ok")


@dataclass(frozen=True, slots=True)
class ResultClass:
    """How one tool result was classified: the deciding rule, error or not, and why."""

    rule: str
    error: bool
    observation: Any
    message: str = ""


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or value in ({}, [])


def _parsed(msg: Any) -> tuple[str, Any]:
    text = _content(msg)
    parsed: Any = text
    with contextlib.suppress(TypeError, ValueError):
        parsed = json.loads(text)
    return text, parsed


def classify_result(
    msg: Any,
    tool: str,
    *,
    is_error: Mapping[str, IsError] | None = None,
    empty_is_error: bool | Collection[str] = False,
) -> ResultClass:
    """Classify one tool result (a ToolMessage) by the first rule that decides it."""
    text, parsed = _parsed(msg)
    if getattr(msg, "status", "success") == "error":
        return ResultClass("status", True, parsed, text)
    pred = (is_error or {}).get(tool) or (is_error or {}).get("*")
    if pred is not None:
        try:
            said = pred(parsed)
        except Exception as exc:
            raise TraceError(
                f"is_error for tool {tool!r} raised {type(exc).__name__}: {exc}"
            ) from exc
        if said is not None and not isinstance(said, bool):
            raise TraceError(
                f"is_error for tool {tool!r} returned {said!r}: it must return True, False "
                "or None (let the default rules decide)"
            )
        if said is not None:
            return ResultClass("is_error", said, parsed, text if said else "")
    if _is_empty(parsed):
        names = () if isinstance(empty_is_error, bool) else empty_is_error
        err = empty_is_error is True or tool in names or "*" in names
        return ResultClass("empty", err, parsed, "empty result" if err else "")
    if isinstance(parsed, Mapping):
        reported = error_field(parsed)
        if reported is not None:
            return ResultClass("error_field", True, parsed, reported)
    elif isinstance(parsed, str) and error_text(parsed):
        return ResultClass("error_text", True, parsed, parsed)
    return ResultClass("ok", False, parsed)


def _verdict_of(rc: ResultClass) -> Verdict:
    """The call's verdict from an error result: a timeout and a service failure are not the
    agent's; any other error is the tool rejecting the call."""
    if not rc.error:
        return Verdict.okay()
    message = rc.message[:300]
    if rc.rule != "empty":
        if _TIMEOUT.search(message) or (
            isinstance(rc.observation, Mapping) and rc.observation.get("error") == "timeout"
        ):
            return Verdict(code=VerdictCode.TIMEOUT, message=message)
        if _SERVICE.search(message):
            return Verdict(message=f"service failure: {message}")
    why = "an empty result (empty_is_error)" if rc.rule == "empty" else message
    return Verdict(code=VerdictCode.INVALID_VALUE, message=f"the tool reported: {why}")


def check_error_options(
    specs: Mapping[str, ToolSpec],
    is_error: Mapping[str, IsError] | IsError | None,
    empty_is_error: bool | Collection[str],
) -> dict[str, IsError]:
    """``is_error`` as a per-tool map (a bare callable applies to every tool, key ``"*"``);
    a tool named there or in ``empty_is_error`` that is not in the tools is refused."""
    if is_error is None:
        preds: dict[str, IsError] = {}
    elif callable(is_error) and not isinstance(is_error, Mapping):
        preds = {"*": is_error}
    elif isinstance(is_error, Mapping):
        preds = dict(is_error)
    else:
        raise TraceError(
            f"is_error must be a callable or a {{tool: callable}} map, got {type(is_error).__name__}"
        )
    names = [] if isinstance(empty_is_error, bool) else list(empty_is_error)
    for where, keys in (("is_error", list(preds)), ("empty_is_error", names)):
        unknown = sorted(k for k in keys if k != "*" and k not in specs)
        if unknown:
            raise TraceError(
                f"{where} names {', '.join(map(repr, unknown))}, not among the tools "
                f"({', '.join(sorted(specs)) or 'none'})"
            )
    for k, fn in preds.items():
        if not callable(fn):
            raise TraceError(f"is_error[{k!r}] is not callable ({type(fn).__name__})")
    return preds


@dataclass(slots=True)
class TraceScore:
    """One transcript scored: its Episode, the calls whose result was an error, the rule that
    classified each result and whether it is an error (``None`` for a call no result answered)
    and where success came from (``trace``, ``reference`` or None)."""

    episode: Episode
    errors: int
    rules: list[tuple[str, bool] | None]
    success_from: str | None = None


def episode_from_messages(
    messages: Sequence[Any],
    specs: Mapping[str, ToolSpec],
    *,
    trace_id: str,
    expected: Any = None,
    success: bool | None = None,
    is_error: Mapping[str, IsError] | IsError | None = None,
    empty_is_error: bool | Collection[str] = False,
) -> TraceScore:
    """A transcript judged call by call (module docstring). ``success`` is the trace's own
    outcome; without it, a reference ``expected`` decides from the final answer."""
    preds = check_error_options(specs, is_error, empty_is_error)
    calls: list[tuple[Call, int]] = []
    results: list[Any] = []
    pending: dict[Any, list[int]] = {}  # call id -> unanswered calls, in order
    turn = 0
    answer = None
    for m in messages:
        if isinstance(m, ToolMessage):
            waiting = pending.get(m.tool_call_id) or []
            if waiting:  # the most recent turn's first unanswered call with this id
                last = calls[waiting[-1]][1]
                k = next(i for i in waiting if calls[i][1] == last)
                waiting.remove(k)
                results[k] = m
            continue
        if not isinstance(m, AIMessage):
            continue
        turn += 1
        raw = [(tc["name"], tc.get("args"), tc.get("id")) for tc in m.tool_calls]
        raw += [(tc.get("name") or "", tc.get("args"), tc.get("id")) for tc in m.invalid_tool_calls]
        if not raw:
            answer = _content(m) or None
            continue
        answer = None
        for name, raw_args, cid in raw:
            pending.setdefault(cid, []).append(len(calls))
            calls.append((Call(tool=str(name), args=_args(raw_args), call_id=cid), turn))
            results.append(None)
    steps: list[Step] = []
    rules: list[tuple[str, bool] | None] = []
    errors = 0
    for (call, rnd), result in zip(calls, results, strict=True):
        spec = specs.get(call.tool)
        if spec is None:
            verdict = Verdict(code=VerdictCode.UNKNOWN_TOOL, message=f"no tool named {call.tool!r}")
        else:
            chk = spec.check_args(call.args)
            verdict = (
                Verdict.okay()
                if chk.ok
                else Verdict(code=chk.code, param=chk.param, message=chk.message)
            )
        observation: Any = None
        rule = None
        if result is not None:
            rc = classify_result(result, call.tool, is_error=preds, empty_is_error=empty_is_error)
            rule, observation = (rc.rule, rc.error), rc.observation
            errors += int(rc.error)
            if verdict.ok:
                verdict = _verdict_of(rc)
        rules.append(rule)
        steps.append(
            Step(index=len(steps), round=rnd, call=call, verdict=verdict, observation=observation)
        )
    source = None
    if success is not None:
        source = "trace"
    elif expected is not None:
        success, source = mentions(answer, expected), "reference"
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
    return TraceScore(ep, errors, rules, source)


def trace_success(data: Mapping[str, Any], where: str) -> bool | None:
    """A trace's own outcome: ``success`` (true/false) or ``reward`` (full reward, ≥ 1)."""
    if data.get("success") is not None:
        if not isinstance(data["success"], bool):
            raise TraceError(f"{where}: 'success' must be true or false, got {data['success']!r}")
        return data["success"]
    reward = data.get("reward")
    if reward is None:
        return None
    if isinstance(reward, bool) or not isinstance(reward, (int, float)):
        raise TraceError(f"{where}: 'reward' must be a number, got {reward!r}")
    return reward >= 1


@dataclass(slots=True)
class Conversation:
    """One readable trace: its id, messages, reference answer and own outcome."""

    id: str
    messages: list[Any]
    expected: Any = None
    success: bool | None = None


def read_traces(path: str | Path) -> tuple[list[Conversation], list[str]]:
    """Every good line of a JSONL file as a :class:`Conversation`, and one message per bad line."""
    path = Path(path)
    good: list[Conversation] = []
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
                meta = data if isinstance(data, Mapping) else {}
                success = trace_success(meta, where)
            except TraceError as exc:
                bad.append(str(exc))
                continue
            good.append(
                Conversation(
                    id=str(meta.get("id", f"line{ln}")),
                    messages=msgs,
                    expected=meta.get("expected", meta.get("reference")),
                    success=success,
                )
            )
    return good, bad


def score_conversations(
    conversations: Iterable[Conversation | tuple[str, Sequence[Any], Any]],
    specs: Mapping[str, ToolSpec],
    *,
    is_error: Mapping[str, IsError] | IsError | None = None,
    empty_is_error: bool | Collection[str] = False,
    seed: int = 0,
    n_boot: int = N_BOOT,
) -> dict[str, Any]:
    """FED, PEC(k), TER, first-error types, tool-error rate, results per rule, and success
    over the traces with a reference or an outcome of their own."""
    preds = check_error_options(specs, is_error, empty_is_error)
    records = []
    per_trace = []
    calls = errors = 0
    judged = successes = 0
    rule_counts: dict[str, Any] = {"error": Counter(), "not_error": Counter(), "no_result": 0}
    for conv in conversations:
        if not isinstance(conv, Conversation):
            conv = Conversation(conv[0], list(conv[1]), conv[2])
        sc = episode_from_messages(
            conv.messages,
            specs,
            trace_id=conv.id,
            expected=conv.expected,
            success=conv.success,
            is_error=preds,
            empty_is_error=empty_is_error,
        )
        ep = sc.episode
        rec = prefix_record(ep, None)
        records.append(rec)
        calls += len(ep.steps)
        errors += sc.errors
        for rule in sc.rules:
            if rule is None:
                rule_counts["no_result"] += 1
            else:
                rule_counts["error" if rule[1] else "not_error"][rule[0]] += 1
        if ep.success is not None:
            judged += 1
            successes += int(ep.success)
        per_trace.append(
            {
                "id": conv.id,
                "calls": rec.n,
                "fed": rec.fed,
                "first_error_code": rec.first_error_code,
                "first_error_type": rec.first_error_type,
                "first_error": rec.first_error_message,
                "tool_errors": sc.errors,
                "success": ep.success,
                "success_from": sc.success_from,
            }
        )
    out: dict[str, Any] = {"traces": len(records)}
    out.update(summarize_prefix(records, seed=seed, n_boot=n_boot))
    # success only where a trace says it or carries a reference: n is that count (0 = n/a)
    out["prefix.success"] = wilson(successes, judged).to_dict()
    out["tool_error_rate"] = wilson(errors, calls).to_dict()
    out["result_rules"] = {
        "error": dict(rule_counts["error"]),
        "not_error": dict(rule_counts["not_error"]),
        "no_result": rule_counts["no_result"],
    }
    out["per_trace"] = per_trace
    return out


def _specs(tools: Any) -> dict[str, ToolSpec]:
    """ToolSpecs from BaseTools, parsed TOOLS.json, or a TOOLS.json path."""
    if isinstance(tools, (str, Path)):
        tpath = Path(tools)
        try:
            data = json.loads(tpath.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise TraceError(f"{tpath}: not JSON ({exc.msg} at line {exc.lineno})") from exc
        return load_tool_specs(data, str(tpath))
    if (
        tools
        and not isinstance(tools, Mapping)
        and all(hasattr(t, "tool_call_schema") for t in tools)
    ):
        return {t.name: spec_from_tool(t) for t in tools}
    return load_tool_specs(tools)


def score_traces(
    traces: str | Path,
    tools: str | Path | Any,
    *,
    is_error: Mapping[str, IsError] | IsError | None = None,
    empty_is_error: bool | Collection[str] = False,
    seed: int = 0,
    n_boot: int = N_BOOT,
) -> dict[str, Any]:
    """Score a transcripts JSONL against a tools JSON file (or parsed tools, or BaseTools).

    ``is_error``: ``{tool: predicate}`` (``"*"`` for every other tool) or one predicate for all
    tools, each given a result and returning True / False / None (see :data:`IsError`);
    ``empty_is_error``: True, or the tools whose empty results are errors."""
    specs = _specs(tools)
    check_error_options(specs, is_error, empty_is_error)
    good, bad = read_traces(traces)
    if not good:
        raise TraceError(f"{traces}: no readable conversation" + (f" ({bad[0]})" if bad else ""))
    out = score_conversations(
        good, specs, is_error=is_error, empty_is_error=empty_is_error, seed=seed, n_boot=n_boot
    )
    out["input_errors"] = bad
    return out


def score_thread(
    graph: Any,
    thread_id: str,
    tools: Any,
    *,
    is_error: Mapping[str, IsError] | IsError | None = None,
    empty_is_error: bool | Collection[str] = False,
    expected: Any = None,
    seed: int = 0,
    n_boot: int = N_BOOT,
) -> dict[str, Any]:
    """Score the conversation of a LangGraph checkpointer thread (``graph`` compiled with a
    checkpointer; ``tools``: BaseTools or parsed TOOLS.json; the rest as :func:`score_traces`)."""
    config = {"configurable": {"thread_id": thread_id}}
    messages = None
    for snap in graph.get_state_history(config):  # newest first
        values = snap.values if isinstance(snap.values, Mapping) else {}
        if values.get("messages"):
            messages = list(values["messages"])
            break
    if not messages:
        raise TraceError(f"thread {thread_id!r}: no checkpoint with messages")
    return score_conversations(
        [Conversation(thread_id, messages, expected)],
        _specs(tools),
        is_error=is_error,
        empty_is_error=empty_is_error,
        seed=seed,
        n_boot=n_boot,
    )


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
    "RESULT_RULES",
    "Conversation",
    "IsError",
    "ResultClass",
    "TraceError",
    "TraceScore",
    "classify_result",
    "episode_from_messages",
    "episode_to_openai",
    "load_tool_specs",
    "read_traces",
    "score_conversations",
    "score_thread",
    "score_traces",
    "to_messages",
    "trace_success",
]
