"""IoT tools: appliances (Home Connect style)."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.iot import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext

# appliance type: program key -> (minutes, kWh)
_PROGRAMS = facts.SEEDS.table("programs", dict[str, dict[str, tuple[int, float]]])
_DEFAULT_PROGRAM = {t: next(iter(p)) for t, p in _PROGRAMS.items()}


def _active_run(ctx: ToolContext, appliance_id: str) -> tuple[str, dict[str, Any]] | None:
    for rid, run in sorted(ctx.state.records("iot_appliance_runs").items()):
        if run["appliance_id"] == appliance_id and run["status"] == "running":
            return rid, dict(run)
    return None


@implementation
def home_connect_get_status(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d = facts.device(ctx, "haId", args["haId"], "appliance")
    run = _active_run(ctx, args["haId"])
    state = "Offline" if not d["online"] else "Run" if run else "Ready"
    out = {
        "haId": args["haId"],
        "type": d["appliance_type"],
        "operationState": state,
        "remoteStartAllowed": state == "Ready",
        "availablePrograms": list(_PROGRAMS[d["appliance_type"]]),
    }
    if run:
        minutes = _PROGRAMS[d["appliance_type"]][run[1]["program_key"]][0]
        out["activeProgram"] = {
            "key": run[1]["program_key"],
            "run_id": run[0],
            "remaining_min": int(ctx.number(f"iot:rem:{run[0]}", 1, minutes, 0)),
        }
    return out


@implementation
def home_connect_start_program(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d = facts.device(ctx, "haId", args["haId"], "appliance")
    kind_ = d["appliance_type"]
    key = args.get("program_key", _DEFAULT_PROGRAM[kind_])
    if key not in _PROGRAMS[kind_]:
        raise InvalidValue("program_key", f"{key} is not available on this {kind_}")
    opts = args.get("options", {})
    if "temperature_c" in opts and kind_ != "oven":
        raise InvalidValue("options", "temperature_c only applies to ovens")
    if "spin_rpm" in opts and kind_ != "washer":
        raise InvalidValue("options", "spin_rpm only applies to washers")
    if _active_run(ctx, args["haId"]):
        raise InvalidValue("haId", "the appliance is already running a program")
    minutes, kwh = _PROGRAMS[kind_][key]
    if kind_ == "washer" and opts.get("spin_rpm", 800) > 1200:
        kwh = round(kwh * 1.08, 2)
    out = {
        "run_id": ctx.new_id("run"),
        "haId": args["haId"],
        "program_key": key,
        "estimated_duration_min": minutes,
        "estimated_energy_kwh": kwh,
    }
    if "start_time" in args:
        out["start_time"] = args["start_time"]
    return out


@implementation
def home_connect_stop_program(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    run = ctx.state.get("iot_appliance_runs", args["run_id"])
    assert run is not None
    return {"run_id": args["run_id"], "status": "stopped", "haId": run["appliance_id"]}
