"""The report's PNG plots, drawn once per store state.

What each plot shows is computed first, as plain data (:func:`plot_inputs`), and digested with
the drawing code (:func:`plot_digest`). The digest is written into the PNG itself (a ``tEXt``
chunk), so a report whose plot file beside it carries the same digest reuses that file instead
of drawing it again: a second ``replan report`` on an unchanged store imports no matplotlib.
A plot file is replaced atomically (:func:`replan.runner.export.write_atomic`), so a failed
write never replaces a good one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import struct
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from replan.report.data import ReportData

#: the plots a report draws, in page order
PLOTS = ("pec", "errors")
#: the PNG ``tEXt`` keyword that carries a plot's digest
DIGEST_KEY = "replan-digest"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def plot_file(name: str) -> str:
    """The file name of plot ``name`` beside the report's HTML."""
    return f"report-{name}.png"


def pec_kmax(curves: Sequence[Sequence[Mapping[str, Any]]], share: float = 0.05) -> int:
    """The last k worth plotting: where at least ``share`` of some agent's runs (and 3 runs)
    still have k calls (beyond it cPEC rests on a handful of runs and PEC is flat at ~0)."""
    best = 1
    for rows in curves:
        if not rows:
            continue
        total = rows[0]["pec"]["n"]
        need = min(total, max(3, math.ceil(share * total)))
        reach = [r["k"] for r in rows if r["reached"] >= need]
        best = max(best, max(reach, default=1))
    return best


def plot_inputs(data: ReportData) -> dict[str, Any]:
    """What each plot of :data:`PLOTS` shows, as JSON-able data (``None``: nothing to draw).

    ``pec``: ``[(unit label, PEC rows up to :func:`pec_kmax`)]``; ``errors``: first-error
    type -> unit label -> share, for the types some unit met."""
    if not data.episodes:
        return {}
    curves = [(u.label, (u.aggregate or {}).get("prefix.pec") or []) for u in data.units]
    curves = [(label, rows) for label, rows in curves if rows]
    kmax = pec_kmax([rows for _, rows in curves])
    pec = [(label, [r for r in rows if r["k"] <= kmax]) for label, rows in curves]
    shares = {
        t: {label: cell["share"]["value"] for label, cell in row.items()}
        for t, row in data.errors.items()
        if any(c["count"] for c in row.values())
    }
    return {"pec": pec or None, "errors": shares or None}


@functools.cache
def _drawing_code() -> bytes:
    """The drawing module's source and matplotlib's version: a change to either redraws."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        mpl = version("matplotlib")
    except PackageNotFoundError:  # pragma: no cover - matplotlib is a dependency
        mpl = "?"
    return Path(__file__).with_name("plots.py").read_bytes() + b"\0" + mpl.encode()


def plot_digest(name: str, shown: Any) -> str:
    """Digest of plot ``name`` showing ``shown`` (:func:`plot_inputs`), with the drawing code."""
    h = hashlib.sha256(name.encode() + b"\0" + _drawing_code() + b"\0")
    h.update(json.dumps(shown, sort_keys=True, default=str).encode())
    return h.hexdigest()


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def with_digest(png: bytes, digest: str) -> bytes:
    """``png`` with a ``tEXt`` chunk :data:`DIGEST_KEY` = ``digest`` after its header."""
    end = len(PNG_SIGNATURE) + 8 + 13 + 4  # the IHDR chunk: 13 bytes of data
    text = _chunk(b"tEXt", DIGEST_KEY.encode("latin-1") + b"\0" + digest.encode("latin-1"))
    return png[:end] + text + png[end:]


def png_digest(png: bytes) -> str | None:
    """The :data:`DIGEST_KEY` text of a whole PNG (``None``: none, not a PNG, or a file that is
    truncated or damaged: every chunk's CRC is checked, through to ``IEND``)."""
    if not png.startswith(PNG_SIGNATURE):
        return None
    found, at = None, len(PNG_SIGNATURE)
    while at + 12 <= len(png):
        (size,) = struct.unpack(">I", png[at : at + 4])
        kind, body = png[at + 4 : at + 8], png[at + 8 : at + 8 + size]
        crc = png[at + 8 + size : at + 12 + size]
        if len(crc) < 4 or struct.unpack(">I", crc)[0] != zlib.crc32(kind + body):
            return None
        if kind == b"IEND":
            return found
        if kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            if key == DIGEST_KEY.encode("latin-1"):
                found = value.decode("latin-1")
        at += 12 + size
    return None


def draw(name: str, shown: Any) -> bytes:
    """Draw plot ``name`` showing ``shown`` (imports matplotlib: only when a plot is drawn)."""
    from replan.report import plots

    if name == "pec":
        return plots.pec_curves(shown)
    return plots.first_errors(shown)


def make_plots(data: ReportData, beside: str | Path | None = None) -> dict[str, bytes | None]:
    """Every plot of the report as PNG bytes (``None`` where there is nothing to draw), each
    carrying its digest; a plot file in the ``beside`` directory with the same digest is
    reused as it is, not drawn again."""
    out: dict[str, bytes | None] = {}
    for name, shown in plot_inputs(data).items():
        if shown is None:
            out[name] = None
            continue
        digest = plot_digest(name, shown)
        if beside is not None:
            try:
                old = (Path(beside) / plot_file(name)).read_bytes()
            except OSError:
                old = b""
            if png_digest(old) == digest:
                out[name] = old
                continue
        out[name] = with_digest(draw(name, shown), digest)
    return out
