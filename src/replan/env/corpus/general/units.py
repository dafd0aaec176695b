"""General, unit conversion: the tools of this section and the helpers only they use."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext

# unit: (dimension, factor to the SI base, offset to the SI base)
_UNITS: dict[str, tuple[str, float, float]] = {
    "mm": ("length", 0.001, 0),
    "cm": ("length", 0.01, 0),
    "m": ("length", 1.0, 0),
    "km": ("length", 1000.0, 0),
    "in": ("length", 0.0254, 0),
    "ft": ("length", 0.3048, 0),
    "yd": ("length", 0.9144, 0),
    "mi": ("length", 1609.344, 0),
    "nmi": ("length", 1852.0, 0),
    "mg": ("mass", 1e-6, 0),
    "g": ("mass", 0.001, 0),
    "kg": ("mass", 1.0, 0),
    "t": ("mass", 1000.0, 0),
    "oz": ("mass", 0.028349523125, 0),
    "lb": ("mass", 0.45359237, 0),
    "st": ("mass", 6.35029318, 0),
    "mL": ("volume", 0.001, 0),
    "L": ("volume", 1.0, 0),
    "tsp": ("volume", 0.00492892159375, 0),
    "tbsp": ("volume", 0.01478676478125, 0),
    "fl_oz_us": ("volume", 0.0295735295625, 0),
    "cup_us": ("volume", 0.2365882365, 0),
    "qt_us": ("volume", 0.946352946, 0),
    "gal_us": ("volume", 3.785411784, 0),
    "gal_imp": ("volume", 4.54609, 0),
    "m/s": ("speed", 1.0, 0),
    "km/h": ("speed", 1 / 3.6, 0),
    "mph": ("speed", 0.44704, 0),
    "kn": ("speed", 1852 / 3600, 0),
    "K": ("temperature", 1.0, 0),
    "degC": ("temperature", 1.0, 273.15),
    "degF": ("temperature", 5 / 9, 459.67 * 5 / 9),
    "J": ("energy", 1.0, 0),
    "kJ": ("energy", 1000.0, 0),
    "kWh": ("energy", 3.6e6, 0),
    "kcal": ("energy", 4184.0, 0),
    "BTU": ("energy", 1055.05585262, 0),
    "Pa": ("pressure", 1.0, 0),
    "hPa": ("pressure", 100.0, 0),
    "kPa": ("pressure", 1000.0, 0),
    "bar": ("pressure", 1e5, 0),
    "psi": ("pressure", 6894.757293168, 0),
    "inHg": ("pressure", 3386.389, 0),
    "mmHg": ("pressure", 133.322387415, 0),
}


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
