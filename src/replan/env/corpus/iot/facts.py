"""IoT: the seed tables and fact helpers that several sections read (one source per fact)."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.data import SeedTables
from replan.env.world import InvalidValue, ToolContext

SEEDS = SeedTables.load(__package__)  # seeds.json beside this module


# -- the homes ----------------------------------------------------------------------------------
HOMES = SEEDS.table("homes", dict[str, dict[str, str]])
L, D = "home-lisbon", "home-denver"
DEVICES = SEEDS.table("devices", dict[str, dict[str, Any]])


def device(
    ctx: ToolContext, param: str, dev_id: str, type_: str, capability: str | None = None
) -> dict[str, Any]:
    rec = ctx.state.get("iot_devices", dev_id)
    assert rec is not None  # guaranteed by an exists precondition
    if rec["type"] != type_ or (capability and rec.get("capability") != capability):
        what = f"{capability} {type_}" if capability else type_
        raise InvalidValue(param, f"{dev_id} is a {rec['type']}, not a {what}")
    return dict(rec)


def battery(ctx: ToolContext, dev_id: str) -> int:
    return int(ctx.number(f"iot:batt:{dev_id}", 31, 100, 0))
