"""General: the start state of the domain's collections."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.general import facts
from replan.env.corpus.registry import initial_state
from replan.env.world import ToolContext, WorldState


@initial_state
def _general_state(seed: int) -> dict[str, dict[str, dict[str, Any]]]:
    # saved places sit exactly where the geocoders put their addresses
    ctx = ToolContext("_general_state", {}, WorldState(), seed)
    places = {}
    for pid, address, label in (
        ("ChIJ-home-lisbon", "12 Rua Augusta, Lisbon", "Home"),
        ("ChIJ-office-denver", "400 Larimer St, Denver", "Office"),
    ):
        g = facts.geocode_address(ctx, "address", address)
        places[pid] = {"address": g["formatted"], "lat": g["lat"], "lng": g["lon"], "label": label}
    return {
        "gen_places": places,
        "gen_reminders": {
            "rem-DENTIST1": {
                "title": "Dentist appointment",
                "due_date": "2026-12-10",
                "due_time": "09:00",
                "timezone": "Europe/Lisbon",
                "status": "scheduled",
            },
            "rem-PASSPRT0": {
                "title": "Renew passport",
                "due_date": "2026-12-03",
                "due_time": "10:30",
                "timezone": "Europe/Lisbon",
                "status": "cancelled",
            },
        },
        "gen_timers": {},
        "gen_meal_plan": {},
    }
