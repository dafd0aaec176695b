"""The simulated agent: a deterministic chat model that plays a tool-using agent.

**This is not a language model, and its tables are not evidence about agent designs.** It is a
parametric policy that reads a request the way a careful model would and makes mistakes at the
rates of a :class:`~replan.models.profiles.CompetenceProfile`. It exists so that every design
runs offline and reproducibly, and so that tests can inject known error rates and check that the
metrics recover them. Design rankings need a real model (``local:smollm2``, or any
OpenAI-compatible endpoint).

**It knows only what a model is shown** (:mod:`replan.models.visible`): the query, the tool list
of the request (schemas with their ``x-kind`` annotations) and the observations in the
conversation. It never reads the task's gold plan, valid paths, checker or fault schedule: the
plan it means to follow is read from the query and the tool list; a fix after a tool's or a
verifier's message uses only that message and the visible context (a value it cannot find there
stays missing, and the fix fails); a reroute picks only listed tools whose input and output kinds
fit.

**The same noise applies to the same decision wherever it is made.** Choosing a step's tool and
arguments draws from one random stream keyed by (task, seed, step, attempt), whether ReAct
chooses the call or a planner writes the node; correcting a step from an error message (a tool's
rejection or a verifier finding) draws from one stream keyed by (step, fix number) with the same
probability ``fix_invalid_call``. An executor that follows a written plan issues the plan's node
as written: the decision was made (with its errors) when the plan was written. Knobs that treat
contexts differently are ``CONTEXT_KNOBS`` of the profile, neutral in the built-in profiles.

What it answers is decided by the request tag of the system message (see
:mod:`replan.core.wire`), never by which agent design sent the request:

- ``[replan:plan]`` -- a ``<thought>`` and a ParaRecover JSON DAG: the plan read from the request
  with each node's decision drawn (wrong names, missing or mistyped parameters, missing / wrong /
  extra dependencies, missing and redundant calls).
- ``[replan:revise]`` -- the previous plan with each verifier finding acted on (the node written
  again from the request) with probability ``uptake()``.
- ``[replan:replan]`` -- the current plan with executed nodes unchanged; failed or faulty steps
  retried, rerouted to listed tools that fit, or the plan cut short with an honest response
  node, as the profile draws it. The replanner keeps its memory in the plan, as a model would:
  ``[retry k]`` and ``[instead of <tools>]`` at the end of a node's ``desc``.
- ``[replan:act]`` with tools bound -- tool calls (``AIMessage.tool_calls``), all ready steps of
  its plan (the plan in the instructions, else the one it reads from the request) in one turn,
  then a plain-text answer stating every value it obtained or saying that the task could not be
  done. The responder's request (an acting request that says not to call tools) gets the
  answer directly.

Faults are *discovered* from observations: a rejected call is the agent's own mistake (fixed with
``fix_invalid_call``); an error, an HTTP status, a timeout or an empty result is an explicit fault
(noticed with ``notice_explicit``); a well-formed result that fails a plausibility check
(:mod:`replan.models.observe`) is an implicit one (``notice_implicit``), and so is a value that a
later tool rejects as unknown or invalid. Then it retries, reroutes, aborts, or trusts the value,
per ``on_fault``.

Randomness comes from SHA-256 (never ``hash()``) over the task's base id, the seed and the
decision's key, so the same request always gives the same reply, in every process, and the model
keeps no state between calls: what it "remembers" it reads back from the conversation.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, Field, PrivateAttr

from replan.core.leaves import json_leaves
from replan.core.plan import (
    REFERENCE_PATTERN,
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
from replan.core.tools import ToolSpec, canonical_json
from replan.core.wire import (
    EXECUTED_PLAN_MARKER,
    PLAN_MARKER,
    RESPONDER_INSTRUCTION,
    TOOLS_MARKER,
    json_lines,
    query_of,
    read_replanner_request,
    request_kind,
)
from replan.env.mistakes import mutate_call, mutate_structure, referenced_nodes
from replan.env.world import lookup_path, stable_seed
from replan.models.observe import (
    ObsKind,
    PlausibilityContext,
    Reading,
    parse_observation,
    read_observation,
)
from replan.models.profiles import CALL_ERROR_TYPES, CompetenceProfile, load_profile
from replan.models.tooling import OpenAIToolBinding
from replan.models.visible import (
    _NONE,
    View,
    closest,
    output_kinds,
    read_plan,
    routes,
    value_fields,
)

_WAVE_CALL_ID = re.compile(r"^r\d+_(.+)$")
_CALL_ID = re.compile(r"^(call|dup)_(.+)_(\d+)_[0-9a-f]{8}$")
_STRUCTURAL = (
    ErrorType.PARALLELISM_ERROR,
    ErrorType.SERIAL_ERROR,
    ErrorType.TOOLCALL_MISSING,
    ErrorType.TOOLCALL_REDUNDANCY,
)


# ---------------------------------------------------------------------------------------------
# small helpers
def _content(m: BaseMessage) -> str:
    c = m.content
    if isinstance(c, str):
        return c
    return "".join(b.get("text", "") if isinstance(b, Mapping) else str(b) for b in c)


def _canon_message(m: BaseMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"t": m.type, "c": _content(m)}
    if isinstance(m, AIMessage) and m.tool_calls:
        out["tc"] = [[tc["name"], tc["args"], tc.get("id")] for tc in m.tool_calls]
    if isinstance(m, ToolMessage):
        out["id"] = m.tool_call_id
    return out


def _digest(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


def rewrite_refs(value: Any, mapping: Mapping[str, str], ids: Iterable[str]) -> Any:
    """Rename the node part of every ``${node.path}`` reference in ``value`` by ``mapping``."""
    known = sorted(set(ids) | set(mapping), key=len, reverse=True)

    def sub(m: re.Match[str]) -> str:
        body = m.group(1).strip()
        for nid in known:
            if body == nid or body.startswith(nid + "."):
                new = mapping.get(nid, nid)
                return reference_text(new + body[len(nid) :])
        return m.group(0)

    if isinstance(value, str):
        return REFERENCE_PATTERN.sub(sub, value)
    if isinstance(value, Mapping):
        return {k: rewrite_refs(v, mapping, known) for k, v in value.items()}
    if isinstance(value, list):
        return [rewrite_refs(v, mapping, known) for v in value]
    return value


def _fabricate(schema: Mapping[str, Any] | None) -> Any:
    """What a model writes for a value it does not have (a hallucinated placeholder)."""
    t = (schema or {}).get("type")
    t = t[0] if isinstance(t, list) and t else t
    return {"integer": 0, "number": 0.0, "boolean": False, "array": [], "object": {}}.get(
        t, "unknown"
    )


def _convert(value: Any, schema: Mapping[str, Any]) -> Any:
    """``value`` as the schema's type or enum, when the conversion is plain; else ``_NONE``."""
    enum = schema.get("enum")
    if enum and isinstance(value, str):
        got = closest(value, [str(e) for e in enum])
        return next((e for e in enum if str(e) == got), _NONE) if got else _NONE
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
        return _NONE
    return _NONE


def _scalar_facts(value: Any) -> list[str]:
    """Every scalar of a result as ``path: value`` (lists: their first 20 items)."""
    return [
        f"{'.'.join(path) or 'result'}: {v}"
        for path, v in json_leaves(value, max_items=20)
        if v is not None
    ]


@dataclass
class _Step:
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


class _Abort(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# ---------------------------------------------------------------------------------------------
class SimulatedChatModel(OpenAIToolBinding, BaseChatModel):
    """A deterministic, profile-driven agent policy with the chat-model interface.

    Construct it per task: ``SimulatedChatModel(task=task, profile="competent", seed=3)``.
    ``corpus`` defaults to :func:`replan.env.corpus.load_corpus`. It supports ``bind_tools``
    (tool calls) and ``with_structured_output`` (the reply is poured into the schema: a plan's
    ``thought`` and ``tasks``, or its text).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    task: Task
    profile: CompetenceProfile = Field(default_factory=lambda: load_profile("competent"))
    seed: int = 0
    corpus: Any = Field(default=None, exclude=True, repr=False)
    model_name: str = ""  # the label episodes record; default ``simulated:<profile>``

    _reads: dict[str, Plan] = PrivateAttr(default_factory=dict)

    def __init__(self, **data: Any):
        if "profile" in data and not isinstance(data["profile"], CompetenceProfile):
            data["profile"] = load_profile(data["profile"])
        super().__init__(**data)
        if not self.model_name:
            self.model_name = f"simulated:{self.profile.name}"
        if self.corpus is None:
            from replan.env.corpus import load_corpus

            self.corpus = load_corpus()

    # -- LangChain surface ---------------------------------------------------------------------
    @property
    def _llm_type(self) -> str:
        return "replan-simulated"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"profile": self.profile.name, "seed": self.seed, "task": self.task.base_id}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tools = list(kwargs.get("tools") or [])
        msg = self.respond(messages, tools, kwargs.get("tool_choice"))
        return ChatResult(generations=[ChatGeneration(message=msg)])

    # -- the policy ------------------------------------------------------------------------------
    def respond(
        self,
        messages: Sequence[BaseMessage],
        tools: Sequence[Mapping[str, Any]] = (),
        tool_choice: Any = None,
    ) -> AIMessage:
        """The reply to ``messages`` with ``tools`` bound (a pure function of its inputs)."""
        if not messages:
            raise ValueError("the simulated model got an empty message list")
        names = [t.get("function", t).get("name") for t in tools]
        schema_tool = self._schema_tool(tools, tool_choice)
        world_tools = [t for t in tools if t is not schema_tool]
        key = _digest([[_canon_message(m) for m in messages], sorted(n for n in names if n)])
        turn = _Turn(self, messages, world_tools, key)
        kind = request_kind(messages) or "act"
        if schema_tool is not None:
            msg = turn.structured(schema_tool, turn.text_reply(kind), kind)
        elif kind == "act":
            msg = turn.act()
        else:
            msg = _ai(turn.text_reply(kind))
        usage = dict(msg.usage_metadata or {})
        usage["input_tokens"] = max(1, sum(len(_content(m)) for m in messages) // 4)
        usage["total_tokens"] = usage["input_tokens"] + usage.get("output_tokens", 0)
        msg.usage_metadata = usage  # type: ignore[assignment]
        return msg

    def _schema_tool(self, tools: Sequence[Mapping[str, Any]], choice: Any) -> Mapping | None:
        """The structured-output schema bound by ``with_structured_output``, if any."""
        if len(tools) != 1 or choice in (None, "auto", "none", False):
            return None
        name = tools[0].get("function", tools[0]).get("name")
        if name in self.task.tools or name in self.corpus.tools:
            return None
        return tools[0]

    def read(self, view: View) -> Plan:
        """The plan a careful reader writes for the visible request (cached per request)."""
        key = _digest([view.query, sorted(view.specs)])
        got = self._reads.get(key)
        if got is None:
            got = read_plan(view)
            if len(self._reads) > 64:
                self._reads.clear()
            self._reads[key] = got
        return got


def _ai(content: str, tool_calls: list[dict[str, Any]] | None = None) -> AIMessage:
    out_tokens = max(1, len(content) // 4) + 20 * len(tool_calls or [])
    return AIMessage(
        content=content,
        tool_calls=tool_calls or [],
        usage_metadata={"input_tokens": 0, "output_tokens": out_tokens, "total_tokens": out_tokens},
    )


# ---------------------------------------------------------------------------------------------
class _Turn:
    """One request: the model's knowledge plus the messages; computes the reply."""

    def __init__(
        self,
        model: SimulatedChatModel,
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
        self.system = next((_content(x) for x in messages if isinstance(x, SystemMessage)), "")
        self.query = next(
            (_content(x) for x in messages if isinstance(x, HumanMessage)), model.task.query
        )
        self.query = query_of(self.query)  # a replanner request quotes the query
        self.specs = self._specs(tools, model.task.tools)
        self.bound = [t.get("function", t).get("name") for t in tools]
        self.view = View(self.query, self.specs, model.corpus.kinds)
        self._intended: Plan | None = None

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
        return r, [r.random() for _ in _STRUCTURAL]

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
                u_struct = [r.random() for _ in _STRUCTURAL]
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
            for et, u in zip(_STRUCTURAL, u_struct, strict=True):
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
        if kind == "plan":
            return self.first_plan()
        if kind == "revise":
            return self.revise()
        if kind == "replan":
            return self.replan()
        return _content(self.act())

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
        previous = Plan.parse(_content(ai[-1])) if ai else ParseFailure(code="empty", reason="")
        findings = json_lines(_content(human[-1])) if len(human) > 1 else []
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
        m = re.search(r"<thought>(.*?)</thought>", text, re.S)
        thought = m.group(1).strip() if m else ""
        body = text.split("</thought>", 1)[-1].strip()
        args = _fill_schema(params, thought=thought, plan=plan_json, text=body)
        call_id = "struct_" + _digest([self.key, "structured"])[:8]
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
        return PlausibilityContext.build([self.query, args], earlier)

    # -- alternatives ----------------------------------------------------------------------------
    def alternative(
        self, nodes: list[PlanNode], done: set[str], nid: str, failed_tools: set[str]
    ) -> list[PlanNode] | None:
        """The plan with node ``nid`` replaced by a chain of listed tools that fits, or ``None``.

        The chain must give what later steps read from ``nid`` (the kinds of those output
        fields; for a step whose output nothing reads, the kinds of its own output). Candidate
        chains come from the tool list alone (:func:`replan.models.visible.routes`); the first
        whose inputs bind from the failed step's arguments, earlier results and the query wins.
        """
        node = next(n for n in nodes if n.id == nid)
        spec = self.spec(node.tool)
        if spec is None:
            return None
        failed = set(failed_tools) | {node.tool or ""}
        ids = [n.id for n in nodes]
        need: list[str] = []
        for n in nodes:
            if n.id == nid or n.status == "done":
                continue
            for ref in iter_references(n.args, ids):
                if ref.node != nid:
                    continue
                k = (spec.output_field_schema(list(ref.path)) or {}).get("x-kind")
                if k and k not in need:
                    need.append(str(k))
        if not need:
            need = [k for _, k in output_kinds(spec.returns)][:1]
        if not need:
            return None
        # a tool the plan already uses for another step is not an alternative for this one
        failed |= {n.tool for n in nodes if n.is_call and n.tool and n.id != nid}
        for chain in routes(self.view, node.tool or "", need, exclude=failed)[:24]:
            got = self.bind_chain(nodes, node, spec, chain, done)
            if got is not None:
                old = set(ids)
                return [_mark(n, failed) if n.id not in old and n.is_call else n for n in got]
        # no tool gives what the next step reads from this one (a chain of a provider's own
        # tools): replace this step together with the pending step that reads it
        for c in nodes:
            if c.id in done or c.status == "done" or not _refers_to(c.args, nid, ids):
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
                    return [_mark(n, gone) if n.id not in old and n.is_call else n for n in got]
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
                    val = None if got is _NONE else got
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
                PlanNode(id=nid, tool=tool, args=args, desc=_base_desc(node.desc), deps=deps)
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
            if n.status != "done" and (node.id in n.deps or _refers_to(n.args, node.id, ids)):
                args = _remap_by_kind(n.args, node.id, spec, last.id, last_spec, ids)
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
        human = _content([m for m in self.messages if isinstance(m, HumanMessage)][-1])
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
            tries = _attempts(node, nodes)
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
                nodes = self.replace_node(nodes, node, _retry_mark(repl, tries + 1))
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
                _cut_short(nodes, abort, failed_id),
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
        tries = _attempts(node, nodes)
        failed_tools = _failed_tools(node, nodes) | {tool}
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
            nodes = self.replace_node(nodes, node, _retry_mark(node, tries + 1))
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
        cands = _suspects(node, ids, done, reading)
        if not cands:
            return None
        tries = _attempts(node, nodes)
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
        if target is not None and not (target.is_call and _same_step(node, target)):
            target = None
        if target is None:
            target = next((n for n in intended.call_nodes if n.tool == node.tool), None)
        tspec = self.spec(target.tool) if target is not None else None
        if target is None or tspec is None or not tspec.required <= set(target.args):
            return self.repair(node, nodes, reason or "")
        ids = [n.id for n in nodes]
        args = dict(target.args)
        for producer in referenced_nodes(target, [*ids, *intended.ids]):
            holder = _chain_of(nodes, producer)
            if not holder or holder[-1].id == producer:
                continue
            last = holder[-1]
            old_spec = self.spec(intended.get(producer).tool if intended.get(producer) else None)
            new_spec = self.spec(last.tool)
            remapped = None
            if old_spec is not None and new_spec is not None:
                remapped = _remap_by_kind(args, producer, old_spec, last.id, new_spec, ids)
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
            fixed = _convert(v, schema)
            if fixed is not _NONE and spec.check_value(k, fixed).ok:
                args[k] = fixed
        earlier = [n for n in nodes if n.status == "done" and n.is_call and n.id != node.id]
        for p in sorted(spec.required - set(args)):
            kind = (spec.param_schema(p) or {}).get("x-kind")
            val: Any = _NONE
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
            if val is _NONE:
                val = self.view.labelled(spec, p)
            if val is _NONE and kind:
                val = self.view.literal_of_kind(str(kind), {}, None)
            if val is _NONE:
                val = next((n.args[p] for n in reversed(earlier) if p in n.args), _NONE)
            if val is not _NONE:
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
                and (failed.id in n.deps or _refers_to(n.args, failed.id, ids))
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

    # -- acting -----------------------------------------------------------------------------------
    def act(self) -> AIMessage:
        return _Actor(self).run()


# ---------------------------------------------------------------------------------------------
class _Actor:
    """ReAct play: rebuild what happened from the messages, then take the next step."""

    def __init__(self, turn: _Turn):
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
        self.steps: dict[str, _Step] = {n.id: _Step(node=n) for n in self.nodes if n.is_call}
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
                    self.steps[n.id] = _Step(node=n)
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
            elif isinstance(v, str) and "${" in v:

                def sub(m: re.Match[str], k: str = k) -> str:
                    r = exact_reference(m.group(0), ids)
                    if r is None:
                        return m.group(0)
                    val = self._value(r.node, r.path, m.group(0), None)
                    return val if isinstance(val, str) else canonical_json(val)

                out[k] = REFERENCE_PATTERN.sub(sub, v)
            else:
                out[k] = v
        return out

    def _value(self, node: str, path: list[str], raw: str, schema: Any) -> Any:
        st = self.steps.get(node)
        if st is None or st.status != "done":
            return raw
        got = lookup_path(st.output, path)
        if got is not _missing():
            return got
        return _fabricate(schema)

    # -- replay of the conversation ----------------------------------------------------------------
    def walk(self) -> None:
        t = self.t
        calls: dict[str, tuple[str, str, str, dict[str, Any]]] = {}
        h = hashlib.sha256()
        started = False
        for msg in t.messages:
            h.update(canonical_json(_canon_message(msg)).encode())
            if not started:
                started = isinstance(msg, HumanMessage)
                continue
            if isinstance(msg, AIMessage):
                for tc in msg.tool_calls:
                    m = _CALL_ID.match(tc.get("id") or "")
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
                self.observe(st, tool, args, parse_observation(msg.content), h.hexdigest())

    def observe(self, st: _Step, tool: str, args: dict[str, Any], obs: Any, key: str) -> None:
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
                raise _Abort(f"{tool} kept rejecting my calls ({reading.reason})")
            suspect = self.suspect(st, reading)
            if suspect is not None:
                # the value an earlier tool gave is what this tool rejects: that result is wrong
                st.repeat = None
                why = f"{tool} rejected the value {suspect.out_tool} gave ({reading.reason})"
                p_tool, p_args = suspect.last or (suspect.out_tool or "", {})
                self.fault(suspect, p_tool, p_args, Reading(ObsKind.IMPLICIT, why), key, True)
                return
            if t.fix_draw(st.node.id, st.invalid, t.profile.fix_invalid_call):
                self.fix(st, reading.reason)
            else:
                st.repeat = (tool, args)
            return
        self.fault(st, tool, args, reading, key, False)
        if st.status == "trusted":
            self.accept(st, obs, tool)

    def suspect(self, st: _Step, reading: Reading) -> _Step | None:
        """An earlier step whose result fed the rejected argument, if the agent suspects it.

        A careful agent (``notice_implicit``) that sees a well-formed call rejected because a
        value does not exist or is invalid asks where the value came from; when it came from an
        earlier tool's result, that result is treated as wrong (an implicit fault noticed late).
        """
        t = self.t
        done = {nid for nid, s in self.steps.items() if s.status == "done"}
        cands = _suspects(st.node, self.ids, done, reading)
        if not cands:
            return None
        base = st.node.id.split(".")[0]
        if t.rng("suspect", base, st.invalid - 1).random() >= t.profile.notice_implicit:
            return None
        return self.steps[cands[-1]]

    def fault(
        self, st: _Step, tool: str, args: dict[str, Any], reading: Reading, key: str, noticed: bool
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
            raise _Abort(f"{tool} failed ({reading.reason}) and I see no way around it")

    def accept(self, st: _Step, obs: Any, tool: str) -> None:
        st.status = "done"
        st.output = obs
        st.out_tool = tool
        self.order.append(st.node.id)
        # a redundant repeat is a structural decision of the step; a written plan carries its
        # own (a duplicated node), so an executor following one adds none
        st.want_dup = self.own(st) and self.struct(st, ErrorType.TOOLCALL_REDUNDANCY)

    def own(self, st: _Step) -> bool:
        """Whether the agent decides this step itself (ReAct), not a written plan."""
        return self.given is None or st.node.id not in self.given.ids

    def struct(self, st: _Step, error: ErrorType) -> bool:
        """The step's structural decision for ``error`` (its first-attempt draw)."""
        _, u = self.t.decision(st.node.id, 0)
        return u[_STRUCTURAL.index(error)] < self.t.rate(error)

    def fix(self, st: _Step, reason: str = "") -> None:
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
            return _ai(self.final_report())
        try:
            self.walk()
        except _Abort as exc:
            return _ai(self.answer(exc.reason))
        if not t.bound:
            return _ai(self.answer(None))
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
                return _ai(
                    self.answer(
                        f"step {blocked.node.id} ({blocked.node.tool}) cannot run because an "
                        "earlier step did not give its result"
                    )
                )
            return _ai(self.answer(None))
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
            cid = f"dup_{s.node.id}_{s.attempts}_{_digest([t.key, 'dup', s.node.id])[:8]}"
            tool_calls.append({"name": tool, "args": args, "id": cid, "type": "tool_call"})
        names = ", ".join(tc["name"] for tc in tool_calls)
        return _ai(f"Calling {names}.", tool_calls)

    def _call_steps(self) -> list[_Step]:
        return [self.steps[n.id] for n in self.nodes if n.id in self.steps]

    def call_for(self, s: _Step, raw_refs: bool) -> dict[str, Any]:
        t = self.t
        cid = f"call_{s.node.id}_{s.attempts}_{_digest([t.key, s.node.id, s.attempts])[:8]}"
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

    def _wrong_values(self, s: _Step) -> list[Any]:
        """Scalars from results of other steps: what a confused agent passes on."""
        own = set(referenced_nodes(s.node, self.ids))
        out: list[Any] = []
        for nid in self.order:
            if nid in own or nid not in self.steps:
                continue
            for fact in _scalar_values(self.steps[nid].output):
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
            if resp is not None and _CUT_SHORT in resp.desc:
                failure = resp.desc.split(_CUT_SHORT, 1)[1].lstrip(": ") or "a step failed"
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
                mm = _WAVE_CALL_ID.match(m.tool_call_id or "")
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
                got = _scalar_facts(obs)
                if got:
                    facts.append(f"{tool}: " + ", ".join(got))
        return _phrase(failure, facts)

    def answer(self, failure: str | None) -> str:
        facts: list[str] = []
        for nid in self.order:
            st = self.steps.get(nid)
            if st is None or not isinstance(st.output, Mapping) or "error" in st.output:
                continue
            got = _scalar_facts(st.output)
            if got:
                facts.append(f"{st.node.tool}: " + ", ".join(got))
        if not self.order:
            facts += _facts_from_human(self.t.messages)
        return _phrase(failure, facts)


_CUT_SHORT = "tell the user the request could not be completed"


def _phrase(failure: str | None, facts: list[str]) -> str:
    """The final answer: the facts obtained, or an honest report that the task failed."""
    if failure:
        text = f"I could not complete your request: {failure}."
        if facts:
            text += " What I did get: " + "; ".join(facts) + "."
        return text
    return "Done. " + "; ".join(facts) + "." if facts else "Done."


# ---------------------------------------------------------------------------------------------
def _missing() -> Any:
    return lookup_path({}, ["__missing__"])


def _scalar_values(value: Any) -> list[Any]:
    if isinstance(value, Mapping):
        return [x for v in value.values() for x in _scalar_values(v)]
    if isinstance(value, list):
        return []
    return [value]


def _facts_from_human(messages: Sequence[BaseMessage]) -> list[str]:
    """Results quoted in the conversation (a responder that gets observations as text)."""
    facts: list[str] = []
    for m in messages:
        if not isinstance(m, HumanMessage):
            continue
        for obj in json_lines(_content(m)):
            res = obj.get("result")
            if isinstance(res, Mapping) and "error" not in res:
                got = _scalar_facts(res)
                if got:
                    facts.append(f"{obj.get('tool', 'result')}: " + ", ".join(got))
    return facts


def unresolved_ref(value: Any, ids: list[str], done: set[str]) -> bool:
    """Whether ``value`` refers to the output of a step that has not run."""
    return any(r.node not in done for r in iter_references(value, ids)) or (
        (ref := exact_reference(value, ids)) is not None and ref.node not in done
    )


def _refers_to(args: Any, nid: str, ids: Iterable[str]) -> bool:
    from replan.core.plan import iter_references

    return any(r.node == nid for r in iter_references(args, list(ids)))


_RETRY_MARK = re.compile(r"\s*\[retry (\d+)\]")
_INSTEAD_MARK = re.compile(r"\s*\[instead of ([^\]]+)\]")


def _base_desc(desc: str) -> str:
    return _INSTEAD_MARK.sub("", _RETRY_MARK.sub("", desc)).strip()


def _retry_mark(node: PlanNode, k: int) -> PlanNode:
    """``node`` whose desc records that this is its ``k``-th retry (the replanner's memory)."""
    inst = _INSTEAD_MARK.search(node.desc)
    desc = _base_desc(node.desc) + (inst.group(0) if inst else "") + f" [retry {k}]"
    return node.model_copy(update={"desc": desc.strip()})


def _mark(node: PlanNode, failed_tools: Iterable[str]) -> PlanNode:
    """``node`` whose desc records the tools it replaces (so they are not tried again)."""
    tools = ", ".join(sorted(t for t in failed_tools if t))
    return node.model_copy(update={"desc": f"{_base_desc(node.desc)} [instead of {tools}]".strip()})


def _attempts(node: PlanNode, nodes: list[PlanNode]) -> int:
    """Retries so far of ``node``'s step: from its ``[retry k]`` mark or its retry ids."""
    m = _RETRY_MARK.search(node.desc)
    marked = int(m.group(1)) if m else 0
    same = [n for n in _chain_of(nodes, node.id) if n.tool == node.tool]
    return max(marked, len(same) - 1)


def _failed_tools(node: PlanNode, nodes: list[PlanNode]) -> set[str]:
    out = {n.tool for n in _chain_of(nodes, node.id) if n.tool and n.tool != node.tool}
    m = _INSTEAD_MARK.search(node.desc)
    if m:
        out |= {t.strip() for t in m.group(1).split(",") if t.strip()}
    return out


def _suspects(node: PlanNode, ids: list[str], done: set[str], reading: Reading) -> list[str]:
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
    named = [k for k in node.args if re.search(rf"\b{re.escape(k)}\b", reading.reason)]
    if named:
        return list(dict.fromkeys(refs[k] for k in named if k in refs))
    return list(dict.fromkeys(refs.values()))


def _same_step(node: PlanNode, target: PlanNode) -> bool:
    """Whether ``node`` is (a possibly mistaken version of) the intended step ``target``."""
    if node.tool == target.tool:
        return True
    a, b = set(node.args), set(target.args)
    return bool(a | b) and len(a & b) * 2 >= len(a | b)


def _chain_of(nodes: list[PlanNode], nid: str) -> list[PlanNode]:
    """The node and the retries that took its role (ids ``base``, ``base.1``, ...)."""
    base = nid.split(".")[0]
    return [n for n in nodes if n.id == base or n.id.startswith(base + ".")]


def _remap_by_kind(
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


def _cut_short(nodes: list[PlanNode], reason: str, failed: str | None = None) -> list[PlanNode]:
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
    resp = PlanNode(id=RESPONSE, desc=f"{_CUT_SHORT}: {reason}", deps=[stop_id])
    return [*done, stop, resp]


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


def _fill_schema(
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
                out[name] = _fill_schema(ps, thought=thought, plan=plan, text=text)
            else:
                out[name] = dict(plan or {})
        elif t == "string" or t is None:
            out[name] = (
                json.dumps(plan, ensure_ascii=False) if plan is not None and "plan" in low else text
            )
    return out


__all__ = ["SimulatedChatModel", "rewrite_refs"]
