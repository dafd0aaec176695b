"""Travel tools: visas."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.registry import implementation
from replan.env.corpus.travel import facts
from replan.env.world import InvalidValue, ToolContext

_EU = facts.SEEDS.table("eu", set[str])
_TRUSTED = facts.SEEDS.table("trusted", set[str])
_VISA_COUNTRIES = _EU | _TRUSTED | {"KE", "VN"}


def _visa_rule(passport: str, dest: str) -> tuple[str, int | None, float]:
    """(category, max stay in days or None, fee in USD) for a passport entering a country."""
    if dest not in _VISA_COUNTRIES:
        raise InvalidValue("destination", f"no entry data for {dest!r}")
    if passport not in _VISA_COUNTRIES:
        raise InvalidValue("passport", f"no entry data for passports of {passport!r}")
    if passport == dest or (dest in _EU and passport in _EU):
        return "not_required", None, 0.0
    if dest in _EU:
        return ("visa_free", 90, 0.0) if passport in _TRUSTED else ("visa_required", 90, 97.0)
    if dest == "GB":
        return ("eta", 180, 21.0) if passport in _EU | _TRUSTED else ("visa_required", 180, 150.0)
    if dest == "US":
        if passport == "CA":
            return "visa_free", 180, 0.0
        return ("eta", 90, 21.0) if passport in _EU | _TRUSTED else ("visa_required", 90, 185.0)
    if dest == "CA":
        if passport == "US":
            return "visa_free", 180, 0.0
        return ("eta", 180, 5.0) if passport in _EU | _TRUSTED else ("visa_required", 180, 75.0)
    if dest in ("JP", "CL"):
        return ("visa_free", 90, 0.0) if passport in _EU | _TRUSTED else ("visa_required", 90, 30.0)
    if dest == "KE":
        return "eta", 90, 33.0
    if dest == "VN":
        if passport in {"DE", "FR", "ES", "IT", "GB", "JP", "KR", "PL", "NL"}:
            return "visa_free", 45, 0.0
        return "evisa", 90, 25.0
    if dest in ("NZ", "AU"):
        if {passport, dest} == {"NZ", "AU"}:
            return "visa_free", None, 0.0
        return ("eta", 90, 14.0) if passport in _EU | _TRUSTED else ("visa_required", 90, 140.0)
    return ("visa_free", 90, 0.0) if passport in _EU | _TRUSTED else ("evisa", 30, 50.0)


def _visa(args: dict[str, Any], p_param: str, d_param: str) -> tuple[str, int | None, float]:
    try:
        return _visa_rule(args[p_param], args[d_param])
    except InvalidValue as exc:
        raise InvalidValue(p_param if exc.param == "passport" else d_param, exc.message) from exc


@implementation
def check_visa_requirement(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    vt, stay, fee = _visa(args, "passport_country", "destination_country")
    return {"visa_type": vt, "max_stay_days": stay, "fee_usd": fee}


@implementation
def get_entry_requirements(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    vt, _stay, _fee = _visa(args, "nationality", "destination")
    dest = args["destination"]
    vacc = ["yellow_fever"] if dest == "KE" else []
    return {
        "destination": dest,
        "requirements": {
            "visa": {"category": vt, "apply_online": vt in ("eta", "evisa")},
            "passport_validity_months": 0
            if vt == "not_required"
            else 6
            if dest in ("KE", "VN", "CL")
            else 3,
            "vaccinations": vacc,
        },
    }


@implementation
def submit_evisa_application(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    vt, _stay, fee = _visa(args, "nationality", "destination_country")
    if vt == "not_required":
        raise InvalidValue("destination_country", "no entry authorisation is needed")
    auth = {
        "eta": "eta",
        "evisa": "evisa",
        "visa_required": "visa",
        "visa_free": "visa_waiver_registration",
    }[vt]
    return {
        "application_id": ctx.new_id("VA"),
        "authorisation": auth,
        "fee_usd": fee,
        "status": "submitted",
    }


@implementation
def get_evisa_status(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    a = ctx.state.get("visa_applications", args["application_id"]) or {}
    return {
        "application_id": args["application_id"],
        "status": ctx.pick(f"visa:{args['application_id']}", ["approved", "approved", "in_review"]),
        "valid_from": a["arrival_date"],
        "authorisation": a["authorisation"],
    }
