"""The simulated agent's memory in the plan it writes, as a model's would be: ``[retry k]`` and
``[instead of <tools>]`` marks in a node's ``desc``, the steps a fault may come from, chains,
and a plan cut short with an honest response; plus the final answer's wording."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    BaseMessage,
    HumanMessage,
)

from replan.core import linre
from replan.core.plan import (
    RESPONSE,
    ROOT,
    PlanNode,
    exact_reference,
    iter_references,
    reference_text,
)
from replan.core.tools import ToolSpec
from replan.core.wire import (
    json_lines,
)
from replan.models.simulated.common import (
    message_text,
    rewrite_refs,
    scalar_facts,
)
from replan.models.simulated.observe import (
    Reading,
)
from replan.models.simulated.visible import (
    value_fields,
)

CUT_SHORT = "tell the user the request could not be completed"


def final_answer(failure: str | None, facts: list[str]) -> str:
    """The final answer: the facts obtained, or an honest report that the task failed."""
    if failure:
        text = f"I could not complete your request: {failure}."
        if facts:
            text += " What I did get: " + "; ".join(facts) + "."
        return text
    return "Done. " + "; ".join(facts) + "." if facts else "Done."


# ---------------------------------------------------------------------------------------------
def scalar_values(value: Any) -> list[Any]:
    """The scalars of an object's fields, nested objects included, arrays left out."""
    if isinstance(value, Mapping):
        return [x for v in value.values() for x in scalar_values(v)]
    if isinstance(value, list):
        return []
    return [value]


def facts_from_human(messages: Sequence[BaseMessage]) -> list[str]:
    """Results quoted in the conversation (a responder that gets observations as text)."""
    facts: list[str] = []
    for m in messages:
        if not isinstance(m, HumanMessage):
            continue
        for obj in json_lines(message_text(m)):
            res = obj.get("result")
            if isinstance(res, Mapping) and "error" not in res:
                got = scalar_facts(res)
                if got:
                    facts.append(f"{obj.get('tool', 'result')}: " + ", ".join(got))
    return facts


def unresolved_ref(value: Any, ids: list[str], done: set[str]) -> bool:
    """Whether ``value`` refers to the output of a step that has not run."""
    return any(r.node not in done for r in iter_references(value, ids)) or (
        (ref := exact_reference(value, ids)) is not None and ref.node not in done
    )


def refers_to(args: Any, nid: str, ids: Iterable[str]) -> bool:
    """Whether ``args`` reference the output of node ``nid``."""
    return any(r.node == nid for r in iter_references(args, list(ids)))


_RETRY_MARK = linre.compile(r"\s*\[retry (\d+)\]")
_INSTEAD_MARK = linre.compile(r"\s*\[instead of ([^\]]+)\]")


def base_desc(desc: str) -> str:
    """A node's desc without the replanner's ``[retry k]`` and ``[instead of ...]`` marks."""
    return _INSTEAD_MARK.sub("", _RETRY_MARK.sub("", desc)).strip()


def with_retry_mark(node: PlanNode, k: int) -> PlanNode:
    """``node`` whose desc records that this is its ``k``-th retry (the replanner's memory)."""
    inst = _INSTEAD_MARK.search(node.desc)
    desc = base_desc(node.desc) + (inst.group(0) if inst else "") + f" [retry {k}]"
    return node.model_copy(update={"desc": desc.strip()})


def with_instead_mark(node: PlanNode, failed_tools: Iterable[str]) -> PlanNode:
    """``node`` whose desc records the tools it replaces (so they are not tried again)."""
    tools = ", ".join(sorted(t for t in failed_tools if t))
    return node.model_copy(update={"desc": f"{base_desc(node.desc)} [instead of {tools}]".strip()})


def retries_so_far(node: PlanNode, nodes: list[PlanNode]) -> int:
    """Retries so far of ``node``'s step: from its ``[retry k]`` mark or its retry ids."""
    m = _RETRY_MARK.search(node.desc)
    marked = int(m.group(1)) if m else 0
    same = [n for n in retry_chain(nodes, node.id) if n.tool == node.tool]
    return max(marked, len(same) - 1)


def replaced_tools(node: PlanNode, nodes: list[PlanNode]) -> set[str]:
    out = {n.tool for n in retry_chain(nodes, node.id) if n.tool and n.tool != node.tool}
    m = _INSTEAD_MARK.search(node.desc)
    if m:
        out |= {t.strip() for t in m.group(1).split(",") if t.strip()}
    return out


def suspect_producers(
    node: PlanNode, ids: list[str], done: set[str], reading: Reading
) -> list[str]:
    """Executed producers whose values the rejected call passed where the world objected.

    Only a value that does not exist or is invalid (``precondition_failed``, ``invalid_value``)
    raises the question. When the message names parameters, only references in those count (a
    literal the agent typed itself is its own mistake); otherwise every referenced producer.
    """
    if reading.code not in ("precondition_failed", "invalid_value"):
        return []
    refs: dict[str, str] = {}
    for k, v in node.args.items():
        r = exact_reference(v, ids)
        if r is not None and r.node in done:
            refs[k] = r.node
    named = [k for k in node.args if linre.search(rf"\b{linre.escape(k)}\b", reading.reason)]
    if named:
        return list(dict.fromkeys(refs[k] for k in named if k in refs))
    return list(dict.fromkeys(refs.values()))


def same_step(node: PlanNode, target: PlanNode) -> bool:
    """Whether ``node`` is (a possibly mistaken version of) the intended step ``target``."""
    if node.tool == target.tool:
        return True
    a, b = set(node.args), set(target.args)
    return bool(a | b) and len(a & b) * 2 >= len(a | b)


def retry_chain(nodes: list[PlanNode], nid: str) -> list[PlanNode]:
    """The node and the retries that took its role (ids ``base``, ``base.1``, ...)."""
    base = nid.split(".")[0]
    return [n for n in nodes if n.id == base or n.id.startswith(base + ".")]


def remap_by_kind(
    args: dict[str, Any],
    old: str,
    old_spec: ToolSpec,
    new: str,
    new_spec: ToolSpec,
    ids: list[str],
) -> dict[str, Any] | None:
    """Point references to ``old``'s output at the field of ``new`` with the same kind."""
    targets = value_fields(new_spec.returns)
    out: dict[str, Any] = {}
    for k, v in args.items():
        ref = exact_reference(v, ids)
        if ref is None or ref.node != old:
            out[k] = rewrite_refs(v, {old: new}, ids)
            continue
        schema = old_spec.output_field_schema(ref.path) or {}
        kind = schema.get("x-kind")
        hit = next((p for p, kk in targets if kk == kind), None) if kind else None
        if hit is None:
            if new_spec.output_field_schema(ref.path) is None:
                return None
            hit = tuple(ref.path)
        out[k] = reference_text(new, *hit)
    return out


def cut_short(nodes: list[PlanNode], reason: str, failed: str | None = None) -> list[PlanNode]:
    """Drop pending calls; the response reports that the request cannot be completed.

    A tool-less ``stop`` node (a reasoning step: it runs nothing) records why; it depends on the
    executed nodes except the failed one, whose result, if any, is not passed on.
    """
    done = [n for n in nodes if n.status == "done" and n.id != RESPONSE]
    ids = {n.id for n in nodes}
    stop_id = next(f"stop{i or ''}" for i in range(len(ids) + 1) if f"stop{i or ''}" not in ids)
    stop = PlanNode(
        id=stop_id,
        desc=f"stop: {reason}",
        deps=[n.id for n in done if n.id not in (ROOT, failed)] or [ROOT],
    )
    resp = PlanNode(id=RESPONSE, desc=f"{CUT_SHORT}: {reason}", deps=[stop_id])
    return [*done, stop, resp]
