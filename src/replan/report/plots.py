"""The report's plots as SVG text, drawn with a few lines of geometry (no plotting library).

Each function draws what :func:`replan.report.figures.plot_inputs` says the plot shows and returns
a standalone SVG document. A PNG drawn with matplotlib cost a cold ``replan report`` about 0.9 s of
CPU (0.5 s of it importing the library); this text costs milliseconds, and a browser scales it
sharply. The C × P heatmaps are HTML tables (:func:`replan.report.html.heatmap_section`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from html import escape
from typing import Any

#: one colour per agent, in order (matplotlib's ``tab10``, the colours the PNGs had)
COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
FONT = 'font-family="DejaVu Sans, Arial, sans-serif"'
#: the ticks of a share axis
SHARE_TICKS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
#: average glyph width of the 11 px labels, to leave room for them
CHAR_W = 6.2


def colour(i: int) -> str:
    """The colour of the ``i``-th agent."""
    return COLOURS[i % len(COLOURS)]


def _f(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _text(x: float, y: float, s: str, size: int = 11, anchor: str = "middle", **extra: str) -> str:
    more = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in extra.items())
    return (
        f'<text x="{_f(x)}" y="{_f(y)}" font-size="{size}" text-anchor="{anchor}"{more}>'
        f"{escape(s)}</text>"
    )


def _svg(width: float, height: float, body: list[str], title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_f(width)}" height="{_f(height)}" '
        f'viewBox="0 0 {_f(width)} {_f(height)}" {FONT}><title>{escape(title)}</title>'
        f'<rect width="100%" height="100%" fill="#fff"/>{"".join(body)}</svg>\n'
    )


def _legend(x: float, y: float, labels: Sequence[str], kind: str) -> list[str]:
    """A boxed legend with its top-left corner at (x, y); ``kind``: ``line`` or ``bar``."""
    width = 34 + CHAR_W * max((len(s) for s in labels), default=0)
    out = [
        f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(width)}" height="{_f(8 + 16 * len(labels))}" '
        'fill="#fff" fill-opacity="0.85" stroke="#ccc"/>'
    ]
    for i, label in enumerate(labels):
        cy = y + 12 + 16 * i
        if kind == "line":
            out.append(
                f'<line x1="{_f(x + 6)}" y1="{_f(cy)}" x2="{_f(x + 26)}" y2="{_f(cy)}" '
                f'stroke="{colour(i)}" stroke-width="1.5"/>'
                f'<circle cx="{_f(x + 16)}" cy="{_f(cy)}" r="3" fill="{colour(i)}"/>'
            )
        else:
            out.append(
                f'<rect x="{_f(x + 6)}" y="{_f(cy - 5)}" width="20" height="10" '
                f'fill="{colour(i)}"/>'
            )
        out.append(_text(x + 30, cy + 4, label, anchor="start"))
    return out


def _segments(points: Sequence[tuple[float, float | None]]) -> list[list[tuple[float, float]]]:
    """The runs of defined points (an undefined value breaks the line, as NaN did)."""
    out: list[list[tuple[float, float]]] = [[]]
    for x, y in points:
        if y is None or math.isnan(y):
            if out[-1]:
                out.append([])
        else:
            out[-1].append((x, y))
    return [s for s in out if s]


def _num(x: Any) -> float | None:
    return None if x is None else float(x)


def pec_curves(curves: Sequence[tuple[str, Sequence[Mapping[str, Any]]]]) -> str:
    """PEC(k) and conditional PEC(k) per unit (``(label, rows)``), with their 95% Wilson bands,
    in two panels that share the y axis."""
    width, height = 1100.0, 420.0
    left, right, top, bottom, gap = 60.0, 15.0, 30.0, 45.0, 30.0
    pw = (width - left - right - gap) / 2
    ph = height - top - bottom
    ks = [r["k"] for _, rows in curves for r in rows]
    kmin, kmax = (min(ks), max(ks)) if ks else (1, 1)
    span = max(1, kmax - kmin)
    x_lo, x_hi = kmin - 0.05 * span, kmax + 0.05 * span
    body: list[str] = []
    for p, (name, title) in enumerate(
        (
            ("pec", "PEC(k): share of all runs valid through call k"),
            ("cpec", "conditional PEC(k): among runs with ≥ k calls"),
        )
    ):
        x0 = left + p * (pw + gap)

        def sx(k: float, x0: float = x0) -> float:
            return x0 + (k - x_lo) / (x_hi - x_lo) * pw

        def sy(v: float) -> float:
            return top + ph - (v + 0.02) / 1.04 * ph

        step = max(1, math.ceil(span / 10))
        for k in range(kmin, kmax + 1, step):  # integer ticks only
            body.append(
                f'<line x1="{_f(sx(k))}" y1="{_f(top)}" x2="{_f(sx(k))}" y2="{_f(top + ph)}" '
                'stroke="#000" stroke-opacity="0.15"/>'
            )
            body.append(_text(sx(k), top + ph + 15, str(k), 10))
        for v in SHARE_TICKS:
            body.append(
                f'<line x1="{_f(x0)}" y1="{_f(sy(v))}" x2="{_f(x0 + pw)}" y2="{_f(sy(v))}" '
                'stroke="#000" stroke-opacity="0.15"/>'
            )
            if p == 0:
                body.append(_text(x0 - 6, sy(v) + 4, f"{v:.1f}", 10, "end"))
        for i, (_, rows) in enumerate(curves):
            c = colour(i)
            lo = [(r["k"], _num(r[name]["low"])) for r in rows]
            hi = [(r["k"], _num(r[name]["high"])) for r in rows]
            for seg_lo, seg_hi in zip(_segments(lo), _segments(hi), strict=False):
                pts = [(sx(k), sy(v)) for k, v in seg_hi] + [
                    (sx(k), sy(v)) for k, v in reversed(seg_lo)
                ]
                body.append(
                    f'<polygon points="{" ".join(f"{_f(a)},{_f(b)}" for a, b in pts)}" '
                    f'fill="{c}" fill-opacity="0.15"/>'
                )
            for seg in _segments([(r["k"], _num(r[name]["value"])) for r in rows]):
                pts = " ".join(f"{_f(sx(k))},{_f(sy(v))}" for k, v in seg)
                body.append(
                    f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="1.5"/>'
                )
                body += [
                    f'<circle cx="{_f(sx(k))}" cy="{_f(sy(v))}" r="3" fill="{c}"/>' for k, v in seg
                ]
        body.append(
            f'<rect x="{_f(x0)}" y="{_f(top)}" width="{_f(pw)}" height="{_f(ph)}" fill="none" '
            'stroke="#000" stroke-width="0.8"/>'
        )
        body.append(_text(x0 + pw / 2, top - 10, title, 12))
        body.append(_text(x0 + pw / 2, height - 10, "k (call index)"))
    body.append(
        _text(15, top + ph / 2, "share of runs", transform=f"rotate(-90 15 {_f(top + ph / 2)})")
    )
    labels = [label for label, _ in curves]
    body += _legend(left + 8, top + ph - 14 - 16 * len(labels), labels, "line")
    return _svg(width, height, body, "PEC and conditional PEC curves")


def first_errors(shares: Mapping[str, Mapping[str, float | None]]) -> str:
    """Share of each first-error type (``type -> unit label -> share``) among a unit's runs
    with an error (grouped horizontal bars, one colour per unit)."""
    types = list(shares)
    labels = list(next(iter(shares.values()))) if shares else []
    band = 45.0 * max(1.0, len(labels) / 2)  # the height of one type's group
    left = 20 + CHAR_W * max((len(t) for t in types), default=0)
    right, top, bottom = 20.0, 15.0, 50.0
    width = 1000.0
    pw, ph = width - left - right, band * len(types)
    height = top + ph + bottom
    sx: Callable[[float], float] = lambda v: left + v * pw  # noqa: E731
    body: list[str] = []
    for v in SHARE_TICKS:
        body.append(
            f'<line x1="{_f(sx(v))}" y1="{_f(top)}" x2="{_f(sx(v))}" y2="{_f(top + ph)}" '
            'stroke="#000" stroke-opacity="0.15"/>'
        )
        body.append(_text(sx(v), top + ph + 15, f"{v:.1f}", 10))
    h = 0.8 * band / max(1, len(labels))
    for j, t in enumerate(types):
        y0 = top + band * j + 0.1 * band
        body.append(_text(left - 6, top + band * (j + 0.5) + 4, t, anchor="end"))
        for i, label in enumerate(labels):
            v = _num(shares[t].get(label))
            w = 0.0 if v is None or math.isnan(v) else v * pw
            body.append(
                f'<rect x="{_f(left)}" y="{_f(y0 + h * i)}" width="{_f(w)}" height="{_f(h)}" '
                f'fill="{colour(i)}"/>'
            )
    body.append(
        f'<rect x="{_f(left)}" y="{_f(top)}" width="{_f(pw)}" height="{_f(ph)}" fill="none" '
        'stroke="#000" stroke-width="0.8"/>'
    )
    body.append(
        _text(
            left + pw / 2,
            height - 12,
            "share of the runs with an error whose first error has this type",
        )
    )
    lw = 34 + CHAR_W * max((len(s) for s in labels), default=0)
    body += _legend(left + pw - lw - 8, top + ph - 14 - 16 * len(labels), labels, "bar")
    return _svg(width, height, body, "first error types")
