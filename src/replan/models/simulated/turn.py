"""One request to the simulated agent: planning, revising after verifier findings, replanning,
and the noise drawn per decision (see the package docstring)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)

from replan.core import linre
from replan.core.plan import (
    RESPONSE,
    ROOT,
    ParseFailure,
    Plan,
    PlanNode,
    exact_reference,
    iter_references,
    reference_text,
)
from replan.core.task import Task
from replan.core.taxonomy import ErrorType
from replan.core.tools import ToolSpec
from replan.core.wire import (
    TOOLS_MARKER,
    json_lines,
    query_of,
    read_replanner_request,
)
from replan.env.mistakes import mutate_call, mutate_structure, referenced_nodes
from replan.env.world import stable_seed
from replan.models.simulated.common import (
    STRUCTURAL_ERRORS,
    convert_value,
    digest,
    fill_schema,
    message_text,
    rewrite_refs,
)
from replan.models.simulated.observe import (
    ObsKind,
    PlausibilityContext,
    Reading,
    read_observation,
)
from replan.models.simulated.plan_memory import (
    base_desc,
    cut_short,
    refers_to,
    remap_by_kind,
    replaced_tools,
    retries_so_far,
    retry_chain,
    same_step,
    suspect_producers,
    unresolved_ref,
    with_instead_mark,
    with_retry_mark,
)
from replan.models.simulated.profiles import CALL_ERROR_TYPES, CompetenceProfile
from replan.models.simulated.visible import (
    NO_VALUE,
    View,
    closest,
    output_kinds,
    routes,
    value_fields,
)


class ModelState(Protocol):
    """What a turn reads of the model that answers: its task (the id for its random streams, and
    the query and tool list a request lacking them would carry), profile, seed, corpus, and its
    cached reading of a request (:class:`~replan.models.simulated.model.SimulatedChatModel`)."""

    task: Task
    profile: CompetenceProfile
    seed: int
    corpus: Any

    def read(self, view: View) -> Plan: ...


# ---------------------------------------------------------------------------------------------
class Turn:
    """One request: the model's knowledge plus the messages; computes the reply."""

    def __init__(
        self,
        model: ModelState,
        messages: Sequence[BaseMessage],
        tools: Sequence[Mapping[str, Any]],
        key: str,
    ):
        self.m = model
        # what the model may read of its task: the id (for its random streams), and the query
        # and tool list a request would carry when the request itself lacks them
        self.base_id = model.task.base_id
        self.profile = model.profile
        self.messages = list(messages)
        self.key = key
        self.system = next((message_text(x) for x in messages if isinstance(x, SystemMessage)), "")
        self.query = next(
            (message_text(x) for x in messages if isinstance(x, HumanMessage)), model.task.query
        )
        self.query = query_of(self.query)  # a replanner request quotes the query
        self.specs = self._specs(tools, model.task.tools)
        self.bound = [t.get("function", t).get("name") for t in tools]
        self.view = View(self.query, self.specs, model.corpus.kinds)
        self._intended: Plan | None = None
        #: what each earlier result adds to a plausibility context, once per result per request
        self._plaus_parts: dict[tuple[int, int], Any] = {}

    # -- randomness and tools --------------------------------------------------------------------
    def rng(self, *purpose: Any) -> random.Random:
        return random.Random(stable_seed("replan.sim", self.base_id, self.m.seed, *purpose))

    def decision(self, nid: str, attempt: int) -> tuple[random.Random, list[float]]:
        """The random stream of one decision: writing / calling step ``nid`` (try ``attempt``).

        Keyed by the step and the attempt only, so ReAct choosing the call and a planner
        writing the node draw the same error; the first draws (one per structural error type)
        decide the step's structural errors.
        """
        r = self.rng("decide", nid, attempt)
        return r, [r.random() for _ in STRUCTURAL_ERRORS]

    def fix_draw(self, nid: str, k: int, p: float) -> bool:
        """Whether the ``k``-th correction of step ``nid`` from an error message succeeds."""
        return self.rng("fix", nid.split(".")[0], k).random() < p

    def intended(self) -> Plan:
        """The plan the agent means to follow, read from the visible request."""
        if self._intended is None:
            self._intended = self.m.read(self.view)
        return self._intended

    def _specs(
        self, tools: Sequence[Mapping[str, Any]], listed: Sequence[str]
    ) -> dict[str, ToolSpec]:
        corpus = self.m.corpus.tools
        out: dict[str, ToolSpec] = {}
        for t in tools:
            fn = t.get("function", t)
            name = fn.get("name")
            if name in corpus:
                out[name] = corpus[name]
            elif name:
                out[name] = ToolSpec.from_pararecover([fn])[0]
        if out:
            return out
        if TOOLS_MARKER in self.system:
            for line in self.system.split(TOOLS_MARKER, 1)[1].splitlines():
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if not isinstance(entry, Mapping) or "name" not in entry:
                    continue
                name = entry["name"]
                if name in corpus:
                    out[name] = corpus[name]
                else:
                    out[name] = ToolSpec.from_pararecover([{**entry, "returns": {}}])[0]
        if not out:
            out = {n: corpus[n] for n in listed if n in corpus}
        return out

    def spec(self, tool: str | None) -> ToolSpec | None:
        if not tool:
            return None
        return self.specs.get(tool) or self.m.corpus.tools.get(tool)

    def rate(self, error: ErrorType) -> float:
        return self.profile.rate(error)

    def draw_call_error(self, r: random.Random, factor: float = 1.0) -> ErrorType | None:
        """At most one call-level error, each with its exact per-call rate (x ``factor``)."""
        u = r.random()
        acc = 0.0
        for et in CALL_ERROR_TYPES:
            acc += self.rate(et) * factor
            if u < acc:
                return et
        return None

    # -- plans as text ---------------------------------------------------------------------------
    def plan_text(self, thought: str, nodes: list[PlanNode]) -> str:
        return f"<thought>{thought}</thought>\n" + Plan(nodes=nodes).to_text()

    def describe(self, nodes: list[PlanNode]) -> str:
        calls = [n for n in nodes if n.is_call and n.status != "done"]
        parts = []
        for n in calls:
            after = [d for d in n.deps if d != ROOT]
            parts.append(
                f"{n.id}: {n.tool}" + (f" after {', '.join(after)}" if after else " first")
            )
        return "; ".join(parts) if parts else "nothing left to call"

    def noisy(self, nodes: list[PlanNode], purpose: str) -> list[PlanNode]:
        """Apply the profile's per-node errors to the pending call nodes of ``nodes``.

        A first plan (``purpose == "plan"``) draws each node's decision from the stream ReAct
        uses to choose that step's first call; a plan written again (after an unreadable plan,
        or a rewrite) draws fresh decisions.
        """
        targets = [n.id for n in nodes if n.is_call and n.status != "done"]
        for nid in targets:
            if purpose == "plan":
                r, u_struct = self.decision(nid, 0)
            else:
                r = self.rng(self.key, purpose, nid)
                u_struct = [r.random() for _ in STRUCTURAL_ERRORS]
            err = self.draw_call_error(r)
            if not any(n.id == nid for n in nodes):
                continue
            node = next(n for n in nodes if n.id == nid)
            if err in (ErrorType.DEPENDENCE_NULL, ErrorType.DEPENDENCE_ERROR):
                nodes = mutate_structure(err, nodes, nid, r) or nodes
            elif err is not None and node.tool:
                got = mutate_call(err, node.tool, node.args, self.specs, r)
                if got is not None:
                    nodes = [
                        n.model_copy(update={"tool": got[0], "args": got[1]}) if n.id == nid else n
                        for n in nodes
                    ]
            for et, u in zip(STRUCTURAL_ERRORS, u_struct, strict=True):
                if u < self.rate(et) and any(n.id == nid for n in nodes):
                    nodes = mutate_structure(et, nodes, nid, r) or nodes
        return nodes

    def malformed(self, text: str, purpose: str) -> str | None:
        """With the profile's probability, the plan text broken the way models break it."""
        r = self.rng(self.key, purpose, "malformed")
        if r.random() >= self.profile.malformed_plan:
            return None
        head, _, body = text.partition("</thought>\n")
        variant = r.randrange(3)
        if variant == 0:  # cut off mid-object
            return head + "</thought>\n" + body[: max(1, len(body) * 2 // 3)]
        data = json.loads(body)
        tasks = data["tasks"]
        if variant == 1:  # forgot the response node
            data["tasks"] = [t for t in tasks if t.get("id") != RESPONSE]
        else:  # a dependency cycle
            calls = [t for t in tasks if t.get("name")]
            if calls:
                calls[0]["dep"] = [*calls[0].get("dep", []), calls[-1]["id"]]
                if calls[0] is calls[-1]:
                    calls[0]["dep"] = [calls[0]["id"]]
        return head + "</thought>\n" + json.dumps(data, ensure_ascii=False, separators=(",", ":"))

    # -- replies ---------------------------------------------------------------------------------
    def text_reply(self, kind: str) -> str:
        """The reply to a ``plan``, ``revise`` or ``replan`` request (acting is the actor's)."""
        if kind == "plan":
            return self.first_plan()
        if kind == "revise":
            return self.revise()
        if kind == "replan":
            return self.replan()
        raise ValueError(f"a turn writes plans, not {kind!r} replies")

    def first_plan(self) -> str:
        intended = list(self.intended().nodes)
        nodes = self.noisy(intended, "plan")
        thought = (
            f"The user asks: {self.query.strip()[:200].rstrip('.?! ')}. I plan these calls: "
            f"{self.describe(nodes)}. Calls without a data dependency run in parallel."
        )
        text = self.plan_text(thought, nodes)
        return self.malformed(text, "plan") or text

    def revise(self) -> str:
        ai = [m for m in self.messages if isinstance(m, AIMessage)]
        human = [m for m in self.messages if isinstance(m, HumanMessage)]
        previous = Plan.parse(message_text(ai[-1])) if ai else ParseFailure(code="empty", reason="")
        findings = json_lines(message_text(human[-1])) if len(human) > 1 else []
        if isinstance(previous, ParseFailure):
            nodes = self.noisy(list(self.intended().nodes), "revise-fresh")
            text = self.plan_text(
                "My previous plan could not be read; I write it again. " + self.describe(nodes),
                nodes,
            )
            return self.malformed(text, "revise") or text
        nodes = list(previous.nodes)
        fixed, ignored = [], []
        for f in findings:
            nid = str(f.get("node", ""))
            if nid in fixed or nid in ignored or not nid:
                continue
            if self.fix_draw(nid, len(human) - 1, self.profile.uptake()):
                nodes = self.restore(nodes, nid, str(f.get("message", "")))
                fixed.append(nid)
            else:
                ignored.append(nid)
        thought = "The verifier's findings: " + (
            f"I fixed node(s) {', '.join(fixed)}" if fixed else "I changed nothing"
        )
        if ignored:
            thought += f"; I think node(s) {', '.join(ignored)} are fine as they are"
        return self.plan_text(thought + ". " + self.describe(nodes), nodes)

    def restore(self, nodes: list[PlanNode], nid: str, message: str = "") -> list[PlanNode]:
        """Node ``nid`` back to its intended form, with any intended producer it needs."""
        intended = {n.id: n for n in self.intended().nodes}
        ids = {n.id for n in nodes}
        if nid not in intended:
            if nid in (ROOT, RESPONSE):
                return nodes
            # a node the plan should not have (a duplicate): drop it
            out = []
            for n in nodes:
                if n.id == nid:
                    continue
                if nid in n.deps:
                    n = n.model_copy(update={"deps": [d for d in n.deps if d != nid] or [ROOT]})
                out.append(n)
            return out
        target = intended[nid]
        tspec = self.spec(target.tool)
        if target.is_call and (tspec is None or not tspec.required <= set(target.args)):
            # the request does not say how to write this node: repair it from the message
            cur = next((n for n in nodes if n.id == nid), None)
            if cur is None or not cur.is_call:
                return nodes
            fixed = self.repair(cur, nodes, message)
            return [fixed if n.id == nid else n for n in nodes]
        need = [d for d in target.deps if d not in ids and d in intended]
        out = list(nodes)
        for d in need:  # a missing producer comes back (recursively)
            if not any(n.id == d for n in out):
                out.insert(
                    max(0, next(i for i, n in enumerate(out) if n.id == nid)),
                    intended[d],
                )
                out = self.restore(out, d) if intended[d].deps else out
        keep_status = next(n.status for n in out if n.id == nid)
        out = [target.model_copy(update={"status": keep_status}) if n.id == nid else n for n in out]
        resp = next((n for n in out if n.id == RESPONSE), None)
        if resp is not None and need:
            deps = [d for d in resp.deps if d not in need]
            out = [
                n.model_copy(update={"deps": deps or [ROOT]}) if n.id == RESPONSE else n
                for n in out
            ]
        return out

    # -- structured output -----------------------------------------------------------------------
    def structured(self, schema_tool: Mapping[str, Any], text: str, kind: str) -> AIMessage:
        fn = schema_tool.get("function", schema_tool)
        params = fn.get("parameters") or {}
        parsed = Plan.parse(text) if kind in ("plan", "revise", "replan") else None
        plan_json = parsed.to_pararecover() if isinstance(parsed, Plan) else None
        m = linre.search(r"<thought>(.*?)</thought>", text, linre.S)
        thought = m.group(1).strip() if m else ""
        body = text.split("</thought>", 1)[-1].strip()
        args = fill_schema(params, thought=thought, plan=plan_json, text=body)
        call_id = "struct_" + digest([self.key, "structured"])[:8]
        return AIMessage(
            content="",
            tool_calls=[{"name": fn["name"], "args": args, "id": call_id, "type": "tool_call"}],
            usage_metadata={
                "input_tokens": 0,
                "output_tokens": max(1, len(text) // 4),
                "total_tokens": max(1, len(text) // 4),
            },
        )

    # -- faults ----------------------------------------------------------------------------------
    def decide(
        self,
        reading: Reading,
        *,
        retries: int,
        can_reroute: bool,
        key: Sequence[Any],
        noticed: bool = False,
    ) -> str:
        """trust | retry | reroute | abort for a faulty-looking result.

        Not noticing (``notice_explicit`` / ``notice_implicit``) means trusting the result;
        ``noticed`` skips that draw (the fault is already known). Pressing on past a failure
        with no way around it (``press_on``) is trusting it too.
        """
        r = self.rng(*key, "fault")
        u_notice, u_act, u_stub, u_press, u_find = (r.random() for _ in range(5))
        p = (
            self.profile.notice_explicit
            if reading.kind is ObsKind.EXPLICIT
            else self.profile.notice_implicit
        )
        if not noticed and u_notice >= p:
            return "trust"
        pol = self.profile.on_fault
        can_reroute = can_reroute and u_find < pol.find_alternative
        total = pol.retry + pol.reroute + pol.abort
        x = u_act * total
        action = "retry" if x < pol.retry else "reroute" if x < pol.retry + pol.reroute else "abort"
        can_retry = retries < pol.max_retries
        if action == "retry" and not can_retry:
            action = "retry" if u_stub < pol.stubborn else "reroute"
        if action == "reroute" and not can_reroute:
            action = "retry" if can_retry else "trust" if u_press < pol.press_on else "abort"
        return action

    def plaus_context(
        self, args: Any, earlier: Iterable[tuple[ToolSpec | None, Any]]
    ) -> PlausibilityContext:
        """What the agent compares a result with: the request, the call, earlier results."""
        return PlausibilityContext.build([self.query, args], earlier, parts=self._plaus_parts)

    # -- alternatives ----------------------------------------------------------------------------
    def alternative(
        self, nodes: list[PlanNode], done: set[str], nid: str, failed_tools: set[str]
    ) -> list[PlanNode] | None:
        """The plan with node ``nid`` replaced by a chain of listed tools that fits, or ``None``.

        The chain must give what later steps read from ``nid`` (the kinds of those output
        fields; for a step whose output nothing reads, the kinds of its own output). Candidate
        chains come from the tool list alone (:func:`replan.models.simulated.visible.routes`); the first
        whose inputs bind from the failed step's arguments, earlier results and the query wins.
        """
        node = next(n for n in nodes if n.id == nid)
        spec = self.spec(node.tool)
        if spec is None:
            return None
        failed = set(failed_tools) | {node.tool or ""}
        ids = [n.id for n in nodes]
        need = self._read_kinds(nodes, nid, spec) or [k for _, k in output_kinds(spec.returns)][:1]
        if not need:
            return None
        # a tool the plan already uses for another step is not an alternative for this one
        failed |= {n.tool for n in nodes if n.is_call and n.tool and n.id != nid}
        for chain in routes(self.view, node.tool or "", need, exclude=failed)[:24]:
            got = self.bind_chain(nodes, node, spec, chain, done)
            if got is not None:
                old = set(ids)
                return [
                    with_instead_mark(n, failed) if n.id not in old and n.is_call else n
                    for n in got
                ]
        # no tool gives what the next step reads from this one (a chain of a provider's own
        # tools): replace this step together with the pending step that reads it
        for c in nodes:
            if c.id in done or c.status == "done" or not refers_to(c.args, nid, ids):
                continue
            cspec = self.spec(c.tool)
            if cspec is None:
                continue
            need2 = (
                self._read_kinds(nodes, c.id, cspec)
                or [k for _, k in output_kinds(cspec.returns)][:1]
            )
            merged = [n for n in nodes if n.id != c.id]
            merged = [
                n.model_copy(
                    update={
                        "args": rewrite_refs(n.args, {c.id: nid}, ids),
                        "deps": [nid if d == c.id else d for d in n.deps],
                    }
                )
                for n in merged
            ]
            gone = failed | {c.tool or ""}
            for chain in routes(self.view, c.tool or "", need2, exclude=gone)[:24]:
                got = self.bind_chain(merged, node, cspec, chain, done, also=[(spec, node.args)])
                if got is not None:
                    old = set(ids)
                    return [
                        with_instead_mark(n, gone) if n.id not in old and n.is_call else n
                        for n in got
                    ]
        return None

    def _read_kinds(self, nodes: list[PlanNode], nid: str, spec: ToolSpec) -> list[str]:
        """Kinds of the output fields of ``nid`` that pending steps read."""
        ids = [n.id for n in nodes]
        out: list[str] = []
        for n in nodes:
            if n.id == nid or n.status == "done":
                continue
            for ref in iter_references(n.args, ids):
                if ref.node == nid:
                    k = (spec.output_field_schema(list(ref.path)) or {}).get("x-kind")
                    if k and str(k) not in out:
                        out.append(str(k))
        return out

    def bind_chain(
        self,
        nodes: list[PlanNode],
        node: PlanNode,
        spec: ToolSpec,
        chain: list[str],
        done: Iterable[str] = (),
        also: Sequence[tuple[ToolSpec, Mapping[str, Any]]] = (),
    ) -> list[PlanNode] | None:
        """Replace ``node`` by ``chain``, binding arguments by semantic kind (``x-kind``)."""
        done = set(done)
        pool: dict[str, list[Any]] = {}
        ids0 = [n.id for n in nodes]
        for sp, given in [*also, (spec, node.args)]:
            for p in sp.param_names:
                if p in given and not unresolved_ref(given[p], ids0, done):
                    k = (sp.param_schema(p) or {}).get("x-kind")
                    if k:
                        pool.setdefault(k, []).append(given[p])
        qpool: dict[str, list[Any]] = {}
        for lit in self.view.literals:
            if lit.kind and lit.value not in qpool.setdefault(lit.kind, []):
                qpool[lit.kind].append(lit.value)
        ids = [n.id for n in nodes]
        new_nodes: list[PlanNode] = []
        prev_id, prev_spec = None, None
        base, j, taken = node.id.split(".")[0], 1, set(ids)
        for tool in chain:
            tspec = self.specs[tool]
            used: dict[str, int] = {}
            args: dict[str, Any] = {}
            for p in tspec.param_names:
                k = (tspec.param_schema(p) or {}).get("x-kind")
                val: Any = None
                if k and prev_spec is not None:
                    hit = next(
                        (pth for pth, kk in value_fields(prev_spec.returns) if kk == k), None
                    )
                    if hit:
                        val = reference_text(prev_id, *hit)
                if val is None and k:
                    i = used.get(k, 0)
                    src = pool.get(k) or []
                    if i < len(src):
                        val = src[i]
                        used[k] = i + 1
                if val is None and k:  # an executed step's output of the kind
                    for n in reversed(nodes):
                        executed = (n.status == "done" or n.id in done) and n.id != node.id
                        nspec = self.specs.get(n.tool or "") if executed else None
                        hit = (
                            next((pth for pth, kk in value_fields(nspec.returns) if kk == k), None)
                            if nspec is not None
                            else None
                        )
                        if hit:
                            val = reference_text(n.id, *hit)
                            break
                if val is None and k:
                    i = used.get(k, 0)
                    src = qpool.get(k) or []
                    if i < len(src):
                        val = src[i]
                        used[k] = i + 1
                if val is None and p in node.args and p in tspec.param_names and tool == chain[0]:
                    val = node.args[p]
                if val is None:
                    got = self.view.labelled(tspec, p)
                    val = None if got is NO_VALUE else got
                if val is not None:
                    args[p] = val
                elif p in tspec.required:
                    return None
            while f"{base}.{j}" in taken:
                j += 1
            nid = f"{base}.{j}"
            taken.add(nid)
            known = [*ids, *(m.id for m in new_nodes)]
            deps = referenced_nodes(PlanNode(id="x", args=args), known)
            deps = deps or ([prev_id] if prev_id else [d for d in node.deps if d != node.id])
            new_nodes.append(
                PlanNode(id=nid, tool=tool, args=args, desc=base_desc(node.desc), deps=deps)
            )
            prev_id, prev_spec = nid, tspec
        last = new_nodes[-1]
        last_spec = self.specs[last.tool]  # type: ignore[index]
        out: list[PlanNode] = []
        for n in nodes:
            if n.id == node.id and node.status != "done":
                out.extend(new_nodes)
                continue
            if n.id == node.id:
                out.append(n)
                out.extend(new_nodes)
                continue
            if n.status != "done" and (node.id in n.deps or refers_to(n.args, node.id, ids)):
                args = remap_by_kind(n.args, node.id, spec, last.id, last_spec, ids)
                if args is None:
                    return None
                deps = [last.id if d == node.id else d for d in n.deps]
                n = n.model_copy(update={"args": args, "deps": deps})
            out.append(n)
        return out

    # -- replanning ------------------------------------------------------------------------------
    def replan(self) -> str:
        """The updated DAG after a wave: executed nodes unchanged, failures dealt with.

        The replanner sees only the current plan and the last wave, so what it remembers
        across rounds it writes into the plan itself, as a model would: a retried node's
        ``desc`` ends in ``[retry k]`` and a rerouted one in ``[instead of <tools>]``.
        """
        human = message_text([m for m in self.messages if isinstance(m, HumanMessage)][-1])
        plan_json, observations = read_replanner_request(human)
        current = Plan.parse(plan_json) if plan_json is not None else None
        if not isinstance(current, Plan):
            nodes = self.noisy(list(self.intended().nodes), "replan-fresh")
            return self.plan_text("I could not read the current plan; I plan again.", nodes)
        nodes = list(current.nodes)
        notes: list[str] = []
        done = {n.id for n in nodes if n.status == "done"}
        failures = 0
        abort: str | None = None
        failed_id: str | None = None
        for i, obs in enumerate(observations):
            nid = str(obs.get("node")) if obs.get("node") is not None else None
            node = next((n for n in nodes if n.id == nid), None) if nid else None
            if node is None:
                node = next((n for n in nodes if n.tool == obs.get("tool")), None)
            if node is None or abort:
                continue
            tool = obs.get("tool") or node.tool
            earlier = [
                (self.spec(o.get("tool")), o.get("result"))
                for j, o in enumerate(observations)
                if j != i
            ]
            reading = read_observation(
                obs.get("result"), self.spec(tool), self.plaus_context(obs.get("args"), earlier)
            )
            if reading.kind is ObsKind.OK:
                continue
            tries = retries_so_far(node, nodes)
            failures += 1
            if reading.kind is ObsKind.INVALID:
                if tries + 1 >= self.profile.max_attempts:
                    abort = f"{tool} kept rejecting my calls ({reading.reason})"
                    failed_id = node.id
                    break
                producer = self.suspect(node, nodes, reading)
                if producer is not None:
                    why = f"{tool} rejected the value {producer.tool} gave ({reading.reason})"
                    nodes, note, abort = self.fault_in_plan(
                        nodes,
                        done,
                        producer,
                        producer.tool or "",
                        Reading(ObsKind.IMPLICIT, why),
                        True,
                    )
                    if abort:
                        failed_id = producer.id
                    if note:
                        notes.append(note)
                    continue
                fix = self.fix_draw(node.id, tries + 1, self.profile.fix_invalid_call)
                repl = node
                if fix:
                    nodes, repl = self.with_producers(
                        nodes, self.corrected(node, nodes, reading.reason)
                    )
                nodes = self.replace_node(nodes, node, with_retry_mark(repl, tries + 1))
                notes.append(
                    f"node {node.id} ({tool}) was rejected: {reading.reason}; "
                    + ("I corrected the call" if fix else "I try it again")
                )
                continue
            nodes, note, abort = self.fault_in_plan(nodes, done, node, tool, reading, False)
            if note is None and abort is None:
                failures -= 1  # trusted
            if abort:
                failed_id = node.id
            elif note:
                notes.append(note)
        if abort:
            return self.plan_text(
                f"I stop here: {abort}. I will tell the user the request cannot be completed.",
                cut_short(nodes, abort, failed_id),
            )
        if failures and self.rng(self.key, "rewrite").random() < self.profile.replan_rewrite:
            nodes = self.rewrite_pending(nodes)
            notes.append("I rewrote the remaining steps")
        pending = [n for n in nodes if n.is_call and n.status != "done"]
        if not notes:
            notes.append(
                "the last results look right; "
                + ("only the response remains" if not pending else "I continue with the plan")
            )
        text = "; ".join(notes)
        return self.plan_text(text[:1].upper() + text[1:] + ".", nodes)

    def fault_in_plan(
        self,
        nodes: list[PlanNode],
        done: set[str],
        node: PlanNode,
        tool: str,
        reading: Reading,
        noticed: bool,
    ) -> tuple[list[PlanNode], str | None, str | None]:
        """(nodes, note, abort reason) after a faulty result of ``node`` (replanner)."""
        tries = retries_so_far(node, nodes)
        failed_tools = replaced_tools(node, nodes) | {tool}
        alt = self.alternative(nodes, done - {node.id}, node.id, failed_tools)
        action = self.decide(
            reading,
            retries=tries,
            can_reroute=alt is not None,
            key=(node.id.split(".")[0], tries),
            noticed=noticed,
        )
        if action == "trust":
            return nodes, None, None
        if action == "retry":
            nodes = self.replace_node(nodes, node, with_retry_mark(node, tries + 1))
            return nodes, f"{tool} failed ({reading.reason}); I retry it", None
        if action == "reroute" and alt is not None:
            return alt, f"{tool} failed ({reading.reason}); I switch to an alternative", None
        return nodes, None, f"{tool} failed ({reading.reason}) and I see no way around it"

    def with_producers(
        self, nodes: list[PlanNode], node: PlanNode
    ) -> tuple[list[PlanNode], PlanNode]:
        """Make sure every node whose output ``node`` uses is in the plan and in its deps.

        A producer the plan lacks (a forgotten call) comes back from the intended plan, with
        its own producers; ``node`` then depends on every node it references.
        """
        intended = {n.id: n for n in self.intended().nodes}
        out = list(nodes)

        def ensure(nid: str, seen: set[str]) -> None:
            if any(n.id == nid for n in out) or nid not in intended or nid in seen:
                return
            seen.add(nid)
            prod = intended[nid]
            for d in prod.deps:
                ensure(d, seen)
            ids = {n.id for n in out}
            at = next((i for i, n in enumerate(out) if n.id == RESPONSE), len(out))
            out.insert(
                at,
                prod.model_copy(
                    update={
                        "status": "pending",
                        "deps": [d for d in prod.deps if d in ids] or [ROOT],
                    }
                ),
            )

        all_ids = [*{n.id for n in out}, *intended]
        refs = referenced_nodes(node, all_ids)
        for p in refs:
            ensure(p, set())
        ids = {n.id for n in out}
        deps = [d for d in node.deps if d in ids and d != node.id]
        deps += [p for p in refs if p in ids and p not in deps and p != node.id]
        return out, node.model_copy(update={"deps": deps or [ROOT]})

    def suspect(self, node: PlanNode, nodes: list[PlanNode], reading: Reading) -> PlanNode | None:
        """The executed node whose output fed a rejected argument, if the agent suspects it."""
        ids = [n.id for n in nodes]
        done = {n.id for n in nodes if n.status == "done"}
        cands = suspect_producers(node, ids, done, reading)
        if not cands:
            return None
        tries = retries_so_far(node, nodes)
        if (
            self.rng("suspect", node.id.split(".")[0], tries).random()
            >= self.profile.notice_implicit
        ):
            return None
        return next(n for n in nodes if n.id == cands[-1])

    def corrected(
        self, node: PlanNode, nodes: list[PlanNode], reason: str | None = None
    ) -> PlanNode:
        """``node``'s step written again from the visible request, references mapped onto ``nodes``.

        The step is found in the plan read from the request by id (``2.1`` is a retry of ``2``)
        when the tool or most argument names agree, else by tool; it is used only when it gives
        every required parameter. A reference to a producer points at whichever node now holds
        that producer's role (the last retry or the end of the chain that replaced it), the
        field mapped by semantic kind when the tool changed. Otherwise the call is repaired
        from the error message alone (:meth:`repair`); what cannot be found stays wrong.
        """
        intended = self.intended()
        base = node.id.split(".")[0]
        target = intended.get(base)
        if target is not None and not (target.is_call and same_step(node, target)):
            target = None
        if target is None:
            target = next((n for n in intended.call_nodes if n.tool == node.tool), None)
        tspec = self.spec(target.tool) if target is not None else None
        if target is None or tspec is None or not tspec.required <= set(target.args):
            return self.repair(node, nodes, reason or "")
        ids = [n.id for n in nodes]
        args = dict(target.args)
        for producer in referenced_nodes(target, [*ids, *intended.ids]):
            holder = retry_chain(nodes, producer)
            if not holder or holder[-1].id == producer:
                continue
            last = holder[-1]
            old_spec = self.spec(intended.get(producer).tool if intended.get(producer) else None)
            new_spec = self.spec(last.tool)
            remapped = None
            if old_spec is not None and new_spec is not None:
                remapped = remap_by_kind(args, producer, old_spec, last.id, new_spec, ids)
            args = (
                remapped if remapped is not None else rewrite_refs(args, {producer: last.id}, ids)
            )
        return node.model_copy(update={"tool": target.tool, "args": args})

    def repair(self, node: PlanNode, nodes: list[PlanNode], reason: str) -> PlanNode:
        """The call fixed from what the error message and the visible context say.

        An unknown tool or parameter name becomes the closest listed one; a value of the wrong
        type is converted when it can be; an enum value outside the list becomes the closest
        allowed one; a missing required parameter is filled from an earlier step's output of
        its kind, a value the query states for it, or an argument of the same name an earlier
        step used. Anything else stays as it was (the fix fails).
        """
        tool = node.tool or ""
        spec = self.specs.get(tool)
        if spec is None:
            tool = closest(tool, self.specs) or tool
            spec = self.specs.get(tool)
        if spec is None:
            return node
        args = dict(node.args)
        strays: dict[str, Any] = {}
        for k in list(args):
            if k not in spec.param_names:
                new = closest(k, [p for p in spec.param_names if p not in args])
                value = args.pop(k)
                if new is not None:
                    args[new] = value
                else:
                    strays[k] = value
        lacking = sorted(spec.required - set(args))
        if len(strays) == 1 and len(lacking) == 1:  # the one value under the one wrong name
            args[lacking[0]] = next(iter(strays.values()))
        ids = [n.id for n in nodes]
        for k, v in list(args.items()):
            if exact_reference(v, ids) is not None:
                continue
            check = spec.check_value(k, v)
            if check.ok:
                continue
            schema = spec.param_schema(k) or {}
            fixed = convert_value(v, schema)
            if fixed is not NO_VALUE and spec.check_value(k, fixed).ok:
                args[k] = fixed
        earlier = [n for n in nodes if n.status == "done" and n.is_call and n.id != node.id]
        for p in sorted(spec.required - set(args)):
            kind = (spec.param_schema(p) or {}).get("x-kind")
            val: Any = NO_VALUE
            for n in reversed(earlier):
                nspec = self.specs.get(n.tool or "")
                hit = (
                    next((pth for pth, kk in output_kinds(nspec.returns) if kk == kind), None)
                    if nspec is not None and kind
                    else None
                )
                if hit:
                    val = reference_text(n.id, *hit)
                    break
            if val is NO_VALUE:
                val = self.view.labelled(spec, p)
            if val is NO_VALUE and kind:
                val = self.view.literal_of_kind(str(kind), {}, None, spec, p)
            if val is NO_VALUE:
                val = next((n.args[p] for n in reversed(earlier) if p in n.args), NO_VALUE)
            if val is not NO_VALUE:
                args[p] = val
        return node.model_copy(update={"tool": tool, "args": args})

    def replace_node(
        self, nodes: list[PlanNode], failed: PlanNode, repl: PlanNode
    ) -> list[PlanNode]:
        """Re-run a step: an executed node stays as it ran; a new node takes over its role."""
        ids = [n.id for n in nodes]
        if failed.status != "done":
            return [
                repl.model_copy(update={"id": failed.id}) if n.id == failed.id else n for n in nodes
            ]
        base = failed.id.split(".")[0]
        k = 1
        while f"{base}.{k}" in ids:
            k += 1
        new_id = f"{base}.{k}"
        new = repl.model_copy(update={"id": new_id, "status": "pending"})
        out: list[PlanNode] = []
        for n in nodes:
            if (
                n.id != failed.id
                and n.status != "done"
                and (failed.id in n.deps or refers_to(n.args, failed.id, ids))
            ):
                n = n.model_copy(
                    update={
                        "args": rewrite_refs(n.args, {failed.id: new_id}, ids),
                        "deps": [new_id if d == failed.id else d for d in n.deps],
                    }
                )
            out.append(n)
            if n.id == failed.id:
                out.append(new)
        return out

    def rewrite_pending(self, nodes: list[PlanNode]) -> list[PlanNode]:
        """Redraw every pending call node from its intended form (fixing and adding errors)."""
        fixed = []
        for n in nodes:
            if n.is_call and n.status != "done":
                c = self.corrected(n, nodes)
                n = n.model_copy(update={"tool": c.tool, "args": c.args})
            fixed.append(n)
        return self.noisy(fixed, "rewrite")
