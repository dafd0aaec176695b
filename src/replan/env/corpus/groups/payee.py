"""N-N group, Financial: the holder of an IBAN (confirmation of payee)."""

from __future__ import annotations

from typing import Any

from replan.core import linre
from replan.env.corpus.groups import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext

_HOLDERS = facts.SEEDS.table("holders", list[str])
_IBAN_RE = "^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$"


def _iban(param: str, iban: str) -> str:
    iban = iban.replace(" ", "").upper()
    if not linre.match(_IBAN_RE, iban):
        raise InvalidValue(param, f"not an IBAN: {iban!r}")
    return iban


def _holder(ctx: ToolContext, iban: str) -> str:
    return ctx.pick(f"iban:{iban}:holder", _HOLDERS)


def _bic(ctx: ToolContext, iban: str) -> str:
    return f"{ctx.pick(f'iban:{iban}:bank', ['BCOM', 'CGDI', 'NWBK', 'DEUT', 'BPKO'])}{iban[:2]}XX"


@implementation
def ibanapi_validate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    iban = _iban("iban", args["iban"])
    bic = _bic(ctx, iban)
    return {
        "result": 1,
        "data": {"country_code": iban[:2], "bank": {"bic": bic, "bank_name": f"Bank {bic[:4]}"}},
    }


@implementation
def verify_payee_name(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    iban = _iban("account_iban", args["account_iban"])
    return {"match": "name_returned", "account_name": _holder(ctx, iban)}


@implementation
def wise_create_recipient(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    iban = _iban("iban", args["iban"])
    return {"id": f"rcp-{iban}", "type": "iban"}


@implementation
def wise_get_recipient(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    iban = _iban("account_id", args["account_id"][4:])
    return {
        "id": args["account_id"],
        "accountHolderName": _holder(ctx, iban),
        "details": {"iban": iban},
    }
