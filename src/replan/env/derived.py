"""What an agent consumes, and how a corrupted value is recognised after it was transformed.

Three things that the implicit faults (P3/P4) on your own tools and their scorers share:

**Output paths** (:func:`resolve_paths`), the syntax of ``field=`` and of the paths recorded
for each corruption:

- ``a.b.c`` — nested keys; a number indexes a list: ``0.price``, ``rows.2.price``;
- ``[*]`` or ``*`` — every element of a list (every value of an object): ``rows[*].price``,
  ``*.price``; ``[2]`` is the same as ``.2``;
- a bare name with no dot (``scheduled_departure``) — that key wherever it occurs: at the top
  level, in every row of a list of rows, at any depth.

**Consumption** (:func:`consumed_outputs`): which values of a call's clean output the run went on
to use — a value (a number that is not a small integer, a date, a string of 3+ characters with a
letter or digit) that later appears, exactly or normalised (numbers by value, text
case-insensitively as a whole value, a timestamp also by its date), in a later call's arguments or
in the final answer, and that is neither in the question nor an echo of the call's own
arguments. The paths found in a clean run of the same task are what a consumption-aimed fault
corrupts (list indices generalised to ``*``; for plain-text outputs the token itself,
``text:<token>``).

**Derived forms** (:func:`recognise`): each corruption kind says how its value is recognised after
a transformation, so propagation is found even when the agent did not copy the value verbatim:

===================  ==================================================================
kind                 recognised as
===================  ==================================================================
any                  the corrupted value itself, as a whole value (numbers in any format)
date_decades_away    any date (ISO, ``12/04/2087``, ``Dec 4, 2087``, ``4 December 2087``)
                     or a bare year within a year of the corrupted year, decades (>= 30
                     years) away from the clean one: shifting a date by days or
                     reformatting it keeps it decades away
value_x1000          a number within 5x of the corrupted value and >= 30x the clean one
                     (a conversion, a sum, rounding keep the magnitude)
negative_value       a negative number within 5x of the corrupted value (the sign stays)
value_swapped        the 5-character tag appended to the value, as a whole token in any
                     case (an id copied into a URL, a sentence, upper-cased)
===================  ==================================================================

A number counts as a derived form only when nothing clean explains it (``explained``: numbers
in the question, in the clean tool outputs the run saw, in the clean run's arguments and answer).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replan.core import linre
from replan.core.leaves import json_leaves
from replan.core.trace import Step
from replan.env.checker import mentions

Path = tuple[str, ...]


# -- output paths ----------------------------------------------------------------------------------
class PathError(ValueError):
    """A field path that cannot be parsed."""


_SEGMENT = linre.compile(r"\[(\*|\d+)\]")


def parse_path(pattern: str) -> list[str]:
    """``rows[*].x`` -> ``["rows", "*", "x"]``; ``0.x`` -> ``["0", "x"]``."""
    text = _SEGMENT.sub(lambda m: "." + m.group(1), pattern.strip()).lstrip(".")
    parts = text.split(".")
    if not text or any(p == "" for p in parts):
        raise PathError(f"field path {pattern!r} is empty or has an empty segment")
    return parts


def _children(value: Any) -> Iterable[tuple[str, Any]]:
    if isinstance(value, Mapping):
        return ((str(k), v) for k, v in value.items())
    if isinstance(value, list):
        return ((str(i), v) for i, v in enumerate(value))
    return ()


def _walk(value: Any, parts: Sequence[str], at: Path) -> Iterable[Path]:
    if not parts:
        if not isinstance(value, (Mapping, list)):
            yield at
        return
    head, rest = parts[0], parts[1:]
    if head == "*":
        for k, v in _children(value):
            yield from _walk(v, rest, (*at, k))
    elif isinstance(value, Mapping) and head in value:
        yield from _walk(value[head], rest, (*at, head))
    elif isinstance(value, list) and head.isdigit() and int(head) < len(value):
        yield from _walk(value[int(head)], rest, (*at, head))


def _anywhere(value: Any, key: str, at: Path = ()) -> Iterable[Path]:
    for k, v in _children(value):
        here = (*at, k)
        if k == key and isinstance(value, Mapping) and not isinstance(v, (Mapping, list)):
            yield here
        else:
            yield from _anywhere(v, key, here)


def resolve_paths(output: Any, pattern: str) -> list[Path]:
    """The concrete paths of the scalar leaves ``pattern`` names in ``output`` (see the module
    docstring); empty when it names none."""
    parts = parse_path(pattern)
    found = list(_walk(output, parts, ()))
    if not found and len(parts) == 1 and parts[0] != "*":
        found = list(_anywhere(output, parts[0]))
    return found


def generalise(path: Path) -> str:
    """A concrete path with its list indices replaced by ``*`` (``rows.2.x`` -> ``rows.*.x``)."""
    return ".".join("*" if p.isdigit() else p for p in path)


# -- values as they appear in text -----------------------------------------------------------------
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    )
}
_ISO = linre.compile(r"(\d{4})-(\d{2})-(\d{2})", not_after=r"\d")
_SLASH = linre.compile(r"(\d{1,2})[/.](\d{1,2})[/.](\d{4})", not_after=r"\d", followed_by=r"\D|$")
_MONTH_FIRST = linre.compile(r"\b([A-Za-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b")
_DAY_FIRST = linre.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]{3,9})\.?,?\s+(\d{4})\b")
_YEAR = linre.compile(r"(\d{4})", not_after=r"\d.,:-", followed_by=r"\D|$")
_NUM = linre.compile(r"-?\d[\d,]*(?:\.\d+)?", not_after=r"\w.", followed_by=r"\W|$")


def years_in(text: str) -> list[int]:
    """The years of every date written in ``text`` (ISO, d/m/y, 'Dec 4, 2087', '4 December
    2087'), and of bare four-digit years."""
    out: list[int] = []
    for m in _ISO.finditer(text):
        out.append(int(m.group(1)))
    for m in _SLASH.finditer(text):
        out.append(int(m.group(3)))
    for m in _MONTH_FIRST.finditer(text):
        if m.group(1)[:3].lower() in _MONTHS:
            out.append(int(m.group(3)))
    for m in _DAY_FIRST.finditer(text):
        if m.group(2)[:3].lower() in _MONTHS:
            out.append(int(m.group(3)))
    for m in _YEAR.finditer(text):
        out.append(int(m.group(1)))
    return out


def numbers_in(value: Any) -> list[float]:
    """Every number in ``value``: numeric leaves and numbers written in its strings (dates'
    parts excluded: ``2087-12-04`` is a date, not three numbers)."""
    out: list[float] = []
    for _, leaf in json_leaves(value):
        if isinstance(leaf, bool):
            continue
        if isinstance(leaf, (int, float)):
            out.append(float(leaf))
        elif isinstance(leaf, str):
            text = _ISO.sub(" ", leaf)
            text = linre.sub(r"\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[+-]\d{2}:?\d{2})?", " ", text)
            for m in _NUM.finditer(text):
                try:
                    out.append(float(m.group().replace(",", "")))
                except ValueError:
                    continue
    return out


def _texts(value: Any) -> list[str]:
    return [leaf for _, leaf in json_leaves(value) if isinstance(leaf, str)]


# -- derived forms --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Corrupted:
    """One corrupted value: its kind, the value written (the sentinel) and the clean one."""

    kind: str
    sentinel: Any
    original: Any = None
    field: str | None = None

    @classmethod
    def from_any(cls, data: Any) -> Corrupted:
        if isinstance(data, Corrupted):
            return data
        return cls(
            kind=str(data.get("kind", "")),
            sentinel=data.get("sentinel"),
            original=data.get("original"),
            field=data.get("field"),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "kind": self.kind,
            "original": self.original,
            "sentinel": self.sentinel,
        }


def _year(value: Any) -> int | None:
    if isinstance(value, str):
        m = _ISO.match(value.strip())
        if m:
            return int(m.group(1))
    return None


def swap_tag(sentinel: Any, original: Any) -> str | None:
    """The tag a ``value_swapped`` corruption appended (``16:37-KEACH`` -> ``KEACH``)."""
    if not isinstance(sentinel, str):
        return None
    if isinstance(original, str) and original and sentinel.startswith(original + "-"):
        return sentinel[len(original) + 1 :]
    if isinstance(original, str) and not original:
        return sentinel
    return None


def _whole_token(text: str, token: str) -> bool:
    for m in linre.finditer(linre.escape(token), text, flags=linre.IGNORECASE):
        before = text[m.start() - 1] if m.start() else " "
        after = text[m.end()] if m.end() < len(text) else " "
        if not before.isalnum() and not after.isalnum():
            return True
    return False


def _year_like(n: float) -> bool:
    return float(n).is_integer() and 1900 <= n <= 2100


def _is_explained(n: float, explained: Iterable[float]) -> bool:
    return any(math.isclose(n, e, rel_tol=1e-6, abs_tol=1e-6) for e in explained)


def recognise(
    c: Corrupted,
    value: Any,
    explained: Sequence[float] = (),
    clean_numbers: Sequence[float] = (),
) -> str | None:
    """How ``value`` (an argument, a leaf, an answer) carries the corrupted value ``c``, or
    ``None`` (forms in the module docstring). The exact value is found for every kind; the
    derived forms need the clean value (``c.original``). ``clean_numbers`` (the numbers of the
    clean run's arguments and answer) also find a scaled value after a unit conversion: a
    number about 1000x (value_x1000) or -1000x (negative_value) one of them."""
    s = c.sentinel
    if s is None or isinstance(s, bool):
        return None
    for _, leaf in json_leaves(value):
        if isinstance(leaf, bool):
            continue
        if isinstance(s, (int, float)) and isinstance(leaf, (int, float)):
            if math.isclose(float(leaf), float(s), rel_tol=1e-9):
                return f"exact ({leaf})"
        elif (isinstance(leaf, str) and mentions(leaf, s)) or leaf == s:
            return f"exact ({s})"
    if c.original is None:
        return None
    if c.kind == "date_decades_away":
        y_bad, y_clean = _year(s), _year(c.original)
        if y_bad is None or y_clean is None:
            return None
        for text in _texts(value):
            for y in years_in(text):
                if abs(y - y_bad) <= 1 and abs(y - y_clean) >= 30:
                    return f"a date in {y}, decades from the clean {y_clean}"
        return None
    if c.kind == "value_swapped":
        tag = swap_tag(s, c.original)
        if tag and len(tag) >= 4:
            for text in _texts(value):
                if _whole_token(text, tag):
                    return f"the corruption's tag {tag!r}"
        return None
    if c.kind in ("value_x1000", "negative_value") and isinstance(s, (int, float)):
        clean = abs(float(c.original)) if isinstance(c.original, (int, float)) else 0.0
        for n in numbers_in(value):
            if n == 0 or _is_explained(n, explained):
                continue
            if _year_like(n):
                continue  # a year, not an amount

            ratio = n / float(s)
            if not 0.2 <= ratio <= 5:  # also demands the same sign as the corrupted value
                continue
            if c.kind == "value_x1000" and abs(n) < 30 * max(clean, 1e-9):
                continue
            what = "negative, " if c.kind == "negative_value" else ""
            return f"{n:g}: {what}the corrupted value's magnitude ({s:g}), not the clean {clean:g}"
        sign = -1.0 if c.kind == "negative_value" else 1.0
        for n in numbers_in(value):
            if n == 0 or _is_explained(n, explained) or _year_like(n):
                continue
            for m in clean_numbers:
                if float(m).is_integer() and abs(m) < 10:
                    continue  # a count or a limit says nothing about scale
                if m and 300 <= sign * n / m <= 3000:
                    return f"{n:g}: about {sign * 1000:g}x the clean run's {m:g}"
    return None


def corrupted_of(step: Step) -> list[Corrupted]:
    """The corrupted values a step's perturbation wrote (its own list, else its sentinel)."""
    p = step.perturbation
    if p is None or p.explicit:
        return []
    listed = getattr(p, "corrupted", None) or []
    if listed:
        return [Corrupted.from_any(d) for d in listed]
    if p.sentinel is None:
        return []
    return [Corrupted(kind=p.kind, sentinel=p.sentinel)]


def explained_numbers(
    steps: Sequence[Step], question: str | None, extra: Any = None
) -> list[float]:
    """Numbers clean data explains: in the question, in every clean output the run saw and in
    ``extra`` (e.g. the clean run's arguments and answer)."""
    out = numbers_in(question or "")
    for s in steps:
        if s.perturbation is None and s.verdict.ok:
            out += numbers_in(s.observation)
    if extra is not None:
        out += numbers_in(extra)
    return out


# -- consumption -----------------------------------------------------------------------------------
def _distinctive(value: Any) -> bool:
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return not (float(value).is_integer() and abs(value) < 10)
    if isinstance(value, str):
        v = value.strip()
        return len(v) >= 3 and any(ch.isalnum() for ch in v)
    return False


def _date_forms(value: str) -> list[str]:
    m = _ISO.match(value.strip())
    if not m or len(value.strip()) <= 10:
        return [value]
    return [value, value.strip()[:10]]


def _same_number(a: float, b: float) -> bool:
    """``a`` is ``b``, or ``b`` rounded (to 0-2 decimals; only for ``|b|`` >= 10, where a
    rounded copy is telling)."""
    if math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9):
        return True
    return abs(b) >= 10 and any(math.isclose(a, round(b, k)) for k in (0, 1, 2))


def _appears(value: Any, haystacks: Sequence[Any]) -> bool:
    forms: list[Any] = _date_forms(value) if isinstance(value, str) else [value]
    for h in haystacks:
        for _, leaf in json_leaves(h):
            if isinstance(leaf, bool) or leaf is None:
                continue
            for f in forms:
                if isinstance(f, (int, float)):
                    if isinstance(leaf, (int, float)) and _same_number(float(leaf), float(f)):
                        return True
                    if isinstance(leaf, str) and any(
                        _same_number(n, float(f)) for n in numbers_in(leaf)
                    ):
                        return True
                elif isinstance(leaf, str) and mentions(leaf, f):
                    return True
    return False


_NUM_TOKEN = linre.compile(r"-?\d+(?:\.\d+)?", not_after=r"\w.", followed_by=r"$|[^\w.]|\.(?:$|\D)")
_WORD = linre.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def text_tokens(text: str) -> list[str]:
    """The value-like tokens of a plain-text output: ISO dates, numbers (as written) and words
    of 3+ characters."""
    out = [m.group() for m in _ISO.finditer(text)]
    rest = _ISO.sub(" ", text)
    out += [m.group() for m in _NUM_TOKEN.finditer(rest)]
    out += [m.group() for m in _WORD.finditer(rest)]
    return list(dict.fromkeys(out))


#: how many items of each list in an output the consumption analysis reads (a long result list
#: would otherwise dominate; what the agent uses is almost always near the top)
ROWS_SCANNED = 50


def _text_of(observation: Any) -> str | None:
    if isinstance(observation, Mapping) and set(observation) == {"text", "values"}:
        text = observation.get("text")
        return text if isinstance(text, str) else None
    return None


def consumed_outputs(
    steps: Sequence[Step], answer: str | None, question: str | None = None
) -> dict[str, list[str]]:
    """Per tool, the output paths whose clean values the run went on to use (module docstring),
    most telling first (numbers, dates, then strings; then in the order they were used)."""
    out: dict[str, list[tuple[tuple[int, int], str]]] = {}
    q = question or ""
    for i, s in enumerate(steps):
        if s.perturbation is not None or not s.verdict.ok:
            continue
        later = [t.call.args for t in steps[i + 1 :]] + ([answer] if answer else [])
        if not later:
            continue
        echoed = [s.call.args]
        text = _text_of(s.observation)
        if text is not None:
            items = [(f"text:{tok}", tok) for tok in text_tokens(text)]
        else:
            items = [
                (generalise(p), v) for p, v in json_leaves(s.observation, max_items=ROWS_SCANNED)
            ]
        for order, (pattern, value) in enumerate(items):
            if not _distinctive(value) or _appears(value, echoed) or mentions(q, value):
                continue
            if isinstance(value, str) and text is not None:
                num = value.replace(",", "")
                with contextlib.suppress(ValueError):
                    value = float(num) if "." in num else int(num)
                if not _distinctive(value):
                    continue
            if not _appears(value, later):
                continue
            if isinstance(value, (int, float)):
                rank = 0
            elif isinstance(value, str) and _ISO.match(value):
                rank = 1
            else:
                rank = 2
            got = out.setdefault(s.call.tool, [])
            if all(p != pattern for _, p in got):
                got.append(((rank, order), pattern))
    return {tool: [p for _, p in sorted(v)] for tool, v in out.items()}


def downstream_tools(steps: Sequence[Step], answer: str | None = None) -> dict[str, list[str]]:
    """Per tool, the tools whose calls used one of its clean output values (directly or
    through another such tool): the calls that depend on it."""
    direct: dict[str, set[str]] = {}
    for i, s in enumerate(steps):
        if s.perturbation is not None or not s.verdict.ok:
            continue
        text = _text_of(s.observation)
        values = (
            text_tokens(text)
            if text is not None
            else [v for _, v in json_leaves(s.observation, max_items=ROWS_SCANNED)]
        )
        values = [v for v in values if _distinctive(v) and not _appears(v, [s.call.args])]
        for t in steps[i + 1 :]:
            if t.call.tool != s.call.tool and any(_appears(v, [t.call.args]) for v in values):
                direct.setdefault(s.call.tool, set()).add(t.call.tool)
    out: dict[str, list[str]] = {}
    for tool in direct:
        seen: set[str] = set()
        todo = list(direct[tool])
        while todo:
            t = todo.pop()
            if t in seen or t == tool:
                continue
            seen.add(t)
            todo.extend(direct.get(t, ()))
        out[tool] = sorted(seen)
    return out


__all__ = [
    "Corrupted",
    "PathError",
    "consumed_outputs",
    "corrupted_of",
    "downstream_tools",
    "explained_numbers",
    "generalise",
    "numbers_in",
    "parse_path",
    "recognise",
    "resolve_paths",
    "swap_tag",
    "text_tokens",
    "years_in",
]
