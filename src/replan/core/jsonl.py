"""Reading JSON Lines files line by line, so that one bad line never takes the file down.

Every reader of user data (``replan score``, ``replan audit``, ``replan run --path``) goes
through :func:`iter_lines` / :func:`iter_json`: a line that is not UTF-8, not JSON, or nested
too deeply for Python comes back as a :class:`LineError` naming the file and the line, and the
next line is read. A UTF-16 or UTF-8-with-BOM file is recognised by its byte-order mark and
read whole in that encoding. :func:`find_duplicates` reports lines that reuse an id.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from replan.core import linre

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


@dataclass(frozen=True)
class LineError:
    """A line that could not be read; ``str()`` is ``file:line: message``."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


def text_encoding(path: Path) -> str:
    """The encoding a byte-order mark names, else UTF-8."""
    with path.open("rb") as fh:
        head = fh.read(4)
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name
    return "utf-8"


def iter_lines(path: str | Path) -> Iterator[tuple[int, str | LineError]]:
    """``(line number, text)`` for every non-blank line, or a :class:`LineError` for a line
    that is not text in the file's encoding (UTF-8 unless a byte-order mark says otherwise)."""
    p = Path(path)
    encoding = text_encoding(p)
    if encoding != "utf-8":  # a BOM: the whole file is in that encoding
        try:
            text = p.read_text(encoding=encoding)
        except UnicodeDecodeError as exc:
            yield 1, LineError(str(p), 1, f"not valid {encoding} text ({exc.reason})")
            return
        for n, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                yield n, line
        return
    with p.open("rb") as fh:
        for n, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield (
                    n,
                    LineError(
                        str(p),
                        n,
                        f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1});"
                        " save the file as UTF-8",
                    ),
                )
                continue
            if line.strip():
                yield n, line


def loads(text: str) -> Any:
    """``json.loads`` whose every failure is a ``ValueError`` (deep nesting included), and
    that refuses a ``\\ud800``-style escape left without its pair (a lone UTF-16 surrogate:
    no character, and text holding one cannot be written as UTF-8 anywhere later)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply to read") from None
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):  # cheap test first: rare
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            code = ord(exc.object[exc.start])
            raise ValueError(
                f"a \\u{code:04x} escape without its pair (a lone UTF-16 surrogate is not a "
                "character)"
            ) from None
    return value


#: a JSON escape of a UTF-16 surrogate (``\\ud800``-``\\udfff``): fixed length, linear
_SURROGATE_ESCAPE = linre.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def iter_json(path: str | Path) -> Iterator[tuple[int, Any | LineError]]:
    """``(line number, value)`` for every non-blank line, or a :class:`LineError` saying why
    the line is not JSON (invalid, not UTF-8, nested too deeply)."""
    for n, line in iter_lines(path):
        if isinstance(line, LineError):
            yield n, line
            continue
        try:
            yield n, loads(line)
        except ValueError as exc:
            yield n, LineError(str(path), n, f"not valid JSON: {exc}")


def iter_models(path: str | Path, cls: type[M], what: str) -> Iterator[tuple[int, M | LineError]]:
    """``(line number, cls instance)`` for every non-blank line, or a :class:`LineError` saying
    why the line is not a valid ``what`` (not UTF-8, not JSON, too deep, the wrong shape)."""
    for n, line in iter_lines(path):
        if isinstance(line, LineError):
            yield n, line
            continue
        try:
            yield n, cls.model_validate_json(line)
        except ValidationError as exc:
            msg = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in exc.errors()[:3]
            )
            yield n, LineError(str(path), n, f"not a valid {what}: {msg}")
        except (ValueError, RecursionError) as exc:
            yield n, LineError(str(path), n, f"not a valid {what}: {exc!s:.200}")


def find_duplicates(
    items: Iterable[tuple[int, T]], key: Callable[[T], Any], file: str | Path, what: str = "id"
) -> tuple[list[tuple[int, T]], list[LineError]]:
    """Keep the first line of each ``key``; every later line with the same key is a
    :class:`LineError` naming both lines (so no line silently replaces another)."""
    first: dict[Any, int] = {}
    kept: list[tuple[int, T]] = []
    errors: list[LineError] = []
    for n, item in items:
        k = key(item)
        if k in first:
            errors.append(
                LineError(
                    str(file), n, f"duplicate {what} {k!r} (first on line {first[k]}); skipped"
                )
            )
            continue
        first[k] = n
        kept.append((n, item))
    return kept, errors


__all__ = [
    "LineError",
    "find_duplicates",
    "iter_json",
    "iter_lines",
    "iter_models",
    "loads",
    "text_encoding",
]
