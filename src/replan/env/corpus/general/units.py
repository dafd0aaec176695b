"""General tools: unit conversion."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.general import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext

# unit: (dimension, factor to the SI base, offset to the SI base)
_UNITS = facts.SEEDS.table("units", dict[str, tuple[str, float, int | float]])


def _linear(from_unit: str, to_unit: str) -> tuple[str, float, float]:
    da, fa, oa = _UNITS[from_unit]
    db, fb, ob = _UNITS[to_unit]
    if da != db:
        raise InvalidValue("to_unit", f"cannot convert {da} ({from_unit}) to {db} ({to_unit})")
    return da, fa / fb, (oa - ob) / fb


def _apply(value: float, factor: float, offset: float) -> float:
    return round(value * factor + offset, 6)


@implementation
def convert_units(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    dim, factor, offset = _linear(args["from_unit"], args["to_unit"])
    if (
        dim == "temperature"
        and args["value"] * _UNITS[args["from_unit"]][1] + _UNITS[args["from_unit"]][2] < 0
    ):
        raise InvalidValue("value", "temperature below absolute zero")
    return {
        "value": _apply(args["value"], factor, offset),
        "unit": args["to_unit"],
        "dimension": dim,
    }


@implementation
def get_conversion_factor(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    dim, factor, offset = _linear(args["from_unit"], args["to_unit"])
    return {
        "factor": factor,
        "offset": offset,
        "dimension": dim,
        "formula": f"{args['to_unit']} = {args['from_unit']} * {factor:.6g} + {offset:.6g}",
    }


@implementation
def apply_linear_conversion(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {"value": _apply(args["value"], args["factor"], args["offset"])}
