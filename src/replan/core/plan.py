"""Plan DAGs in the ParaRecover shape, a tolerant parser, references, frontier and layers.

A plan is a list of nodes ``{id, tool, args, desc, deps, status}`` with a ``root`` node (the
user's request) and a ``response`` node (the final answer). Arguments may hold references to
earlier outputs: a string that is exactly ``${node}`` or ``${node.field.path}`` takes that value
with its type; inside a longer string the reference is interpolated as text.

:meth:`Plan.parse` accepts what language models really write and never raises: it returns a
:class:`Plan` or a :class:`ParseFailure` whose ``reason`` says what is wrong (this is the S5
verdict of the ParaRecover rubric). Parsing is linear in the text's length: every regex here is
anchored or bounded so that no input makes it backtrack over the rest of the text, a text over
:data:`MAX_PLAN_CHARS` is refused as ``too_large`` and a value nested deeper than
:data:`MAX_PLAN_DEPTH` as ``too_deep`` (so that an accepted plan can always be written back out).
"""

from __future__ import annotations

import graphlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from replan.core import linre
from replan.core.leaves import is_mapping

if TYPE_CHECKING:
    import networkx


def _nx() -> Any:
    # late: networkx takes about 0.25 s to import, and only graph operations on a plan need it
    # (``import replan`` loads this module)
    import networkx

    return networkx


ROOT = "root"
RESPONSE = "response"

NodeStatus = Literal["pending", "done", "failed"]

#: the longest plan text parsed (real plans are a few KB; a model that writes more is looping)
MAX_PLAN_CHARS = 200_000
#: the deepest nesting of lists/objects accepted anywhere in a plan (real plans nest < 10 deep)
MAX_PLAN_DEPTH = 64

#: the reference grammar (DESIGN §2): ``${<node id>}`` or ``${<node id>.<field path>}``. This is the
#: one place it is spelled; whatever reads, writes or rewrites a reference goes through the
#: helpers below (:func:`reference_text`, :func:`exact_reference`, :func:`iter_references`,
#: :func:`substitute_references`).
REFERENCE_PATTERN = linre.compile(r"\$\{([^{}]+)\}")
_EXACT_REF = linre.compile(r"^" + REFERENCE_PATTERN.pattern + r"$")


def reference_text(node: str, *path: str) -> str:
    """The text of a reference to ``node``'s output, or to the field ``path`` inside it."""
    return "${" + ".".join([node, *path]) + "}"


def substitute_references(text: str, replace: Callable[[str], str]) -> str:
    """``text`` with every ``${...}`` in it replaced by ``replace(inside of the braces)``."""
    if "${" not in text:  # most texts hold none: no regex scan (a plan's every string is asked)
        return text
    return REFERENCE_PATTERN.sub(lambda m: replace(m.group(1)), text)


class Reference(BaseModel):
    """A parsed ``${node.path}`` reference."""

    node: str
    path: list[str] = Field(default_factory=list)

    def __str__(self) -> str:
        return reference_text(self.node, *self.path)


def split_reference(body: str, known_ids: Iterable[str]) -> Reference:
    """Split the inside of ``${...}`` into node id and field path: the one parser.

    Node ids may contain dots (``"2.1"``), so the split needs the ids the reference may name
    (``known_ids``, required: a reader without them would split ``${1.1.x}`` at node ``1``
    while the world resolves node ``1.1``). The longest known id that is a prefix wins; a
    reference to no known id splits at its first dot.
    """
    body = body.strip()
    best = None
    for nid in known_ids:
        if (body == nid or body.startswith(nid + ".")) and (best is None or len(nid) > len(best)):
            best = nid
    if best is not None:
        rest = body[len(best) + 1 :]
        return Reference(node=best, path=[p for p in rest.split(".") if p] if rest else [])
    head, _, rest = body.partition(".")
    return Reference(node=head, path=[p for p in rest.split(".") if p])


def exact_reference(value: Any, known_ids: Iterable[str]) -> Reference | None:
    """The reference ``value`` *is* (a whole-string ``${...}``), else ``None``."""
    if isinstance(value, str) and "${" in value:
        m = _EXACT_REF.match(value.strip())
        if m:
            return split_reference(m.group(1), known_ids)
    return None


def iter_references(value: Any, known_ids: Iterable[str]) -> Iterable[Reference]:
    """Every ``${...}`` reference anywhere inside ``value`` (nested lists/dicts included), split
    by :func:`split_reference` against ``known_ids``."""
    known = known_ids if isinstance(known_ids, (list, tuple, set, frozenset)) else list(known_ids)
    if isinstance(value, str):
        if "${" in value:
            for m in REFERENCE_PATTERN.finditer(value):
                yield split_reference(m.group(1), known)
    elif is_mapping(value):
        for v in value.values():
            yield from iter_references(v, known)
    elif isinstance(value, list):
        for v in value:
            yield from iter_references(v, known)


class PlanNode(BaseModel):
    """One node. ``tool`` is ``None`` for root/response and for pure reasoning nodes."""

    id: str
    tool: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    positional: list[Any] | None = None
    desc: str = ""
    deps: list[str] = Field(default_factory=list)
    status: NodeStatus = "pending"

    @property
    def is_call(self) -> bool:
        return bool(self.tool) and self.id != RESPONSE

    def to_pararecover(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        if self.tool:
            out["name"] = self.tool
        if self.positional is not None:
            out["para"] = self.positional
        elif self.args or self.tool:
            out["para"] = self.args
        out["desc"] = self.desc
        out["dep"] = list(self.deps)
        out["status"] = self.status == "done"
        return out


class ParseFailure(BaseModel):
    """Why a plan text is not a valid plan (S5 = 0)."""

    code: Literal[
        "empty",
        "no_json",
        "invalid_json",
        "no_tasks",
        "bad_node",
        "duplicate_id",
        "unknown_dep",
        "cycle",
        "no_root",
        "no_response",
        "too_large",
        "too_deep",
    ]
    reason: str
    thought: str = ""

    def __bool__(self) -> bool:  # a failure is falsy so ``if plan:`` reads naturally
        return False


class Plan(BaseModel):
    """A validated plan DAG (acyclic, unique ids, deps exist, root and response present)."""

    nodes: list[PlanNode]
    thought: str = ""

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def parse(cls, text: Any) -> Plan | ParseFailure:
        """Parse model output or a dataset ``plan`` field; never raises."""
        try:
            return _parse(text)
        except Exception as exc:  # a parser bug must not crash a run; it is still a verdict
            return ParseFailure(code="bad_node", reason=f"unreadable plan: {exc!r}")

    @classmethod
    def from_nodes(cls, nodes: list[PlanNode], thought: str = "") -> Plan:
        """Build and validate; raises ``ValueError`` with the failure reason."""
        res = _validate(nodes, thought)
        if isinstance(res, ParseFailure):
            raise ValueError(res.reason)
        return res

    # -- views ------------------------------------------------------------------------------------
    @property
    def ids(self) -> list[str]:
        return [n.id for n in self.nodes]

    def node(self, node_id: str) -> PlanNode:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def get(self, node_id: str) -> PlanNode | None:
        return next((n for n in self.nodes if n.id == node_id), None)

    @property
    def call_nodes(self) -> list[PlanNode]:
        return [n for n in self.nodes if n.is_call]

    def graph(self) -> networkx.DiGraph:
        """Edges run from dependency to dependent."""
        g = _nx().DiGraph()
        for n in self.nodes:
            g.add_node(n.id)
        for n in self.nodes:
            for d in n.deps:
                g.add_edge(d, n.id)
        return g

    def ancestors(self, node_id: str) -> set[str]:
        return _nx().ancestors(self.graph(), node_id)

    def descendants(self, node_id: str) -> set[str]:
        return _nx().descendants(self.graph(), node_id)

    def layers(self) -> list[list[str]]:
        """Topological generations of the whole DAG (root first), ids sorted within a layer."""
        return [sorted(layer, key=_id_key) for layer in _nx().topological_generations(self.graph())]

    def final_calls(self) -> list[str]:
        """Ids of the calls no other call depends on: their results go to the answer."""
        g = self.graph()
        return [n.id for n in self.call_nodes if not (set(g.successors(n.id)) - {RESPONSE})]

    def call_layers(self) -> list[list[str]]:
        """Waves of tool calls if every call ran as early as its deps allow."""
        calls = {n.id for n in self.call_nodes}
        out = [[i for i in layer if i in calls] for layer in self.layers()]
        return [layer for layer in out if layer]

    @property
    def depth(self) -> int:
        """Number of call waves: the rounds a clean frontier execution needs."""
        return len(self.call_layers())

    def nodes_run_by(self, tools: Sequence[str]) -> list[str | None]:
        """The pending call node each call of a wave ran (``tools``: the calls' tool names, in
        order), else ``None``: matched by tool, frontier nodes first, then in id order; each node
        once. How a recorded wave (ParaRecover's ``fun_call``, which names no node) is read."""
        pending = [n for n in self.call_nodes if n.status != "done"]
        frontier = set(self.frontier())
        pending.sort(key=lambda n: (n.id not in frontier, self.ids.index(n.id)))
        taken: set[str] = set()
        out: list[str | None] = []
        for tool in tools:
            node = next((n for n in pending if n.tool == tool and n.id not in taken), None)
            if node is not None:
                taken.add(node.id)
            out.append(node.id if node is not None else None)
        return out

    def frontier(self, done: Iterable[str] | None = None) -> list[str]:
        """F(t): pending nodes whose deps are all done (root counts as done unless a call)."""
        done_set = (
            set(done) if done is not None else {n.id for n in self.nodes if n.status == "done"}
        )
        root = self.get(ROOT)
        if root is not None and not root.is_call:
            done_set.add(ROOT)
        out = [
            n.id for n in self.nodes if n.id not in done_set and all(d in done_set for d in n.deps)
        ]
        return sorted(out, key=_id_key)

    def next_wave(self, done: Iterable[str]) -> tuple[list[str], list[str]]:
        """The next round of a frontier execution: ``(calls, settled)``.

        ``done`` are the nodes that have run. Ready nodes without a tool (reasoning steps) are
        settled first — they become done without a call, in order, until none is ready — and
        ``calls`` are then the ready call nodes (id order): one wave, run in parallel. The
        response node is neither settled nor called here. Every executor of plan waves (the
        replanner loop's dispatch, the ToolMaze plan executor, the replan-point run) uses this.
        """
        ran = set(done)
        settled: list[str] = []
        while True:
            ready = [
                nid for nid in self.frontier(ran) if nid != RESPONSE and not self.node(nid).is_call
            ]
            if not ready:
                break
            settled += ready
            ran.update(ready)
        return [nid for nid in self.frontier(ran) if self.node(nid).is_call], settled

    # -- output -----------------------------------------------------------------------------------
    def to_pararecover(self) -> dict[str, Any]:
        return {"tasks": [n.to_pararecover() for n in self.nodes]}

    def to_text(self) -> str:
        """Compact JSON in the ParaRecover planning contract."""
        return json.dumps(self.to_pararecover(), ensure_ascii=False, separators=(",", ":"))


def _id_key(node_id: str) -> tuple:
    """Natural order for ids: root, then numeric parts ("2" < "2.1" < "10"), response last."""
    if node_id == ROOT:
        return (0,)
    if node_id == RESPONSE:
        return (2,)
    parts = linre.split(r"[._-]", node_id)
    return (1, *[(0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts])


# ---------------------------------------------------------------------------------------------
# parsing
_FENCE = linre.compile(r"```(?:json|JSON)?\s*(.*?)```", linre.S)
_THOUGHT_OPEN = linre.compile(r"<thought>", linre.I)
_THOUGHT_CLOSE = linre.compile(r"</thought>", linre.I)
_TRAILING_COMMA = linre.compile(r",(\s*[}\]])")
# ``[ \t]*``, not ``\s*``: with linre.M, ``^\s*`` restarts at every line and rescans every blank
# line after it, which is quadratic on a text of many newlines
_LINE_COMMENT = linre.compile(r"^[ \t]*//[^\n]*", linre.M)


def _split_thought(text: str) -> tuple[str, str]:
    """(the first ``<thought>...</thought>`` body, the text without it); linear time.

    A lazy ``<thought>(.*?)</thought>`` search rescans to the end of the text from every
    unclosed ``<thought>``: 28 s on 180 KB of repeated tags. The first opening tag with a closing
    tag after it is what that search found, and only the first opening tag can have one.
    """
    start = _THOUGHT_OPEN.search(text)
    if start is None:
        return "", text
    end = _THOUGHT_CLOSE.search(text, start.end())
    if end is None:
        return "", text
    return text[start.end() : end.start()].strip(), text[: start.start()] + text[end.end() :]


#: the leaves of a JSON value, told apart before the (slower) container checks
_SCALARS = (str, int, float, type(None))


def _too_deep(value: Any, limit: int = MAX_PLAN_DEPTH) -> bool:
    """Whether lists/objects inside ``value`` nest deeper than ``limit`` (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, _SCALARS):
            continue
        if is_mapping(v):
            children: Iterable[Any] = v.values()
        elif isinstance(v, (list, tuple)):
            children = v
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((c, depth + 1) for c in children)
    return False


#: JSON as models write it: a line break or tab typed raw inside a string (strict JSON wants
#: ``\n``) is read as the text it is, not as a broken plan
_LENIENT = json.JSONDecoder(strict=False)


def _extract_json(text: str) -> tuple[Any, str] | ParseFailure:
    """Find the JSON object (or array) in model text; returns (value, thought)."""
    thought, text = _split_thought(text)
    candidates = [c for c in _FENCE.findall(text)] + [text]
    last_error = "no JSON object found"
    for cand in candidates:
        starts = [i for i in (cand.find("{"), cand.find("[")) if i >= 0]
        if not starts:
            continue
        if not thought:
            prefix = cand[: min(starts)].strip()
            prefix = linre.sub(r"^(thought|思考)\s*[:：]\s*", "", prefix, flags=linre.I)
            if prefix and "```" not in prefix:
                thought = prefix
        for start in sorted(starts):
            body = cand[start:]
            for fixed in (body, _TRAILING_COMMA.sub(r"\1", _LINE_COMMENT.sub("", body))):
                try:
                    value, _ = _LENIENT.raw_decode(fixed)
                    return value, thought
                except json.JSONDecodeError as exc:
                    last_error = f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
                except RecursionError:
                    return _deep_failure(thought)
    if any(c in text for c in "{["):
        return ParseFailure(code="invalid_json", reason=last_error, thought=thought)
    return ParseFailure(code="no_json", reason="no JSON object in the text", thought=thought)


def _coerce_json_string(v: Any) -> Any:
    if isinstance(v, str):
        s = v.strip()
        if s[:1] in "{[":
            try:
                return _LENIENT.decode(s)
            except (json.JSONDecodeError, RecursionError):
                return v
    return v


def _normalise_args(para: Any) -> tuple[dict[str, Any], list[Any] | None]:
    """ParaRecover ``para`` in all its shapes -> (named args, positional args or None)."""
    if para is None or para == "" or para == []:
        return {}, None
    para = _coerce_json_string(para)
    if isinstance(para, Mapping):
        return dict(para), None
    if isinstance(para, list):
        items = [_coerce_json_string(p) for p in para]
        if all(isinstance(p, Mapping) for p in items):
            merged: dict[str, Any] = {}
            for p in items:
                merged.update(p)
            return merged, None
        return {}, items
    # a bare string or number: one positional argument (e.g. a response node's "3的值除以4的值")
    return {}, [para]


def _node_from_obj(obj: Any, index: int) -> PlanNode | ParseFailure:
    if not isinstance(obj, Mapping):
        return ParseFailure(code="bad_node", reason=f"task {index} is not an object")
    raw_id = obj.get("id", obj.get("node_id", obj.get("task_id")))
    if raw_id is None or str(raw_id).strip() == "":
        return ParseFailure(code="bad_node", reason=f"task {index} has no id")
    node_id = str(raw_id).strip()
    tool = obj.get("name", obj.get("tool", obj.get("tool_name")))
    tool = str(tool).strip() if tool not in (None, "") else None
    if tool in (ROOT, RESPONSE):
        tool = None
    para = obj.get("para", obj.get("args", obj.get("arguments", obj.get("parameters"))))
    args, positional = _normalise_args(para)
    deps_raw = obj.get("dep", obj.get("deps", obj.get("dependencies", [])))
    if deps_raw is None or deps_raw == "":
        deps_raw = []
    if not isinstance(deps_raw, list):
        deps_raw = [deps_raw]
    deps: list[str] = []
    for d in deps_raw:
        ds = str(d).strip()
        if ds and ds not in deps:
            deps.append(ds)
    status_raw = obj.get("status", False)
    if isinstance(status_raw, str):
        low = status_raw.strip().lower()
        status: NodeStatus = (
            "done"
            if low in ("true", "done", "completed", "success", "finished", "executed")
            else "failed"
            if low in ("failed", "error")
            else "pending"
        )
    else:
        status = "done" if status_raw else "pending"
    return PlanNode(
        id=node_id,
        tool=tool,
        args=args,
        positional=positional,
        desc=str(obj.get("desc", obj.get("description", "")) or ""),
        deps=deps,
        status=status,
    )


def _deep_failure(thought: str = "") -> ParseFailure:
    return ParseFailure(
        code="too_deep",
        reason=f"the plan nests lists/objects more than {MAX_PLAN_DEPTH} deep",
        thought=thought,
    )


def _parse(text: Any) -> Plan | ParseFailure:
    if isinstance(text, (Mapping, list)):
        value, thought = text, ""
    else:
        if text is None or not str(text).strip():
            return ParseFailure(code="empty", reason="the plan text is empty")
        text = str(text)
        if len(text) > MAX_PLAN_CHARS:
            return ParseFailure(
                code="too_large",
                reason=f"the plan text is {len(text):,} characters (at most {MAX_PLAN_CHARS:,})",
            )
        got = _extract_json(text)
        if isinstance(got, ParseFailure):
            return got
        value, thought = got
    if _too_deep(value):
        return _deep_failure(thought)
    if isinstance(value, Mapping):
        thought = str(value.get("thought", "") or thought)
        tasks = None
        for key in ("tasks", "nodes", "plan", "dag", "steps"):
            if key in value:
                tasks = _coerce_json_string(value[key])
                if isinstance(tasks, Mapping) and "tasks" in tasks:
                    tasks = tasks["tasks"]
                break
    else:
        tasks = value
    if not isinstance(tasks, list) or not tasks:
        return ParseFailure(code="no_tasks", reason="the plan has no task list", thought=thought)
    nodes: list[PlanNode] = []
    for i, obj in enumerate(tasks):
        node = _node_from_obj(obj, i)
        if isinstance(node, ParseFailure):
            node.thought = thought
            return node
        if _too_deep([node.args, node.positional], MAX_PLAN_DEPTH + 1):
            return _deep_failure(thought)
        nodes.append(node)
    return _validate(nodes, thought)


def _adopt_terminal(nodes: list[PlanNode], role: str) -> list[PlanNode]:
    """Read an unnamed, tool-less sink (or source) node as ``response`` (or ``root``).

    Real plans sometimes end in ``{"id": "6", "name": "", "desc": "summarise and reply"}``.
    When exactly one such candidate exists it takes the role; its id is rewritten everywhere.
    """
    ids = {n.id for n in nodes}
    if role in ids:
        return nodes
    if role == RESPONSE:
        has_dependents = {d for n in nodes for d in n.deps}
        cands = [n for n in nodes if not n.tool and n.id not in has_dependents and n.deps]
    else:
        cands = [n for n in nodes if not n.tool and not n.deps]
    if len(cands) != 1:
        return nodes
    old = cands[0].id
    out = []
    for n in nodes:
        upd: dict[str, Any] = {}
        if n.id == old:
            upd["id"] = role
        if old in n.deps:
            upd["deps"] = [role if d == old else d for d in n.deps]
        out.append(n.model_copy(update=upd) if upd else n)
    return out


def _validate(nodes: list[PlanNode], thought: str) -> Plan | ParseFailure:
    nodes = _adopt_terminal(_adopt_terminal(nodes, ROOT), RESPONSE)
    seen: set[str] = set()
    for n in nodes:
        if n.id in seen:
            return ParseFailure(
                code="duplicate_id", reason=f"duplicate node id {n.id!r}", thought=thought
            )
        seen.add(n.id)
    for n in nodes:
        for d in n.deps:
            if d not in seen:
                return ParseFailure(
                    code="unknown_dep",
                    reason=f"node {n.id!r} depends on unknown node {d!r}",
                    thought=thought,
                )
    if ROOT not in seen:
        return ParseFailure(code="no_root", reason="the plan has no root node", thought=thought)
    if RESPONSE not in seen:
        return ParseFailure(
            code="no_response", reason="the plan has no response node", thought=thought
        )
    if not any(n.id not in (ROOT, RESPONSE) or n.is_call for n in nodes):
        return ParseFailure(code="no_tasks", reason="the plan has no task nodes", thought=thought)
    try:  # the standard library's check is cheap; networkx names the cycle when there is one
        graphlib.TopologicalSorter({n.id: n.deps for n in nodes}).prepare()
        cycle = None
    except graphlib.CycleError:
        g = _nx().DiGraph()
        g.add_nodes_from(seen)
        for n in nodes:
            g.add_edges_from((d, n.id) for d in n.deps)
        cycle = _nx().find_cycle(g)
    if cycle:
        path = " -> ".join([e[0] for e in cycle] + [cycle[-1][1]])
        return ParseFailure(code="cycle", reason=f"dependency cycle: {path}", thought=thought)
    return Plan(nodes=nodes, thought=thought)
