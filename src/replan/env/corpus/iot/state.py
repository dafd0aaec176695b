"""IoT: the start state of the domain's collections."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.iot import facts
from replan.env.corpus.registry import initial_state


@initial_state
def _iot_state(seed: int) -> dict[str, dict[str, dict[str, Any]]]:
    devices = {i: {"online": True, **d} for i, d in facts.DEVICES.items()}
    return {
        "iot_homes": {h: dict(r) for h, r in facts.HOMES.items()},
        "iot_devices": devices,
        "iot_unpaired": {
            "00:17:88:01:0c:4a:91:2f-0b": {
                "home_id": facts.L,
                "model": "LCA006",
                "product": "Hue color lamp",
                "status": "discovered",
            },
            "00:17:88:01:0d:7e:33:a5-0b": {
                "home_id": facts.D,
                "model": "LTA009",
                "product": "Hue white ambiance",
                "status": "discovered",
            },
        },
        "iot_scenes": {
            "scene-good-morning": {
                "name": "Good morning",
                "home_id": facts.L,
                "active": False,
                "lightstates": [{"light_id": "light-kitchen-1", "on": True, "bri": 254}],
            },
            "scene-movie-night": {
                "name": "Movie night",
                "home_id": facts.D,
                "active": False,
                "lightstates": [
                    {"light_id": "light-bedroom-3", "on": True, "bri": 30},
                    {"light_id": "light-porch-4", "on": False},
                ],
            },
        },
        "iot_automations": {
            "auto-VACATION1": {
                "name": "Vacation lights",
                "scene_id": "scene-movie-night",
                "trigger_time": "19:45",
                "status": "disabled",
            },
        },
        "iot_access_codes": {
            "ac-CLEANER01": {
                "device_id": "lock-front-door",
                "name": "Marta Nowak",
                "code": "1357",
                "status": "set",
            },
        },
        "iot_appliance_runs": {
            "run-DISH0001": {
                "appliance_id": "dishwasher-kitchen",
                "program_key": "Dishcare.Dishwasher.Program.Eco50",
                "status": "running",
            },
        },
        "iot_clip_links": {},
    }
