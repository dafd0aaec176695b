"""No regular expression in replan can stall on untrusted text.

Model replies, dataset lines, tool outputs and user input reach replan's patterns; Python's
``re`` backtracks, and a pattern as plain as ``time\\s*-?\\s*out`` takes quadratic time on
``"time" + " " * n`` (an 80 s stall in one episode's scoring froze a whole run). Two checks keep
every pattern linear: nothing in ``src/`` uses ``re`` (all goes through :mod:`replan.core.linre`,
RE2), and every pattern written in ``src/`` (module-level compiled ones, and literal patterns
passed to a regex function anywhere) is timed on adversarial texts of length n and 4n: the time
may grow at most 6× (quadratic growth is 16×). Patterns built at run time from data (an escaped
literal) cannot be listed; they are linear by the first check.
"""

from __future__ import annotations

import ast
import gc
import importlib
import pkgutil
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import replan
from replan.core import linre

SRC = Path(replan.__file__).resolve().parent
#: the regex functions whose first argument is a pattern
CALLS = {"compile", "search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split"}
N = 1000
MAX_GROWTH = 6.0


def _sources() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(SRC.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"), str(path))


def test_nothing_in_src_uses_the_backtracking_re_module() -> None:
    offenders = []
    for path, tree in _sources():
        if path == SRC / "core" / "linre.py":
            continue
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            if any(n == "re" or n.startswith("re.") for n in names):
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert not offenders, f"use replan.core.linre, not re: {offenders}"


def _flag_value(node: ast.expr | None) -> int:
    """A flags argument written as ``linre.I | linre.S`` (or ``re.…``)."""
    if node is None:
        return 0
    if isinstance(node, ast.BinOp):
        return _flag_value(node.left) | _flag_value(node.right)
    if isinstance(node, ast.Attribute):
        return int(getattr(re, node.attr))
    raise ValueError(ast.dump(node))


def _literal_patterns() -> Iterator[tuple[str, Callable[[], Any]]]:
    """Every pattern written as a string literal in a call of a regex function in ``src/``."""
    for path, tree in _sources():
        if path == SRC / "core" / "linre.py":
            continue
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in CALLS
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ("re", "linre")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                continue
            pattern = node.args[0].value
            flags_node = next((k.value for k in node.keywords if k.arg == "flags"), None)
            if flags_node is None and node.func.attr == "compile" and len(node.args) > 1:
                flags_node = node.args[1]
            flags = _flag_value(flags_node)
            engine = re if node.func.value.id == "re" else linre
            where = f"{path.relative_to(SRC)}:{node.lineno}"
            yield where, (lambda e=engine, p=pattern, f=flags: e.compile(p, f))


def _is_pattern(value: Any) -> bool:
    return isinstance(value, re.Pattern | linre.Pattern)


def _module_patterns() -> Iterator[tuple[str, Any]]:
    """Every compiled pattern a module of replan holds (also in lists, dicts, class bodies)."""
    for info in pkgutil.walk_packages(replan.__path__, "replan."):
        if info.name.endswith("__main__"):
            continue
        mod = importlib.import_module(info.name)
        for name, value in vars(mod).items():
            items = [value]
            if isinstance(value, list | tuple | set | frozenset):
                items = list(value)
            elif isinstance(value, dict):
                items = list(value.values())
            elif isinstance(value, type) and value.__module__ == mod.__name__:
                items = list(vars(value).values())
            for i, item in enumerate(items):
                if _is_pattern(item):
                    yield f"{info.name}.{name}" + (f"[{i}]" if item is not value else ""), item


def all_patterns() -> dict[str, Any]:
    """``where -> compiled pattern`` for every pattern written in ``src/`` (by its source text)."""
    out: dict[tuple[str, int], tuple[str, Any]] = {}
    for where, pat in _module_patterns():
        out.setdefault((pat.pattern, pat.flags & ~re.UNICODE), (where, pat))
    for where, make in _literal_patterns():
        pat = make()
        out.setdefault((pat.pattern, pat.flags & ~re.UNICODE), (where, pat))
    return dict(out.values())


# -- adversarial texts ------------------------------------------------------------------------
#: a character standing for each class escape
_CLASS_CHARS = {
    "s": " \n\t",
    "S": "a(",
    "d": "07",
    "D": "a ",
    "w": "a_任",
    "W": " .(",
    "b": " a",
}


def _touched(pattern: str) -> tuple[set[str], list[str]]:
    """The characters ``pattern`` mentions (literals, class members, a member of each class
    escape) and its literal runs of two or more characters (opening words and delimiters)."""
    chars: set[str] = set(" a0\n")
    runs: list[str] = []
    run: list[str] = []
    i, n = 0, len(pattern)
    in_class = False

    def close() -> None:
        if len(run) >= 2:
            runs.append("".join(run))
        run.clear()

    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            i += 2
            if e in _CLASS_CHARS:
                chars.update(_CLASS_CHARS[e])
                close()
            elif e in "uU":
                width = 4 if e == "u" else 8
                chars.add(chr(int(pattern[i : i + width], 16)))
                i += width
                close()
            elif e in "ntr":
                ch = {"n": "\n", "t": "\t", "r": "\r"}[e]
                chars.add(ch)
                run.append(ch)
            elif e.isalnum():
                close()
            else:
                chars.add(e)
                if not in_class:
                    run.append(e)
            continue
        i += 1
        if in_class:
            if c == "]":
                in_class = False
            elif c not in "^-":
                chars.add(c)
            continue
        if c == "[":
            in_class = True
            close()
        elif c == "(" and pattern.startswith("?", i):  # (?:  (?i:  (?P<name>  (?=  (?<!
            close()
            m = re.match(r"\?(?:P<\w+>|[aiLmsux-]*:|<?[=!]|[aiLmsux]+\))", pattern[i:])
            i += m.end() if m else 1
        elif c in "().*+?{}|^$":
            if c in "*+?{" and run:  # the last literal was repeated: not part of a fixed run
                run.pop()
            close()
            if c == ".":
                chars.update("a(")
        else:
            chars.add(c)
            run.append(c)
    close()
    return chars, sorted(set(runs), key=lambda r: (-len(r), r))[:6]


def adversarial_texts(pattern: str) -> dict[str, Callable[[int], str]]:
    """Families of texts of length about ``n``: a long run of each character the pattern
    touches, alone and after each of its literal runs (an unclosed delimiter, a keyword), and
    each literal run repeated with a space (many matches, or many near-misses)."""
    chars, runs = _touched(pattern)
    families: dict[str, Callable[[int], str]] = {}
    for c in sorted(chars):
        families[f"{c!r}*n"] = lambda n, c=c: c * n
        for r in runs:
            families[f"{r!r}+{c!r}*n"] = lambda n, r=r, c=c: r + c * n
    for r in runs:
        families[f"({r!r}+' ')*k"] = lambda n, r=r: (r + " ") * max(1, n // (len(r) + 1))
        families[f"({r!r}+'a')*k"] = lambda n, r=r: (r + "a") * max(1, n // (len(r) + 1))
    return families


def _scan(pat: Any, text: str) -> float:
    """CPU time of this thread for one scan of ``text`` (time spent waiting for a core on a busy
    machine does not count; nor does the garbage collector, off meanwhile)."""
    t0 = time.thread_time()
    for _m in pat.finditer(text):
        pass
    pat.match(text)
    return time.thread_time() - t0


def _ratio(pat: Any, small: str, big: str) -> tuple[float, float]:
    """(time on ``big`` / time on ``small``, time on ``big``), each the least of several runs
    taken in turns (a busy spell slows both), measured again with more runs before a growth
    above the bound is believed (unless the big text takes over 50 ms: a few runs of that
    length are exact)."""
    ratio = t_big = 0.0
    gc.disable()
    try:
        for repeats in (3, 9, 27):
            t_small = t_big = float("inf")
            for _ in range(repeats):
                t_small = min(t_small, _scan(pat, small))
                t_big = min(t_big, _scan(pat, big))
            ratio = t_big / max(t_small, 1e-7)
            if ratio <= MAX_GROWTH or t_big > 0.05:
                break
    finally:
        gc.enable()
    return ratio, t_big


def growth(pat: Any, family: Callable[[int], str]) -> float:
    """How much the time grows from the family's text of length n to 4n.

    RE2 changes engines with the text's length (a bit-state engine for short texts), a
    constant-factor step that one n -> 4n pair may straddle; so a growth above the bound is
    checked again from 4n to 16n, and the smaller of the two counts (a quadratic pattern grows
    16x in both). A 4n text that already takes over 50 ms is not tried at 16n: no linear
    pattern is that slow on 4,000 characters.
    """
    ratio, t_big = _ratio(pat, family(N), family(4 * N))
    if ratio <= MAX_GROWTH or t_big > 0.05:
        return ratio
    return min(ratio, _ratio(pat, family(4 * N), family(16 * N))[0])


def test_the_growth_check_catches_a_quadratic_pattern() -> None:
    """The control: sizes and repeats are big enough for a quadratic pattern to show."""
    control = re.compile(r"time\s*-?\s*out")  # quadratic in re on "time" + " " * n
    families = adversarial_texts(control.pattern)
    assert growth(control, families["'time'+' '*n"]) > MAX_GROWTH
    assert growth(linre.compile(control.pattern), families["'time'+' '*n"]) <= MAX_GROWTH


def test_every_pattern_in_src_runs_in_linear_time() -> None:
    patterns = all_patterns()
    assert len(patterns) > 50  # the enumeration found them (today: over a hundred)
    slow = []
    for where, pat in sorted(patterns.items()):
        for name, family in adversarial_texts(pat.pattern).items():
            ratio = growth(pat, family)
            if ratio > MAX_GROWTH:
                slow.append(f"{where} /{pat.pattern}/ on {name}: x{ratio:.1f} for n -> 4n")
                break  # one family is enough to name the pattern
    assert not slow, "patterns that are not linear-time:\n" + "\n".join(slow)


@pytest.mark.parametrize(
    ("pattern", "flags", "text"),
    [
        (
            r"(?:task|node|step|任务)\s*[_#:\-]?\s*(\d+(?:\.\d+)*)",
            re.I,
            "use Task 3, 任务 4.1, STEP#2",
        ),
        (r"[\w'’]+", 0, "zażółć gęślą jaźń it's 任务3"),
        (r"\s+", 0, "a\u3000b\xa0c d\te"),
        (r"[^\d.]+", 0, "ab1.2cd٣e"),
        (r"[\u3040-\u30ff\u4e00-\u9fff]", 0, "abc任"),
        (r"```(?:json|JSON)?\s*(.*?)```", re.S, 'x ```json\n{"a":1}``` y ```b```'),
        (r"^[ \t]*//[^\n]*", re.M, "a\n  // c\nb // d\n//e"),
        (r"x*", 0, "axbxx"),
        (r"[]a]+", 0, "]a]b"),
        (r"é(\w)", 0, "aébéc"),
    ],
)
def test_linre_gives_what_re_gives(pattern: str, flags: int, text: str) -> None:
    ours, theirs = linre.compile(pattern, flags), re.compile(pattern, flags)
    assert [m.span() for m in ours.finditer(text)] == [m.span() for m in theirs.finditer(text)]
    assert ours.findall(text) == theirs.findall(text)
    assert ours.split(text) == theirs.split(text)
    assert ours.sub(lambda m: "<" + m.group() + ">", text) == theirs.sub(
        lambda m: "<" + m.group() + ">", text
    )


def test_backslash_s_is_what_str_isspace_says() -> None:
    import sys

    spaces = "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())
    assert "".join(linre.findall(r"\s", spaces + "a\u200b")) == spaces
    assert linre.findall(r"\S", spaces + "a\u200b") == ["a", "\u200b"]


def test_linre_sub_templates_and_errors() -> None:
    assert linre.sub(r"([a-z])([A-Z])", r"\1_\2", "fooBarBaz") == "foo_Bar_Baz"
    assert linre.sub("x", "é→\\n", "axb") == "aé→\nb"
    with pytest.raises(linre.error, match="invalid perl operator"):
        linre.compile(r"(?<![\d.])x")


def test_the_look_around_options_give_what_re_gives() -> None:
    text = "1 22 a3 4.5 6. v7 8 1,234a 9"
    looked = r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?![\w])"
    ours = linre.compile(r"-?\d[\d,]*(?:\.\d+)?", not_after=r"\w.", followed_by=r"\W|$")
    assert ours.findall(text) == re.findall(looked, text)  # "1,234a" holds "1", as in re
    assert [m.span() for m in ours.finditer(text)] == [m.span() for m in re.finditer(looked, text)]
    # overlapping: a later occurrence inside one rejected for what precedes it is found
    lit = linre.compile("a b a", not_after=r"\w", overlapping=True)
    assert [m.start() for m in lit.finditer("xa b a b a")] == [5]
    assert [m.start() for m in re.finditer(r"(?<!\w)a b a", "xa b a b a")] == [5]
    cjk = linre.compile(r"(\d+)\s*的", not_after=r"\d.")
    assert cjk.findall("1的2的 3.4的 ٣的") == re.findall(
        r"(?<![\d.])(\d+)\s*的", "1的2的 3.4的 ٣的"
    )
    assert linre.split_after(linre.compile(r"[.!?](\s+)"), "A. B!  C") == re.split(
        r"(?<=[.!?])\s+", "A. B!  C"
    )


def test_a_pattern_holds_at_most_a_mebibyte() -> None:
    """RE2's default budget is 8 MiB a pattern, and a run compiles hundreds of patterns from
    task data: their DFA caches grew a run's memory with every episode (issue 32 §5)."""
    for pat in (linre.compile(r"\w+"), linre.compile("(x)", not_after=r"\w", followed_by=r"\W|$")):
        assert pat._re.options().max_mem == linre.MAX_MEM <= 1 << 20
    # and only the last few hundred are kept (each one made from task data holds memory)
    assert linre.compile.cache_info().maxsize == linre.COMPILED_KEPT <= 256
