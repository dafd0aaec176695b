"""Office tools: spreadsheets."""

from __future__ import annotations

import math
from typing import Any

from replan.core import linre
from replan.env.corpus.office import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext


def _col(letters: str) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n - 1


def _col_letters(i: int) -> str:
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(65 + r) + out
    return out


def _sheet(sid: str) -> dict[str, Any]:
    if sid not in facts.SHEETS:
        raise InvalidValue("spreadsheet_id", f"spreadsheet {sid!r} not found")
    return facts.SHEETS[sid]


def _sheet_rows(ctx: ToolContext, sid: str) -> list[list[Any]]:
    rows = [list(r) for r in _sheet(sid)["rows"]]
    # appended rows are keyed by their A1 range ("Budget!A14:D14"): the row number is in it
    appended = sorted(
        (int(key.split("!A", 1)[1].split(":", 1)[0]), rec["values"])
        for key, rec in ctx.state.records("office_sheet_rows").items()
        if rec["spreadsheet_id"] == sid
    )
    for row_no, values in appended:
        while len(rows) < row_no - 1:
            rows.append([])
        rows.append(list(values))
    return rows


def _parse_range(sid: str, rng: str) -> tuple[str, int, int, int, int]:
    tab = _sheet(sid)["tab"]
    if "!" in rng:
        name, rng = rng.split("!", 1)
        if name.strip("'") != tab:
            raise InvalidValue("range", f"spreadsheet {sid} has no tab {name!r} (it has {tab!r})")
    parts = rng.split(":")

    def cell(a1: str) -> tuple[int, int]:
        letters = a1.rstrip("0123456789")
        return _col(letters), int(a1[len(letters) :]) - 1

    (c0, r0), (c1, r1) = cell(parts[0]), cell(parts[-1])
    if c1 < c0 or r1 < r0:
        raise InvalidValue("range", f"range {rng!r} ends before it starts")
    return tab, r0, r1, c0, c1


def _range_values(ctx: ToolContext, sid: str, rng: str) -> tuple[str, list[list[Any]]]:
    tab, r0, r1, c0, c1 = _parse_range(sid, rng)
    rows = _sheet_rows(ctx, sid)
    values = [list(row[c0 : c1 + 1]) for row in rows[r0 : r1 + 1]]
    while values and not values[-1]:
        values.pop()  # the API omits trailing empty rows
    a1 = f"{tab}!{_col_letters(c0)}{r0 + 1}:{_col_letters(c1)}{r1 + 1}"
    return a1, values


def _numeric(cell: Any) -> float | None:
    if isinstance(cell, bool):
        return None
    if isinstance(cell, int | float):
        return float(cell)
    if isinstance(cell, str):
        txt = cell.strip().replace(",", "").lstrip("$")
        if linre.fullmatch(r"-?[0-9]+(\.[0-9]+)?", txt):
            return float(txt)
    return None


def _sum(values: list[list[Any]]) -> tuple[float, int, int]:
    nums = [_numeric(c) for row in values for c in row]
    good = [n for n in nums if n is not None]
    return round(math.fsum(good), 2), len(good), len(nums) - len(good)


def _formatted(cell: Any) -> Any:
    if isinstance(cell, int) and not isinstance(cell, bool):
        return f"{cell:,}"
    if isinstance(cell, float):
        return f"{cell:,.2f}"
    return cell


@implementation
def read_sheet_range(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    a1, values = _range_values(ctx, args["spreadsheet_id"], args["range"])
    if args.get("value_render_option", "FORMATTED_VALUE") == "FORMATTED_VALUE":
        values = [[_formatted(c) for c in row] for row in values]
    return {"range": a1, "major_dimension": "ROWS", "values": values}


@implementation
def sum_cell_values(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    total, good, bad = _sum(args["values"])
    return {"sum": total, "numeric_cells": good, "skipped_cells": bad}


@implementation
def workbook_sum(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _, values = _range_values(ctx, args["spreadsheet_id"], args["range"])
    total, good, _ = _sum(values)
    return {"value": total, "error": "", "cells_counted": good}


@implementation
def append_sheet_row(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sid = args["spreadsheet_id"]
    sheet = _sheet(sid)
    width = len(sheet["rows"][0])
    if len(args["values"]) > width:
        raise InvalidValue("values", f"the table has {width} columns, got {len(args['values'])}")
    row = list(args["values"])
    if args.get("value_input_option", "USER_ENTERED") == "USER_ENTERED":
        parsed = [_numeric(c) if isinstance(c, str) else None for c in row]
        row = [
            (int(p) if p is not None and p.is_integer() else p) if p is not None else c
            for c, p in zip(row, parsed, strict=True)
        ]
    row_no = len(_sheet_rows(ctx, sid)) + 1
    last = _col_letters(width - 1)
    rng = f"{sheet['tab']}!A{row_no}:{_col_letters(len(row) - 1)}{row_no}"
    return {
        "spreadsheet_id": sid,
        "table_range": f"{sheet['tab']}!A1:{last}{row_no - 1}",
        "updates": {
            "updated_range": rng,
            "updated_rows": 1,
            "updated_cells": len(row),
            "updated_data": {"values": [row]},
        },
    }
