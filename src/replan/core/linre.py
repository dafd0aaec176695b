"""Regular expressions that run in linear time: the only regex engine replan uses.

Model replies, dataset lines, tool outputs and user input are untrusted text, and Python's
``re`` backtracks: a pattern as plain as ``time\\s*-?\\s*out`` takes quadratic time on
``"time" + " " * n``, holding the GIL all the while (an 80 s stall on one 16 KB argument froze
a whole run, its progress line and Ctrl-C included). This module compiles every pattern with
RE2 (the ``google-re2`` binding), whose matching time is linear in the text's length whatever
the pattern, behind the part of ``re``'s API that replan uses (``compile``, ``search``,
``match``, ``fullmatch``, ``finditer``, ``findall``, ``sub``, ``subn``, ``split``, ``escape``
and the ``I``/``M``/``S`` flags), with ``re``'s results. ``tests/core/test_linre.py`` checks
that nothing in ``src/`` imports ``re`` and that every pattern stays linear.

Differences from ``re``, by design of a linear-time engine:

- no look-around and no back-references in a pattern: such a pattern raises :class:`error`
  when compiled; the two look-arounds replan needs are options of :func:`compile` (the one
  character before a match, what follows it);
- ``\\b`` and ``\\B`` are ASCII word boundaries; ``$`` without ``M`` matches only at the very end
  (``re``'s ``$`` also matches before a final newline).

``\\d``, ``\\w`` and ``\\s`` keep ``re``'s Unicode meaning (they are rewritten into RE2's
Unicode classes), and positions are character offsets, as in ``re``.
"""

from __future__ import annotations

import re as _re
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

import re2 as _re2mod
from re2 import _re2

I = IGNORECASE = _re.IGNORECASE  # noqa: E741 - the name ``re`` gives it
M = MULTILINE = _re.MULTILINE
S = DOTALL = _re.DOTALL
A = ASCII = _re.ASCII
_SUPPORTED_FLAGS = I | M | S | A | _re.UNICODE


class error(ValueError):  # named like ``re.error``
    """A pattern this engine cannot compile (invalid, or look-around / back-reference)."""


#: RE2's memory budget per compiled pattern (its default is 8 MiB): the program and the lazily
#: built DFA states it caches. A run compiles hundreds of patterns from task data (a stated
#: value, a tool's phrase: about 700 in 1,000 episodes, kept by :func:`compile`'s cache), and
#: with the default budget their DFA caches grew a run process by about 0.1 MB per episode
#: (issue 32 §5: 230 -> 325 MB RSS from 100 to 1,000 episodes; 179 -> 219 MB with 1 MiB).
#: With 1 MiB the 256 patterns kept still held 25 MB of a worker's RSS after 400
#: ``toolmaze-guided`` episodes; with 256 kB, 8 MB (and the same CPU per episode; 128 kB cost
#: CPU). The largest program a run compiled is 4,246 instructions, well inside 256 kB.
#: Matching stays linear when a cache fills: RE2 clears it, or falls back to its NFA.
MAX_MEM = 1 << 18
_UNANCHORED = _re2.RE2.Anchor.UNANCHORED
_ANCHOR_START = _re2.RE2.Anchor.ANCHOR_START
_ANCHOR_BOTH = _re2.RE2.Anchor.ANCHOR_BOTH
_NO_SPAN = (-1, -1)


#: the characters ``re``'s ``\\s`` matches (``str.isspace``), as RE2 class items
_SPACE = (
    r"\x{9}-\x{d}\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}"
    r"\x{205f}\x{3000}"
)
_WORD = r"\p{L}\p{N}_"
_DIGIT = r"\p{Nd}"
#: ``re`` class escapes outside a character class, with their RE2 Unicode equivalent
_OUTSIDE = {
    "d": _DIGIT,
    "D": r"\P{Nd}",
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "s": f"[{_SPACE}]",
    "S": f"[^{_SPACE}]",
    "Z": r"\z",
}
#: the same inside a character class (a negated class cannot nest there)
_INSIDE = {"d": _DIGIT, "D": r"\P{Nd}", "w": _WORD, "s": _SPACE}


def translate(pattern: str, unicode: bool = True) -> str:
    """``pattern`` in RE2's syntax with ``re``'s meaning: Unicode ``\\d``/``\\w``/``\\s``,
    ``\\Z`` as ``\\z``, ``\\uXXXX`` as ``\\x{XXXX}``, an escaped non-ASCII character as itself."""
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            i += 2
            if e in "uU":
                width = 4 if e == "u" else 8
                digits = pattern[i : i + width]
                if len(digits) != width or not all(ch in "0123456789abcdefABCDEF" for ch in digits):
                    raise error(f"bad \\{e} escape in {pattern!r}")
                out.append(f"\\x{{{digits}}}")
                i += width
            elif not e.isascii():
                out.append(e)
            elif unicode and not in_class and e in _OUTSIDE:
                out.append(_OUTSIDE[e])
            elif unicode and in_class and e in _INSIDE:
                out.append(_INSIDE[e])
            elif unicode and in_class and e in "WS":
                raise error(f"\\{e} inside a character class is not supported: {pattern!r}")
            elif e == "Z":
                out.append(r"\z")
            else:
                out.append("\\" + e)
            continue
        out.append(c)
        i += 1
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":  # a "]" first in a class is a literal
                out.append("\\]")
                i += 1
    return "".join(out)


class Match:
    """One match, as ``re.Match``: ``group``, ``groups``, ``groupdict``, ``start``/``end``/``span``,
    ``m[i]``, ``expand``, ``string``, ``re``, ``pos``, ``endpos``, ``lastindex``."""

    __slots__ = ("_spans", "endpos", "pos", "re", "string")

    def __init__(
        self, pattern: Pattern, string: str, pos: int, endpos: int, spans: list[tuple[int, int]]
    ):
        self.re = pattern
        self.string = string
        self.pos = pos
        self.endpos = endpos
        self._spans = spans

    def _index(self, group: int | str) -> int:
        if isinstance(group, str):
            try:
                return self.re.groupindex[group]
            except KeyError:
                raise IndexError(f"no such group: {group!r}") from None
        if not 0 <= group <= self.re.groups:
            raise IndexError("no such group")
        return group

    def span(self, group: int | str = 0) -> tuple[int, int]:
        """(start, end) of ``group``; (-1, -1) when it took no part in the match."""
        return self._spans[self._index(group)]

    def start(self, group: int | str = 0) -> int:
        """Start offset of ``group`` (-1 when it took no part)."""
        return self.span(group)[0]

    def end(self, group: int | str = 0) -> int:
        """End offset of ``group`` (-1 when it took no part)."""
        return self.span(group)[1]

    def _text(self, group: int | str, default: Any = None) -> Any:
        a, b = self.span(group)
        return default if a < 0 else self.string[a:b]

    def group(self, *groups: int | str) -> Any:
        """The text of one group (a tuple for several); ``None`` for a group that took no part."""
        if not groups:
            return self._text(0)
        if len(groups) == 1:
            return self._text(groups[0])
        return tuple(self._text(g) for g in groups)

    def __getitem__(self, group: int | str) -> Any:
        return self._text(group)

    def groups(self, default: Any = None) -> tuple[Any, ...]:
        """Every capturing group's text (``default`` for those that took no part)."""
        return tuple(self._text(g, default) for g in range(1, self.re.groups + 1))

    def groupdict(self, default: Any = None) -> dict[str, Any]:
        """Named groups' texts."""
        return {name: self._text(i, default) for name, i in self.re.groupindex.items()}

    @property
    def lastindex(self) -> int | None:
        """Index of the last group that took part (the one that closed last), as ``re``."""
        best, best_end = None, -1
        for g in range(1, self.re.groups + 1):
            a, b = self._spans[g]
            if a >= 0 and b >= best_end:
                best, best_end = g, b
        return best

    def expand(self, template: str) -> str:
        """``template`` with ``\\1``, ``\\g<1>``, ``\\g<name>`` and the usual escapes filled in."""
        return "".join(
            piece if isinstance(piece, str) else (self._text(piece) or "")
            for piece in _template(template)
        )

    def __repr__(self) -> str:
        return f"<linre.Match object; span={self.span()!r}, match={self.group()!r}>"


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "b": "\b", "\\": "\\"}


@lru_cache(maxsize=256)
def _template(template: str) -> tuple[str | int, ...]:
    """A ``sub`` replacement as literal pieces and group references (ints or names)."""
    pieces: list[str | int] = []
    text: list[str] = []
    i, n = 0, len(template)
    while i < n:
        c = template[i]
        if c != "\\" or i + 1 == n:
            text.append(c)
            i += 1
            continue
        e = template[i + 1]
        ref: str | int | None = None
        if e.isdigit():
            j = i + 2 if i + 2 < n and not template[i + 2].isdigit() else i + 3
            j = min(j, n)
            ref, i = int(template[i + 1 : j]), j
        elif e == "g" and i + 2 < n and template[i + 2] == "<":
            close = template.find(">", i + 3)
            if close < 0:
                raise error(f"unterminated group reference in {template!r}")
            name = template[i + 3 : close]
            ref, i = (int(name) if name.isdigit() else name), close + 1
        elif e in _ESCAPES:
            text.append(_ESCAPES[e])
            i += 2
        else:
            text.append("\\" + e)
            i += 2
        if ref is not None:
            pieces.append("".join(text))
            text = []
            pieces.append(ref)
    pieces.append("".join(text))
    return tuple(pieces)


def _char_len(data: bytes, at: int) -> int:
    """Bytes of the UTF-8 character starting at ``at`` (1 past the end)."""
    if at >= len(data):
        return 1
    lead = data[at]
    return 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


def _char_before(data: bytes, at: int) -> int:
    """Byte offset where the UTF-8 character that ends at ``at`` starts."""
    start = at - 1
    while start > 0 and data[start] & 0xC0 == 0x80:
        start -= 1
    return start


class Pattern:
    """A compiled pattern, as ``re.Pattern`` (the part of it replan uses), with the two kinds of
    look-around RE2 lacks given as options (see :func:`compile`)."""

    __slots__ = (
        "_follow",
        "_left",
        "_overlap",
        "_re",
        "flags",
        "followed_by",
        "groupindex",
        "groups",
        "not_after",
        "pattern",
    )

    def __init__(
        self,
        pattern: str,
        flags: int = 0,
        not_after: str = "",
        followed_by: str = "",
        overlapping: bool = False,
    ):
        if flags & ~_SUPPORTED_FLAGS:
            raise error(f"unsupported regex flags {flags!r} for {pattern!r}")
        self.pattern = pattern
        self.flags = flags
        self.not_after = not_after
        self.followed_by = followed_by
        self._overlap = overlapping
        self._follow = bool(followed_by)
        unicode = not flags & A
        source = translate(pattern, unicode=unicode)
        if followed_by:  # the match is group 1; what follows it is matched, then dropped
            source = f"({source})(?:{translate(followed_by, unicode=unicode)})"
        if flags & M:
            source = "(?m)" + source
        self._re = self._build(source, pattern)
        self._left = self._build(translate(f"[{not_after}]"), not_after) if not_after else None
        shift = 1 if followed_by else 0
        self.groups: int = self._re.NumberOfCapturingGroups() - shift
        self.groupindex: dict[str, int] = {
            name.decode("utf-8"): index - shift for name, index in self._re.NamedCapturingGroups()
        }

    def _build(self, source: str, shown: str) -> Any:
        opts = _re2mod.Options()
        opts.log_errors = False
        opts.case_sensitive = not self.flags & I
        opts.dot_nl = bool(self.flags & S)
        opts.max_mem = MAX_MEM
        compiled = _re2.RE2(source.encode("utf-8"), opts)
        if not compiled.ok():
            raise error(f"{shown!r}: {compiled.error().decode('utf-8', 'replace')}")
        return compiled

    def _spans(self, anchor: Any, text: str, pos: int, endpos: int) -> Iterator[list[Any]]:
        """Each match's group spans (character offsets), left to right, as ``finditer``.

        The text is encoded once; every search, neighbour check and offset conversion works on
        those bytes, so a scan is linear in the text's length however many matches it has.
        """
        n = len(text)
        pos = max(0, min(pos, n))
        endpos = max(0, min(endpos, n))
        if pos > endpos:
            return
        ascii_text = text.isascii()
        if ascii_text:  # byte offsets are character offsets
            data = text.encode("ascii")
            bpos, bend = pos, endpos
        else:
            data = text.encode("utf-8")
            bpos = _re2.CharLenToBytes(data, 0, pos)
            bend = bpos + _re2.CharLenToBytes(data, bpos, endpos - pos)
        # byte -> character offsets, converted in one left-to-right pass over ``data``
        last_byte = last_char = 0
        while bpos <= bend:
            spans = self._re.Match(anchor, data, bpos, bend)
            if spans[0] == _NO_SPAN:
                return
            if self._follow:
                spans = spans[1:]
            a, b = spans[0]
            if self._left is not None and a > 0:
                before = _char_before(data, a)
                if self._left.Match(_ANCHOR_BOTH, data, before, a)[0] != _NO_SPAN:
                    if anchor != _UNANCHORED:
                        return
                    bpos = a + _char_len(data, a) if self._overlap or a == b else b
                    continue
            if not ascii_text:
                offsets: dict[int, int] = {}
                for o in sorted({o for span in spans for o in span if o >= 0}):
                    last_char += _re2.BytesToCharLen(data, last_byte, o)
                    last_byte = o
                    offsets[o] = last_char
                spans = [
                    _NO_SPAN if sp == _NO_SPAN else (offsets[sp[0]], offsets[sp[1]]) for sp in spans
                ]
            yield spans
            if anchor != _UNANCHORED or a == bend:
                return
            bpos = b if b > a else a + _char_len(data, a)  # an empty match steps one on

    def _first(self, anchor: Any, text: str, pos: int, endpos: int | None) -> Match | None:
        end = len(text) if endpos is None else endpos
        for spans in self._spans(anchor, text, pos, end):
            return Match(self, text, pos, end, spans)
        return None

    def search(self, string: str, pos: int = 0, endpos: int | None = None) -> Match | None:
        """The first match anywhere in ``string``."""
        return self._first(_UNANCHORED, string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int | None = None) -> Match | None:
        """A match at ``pos``."""
        return self._first(_ANCHOR_START, string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int | None = None) -> Match | None:
        """A match of the whole of ``string[pos:endpos]``."""
        return self._first(_ANCHOR_BOTH, string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int | None = None) -> Iterator[Match]:
        """Every non-overlapping match, left to right."""
        end = len(string) if endpos is None else endpos
        for spans in self._spans(_UNANCHORED, string, pos, end):
            yield Match(self, string, pos, end, spans)

    def findall(self, string: str, pos: int = 0, endpos: int | None = None) -> list[Any]:
        """As ``re``: the matches' texts, their one group's, or tuples of their groups."""
        out: list[Any] = []
        for m in self.finditer(string, pos, endpos):
            if self.groups == 0:
                out.append(m.group())
            elif self.groups == 1:
                out.append(m._text(1, ""))
            else:
                out.append(m.groups(""))
        return out

    def subn(
        self, repl: str | Callable[[Match], str], string: str, count: int = 0
    ) -> tuple[str, int]:
        """``string`` with matches replaced (``repl`` a template or a function), and how many."""
        expand = repl if callable(repl) else (lambda m: m.expand(repl))
        pieces: list[str] = []
        last = done = 0
        for m in self.finditer(string):
            a, b = m.span()
            pieces.append(string[last:a])
            pieces.append(expand(m))
            last = b
            done += 1
            if count and done >= count:
                break
        pieces.append(string[last:])
        return "".join(pieces), done

    def sub(self, repl: str | Callable[[Match], str], string: str, count: int = 0) -> str:
        """``string`` with matches replaced."""
        return self.subn(repl, string, count)[0]

    def split(self, string: str, maxsplit: int = 0) -> list[Any]:
        """``string`` cut at each match (its groups kept between the pieces), as ``re``."""
        out: list[Any] = []
        last = 0
        for done, m in enumerate(self.finditer(string), 1):
            a, b = m.span()
            out.append(string[last:a])
            out.extend(m.groups())
            last = b
            if maxsplit and done >= maxsplit:
                break
        out.append(string[last:])
        return out

    def __repr__(self) -> str:
        return f"linre.compile({self.pattern!r}, {self.flags!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return _compile_again, (
            self.pattern,
            self.flags,
            self.not_after,
            self.followed_by,
            self._overlap,
        )


#: patterns kept compiled: every fixed pattern of replan (about 150) and the last of those made
#: from task data, which a run makes by the hundred and which hold native memory (with 1,024
#: kept, a run process grew by ~35 kB per episode until the cache was full; with 256, flat)
COMPILED_KEPT = 256


@lru_cache(maxsize=COMPILED_KEPT)
def compile(
    pattern: str,
    flags: int = 0,
    *,
    not_after: str = "",
    followed_by: str = "",
    overlapping: bool = False,
) -> Pattern:
    """``pattern`` compiled for linear-time matching (cached); :class:`error` if it cannot be.

    The look-around RE2 lacks, as options: ``not_after`` is the body of a character class
    (``r"\\w."``) that may not stand just before a match, ``re``'s ``(?<![\\w.])``;
    ``followed_by`` a pattern that must match just after it, tested and not consumed, ``re``'s
    ``(?=…)`` (write ``(?![\\w.])`` as ``followed_by=r"[^\\w.]|$"``). ``followed_by`` picks the
    match a backtracking engine would (a shorter one when the longest is not followed right);
    a match rejected for what precedes it is searched again from its end, or, with
    ``overlapping``, from its second character (for a literal, whose next occurrence may
    overlap it; each rejection then costs the literal's length).
    """
    if isinstance(pattern, Pattern):
        return pattern
    return Pattern(pattern, flags, not_after, followed_by, overlapping)


def _compile_again(
    pattern: str, flags: int, not_after: str, followed_by: str, overlapping: bool
) -> Pattern:
    """Unpickling: the same compiled pattern (``compile`` takes its options by keyword)."""
    return compile(
        pattern, flags, not_after=not_after, followed_by=followed_by, overlapping=overlapping
    )


def search(pattern: str, string: str, flags: int = 0) -> Match | None:
    """``compile(pattern, flags).search(string)``."""
    return compile(pattern, flags).search(string)


def match(pattern: str, string: str, flags: int = 0) -> Match | None:
    """``compile(pattern, flags).match(string)``."""
    return compile(pattern, flags).match(string)


def fullmatch(pattern: str, string: str, flags: int = 0) -> Match | None:
    """``compile(pattern, flags).fullmatch(string)``."""
    return compile(pattern, flags).fullmatch(string)


def finditer(pattern: str, string: str, flags: int = 0) -> Iterator[Match]:
    """``compile(pattern, flags).finditer(string)``."""
    return compile(pattern, flags).finditer(string)


def findall(pattern: str, string: str, flags: int = 0) -> list[Any]:
    """``compile(pattern, flags).findall(string)``."""
    return compile(pattern, flags).findall(string)


def sub(
    pattern: str, repl: str | Callable[[Match], str], string: str, count: int = 0, flags: int = 0
) -> str:
    """``compile(pattern, flags).sub(repl, string, count)``."""
    return compile(pattern, flags).sub(repl, string, count)


def split(pattern: str, string: str, maxsplit: int = 0, flags: int = 0) -> list[Any]:
    """``compile(pattern, flags).split(string, maxsplit)``."""
    return compile(pattern, flags).split(string, maxsplit)


def escape(text: str) -> str:
    """``text`` as a pattern that matches it literally."""
    return _re.escape(text)


def split_after(pattern: Pattern, text: str) -> list[str]:
    """``text`` cut at group 1 of each of ``pattern``'s matches, the rest of the match kept with
    the pieces: ``re.split(r"(?<=[.!?])\\s+", t)`` is ``split_after(compile(r"[.!?](\\s+)"), t)``."""
    out: list[str] = []
    last = 0
    for m in pattern.finditer(text):
        a, b = m.span(1)
        out.append(text[last:a])
        last = b
    out.append(text[last:])
    return out


__all__ = [
    "ASCII",
    "COMPILED_KEPT",
    "DOTALL",
    "IGNORECASE",
    "MAX_MEM",
    "MULTILINE",
    "Match",
    "Pattern",
    "compile",
    "error",
    "escape",
    "findall",
    "finditer",
    "fullmatch",
    "match",
    "search",
    "split",
    "split_after",
    "sub",
    "translate",
]
