"""Seeded fault schedules for a user's own tools (ToolMaze's NP, P1–P4 on tools we do not own).

A :class:`FaultSchedule` names *what* fails — a tool, or a user-declared alternative group whose
first member the agent calls becomes the victim (ToolMaze's activation rule; with no target,
every tool forms one group) — and *how*: the mode (P1 explicit-transient, P2 explicit-permanent,
P3 implicit-transient, P4 implicit-permanent). :meth:`FaultSchedule.for_episode` gives the
stateful injector of one episode; it is the perturbation engine's own
:class:`~replan.env.perturb.Perturber` (activation, invocation counting, transient vs
permanent), so our suites and your tools meet faults by the same rules.

What is new here is only what tools we do not own need:

- **explicit** faults are *raised*, as a failing HTTP client would raise them
  (:class:`InjectedFault`, a ``ToolException``; ``deliver="message"`` returns the error as the
  tool's output instead), except ``empty``, which returns an empty result;
- **implicit** faults corrupt whatever the tool returned — a field of a dict, a JSON string or a
  pydantic model (the rebuilt model must still validate), or a number or ISO date inside plain
  text — with a value that carries an episode-unique **sentinel**.

Every choice (the explicit kind, the corrupted value) is a pure function of
``(schedule seed, task id, mode, seed index)`` and of the clean output, never of the agent:
every design meets the same faults.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import ToolMessage
from langchain_core.tools import ToolException
from pydantic import BaseModel, ValidationError

from replan.core import linre
from replan.core.task import MODES, PerturbationProfile, mode_flags
from replan.core.tools import ToolSpec
from replan.core.trace import Perturbation
from replan.env.derived import Corrupted, resolve_paths
from replan.env.perturb import (
    EXPLICIT_KINDS,
    ImplicitSpec,
    Perturber,
    corrupt,
    corruptions,
    explicit_observation,
    plan_implicit,
    set_path,
)
from replan.env.world import lookup_path, stable_seed

#: Explicit fault kinds for your tools: the engine's HTTP-like kinds plus ``error`` (the tool
#: raised an unclassified exception).
INPLACE_EXPLICIT_KINDS: tuple[str, ...] = (*EXPLICIT_KINDS, "error")
#: What an unseeded explicit fault is drawn from (404 is left out: a missing resource is a
#: statement about the data, not a service failure a retry could fix or an agent could route around).
DEFAULT_EXPLICIT_DRAW: tuple[str, ...] = ("http_429", "http_503", "timeout", "error", "empty")
#: The pseudo-group of "every tool": the first tool the agent calls becomes the victim.
ANY_TOOL = "*"

Deliver = Literal["raise", "message"]


class InjectedFault(Exception):
    """An explicit fault replan injected (never the tool's own error, never the agent's).

    ``kind`` (``http_429`` …), ``status`` (the HTTP-like status, when it has one) and
    ``observation`` (the machine-readable error) say what happened.
    """

    def __init__(self, kind: str, tool: str, observation: Mapping[str, Any]):
        self.kind = kind
        self.tool = tool
        self.status = observation.get("status")
        self.observation = dict(observation)
        super().__init__(str(observation.get("message") or f"{tool} failed ({kind})"))


class InjectedToolError(InjectedFault, ToolException):
    """The raised form of an explicit fault: a ``ToolException``, so a tool's or ToolNode's
    own error handling and LangChain's ``ToolRetryMiddleware`` treat it like a real failure."""


class InjectedTimeout(InjectedToolError, TimeoutError):
    """An injected timeout (also a ``TimeoutError``, as client libraries raise)."""


def explicit_fault_observation(kind: str, tool: str) -> dict[str, Any]:
    """The machine-readable error of an explicit fault (the engine's, plus ``error``)."""
    if kind == "error":
        return {
            "error": "error",
            "status": 500,
            "reason": "Internal Server Error",
            "message": f"HTTP 500 Internal Server Error: {tool} raised an unexpected error",
        }
    return explicit_observation(kind, tool)


def fault_exception(kind: str, tool: str) -> InjectedToolError:
    """The exception an explicit fault raises (``empty`` never raises; see :func:`deliver`)."""
    obs = explicit_fault_observation(kind, tool)
    cls = InjectedTimeout if kind == "timeout" else InjectedToolError
    return cls(kind, tool, obs)


# -- implicit corruption of arbitrary outputs -------------------------------------------------------
_DATE_IN_TEXT = linre.compile(r"\d{4}-\d{2}-\d{2}", not_after=r"\d-", followed_by=r"\D|$")
#: a number standing alone: nothing word-like, "." or "-" just before, and no digit further on
#: in the word that follows ("12a3", "1.5.3" and "v2" hold none)
_NUMBER_IN_TEXT = linre.compile(
    r"-?\d+(?:\.\d+)?", not_after=r"\w.-", followed_by=r"[\p{L}\p{Nl}\p{No}_.]*(?:[^\w.]|$)"
)


@dataclass(frozen=True)
class Corruption:
    """One applied implicit fault: the new output, where it was written and its sentinel.

    ``corrupted`` lists every value written (a path naming every row corrupts each row);
    ``aim`` says why these fields (``"named"``, ``"consumed"`` or ``"first"``)."""

    output: Any
    field: str
    kind: str
    sentinel: Any
    corrupted: tuple[Corrupted, ...] = ()
    aim: str = "first"


def inline_refs(schema: Any, defs: Mapping[str, Any] | None = None, depth: int = 0) -> Any:
    """A JSON Schema with local ``$ref``s replaced by their definitions (for per-field checks)."""
    if defs is None and isinstance(schema, Mapping):
        defs = {**schema.get("$defs", {}), **schema.get("definitions", {})}
    if isinstance(schema, Mapping):
        ref = schema.get("$ref")
        if isinstance(ref, str) and defs is not None and depth < 16:
            name = ref.rsplit("/", 1)[-1]
            if name in defs:
                return inline_refs(defs[name], defs, depth + 1)
        return {
            k: inline_refs(v, defs, depth)
            for k, v in schema.items()
            if k not in ("$defs", "definitions")
        }
    if isinstance(schema, list):
        return [inline_refs(v, defs, depth) for v in schema]
    return schema


def _wrong(
    value: Any, salt: int, schema: Mapping[str, Any] | None = None
) -> tuple[str, Any] | None:
    """The first semantically wrong replacement of ``value`` (``None`` when it has none)."""
    for kind, new in corruptions(value, schema or {}, salt):
        if new != value:
            return kind, new
    return None


def _at_paths(
    value: Any, paths: Sequence[tuple[str, ...]], salt: int, returns: Mapping[str, Any]
) -> tuple[Any, list[Corrupted]]:
    """A copy of ``value`` with the leaf at every path corrupted (what was written, per path)."""
    out = copy.deepcopy(value)
    spec = ToolSpec(name="output", returns=dict(returns))
    done: list[Corrupted] = []
    for path in paths:
        clean = lookup_path(out, path)
        got = _wrong(clean, salt, spec.output_field_schema(list(path)) or {})
        if got is None or not set_path(out, list(path), got[1]):
            continue
        done.append(Corrupted(got[0], got[1], clean, ".".join(path)))
    return out, done


def _structured(
    value: Any,
    salt: int,
    preferred: Sequence[str],
    returns: Mapping[str, Any],
    targets: Sequence[str] = (),
) -> Corruption | None:
    """Corrupt a dict/list: the named field (every place it names), else the first consumed
    target that resolves, else the engine's first choice."""
    for aim, patterns in (("named", preferred), ("consumed", targets)):
        for pattern in patterns:
            if pattern.startswith("text:"):
                continue
            paths = resolve_paths(value, pattern)
            if not paths:
                continue
            new, done = _at_paths(value, paths, salt, returns)
            if done and ToolSpec(name="output", returns=dict(returns)).check_output(new).ok:
                first = done[0]
                return Corruption(
                    new, first.field or "", first.kind, first.sentinel, tuple(done), aim
                )
        if aim == "named" and patterns:
            return None  # a named field that is absent here is not replaced by another one
    spec = ToolSpec(name="output", returns=dict(returns))
    ispec = plan_implicit(spec, value, salt, ())
    if ispec is None:
        return None
    clean = lookup_path(value, ispec.field.split("."))
    c = Corrupted(ispec.kind, ispec.value, clean, ispec.field)
    return Corruption(corrupt(value, ispec), ispec.field, ispec.kind, ispec.value, (c,), "first")


def _replace_token(text: str, token: str, new: str) -> tuple[str, int]:
    """``text`` with every whole occurrence of ``token`` replaced (and how many there were)."""
    pattern = linre.compile(
        linre.escape(token),
        not_after=r"\w.-",
        followed_by=r"$|[^\w.-]|[.-](?:$|\W)",  # no word character, nor "." or "-" and one
        overlapping=True,
    )
    return pattern.subn(lambda _m: new, text)


def _text(text: str, salt: int, targets: Sequence[str] = ()) -> Corruption | None:
    """Plain text: every occurrence of the first consumed token, else the first ISO date, else
    the first number, replaced by its corruption."""
    for pattern in targets:
        if not pattern.startswith("text:"):
            continue
        token = pattern[5:]
        num = token.replace(",", "")
        value: Any = token
        if linre.fullmatch(r"-?\d+(?:\.\d+)?", num):
            value = float(num) if "." in num else int(num)
        got = _wrong(value, salt)
        if got is None:
            continue
        new_text, n = _replace_token(text, token, str(got[1]))
        if n:
            c = Corrupted(got[0], got[1], value, pattern)
            return Corruption(new_text, pattern, got[0], got[1], (c,), "consumed")
    for pattern, parse in ((_DATE_IN_TEXT, str), (_NUMBER_IN_TEXT, None)):
        for m in pattern.finditer(text):
            raw = m.group()
            value = raw if parse is str else (float(raw) if "." in raw else int(raw))
            got = _wrong(value, salt)
            if got is None:
                continue
            kind, new = got
            field = f"text@{m.start()}"
            c = Corrupted(kind, new, value, field)
            return Corruption(
                text[: m.start()] + str(new) + text[m.end() :], field, kind, new, (c,), "first"
            )
    return None


def corrupt_output(
    output: Any, salt: int, *, field: str | None = None, targets: Sequence[str] = ()
) -> Corruption | None:
    """Apply an implicit fault to any tool output, or ``None`` where nothing can be corrupted.

    Dicts and lists: ``field`` (a path, :mod:`replan.env.derived`: every place it names), else
    the first of ``targets`` (the paths a clean run consumed) found here, else the engine's
    choice (numbers, dates, strings). A JSON string: the same, re-serialised. A pydantic model:
    the same on its dump, rebuilt with ``model_validate`` (so the result is still
    schema-valid). Plain text: the first consumed token of ``targets`` (``text:<token>``, every
    occurrence), else the first ISO date, else the first number; a named ``field`` never
    matches plain text. A ``ToolMessage``: its content, the message otherwise unchanged.
    """
    preferred = [field] if field else []
    if isinstance(output, ToolMessage):
        inner = corrupt_output(output.content, salt, field=field, targets=targets)
        if inner is None:
            return None
        msg = output.model_copy(update={"content": inner.output})
        return dataclasses.replace(inner, output=msg)
    if isinstance(output, tuple) and len(output) == 2:  # (content, artifact)
        inner = corrupt_output(output[0], salt, field=field, targets=targets)
        if inner is None:
            return None
        return dataclasses.replace(inner, output=(inner.output, output[1]))
    if isinstance(output, BaseModel):
        cls = type(output)
        returns = inline_refs(cls.model_json_schema(mode="serialization"))
        dumped = output.model_dump(mode="json")
        got = _structured(dumped, salt, preferred, returns, targets)
        if got is None:
            return None
        try:
            rebuilt = cls.model_validate(got.output)
        except ValidationError:
            return None
        return dataclasses.replace(got, output=rebuilt)
    if isinstance(output, (Mapping, list)):
        return _structured(copy.deepcopy(output), salt, preferred, {}, targets)
    if isinstance(output, str):
        stripped = output.strip()
        if stripped[:1] in "{[":
            try:
                parsed = json.loads(stripped)
            except ValueError:
                parsed = None
            if isinstance(parsed, (dict, list)):
                got = _structured(parsed, salt, preferred, {}, targets)
                if got is not None:
                    text = json.dumps(got.output, ensure_ascii=False)
                    return dataclasses.replace(got, output=text)
                if preferred:
                    return None
        if preferred:
            return None
        return _text(output, salt, targets)
    if isinstance(output, (int, float)) and not isinstance(output, bool):
        got2 = _wrong(output, salt)
        if got2 is not None:
            c = Corrupted(got2[0], got2[1], output, "")
            return Corruption(got2[1], "", got2[0], got2[1], (c,), "first")
    return None


# -- schedules ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FaultSchedule:
    """Which tool fails, how, and with which seed (one perturbation mode).

    ``target`` is a tool name, a name in ``groups`` (an alternative group: the first member the
    agent calls becomes the victim, no other member is perturbed), or ``None`` / ``"*"``: every
    tool in ``tools`` forms one group, so the first tool the agent calls is the victim. ``kind``
    fixes the explicit kind (default: drawn per episode from :data:`DEFAULT_EXPLICIT_DRAW`);
    ``field`` names the output field an implicit fault corrupts (a path,
    :mod:`replan.env.derived`; every place it names); ``aim`` maps a tool to the output paths a
    clean run of the same task consumed (:func:`~replan.env.derived.consumed_outputs`), which an
    implicit fault corrupts when no field is named. ``deliver`` = ``"raise"``
    raises explicit faults as exceptions (what a real client does), ``"message"`` returns them
    as the tool's error output.
    """

    mode: str = "P1"
    target: str | None = None
    groups: Mapping[str, Sequence[str]] = dataclasses.field(default_factory=dict)
    tools: Sequence[str] = ()
    kind: str | None = None
    field: str | None = None
    seed: int = 0
    deliver: Deliver = "raise"
    aim: Mapping[str, Sequence[str]] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"FaultSchedule: unknown mode {self.mode!r}; expected one of {MODES}")
        if self.kind is not None and self.kind not in INPLACE_EXPLICIT_KINDS:
            raise ValueError(
                f"FaultSchedule: unknown explicit kind {self.kind!r}; "
                f"expected one of {INPLACE_EXPLICIT_KINDS}"
            )
        if self.deliver not in ("raise", "message"):
            raise ValueError(
                f"FaultSchedule: deliver must be 'raise' or 'message', got {self.deliver!r}"
            )
        for name, members in self.groups.items():
            if isinstance(members, str) or not members:
                raise ValueError(
                    f"FaultSchedule: group {name!r} must list its tools, got {members!r}"
                )

    def with_mode(self, mode: str) -> FaultSchedule:
        """The same schedule in another mode."""
        return dataclasses.replace(self, mode=mode)

    def victims(self) -> tuple[str, list[str]]:
        """(victim label, group members): members empty when the target is one tool."""
        target = self.target
        if target is None or target == ANY_TOOL:
            if not self.tools:
                raise ValueError(
                    "FaultSchedule: no target and no tools given; name a target tool or group "
                    "(or give tools=... so the first tool the agent calls becomes the victim)"
                )
            return ANY_TOOL, list(self.tools)
        if target in self.groups:
            return target, list(self.groups[target])
        if self.tools and target not in self.tools:
            raise ValueError(
                f"FaultSchedule: target {target!r} is neither a tool ({list(self.tools)}) nor a "
                f"declared group ({list(self.groups)})"
            )
        return target, []

    def for_episode(self, task_id: str = "default", seed: int = 0) -> EpisodeFaults | None:
        """The injector of one episode (``None`` under NP)."""
        if self.mode == "NP":
            return None
        explicit, _ = mode_flags(self.mode)
        salt = stable_seed("inplace", self.seed, task_id, self.mode, seed)
        kind = self.kind
        if explicit and kind is None:
            kind = DEFAULT_EXPLICIT_DRAW[salt % len(DEFAULT_EXPLICIT_DRAW)]
        label, members = self.victims()
        group = label if members else None
        profile = PerturbationProfile(
            mode=self.mode,  # type: ignore[arg-type]
            victim=members[0] if members else label,
            group=group,
            kind=kind if explicit else "implicit",
            field=None if explicit else self.field,
        )
        return EpisodeFaults(
            Perturber(profile, group_tools=members, salt=salt),
            salt=salt,
            field=self.field,
            deliver=self.deliver,
            aim={k: tuple(v) for k, v in self.aim.items()},
        )


@dataclass
class EpisodeFaults:
    """The faults of one episode: the engine's :class:`Perturber` plus output corruption."""

    perturber: Perturber
    salt: int
    field: str | None = None
    deliver: Deliver = "raise"
    aim: Mapping[str, Sequence[str]] = dataclasses.field(default_factory=dict)
    _specs: dict[str, ToolSpec] = dataclasses.field(default_factory=dict, repr=False)

    @property
    def profile(self) -> PerturbationProfile:
        return self.perturber.profile

    @property
    def group_tools(self) -> list[str]:
        return sorted(self.perturber.group_tools)

    def intercept(self, tool: str, args: Mapping[str, Any]) -> Perturbation | None:
        """The perturbation this (valid) call meets, or ``None`` (not thread-safe: lock it)."""
        spec = self._specs.get(tool)
        if spec is None:
            spec = self._specs[tool] = ToolSpec(name=tool)
        fault = self.perturber.intercept(spec, args)
        return None if fault is None else fault.perturbation

    def corrupt(self, output: Any, tool: str | None = None) -> Corruption | None:
        """The implicit corruption of ``tool``'s ``output`` (``None`` when nothing can be
        corrupted): the named field, else what a clean run consumed, else the first field."""
        targets = self.aim.get(tool, ()) if tool is not None else ()
        return corrupt_output(output, self.salt, field=self.field, targets=targets)


__all__ = [
    "ANY_TOOL",
    "DEFAULT_EXPLICIT_DRAW",
    "INPLACE_EXPLICIT_KINDS",
    "Corruption",
    "EpisodeFaults",
    "FaultSchedule",
    "ImplicitSpec",
    "InjectedFault",
    "InjectedTimeout",
    "InjectedToolError",
    "corrupt_output",
    "explicit_fault_observation",
    "fault_exception",
    "inline_refs",
]
