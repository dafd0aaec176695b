"""The deterministic tool world: state, snapshots, and executing a call.

Executing a call checks, in order: the tool exists -> argument names fit the schema -> references
resolve (``${node.field}`` against the outputs the caller can see) -> resolved values fit the
schema (type, then value) -> preconditions hold in the current state -> run -> apply effects.
The first failing check is the verdict, and an invalid call changes no state. Names are checked
before references because a reference's type is only known once it is resolved.

Determinism: outputs depend only on the world seed, the tool, the canonical arguments and the
state version, through SHA-256 (never ``hash()``), so the same call list gives the same
observations in every process and on every machine.
"""

from __future__ import annotations

import copy
import hashlib
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from replan.core.plan import exact_reference, reference_text, substitute_references
from replan.core.taxonomy import VerdictCode
from replan.core.tools import ToolSpec, canonical_json
from replan.core.trace import Call, Perturbation, Verdict


def stable_digest(*parts: Any) -> str:
    """Hex SHA-256 of the canonical JSON of ``parts``: the project's only hash for seeding."""
    return hashlib.sha256(canonical_json(list(parts)).encode()).hexdigest()


def stable_seed(*parts: Any) -> int:
    return int(stable_digest(*parts)[:16], 16)


class InvalidValue(Exception):
    """Raised by an implementation when a well-typed argument is semantically invalid.

    (An end date before the start date, a quantity above stock.) Becomes an ``invalid_value``
    verdict; the call changes no state.
    """

    def __init__(self, param: str | None, message: str):
        super().__init__(message)
        self.param = param
        self.message = message


@dataclass(frozen=True)
class WorldState:
    """Immutable world state: collections of records keyed by id, and a version counter.

    Updates copy only the touched collection, so a snapshot is just a reference.
    """

    collections: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)
    version: int = 0

    def get(self, collection: str, key: Any) -> Mapping[str, Any] | None:
        return self.collections.get(collection, {}).get(str(key))

    def records(self, collection: str) -> Mapping[str, Mapping[str, Any]]:
        return self.collections.get(collection, {})

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "collections": {
                c: {k: dict(v) for k, v in r.items()} for c, r in self.collections.items()
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WorldState:
        cols = data.get("collections", data)
        return cls(
            collections={c: {str(k): dict(v) for k, v in r.items()} for c, r in cols.items()},
            version=int(data.get("version", 0)) if "collections" in data else 0,
        )


class ToolContext:
    """What an implementation may use: read-only state and seeded randomness."""

    __slots__ = ("_rng", "args", "seed", "state", "tool")

    def __init__(self, tool: str, args: Mapping[str, Any], state: WorldState, seed: int):
        self.tool = tool
        self.args = args
        self.state = state
        self.seed = seed
        self._rng: random.Random | None = None

    @property
    def rng(self) -> random.Random:
        """A generator seeded by (world seed, tool, canonical args, state version)."""
        if self._rng is None:
            self._rng = random.Random(
                stable_seed(self.seed, self.tool, self.args, self.state.version)
            )
        return self._rng

    def new_id(self, prefix: str) -> str:
        """A fresh identifier, deterministic for this call in this state."""
        digest = stable_digest("id", self.seed, self.tool, self.args, self.state.version)
        return f"{prefix}-{digest[:8].upper()}"

    def pick(self, key: str, options: list[Any]) -> Any:
        """A deterministic choice keyed by (world seed, ``key``) only.

        Not keyed by the tool: two providers asking about the same thing (the same flight,
        the same ticker) see the same fact, which is what makes alternatives equivalent.
        """
        return options[stable_seed(self.seed, "pick", key) % len(options)]

    def number(self, key: str, low: float, high: float, digits: int = 2) -> float:
        """A deterministic number in [low, high] keyed by (world seed, ``key``) only."""
        frac = stable_seed(self.seed, "n", key) / float(1 << 64)
        return round(low + (high - low) * frac, digits)


class Fault(Protocol):
    """One injected fault for one invocation (see ``env/perturb.py``)."""

    perturbation: Perturbation

    def observation(self, clean_output: Any) -> Any: ...


class FaultInjector(Protocol):
    """Decides, per invocation, whether a call meets an injected fault."""

    def intercept(self, spec: ToolSpec, args: Mapping[str, Any]) -> Fault | None: ...


@dataclass(frozen=True)
class ExecResult:
    verdict: Verdict
    observation: Any
    state: WorldState
    resolved_args: dict[str, Any] | None = None
    perturbation: Perturbation | None = None
    output: Any = None  # the clean output (differs from ``observation`` under an implicit fault)

    @property
    def ok(self) -> bool:
        return self.verdict.ok


class UnresolvedReference(Exception):
    def __init__(self, message: str, param: str | None = None):
        super().__init__(message)
        self.message = message
        self.param = param


#: what :func:`lookup_path` returns when a step of the path is absent (``None`` is a value)
MISSING = object()


def lookup_path(value: Any, path: Iterable[str]) -> Any:
    """Follow ``a.b.0.c`` into nested dicts/lists; ``MISSING`` when a step is absent."""
    for part in path:
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return MISSING
    return value


def resolve_references(
    value: Any, bindings: Mapping[str, Any] | None, param: str | None = None
) -> Any:
    """Replace references in ``value`` by the bound outputs; raises :class:`UnresolvedReference`."""
    known = list(bindings) if bindings else []
    ref = exact_reference(value, known)
    if ref is not None:
        if not bindings or ref.node not in bindings:
            raise UnresolvedReference(
                f"{ref} refers to node {ref.node!r}, whose output is not available here", param
            )
        got = lookup_path(bindings[ref.node], ref.path)
        if got is MISSING:
            raise UnresolvedReference(
                f"{ref}: the output of node {ref.node!r} has no field {'.'.join(ref.path)!r}",
                param,
            )
        return got
    if isinstance(value, str):

        def sub(body: str) -> str:
            v = resolve_references(reference_text(body), bindings, param)
            return v if isinstance(v, str) else canonical_json(v)

        return substitute_references(value, sub)
    if isinstance(value, Mapping):
        return {k: resolve_references(v, bindings, param) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_references(v, bindings, param) for v in value]
    return value


def _arg_value(spec_value: Any, args: Mapping[str, Any], output: Any) -> Any:
    if isinstance(spec_value, str) and spec_value.startswith("$arg."):
        return lookup_path(args, spec_value[5:].split("."))
    if isinstance(spec_value, str) and spec_value.startswith("$output."):
        return lookup_path(output, spec_value[8:].split("."))
    return spec_value


#: Key under which arguments that were not a JSON object are passed on, so the call is still
#: judged (an unknown parameter) and recorded instead of silently dropped (here, not in
#: :mod:`replan.env.tool_wrapper`, so that a suite's simulators load without LangChain).
RAW_ARGS_KEY = "__raw_arguments__"


class World:
    """A tool registry plus state. ``execute`` is pure with respect to the given state.

    ``binds_positional``: a plan node's bare argument list is bound onto the tool's parameters
    in order before the call reaches this world (a world of ours); a world that judges such a
    list itself (ParaRecover's simulated tools reject it) says ``False`` and receives it under
    :data:`RAW_ARGS_KEY`.
    """

    binds_positional: bool = True

    def __init__(
        self,
        tools: Iterable[ToolSpec] | Mapping[str, ToolSpec],
        state: WorldState | Mapping[str, Any] | None = None,
        seed: int = 0,
        faults: FaultInjector | None = None,
    ):
        self.tools: dict[str, ToolSpec] = (
            dict(tools) if isinstance(tools, Mapping) else {t.name: t for t in tools}
        )
        if state is None:
            state = WorldState()
        elif not isinstance(state, WorldState):
            state = WorldState.from_dict(state)
        self.initial_state: WorldState = state
        self.state: WorldState = state
        self.seed = seed
        self.faults = faults

    # -- snapshots ----------------------------------------------------------------------------
    def snapshot(self) -> WorldState:
        return self.state

    def restore(self, state: WorldState) -> None:
        self.state = state

    def reset(self) -> None:
        self.state = self.initial_state

    def fork(self, faults: FaultInjector | None = None) -> World:
        """A world with the same tools and current state, independent from here on."""
        return World(self.tools, self.state, self.seed, faults)

    # -- checks -------------------------------------------------------------------------------
    def check_preconditions(
        self, spec: ToolSpec, args: Mapping[str, Any], state: WorldState
    ) -> Verdict:
        for pre in spec.preconditions:
            key = args.get(pre.arg)
            rec = state.get(pre.collection, key) if key is not None else None
            if rec is None:
                return Verdict(
                    code=VerdictCode.PRECONDITION_FAILED,
                    param=pre.arg,
                    message=pre.description
                    or f"{spec.name}: no {pre.collection} record {key!r} (argument {pre.arg!r})",
                )
            if pre.kind == "field_equals" and rec.get(pre.field or "") != pre.value:
                return Verdict(
                    code=VerdictCode.PRECONDITION_FAILED,
                    param=pre.arg,
                    message=(pre.description or f"{spec.name}: {pre.collection} {key!r}")
                    + f" ({pre.field} is {rec.get(pre.field or '')!r}, needs {pre.value!r})",
                )
        return Verdict.okay()

    def check(
        self, call: Call, bindings: Mapping[str, Any] | None = None, state: WorldState | None = None
    ) -> tuple[Verdict, dict[str, Any] | None]:
        """The verdict for ``call`` in ``state`` (default: current) and the resolved args."""
        state = self.state if state is None else state
        spec = self.tools.get(call.tool)
        if spec is None:
            return (
                Verdict(
                    code=VerdictCode.UNKNOWN_TOOL,
                    message=f"no tool named {call.tool!r} in this world",
                ),
                None,
            )
        res = spec.check_names(call.args)
        if not res.ok:
            return Verdict(code=res.code, param=res.param, message=res.message), None
        try:
            resolved = {k: resolve_references(v, bindings, k) for k, v in call.args.items()}
        except UnresolvedReference as exc:
            return (
                Verdict(code=VerdictCode.UNBOUND_REFERENCE, param=exc.param, message=exc.message),
                None,
            )
        for name in spec.param_names:
            if name in resolved:
                res = spec.check_value(name, resolved[name])
                if not res.ok:
                    return Verdict(code=res.code, param=res.param, message=res.message), resolved
        return self.check_preconditions(spec, resolved, state), resolved

    # -- execution ----------------------------------------------------------------------------
    def execute(
        self,
        call: Call,
        bindings: Mapping[str, Any] | None = None,
        *,
        state: WorldState | None = None,
        commit: bool = True,
    ) -> ExecResult:
        """Execute ``call``; on success (and ``commit``) the world moves to the new state."""
        base = self.state if state is None else state
        verdict, resolved = self.check(call, bindings, base)
        if not verdict.ok:
            return ExecResult(
                verdict=verdict,
                observation={"error": verdict.code.value, "message": verdict.message},
                state=base,
                resolved_args=resolved,
            )
        spec = self.tools[call.tool]
        assert resolved is not None
        fault = self.faults.intercept(spec, resolved) if self.faults is not None else None
        if fault is not None and fault.perturbation.explicit:
            # the service failed: nothing ran, no state changed; the call itself was valid
            return ExecResult(
                verdict=verdict,
                observation=fault.observation(None),
                state=base,
                resolved_args=resolved,
                perturbation=fault.perturbation,
            )
        try:
            output = self._run(spec, resolved, base)
        except InvalidValue as exc:
            v = Verdict(code=VerdictCode.INVALID_VALUE, param=exc.param, message=exc.message)
            return ExecResult(
                verdict=v,
                observation={"error": v.code.value, "message": v.message},
                state=base,
                resolved_args=resolved,
            )
        new_state = self.apply_effects(spec, resolved, output, base)
        if commit:
            self.state = new_state
        observation = output
        perturbation = None
        if fault is not None:
            observation = fault.observation(copy.deepcopy(output))
            perturbation = fault.perturbation
        return ExecResult(
            verdict=verdict,
            observation=observation,
            state=new_state,
            resolved_args=resolved,
            perturbation=perturbation,
            output=output,
        )

    def _run(self, spec: ToolSpec, args: dict[str, Any], state: WorldState) -> Any:
        if spec.implementation is None:
            raise RuntimeError(
                f"tool {spec.name!r} has no implementation in this world; give the World an "
                "implementation or use a tool simulator"
            )
        try:
            return spec.implementation(args, ToolContext(spec.name, args, state, self.seed))
        except InvalidValue:
            raise
        except Exception as exc:
            raise RuntimeError(
                f"tool {spec.name!r} crashed on {canonical_json(args)}: {exc!r}"
            ) from exc

    @staticmethod
    def apply_effects(
        spec: ToolSpec, args: Mapping[str, Any], output: Any, state: WorldState
    ) -> WorldState:
        if not spec.effects:
            return state
        cols: dict[str, Mapping[str, Mapping[str, Any]]] = dict(state.collections)
        for eff in spec.effects:
            col = dict(cols.get(eff.collection, {}))
            if eff.op == "create":
                key = _arg_value("$output." + eff.key, args, output)
                if key is MISSING:
                    raise RuntimeError(
                        f"{spec.name}: output has no field {eff.key!r} to key a record"
                    )
                col[str(key)] = {
                    k: v
                    for k, v in ((k, _arg_value(v, args, output)) for k, v in eff.fields.items())
                    if v is not MISSING
                }
            else:
                key = str(args.get(eff.key))
                if eff.op == "delete":
                    col.pop(key, None)
                elif key in col:
                    rec = dict(col[key])
                    for k, v in eff.fields.items():
                        val = _arg_value(v, args, output)
                        if val is not MISSING:
                            rec[k] = val
                    col[key] = rec
            cols[eff.collection] = col
        return WorldState(collections=cols, version=state.version + 1)

    def run_calls(
        self, calls: Iterable[Call], bindings: Mapping[str, Any] | None = None
    ) -> list[ExecResult]:
        """Execute calls in order, binding each successful output to its ``node_id``."""
        bound = dict(bindings or {})
        out = []
        for c in calls:
            r = self.execute(c, bound)
            if r.ok and c.node_id:
                bound[c.node_id] = r.observation
            out.append(r)
        return out


ImplFn = Callable[[dict[str, Any], ToolContext], Any]
