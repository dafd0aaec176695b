"""How the simulated agent reads a tool result: usable, rejected call, failure, or implausible.

The agent sees only what a real agent sees: the observation text. A rejected call carries the
world's verdict code (``{"error": "missing_param", ...}``); an explicit fault is any other
error or HTTP-like status, a timeout, or an empty result; an *implicit* fault is a well-formed
result whose values fail a plausibility check (a negative stock or price, a price over
100,000, a number a thousand times larger than the same quantity seen before, a date decades
away from the dates of the request). Whether the agent *notices* is the profile's business;
this module only says what a careful reader could see.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from replan.core import linre
from replan.core.leaves import json_leaves
from replan.core.taxonomy import VerdictCode
from replan.core.tools import ToolSpec

AGENT_ERROR_CODES: frozenset[str] = frozenset(c.value for c in VerdictCode if c.is_agent_error)


class ObsKind(StrEnum):
    OK = "ok"
    INVALID = "invalid"  # the world rejected the call: the agent's own mistake
    EXPLICIT = "explicit"  # an error the tool reported (404, 429, 503, timeout, empty)
    IMPLICIT = "implicit"  # well formed, but a value is implausible


@dataclass(frozen=True)
class Reading:
    kind: ObsKind
    reason: str = ""
    code: str | None = None  # the verdict code of a rejected call


_FAIL_WORDS = linre.compile(
    r"\b(error|failed|failure|timed? ?out|timeout|unavailable|not found|too many requests|"
    r"internal server error|service unavailable|bad gateway|exception)\b",
    linre.I,
)
_FAIL_STATUS = {"error", "failed", "failure", "timeout", "unavailable", "not_found"}


def parse_observation(content: Any) -> Any:
    """A ToolMessage content back into the value the tool returned (JSON when it is JSON)."""
    if isinstance(content, list):  # content blocks
        content = "".join(b.get("text", "") if isinstance(b, Mapping) else str(b) for b in content)
    if isinstance(content, str):
        text = content.strip()
        if not text:
            return None
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return content
    return content


def _is_empty(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, (str, list, dict)) and not value:
        return True
    if isinstance(value, Mapping):
        return all(
            v is None or (isinstance(v, (str, list, dict)) and not v) for v in value.values()
        )
    return False


def _status_failure(value: Mapping[str, Any]) -> str | None:
    for key in ("status", "status_code", "code", "http_status"):
        v = value.get(key)
        if isinstance(v, int) and not isinstance(v, bool) and v >= 400:
            return f"{key} {v}"
        if isinstance(v, str):
            low = v.strip().lower()
            if low.isdigit() and int(low) >= 400:
                return f"{key} {low}"
            if low in _FAIL_STATUS:
                return f"{key} {low}"
    return None


def read_observation(
    value: Any, spec: ToolSpec | None = None, context: PlausibilityContext | None = None
) -> Reading:
    """Classify one observation (already parsed with :func:`parse_observation`)."""
    if isinstance(value, str):
        if _FAIL_WORDS.search(value):
            return Reading(ObsKind.EXPLICIT, f"the tool answered {value[:80]!r}")
        return Reading(ObsKind.OK)
    if _is_empty(value):
        return Reading(ObsKind.EXPLICIT, "the tool returned an empty result")
    if isinstance(value, Mapping):
        err = value.get("error")
        if err not in (None, False, ""):
            code = err if isinstance(err, str) else None
            if code in AGENT_ERROR_CODES:
                return Reading(ObsKind.INVALID, str(value.get("message") or code), code=code)
            detail = value.get("message") or value.get("detail") or err
            return Reading(ObsKind.EXPLICIT, f"the tool failed: {detail}")
        status = _status_failure(value)
        if status is not None:
            return Reading(ObsKind.EXPLICIT, f"the tool failed ({status})")
    why = implausible(value, spec, context)
    if why:
        return Reading(ObsKind.IMPLICIT, why)
    return Reading(ObsKind.OK)


# -- plausibility -----------------------------------------------------------------------------
_NONNEG = frozenset(
    [
        "price",
        "fare",
        "cost",
        "fee",
        "stock",
        "quantity",
        "qty",
        "count",
        "charged",
        "inventory",
        "unit",
        "seat",
        "room",
        "population",
        "age",
        "weight",
        "distance",
        "duration",
        "subtotal",
        "tax",
    ]
)
#: words that make a negative value legitimate (a balance, a difference, an open bound)
_SIGNED = frozenset(
    [
        "remaining",
        "balance",
        "net",
        "change",
        "delta",
        "diff",
        "difference",
        "profit",
        "gain",
        "loss",
        "pnl",
        "offset",
        "adjustment",
        "to",
        "from",
        "min",
        "max",
        "lat",
        "lon",
        "lng",
    ]
)
#: unit prices: a flight, a night, an item (totals, budgets and market values may be large)
_MONEY = frozenset(["price", "fare", "nightly"])
_TEMP = frozenset(["temp", "temperature", "celsius", "fahrenheit"])
_PERCENT = frozenset(["percent", "pct", "humidity", "probability", "chance"])


@functools.lru_cache(maxsize=8192)
def _words(label: str) -> tuple[str, ...]:
    """The words of ``label`` (split at ``_``, ``-``, spaces, camelCase), each also without a
    plural ``s``; labels repeat on every observation read, so they are split once."""
    label = linre.sub(r"([a-z])([A-Z])", r"\1_\2", label).lower()
    toks = [t for t in linre.split(r"[^a-z0-9]+", label) if t]
    return tuple(dict.fromkeys(x for t in toks for x in (t, t.rstrip("s"))))


def _has(label: str, words: frozenset[str]) -> bool:
    """Whether a word of ``label`` (split at ``_``, ``-``, spaces, camelCase) is in ``words``."""
    return any(t in words for t in _words(label))


_COUNT = frozenset(
    [
        "stops",
        "passengers",
        "guests",
        "nights",
        "rooms",
        "seats",
        "floors",
        "adults",
        "children",
        "legs",
        "bedrooms",
    ]
)
_LAT = frozenset(["lat", "latitude"])
_LON = frozenset(["lon", "lng", "long", "longitude"])
_ID = frozenset(["id", "ids", "code", "ref", "reference", "number", "pnr", "sku"])
_DATE = linre.compile(r"\b(\d{4})-(\d{2})-(\d{2})")
_YEAR_SPAN = 10
_MONEY_CAP = 50_000.0
#: field names too generic to compare across tools (an amount in yen next to one in euros)
_GENERIC = frozenset(["amount", "value", "total", "result", "count", "n", "id"])
_COUNT_CAP = 100
_JUMP = 1000.0


def _shape(text: str) -> tuple[str, ...]:
    """The form of an identifier: how many ``-`` separated segments, and its letter prefix.

    Coarse on purpose: the characters of a generated id vary (``FQ-5187DF4A``, ``FQ-12345678``),
    its segments and prefix do not.
    """
    segs = text.split("-")
    return (str(len(segs)), segs[0] if segs[0].isalpha() else "*")


def _is_id(label: str, value: Any) -> bool:
    return isinstance(value, str) and 0 < len(value) <= 64 and " " not in value and _has(label, _ID)


@dataclass
class PlausibilityContext:
    """What a careful agent compares a result with: the request and earlier results.

    ``years``: years of the dates in the request and the call; ``seen``: positive numbers seen
    before, by field name; ``shapes``: forms of identifiers seen before, by kind or field name.
    """

    years: tuple[int, ...] = ()
    seen: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    shapes: Mapping[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        texts: Iterable[Any],
        earlier: Iterable[tuple[ToolSpec | None, Any]] = (),
        parts: dict[tuple[int, int], Any] | None = None,
    ) -> PlausibilityContext:
        """The context of ``texts`` (the request, the call) and ``earlier`` results. ``parts``
        keeps what each earlier result adds, by identity, for the next context built in the
        same request: a ReAct request replays its conversation and compares each result with
        all those before it, so the same results were walked again for every later one."""
        years: set[int] = set()
        for t in texts:
            years |= {int(m.group(1)) for m in _DATE.finditer(_text(t))}
        seen: dict[str, list[float]] = {}
        shapes: dict[str, list[tuple[str, ...]]] = {}
        for spec, value in earlier:
            hit = parts.get((id(spec), id(value))) if parts is not None else None
            if hit is None or hit[0] is not spec or hit[1] is not value:
                hit = (spec, value, *_plausibility_part(spec, value))
                if parts is not None:  # holds ``spec`` and ``value``: no id is reused
                    parts[(id(spec), id(value))] = hit
            for name, x in hit[2]:
                seen.setdefault(name, []).append(x)
            for key, shape in hit[3]:
                shapes.setdefault(key, []).append(shape)
        return cls(
            years=tuple(sorted(years)),
            seen={k: tuple(v) for k, v in seen.items()},
            shapes={k: tuple(v) for k, v in shapes.items()},
        )


def _plausibility_part(
    spec: ToolSpec | None, value: Any
) -> tuple[list[tuple[str, float]], list[tuple[str, tuple[str, ...]]]]:
    """What one earlier result adds to a context: its positive numbers by field name, and the
    forms of its identifiers by kind or field name, in document order."""
    numbers: list[tuple[str, float]] = []
    shapes: list[tuple[str, tuple[str, ...]]] = []
    for path, leaf in json_leaves(value):
        if _is_number(leaf) and leaf > 0:
            numbers.append((_field(path), float(leaf)))
        key = _id_key(spec, path)
        if _is_id(f"{_field(path)} {key}", leaf):
            shapes.append((key, _shape(leaf)))
    return numbers, shapes


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@functools.lru_cache(maxsize=8192)
def _field(path: tuple[str, ...]) -> str:
    """The last field name of ``path`` (array indices skipped); paths repeat on every
    observation read, so each is looked at once."""
    names = [p for p in path if not p.isdigit()]
    return names[-1] if names else ""


def _kind_at(spec: ToolSpec | None, path: tuple[str, ...]) -> str:
    return spec.output_field_kind(path) if spec is not None else ""


def _id_key(spec: ToolSpec | None, path: tuple[str, ...]) -> str:
    """Identifiers are compared by semantic kind when known, else by field name."""
    return _kind_at(spec, path) or _field(path)


def implausible(
    value: Any, spec: ToolSpec | None = None, context: PlausibilityContext | None = None
) -> str | None:
    """Why ``value`` looks wrong to a careful reader, or ``None`` when it looks plausible.

    The checks: a negative price, count or stock; a unit price over 50,000; a count over 100;
    an impossible temperature, percentage, latitude or longitude; a number a thousand times the same field seen
    before; a date more than ten years from the dates of the request; an identifier whose form
    differs from every other identifier of its kind (``FL-LISKIX-20261203-1-K3ZQ7`` among
    ``FL-LISKIX-20261203-1``, ``FL-LISKIX-20261203-2``).
    """
    ctx = context or PlausibilityContext()
    leaves = list(json_leaves(value))
    local: dict[str, list[tuple[str, ...]]] = {}
    for path, leaf in leaves:
        key = _id_key(spec, path)
        if _is_id(f"{_field(path)} {key}", leaf):
            local.setdefault(key, []).append(_shape(leaf))
    for path, leaf in leaves:
        name = _field(path)
        kind = _kind_at(spec, path)
        label = f"{name} {kind}"
        where = ".".join(path) or "result"
        if _is_number(leaf):
            x = float(leaf)
            if x < 0 and _has(label, _NONNEG | _COUNT) and not _has(label, _TEMP | _SIGNED):
                return f"{where} is negative ({leaf}), which cannot be right"
            if _has(label, _MONEY) and x > _MONEY_CAP:
                return f"{where} = {leaf} is an implausibly large amount"
            if _has(label, _COUNT) and x > _COUNT_CAP:
                return f"{where} = {leaf} is an implausible count"
            if _has(label, _TEMP) and not -100 <= x <= 150:
                return f"{where} = {leaf} is not a possible temperature"
            if _has(label, _PERCENT) and not -100 <= x <= 100:
                return f"{where} = {leaf} is not a percentage"
            if _has(name, _LAT) and not -90 <= x <= 90:
                return f"{where} = {leaf} is not a latitude"
            if _has(name, _LON) and not -180 <= x <= 180:
                return f"{where} = {leaf} is not a longitude"
            ref = ctx.seen.get(name) if name.lower() not in _GENERIC else None
            if ref and x > 0:
                typical = sorted(ref)[len(ref) // 2]
                if typical > 0 and x >= _JUMP * typical:
                    return f"{where} = {leaf} is about {x / typical:.0f}x the {name} seen before"
        elif isinstance(leaf, str):
            if ctx.years and "-" in leaf:  # no date without one: skip the regex
                for m in _DATE.finditer(leaf):
                    year = int(m.group(1))
                    if year < min(ctx.years) - _YEAR_SPAN or year > max(ctx.years) + _YEAR_SPAN:
                        return f"{where} = {leaf} is decades away from the dates of the request"
            key = kind or name
            if _is_id(f"{name} {key}", leaf):
                own = _shape(leaf)
                others = list(ctx.shapes.get(key, ())) + list(local.get(key, ()))
                others.remove(own) if own in others else None
                if others and own not in others and len(set(others)) == 1:
                    return f"{where} = {leaf} does not look like the other {key} values"
    return None


__all__ = [
    "AGENT_ERROR_CODES",
    "ObsKind",
    "PlausibilityContext",
    "Reading",
    "implausible",
    "parse_observation",
    "read_observation",
]
