"""General tools: recipes and nutrition."""

from __future__ import annotations

from typing import Any

from replan.core import linre
from replan.env.corpus.general import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext

# food: kcal, protein g, fat g, carbohydrate g per 100 g
_FOODS = facts.SEEDS.table("foods", dict[str, tuple[int, float, float, float]])
# id: title, minutes, servings, diets, tags, ingredient lines
_RECIPES = facts.SEEDS.table(
    "recipes", dict[int, tuple[str, int, int, tuple[str, ...], tuple[str, ...], tuple[str, ...]]]
)
_LINE = linre.compile(r"^\s*(\d+(?:\.\d+)?)\s*(g|kg|ml|l)\s+(.+?)\s*$", linre.IGNORECASE)


def _nutrition(lines: list[str], param: str) -> dict[str, Any]:
    rows, totals = [], [0.0, 0.0, 0.0, 0.0]
    for line in lines:
        m = _LINE.match(line)
        if not m:
            raise InvalidValue(
                param, f"cannot parse ingredient line {line!r} (expected '<qty> g|kg|ml|l <food>')"
            )
        qty, unit, food = float(m.group(1)), m.group(2).lower(), facts.fold(m.group(3))
        grams = qty * (1000 if unit in ("kg", "l") else 1)
        if food not in _FOODS:
            raise InvalidValue(param, f"unknown food {m.group(3)!r}")
        per = _FOODS[food]
        vals = [grams * v / 100 for v in per]
        totals = [t + v for t, v in zip(totals, vals, strict=True)]
        rows.append(
            {"text": line, "food": food, "weight_g": round(grams, 1), "kcal": round(vals[0], 1)}
        )
    return {
        "kcal": round(totals[0], 1),
        "protein": round(totals[1], 1),
        "fat": round(totals[2], 1),
        "carbs": round(totals[3], 1),
        "rows": rows,
        "weight": round(sum(r["weight_g"] for r in rows), 1),
    }


def _recipe(
    param: str, rid: int
) -> tuple[str, int, int, tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    try:
        return _RECIPES[rid]
    except KeyError:
        raise InvalidValue(param, f"recipe {rid} not found") from None


@implementation
def search_recipes(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    words = set(facts.fold(args["query"]).split())
    hits = []
    for rid, (title, minutes, _servings, diets, tags, _) in _RECIPES.items():
        hay = set(facts.fold(title).split()) | {facts.fold(t) for t in tags}
        score = len(words & hay)
        if not score:
            continue
        if (
            "diet" in args
            and args["diet"] not in diets
            and not (args["diet"] == "pescetarian" and "vegetarian" in diets)
        ):
            continue
        if minutes > args.get("maxReadyTime", 600):
            continue
        hits.append((-score, minutes, rid))
    hits.sort()
    res = [
        {
            "id": rid,
            "title": _RECIPES[rid][0],
            "readyInMinutes": _RECIPES[rid][1],
            "servings": _RECIPES[rid][2],
            "image": f"https://img.spoonacular.com/recipes/{rid}-312x231.jpg",
        }
        for _, _, rid in hits[: args.get("number", 10)]
    ]
    return {"results": res, "totalResults": len(hits)}


@implementation
def get_recipe_information(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    title, minutes, servings, diets, _, lines = _recipe("id", args["id"])
    ext = []
    for line in lines:
        m = _LINE.match(line)
        assert m is not None
        ext.append({"name": m.group(3), "amount": float(m.group(1)), "unit": m.group(2)})
    return {
        "id": args["id"],
        "title": title,
        "servings": servings,
        "readyInMinutes": minutes,
        "diets": list(diets),
        "extendedIngredients": ext,
        "ingredientLines": list(lines),
    }


@implementation
def analyze_ingredients(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    n = _nutrition(args["ingr"], "ingr")
    return {
        "calories": n["kcal"],
        "totalWeight": n["weight"],
        "totalNutrients": {
            "PROCNT": {"label": "Protein", "quantity": n["protein"], "unit": "g"},
            "FAT": {"label": "Fat", "quantity": n["fat"], "unit": "g"},
            "CHOCDF": {"label": "Carbs", "quantity": n["carbs"], "unit": "g"},
        },
        "ingredients": n["rows"],
    }


@implementation
def get_recipe_nutrition(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _, _, servings, _, _, lines = _recipe("recipe_id", args["recipe_id"])
    n = _nutrition(list(lines), "recipe_id")
    return {
        "recipe_id": args["recipe_id"],
        "calories_total": n["kcal"],
        "calories_per_serving": round(n["kcal"] / servings, 1),
        "servings": servings,
        "macros_g": {"protein": n["protein"], "fat": n["fat"], "carbs": n["carbs"]},
    }


@implementation
def add_to_meal_plan(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    title = _recipe("recipe_id", args["recipe_id"])[0]
    for rec in ctx.state.records("gen_meal_plan").values():
        if rec.get("date") == args["date"] and rec.get("slot") == args["slot"]:
            raise InvalidValue("slot", f"{args['slot']} on {args['date']} is already planned")
    return {
        "status": "success",
        "entry_id": ctx.new_id("meal"),
        "date": args["date"],
        "slot": args["slot"],
        "title": title,
    }
