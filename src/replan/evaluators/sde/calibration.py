"""Judge calibration against human labels: EMA and MAE per item (ParaRecover Table 5)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from replan.evaluators.sde.items import (
    ALLOWED,
    ITEMS,
    JUDGED_ITEMS,
)
from replan.evaluators.sde.record import SDERecord
from replan.evaluators.stats import (
    bootstrap_mean,
    wilson,
)


# ----------------------------------------------------------------------------------------------
# judge calibration against human labels
def _score_value(v: Any, where: str) -> float | None:
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: score {v!r} is not a number") from exc
    if f not in ALLOWED and not (where.endswith("S5") and f in (0.0, 1.0)):
        raise ValueError(f"{where}: score {f} is not one of 1, 0.5, 0")
    return f


def _add_row(out: dict[str, dict[str, float]], row: Mapping[str, Any], where: str) -> None:
    rid = row.get("id", row.get("episode_id", row.get("instance_id")))
    if rid is None or str(rid).strip() == "":
        raise ValueError(f"{where}: no id (columns id / episode_id / instance_id)")
    rid = str(rid).strip()
    if "item" in row:
        item = str(row["item"]).strip()
        if item not in ITEMS:
            raise ValueError(f"{where}: unknown item {item!r}")
        v = _score_value(row.get("score"), f"{where} {item}")
        if v is not None:
            out.setdefault(rid, {})[item] = v
        return
    for item in ITEMS:
        for col in (item, f"{item}_score"):
            if col in row:
                v = _score_value(row[col], f"{where} {item}")
                if v is not None:
                    out.setdefault(rid, {})[item] = v


def load_labels(path: str | Path) -> dict[str, dict[str, float]]:
    """Item scores per instance from a CSV or JSONL file: id -> item -> score.

    Wide rows (``id, S1, S2, ...`` or ``S1_score`` ...) or long rows (``id, item, score``).
    Errors name the file and line.
    """
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    out: dict[str, dict[str, float]] = {}
    if p.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        for ln, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{p}:{ln}: not valid JSON: {exc.msg}") from exc
            if not isinstance(row, Mapping):
                raise ValueError(f"{p}:{ln}: expected a JSON object")
            _add_row(out, row, f"{p}:{ln}")
    else:
        reader = csv.DictReader(io.StringIO(text))
        for ln, row in enumerate(reader, start=2):
            _add_row(out, row, f"{p}:{ln}")
    return out


def calibrate(
    human: Mapping[str, Mapping[str, float]],
    model: Mapping[str, Mapping[str, float | None]],
    items: Iterable[str] = JUDGED_ITEMS,
) -> dict[str, Any]:
    """EMA, MAE, human mean and model mean per item over instances both scored, and overall.

    Each item also carries the 95% intervals of its EMA (Wilson) and MAE (bootstrap).
    ``overall`` averages the per-item values (items with no pair are left out), as
    ParaRecover's Table 5 reports.
    """
    table: dict[str, Any] = {}
    for item in items:
        pairs = [
            (float(h[item]), float(model[i][item]))  # type: ignore[arg-type]
            for i, h in human.items()
            if item in h and i in model and model[i].get(item) is not None
        ]
        if not pairs:
            continue
        n = len(pairs)
        ema = wilson(sum(1 for a, b in pairs if a == b), n)
        mae = bootstrap_mean([abs(a - b) for a, b in pairs], key=f"calibrate.{item}")
        table[item] = {
            "n": n,
            "ema": ema.value,
            "mae": mae.value,
            "human_mean": sum(a for a, _ in pairs) / n,
            "model_mean": sum(b for _, b in pairs) / n,
            "ema_interval": [ema.low, ema.high],
            "mae_interval": [mae.low, mae.high],
        }
    if table:
        table["overall"] = {
            k: sum(row[k] for row in table.values()) / len(table)
            for k in ("ema", "mae", "human_mean", "model_mean")
        } | {"n": sum(row["n"] for row in table.values())}
    return table


def judge_scores(records: Iterable[SDERecord]) -> dict[str, dict[str, float | None]]:
    """Judge item scores per episode id, in the shape :func:`calibrate` takes."""
    return {r.episode_id: dict(r.judge.scores) for r in records if r.judge is not None}
