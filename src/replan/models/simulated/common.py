"""What every part of the simulated agent shares: message digests (the reply is a pure function
of the request), value conversions, what it remembers about a step, and filling a
structured-output schema."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ToolMessage,
)

from replan.core import linre
from replan.core.leaves import scalar_leaves
from replan.core.plan import (
    PlanNode,
    reference_text,
    split_reference,
    substitute_references,
)
from replan.core.taxonomy import ErrorType
from replan.core.tools import canonical_json
from replan.models.simulated.visible import (
    NO_VALUE,
    closest,
)

#: a tool-call id the frontier executor gives a plan node's call in a wave (``r<k>_<node>``)
WAVE_CALL_ID = linre.compile(r"^r\d+_(.+)$")
#: a tool-call id the simulated actor gives its own call: ``call|dup_<node>_<attempt>_<hash>``
CALL_ID = linre.compile(r"^(call|dup)_(.+)_(\d+)_[0-9a-f]{8}$")
#: the plan-shape mistakes (parallelism, order, missing and redundant calls)
STRUCTURAL_ERRORS = (
    ErrorType.PARALLELISM_ERROR,
    ErrorType.SERIAL_ERROR,
    ErrorType.TOOLCALL_MISSING,
    ErrorType.TOOLCALL_REDUNDANCY,
)


# ---------------------------------------------------------------------------------------------
# small helpers
def message_text(m: BaseMessage) -> str:
    """A message's text (a content-block list joined)."""
    c = m.content
    if isinstance(c, str):
        return c
    return "".join(b.get("text", "") if isinstance(b, Mapping) else str(b) for b in c)


def canonical_message(m: BaseMessage) -> dict[str, Any]:
    """What of a message the reply depends on (type, text, tool calls, tool-call id), as JSON."""
    out: dict[str, Any] = {"t": m.type, "c": message_text(m)}
    if isinstance(m, AIMessage) and m.tool_calls:
        out["tc"] = [[tc["name"], tc["args"], tc.get("id")] for tc in m.tool_calls]
    if isinstance(m, ToolMessage):
        out["id"] = m.tool_call_id
    return out


def digest(value: Any) -> str:
    """SHA-256 of ``value``'s canonical JSON: the seed of every draw (never ``hash()``)."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


def rewrite_refs(value: Any, mapping: Mapping[str, str], ids: Iterable[str]) -> Any:
    """Rename the node part of every ``${node.path}`` reference in ``value`` by ``mapping``."""
    known = sorted(set(ids) | set(mapping))

    def sub(body: str) -> str:
        ref = split_reference(body, known)
        if ref.node not in known:
            return reference_text(body)  # not a node of this plan: left as written
        return reference_text(mapping.get(ref.node, ref.node), *ref.path)

    if isinstance(value, str):
        return substitute_references(value, sub)
    if isinstance(value, Mapping):
        return {k: rewrite_refs(v, mapping, known) for k, v in value.items()}
    if isinstance(value, list):
        return [rewrite_refs(v, mapping, known) for v in value]
    return value


def fabricate(schema: Mapping[str, Any] | None) -> Any:
    """What a model writes for a value it does not have (a hallucinated placeholder)."""
    t = (schema or {}).get("type")
    t = t[0] if isinstance(t, list) and t else t
    return {"integer": 0, "number": 0.0, "boolean": False, "array": [], "object": {}}.get(
        t, "unknown"
    )


def convert_value(value: Any, schema: Mapping[str, Any]) -> Any:
    """``value`` as the schema's type or enum, when the conversion is plain; else ``NO_VALUE``."""
    enum = schema.get("enum")
    if enum and isinstance(value, str):
        got = closest(value, [str(e) for e in enum])
        return next((e for e in enum if str(e) == got), NO_VALUE) if got else NO_VALUE
    t = schema.get("type")
    t = t[0] if isinstance(t, list) and t else t
    try:
        if t == "integer" and isinstance(value, str | float) and not isinstance(value, bool):
            return int(float(value))
        if t == "number" and isinstance(value, str):
            return float(value)
        if t == "string" and isinstance(value, int | float | bool):
            return str(value)
        if t == "string" and isinstance(value, list) and len(value) == 1:
            return str(value[0])
        if t == "array" and not isinstance(value, list):
            return [value]
        if t == "boolean" and isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
    except ValueError:
        return NO_VALUE
    return NO_VALUE


def scalar_facts(value: Any) -> list[str]:
    """Every scalar of a result as ``path: value`` (lists: their first 20 items)."""
    return [f"{'.'.join(path) or 'result'}: {v}" for path, v in scalar_leaves(value)]


@dataclass
class StepMemory:
    """What the agent remembers about one plan node while acting."""

    node: PlanNode
    status: str = "pending"  # pending | done | skipped
    output: Any = None
    out_tool: str | None = None
    invalid: int = 0
    retries: int = 0
    attempts: int = 0
    failed_tools: set[str] = field(default_factory=set)
    repeat: tuple[str, dict[str, Any]] | None = None
    last: tuple[str, dict[str, Any]] | None = None  # the last call issued for this step
    want_dup: bool = False
    needed: bool = False  # a fix showed this step is needed: it is not skipped again


class Abort(Exception):
    """The agent gives the task up; ``reason`` goes into its final answer."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def ai_message(content: str, tool_calls: list[dict[str, Any]] | None = None) -> AIMessage:
    """A reply with a rough token count (4 characters a token, 20 per tool call)."""
    out_tokens = max(1, len(content) // 4) + 20 * len(tool_calls or [])
    return AIMessage(
        content=content,
        tool_calls=tool_calls or [],
        usage_metadata={"input_tokens": 0, "output_tokens": out_tokens, "total_tokens": out_tokens},
    )


_SYN = {
    "id": ("id", "node_id", "task_id", "node"),
    "name": ("name", "tool", "tool_name", "function"),
    "para": ("para", "args", "arguments", "parameters", "params", "input"),
    "desc": ("desc", "description", "purpose", "why"),
    "dep": ("dep", "deps", "dependencies", "depends_on", "after"),
    "status": ("status", "done", "executed"),
}


def _fill_node(item_schema: Mapping[str, Any], node: Mapping[str, Any]) -> Any:
    props = item_schema.get("properties") if isinstance(item_schema, Mapping) else None
    if not isinstance(props, Mapping):
        return dict(node)
    out: dict[str, Any] = {}
    for name, ps in props.items():
        low = name.lower()
        src = next((k for k, syn in _SYN.items() if low in syn), None)
        if src is None or src not in node:
            continue
        v = node[src]
        t = ps.get("type") if isinstance(ps, Mapping) else None
        if t == "string" and not isinstance(v, str):
            v = (
                json.dumps(v, ensure_ascii=False)
                if src != "status"
                else ("done" if v else "pending")
            )
        out[name] = v
    return out


def fill_schema(
    params: Mapping[str, Any], *, thought: str, plan: Mapping[str, Any] | None, text: str
) -> dict[str, Any]:
    """Pour a reply into a structured-output schema (thought, task list, plan text, answer)."""
    props = params.get("properties") or {}
    tasks = list((plan or {}).get("tasks", []))
    out: dict[str, Any] = {}
    for name, ps in props.items():
        ps = ps if isinstance(ps, Mapping) else {}
        low = name.lower()
        t = ps.get("type")
        if low in ("thought", "thoughts", "reasoning", "rationale", "thinking"):
            out[name] = thought
        elif t == "array" or low in ("tasks", "nodes", "steps", "dag"):
            out[name] = [_fill_node(ps.get("items") or {}, n) for n in tasks]
        elif t == "object" or (plan is not None and low in ("plan", "dag", "plan_json")):
            sub = ps.get("properties")
            if isinstance(sub, Mapping) and sub:
                out[name] = fill_schema(ps, thought=thought, plan=plan, text=text)
            else:
                out[name] = dict(plan or {})
        elif t == "string" or t is None:
            out[name] = (
                json.dumps(plan, ensure_ascii=False) if plan is not None and "plan" in low else text
            )
    return out
