"""ReAct play of the simulated agent: rebuild what happened from the messages, then issue the
next tool calls or the final answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    ToolMessage,
)

from replan.core.plan import (
    RESPONSE,
    ROOT,
    Plan,
    PlanNode,
    exact_reference,
    reference_text,
    split_reference,
    substitute_references,
)
from replan.core.taxonomy import ErrorType
from replan.core.tools import ToolSpec, canonical_json
from replan.core.wire import (
    EXECUTED_PLAN_MARKER,
    PLAN_MARKER,
    RESPONDER_INSTRUCTION,
)
from replan.env.mistakes import mutate_call, referenced_nodes
from replan.env.world import MISSING, lookup_path
from replan.models.simulated.common import (
    CALL_ID,
    STRUCTURAL_ERRORS,
    WAVE_CALL_ID,
    Abort,
    StepMemory,
    ai_message,
    digest,
    fabricate,
    scalar_facts,
)
from replan.models.simulated.observe import (
    ObsKind,
    Reading,
    parse_observation,
    read_observation,
)
from replan.models.simulated.plan_memory import (
    CUT_SHORT,
    facts_from_human,
    final_answer,
    scalar_values,
    suspect_producers,
)
from replan.models.simulated.turn import Turn


# ---------------------------------------------------------------------------------------------
class Actor:
    """ReAct play: rebuild what happened from the messages, then take the next step."""

    def __init__(self, turn: Turn):
        self.t = turn
        self.given: Plan | None = None
        if PLAN_MARKER in turn.system:
            p = Plan.parse(turn.system.split(PLAN_MARKER, 1)[1])
            if isinstance(p, Plan):
                self.given = p
        base = self.given or turn.intended()
        self.nodes: list[PlanNode] = [
            n.model_copy(update={"status": "done" if n.id == ROOT else "pending"})
            for n in base.nodes
        ]
        self.steps: dict[str, StepMemory] = {
            n.id: StepMemory(node=n) for n in self.nodes if n.is_call
        }
        self.outputs: dict[str, Any] = {}
        self.order: list[str] = []  # node ids in the order their results were accepted

    # -- helpers ---------------------------------------------------------------------------------
    @property
    def ids(self) -> list[str]:
        return [n.id for n in self.nodes]

    def node(self, nid: str) -> PlanNode:
        return next(n for n in self.nodes if n.id == nid)

    def set_nodes(self, nodes: list[PlanNode]) -> None:
        self.nodes = nodes
        for n in nodes:
            if n.is_call:
                st = self.steps.get(n.id)
                if st is None:
                    self.steps[n.id] = StepMemory(node=n)
                else:
                    st.node = n
        live = {n.id for n in nodes}
        for nid in list(self.steps):
            if nid not in live:
                del self.steps[nid]

    def satisfied(self, dep: str) -> bool:
        if dep == ROOT:
            return True
        st = self.steps.get(dep)
        if st is None:
            return dep not in self.ids or not self.node(dep).is_call
        return st.status in ("done", "skipped")

    def resolve(self, args: dict[str, Any], spec: ToolSpec | None) -> dict[str, Any]:
        """Fill references with observed values (a missing value is made up; an output the
        agent never obtained stays a raw ``${...}`` placeholder)."""
        ids = self.ids
        out = {}
        for k, v in args.items():
            ref = exact_reference(v, ids)
            if ref is not None:
                out[k] = self._value(
                    ref.node, ref.path, v, (spec.param_schema(k) if spec else None)
                )
            elif isinstance(v, str):

                def sub(body: str) -> str:
                    r = split_reference(body, ids)
                    val = self._value(r.node, r.path, reference_text(body), None)
                    return val if isinstance(val, str) else canonical_json(val)

                out[k] = substitute_references(v, sub)
            else:
                out[k] = v
        return out

    def _value(self, node: str, path: list[str], raw: str, schema: Any) -> Any:
        st = self.steps.get(node)
        if st is None or st.status != "done":
            return raw
        got = lookup_path(st.output, path)
        if got is not MISSING:
            return got
        return fabricate(schema)

    # -- replay of the conversation ----------------------------------------------------------------
    def walk(self) -> None:
        t = self.t
        calls: dict[str, tuple[str, str, str, dict[str, Any]]] = {}
        started = False
        for msg in t.messages:
            if not started:
                started = isinstance(msg, HumanMessage)
                continue
            if isinstance(msg, AIMessage):
                for tc in msg.tool_calls:
                    m = CALL_ID.match(tc.get("id") or "")
                    if m:
                        role, nid = m.group(1), m.group(2)
                    else:
                        role = "call"
                        nid = next(
                            (
                                s.node.id
                                for s in self.steps.values()
                                if s.node.tool == tc["name"] and s.status == "pending"
                            ),
                            "",
                        )
                    calls[tc.get("id") or ""] = (role, nid, tc["name"], dict(tc["args"]))
                    st = self.steps.get(nid)
                    if st is None:
                        continue
                    if role == "dup":
                        st.want_dup = False
                    else:
                        st.attempts += 1
                        st.repeat = None
                        st.last = (tc["name"], dict(tc["args"]))
            elif isinstance(msg, ToolMessage):
                role, nid, tool, args = calls.get(msg.tool_call_id, ("call", "", "", {}))
                st = self.steps.get(nid)
                if st is None or role == "dup" or st.status == "done":
                    continue
                self.observe(st, tool, args, parse_observation(msg.content))

    def observe(self, st: StepMemory, tool: str, args: dict[str, Any], obs: Any) -> None:
        t = self.t
        earlier = [
            (t.spec(self.steps[n].out_tool), self.steps[n].output)
            for n in self.order
            if n in self.steps
        ]
        reading = read_observation(obs, t.spec(tool), t.plaus_context(args, earlier))
        if reading.kind is ObsKind.OK:
            self.accept(st, obs, tool)
            return
        if reading.kind is ObsKind.INVALID:
            st.invalid += 1
            if st.invalid >= t.profile.max_attempts:
                raise Abort(f"{tool} kept rejecting my calls ({reading.reason})")
            suspect = self.suspect(st, reading)
            if suspect is not None:
                # the value an earlier tool gave is what this tool rejects: that result is wrong
                st.repeat = None
                why = f"{tool} rejected the value {suspect.out_tool} gave ({reading.reason})"
                p_tool, p_args = suspect.last or (suspect.out_tool or "", {})
                self.fault(suspect, p_tool, p_args, Reading(ObsKind.IMPLICIT, why), True)
                return
            if t.fix_draw(st.node.id, st.invalid, t.profile.fix_invalid_call):
                self.fix(st, reading.reason)
            else:
                st.repeat = (tool, args)
            return
        self.fault(st, tool, args, reading, False)
        if st.status == "trusted":
            self.accept(st, obs, tool)

    def suspect(self, st: StepMemory, reading: Reading) -> StepMemory | None:
        """An earlier step whose result fed the rejected argument, if the agent suspects it.

        A careful agent (``notice_implicit``) that sees a well-formed call rejected because a
        value does not exist or is invalid asks where the value came from; when it came from an
        earlier tool's result, that result is treated as wrong (an implicit fault noticed late).
        """
        t = self.t
        done = {nid for nid, s in self.steps.items() if s.status == "done"}
        cands = suspect_producers(st.node, self.ids, done, reading)
        if not cands:
            return None
        base = st.node.id.split(".")[0]
        if t.rng("suspect", base, st.invalid - 1).random() >= t.profile.notice_implicit:
            return None
        return self.steps[cands[-1]]

    def fault(
        self, st: StepMemory, tool: str, args: dict[str, Any], reading: Reading, noticed: bool
    ) -> None:
        """Deal with a faulty result of step ``st``: trust, retry, reroute or abort."""
        t = self.t
        done = {s.node.id for s in self.steps.values() if s.status == "done"} | {ROOT}
        done.discard(st.node.id)
        failed = st.failed_tools | {tool}
        alt = t.alternative(self.nodes, done, st.node.id, failed)
        action = t.decide(
            reading,
            retries=st.retries,
            can_reroute=alt is not None,
            key=(st.node.id.split(".")[0], st.retries),
            noticed=noticed,
        )
        if action == "trust":
            st.status = "trusted"
            return
        if st.status == "done":  # a result found wrong later: it is no longer usable
            st.status = "pending"
            st.output = None
            if st.node.id in self.order:
                self.order.remove(st.node.id)
        if action == "retry":
            st.retries += 1
            st.repeat = (tool, args)
        elif action == "reroute" and alt is not None:
            carried = st.failed_tools | {tool}
            self.set_nodes(alt)
            for s in self.steps.values():
                if s.status == "pending":
                    s.failed_tools |= carried
        else:
            raise Abort(f"{tool} failed ({reading.reason}) and I see no way around it")

    def accept(self, st: StepMemory, obs: Any, tool: str) -> None:
        st.status = "done"
        st.output = obs
        st.out_tool = tool
        self.order.append(st.node.id)
        # a redundant repeat is a structural decision of the step; a written plan carries its
        # own (a duplicated node), so an executor following one adds none
        st.want_dup = self.own(st) and self.struct(st, ErrorType.TOOLCALL_REDUNDANCY)

    def own(self, st: StepMemory) -> bool:
        """Whether the agent decides this step itself (ReAct), not a written plan."""
        return self.given is None or st.node.id not in self.given.ids

    def struct(self, st: StepMemory, error: ErrorType) -> bool:
        """The step's structural decision for ``error`` (its first-attempt draw)."""
        _, u = self.t.decision(st.node.id, 0)
        return u[STRUCTURAL_ERRORS.index(error)] < self.t.rate(error)

    def fix(self, st: StepMemory, reason: str = "") -> None:
        """Correct a rejected step from the error message and the visible request."""
        t = self.t
        target = t.corrected(st.node, self.nodes, reason)
        intended = {n.id: n for n in t.intended().nodes}
        deps = list(st.node.deps)
        for p in referenced_nodes(target, [*self.ids, *intended]):
            if p not in self.ids and p in intended:
                self.set_nodes(self._insert(intended[p]))
            if p in self.steps:
                self.steps[p].needed = True
                if self.steps[p].status == "skipped":
                    self.steps[p].status = "pending"
            if p not in deps:
                deps.append(p)
        new = st.node.model_copy(update={"tool": target.tool, "args": target.args, "deps": deps})
        self.set_nodes([new if n.id == st.node.id else n for n in self.nodes])

    def _insert(self, node: PlanNode) -> list[PlanNode]:
        out = [n for n in self.nodes if n.id != RESPONSE]
        ids = {n.id for n in out}
        node = node.model_copy(
            update={"deps": [d for d in node.deps if d in ids] or [ROOT], "status": "pending"}
        )
        out.append(node)
        out += [n for n in self.nodes if n.id == RESPONSE]
        return out

    # -- next move ---------------------------------------------------------------------------------
    def run(self) -> AIMessage:
        t = self.t
        if RESPONDER_INSTRUCTION in t.system:
            return ai_message(self.final_report())
        try:
            self.walk()
        except Abort as exc:
            return ai_message(self.answer(exc.reason))
        if not t.bound:
            return ai_message(self.answer(None))
        pending = [s for s in self._call_steps() if s.status == "pending"]
        # a forgotten step stays forgotten for the whole episode (its draw is per step)
        for s in pending:
            own = s.attempts == 0 and not s.needed and self.own(s)
            if own and self.struct(s, ErrorType.TOOLCALL_MISSING):
                s.status = "skipped"
        pending = [s for s in pending if s.status == "pending"]
        ready = [s for s in pending if all(self.satisfied(d) for d in s.node.deps)]
        dups = [s for s in self._call_steps() if s.want_dup and s.status == "done"]
        if not ready and not dups:
            if pending:
                blocked = pending[0]
                return ai_message(
                    self.answer(
                        f"step {blocked.node.id} ({blocked.node.tool}) cannot run because an "
                        "earlier step did not give its result"
                    )
                )
            return ai_message(self.answer(None))
        # a step drawn serial waits while other steps can go (an order no data flow needs)
        if len(ready) > 1:
            later = [s for s in ready if self.own(s) and self.struct(s, ErrorType.SERIAL_ERROR)]
            ready = [s for s in ready if s not in later] or ready[:1]
        # a step drawn parallel goes out with the wave that should feed it
        wave = {s.node.id for s in ready}
        early = [
            s
            for s in pending
            if s not in ready
            and s.attempts == 0
            and self.own(s)
            and self.struct(s, ErrorType.PARALLELISM_ERROR)
            and all(self.satisfied(d) or d in wave for d in s.node.deps)
        ]
        tool_calls = []
        for s in ready:
            tool_calls.append(self.call_for(s, raw_refs=False))
        for s in early:
            tool_calls.append(self.call_for(s, raw_refs=True))
        for s in dups:
            tool, args = s.node.tool or "", self.resolve(s.node.args, t.spec(s.node.tool))
            cid = f"dup_{s.node.id}_{s.attempts}_{digest([t.key, 'dup', s.node.id])[:8]}"
            tool_calls.append({"name": tool, "args": args, "id": cid, "type": "tool_call"})
        names = ", ".join(tc["name"] for tc in tool_calls)
        return ai_message(f"Calling {names}.", tool_calls)

    def _call_steps(self) -> list[StepMemory]:
        return [self.steps[n.id] for n in self.nodes if n.id in self.steps]

    def call_for(self, s: StepMemory, raw_refs: bool) -> dict[str, Any]:
        t = self.t
        cid = f"call_{s.node.id}_{s.attempts}_{digest([t.key, s.node.id, s.attempts])[:8]}"
        if s.repeat is not None:
            tool, args = s.repeat
            return {"name": tool, "args": dict(args), "id": cid, "type": "tool_call"}
        tool = s.node.tool or ""
        spec = t.spec(tool)
        if self.own(s) or s.attempts > 0:
            r, _ = t.decision(s.node.id, s.attempts)
            err = t.draw_call_error(r)
        else:  # the first call of a written plan's node: the node as written
            factor = t.profile.guided_error_factor
            r = t.rng("transcribe", s.node.id)
            err = t.draw_call_error(r, factor) if factor else None
        args = dict(s.node.args) if raw_refs else self.resolve(s.node.args, spec)
        if err is ErrorType.DEPENDENCE_NULL:
            refs = [k for k, v in s.node.args.items() if exact_reference(v, self.ids)]
            if refs:
                k = r.choice(sorted(refs))
                args[k] = s.node.args[k]
        elif err is ErrorType.DEPENDENCE_ERROR:
            refs = [k for k, v in s.node.args.items() if exact_reference(v, self.ids)]
            wrong = self._wrong_values(s)
            if refs and wrong:
                args[r.choice(sorted(refs))] = r.choice(wrong)
        elif err is not None:
            got = mutate_call(err, tool, args, t.specs, r)
            if got is not None:
                tool, args = got
        return {"name": tool, "args": args, "id": cid, "type": "tool_call"}

    def _wrong_values(self, s: StepMemory) -> list[Any]:
        """Scalars from results of other steps: what a confused agent passes on."""
        own = set(referenced_nodes(s.node, self.ids))
        out: list[Any] = []
        for nid in self.order:
            if nid in own or nid not in self.steps:
                continue
            for fact in scalar_values(self.steps[nid].output):
                if isinstance(fact, str):
                    out.append(fact)
        return out

    # -- the answer --------------------------------------------------------------------------------
    def final_report(self) -> str:
        """The answer after a plan ran (responder): the results on the final plan's path.

        Results of steps the plan replaced (a failed try, a value judged wrong) are not on the
        path to the response node and are not repeated; a plan cut short, or with calls that
        never ran, is reported as a failure.
        """
        t = self.t
        plan: Plan | None = None
        if EXECUTED_PLAN_MARKER in t.system:
            got = Plan.parse(t.system.split(EXECUTED_PLAN_MARKER, 1)[1])
            plan = got if isinstance(got, Plan) else None
        failure = None
        keep: set[str] | None = None
        if plan is not None:
            resp = plan.get(RESPONSE)
            if resp is not None and CUT_SHORT in resp.desc:
                failure = resp.desc.split(CUT_SHORT, 1)[1].lstrip(": ") or "a step failed"
            missing = [n for n in plan.call_nodes if n.status != "done"]
            if failure is None and missing:
                failure = f"step {missing[0].id} ({missing[0].tool}) did not run"
            keep = plan.ancestors(RESPONSE) if resp is not None else None
        results: dict[str, tuple[str, Any]] = {}
        names: dict[str, str] = {}
        for m in t.messages:
            if isinstance(m, AIMessage):
                for tc in m.tool_calls:
                    names[tc.get("id") or ""] = tc["name"]
            elif isinstance(m, ToolMessage):
                mm = WAVE_CALL_ID.match(m.tool_call_id or "")
                nid = mm.group(1) if mm else m.tool_call_id
                results[nid] = (
                    names.get(m.tool_call_id, m.name or "tool"),
                    parse_observation(m.content),
                )
        facts = []
        for nid, (tool, obs) in results.items():
            if keep is not None and nid not in keep:
                continue
            if isinstance(obs, Mapping) and obs and "error" not in obs:
                got = scalar_facts(obs)
                if got:
                    facts.append(f"{tool}: " + ", ".join(got))
        return final_answer(failure, facts)

    def answer(self, failure: str | None) -> str:
        facts: list[str] = []
        for nid in self.order:
            st = self.steps.get(nid)
            if st is None or not isinstance(st.output, Mapping) or "error" in st.output:
                continue
            got = scalar_facts(st.output)
            if got:
                facts.append(f"{st.node.tool}: " + ", ".join(got))
        if not self.order:
            facts += facts_from_human(self.t.messages)
        return final_answer(failure, facts)
