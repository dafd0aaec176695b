"""The natural-language query of a base task, written from templates."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

from replan.core import linre
from replan.core.plan import Plan
from replan.core.task import (
    Checker,
)
from replan.core.tools import ToolSpec
from replan.suites.toolmaze.assembly import Lit, Literals, Unit
from replan.suites.toolmaze.index import CorpusIndex

# ---------------------------------------------------------------------------------------------
# natural-language query
_OPENERS = (
    "",
    "I need a hand with something. ",
    "Could you take care of this for me? ",
    "Here is what I'd like done. ",
    "Please help me with the following. ",
    "I have a small errand for you. ",
    "Can you sort this out? ",
)
_LIST_INTRO = (
    "Here is what has to happen:",
    "The steps are:",
    "I need these done, in a sensible order:",
    "What I'm after:",
)
_SEQ_INTRO = ("The job: ", "In short: ", "What needs doing: ")
_FACTS = (
    "Here are the details: {facts}.",
    "Use these values: {facts}.",
    "For reference: {facts}.",
    "The details you need: {facts}.",
)
_ASK = (
    "In your answer, tell me {items}.",
    "When you're done, let me know {items}.",
    "Please report back {items}.",
    "Reply with {items}.",
)


def describe_tool(spec: ToolSpec) -> str:
    """A tool's first descriptive sentence, lower-cased and without parentheses (a plan node's
    ``desc`` and a step of a guided query)."""
    text = spec.description.strip().split(". ")[0].rstrip(".")
    text = linre.sub(r"\s*\([^)]*\)", "", text).strip()
    return text[:1].lower() + text[1:] if text else spec.name.replace("_", " ")


def _humanize(name: str) -> str:
    words = name.replace(".", " ").replace("_", " ").split()
    special = {"usd": "USD", "id": "ID", "eur": "EUR", "pct": "%", "iban": "IBAN", "sku": "SKU"}
    return " ".join(special.get(w.lower(), w) for w in words if not w.isdigit())


def _record_label(ix: CorpusIndex, plan: Plan, collection: str) -> str:
    """How the query names the id of a record a plan creates (its key field)."""
    for n in plan.call_nodes:
        spec = ix.tools[n.tool or ""].spec
        for eff in spec.effects:
            if eff.op == "create" and eff.collection == collection:
                sch = spec.output_field_schema(eff.key.split(".")) or {}
                kind = ix.kinds.get(sch.get("x-kind", ""))
                text = kind.description if kind is not None else _humanize(eff.key)
                return "the " + linre.sub(r"^(an?|the)\s+", "", text.strip().rstrip("."))
    return "the " + _humanize(collection) + " id"


def _fact_text(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def write_query(
    ix: CorpusIndex,
    units: list[Unit],
    star: Mapping[int, int],
    star_plan: Plan,
    facts: list[tuple[Any, str]],
    checker: Checker,
    lit: Literals,
    rng: random.Random,
) -> str:
    """The guided (step-list) query of a task: its steps in tool-description words, then the
    facts the checker asks for and the literals the user gives."""
    steps = [describe_tool(ix.tools[n.tool or ""].spec) for n in star_plan.call_nodes]
    style = rng.randrange(3)
    if len(steps) == 1:
        body = steps[0][:1].upper() + steps[0][1:] + "."
    elif style == 0:
        body = (
            rng.choice(_LIST_INTRO)
            + " "
            + "; ".join(f"({i}) {s}" for i, s in enumerate(steps, start=1))
            + "."
        )
    elif style == 1:
        body = (
            rng.choice(_LIST_INTRO)
            + " "
            + " ".join(f"{i}. {s[:1].upper() + s[1:]}." for i, s in enumerate(steps, start=1))
        )
    else:
        body = (
            rng.choice(_SEQ_INTRO)
            + ", ".join(steps[:-1])
            + rng.choice((", and finally ", ", and at the end ", ", and to finish "))
            + steps[-1]
            + "."
        )
    # every literal any path needs, grouped by value
    by_value: dict[str, list[str]] = {}
    for u in units:
        for c in u.chains:
            for n in c:
                spec = ix.tools[n.tool].spec
                for p, v in n.args.items():
                    if not isinstance(v, Lit):
                        continue
                    sch = spec.param_schema(p) or {}
                    label = (sch.get("description") or _humanize(p)).rstrip(".")
                    labels = by_value.setdefault(_fact_text(v.value), [])
                    if label not in labels:
                        labels.append(label)
    facts_text = "; ".join(f"{' / '.join(lbls[:3])}: {val}" for val, lbls in by_value.items())
    text = rng.choice(_OPENERS) + body
    if facts_text:
        text += " " + rng.choice(_FACTS).format(facts=facts_text)
    items: list[str] = []
    for rec in checker.required_records:
        if rec.mention_key:
            label = _record_label(ix, star_plan, rec.collection)
            if label not in items:
                items.append(label)
    for _, src in facts:
        tool, _, path = src.partition(":")
        sch = ix.tools[tool].spec.output_field_schema(path.split(".")) or {}
        items.append("the " + (sch.get("description") or _humanize(path)).rstrip("."))
    if items:
        joined = ", ".join(items[:-1]) + (" and " if len(items) > 1 else "") + items[-1]
        text += " " + rng.choice(_ASK).format(items=joined)
    return text
