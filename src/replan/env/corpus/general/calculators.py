"""General tools: calculators."""

from __future__ import annotations

import ast
import math
import operator
from typing import Any

from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_FUNCS = {
    "sqrt": math.sqrt,
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "log": math.log,
    "log10": math.log10,
    "exp": math.exp,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "floor": math.floor,
    "ceil": math.ceil,
}
_CONSTS = {"pi": math.pi, "e": math.e}


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.Name) and node.id in _CONSTS:
        return _CONSTS[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = _eval(node.operand)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        a, b = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and (abs(b) > 512 or abs(a) > 1e12):
            raise InvalidValue("expression", "exponent too large")
        return _BINOPS[type(node.op)](a, b)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCS
        and not node.keywords
    ):
        vals = [_eval(a) for a in node.args]
        if node.func.id == "round" and len(vals) == 2:
            vals[1] = int(vals[1])
        return _FUNCS[node.func.id](*vals)
    raise InvalidValue("expression", f"unsupported syntax: {ast.dump(node)[:40]}")


@implementation
def evaluate_expression(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    src = args["expression"].replace("^", "**")
    try:
        tree = ast.parse(src, mode="eval")
    except SyntaxError:
        raise InvalidValue("expression", "malformed expression") from None
    try:
        value = _eval(tree)
    except ZeroDivisionError:
        raise InvalidValue("expression", "division by zero") from None
    except (ValueError, TypeError, OverflowError) as exc:
        raise InvalidValue("expression", f"math error: {exc}") from None
    if isinstance(value, complex) or not math.isfinite(value):
        raise InvalidValue("expression", "result is not a finite real number")
    return {
        "expression": args["expression"],
        "result": round(float(value), args.get("precision", 6)),
    }


def _tip(amount: float, pct: float) -> tuple[float, float]:
    tip = round(amount * pct / 100, 2)
    return tip, round(amount + tip, 2)


@implementation
def bill_split_calculator(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    tip, total = _tip(args["total"], args["tip_percent"])
    return {
        "subtotal": args["total"],
        "tip": tip,
        "total_with_tip": total,
        "per_person": round(total / args["people"], 2),
    }


@implementation
def tip_calculate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    tip, total = _tip(args["amount"], args["tip_percent"])
    return {"tip_amount": tip, "total": total}


@implementation
def divide_evenly(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    share = round(args["amount"] / args["parts"], 2)
    return {"share": share, "rounding_difference": round(args["amount"] - share * args["parts"], 2)}
