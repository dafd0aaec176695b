"""Office tools: contacts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replan.env.corpus.office import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext


def _contact_by_name(ctx: ToolContext, name: str) -> Mapping[str, Any] | None:
    want = " ".join(name.lower().split())
    for rec in ctx.state.records("office_contacts").values():
        if rec["name"].lower() == want:
            return rec
    return None


@implementation
def find_email_address(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    rec = _contact_by_name(ctx, args["full_name"])
    if rec is None:
        raise InvalidValue("full_name", f"nobody named {args['full_name']!r} in the directory")
    return {
        "full_name": rec["name"],
        "email": rec["email"],
        "confidence": 99,
        "department": rec["department"],
    }


@implementation
def search_contacts(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    q = " ".join(args["query"].lower().split())
    hits = sorted(
        (rn, rec)
        for rn, rec in ctx.state.records("office_contacts").items()
        if q in rec["name"].lower() or rec["email"].startswith(q)
    )
    # exact name matches first, as the People API ranks them
    hits.sort(key=lambda h: h[1]["name"].lower() != q)
    return {
        "results": [
            {"person": {"resource_name": rn, "display_name": rec["name"]}}
            for rn, rec in hits[: args.get("page_size", 10)]
        ]
    }


@implementation
def get_contact(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    rec = facts.state_or_404(ctx, "office_contacts", args["resource_name"])
    fields = set(
        args.get("person_fields") or ["names", "emailAddresses", "phoneNumbers", "organizations"]
    )
    return {
        "resource_name": args["resource_name"],
        "names": [{"display_name": rec["name"]}] if "names" in fields else [],
        "email_addresses": (
            [{"value": rec["email"], "type": "work"}] if "emailAddresses" in fields else []
        ),
        "phone_numbers": [{"value": rec["phone"]}] if "phoneNumbers" in fields else [],
        "organizations": (
            [{"title": rec["title"], "department": rec["department"]}]
            if "organizations" in fields
            else []
        ),
        "city": rec["city"],
    }
