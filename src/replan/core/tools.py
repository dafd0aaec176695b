"""Tool specifications: JSON-Schema parameters, output schema, preconditions and effects.

A :class:`ToolSpec` is pure data plus an optional deterministic implementation. Argument
validation is the hot path of both execution and scoring, so each spec compiles its parameter
schemas once (``fastjsonschema``, shared through a cache keyed by the canonical schema) and a
call is checked with a few set operations and one compiled function per argument.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal

import fastjsonschema
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from replan.core import linre
from replan.core.leaves import is_mapping as _is_mapping
from replan.core.taxonomy import VerdictCode

Category = Literal["source", "processor", "action"]
Domain = Literal["Financial", "Travel", "Office", "Shopping", "IoT", "General"]
CATEGORIES: tuple[str, ...] = ("source", "processor", "action")
DOMAINS: tuple[str, ...] = ("Financial", "Travel", "Office", "Shopping", "IoT", "General")


def canonical_json(value: Any) -> str:
    """Stable JSON text (sorted keys, no spaces): the basis of every hash and cache key."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _is_date(value: str) -> bool:
    try:
        return bool(linre.fullmatch(r"\d{4}-\d{2}-\d{2}", value)) and bool(
            _dt.date.fromisoformat(value)
        )
    except ValueError:
        return False


def _is_time(value: str) -> bool:
    try:
        return bool(linre.fullmatch(r"\d{2}:\d{2}(:\d{2})?", value)) and bool(
            _dt.time.fromisoformat(value)
        )
    except ValueError:
        return False


def _is_datetime(value: str) -> bool:
    try:
        _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return "T" in value


#: Formats checked for real (``2026-02-32`` is not a date). Unknown formats are ignored, as
#: JSON Schema prescribes.
FORMATS: dict[str, Callable[[str], bool] | str] = {
    "date": _is_date,
    "time": _is_time,
    "date-time": _is_datetime,
    "email": r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$",
    "uri": r"^[a-zA-Z][a-zA-Z0-9+.-]*://[^\s]+$",
    "currency": r"^[A-Z]{3}$",
    "iata": r"^[A-Z]{3}$",
}


@lru_cache(maxsize=8192)
def _compile(schema_json: str) -> Callable[[Any], Any]:
    return fastjsonschema.compile(json.loads(schema_json), formats=FORMATS)


def compile_schema(schema: Mapping[str, Any]) -> Callable[[Any], Any]:
    """A compiled validator for ``schema`` (cached: equal schemas share one function)."""
    return _compile(canonical_json(schema))


_JSON_TYPE_ALIASES = {
    "str": "string",
    "text": "string",
    "int": "integer",
    "float": "number",
    "double": "number",
    "bool": "boolean",
    "list": "array",
    "dict": "object",
    "map": "object",
    "none": "null",
}
_JSON_TYPES = {"string", "number", "integer", "boolean", "array", "object", "null"}


def _normalise_property(schema: Any) -> dict[str, Any]:
    """Make a loosely written property schema (real datasets) valid JSON Schema."""
    if not isinstance(schema, Mapping):
        return {}
    out = dict(schema)
    t = out.get("type")
    if isinstance(t, str):
        low = t.strip().lower()
        if low == "enum":
            out.pop("type")
            if "enum" not in out:
                out["type"] = "string"
        else:
            low = _JSON_TYPE_ALIASES.get(low, low)
            if low in _JSON_TYPES:
                out["type"] = low
            else:
                out.pop("type")  # an unknown type name constrains nothing
    elif isinstance(t, list):
        kept = [_JSON_TYPE_ALIASES.get(str(x).lower(), str(x).lower()) for x in t]
        kept = [x for x in kept if x in _JSON_TYPES]
        if kept:
            out["type"] = kept
        else:
            out.pop("type")
    if isinstance(out.get("properties"), Mapping):
        out["properties"] = {k: _normalise_property(v) for k, v in out["properties"].items()}
    if isinstance(out.get("items"), Mapping):
        out["items"] = _normalise_property(out["items"])
    return out


class Precondition(BaseModel):
    """A predicate on world state that must hold before a call runs.

    ``exists``: the record named by argument ``arg`` is in ``collection``.
    ``field_equals``: that record exists and its ``field`` equals ``value``.
    """

    model_config = ConfigDict(frozen=True)

    kind: Literal["exists", "field_equals"]
    collection: str
    arg: str
    field: str | None = None
    value: Any = None
    description: str = ""


class Effect(BaseModel):
    """A state change applied after a successful call.

    ``create``: add a record to ``collection`` keyed by output field ``key``.
    ``update``: change the record keyed by argument ``key``.
    ``delete``: remove the record keyed by argument ``key``.
    ``fields`` values are literals, or ``"$arg.<name>"`` / ``"$output.<name>"`` to copy a value.
    """

    model_config = ConfigDict(frozen=True)

    op: Literal["create", "update", "delete"]
    collection: str
    key: str
    fields: dict[str, Any] = Field(default_factory=dict)


class ArgCheck(BaseModel):
    """Outcome of checking arguments against a schema: ``ok`` or the first failing code."""

    model_config = ConfigDict(frozen=True)

    code: VerdictCode
    param: str | None = None
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.code is VerdictCode.OK


_OK = ArgCheck(code=VerdictCode.OK)


class ToolSpec(BaseModel):
    """One tool: its contract (schemas, preconditions, effects) and its implementation.

    ``parameters`` is a JSON-Schema object with ``properties`` and ``required``; unknown
    arguments are rejected. ``returns`` is the JSON Schema of the output. ``implementation``
    is ``f(args, ctx) -> output`` and is not serialised.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}, "required": []}
    )
    returns: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    category: Category = "processor"
    domain: Domain = "General"
    group: str | None = None
    preconditions: list[Precondition] = Field(default_factory=list)
    effects: list[Effect] = Field(default_factory=list)
    implementation: Callable[..., Any] | None = Field(default=None, exclude=True, repr=False)

    _validators: dict[str, Callable[[Any], Any]] | None = PrivateAttr(default=None)
    _required: frozenset[str] = PrivateAttr(default=frozenset())
    _props: tuple[str, ...] = PrivateAttr(default=())

    @field_validator("parameters")
    @classmethod
    def _normalise_parameters(cls, v: dict[str, Any]) -> dict[str, Any]:
        props = v.get("properties")
        if not isinstance(props, Mapping):
            props = {}
        required = [r for r in v.get("required", []) or [] if isinstance(r, str)]
        return {
            **{k: x for k, x in v.items() if k not in ("properties", "required")},
            "type": "object",
            "properties": {k: _normalise_property(p) for k, p in props.items()},
            "required": required,
            "additionalProperties": False,
        }

    def model_post_init(self, __context: Any) -> None:
        props = self.parameters["properties"]
        self._props = tuple(props)
        self._required = frozenset(self.parameters["required"])

    # -- schema helpers ---------------------------------------------------------------------
    @property
    def param_names(self) -> tuple[str, ...]:
        """Parameter names in declaration order (the order positional args bind to)."""
        return self._props

    @property
    def required(self) -> frozenset[str]:
        return self._required

    def param_schema(self, name: str) -> dict[str, Any] | None:
        return self.parameters["properties"].get(name)

    def output_field_schema(self, path: Sequence[str]) -> dict[str, Any] | None:
        """Schema of ``output.<path>`` per ``returns``, or ``None`` if the path is undeclared."""
        schema = self._output_field(path)
        return dict(schema) if schema is not None else None

    def output_field_kind(self, path: Sequence[str]) -> str:
        """The semantic kind (``x-kind``) of ``output.<path>``, ``""`` when none is declared:
        :meth:`output_field_schema`'s, without copying the schema (the simulated model asks
        for every leaf of every result it compares, about 30 times per model turn)."""
        schema = self._output_field(path)
        return str(schema.get("x-kind", "")) if schema else ""

    def _output_field(self, path: Sequence[str]) -> Mapping[str, Any] | None:
        schema: Any = self.returns
        for part in path:
            if not _is_mapping(schema):
                return None
            if part.isdigit() and _is_mapping(schema.get("items")):
                schema = schema["items"]
                continue
            props = schema.get("properties")
            if not _is_mapping(props) or part not in props:
                return None
            schema = props[part]
        return schema if _is_mapping(schema) else None

    def check_schemas(self) -> ToolSpec:
        """``self`` once every parameter schema compiles; ``ValueError`` naming the tool and the
        parameter otherwise (a dataset's ``"type": {...}``), so a bad schema is the fault of the
        line that holds it, found when it is read, not of whatever checks a call against it."""
        validators = {}
        for name, schema in self.parameters["properties"].items():
            try:
                validators[name] = compile_schema(schema)
            except Exception as exc:  # compiling an arbitrary schema fails in many ways
                why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise ValueError(
                    f"tool {self.name!r} parameter {name!r}: not a valid JSON Schema "
                    f"({type(exc).__name__}: {why[:120]}): {_short(schema)}"
                ) from None
        self._validators = validators
        return self

    def _compiled(self) -> dict[str, Callable[[Any], Any]]:
        if self._validators is None:
            self._validators = {
                name: compile_schema(schema)
                for name, schema in self.parameters["properties"].items()
            }
        return self._validators

    def check_names(self, args: Any) -> ArgCheck:
        """Unknown and missing argument names (a renamed argument reads as unknown first)."""
        if not isinstance(args, Mapping):
            return ArgCheck(
                code=VerdictCode.TYPE_MISMATCH,
                message=f"arguments of {self.name} must be an object, got {type(args).__name__}",
            )
        props = self._props
        for key in args:
            if key not in props:
                return ArgCheck(
                    code=VerdictCode.UNKNOWN_PARAM,
                    param=str(key),
                    message=f"{self.name} has no parameter {key!r}; it takes {list(props)}",
                )
        for name in self.parameters["required"]:
            if name not in args:
                return ArgCheck(
                    code=VerdictCode.MISSING_PARAM,
                    param=name,
                    message=f"{self.name} requires parameter {name!r}",
                )
        return _OK

    def check_value(self, name: str, value: Any) -> ArgCheck:
        """Type and value of one argument against its compiled schema."""
        validator = self._compiled().get(name)
        if validator is None:
            return ArgCheck(
                code=VerdictCode.UNKNOWN_PARAM,
                param=name,
                message=f"{self.name} has no parameter {name!r}",
            )
        try:
            validator(value)
        except fastjsonschema.JsonSchemaValueException as exc:
            code = VerdictCode.TYPE_MISMATCH if exc.rule == "type" else VerdictCode.INVALID_VALUE
            where = exc.name.replace("data", name, 1) if exc.name else name
            return ArgCheck(
                code=code,
                param=name,
                message=f"{self.name}.{where}: {exc.message.replace('data', name, 1)} "
                f"(got {_short(value)})",
            )
        return _OK

    def check_args(self, args: Any) -> ArgCheck:
        """Full argument check: names first, then each value in declaration order."""
        res = self.check_names(args)
        if not res.ok:
            return res
        for name in self._props:
            if name in args:
                res = self.check_value(name, args[name])
                if not res.ok:
                    return res
        return _OK

    def check_output(self, output: Any) -> ArgCheck:
        """Validate an output against ``returns`` (used to prove implicit faults stay valid)."""
        try:
            compile_schema(self.returns)(output)
        except fastjsonschema.JsonSchemaValueException as exc:
            return ArgCheck(code=VerdictCode.INVALID_VALUE, message=exc.message)
        return _OK

    def bind_positional(self, values: list[Any]) -> dict[str, Any]:
        """Bind a positional argument list onto parameter names in declaration order.

        Extra values beyond the declared parameters are kept under ``_arg<i>`` so that the
        check reports them as unknown parameters instead of silently dropping them.
        """
        out: dict[str, Any] = {}
        for i, v in enumerate(values):
            out[self._props[i] if i < len(self._props) else f"_arg{i}"] = v
        return out

    # -- interop ------------------------------------------------------------------------------
    def to_openai(self) -> dict[str, Any]:
        """The OpenAI / LangChain function-tool dict for this tool."""
        params = {
            "type": "object",
            "properties": self.parameters["properties"],
            "required": list(self.parameters["required"]),
        }
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": params},
        }

    @classmethod
    def from_pararecover(cls, tool_list: str | list[Any]) -> list[ToolSpec]:
        """Tool specs from a ParaRecover ``tool_list`` (JSON text or parsed list).

        Accepts ``required`` beside ``parameters`` (the dataset's layout) or inside a full
        object schema, and loose type names (``"enum"``, ``"int"``, ``"float"``). Raises
        ``ValueError`` naming the offending entry when the list cannot be read.
        """
        if isinstance(tool_list, str):
            try:
                tool_list = json.loads(tool_list)
            except json.JSONDecodeError as exc:
                raise ValueError(f"tool_list is not valid JSON: {exc}") from exc
        if isinstance(tool_list, Mapping):
            tool_list = [tool_list]
        if not isinstance(tool_list, list):
            raise ValueError(f"tool_list must be a list, got {type(tool_list).__name__}")
        specs: list[ToolSpec] = []
        for i, entry in enumerate(tool_list):
            if isinstance(entry, Mapping) and "function" in entry and "name" not in entry:
                entry = entry["function"]
            if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
                raise ValueError(f"tool_list[{i}] has no tool name: {_short(entry)}")
            params = entry.get("parameters") or {}
            if not isinstance(params, Mapping):
                params = {}
            if isinstance(params.get("properties"), Mapping):
                props = dict(params["properties"])
                required = params.get("required", entry.get("required", []))
            else:
                props = {k: v for k, v in params.items() if isinstance(v, Mapping)}
                required = entry.get("required", params.get("required", []))
            if not isinstance(required, list):
                required = []
            specs.append(
                cls(
                    name=entry["name"],
                    description=str(entry.get("description", "")),
                    parameters={
                        "type": "object",
                        "properties": props,
                        "required": [r for r in required if r in props],
                    },
                    returns=dict(entry.get("returns") or entry.get("response") or {}),
                ).check_schemas()
            )
        return specs


def _short(value: Any, limit: int = 80) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
